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

import numba as nb
import numpy as np

__all__ = ["level_extremes", "pair_grad_hess", "pair_loss"]


@nb.njit(cache=True, parallel=True)
def level_extremes(
    scores: np.ndarray,
    group_ptr: np.ndarray,
    level: np.ndarray,
    lvl_ptr: np.ndarray,
    dist: np.ndarray,
    d_ptr: np.ndarray,
    query_weights: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
    max_exp: np.ndarray,
) -> None:
    """Fill ``hi``/``lo`` (largest/smallest score of every level) and, per query,
    the largest pair exponent ``max_{a > b} d_ab (hi_b - lo_a)`` (``-inf`` for a
    query with no critical pair or zero weight)."""
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


@nb.njit(cache=True)
def _level_sums(
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
    need_t: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Query-local tables ``S[a * nl + b]`` and ``T[a * nl + b]`` (a > b; T only
    if ``need_t``), see module docstring."""
    S = np.zeros(nl * nl)
    T = np.zeros(nl * nl)
    for j in range(s, e):
        c = level[j]
        f = scores[j]
        # j as the lower document of the pairs (a, c), a > c
        h = hi[lp + c]
        for a in range(c + 1, nl):
            k = a * nl + c
            S[k] += math.exp(dist[dp + k] * (f - h))
        if not need_t:
            continue
        # j as the upper document of the pairs (c, b), b < c
        l = lo[lp + c]
        for b in range(c):
            k = c * nl + b
            T[k] += math.exp(dist[dp + k] * (l - f))
    return S, T


@nb.njit(cache=True, parallel=True)
def pair_grad_hess(
    scores: np.ndarray,
    group_ptr: np.ndarray,
    level: np.ndarray,
    lvl_ptr: np.ndarray,
    dist: np.ndarray,
    d_ptr: np.ndarray,
    query_weights: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
    shift: float,
    gentle: bool,
    grad: np.ndarray,
    hess: np.ndarray,
) -> None:
    """``exp(-shift) * W_q *`` (dJ/dF_i, hess_i) for every document (0 in degenerate queries).

    hess_i is ``sum_j d_ij^2 w_ij`` (``gentle=False``) or ``sum_j w_ij``
    (``gentle=True``; the caller doubles it).
    """
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        s = group_ptr[q]
        e = group_ptr[q + 1]
        lp = lvl_ptr[q]
        nl = lvl_ptr[q + 1] - lp
        wq = query_weights[q]
        if nl < 2 or wq == 0.0:
            for i in range(s, e):
                grad[i] = 0.0
                hess[i] = 0.0
            continue
        dp = d_ptr[q]
        S, T = _level_sums(scores, s, e, level, lp, nl, dist, dp, hi, lo, True)
        for i in range(s, e):
            a = level[i]
            f = scores[i]
            g = 0.0
            h = 0.0
            for b in range(a):  # i is the upper document: dJ/dF_i = -d w
                k = a * nl + b
                d = dist[dp + k]
                ws = math.exp(d * (hi[lp + b] - f) - shift) * S[k]
                g -= d * ws
                h += ws if gentle else d * d * ws
            for c in range(a + 1, nl):  # i is the lower document: dJ/dF_i = +d w
                k = c * nl + a
                d = dist[dp + k]
                ws = math.exp(d * (f - lo[lp + c]) - shift) * T[k]
                g += d * ws
                h += ws if gentle else d * d * ws
            grad[i] = wq * g
            hess[i] = wq * h


@nb.njit(cache=True, parallel=True)
def pair_loss(
    scores: np.ndarray,
    group_ptr: np.ndarray,
    level: np.ndarray,
    lvl_ptr: np.ndarray,
    dist: np.ndarray,
    d_ptr: np.ndarray,
    query_weights: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
    shift: float,
    out: np.ndarray,
) -> None:
    """``out[q] = exp(-shift) * W_q * sum_{critical pairs i > j} exp(-d_ij (F_i - F_j))`` (Eq. 10)."""
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        s = group_ptr[q]
        e = group_ptr[q + 1]
        lp = lvl_ptr[q]
        nl = lvl_ptr[q + 1] - lp
        wq = query_weights[q]
        if nl < 2 or wq == 0.0:
            out[q] = 0.0
            continue
        dp = d_ptr[q]
        S, _ = _level_sums(scores, s, e, level, lp, nl, dist, dp, hi, lo, False)
        total = 0.0
        for i in range(s, e):
            a = level[i]
            f = scores[i]
            for b in range(a):
                k = a * nl + b
                total += math.exp(dist[dp + k] * (hi[lp + b] - f) - shift) * S[k]
        out[q] = wq * total
