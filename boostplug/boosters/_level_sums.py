"""Pair-free sums over the critical pairs of graded labels (RankBoost Rb-d / Rb-c, MPBoost).

With graded labels the critical pairs of a query are all (higher level, lower level)
pairs of its documents, and RankBoost's pair weights factorise per document:
``D_t(a, b) = D_1(q) exp(F(b) - F(a)) / W`` (``a`` preferred, ``F`` the ensemble). So
per query and label level ``l`` the sums ``Em[q, l, h] = sum exp(-(F - s_q))`` and
``Ep[q, l, h] = sum exp(F - s_q)`` over the level's documents (``h``: a stump's value on
them, ``s_q`` a per-query shift against overflow) give every sum Rb-d/Rb-c need:

* ``W = sum_q D_1(q) sum_{l > m} Em[q, l] Ep[q, m]`` (the normaliser, ``E1`` times ``|I|``);
* the per-document potential ``pot[a] = sum_{pairs (a, .)} D - sum_{pairs (., a)} D``,
  whose sum over a stump's documents is RankBoost's ``r`` of that stump;
* ``eps+``, ``eps0``, ``eps-`` of one stump (level sums split by ``h``);
* the pair metric's Laplacian ``L h`` (complete multipartite graph per query), for the
  span test of ``S_t``;
* ``R1``/``R2`` from per-query counts of tied and reversed pairs
  (:class:`boostplug.metrics.StepCounts`, ``O(n log n)``).

Memory ``O(n + Q L)`` (``Q`` queries, ``L`` label levels); no pair is listed.

``E2`` of the ensemble is not a product of per-document factors: a pair tied by member
``s`` of ``S_t`` contributes ``cosh(eta_s)``, and the ``2 x 2`` table of a ranker's factor over
``(h(a), h(b))`` (``[[cosh, e^eta], [e^-eta, cosh]]``) has rank 2. :func:`level_e2` therefore
groups each query's documents by their signature on ``S_t`` (and level) and sums over
pairs of groups: ``O(n |S_t|)`` memory, ``O(sum_q G_q^2 (|S_t| + L))`` time for ``G_q``
distinct signatures in query ``q`` (at most its document count). A fit keeps ``E2`` round by round
instead (:mod:`boostplug.boosters._group_e2`), and sums it here only when its groups pass a limit.

MPBoost (:class:`DirectedLevelPairs`): ``w_ij = coef_q exp(-d_ab F_i) exp(d_ab F_j) / W`` with the
distance ``d_ab`` of the two label levels, so per document one factor per other level
(:func:`_directed_terms`, ``O(n L)``) and per stump the products of level sums above and
below its threshold give ``N`` and ``D``: one sweep over each query's documents in code order,
``O(n L + G L^2)`` per feature (``G`` distinct codes per query, summed), no pair listed.
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from ..groups import qid_from_group_ptr
from ..metrics import StepCounts
from ._rankboost_kernels import PairSpan, ln_cosh
from ._stump_sums import cumsum_both

__all__ = ["PAIRWISE", "DirectedLevelPairs", "LevelPairs", "LevelSpan", "codes_in_order", "level_e2", "query_code_order",
           "level_counts", "split_any"]

#: How RankBoost and MPBoost hold the critical pairs: ``"levels"`` (these sums; Rb-d/Rb-c and
#: MPBoost on label-derived pairs; RankBoost+ adds :mod:`boostplug.boosters._group_pairs`),
#: ``"pairs"`` (the pair list) or ``"auto"`` (the cheaper of the two: :mod:`boostplug.boosters._pairwise_choice`).
PAIRWISE = ("auto", "pairs", "levels")


@nb.njit(cache=True)
def _range(F, a, b):
    """``(min, max)`` of ``F[a:b]`` (``b > a``): ``(min + max) / 2`` is the per-query shift that keeps the
    factors finite."""
    lo = F[a]
    hi = F[a]
    for i in range(a, b):
        lo = min(lo, F[i])
        hi = max(hi, F[i])
    return lo, hi


@nb.njit(cache=True)
def _level_exp_sums(F, h, group_ptr, lev, n_levels):
    """Per query: the shift ``s_q`` (mid-range of ``F``) and ``Em``/``Ep`` ``(Q, L, 2)`` split by ``h``."""
    nq = group_ptr.shape[0] - 1
    shift = np.zeros(nq)
    em = np.zeros((nq, n_levels, 2))
    ep = np.zeros((nq, n_levels, 2))
    for q in range(nq):
        a, b = group_ptr[q], group_ptr[q + 1]
        if b == a:
            continue
        lo, hi = _range(F, a, b)
        s = 0.5 * (lo + hi)
        shift[q] = s
        for i in range(a, b):
            em[q, lev[i], h[i]] += math.exp(-(F[i] - s))
            ep[q, lev[i], h[i]] += math.exp(F[i] - s)
    return shift, em, ep


@nb.njit(cache=True)
def _potentials(F, group_ptr, lev, shift, below, above, coef):
    """``pot[a] = coef_q (e^{-(F_a - s)} Ep_below[q, l_a] - e^{F_a - s} Em_above[q, l_a])``."""
    pot = np.zeros(F.shape[0])
    for q in range(group_ptr.shape[0] - 1):
        s = shift[q]
        c = coef[q]
        for i in range(group_ptr[q], group_ptr[q + 1]):
            pot[i] = c * (math.exp(-(F[i] - s)) * below[q, lev[i]] - math.exp(F[i] - s) * above[q, lev[i]])
    return pot


@nb.njit(cache=True, parallel=True)
def _split_any(codes, group_ptr, lev, n_levels, width):
    """``out[k, j]`` > 0 iff the stump ``(k, j)`` splits some critical pair: per query and
    level the min and max code; levels ``l != m`` split every ``j`` in
    ``[min_m, max_l)`` or ``[min_l, max_m)``: an integer difference array of those intervals."""
    nf = codes.shape[1]
    out = np.zeros((nf, width + 1), dtype=np.int64)
    for k in nb.prange(nf):
        lo = np.empty(n_levels, dtype=np.int64)
        hi = np.empty(n_levels, dtype=np.int64)
        for q in range(group_ptr.shape[0] - 1):
            lo[:] = 1 << 40
            hi[:] = -1
            for i in range(group_ptr[q], group_ptr[q + 1]):
                c = codes[i, k]
                lo[lev[i]] = min(lo[lev[i]], c)
                hi[lev[i]] = max(hi[lev[i]], c)
            for l in range(n_levels):
                if hi[l] < 0:
                    continue
                for m in range(n_levels):
                    if m == l or hi[m] < 0:
                        continue
                    # a document of level l above j and one of level m at or below it
                    if hi[l] > lo[m]:
                        out[k, lo[m]] += 1
                        out[k, hi[l]] -= 1
        acc = 0
        for j in range(width + 1):
            acc += out[k, j]
            out[k, j] = acc
    return out[:, :width]


def level_counts(group: NDArray[np.integer], lev: NDArray[np.int64], n_groups: int, n_levels: int
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(cnt, below)``, float64 ``(n_groups, n_levels)``: each group's documents at each label level and
    at the levels below it (``group``, ``lev``: each document's; integers, exact)."""
    cnt = np.bincount(group * n_levels + lev, minlength=n_groups * n_levels).reshape(n_groups, n_levels)
    cnt = cnt.astype(np.float64)
    return cnt, np.cumsum(cnt, axis=1) - cnt


