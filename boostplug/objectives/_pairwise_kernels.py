"""Numba kernels behind :mod:`boostplug.objectives.pairwise` and :mod:`.lambda_weighted` (private):
sums of a user's per-pair functions over the critical pairs, in parallel over queries; for a
lambda-weighted loss, over the pairs of each query's current order, with weights that see it.

The pair functions arrive as arguments (compiled dispatchers), so numba compiles each kernel once
per objective class and process. Not cached on disk: a dispatcher's type is new in every process,
so cache entries would pile up without ever being read back.

Pairs are listed query by query (``pair_ptr[q]:pair_ptr[q + 1]`` are query ``q``'s) and never cross
queries, so the queries' iterations write disjoint rows, and a query's sums do not depend on the
number of threads.

Each kernel sets ``done[q]`` when query ``q``'s iteration ends. An exception a pair function raises
on one of numba's worker threads ends that iteration but never reaches the caller (numba's
parallel loops pass on only the calling thread's exceptions), so a ``done`` left unset is how the
caller learns that a function raised.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

__all__ = ["pair_loss_sums", "pair_grad_hess_sums", "Pair", "query_orders", "lambda_sums", "NORM_OFFSET"]


@nb.njit(parallel=True)
def pair_loss_sums(scores: np.ndarray, above: np.ndarray, below: np.ndarray, weight: np.ndarray,
                   pair_ptr: np.ndarray, loss_fn, args: tuple, out: np.ndarray, done: np.ndarray) -> None:
    """``out[q] = sum_p weight[p] loss_fn(s_above - s_below, *args)`` over query ``q``'s pairs."""
    for q in nb.prange(pair_ptr.shape[0] - 1):
        acc = 0.0
        for p in range(pair_ptr[q], pair_ptr[q + 1]):
            acc += weight[p] * loss_fn(scores[above[p]] - scores[below[p]], *args)
        out[q] = acc
        done[q] = True


@nb.njit(parallel=True)
def pair_grad_hess_sums(scores: np.ndarray, above: np.ndarray, below: np.ndarray, weight: np.ndarray,
                        pair_ptr: np.ndarray, grad_fn, hess_fn, args: tuple, bound: bool, grad: np.ndarray,
                        hess: np.ndarray, done: np.ndarray) -> None:
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
        done[q] = True


class Pair(NamedTuple):
    """What a lambda weight sees of one pair in its query's current order (documents ``i``, the
    preferred one: the higher label, and ``j``), built in the kernel for each pair."""

    #: ``s_i - s_j``, the scores' difference
    d: float
    #: positions in the query's order by score, descending, ties in input order (0: the top)
    rank_i: int
    rank_j: int
    #: the documents' gains (``2^label - 1`` unless the objective says otherwise)
    gain_i: float
    gain_j: float
    #: the DCG discounts of their positions, ``1 / log2(2 + rank)``
    discount_i: float
    discount_j: float
    #: 1 / the query's ideal DCG (at the objective's truncation level), 0 when it is 0
    inv_max_dcg: float


#: LightGBM's ``0.01f``: with score-gap normalisation a pair's weight is divided by this plus |s_i - s_j|.
NORM_OFFSET = float(np.float32(0.01))


@nb.njit(inline="always")
def _single(x: float, on: bool) -> float:
    """``x`` rounded to float32 when ``on`` (LightGBM's and XGBoost's gradients are float32 sums)."""
    return np.float64(np.float32(x)) if on else x


