"""Numba kernels behind the list-wise metrics: one query per ``prange`` iteration.

Inputs are already validated (float64 contiguous arrays, valid ``group_ptr``);
nothing here raises. ``ties`` codes: 0 = input order, 1 = average over the
tie (exact expectation over uniformly random orders of each tied group),
2 = worst case (tied documents sorted by ascending label).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numba as nb
import numpy as np

from .._core import dispatch
from .._core.dcg import RANK_DOC_WORK, cutoff, dcg_at, ideal_dcg_at
from .._core.sorting import stable_argsort_descending

TIES_ORDER = 0
TIES_AVERAGE = 1
TIES_WORST = 2

# Metric codes of ``binary_kernel``.
PRECISION = 0
AVERAGE_PRECISION = 1
RECIPROCAL_RANK = 2



def _run(kernel: Any, scores: np.ndarray) -> Callable[..., Any]:
    """``kernel`` or its serial twin, by the work of ranking ``scores``' documents."""
    return dispatch.kernel_for(kernel, scores.shape[0] * RANK_DOC_WORK)


@nb.njit(cache=True, inline="always")
def _tie_group(values: np.ndarray, sorted_scores: np.ndarray, i: int) -> tuple[int, float]:
    """The end ``j`` of the run of equal scores that starts at ``i``, and the sum of ``values[i:j]``."""
    n = values.shape[0]
    j = i + 1
    while j < n and sorted_scores[j] == sorted_scores[i]:
        j += 1
    total = 0.0
    for t in range(i, j):
        total += values[t]
    return j, total


@nb.njit(cache=True, inline="always")
def _tie_average(values: np.ndarray, sorted_scores: np.ndarray) -> np.ndarray:
    """``values`` (in ranked order) with every run of equal scores replaced by its mean."""
    n = values.shape[0]
    out = np.empty(n)
    i = 0
    while i < n:
        j, m = _tie_group(values, sorted_scores, i)
        m /= j - i
        for t in range(i, j):
            out[t] = m
        i = j
    return out


@nb.njit(cache=True, inline="always")
def _query_ranked(values: np.ndarray, scores: np.ndarray, group_ptr: np.ndarray, q: int,
                  k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Query ``q``'s values and scores in ranked order (by descending score, equal scores in input
    order) and how many ranks count at ``k``."""
    a, b = group_ptr[q], group_ptr[q + 1]
    perm = stable_argsort_descending(scores[a:b])
    return values[a:b][perm], scores[a:b][perm], cutoff(k, b - a)


@nb.njit(cache=True, inline="always")
def _query_ranked_worst(values: np.ndarray, scores: np.ndarray, labels: np.ndarray, group_ptr: np.ndarray,
                        q: int, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`_query_ranked` with equal scores ordered by ascending label first (``TIES_WORST``).
    The kernels choose between the two in their own body, where numba drops the other branch
    before inlining."""
    a, b = group_ptr[q], group_ptr[q + 1]
    by_label = stable_argsort_descending(-labels[a:b])
    perm = by_label[stable_argsort_descending(scores[a:b][by_label])]
    return values[a:b][perm], scores[a:b][perm], cutoff(k, b - a)


@functools.lru_cache(maxsize=None)
def _dcg_queries_for(ties: int) -> Any:
    """The DCG kernel of one ``ties`` code (see :func:`_binary_queries_for`): per query, DCG@k of
    its ranking and its ideal DCG@k (gains sorted descending)."""
    @nb.njit(cache=True, parallel=True)
    def _dcg_queries(scores: np.ndarray, labels: np.ndarray, gains: np.ndarray, group_ptr: np.ndarray,
                     discount: np.ndarray, k: int, dcg: np.ndarray, idcg: np.ndarray) -> None:
        for q in nb.prange(group_ptr.shape[0] - 1):
            g, s, kk = (_query_ranked_worst(gains, scores, labels, group_ptr, q, k) if ties == TIES_WORST
                        else _query_ranked(gains, scores, group_ptr, q, k))
            if ties == TIES_AVERAGE:
                g = _tie_average(g, s)
            dcg[q] = dcg_at(g, discount, kk)
            idcg[q] = ideal_dcg_at(gains[group_ptr[q]:group_ptr[q + 1]], discount, kk)
    return _dcg_queries