def split_any(codes: NDArray[np.int32], levels: "LevelPairs", width: int) -> NDArray[np.bool_]:
    """``(F, width)``: whether each stump splits at least one critical pair (exact, integer counts)."""
    # work: one unit per document visit plus the level pairs of every query, per feature
    work = codes.shape[1] * (codes.shape[0] + (levels.group_ptr.shape[0] - 1) * levels.n_levels ** 2)
    kernel = dispatch.kernel_for(_split_any, work)
    return kernel(codes, levels.group_ptr, levels.lev, levels.n_levels, width) > 0


class LevelPairs:
    """The critical pairs of graded labels, held as label levels within queries.

    ``lev[x]``: the index of ``y[x]`` among the distinct grades (0 = lowest);
    ``coef[q]``: the query's pair multiplicity (its weight, or 1); ``n_pairs``: the number
    of critical pairs; ``total``: their weighted count (``D_1 = coef / total``)."""

    def __init__(self, y: NDArray[np.float64], group_ptr: NDArray[np.int64],
                 query_weights: NDArray[np.float64] | None) -> None:
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.group_ptr = np.ascontiguousarray(group_ptr, dtype=np.int64)
        self._steps: StepCounts | None = None     # rates()' counter, made at its first call
        grades, lev = np.unique(self.y, return_inverse=True)
        self.lev = np.ascontiguousarray(lev.reshape(-1), dtype=np.int64)
        self.grades = grades
        self.n_levels = max(int(grades.shape[0]), 1)
        nq = self.group_ptr.shape[0] - 1
        self.query = qid_from_group_ptr(self.group_ptr)
        self.coef = np.ones(nq) if query_weights is None else np.asarray(query_weights, dtype=np.float64)
        self.weighted = query_weights is not None
        self.level_counts, below = level_counts(self.query, self.lev, nq, self.n_levels)
        self.query_pairs = (self.level_counts * below).sum(axis=1)          # exact: integers < 2^53
        self.n_pairs = int(self.query_pairs.sum())
        self.total = float(self.coef @ self.query_pairs) if self.weighted else float(self.n_pairs)
        self._zero_h = np.zeros(self.y.shape[0], dtype=np.int64)
        # label/group-only parts of the per-round sums, built once
        self._key = self.query * self.n_levels + self.lev                    # (query, level) cell of a row
        self._other = np.diff(self.group_ptr)[self.query] - self.level_counts.ravel()[self._key]
        self._doc_coef = self.coef[self.query]
        # the query of each row as big-endian bytes (they sort by query): level_e2's group key prefix
        self._query_bytes = self.query.astype(">i8").view(np.uint8).reshape(-1, 8)

    def linked(self) -> NDArray[np.bool_]:
        """The documents in a critical pair of non-zero weight: another level in their query, and a
        query weight that is not 0."""
        return (self._doc_coef * self._other) != 0

    def sums(self, F: NDArray[np.float64], h: NDArray[np.bool_] | None = None
             ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(shift, Em, Ep)`` of :func:`_level_exp_sums` (``h = None``: everything in column 0)."""
        hh = self._zero_h if h is None else h.astype(np.int64)
        return _level_exp_sums(np.ascontiguousarray(F), hh, self.group_ptr, self.lev, self.n_levels)

    def weight_sum(self, F: NDArray[np.float64]) -> float:
        """``W = sum_pairs coef_q exp(F(b) - F(a))``: ``E1 = W / total``, ``D_t = coef e^{F(b) - F(a)} / W``."""
        _, em, ep = self.sums(F)
        em, ep = em.sum(axis=2), ep.sum(axis=2)
        below = np.cumsum(ep, axis=1) - ep
        return float(self.coef @ (em * below).sum(axis=1))

    def potentials(self, F: NDArray[np.float64]) -> NDArray[np.float64]:
        """``pot`` under ``D_t`` (normalised to sum 1 over the pairs): ``r = sum pot * h``."""
        shift, em, ep = self.sums(F)
        em, ep = em.sum(axis=2), ep.sum(axis=2)
        below = np.cumsum(ep, axis=1) - ep                      # Ep over lower levels
        above = em.sum(axis=1, keepdims=True) - np.cumsum(em, axis=1)   # Em over higher levels
        w = float(self.coef @ (em * below).sum(axis=1))
        return _potentials(F, self.group_ptr, self.lev, shift, below, above, self.coef / w)

    def eps(self, F: NDArray[np.float64], h: NDArray[np.bool_]) -> tuple[float, float, float]:
        """``(eps+, eps0, eps-)`` of the ranker ``h`` under ``D_t`` (Eq. 8), each a sum of
        positive terms (so ``eps- == 0`` exactly when no pair is reversed, as with listed pairs)."""
        _, em, ep = self.sums(F, h)
        below = np.cumsum(ep, axis=1) - ep                      # (Q, L, 2) Ep over lower levels
        c = self.coef
        plus = c @ (em[:, :, 1] * below[:, :, 0]).sum(axis=1)
        minus = c @ (em[:, :, 0] * below[:, :, 1]).sum(axis=1)
        zero = c @ (em[:, :, 1] * below[:, :, 1] + em[:, :, 0] * below[:, :, 0]).sum(axis=1)
        w = plus + minus + zero
        return float(plus / w), float(zero / w), float(minus / w)

    def rates(self, F: NDArray[np.float64], moved: NDArray[np.bool_] | None = None) -> tuple[float, float]:
        """``(R1, R2)`` (Eq. 3, 4) under ``D_1`` from per-query counts of tied and reversed pairs.
        ``moved``: the rows whose scores one constant changed since the previous call, when that is
        the only change (a stump's step): the previous score order is then merged, not sorted again."""
        if self._steps is None:
            self._steps = StepCounts(self.y, self.group_ptr)
        counts = self._steps.counts(np.ascontiguousarray(F, dtype=np.float64), moved)
        tied, rev = counts[:, 0].astype(np.float64), counts[:, 1].astype(np.float64)
        if not self.weighted:
            return float((tied.sum() + rev.sum()) / self.n_pairs), float((rev.sum() + 0.5 * tied.sum()) / self.n_pairs)
        return float(self.coef @ (tied + rev) / self.total), float(self.coef @ (rev + 0.5 * tied) / self.total)

    def laplacian(self, h: NDArray[np.float64]) -> NDArray[np.float64]:
        """``L h`` of the pair metric: ``(L h)[x] = coef_q sum_{y in q, l(y) != l(x)} (h(x) - h(y))``."""
        nq, L = self.group_ptr.shape[0] - 1, self.n_levels
        hq = np.bincount(self.query, weights=h, minlength=nq)
        hql = np.bincount(self._key, weights=h, minlength=nq * L)
        return self._doc_coef * (self._other * h - (hq[self.query] - hql[self._key]))


class LevelSpan(PairSpan):
    """:class:`~boostplug.boosters._rankboost_kernels.PairSpan` whose pair metric comes from
    label levels (:meth:`LevelPairs.laplacian`) instead of a pair list."""

    def __init__(self, codes: NDArray[np.int32], levels: LevelPairs) -> None:
        super().__init__(codes, np.zeros((0, 2), dtype=np.int64), None)
        self.levels = levels

    def _laplacian(self, h: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.levels.laplacian(np.ascontiguousarray(h, dtype=np.float64))

    def linked(self) -> NDArray[np.bool_]:
        """The documents with a critical pair of non-zero weight (a query with two labels or more)."""
        return self.levels.linked()

    def metric_rank(self) -> int:
        """The rank of the label levels' ``L``: the linked documents less one a query holding any
        (every document there is paired with every one of another label, so its query is connected)."""
        linked = self.levels.linked()
        return int(linked.sum() - np.unique(self.levels.query[linked]).size)


@nb.njit(cache=True)
def _group_e2(gptr, sig, eta, lncosh_eta, cnt, below, coef):
    """``(mx, acc)``: ``sum_q coef_q sum_{g, h} n_gh exp(sum_s ln omega_s) = acc e^mx`` over
    pairs of signature groups ``g`` (preferred) and ``h`` of each query, ``n_gh`` the number of
    critical pairs between them (``cnt``, ``below``: :func:`level_counts` of the groups)."""
    L = cnt.shape[1]
    S = sig.shape[1]
    mx = -np.inf
    acc = 0.0
    for q in range(gptr.shape[0] - 1):
        for g in range(gptr[q], gptr[q + 1]):
            for h in range(gptr[q], gptr[q + 1]):
                npairs = 0.0
                for l in range(L):
                    npairs += cnt[g, l] * below[h, l]
                if npairs == 0.0:
                    continue
                lk = 0.0
                for s in range(S):
                    o = sig[g, s] - sig[h, s]
                    if o == 0:
                        lk += lncosh_eta[s]
                    else:
                        lk -= eta[s] * o
                v = coef[q] * npairs
                if lk > mx:
                    acc = acc * math.exp(mx - lk) + v
                    mx = lk
                else:
                    acc += v * math.exp(lk - mx)
    return mx, acc


def level_e2(codes: NDArray[np.int32], members: list[tuple[int, int]], eta: NDArray[np.float64],
             levels: LevelPairs) -> float:
    """``E2 = sum_I D_1 prod_{s in S_t} omega*_2(i, f_s, eta_s)`` (Eq. 22-24) from signature
    groups: documents of one query with the same values on every member of ``S_t``."""
    if not members:
        return 1.0
    ks = np.array([k for k, _ in members], dtype=np.int64)
    js = np.array([j for _, j in members], dtype=np.int64)
    sig = (codes[:, ks] > js).astype(np.int8)
    # one byte string per row: the query and the signature
    key = np.concatenate([levels._query_bytes, np.packbits(sig, axis=1)], axis=1)
    key = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1]))).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    G, L = first.shape[0], levels.n_levels
    cnt, below = level_counts(inverse, levels.lev, G, L)
    gq = levels.query[first]
    gptr = np.searchsorted(gq, np.arange(levels.group_ptr.shape[0]), side="left").astype(np.int64)
    eta = np.ascontiguousarray(eta, dtype=np.float64)
    mx, acc = _group_e2(gptr, np.ascontiguousarray(sig[first]), eta, np.asarray(ln_cosh(eta), dtype=np.float64),
                        cnt, below, levels.coef)
    if acc == 0.0:
        return 0.0
    return float(math.exp(mx + math.log(acc) - math.log(levels.total)))


