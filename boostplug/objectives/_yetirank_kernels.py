"""Numba kernel behind :mod:`boostplug.objectives.yetirank` (private): a block of a round's perturbed
orders, each order's weighted neighbour pairs summed into the pairwise logistic loss or its
gradient and Hessian, in parallel over queries (each query runs its orders one after the other).

In each order, a query's rows are sorted by ``(at - max at) + noise`` (descending, ties in input
order: CatBoost's ``StableSort``); the pairs of that order that get a weight, and the weight, are
CatBoost's (catboost/private/libs/algo/yetirank_helpers.cpp, ``TYetiRankPairWeightsCalcer``):

* ``classic`` (YetiRank): each two neighbours ``(k - 1, k)``, weight ``0.15 decay^(k-1) |l_x - l_y|``;
* otherwise (YetiLoss, modes DCG and NDCG): each document among the first ``top`` positions and
  each of its next ``neighbors`` documents (``neighbors < 0``: every later one), weight
  ``coef[q] |g_x - g_y| |D_i - D_j|``, ``D_k = discounts[k]`` below ``top`` and 0 from it.

A pair of equal labels gets no weight. The noise of order ``p`` and row ``r`` comes from
``draws[p, r]`` as ``noise_kind`` says (``NOISE_*``): the noise itself, ``log(U / (1 - U))`` of a uniform
``U`` (numpy's ``Generator.logistic(0, 1)`` of the same uniform, computed here in parallel), or 0.
The sums are raw and added in the order of the orders, each order's pairs in turn: the first
block starts them at 0, the last scales each query once by its weight over the number of orders,
so that a query's weight multiplies one number, not each term.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._core.dcg import delta_ndcg
from .._core.sorting import stable_argsort_descending
from .logistic import LOGISTIC

__all__ = ["CLASSIC_WEIGHT", "NOISE_GIVEN", "NOISE_LOGISTIC", "NOISE_NONE", "orders_sums"]

#: CatBoost's ``magicConst`` of the classic weights ("Like in GPU").
CLASSIC_WEIGHT = 0.15

#: ``draws[p, r]`` is the noise itself.
NOISE_GIVEN = 0
#: ``draws[p, r]`` is a uniform ``U`` in (0, 1), the noise ``log(U / (1 - U))``.
NOISE_LOGISTIC = 1
#: No noise (``draws`` is not read).
NOISE_NONE = 2

_BUCKETS_PER_KEY = 2   # _order_descending's buckets per key (2: 7% faster than 1 on the 705k set, as 4)
_INSERTION_MOST = 32   # _order_descending's buckets: sorted by insertion up to this many keys

_loss_fn = LOGISTIC[0].__func__


@nb.njit(cache=True)
def _logistic_grad_hess(d: float, w: float) -> tuple[float, float]:
    """``w pair_grad(d, 1)`` and ``w pair_hess(d, 1)`` of :data:`~.logistic.LOGISTIC`, the
    same operations on the same values (so the same bits: the tests compare them), with one ``exp``
    and the gradient's two cases as a choice of numerator instead of a branch (the sign of ``d``
    is unpredictable): about a tenth of the kernel's time less. (A function that also adds them
    into the arrays costs a third more, inlined or not: numba's calls with arrays.)"""
    e = math.exp(-abs(d))
    one_e = 1.0 + e
    return w * ((-1.0 if d < 0.0 else -e) / one_e), w * (e / one_e ** 2)


@nb.njit(cache=True)
def _order_descending(key: np.ndarray, n: int, lowest: float, highest: float, order: np.ndarray,
                      bucket: np.ndarray, count: np.ndarray, sorted_key: np.ndarray) -> None:
    """``order[:n]``: the positions ``0..n-1`` sorted by ``key`` decreasing, equal keys in
    increasing position (a stable sort; no NaN or -0.0 among the keys, ``lowest`` and ``highest``
    their extremes; the other arrays are work space of ``n`` or more, ``count`` of ``B + 1``).

    A bucket sort: of ``B = _BUCKETS_PER_KEY n`` buckets, bucket ``min(B - 1, int((highest - key) B /
    (highest - lowest)))`` does not
    decrease as the key decreases, the keys are placed by bucket in input order, then sorted by
    insertion. When a bucket holds more than :data:`_INSERTION_MOST` keys (keys crowded beside a far
    one), or the spread is not finite and positive, the merge sort of
    :func:`~boostplug._core.sorting.stable_argsort_descending` sorts them instead."""
    spread = highest - lowest
    buckets = _BUCKETS_PER_KEY * n
    scale = buckets / spread if spread > 0.0 else 0.0
    largest = 0
    if 0.0 < spread < np.inf and scale < np.inf:
        count[:buckets + 1] = 0
        for k in range(n):
            b = min(buckets - 1, int((highest - key[k]) * scale))
            bucket[k] = b
            c = count[b + 1] + 1
            count[b + 1] = c
            largest = max(largest, c)
    elif spread == 0.0:
        for k in range(n):
            order[k] = k
        return
    if largest == 0 or largest > _INSERTION_MOST:
        merged = stable_argsort_descending(key[:n])
        for k in range(n):      # not order[:n] = ...: its shape check compiles numba's error text (2 s)
            order[k] = merged[k]
        return
    for b in range(buckets):
        count[b + 1] += count[b]
    for k in range(n):                       # count[b]: where bucket b's next key goes
        b = bucket[k]
        to = count[b]
        count[b] = to + 1
        sorted_key[to] = key[k]
        order[to] = k
    # every key of a bucket is below every key of the buckets before it: one insertion sort of the
    # whole moves each key within its bucket only
    for i in range(1, n):
        k = sorted_key[i]
        t = order[i]
        j = i
        while j > 0 and sorted_key[j - 1] < k:
            sorted_key[j] = sorted_key[j - 1]
            order[j] = order[j - 1]
            j -= 1
        sorted_key[j] = k
        order[j] = t