@nb.njit(parallel=True, cache=True)
def query_orders(scores: np.ndarray, group_ptr: np.ndarray, out: np.ndarray) -> None:
    """``out[a:b]``: the rows of each query ``a:b`` by descending score, ties in input order (a stable
    sort, as LightGBM's ``std::stable_sort``). Apart from :func:`lambda_sums`, which numba compiles
    for each objective, so that this compiles once and stays in numba's cache."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        out[a:b] = a + np.argsort(-scores[a:b], kind="mergesort")


@nb.njit(parallel=True)
def lambda_sums(scores: np.ndarray, at: np.ndarray, order: np.ndarray, frozen: bool, labels: np.ndarray,
                gains: np.ndarray, group_ptr: np.ndarray, inv_max_dcg: np.ndarray, query_weights: np.ndarray,
                discounts: np.ndarray, top_k: int, normalize: bool, single: bool, bound: bool, want_loss: bool,
                weight_fn, terms_fn, loss_fn, args: tuple, grad: np.ndarray, hess: np.ndarray,
                loss: np.ndarray, done: np.ndarray) -> None:
    """A lambda-weighted loss (``want_loss``: ``loss[q]`` per query) or its gradient and Hessian
    (added to ``grad`` and ``hess``, which start at zero).

    ``order`` holds each query's rows by the scores the weights are taken from, ``at`` (``scores``
    itself unless ``frozen``), descending, ties in input order (:func:`query_orders`). The pairs are
    those of documents with different labels of which at least one is among the first ``top_k``
    positions, visited by position (``i`` among the first ``top_k``, then ``j > i``: LightGBM's
    order). A pair's weight is ``weight_fn(Pair(...), *args)``, divided by ``NORM_OFFSET +
    |at_i - at_j|`` when ``normalize`` and the query's ``at`` are not all equal; its terms are
    ``terms_fn(s_i - s_j, weight, *args)``: the gradient term, added to the preferred document and
    subtracted from the other, and the Hessian term, added to both (``bound``: twice its absolute
    value). ``single``: each term and each running sum rounded to float32, as LightGBM sums them.
    With ``normalize``, the query's values are then multiplied by ``log2(1 + S) / S``, ``S`` minus
    twice the sum of the gradient terms at ``at`` (LightGBM's ``lambdarank_norm``), and finally by
    the query's weight."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n = b - a
        w_q = query_weights[q]
        if n < 2 or w_q == 0.0:
            done[q] = True
            continue
        varied = at[order[a]] != at[order[b - 1]]
        total = 0.0
        acc = 0.0
        for i in range(min(n - 1, top_k)):
            ri = order[a + i]
            for j in range(i + 1, n):
                rj = order[a + j]
                if labels[ri] == labels[rj]:
                    continue
                if labels[ri] > labels[rj]:
                    hi, lo, p_hi, p_lo = ri, rj, i, j
                else:
                    hi, lo, p_hi, p_lo = rj, ri, j, i
                d_at = at[hi] - at[lo]
                w = weight_fn(Pair(d_at, p_hi, p_lo, gains[hi], gains[lo], discounts[p_hi], discounts[p_lo],
                                   inv_max_dcg[q]), *args)
                if normalize and varied:
                    w = w / (NORM_OFFSET + abs(d_at))
                d = scores[hi] - scores[lo]
                g, h = terms_fn(d, w, *args)
                if normalize:
                    total -= 2.0 * (terms_fn(d_at, w, *args)[0] if frozen else g)
                if want_loss:
                    if w != 0.0:  # a pair of weight 0 adds nothing, even where its loss overflows
                        acc += w * loss_fn(d, *args)
                    continue
                if bound:
                    h = 2.0 * abs(h)
                g = _single(g, single)
                h = _single(h, single)
                grad[lo] = _single(grad[lo] - g, single)
                hess[lo] = _single(hess[lo] + h, single)
                grad[hi] = _single(grad[hi] + g, single)
                hess[hi] = _single(hess[hi] + h, single)
        factor = math.log2(1.0 + total) / total if normalize and total > 0.0 else 1.0
        if want_loss:
            loss[q] = w_q * (factor * acc)
        else:
            for r in range(a, b):
                grad[r] = _single(grad[r] * factor, single) * w_q
                hess[r] = _single(hess[r] * factor, single) * w_q
        done[q] = True
