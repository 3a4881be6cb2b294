"""Numba kernels behind :mod:`boostplug.objectives.ndcg_boost` (private).

Every kernel works on the per-document coefficients ``c_i = W_k G_i / Z_k``
(query weight times gain over the query's ideal DCG, built once by the
prepared objective) and on the raw scores with ``F = sigma * score`` (Eq. 8).
Each unordered pair ``i < j`` of a query is visited once, with
``x = F_i - F_j = sigma (s_i - s_j)`` (computed from the score difference, so it
is never NaN: an overflowing difference becomes ``+-inf`` and behaves as the
limit) and the single exponential ``t = exp(-|x|)`` in ``(0, 1]``. Everything
the pair needs follows from ``t`` without overflow:

* ``sigmoid(|x|) = 1 / (1 + t)``, ``sigmoid(-|x|) = t / (1 + t)``  (the logistic of Eq. 10);
* ``gamma_ij = exp(x) / (1 + exp(x))^2 = t / (1 + t)^2``          (Eq. 14, even in x);
* ``1 - 2 sigmoid(x) = -sign(x) (1 - t) / (1 + t)``               (for the exact Hessian).

Inputs are validated contiguous float64/int64 arrays (the public API checks them).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["ideal_dcg", "pair_loss", "pair_grad_hess"]

#: Hessian modes understood by :func:`pair_grad_hess`.
MODE_NONE = 0   # gradient only (hess left at zero)
MODE_BOUND = 1  # sum_j |c_i - c_j| gamma_ij
MODE_EXACT = 2  # -sum_j (c_i - c_j) gamma_ij (1 - 2 sigmoid(F_i - F_j))


@nb.njit(cache=True, parallel=True)
def ideal_dcg(gains: np.ndarray, group_ptr: np.ndarray, out: np.ndarray) -> None:
    """``out[k] = Z_k = sum_r G_(r) / log2(r + 1)`` over query k's gains sorted
    in decreasing order (ranks r = 1, 2, ...)."""
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        g = np.sort(gains[a:b])
        z = 0.0
        n = b - a
        for r in range(n):
            z += g[n - 1 - r] / math.log2(r + 2.0)
        out[q] = z


@nb.njit(cache=True, parallel=True)
def pair_loss(
    scores: np.ndarray,
    sigma: float,
    coef: np.ndarray,
    group_ptr: np.ndarray,
    queries: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out[k] = sum_i c_i A_i`` (Eq. 10-11) for every query index in ``queries``.

    Pair ``i < j`` contributes ``c_i sigmoid(F_j - F_i) + c_j sigmoid(F_i - F_j)``
    (document i's share of A_i and j's share of A_j).
    """
    for m in nb.prange(queries.shape[0]):
        q = queries[m]
        a = group_ptr[q]
        b = group_ptr[q + 1]
        acc = 0.0
        for i in range(a, b - 1):
            si = scores[i]
            ci = coef[i]
            for j in range(i + 1, b):
                x = sigma * (si - scores[j])
                t = math.exp(-abs(x))
                hi = 1.0 / (1.0 + t)   # sigmoid(|x|)
                lo = t * hi            # sigmoid(-|x|)
                if x >= 0.0:           # sigmoid(F_j - F_i) = lo, sigmoid(F_i - F_j) = hi
                    acc += ci * lo + coef[j] * hi
                else:
                    acc += ci * hi + coef[j] * lo
        out[q] = acc


@nb.njit(cache=True, parallel=True)
def pair_grad_hess(
    scores: np.ndarray,
    sigma: float,
    coef: np.ndarray,
    group_ptr: np.ndarray,
    queries: np.ndarray,
    mode: int,
    w: np.ndarray,
    hess: np.ndarray,
) -> None:
    """Fill, for the documents of the queries in ``queries`` (others untouched):

    * ``w[i] = sum_j (c_i - c_j) gamma_ij`` (Eq. 16, = -dM/dF_i);
    * ``hess[i]`` by ``mode``: ``MODE_BOUND`` ``sum_j |c_i - c_j| gamma_ij``,
      ``MODE_EXACT`` ``d2M/dF_i^2 = -sum_j (c_i - c_j) gamma_ij (1 - 2 sigmoid(F_i - F_j))``,
      ``MODE_NONE`` zeros.

    Both are in F units (the caller applies ``sigma`` and ``sigma^2``). The pair
    term of the exact Hessian is the same for i and j: swapping i and j flips
    the signs of both ``c_i - c_j`` and ``1 - 2 sigmoid(x)``.
    """
    for m in nb.prange(queries.shape[0]):
        q = queries[m]
        a = group_ptr[q]
        b = group_ptr[q + 1]
        for i in range(a, b):
            w[i] = 0.0
            hess[i] = 0.0
        for i in range(a, b - 1):
            si = scores[i]
            ci = coef[i]
            wi = 0.0
            hi = 0.0
            for j in range(i + 1, b):
                x = sigma * (si - scores[j])
                t = math.exp(-abs(x))
                u = 1.0 / (1.0 + t)
                gd = (ci - coef[j]) * (t * u * u)  # (c_i - c_j) gamma_ij, Eq. 14/16
                wi += gd
                w[j] -= gd
                if mode == MODE_BOUND:
                    hb = abs(gd)
                    hi += hb
                    hess[j] += hb
                elif mode == MODE_EXACT:
                    # -(c_i - c_j) gamma_ij (1 - 2 sigmoid(x)) = (c_i - c_j) gamma_ij sign(x) tanh(|x|/2)
                    he = gd * (1.0 - t) * u
                    if x < 0.0:
                        he = -he
                    hi += he
                    hess[j] += he
            w[i] += wi
            hess[i] += hi
