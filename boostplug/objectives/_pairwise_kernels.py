"""Numba kernels behind :mod:`boostplug.objectives.pairwise` (private): sums of a user's per-pair
functions over the critical pairs, in parallel over queries.

The pair functions arrive as arguments (compiled dispatchers), so numba compiles each kernel once
per objective class and process. Not cached on disk: a dispatcher's type is new in every process,
so cache entries would pile up without ever being read back.

Pairs are listed query by query (``pair_ptr[q]:pair_ptr[q + 1]`` are query ``q``'s) and never cross
queries, so the queries' iterations write disjoint rows, and a query's sums do not depend on the
number of threads.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["pair_loss_sums", "pair_grad_hess_sums"]


@nb.njit(parallel=True)
def pair_loss_sums(scores: np.ndarray, above: np.ndarray, below: np.ndarray, weight: np.ndarray,
                   pair_ptr: np.ndarray, loss_fn, args: tuple, out: np.ndarray) -> None:
    """``out[q] = sum_p weight[p] loss_fn(s_above - s_below, *args)`` over query ``q``'s pairs."""
    for q in nb.prange(pair_ptr.shape[0] - 1):
        acc = 0.0
        for p in range(pair_ptr[q], pair_ptr[q + 1]):
            acc += weight[p] * loss_fn(scores[above[p]] - scores[below[p]], *args)
        out[q] = acc


@nb.njit(parallel=True)
def pair_grad_hess_sums(scores: np.ndarray, above: np.ndarray, below: np.ndarray, weight: np.ndarray,
                        pair_ptr: np.ndarray, grad_fn, hess_fn, args: tuple, bound: bool, grad: np.ndarray,
                        hess: np.ndarray) -> None:
    """Add each pair's ``weight * grad_fn(d, *args)`` to ``grad`` of the preferred row and subtract it
    from the other's (``d = s_above - s_below``), and add ``weight * hess_fn(d, *args)`` to ``hess``
    of both (``bound``: twice its absolute value). ``grad`` and ``hess`` start at zero."""
    for q in nb.prange(pair_ptr.shape[0] - 1):
        for p in range(pair_ptr[q], pair_ptr[q + 1]):
            i = above[p]
            j = below[p]
            d = scores[i] - scores[j]
            g = weight[p] * grad_fn(d, *args)
            h = weight[p] * hess_fn(d, *args)
            if bound:
                h = 2.0 * abs(h)
            grad[i] += g
            grad[j] -= g
            hess[i] += h
            hess[j] += h
