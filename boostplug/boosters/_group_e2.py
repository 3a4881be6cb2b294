"""``E2`` of a pair-free Rb-d / Rb-c ensemble, kept round by round.

Rb-d and Rb-c record ``E2`` (Eq. 22-24) of their ensemble over the independent set ``S_t``:
``E2 = sum_I D_1 exp(ell)`` with ``ell(i) = sum_{s in S_t} (ln cosh eta_s if o_s = 0 else -eta_s o_s)``
and ``o_s = h_s(x') - h_s(x)`` (:func:`boostplug.boosters._level_sums.level_e2` sums it from
scratch, ``O(sum_q G_q^2 |S_t|)`` per round). A pair's ``ell`` depends on the signatures of its two
documents only (their values on every member of ``S_t``), so the pairs are held as *entries*: the
pairs of signature groups ``(g, h)`` of one query between which there are critical pairs
(``N_gh > 0`` of them, ``g`` holding the preferred documents), each with the weight ``u_gh`` of one
of its pairs. A round changes that state in one of two ways:

* a member's ``eta_b`` moves by ``delta`` (Rb's ``"member"`` and ``"dependent"`` steps): every entry's
  ``u`` is multiplied by ``cosh(eta_b + delta)/cosh(eta_b)`` when the member ties it, else by
  ``exp(-delta o_b)``: one pass over the entries, ``O(E |changed|)``;
* a new member ``h`` joins ``S_t`` with weight ``eta`` (``"new"``): every group splits by ``h`` and
  every entry into the (at most four) pairs of its groups' halves, its ``u`` multiplied by
  ``cosh eta`` or ``exp(-eta o)``: ``O(n + E L)``.

``E`` (the entries) is at most the number of critical pairs and at most ``sum_q G_q^2``, so a round
costs no more than one pass over the pair list and stops growing once the groups stop splitting.
The weights are renormalised every pass (their logarithmic scale is kept apart), so they neither
overflow nor lose the ensemble's scale. The result equals ``level_e2`` up to rounding (products of
per-round factors instead of a fresh sum of logarithms: relative differences of about ``1e-15``
per round). Above :data:`ENTRY_LIMIT` entries (a few large queries separated into many groups) it
goes back to ``level_e2`` for the rest of the fit (its memory is ``O(n |S_t|)``).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import NDArray

from ._level_sums import LevelPairs, level_counts, level_e2
from ._rankboost_kernels import ln_cosh

__all__ = ["ENTRY_LIMIT", "GroupE2"]

#: Entries (pairs of signature groups holding critical pairs) above which :class:`GroupE2` stops
#: keeping them (24 bytes each, twice while they split) and computes ``E2`` from scratch instead.
ENTRY_LIMIT = 4_000_000


@nb.njit(cache=True)
def _split_groups(gid, h, n_groups):
    """Every group split by ``h`` (0/1 per document): ``(new gid, child, rep, G')`` with
    ``child[g, b]`` the new id of ``g``'s documents with ``h = b`` (-1: none), numbered group by
    group (so still ordered by query), and ``rep[c]`` one document of new group ``c``."""
    count = np.zeros((n_groups, 2), dtype=np.int64)
    for x in range(gid.shape[0]):
        count[gid[x], h[x]] += 1
    child = np.full((n_groups, 2), -1, dtype=np.int64)
    m = 0
    for g in range(n_groups):
        for b in range(2):
            if count[g, b] > 0:
                child[g, b] = m
                m += 1
    new_gid = np.empty_like(gid)
    rep = np.full(m, -1, dtype=np.int64)
    for x in range(gid.shape[0]):
        c = child[gid[x], h[x]]
        new_gid[x] = c
        if rep[c] < 0:
            rep[c] = x
    return new_gid, child, rep, m


@nb.njit(cache=True, inline="always")
def _n_pairs(cnt, below, a, b):
    """Critical pairs from group ``a`` (preferred) to group ``b``: ``sum_l cnt[a, l] below[b, l]``."""
    s = 0.0
    for l in range(cnt.shape[1]):
        s += cnt[a, l] * below[b, l]
    return s


@nb.njit(cache=True)
def _split_pass(pg, ph, u, N, child, cnt, below, factor, scale, npg, nph, nu, nN, fill):
    """One pass over the entries after a split: each ``(g, h)`` becomes the pairs of halves
    ``(g_a, h_b)`` holding pairs; returns their number and, with ``fill``, writes them (weight
    ``u * scale * factor[a - b + 1]``) and returns ``W = sum u N``. An entry whose two groups did not
    split keeps its pair count."""
    e = 0
    w = 0.0
    for i in range(pg.shape[0]):
        g, h = pg[i], ph[i]
        whole = (child[g, 0] < 0 or child[g, 1] < 0) and (child[h, 0] < 0 or child[h, 1] < 0)
        base = u[i] * scale
        for a in range(2):
            ga = child[g, a]
            if ga < 0:
                continue
            for b in range(2):
                hb = child[h, b]
                if hb < 0:
                    continue
                n = N[i] if whole else _n_pairs(cnt, below, ga, hb)
                if n > 0.0:
                    if fill:
                        v = base * factor[a - b + 1]
                        npg[e] = ga
                        nph[e] = hb
                        nu[e] = v
                        nN[e] = n
                        w += v * n
                    e += 1
    return e, w


@nb.njit(cache=True)
def _split_entries(pg, ph, u, N, child, cnt, below, factor, scale, limit):
    """The entries after a split (:func:`_split_pass`, counted, then written); returns
    ``(pg, ph, u, N, W)`` (``W = -1`` and no entries when there would be more than ``limit``)."""
    none_i = np.empty(0, dtype=np.int32)
    none_f = np.empty(0)
    m, _ = _split_pass(pg, ph, u, N, child, cnt, below, factor, scale, none_i, none_i, none_f, none_f, False)
    if m > limit:
        return none_i, none_i, none_f, none_f, -1.0
    npg = np.empty(m, dtype=np.int32)
    nph = np.empty(m, dtype=np.int32)
    nu = np.empty(m)
    nN = np.empty(m)
    _, w = _split_pass(pg, ph, u, N, child, cnt, below, factor, scale, npg, nph, nu, nN, True)
    return npg, nph, nu, nN, w


@nb.njit(cache=True)
def _rescale_entries(pg, ph, u, N, bits, factor, scale):
    """In place ``u *= scale * prod_c factor[c, bits[g, c] - bits[h, c] + 1]`` (``bits``: the groups'
    values on the members that moved); returns ``W = sum u N``."""
    w = 0.0
    for i in range(pg.shape[0]):
        v = u[i] * scale
        g = pg[i]
        h = ph[i]
        for c in range(bits.shape[1]):
            v *= factor[c, bits[g, c] - bits[h, c] + 1]
        u[i] = v
        w += v * N[i]
    return w


def _factors(old: float, new: float) -> NDArray[np.float64]:
    """``[o = -1, o = 0, o = +1]`` factors of a pair's weight when a member's weight goes from
    ``old`` to ``new`` (``exp(-(new - old) o)``, and ``cosh(new)/cosh(old)`` for a tie)."""
    d = new - old
    return np.array([math.exp(d), math.exp(ln_cosh(new) - ln_cosh(old)), math.exp(-d)])


class GroupE2:
    """``E2`` of the ensemble over ``S_t`` (module docstring), updated from the members and weights
    of each round by :meth:`value`."""

    def __init__(self, levels: LevelPairs, codes: NDArray[np.int32]) -> None:
        self.lv = levels
        self.codes = codes
        sizes = np.diff(levels.group_ptr)
        live = np.flatnonzero(sizes > 0)                 # one group per non-empty query
        self.gid = np.ascontiguousarray(np.repeat(np.arange(live.size), sizes[live]), dtype=np.int64)
        self.rep = levels.group_ptr[live].astype(np.int64)
        self._counts(live.size)
        has = levels.query_pairs[live] > 0
        self.pg = np.flatnonzero(has).astype(np.int32)
        self.ph = self.pg.copy()
        self.u = levels.coef[live][has].astype(np.float64)
        self.N = levels.query_pairs[live][has].astype(np.float64)
        self.W = float(self.u @ self.N)
        self.log_scale = 0.0
        self.members: list[tuple[int, int]] = []
        self.eta = np.zeros(0)
        self.exact = False        # above ENTRY_LIMIT: level_e2 from scratch

    def _counts(self, n_groups: int) -> None:
        self.cnt, self.below = level_counts(self.gid, self.lv.lev, n_groups, self.lv.n_levels)
        self.n_groups = n_groups

    def _scale(self) -> float:
        """``1 / W``, moving ``W`` into the kept logarithmic scale."""
        self.log_scale += math.log(self.W)
        return 1.0 / self.W

    def _move(self, changed: list[int], eta: NDArray[np.float64]) -> None:
        bits = np.empty((self.n_groups, len(changed)), dtype=np.int8)
        factor = np.empty((len(changed), 3))
        for c, b in enumerate(changed):
            k, j = self.members[b]
            bits[:, c] = self.codes[self.rep, k] > j
            factor[c] = _factors(float(self.eta[b]), float(eta[b]))
        self.W = _rescale_entries(self.pg, self.ph, self.u, self.N, bits, factor, self._scale())

    def _split(self, k: int, j: int, eta: float) -> bool:
        """The new member ``(k, j)`` with weight ``eta``; ``False`` if the entries would pass the limit."""
        h = (self.codes[:, k] > j).astype(np.int64)
        gid, child, rep, m = _split_groups(self.gid, h, self.n_groups)
        old = self.gid, self.rep, self.cnt, self.below, self.n_groups
        self.gid, self.rep = gid, rep
        self._counts(m)
        log_scale = self.log_scale
        pg, ph, u, N, W = _split_entries(self.pg, self.ph, self.u, self.N, child, self.cnt, self.below,
                                         _factors(0.0, eta), self._scale(), ENTRY_LIMIT)
        if W < 0.0:
            self.gid, self.rep, self.cnt, self.below, self.n_groups = old
            self.log_scale = log_scale
            return False
        self.pg, self.ph, self.u, self.N, self.W = pg, ph, u, N, W
        self.members.append((int(k), int(j)))
        return True

    def value(self, members: list[tuple[int, int]], eta: NDArray[np.float64]) -> float:
        """``E2`` for ``S_t = members`` (the kept members first, in order, then new ones) with
        weights ``eta``."""
        if not self.exact:
            n_old = len(self.members)
            changed = [b for b in range(n_old) if eta[b] != self.eta[b]]
            if changed:
                self._move(changed, eta)
            for b in range(n_old, len(members)):
                if not self._split(*members[b], float(eta[b])):
                    self.exact = True
                    break
            self.eta = np.array(eta[: len(self.members)], dtype=np.float64)
            if not (self.W > 0.0 and math.isfinite(self.W)):
                self.exact = True
        if self.exact:
            self.pg = self.ph = self.u = self.N = np.zeros(0)
            return level_e2(self.codes, members, eta, self.lv)
        return math.exp(self.log_scale + math.log(self.W) - math.log(self.lv.total))
