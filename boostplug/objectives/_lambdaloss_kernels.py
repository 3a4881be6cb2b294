"""The numba kernel behind LambdaLoss's NDCG-Loss1 (:mod:`boostplug.objectives.lambdaloss`, private):
a lambda-weighted sum over every *ordered* pair of a query's documents, equal labels included,
whose weight belongs to the pair's first document. :func:`._pairwise_kernels.lambda_sums` visits
the pairs of different labels once each instead, so NDCG-Loss1 has this kernel of its own; the
pair functions and the :class:`~._pairwise_kernels.Pair` a weight sees are the same.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._pairwise_kernels import Pair

__all__ = ["ordered_pair_sums"]


@nb.njit(parallel=True)
def ordered_pair_sums(scores: np.ndarray, at: np.ndarray, order: np.ndarray, gains: np.ndarray,
                      group_ptr: np.ndarray, inv_max_dcg: np.ndarray, query_weights: np.ndarray,
                      discounts: np.ndarray, top_k: int, bound: bool, want_loss: bool, weight_fn, terms_fn, loss_fn,
                      args: tuple, grad: np.ndarray, hess: np.ndarray, loss: np.ndarray, done: np.ndarray) -> None:
    """``loss[q] = W_q sum_{a != b} w_ab loss_fn(s_a - s_b)`` over the ordered pairs of each query
    (``want_loss``), or its gradient and Hessian with the weights held (added to ``grad`` and
    ``hess``, which start at zero): ``terms_fn(s_a - s_b, w_ab, *args)``'s gradient term added to
    ``a`` and subtracted from ``b``, its Hessian term (``bound``: twice its absolute value) added to
    both. The weight belongs to the pair's first document ``a``: ``w_ab = w_a = weight_fn(Pair(0,
    r_a, r_a, g_a, g_a, D_a, D_a, 1 / ideal DCG), *args)``, asked once per document, whose pair
    view shows ``a`` as both ``i`` and ``j`` (its position in ``order``, each query's rows by
    descending ``at``, ties in input order, its gain and discount); a document of weight 0 has no
    terms of its own (it is still the ``b`` of the others'). Only the pairs with a document among the
    first ``top_k`` positions count. ``done[q]`` is set when query ``q``'s
    iteration ends (:mod:`._pairwise_kernels`: how a pair function's exception on a worker thread
    is noticed)."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        lo = group_ptr[q]
        n = group_ptr[q + 1] - lo
        w_q = query_weights[q]
        if n < 2 or w_q == 0.0:
            done[q] = True
            continue
        acc = 0.0
        for i in range(n):
            ra = order[lo + i]
            w = weight_fn(Pair(0.0, i, i, gains[ra], gains[ra], discounts[i], discounts[i], inv_max_dcg[q]), *args)
            if w == 0.0:
                continue
            for j in range(n if i < top_k else min(n, top_k)):
                if j == i:
                    continue
                rb = order[lo + j]
                d = scores[ra] - scores[rb]
                if want_loss:
                    acc += w * loss_fn(d, *args)
                    continue
                g, h = terms_fn(d, w, *args)
                if bound:
                    h = 2.0 * abs(h)
                grad[ra] += w_q * g
                grad[rb] -= w_q * g
                hess[ra] += w_q * h
                hess[rb] += w_q * h
        if want_loss:
            loss[q] = w_q * acc
        done[q] = True
