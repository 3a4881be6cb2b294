"""Numba kernels behind :mod:`boostplug.objectives.mpboost` (private).

Layout of the label-only data (built once by ``MPBoostObjective``):

* ``level[i]``: the rank of document i's label among its query's distinct
  labels (0 = lowest);
* ``lvl_ptr``: the levels of query q are the global level ids
  ``lvl_ptr[q] .. lvl_ptr[q + 1] - 1`` (``L_q = lvl_ptr[q + 1] - lvl_ptr[q]``);
* ``dist``: query q's table ``dist[d_ptr[q] + a * L_q + b] = dist(r_a, r_b)``
  (Eq. 2, 6-8), positive for ``a > b``.

Every critical pair (i at level a above j at level b, a > b) has the weight
``w_ij = exp(-d_ab (F_i - F_j))`` (Eq. 10, 12) with ``d_ab = dist[a, b] > 0``.
Because ``d_ab`` depends on the two levels only, the sums over the partners of a
document factorise (the reason for the O(n * L^2) cost instead of O(n^2))::

    sum_{j in b} w_ij = exp(d_ab (hi_b - F_i)) * S_ab,  S_ab = sum_{j in b} exp(d_ab (F_j - hi_b))
    sum_{i in a} w_ij = exp(d_ab (F_j - lo_a)) * T_ab,  T_ab = sum_{i in a} exp(d_ab (lo_a - F_i))

with ``hi_b`` the largest score of level b and ``lo_a`` the smallest of level a.
Each factor is stable on its own: the summands of S and T are <= 1 (a summand
that underflows is below e^-745 times the largest summand of the same sum), and
the prefactor's exponent ``d_ab (hi_b - F_i) <= d_ab (hi_b - lo_a)`` is at most
the largest pair exponent of the query. A global ``shift`` is subtracted from
every prefactor exponent (see the ``mpboost`` module docstring).

Inputs are validated float64/int64 arrays (the public functions check them).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

__all__ = ["CENTRED_EXP_MAX", "Levels", "distance_range", "level_extremes", "pair_grad_hess", "pair_loss"]


class Levels(NamedTuple):
    """Every query's label-only data (the layout above), built once: ``dmin``/``dmax`` from
    :func:`distance_range`. The kernels take it as one argument."""

    group_ptr: np.ndarray
    query_weights: np.ndarray
    level: np.ndarray
    lvl_ptr: np.ndarray
    dist: np.ndarray
    d_ptr: np.ndarray
    dmin: np.ndarray
    dmax: np.ndarray


@nb.njit(cache=True, inline="always")
def _query(q: int, group_ptr: np.ndarray, lvl_ptr: np.ndarray, query_weights: np.ndarray
           ) -> tuple[int, int, int, int, float]:
    """Query ``q``'s rows ``s..e``, its first global level id, its number of levels and its weight."""
    lp = lvl_ptr[q]
    return group_ptr[q], group_ptr[q + 1], lp, lvl_ptr[q + 1] - lp, query_weights[q]


@nb.njit(cache=True, parallel=True)
def level_extremes(scores: np.ndarray, levels: Levels, hi: np.ndarray, lo: np.ndarray, max_exp: np.ndarray) -> None:
    """Fill ``hi``/``lo`` (largest/smallest score of every level) and, per query,
    the largest pair exponent ``max_{a > b} d_ab (hi_b - lo_a)`` (``-inf`` for a
    query with no critical pair or zero weight)."""
    group_ptr, query_weights, level, lvl_ptr, dist, d_ptr, _, _ = levels
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        lp = lvl_ptr[q]
        nl = lvl_ptr[q + 1] - lp
        for a in range(nl):
            hi[lp + a] = -np.inf
            lo[lp + a] = np.inf
        for i in range(group_ptr[q], group_ptr[q + 1]):
            k = lp + level[i]
            f = scores[i]
            if f > hi[k]:
                hi[k] = f
            if f < lo[k]:
                lo[k] = f
        m = -np.inf
        if query_weights[q] > 0.0:
            dp = d_ptr[q]
            for a in range(1, nl):
                for b in range(a):
                    e = dist[dp + a * nl + b] * (hi[lp + b] - lo[lp + a])
                    if e > m:
                        m = e
        max_exp[q] = m


#: A query whose every pair exponent d_ab (F - c) about its mid-range c is at most this takes
#: the centred factorisation: pair weights are products of two factors below e^250 (the
#: sums then stay far from overflow even with d^2 = 1e30 and a million partners).
CENTRED_EXP_MAX = 250.0


