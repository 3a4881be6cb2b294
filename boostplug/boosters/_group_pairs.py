"""Pair-free RankBoost+: the critical pairs held as pairs of *signature groups*.

RankBoost+'s pair weight is ``D_t(i) = D_1(q) exp(ell(i)) / W`` with
``ell(i) = sum_{b in S_t} (-eta_b o_b if o_b != 0 else ln cosh eta_b)``, ``o_b = h_b(x') - h_b(x)``
(Eq. 23-26). So ``ell`` depends only on the two documents' *signatures*: their 0/1 values on
every member of ``S_t``. The documents of a query with one signature form a group; all the
critical pairs from group ``g1`` (preferred document) to group ``g0`` of one query share one
weight per pair, ``Dp[g1, g0]``, and they number ``N[g1, g0] = sum_{a > b} cnt[g1, a] cnt[g0, b]``
(``cnt[g, l]``: the group's documents of label level ``l``). A query of ``G_q`` groups
(``G_q <= min(n_q, 2^|S_t|)``) keeps two dense ``G_q x G_q`` blocks (``N`` and ``Dp``, plus
``Dp``'s transpose), so memory is ``O(sum_q G_q^2)``, guarded like the pair list
(``boostplug.pairs.PAIR_MEMORY_LIMIT``, :data:`BYTES_PER_GROUP_PAIR`).

Everything RankBoost+ needs comes from the groups:

* ``eps+``, ``eps0``, ``eps-`` of every stump (:meth:`GroupPairs.split_sums`): per feature, one
  sweep over each query's documents in code order moves them out of ``H = {h = 1}``; when
  document ``x`` (group ``g``, level ``l``) leaves ``H``, ``eps+`` gains the weight of its pairs
  with preferred documents still in ``H`` and loses that of its pairs with lower documents
  already out, and ``eps-`` the reverse. With the per-group, per-level sums out of ``H`` that is
  ``O(G_q + L)`` per document: ``O(n (G + L))`` per feature per round (``G``: the groups of
  the document's query), a difference array over the thresholds as
  :func:`~boostplug.boosters._stump_sums.pair_split_sums` makes;
* ``eps`` of one stump (:meth:`GroupPairs.eps`): the group x level x ``h`` histogram,
  ``O(n + sum_q G_q^2 L)``;
* ``Z_t``: Eq. 27 from those ``eps``; the exact variant's line search along ``beta``
  (:meth:`GroupPairs.pair_outcomes`): the outcomes of the members are constant over a group
  pair, so it runs on the group pairs weighted ``Dp N``;
* ``E2`` (Eq. 24): ``sum_q coef_q sum_{g1, g0} N exp(ell) / |I|`` (:attr:`GroupPairs.log_e2`).

``R1``, ``R2``, ``E1`` and the span test's pair metric come from the label levels
(:class:`~boostplug.boosters._level_sums.LevelPairs`, :class:`~boostplug.boosters._level_sums.LevelSpan`).
After a round that adds a member (a new signature bit) the groups split
(:meth:`GroupPairs.sync`); a member or dependent step only changes ``eta``, hence ``Dp``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import NDArray

from ..pairs import check_pair_memory
from .._core import dispatch
from ._group_e2 import _n_pairs, _split_groups
from ._level_sums import LevelPairs, level_counts, query_code_order
from ._rankboost_kernels import ln_cosh
from ._stump_sums import cumsum_both

__all__ = ["BYTES_PER_GROUP_PAIR", "GroupPairs"]

#: Bytes per entry of the dense group-pair blocks: ``N``, the log weights ``ell``, ``Dp`` and its
#: transpose (the old ones are dropped before they are rebuilt).
BYTES_PER_GROUP_PAIR = 32


@nb.njit(cache=True)
def _block_pair_counts(gstart, boff, cnt, below):
    """``N[g1, g0] = sum_{a > b} cnt[g1, a] cnt[g0, b]`` per query block, flattened row-major (``below``:
    the groups' documents at lower levels)."""
    out = np.zeros(boff[-1])
    for q in range(gstart.shape[0] - 1):
        g0, G, off = gstart[q], gstart[q + 1] - gstart[q], boff[q]
        for a in range(G):
            for b in range(G):
                out[off + a * G + b] = _n_pairs(cnt, below, g0 + a, g0 + b)
    return out


@nb.njit(cache=True)
def _block_ell(gstart, boff, sig, eta, lncosh_eta, first, parent, old_gstart, old_boff, old_ell):
    """``ell[g1, g0] = sum_s (ln cosh eta_s if tied else -eta_s o_s)`` per query block (Eq. 23), the
    members from ``first`` on added to 0 (``old_ell`` empty) or, after a split, to the parent group
    pair's ``old_ell`` (the sum over the members before ``first``): the same sum, term by term."""
    S = sig.shape[1]
    carry = old_ell.shape[0] > 0
    out = np.zeros(boff[-1])
    for q in range(gstart.shape[0] - 1):
        g0, G, off = gstart[q], gstart[q + 1] - gstart[q], boff[q]
        p0, Gp, poff = old_gstart[q], old_gstart[q + 1] - old_gstart[q], old_boff[q]
        for a in range(G):
            for b in range(G):
                v = old_ell[poff + (parent[g0 + a] - p0) * Gp + parent[g0 + b] - p0] if carry else 0.0
                for s in range(first, S):
                    o = sig[g0 + a, s] - sig[g0 + b, s]
                    if o == 0:
                        v += lncosh_eta[s]
                    else:
                        v -= eta[s] * o
                out[off + a * G + b] = v
    return out


@nb.njit(cache=True)
def _normalise_blocks(gstart, boff, N, ell, coef):
    """In place: ``ell -> coef_q exp(ell - mx) / W`` where ``N > 0`` (0 elsewhere), ``mx`` the
    largest ``ell`` holding pairs and ``W = sum N coef_q exp(ell - mx)``; returns ``(mx, W)``."""
    mx = -np.inf
    for i in range(ell.shape[0]):
        if N[i] > 0.0 and ell[i] > mx:
            mx = ell[i]
    w = 0.0
    for q in range(gstart.shape[0] - 1):
        c = coef[q]
        for i in range(boff[q], boff[q + 1]):
            if N[i] > 0.0:
                ell[i] = c * math.exp(ell[i] - mx)
                w += N[i] * ell[i]
            else:
                ell[i] = 0.0
    if w > 0.0:
        for i in range(ell.shape[0]):
            ell[i] /= w
    return mx, w


@nb.njit(cache=True)
def _transpose_blocks(gstart, boff, Dp):
    out = np.empty_like(Dp)
    for q in range(gstart.shape[0] - 1):
        G, off = gstart[q + 1] - gstart[q], boff[q]
        for a in range(G):
            for b in range(G):
                out[off + b * G + a] = Dp[off + a * G + b]
    return out


@nb.njit(cache=True)
def _side_sums(gstart, boff, Dp, above, below):
    """``CA[g, l] = sum_{g1} Dp[g1, g] above[g1, l]`` (the weight of ``g``'s level-``l`` document's
    pairs with preferred documents) and ``RB[g, l] = sum_{g0} Dp[g, g0] below[g0, l]`` (with lower ones)."""
    L = above.shape[1]
    CA = np.zeros(above.shape)
    RB = np.zeros(above.shape)
    for q in range(gstart.shape[0] - 1):
        g0, G, off = gstart[q], gstart[q + 1] - gstart[q], boff[q]
        for a in range(G):
            for b in range(G):
                d = Dp[off + a * G + b]
                if d == 0.0:
                    continue
                for l in range(L):
                    CA[g0 + b, l] += d * above[g0 + a, l]
                    RB[g0 + a, l] += d * below[g0 + b, l]
    return CA, RB


@nb.njit(cache=True, parallel=True)
def _group_split_sums(codes, order, group_ptr, lev, gid, gstart, boff, Dp, DpT, CA, RB, gmax, width):
    """Per feature, ``eps+`` and ``eps-`` of every stump: each query's documents in code order
    (``order``) leave ``H = {h = 1}``; ``outA[l, g]`` / ``outB[l, g]`` count the documents of group
    ``g`` out of ``H`` with a level above / below ``l``. A document ``x`` (group ``g``, level
    ``l``) leaving ``H`` turns its tied pairs with preferred documents in ``H`` correct and with
    lower documents in ``H`` reversed, and its pairs with documents already out tied:
    ``eps+ += CA[g, l] - t``, ``eps- += RB[g, l] - t``, ``t`` the weight of those last pairs.
    The sums between two consecutive codes of the query hold for the thresholds between them."""
    nf = codes.shape[1]
    L = CA.shape[1]
    cor = np.zeros((nf, width + 1))
    rev = np.zeros((nf, width + 1))
    for k in nb.prange(nf):
        outA = np.zeros((L, gmax))
        outB = np.zeros((L, gmax))
        for q in range(group_ptr.shape[0] - 1):
            start, stop = group_ptr[q], group_ptr[q + 1]
            if stop - start < 2:
                continue
            g0, G, off = gstart[q], gstart[q + 1] - gstart[q], boff[q]
            outA[:, :G] = 0.0
            outB[:, :G] = 0.0
            ep = 0.0
            em = 0.0
            p = start
            while p < stop:
                c = codes[order[p, k], k]
                while p < stop and codes[order[p, k], k] == c:
                    x = order[p, k]
                    g = gid[x] - g0
                    l = lev[x]
                    row = off + g * G
                    t = 0.0
                    for h in range(G):
                        t += DpT[row + h] * outA[l, h] + Dp[row + h] * outB[l, h]
                    ep += CA[g0 + g, l] - t
                    em += RB[g0 + g, l] - t
                    for m in range(l + 1, L):
                        outB[m, g] += 1.0
                    for m in range(l):
                        outA[m, g] += 1.0
                    p += 1
                if p == stop:
                    break          # every document out of H: thresholds >= c split nothing
                c2 = codes[order[p, k], k]
                cor[k, c] += ep
                cor[k, c2] -= ep
                rev[k, c] += em
                rev[k, c2] -= em
        cumsum_both(cor[k], rev[k])
    return cor[:, :width], rev[:, :width]


@nb.njit(cache=True)
def _stump_eps(h, group_ptr, lev, gid, gstart, boff, Dp, n_levels, gmax):
    """``(eps+, eps0, eps-)`` of one ranker ``h`` (0/1 per document): per query the histogram
    ``cnt[g, l, h]`` and, per group pair, the pairs ``h`` orders correctly, ties and reverses."""
    L = n_levels
    cnt = np.zeros((gmax, L, 2))
    below = np.zeros((gmax, L, 2))
    plus = 0.0
    zero = 0.0
    minus = 0.0
    for q in range(group_ptr.shape[0] - 1):
        start, stop = group_ptr[q], group_ptr[q + 1]
        if stop - start < 2:
            continue
        g0, G, off = gstart[q], gstart[q + 1] - gstart[q], boff[q]
        cnt[:G] = 0.0
        for x in range(start, stop):
            cnt[gid[x] - g0, lev[x], h[x]] += 1.0
        for g in range(G):
            b0 = 0.0
            b1 = 0.0
            for l in range(L):
                below[g, l, 0] = b0
                below[g, l, 1] = b1
                b0 += cnt[g, l, 0]
                b1 += cnt[g, l, 1]
        for a in range(G):
            for b in range(G):
                d = Dp[off + a * G + b]
                if d == 0.0:
                    continue
                s10 = 0.0
                s01 = 0.0
                s_tied = 0.0
                for l in range(L):
                    s10 += cnt[a, l, 1] * below[b, l, 0]
                    s01 += cnt[a, l, 0] * below[b, l, 1]
                    s_tied += cnt[a, l, 1] * below[b, l, 1] + cnt[a, l, 0] * below[b, l, 0]
                plus += d * s10
                minus += d * s01
                zero += d * s_tied
    return plus, zero, minus


def _check_memory(entries: int, bytes_per_entry: int, what: str) -> None:
    """Refuse (:class:`~boostplug.pairs.PairMemoryError`) ``entries * bytes_per_entry`` above the pair
    memory limit: the rule of the pair list (:func:`boostplug.pairs.check_pair_memory`), for the group blocks."""
    check_pair_memory([entries], None, bytes_per_entry, who=f"RankBoost(variant='rankboost+'), pair-free: {what}",
                      noun="signature-group pairs", where=lambda _: "the ensemble separates too many documents of "
                      "one query. Split or subsample large queries, train fewer rounds")


class GroupPairs:
    """The critical pairs of graded labels as pairs of signature groups (module docstring).

    ``gid[x]``: the group of document ``x`` (groups numbered query by query, ``gstart[q]`` the
    first of query ``q``); ``sig[g, b]``: the group's value on member ``b`` of ``S_t``;
    ``N``, ``Dp``: per query a dense ``G_q x G_q`` block at ``boff[q]`` (row = preferred group).
    ``Dp`` sums to 1 over the pairs (``sum N Dp = 1``)."""

    def __init__(self, levels: LevelPairs, codes: NDArray[np.int32]) -> None:
        self.lv = levels
        self.codes = codes
        self.order = query_code_order(codes, levels.query)     # codes are fixed: one sort per fit
        nq = levels.group_ptr.shape[0] - 1
        self.gid = np.ascontiguousarray(levels.query, dtype=np.int64)
        self.gq = np.arange(nq, dtype=np.int64)                 # the query of each group
        self.sig = np.zeros((nq, 0), dtype=np.int8)
        self.n_members = 0
        self.ell_eta: NDArray[np.float64] | None = None   # the weights the kept log weights ell are for
        self._layout()
        self.refresh(np.zeros(0))

    # ---- groups -------------------------------------------------------------------------
    def _layout(self) -> None:
        """Block offsets, level counts and the pair counts ``N`` of the current groups."""
        lv = self.lv
        G = self.gq.shape[0]
        self.gstart = np.searchsorted(self.gq, np.arange(lv.group_ptr.shape[0]), side="left").astype(np.int64)
        sizes = np.diff(self.gstart)
        self.gmax = int(sizes.max()) if sizes.size else 0
        entries = int((sizes * sizes).sum())
        _check_memory(entries, BYTES_PER_GROUP_PAIR, f"{G:,} groups (the largest query has {self.gmax:,})")
        self.boff = np.concatenate(([0], np.cumsum(sizes * sizes))).astype(np.int64)
        cnt, self.cnt_below = level_counts(self.gid, lv.lev, G, lv.n_levels)   # documents at lower levels
        self.cnt_above = cnt.sum(axis=1, keepdims=True) - np.cumsum(cnt, axis=1)
        self.N = _block_pair_counts(self.gstart, self.boff, cnt, self.cnt_below)

    def _split(self, h: NDArray[np.bool_], eta: NDArray[np.float64] | None) -> None:
        """A new member ``h`` of ``S_t``: each group splits by ``h`` (ids stay ordered by query).
        ``eta``: the weights of the members with the new one last, when the kept ``ell`` is that of
        the members before it (then it is carried over, else recomputed by :meth:`refresh`)."""
        self.Dp = self.DpT = None  # released before they are rebuilt: the memory guard counts one of each
        self.gid, child, _, _ = _split_groups(self.gid, h.astype(np.int64), self.gq.shape[0])
        parent, bit = np.nonzero(child >= 0)        # of each new group, in the order of their ids
        parent, bit = np.ascontiguousarray(parent), bit.astype(np.int8)    # _block_ell compiled once (C layout)
        old_gstart, old_boff = self.gstart, self.boff
        self.gq = self.gq[parent]
        self.sig = np.ascontiguousarray(np.column_stack([self.sig[parent], bit]))
        self.n_members += 1
        self._layout()
        if eta is not None:     # the kept ell plus the new member's term (O(G^2), not O(G^2 |S_t|))
            self.ell = _block_ell(self.gstart, self.boff, self.sig, eta, np.asarray(ln_cosh(eta), dtype=np.float64),
                                  self.n_members - 1, parent, old_gstart, old_boff, self.ell)
            self.ell_eta = eta.copy()
        else:
            self.ell, self.ell_eta = None, None

    def sync(self, members: list[tuple[int, int]], eta: NDArray[np.float64]) -> None:
        """Follow ``S_t`` (members appended since the last call split the groups) and ``eta``."""
        eta = np.ascontiguousarray(eta, dtype=np.float64)
        for b in range(self.n_members, len(members)):
            kb, jb = members[b]
            # the kept ell carries over when the members before b kept their weights
            kept = self.ell_eta is not None and np.array_equal(self.ell_eta, eta[:b])
            self._split(self.codes[:, kb] > jb, eta[:b + 1] if kept else None)
        self.refresh(eta)

    def refresh(self, eta: NDArray[np.float64]) -> None:
        """``Dp`` (and its transpose, the per-level side sums and ``log E2``) for weights ``eta``."""
        eta = np.ascontiguousarray(eta, dtype=np.float64)
        self.Dp = self.DpT = None
        if self.ell_eta is None or not np.array_equal(self.ell_eta, eta):
            self.ell = None
            self.ell = _block_ell(self.gstart, self.boff, self.sig, eta, np.asarray(ln_cosh(eta), dtype=np.float64),
                                  0, np.zeros(0, dtype=np.int64), self.gstart, self.boff, np.zeros(0))
            self.ell_eta = eta.copy()
        ell = self.ell.copy()          # normalised in place into Dp; the log weights are kept for the next split
        mx, w = _normalise_blocks(self.gstart, self.boff, self.N, ell, self.lv.coef)
        self.Dp = ell
        self.log_e2 = mx + math.log(w) - math.log(self.lv.total) if w > 0.0 else -math.inf
        self.DpT = _transpose_blocks(self.gstart, self.boff, self.Dp)
        self.CA, self.RB = _side_sums(self.gstart, self.boff, self.Dp, self.cnt_above, self.cnt_below)
        self.total_weight = float(self.Dp @ self.N)

    # ---- sums over the pairs ---------------------------------------------------------------
    def split_sums(self, width: int) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """``(eps+, eps-, total)`` of every stump, ``(F, width)`` each, under ``D_t`` (``total``:
        the weight of all pairs, 1 up to rounding; ``eps0 = total - eps+ - eps-``)."""
        lv = self.lv
        n_q = np.diff(lv.group_ptr)
        # work: per feature, one unit per document visit and per group of its query
        work = self.codes.shape[1] * int((n_q * (np.diff(self.gstart) + lv.n_levels)).sum())
        kernel = dispatch.kernel_for(_group_split_sums, work)
        cor, rev = kernel(self.codes, self.order, lv.group_ptr, lv.lev, self.gid, self.gstart, self.boff,
                          self.Dp, self.DpT, self.CA, self.RB, max(self.gmax, 1), width)
        return cor, rev, self.total_weight

    def eps(self, h: NDArray[np.bool_]) -> tuple[float, float, float]:
        """Eq. 8: ``(eps+, eps0, eps-)`` of the ranker ``h`` (0/1 per document) under ``D_t``, each
        a sum of positive terms (0 exactly when no pair of positive weight is in it)."""
        lv = self.lv
        ep, e0, em = _stump_eps(h.astype(np.int64), lv.group_ptr, lv.lev, self.gid, self.gstart, self.boff,
                                self.Dp, lv.n_levels, max(self.gmax, 1))
        return float(ep), float(e0), float(em)

    def pair_outcomes(self, sup: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
        """The group pairs holding pairs: their ``D_t`` weight ``Dp N`` and the outcomes
        ``sig[g1, b] - sig[g0, b]`` of the members ``sup`` (constant over a group pair)."""
        idx = np.flatnonzero(self.N > 0.0)
        _check_memory(idx.size, 24 + 40 * max(len(sup), 1), "the exact line search's group pairs")
        q = np.searchsorted(self.boff, idx, side="right") - 1
        local = idx - self.boff[q]
        G = self.gstart[q + 1] - self.gstart[q]
        g1, g0 = self.gstart[q] + local // G, self.gstart[q] + local % G
        O = self.sig[g1][:, sup] - self.sig[g0][:, sup]
        return self.Dp[idx] * self.N[idx], O.astype(np.int8)