@nb.njit(parallel=True, cache=True)
def orders_sums(scores: np.ndarray, at: np.ndarray, draws: np.ndarray, noise_kind: int, n_orders: int,
                labels: np.ndarray, gains: np.ndarray, group_ptr: np.ndarray, active: np.ndarray, coef: np.ndarray,
                discounts: np.ndarray, classic: bool, decay: float, top: int, neighbors: int, want_loss: bool,
                first: bool, last: bool, weights: np.ndarray, divisor: float, grad: np.ndarray, hess: np.ndarray,
                loss: np.ndarray) -> int:
    """Add ``n_orders`` perturbed orders' terms (the noise of order ``p`` from ``draws[p]`` as
    ``noise_kind`` says): ``loss[q]`` (``want_loss``) or ``grad``/``hess``, set to 0 first when
    ``first``; with ``last`` (and not ``want_loss``), then scale ``grad`` and ``hess`` to ``value
    weights[q] / divisor``. The order is by ``(at - max at) + noise`` in each query; the terms are at
    ``scores``: for a weighted pair ``(x, y)``, ``x`` the higher label, ``w log(1 + exp(-(s_x -
    s_y)))``, its derivative added to ``x``'s gradient and subtracted from ``y``'s, its second
    derivative added to both Hessians. Queries with ``active[q]`` false (one document, or weight 0)
    get no terms.

    Returns, with ``NOISE_LOGISTIC``, how many queries have a uniform 0 among their draws (or a key
    of -inf otherwise: scores beyond the float range), else 0: when it is not 0, the sums are not those of
    numpy's ``logistic`` (which draws again after a 0)."""
    zeros = 0
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n = b - a
        zero = False
        if noise_kind == NOISE_LOGISTIC and not active[q]:
            for p in range(n_orders):
                for r in range(a, b):
                    zero |= draws[p, r] == 0.0
        if first:
            if want_loss:
                loss[q] = 0.0
            else:
                for r in range(a, b):
                    grad[r] = 0.0
                    hess[r] = 0.0
        if active[q]:
            # from the query's highest score: the orders do not change when every score moves, and
            # the noise is not lost beside huge scores
            highest = at[a]
            for r in range(a + 1, b):   # np.max's comparison, without its compiles (the scores are finite)
                if at[r] > highest:
                    highest = at[r]
            key = np.empty(n)
            order = np.empty(n, dtype=np.int64)
            bucket = np.empty(n, dtype=np.int64)
            count = np.empty(_BUCKETS_PER_KEY * n + 1, dtype=np.int64)
            sorted_key = np.empty(n)
            for p in range(n_orders):
                lowest = np.inf
                top_key = -np.inf
                for k in range(n):
                    if noise_kind == NOISE_LOGISTIC:
                        u = draws[p, a + k]
                        eps = math.log(u / (1.0 - u))
                    elif noise_kind == NOISE_GIVEN:
                        eps = draws[p, a + k]
                    else:
                        eps = 0.0
                    value = (at[a + k] - highest) + eps + 0.0    # + 0.0: no -0.0
                    key[k] = value
                    lowest = min(lowest, value)
                    top_key = max(top_key, value)
                zero |= noise_kind == NOISE_LOGISTIC and lowest == -np.inf     # log(0 / 1)
                _order_descending(key, n, lowest, top_key, order, bucket, count, sorted_key)
                acc = 0.0
                factor = CLASSIC_WEIGHT
                if classic or neighbors == 1:        # neighbours only: each document's values read once
                    x = a + order[0]
                    label_x = labels[x]
                    for i in range(n - 1 if classic else min(n - 1, top)):
                        y = a + order[i + 1]
                        label_y = labels[y]
                        if label_x != label_y:
                            if classic:
                                w = factor * abs(label_x - label_y)
                            else:
                                d_j = discounts[i + 1] if i + 1 < top else 0.0
                                w = abs(delta_ndcg(gains[x], gains[y], discounts[i], d_j, coef[q]))
                            if w != 0.0:
                                hi, lo = (x, y) if label_x > label_y else (y, x)
                                d = scores[hi] - scores[lo]
                                if want_loss:
                                    acc += w * _loss_fn(d, 1.0)
                                else:
                                    g, h = _logistic_grad_hess(d, w)
                                    grad[hi] += g
                                    grad[lo] -= g
                                    hess[hi] += h
                                    hess[lo] += h
                        factor *= decay
                        x = y
                        label_x = label_y
                else:
                    for i in range(min(n, top)):        # dcg/ndcg, more neighbours than one
                        stop = n if neighbors < 0 else min(n, i + 1 + neighbors)
                        for j in range(i + 1, stop):
                            x = a + order[i]
                            y = a + order[j]
                            if labels[x] == labels[y]:
                                continue
                            d_j = discounts[j] if j < top else 0.0
                            w = abs(delta_ndcg(gains[x], gains[y], discounts[i], d_j, coef[q]))
                            if w == 0.0:
                                continue
                            if labels[x] < labels[y]:
                                x, y = y, x
                            d = scores[x] - scores[y]
                            if want_loss:
                                acc += w * _loss_fn(d, 1.0)
                                continue
                            g, h = _logistic_grad_hess(d, w)
                            grad[x] += g
                            grad[y] -= g
                            hess[x] += h
                            hess[y] += h
                if want_loss:
                    loss[q] += acc
        if last and not want_loss:
            for r in range(a, b):
                grad[r] = grad[r] * weights[q] / divisor
                hess[r] = hess[r] * weights[q] / divisor
        zeros += zero
    return zeros