@nb.njit(cache=True, inline="always")
def _centred_factors(
    scores: np.ndarray,
    s: int,
    e: int,
    level: np.ndarray,
    nl: int,
    dist: np.ndarray,
    dp: int,
    c: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per document i at level a, ``X[(i - s) * nl + p]``: ``exp(-d_ap (F_i - c))`` toward a lower
    level p, ``exp(d_pa (F_i - c))`` toward a higher one; and the level sums ``S[a * nl + b] =
    sum_{j in b} exp(d_ab (F_j - c))``, ``T[a * nl + b] = sum_{i in a} exp(-d_ab (F_i - c))``
    (a > b). One exponential per distinct distance of a document's partners (BINARY: one)."""
    X = np.empty((e - s) * nl)
    S = np.zeros(nl * nl)
    T = np.zeros(nl * nl)
    for i in range(s, e):
        a = level[i]
        u = scores[i] - c
        base = (i - s) * nl
        last_d = np.nan
        up = 1.0
        down = 1.0
        for gap in range(1, max(a + 1, nl - a)):
            if a + gap < nl:  # i as the lower document of a pair with level a + gap
                k = (a + gap) * nl + a
                d = dist[dp + k]
                if d != last_d:
                    last_d = d
                    up = math.exp(d * u)
                    down = 1.0 / up
                X[base + a + gap] = up
                S[k] += up
            if gap <= a:      # i as the upper document of a pair with level a - gap
                k = a * nl + a - gap
                d = dist[dp + k]
                if d != last_d:
                    last_d = d
                    up = math.exp(d * u)
                    down = 1.0 / up
                X[base + a - gap] = down
                T[k] += down
    return X, S, T


@nb.njit(cache=True, inline="always")
def _constant_distance_grad_hess(
    scores: np.ndarray,
    s: int,
    e: int,
    level: np.ndarray,
    nl: int,
    d: float,
    c: float,
    w: float,
    gentle: bool,
    grad: np.ndarray,
    hess: np.ndarray,
) -> None:
    """``w *`` (dJ/dF_i, hess_i) of one query whose critical pairs all have the distance ``d``
    (BINARY; any DDF on two levels): the partner sums are prefix sums over the levels of
    ``exp(+-d (F - c))``, one exponential and O(1) work per document."""
    up = np.empty(e - s)
    lower = np.zeros(nl + 1)   # lower[a]: sum over the levels below a of exp(d (F_j - c))
    upper = np.zeros(nl + 1)   # upper[a]: sum over the levels above a of exp(-d (F_i - c))
    for i in range(s, e):
        x = math.exp(d * (scores[i] - c))
        up[i - s] = x
        lower[level[i] + 1] += x
        upper[level[i]] += 1.0 / x
    for a in range(1, nl):
        lower[a] += lower[a - 1]
    for a in range(nl - 2, -1, -1):
        upper[a] += upper[a + 1]
    hd = w if gentle else w * d * d
    for i in range(s, e):
        a = level[i]
        x = up[i - s]
        below = lower[a] / x      # sum_{j lower} exp(-d (F_i - F_j)): i the upper document
        above = upper[a + 1] * x  # sum_{j higher} exp(-d (F_j - F_i)): i the lower document
        grad[i] = w * d * (above - below)
        hess[i] = hd * (above + below)


@nb.njit(cache=True, inline="always")
def _extreme_factors(
    scores: np.ndarray,
    s: int,
    e: int,
    level: np.ndarray,
    lp: int,
    nl: int,
    dist: np.ndarray,
    dp: int,
    hi: np.ndarray,
    lo: np.ndarray,
    shift: float,
    need_t: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The level-extreme factorisation (module docstring) of one query in :func:`_centred_factors`'s
    layout: per document i at level a, ``X[(i - s) * nl + p]`` ``exp(d_ap (hi_p - F_i) - shift)``
    toward a lower level p and ``exp(d_pa (F_i - lo_p) - shift)`` toward a higher one; the sums
    ``S[a * nl + b]`` and ``T[a * nl + b]`` (a > b). ``need_t``: the factors toward higher levels and
    ``T`` too (the gradient; the loss needs neither); 2 (L_q - 1) exponentials per document with them."""
    X = np.empty((e - s) * nl)
    S = np.zeros(nl * nl)
    T = np.zeros(nl * nl)
    for i in range(s, e):
        c = level[i]
        f = scores[i]
        base = (i - s) * nl
        h = hi[lp + c]
        for a in range(c + 1, nl):  # i as the lower document of the pairs (a, c), a > c
            k = a * nl + c
            S[k] += math.exp(dist[dp + k] * (f - h))
        for b in range(c):
            X[base + b] = math.exp(dist[dp + c * nl + b] * (hi[lp + b] - f) - shift)
        if not need_t:
            continue
        l = lo[lp + c]
        for b in range(c):          # i as the upper document of the pairs (c, b), b < c
            k = c * nl + b
            T[k] += math.exp(dist[dp + k] * (l - f))
        for a in range(c + 1, nl):
            X[base + a] = math.exp(dist[dp + a * nl + c] * (f - lo[lp + a]) - shift)
    return X, S, T


@nb.njit(cache=True)
def _grad_hess_from_factors(
    X: np.ndarray,
    S: np.ndarray,
    T: np.ndarray,
    s: int,
    e: int,
    level: np.ndarray,
    nl: int,
    dist: np.ndarray,
    dp: int,
    w: float,
    gentle: bool,
    grad: np.ndarray,
    hess: np.ndarray,
) -> None:
    """``w *`` (dJ/dF_i, hess_i) of one query from a document's factor toward each partner level
    (``X``) times that level's sum (``S`` below it, ``T`` above it)."""
    for i in range(s, e):
        a = level[i]
        base = (i - s) * nl
        g = 0.0
        h = 0.0
        for b in range(a):  # i is the upper document: dJ/dF_i = -d w
            k = a * nl + b
            d = dist[dp + k]
            ws = X[base + b] * S[k]
            g -= d * ws
            h += ws if gentle else d * d * ws
        for c in range(a + 1, nl):  # i is the lower document: dJ/dF_i = +d w
            k = c * nl + a
            d = dist[dp + k]
            ws = X[base + c] * T[k]
            g += d * ws
            h += ws if gentle else d * d * ws
        grad[i] = w * g
        hess[i] = w * h


@nb.njit(cache=True)
def distance_range(dist: np.ndarray, d_ptr: np.ndarray, lvl_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the smallest and largest ``dist`` of its critical level pairs (inf, 0 without
    any): label-only, computed once."""
    nq = lvl_ptr.shape[0] - 1
    dmin = np.empty(nq)     # not np.full: a compile of its own
    dmax = np.zeros(nq)
    for q in range(nq):
        dmin[q] = np.inf
        nl = lvl_ptr[q + 1] - lvl_ptr[q]
        for a in range(nl):
            for b in range(a):
                d = dist[d_ptr[q] + a * nl + b]
                dmin[q] = min(dmin[q], d)
                dmax[q] = max(dmax[q], d)
    return dmin, dmax


@nb.njit(cache=True, parallel=True)
def pair_grad_hess(
    scores: np.ndarray,
    levels: Levels,
    hi: np.ndarray,
    lo: np.ndarray,
    shift: float,
    gentle: bool,
    grad: np.ndarray,
    hess: np.ndarray,
) -> None:
    """``exp(-shift) * W_q *`` (dJ/dF_i, hess_i) for every document (0 in degenerate queries).

    hess_i is ``sum_j d_ij^2 w_ij`` (``gentle=False``) or ``sum_j w_ij``
    (``gentle=True``; the caller doubles it). ``dmin``/``dmax``: :func:`distance_range`.
    A query whose pair exponents about its mid-range stay within :data:`CENTRED_EXP_MAX`
    (any query of a boosting run short of scores hundreds apart) takes
    :func:`_centred_factors`: each pair weight is a product of two per-document factors,
    (L_q - 1) exponentials per document at most; with one distance for all its pairs
    (BINARY) :func:`_constant_distance_grad_hess`, one exponential and O(1) work per
    document. Others take the level-extreme factorisation (module docstring), 2 (L_q - 1)
    exponentials per document.
    """
    group_ptr, query_weights, level, lvl_ptr, dist, d_ptr, dmin, dmax = levels
    nq = group_ptr.shape[0] - 1
    scale = math.exp(-shift)
    for q in nb.prange(nq):
        s, e, lp, nl, wq = _query(q, group_ptr, lvl_ptr, query_weights)
        if nl < 2 or wq == 0.0:
            for i in range(s, e):
                grad[i] = 0.0
                hess[i] = 0.0
            continue
        dp = d_ptr[q]
        top = -np.inf
        bottom = np.inf
        for a in range(nl):
            top = max(top, hi[lp + a])
            bottom = min(bottom, lo[lp + a])
        centre = 0.5 * (top + bottom)
        if dmax[q] * 0.5 * (top - bottom) > CENTRED_EXP_MAX:
            X, S, T = _extreme_factors(scores, s, e, level, lp, nl, dist, dp, hi, lo, shift, True)
            _grad_hess_from_factors(X, S, T, s, e, level, nl, dist, dp, wq, gentle, grad, hess)
        elif dmin[q] == dmax[q]:
            _constant_distance_grad_hess(scores, s, e, level, nl, dmax[q], centre, wq * scale, gentle, grad, hess)
        else:
            X, S, T = _centred_factors(scores, s, e, level, nl, dist, dp, centre)
            _grad_hess_from_factors(X, S, T, s, e, level, nl, dist, dp, wq * scale, gentle, grad, hess)


@nb.njit(cache=True, parallel=True)
def pair_loss(scores: np.ndarray, levels: Levels, hi: np.ndarray, lo: np.ndarray, shift: float,
              out: np.ndarray) -> None:
    """``out[q] = exp(-shift) * W_q * sum_{critical pairs i > j} exp(-d_ij (F_i - F_j))`` (Eq. 10)."""
    group_ptr, query_weights, level, lvl_ptr, dist, d_ptr, _, _ = levels
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        s, e, lp, nl, wq = _query(q, group_ptr, lvl_ptr, query_weights)
        if nl < 2 or wq == 0.0:
            out[q] = 0.0
            continue
        dp = d_ptr[q]
        X, S, _ = _extreme_factors(scores, s, e, level, lp, nl, dist, dp, hi, lo, shift, False)
        total = 0.0
        for i in range(s, e):
            a = level[i]
            base = (i - s) * nl
            for b in range(a):
                total += X[base + b] * S[a * nl + b]
        out[q] = wq * total