def dcg_kernel(scores: np.ndarray, labels: np.ndarray, gains: np.ndarray, group_ptr: np.ndarray,
               discount: np.ndarray, k: int, ties: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-query DCG@k and ideal DCG@k. ``discount[i]`` is the discount of rank ``i + 1``;
    ``k <= 0`` means the whole list."""
    nq = group_ptr.shape[0] - 1
    dcg, idcg = np.zeros(nq), np.zeros(nq)
    _run(_dcg_queries_for(ties), scores)(scores, labels, gains, group_ptr, discount, k, dcg, idcg)
    return dcg, idcg


@nb.njit(cache=True, inline="always")
def _precision(rel: np.ndarray, kk: int) -> float:
    hits = 0.0
    for i in range(kk):
        hits += rel[i]
    return hits


@nb.njit(cache=True, inline="always")
def _ap_order(rel: np.ndarray, kk: int) -> float:
    hits = 0.0
    total = 0.0
    for i in range(kk):
        if rel[i] > 0.0:
            hits += 1.0
            total += hits / (i + 1.0)
    return total


@nb.njit(cache=True, inline="always")
def _ap_average(rel: np.ndarray, s: np.ndarray, kk: int) -> float:
    """Expected sum_i rel_i * hits(i) / i over random orders of each tie group.

    E[rel_i rel_j] is r/n for i == j, r(r-1)/(n(n-1)) for two positions of
    the same group (r relevant among n) and the product of the group means
    across groups.
    """
    total = 0.0
    before = 0.0  # relevant documents in earlier groups (an exact count)
    i = 0
    while i < kk:
        j, r = _tie_group(rel, s, i)
        n = j - i
        m = r / n
        pair = r * (r - 1.0) / (n * (n - 1.0)) if n > 1 else 0.0
        for t in range(i, min(j, kk)):
            total += (m * before + (t - i) * pair + m) / (t + 1.0)
        before += r
        i = j
    return total


@nb.njit(cache=True, inline="always")
def _rr_order(rel: np.ndarray, kk: int) -> float:
    for i in range(kk):
        if rel[i] > 0.0:
            return 1.0 / (i + 1.0)
    return 0.0


@nb.njit(cache=True, inline="always")
def _rr_average(rel: np.ndarray, s: np.ndarray, kk: int) -> float:
    """Expected 1/rank of the first relevant document (0 beyond rank kk) over
    random orders of each tie group: in the first group holding r > 0 relevant
    of n documents, the first relevant is at offset j with probability
    C(n-j-1, r-1) / C(n, r)."""
    i = 0
    while i < kk:
        j, r = _tie_group(rel, s, i)
        n = j - i
        if r > 0.0:
            p = r / n
            out = 0.0
            for off in range(0, n - int(r) + 1):
                if i + off >= kk:
                    break
                out += p / (i + off + 1.0)
                if n - off - 1 > 0:
                    p *= (n - off - r) / (n - off - 1.0)
            return out
        i = j
    return 0.0


@functools.lru_cache(maxsize=None)
def _binary_queries_for(ties: int, metric: int) -> Any:
    """The kernel of one ``(ties, metric)`` pair. The codes are constants of the closure: numba
    drops the other pairs' branches before it inlines the helpers (a helper inlined is typed and
    lowered again), so it compiles only what the pair uses. numba's disk cache keeps each closure
    apart (its key holds the cells' values)."""
    @nb.njit(cache=True, parallel=True)
    def _binary_queries(scores: np.ndarray, labels: np.ndarray, rel: np.ndarray, group_ptr: np.ndarray,
                        k: int, out: np.ndarray, n_rel: np.ndarray) -> None:
        for q in nb.prange(group_ptr.shape[0] - 1):
            r, s, kk = (_query_ranked_worst(rel, scores, labels, group_ptr, q, k) if ties == TIES_WORST
                        else _query_ranked(rel, scores, group_ptr, q, k))
            tot = 0.0
            for i in range(r.shape[0]):
                tot += r[i]
            n_rel[q] = tot
            if metric == PRECISION:
                out[q] = _precision(_tie_average(r, s), kk) if ties == TIES_AVERAGE else _precision(r, kk)
            elif metric == AVERAGE_PRECISION:
                out[q] = _ap_average(r, s, kk) if ties == TIES_AVERAGE else _ap_order(r, kk)
            else:
                out[q] = _rr_average(r, s, kk) if ties == TIES_AVERAGE else _rr_order(r, kk)
    return _binary_queries


def binary_kernel(scores: np.ndarray, labels: np.ndarray, rel: np.ndarray, group_ptr: np.ndarray,
                  k: int, ties: int, metric: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-query raw value of a binary-relevance metric and the number of relevant documents.

    Raw values: PRECISION -> hits in the top k; AVERAGE_PRECISION -> sum of
    precision at each relevant rank <= k (not yet normalised);
    RECIPROCAL_RANK -> 1/rank of the first relevant document within the top k.
    """
    nq = group_ptr.shape[0] - 1
    out, n_rel = np.zeros(nq), np.zeros(nq)
    _run(_binary_queries_for(ties, metric), scores)(scores, labels, rel, group_ptr, k, out, n_rel)
    return out, n_rel


@functools.lru_cache(maxsize=None)
def _err_queries_for(ties: int) -> Any:
    """The ERR kernel of one ``ties`` code (see :func:`_binary_queries_for`)."""
    @nb.njit(cache=True, parallel=True)
    def _err_queries(scores: np.ndarray, labels: np.ndarray, stop_prob: np.ndarray, group_ptr: np.ndarray,
                     k: int, out: np.ndarray) -> None:
        for q in nb.prange(group_ptr.shape[0] - 1):
            r, _, kk = (_query_ranked_worst(stop_prob, scores, labels, group_ptr, q, k) if ties == TIES_WORST
                        else _query_ranked(stop_prob, scores, group_ptr, q, k))
            p = 1.0
            e = 0.0
            for i in range(kk):
                e += p * r[i] / (i + 1.0)
                p *= 1.0 - r[i]
            out[q] = e
    return _err_queries


def err_kernel(scores: np.ndarray, labels: np.ndarray, stop_prob: np.ndarray, group_ptr: np.ndarray,
               k: int, ties: int) -> np.ndarray:
    """Per-query ERR@k = sum_r R_r / r * prod_{i<r} (1 - R_i) (``k <= 0``: whole list)."""
    out = np.zeros(group_ptr.shape[0] - 1)
    _run(_err_queries_for(ties), scores)(scores, labels, stop_prob, group_ptr, k, out)
    return out


@nb.njit(cache=True)
def pair_outcomes(scores: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Per pair: 1 if the preferred row scores strictly lower (mis-ordered),
    0.5 if tied, 0 if correctly ordered."""
    p = pairs.shape[0]
    out = np.empty(p)
    for t in range(p):
        d = scores[pairs[t, 0]] - scores[pairs[t, 1]]
        out[t] = 1.0 if d < 0.0 else (0.5 if d == 0.0 else 0.0)
    return out