# ---- MPBoost: pair weights exp(-d_ab (F_i - F_j)) with a distance per pair of levels ----------

#: A query of one label level whose ``max d * (max F - min F)`` is below this is skipped by
#: :func:`_directed_terms`: its factors are at most ``e^(LOG_SAFE / 2)``, so its level sums are finite
#: and its (absent) pairs add exact zeros to ``W`` and ``C``, as when they were summed.
LOG_SAFE = 1000.0


@nb.njit(cache=True)
def _directed_terms(F, group_ptr, lev, dd, coef, one_level, R, levels):
    """``(R, tot)`` of the scores ``F``, one query at a time.

    ``R[:, :L] = E``: ``E[x, m] = exp(-d_{l m} (F_x - s_q))`` for a lower level ``m < l = lev[x]``,
    ``exp(d_{m l} (F_x - s_q))`` for a higher one (0 at ``m = l``), so a pair's weight
    ``exp(-d_ab (F_i - F_j))`` is ``E[i, b] * E[j, a]`` (the shift ``s_q`` cancels).
    ``tot[q, l, m]``: the sums of ``E[:, m]`` over the query's level-``l`` documents (``T = tot[q]``).
    ``R[x, L]`` and ``R[x, L + 1]``: what moving ``x`` below a threshold adds to its query's sums,
    the part that does not depend on the other documents below:
    ``g[x] = coef_q (sum_{m > l} d_ml T_ml e_m - sum_{m < l} d_lm T_ml e_m)`` to ``N`` (all of it:
    ``N``'s pair term ``T_ab B_ba - B_ab T_ba`` is linear in the running sums ``B``) and
    ``h[x] = coef_q sum_m T_ml e_m`` to ``D`` (whose term ``T_ab B_ba + B_ab T_ba - 2 B_ab B_ba``
    also has a product of running sums). One row per document: the sweep gathers a document's
    whole record from one place.

    ``R`` is written in place (zeros at ``m = l``, which are never written, so it can be the last
    call's); a query of ``one_level`` (no pair) is left as it is, with ``tot[q] = 0``, unless its
    factors could overflow (:data:`LOG_SAFE`; then they are summed, to give ``W`` the same
    ``inf``/``nan`` as before), since :func:`_directed_fit_sums` sweeps only the other queries.
    ``levels``: :func:`_static` of ``L`` (the loops over the levels unroll)."""
    L = len(levels)
    tot = np.zeros((group_ptr.shape[0] - 1, L, L))
    d_max = 0.0
    for a in range(L):
        for b in range(L):
            d_max = max(d_max, dd[a, b])
    for q in range(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        if b == a:
            continue
        lo, hi = _range(F, a, b)
        if one_level[q] and d_max * (hi - lo) < LOG_SAFE:
            continue
        s = 0.5 * (lo + hi)
        tq = tot[q]
        for i in range(a, b):
            l = lev[i]
            g = F[i] - s
            for m in range(L):
                if m < l:
                    R[i, m] = math.exp(-dd[l, m] * g)
                elif m > l:
                    R[i, m] = math.exp(dd[m, l] * g)
            for m in range(L):
                tq[l, m] += R[i, m]
        cq = coef[q]
        for x in range(a, b):
            l = lev[x]
            sg = 0.0
            sp = 0.0
            for m in range(L):
                if m < l:
                    v = R[x, m] * tq[m, l]
                    sg -= dd[l, m] * v
                    sp += v
            for m in range(L):
                if m > l:
                    v = R[x, m] * tq[m, l]
                    sg += dd[m, l] * v
                    sp += v
            R[x, L] = cq * sg
            R[x, L + 1] = cq * sp
    return R, tot


def _static(n: int) -> tuple[int, ...]:
    """``n`` as the length of a tuple, which numba compiles in as a constant (one compiled copy per
    ``n``): a kernel's loops over ``range(len(t))`` unroll and its small arrays' strides are known."""
    return (0,) * n


@nb.njit(cache=True, parallel=True)
def _directed_fit_sums(scodes, order, group_ptr, paired, lev, R, coef, width, levels):
    """Per feature, the unnormalised ``N`` (signed) and ``D`` (split) of every stump: each
    query's documents in code order (``order``; ``scodes`` their codes) move below the threshold one
    by one; each adds its :func:`_directed_terms` ``g`` to ``N`` and ``h - 2 coef_q sum_m e_m
    B[m, l]`` to ``D``, with ``B[m, l]`` the sums of ``E[:, l]`` over the level-``m`` documents
    already below, so a document costs ``O(L)`` and a code nothing more. The sums are constant from
    one code of the query to the next: a difference array over the thresholds gets their change at
    each code (one write per code and sum). The sweep stops at the query's highest code: thresholds
    at or above it split nothing, so its documents are not visited. Only the queries ``paired``
    (two label levels or more) are swept: a query of one level has no pair, and its documents would
    add exact zeros. The difference arrays are written at every document, the change or ``0.0``
    (which leaves a sum as it is): a branch on "new code" mispredicts about every other document.
    ``R`` from :func:`_directed_terms`; ``levels``: :func:`_static` of ``L``, which unrolls the loop over
    the levels (about a quarter of the sweep's time)."""
    nf = scodes.shape[1]
    L = len(levels)
    signed = np.zeros((nf, width + 1))
    split = np.zeros((nf, width + 1))
    for k in nb.prange(nf):
        below = np.zeros((L, L))
        for q in paired:
            start, stop = group_ptr[q], group_ptr[q + 1]
            c = scodes[start, k]
            top = scodes[stop - 1, k]
            if c == top:           # one code: no threshold splits the query
                continue
            below[:, :] = 0.0
            twice = 2.0 * coef[q]
            sg = 0.0
            sp = 0.0
            prev_g = 0.0
            prev_p = 0.0
            p = start
            while True:
                # unsigned: row and level index the arrays with no negative-index test
                x = nb.uint64(order[p, k])
                lx = nb.uint64(lev[x])
                cross = 0.0
                for m in range(L):     # E[x, lx] = 0: the m = lx term adds nothing
                    e = R[x, m]
                    cross += e * below[m, lx]
                    below[lx, m] += e
                sg += R[x, L]
                sp += R[x, L + 1] - twice * cross
                p += 1
                c2 = scodes[p, k]
                new = c2 != c
                signed[k, c] += (sg - prev_g) if new else 0.0
                split[k, c] += (sp - prev_p) if new else 0.0
                prev_g = sg if new else prev_g
                prev_p = sp if new else prev_p
                c = c2
                if c == top:
                    break
            signed[k, c] -= prev_g
            split[k, c] -= prev_p
        cumsum_both(signed[k], split[k])
    return signed[:, :width], split[:, :width]


def query_code_order(codes: NDArray[np.int32], query: NDArray[np.int64]) -> NDArray[np.integer]:
    """``(n, F)``, column-major: per feature, the rows sorted by ``query`` (each row's, ``0 .. Q - 1``),
    then code, then row (codes are fixed, so one sort serves every round): numpy's stable sort of one
    integer key per row, the permutation of ``lexsort((codes[:, k], query))`` at a third of its time
    (and no kernel to compile on first use)."""
    # int32 rows when they fit: the order is as large as the codes, not twice
    order = np.empty(codes.shape, dtype=np.int32 if codes.shape[0] < 2**31 else np.int64, order="F")
    if codes.size:
        base = np.asarray(query, dtype=np.int64) * (int(codes.max()) + 1)
        for k in range(codes.shape[1]):
            order[:, k] = np.argsort(base + codes[:, k], kind="stable")
    return order


def codes_in_order(codes: NDArray[np.int32], order: NDArray[np.integer]) -> NDArray[np.int32]:
    """``(n, F)``, column-major: ``codes[order[p, k], k]``, so a sweep in code order reads its codes in
    sequence instead of gathering them (fixed for a fit, like ``order``)."""
    return np.asfortranarray(np.take_along_axis(codes, order, axis=0))


class DirectedLevelPairs(LevelPairs):
    """Critical pairs of graded labels weighted ``coef_q exp(-d_ab (F_i - F_j))`` (MPBoost,
    ``i`` at level ``a`` > ``b`` of ``j``): ``d_ab`` depends on the two levels only, so every sum
    over the pairs is a sum over level pairs of products of per-level sums of :func:`_directed_terms`.

    ``dd[a, b]`` (``a > b``): ``dist`` of the grade difference, for level pairs that meet in some
    query (``linked``), else 0. Memory ``O(n L)`` plus the stumps' code order ``O(n F)``."""

    def __init__(self, y: NDArray[np.float64], group_ptr: NDArray[np.int64],
                 query_weights: NDArray[np.float64] | None, dist: Any) -> None:
        super().__init__(y, group_ptr, query_weights)
        L = self.n_levels
        present = (self.level_counts > 0).astype(np.float64)
        self.linked = np.tril((present.T @ present) > 0, -1)
        delta = self.grades[:, None] - self.grades[None, :]
        self.dd = np.zeros((L, L))
        # only level pairs holding pairs: the pair list never evaluates dist of the others
        self.dd[self.linked] = dist(delta[self.linked])
        #: the queries with two label levels or more (the others hold no pair)
        self.paired = np.flatnonzero((self.level_counts > 0).sum(axis=1) >= 2).astype(np.int64)
        self._one_level = np.ones(self.group_ptr.shape[0] - 1, dtype=np.bool_)
        self._one_level[self.paired] = False

    def terms(self, F: NDArray[np.float64], out: NDArray[np.float64] | None = None
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(R, tot)`` of the scores ``F``: :func:`_directed_terms`; ``out``: an ``R`` of an earlier call to
        write into (``R``'s rows of one-level queries are not for use)."""
        R = np.zeros((self.y.shape[0], self.n_levels + 2)) if out is None else out
        return _directed_terms(np.ascontiguousarray(F, dtype=np.float64), self.group_ptr, self.lev, self.dd, self.coef,
                               self._one_level, R, _static(self.n_levels))

    def weight_sums(self, tot: NDArray[np.float64]) -> tuple[float, float]:
        """``(W, C)`` from the level totals ``tot`` of :meth:`terms`: ``W = sum_pairs coef_q exp(-d (F_i - F_j))``
        and ``C`` the same with ``d^2`` (so ``sum_I w d^2 = C / W`` with ``w`` normalised)."""
        with np.errstate(over="ignore", invalid="ignore"):   # overflowed factors: the caller checks W and C
            prod = np.where(self.linked, tot * tot.transpose(0, 2, 1), 0.0)   # [a, b]: level-a sums x level-b sums
            return float(self.coef @ prod.sum(axis=(1, 2))), float(self.coef @ (prod * self.dd ** 2).sum(axis=(1, 2)))

    def fit_sums(self, R: NDArray[np.float64], sorted_codes: NDArray[np.int32], order: NDArray[np.integer],
                 width: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Unnormalised ``(N, D)`` of every stump, ``(F, width)`` (divide by ``W``); ``R`` from
        :meth:`terms`, ``order`` from :func:`query_code_order`, ``sorted_codes`` from
        :func:`codes_in_order`."""
        # work: in the units the parallel threshold was set in (when a code cost L^2)
        work = sorted_codes.shape[1] * sorted_codes.shape[0] * self.n_levels ** 2
        kernel = dispatch.kernel_for(_directed_fit_sums, work)
        return kernel(sorted_codes, order, self.group_ptr, self.paired, self.lev, R, self.coef, width,
                      _static(self.n_levels))
