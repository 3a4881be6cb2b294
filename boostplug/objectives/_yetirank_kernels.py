"""Numba kernel behind :mod:`boostplug.objectives.yetirank` (private): one perturbed order's
weighted neighbour pairs, summed into the pairwise logistic loss or its gradient and Hessian, in
parallel over queries.

Each query's rows are sorted by ``(at - max at) + noise`` (descending, ties in input order:
CatBoost's ``StableSort``); the pairs of that order that get a weight, and the weight, are CatBoost's
(catboost/private/libs/algo/yetirank_helpers.cpp, ``TYetiRankPairWeightsCalcer``):

* ``classic`` (YetiRank): each two neighbours ``(k - 1, k)``, weight ``0.15 decay^(k-1) |l_x - l_y|``;
* otherwise (YetiLoss, modes DCG and NDCG): each document among the first ``top`` positions and
  each of its next ``neighbors`` documents (``neighbors < 0``: every later one), weight
  ``coef[q] |g_x - g_y| |D_i - D_j|``, ``D_k = discounts[k]`` below ``top`` and 0 from it.

A pair of equal labels gets no weight. The sums are raw: the caller adds every order's sums into
the same arrays, then scales each query once by its weight over the number of orders
(:func:`scale_queries`), so that a query's weight multiplies one number, not each term.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .lambda_weighted import LOGISTIC

__all__ = ["CLASSIC_WEIGHT", "order_sums", "scale_queries"]

#: CatBoost's ``magicConst`` of the classic weights ("Like in GPU").
CLASSIC_WEIGHT = 0.15

_loss_fn, _grad_fn, _hess_fn = (f.__func__ for f in LOGISTIC)


@nb.njit(parallel=True, cache=True)
def order_sums(scores: np.ndarray, at: np.ndarray, noise: np.ndarray, labels: np.ndarray, gains: np.ndarray,
               group_ptr: np.ndarray, active: np.ndarray, coef: np.ndarray, discounts: np.ndarray, classic: bool,
               decay: float, top: int, neighbors: int, want_loss: bool, grad: np.ndarray, hess: np.ndarray,
               loss: np.ndarray) -> None:
    """Add one perturbed order's terms: ``loss[q]`` (``want_loss``) or ``grad``/``hess``. The order
    is by ``(at - max at) + noise`` in each query; the terms are at ``scores``: for a weighted pair ``(x, y)``, ``x`` the
    higher label, ``w log(1 + exp(-(s_x - s_y)))``, its derivative added to ``x``'s gradient and
    subtracted from ``y``'s, its second derivative added to both Hessians. Queries with
    ``active[q]`` false (one document, or weight 0) are skipped."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n = b - a
        if not active[q]:
            continue
        # from the query's highest score: the orders do not change when every score moves, and
        # the noise is not lost beside huge scores
        order = a + np.argsort(-((at[a:b] - np.max(at[a:b])) + noise[a:b]), kind="mergesort")
        acc = 0.0
        factor = CLASSIC_WEIGHT
        last = n - 1 if classic else min(n, top)
        for i in range(last):
            stop = i + 2 if classic else (n if neighbors < 0 else min(n, i + 1 + neighbors))
            for j in range(i + 1, stop):
                x = order[i]
                y = order[j]
                if labels[x] == labels[y]:
                    continue
                if classic:
                    w = factor * abs(labels[x] - labels[y])
                else:
                    d_j = discounts[j] if j < top else 0.0
                    w = coef[q] * abs(gains[x] - gains[y]) * abs(discounts[i] - d_j)
                if w == 0.0:
                    continue
                if labels[x] < labels[y]:
                    x, y = y, x
                d = scores[x] - scores[y]
                if want_loss:
                    acc += w * _loss_fn(d, 1.0)
                    continue
                g = w * _grad_fn(d, 1.0)
                h = w * _hess_fn(d, 1.0)
                grad[x] += g
                grad[y] -= g
                hess[x] += h
                hess[y] += h
            factor *= decay
        if want_loss:
            loss[q] += acc


@nb.njit(parallel=True, cache=True)
def scale_queries(values: np.ndarray, group_ptr: np.ndarray, weights: np.ndarray, divisor: float) -> None:
    """``values[r] = values[r] * weights[q] / divisor`` for the rows ``r`` of each query ``q``."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        for r in range(group_ptr[q], group_ptr[q + 1]):
            values[r] = values[r] * weights[q] / divisor
