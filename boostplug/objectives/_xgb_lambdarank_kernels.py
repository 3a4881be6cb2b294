"""Numba kernel behind :mod:`boostplug.objectives.xgb_lambdarank` (private): XGBoost's
``LambdaRankObj::CalcLambdaForGroup`` and ``MakePairs`` (src/objective/lambdarank_obj.cc, .h),
operation for operation, in XGBoost's float types: the scores' differences and the sigmoid in
float32, the pair weights and terms in float64, each pair's terms rounded to float32 and summed in
float32 in XGBoost's order, then the query's normalisation applied in float32 (``GradientPair``'s ``operator*(float)``:
the factor too is rounded to float32); the query's weight multiplies the result.

The ``"mean"`` pair method draws its pairs with XGBoost's generator: ``std::minstd_rand`` seeded
with ``(iteration + 1) * n_queries + query`` (32-bit; XGBoost up to 3.3, from 3.4 on the seed comes
from the booster's own generator, which a custom objective cannot see), and libstdc++'s
``uniform_int_distribution`` (its fallback for a generator whose range is not 2^32 or 2^64: one
division of the range, draws past the last whole bucket rejected).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._core.dcg import delta_ndcg_by_swap
from .._core.sorting import stable_argsort_descending
from .logistic import LOGISTIC

__all__ = ["NDCG", "PAIRWISE", "MAP", "xgb_lambda_sums", "mean_pairs", "minstd_uniform", "position_bias_update"]

#: The pair weight ``delta``: ``|Delta NDCG|``, 1 (RankNet), ``|Delta MAP|``.
NDCG, PAIRWISE, MAP = 0, 1, 2

_logistic_loss = LOGISTIC[0].__func__

#: XGBoost's ``Eps64()``: biases below it are not divided by
EPS64 = 1e-16

_MINSTD_A = 48271
_MINSTD_M = 2147483647
#: libstdc++'s ``urngrange`` of ``minstd_rand``: ``max() - min() = (2^31 - 2) - 1``
_MINSTD_RANGE = _MINSTD_M - 3


@nb.njit(cache=True)
def _sigmoid32(x: np.float32) -> float:
    """XGBoost's ``common::Sigmoid(float)``: ``1 / (expf(min(-x, 88.7f)) + 1 + 1e-16f)``, in float32."""
    t = min(-x, np.float32(88.7))
    denom = np.float32(math.exp(t)) + np.float32(1.0)
    denom = denom + np.float32(1e-16)
    return np.float64(np.float32(1.0) / denom)


@nb.njit(cache=True)
def minstd_uniform(state: np.ndarray, n: int) -> int:
    """One draw of ``std::uniform_int_distribution<size_t>(0, n - 1)`` from the ``minstd_rand``
    whose state is ``state[0]`` (advanced): libstdc++'s downscaling with rejection."""
    scaling = _MINSTD_RANGE // n
    past = n * scaling
    while True:
        state[0] = (state[0] * _MINSTD_A) % _MINSTD_M
        ret = state[0] - 1
        if ret < past:
            return ret // scaling


@nb.njit(cache=True)
def _delta(metric: int, rank_high: int, rank_low: int, y_high: float, y_low: float, gain_high: float,
           gain_low: float, discounts: np.ndarray, inv_idcg: float, n_rel: np.ndarray, acc: np.ndarray) -> float:
    """XGBoost's ``DeltaNDCG``, ``1.0`` (``rank:pairwise``) or ``DeltaMAP``, before its ``abs``."""
    if metric == NDCG:
        return delta_ndcg_by_swap(gain_high, gain_low, discounts[rank_high], discounts[rank_low], inv_idcg)
    if metric == PAIRWISE:
        return 1.0
    if rank_high > rank_low:  # delta_map's swap: rank_high is the upper position
        rank_high, rank_low = rank_low, rank_high
        y_high, y_low = y_low, y_high
    r_h = rank_high + 1.0
    r_l = rank_low + 1.0
    total = n_rel[n_rel.shape[0] - 1]
    m = n_rel[rank_low]
    n = n_rel[rank_high]
    b = acc[rank_low - 1] - acc[rank_high]
    if y_high < y_low:
        return ((m / r_l - (n + 1.0) / r_h) - b) / total
    return ((n / r_h - m / r_l) + b) / total


@nb.njit(cache=True)
def _visit(rank_high: int, rank_low: int, a: int, scores: np.ndarray, at: np.ndarray, order: np.ndarray,
           frozen: bool, labels: np.ndarray, gains: np.ndarray, inv_idcg: float, discounts: np.ndarray, metric: int,
           varied: bool, score_norm: bool, want_loss: bool, n_rel: np.ndarray, acc: np.ndarray, g: np.ndarray,
           h: np.ndarray, t_plus: np.ndarray | None, t_minus: np.ndarray | None, li: np.ndarray | None,
           lj: np.ndarray | None) -> tuple[float, float]:
    """XGBoost's ``loop(i, j)`` on the documents at positions ``rank_high``, ``rank_low``: their
    terms (``LambdaGrad``) added to ``g``, ``h``; returns this pair's ``-2 lambda`` (at ``at``) and
    its held-weights loss. Unbiased (``t_plus`` not empty): a pair whose documents are both among
    the first ``k = t_plus.size`` of the query's rows (positions: the order XGBoost reads them in)
    has its terms divided by ``t_plus[high] t_minus[low]``; its cost ``log(1 / (1 - p)) delta`` is
    added to ``li[high]`` and ``lj[low]`` (by row of the query, divided by the other's bias; only
    when ``li`` is not ``None``: the rounds' own calls). All four ``None``: the plain copy."""
    hi = order[a + rank_high]
    lo = order[a + rank_low]
    if labels[hi] == labels[lo]:
        return 0.0, 0.0
    if labels[hi] < labels[lo]:
        rank_high, rank_low = rank_low, rank_high
        hi, lo = lo, hi
    delta = abs(_delta(metric, rank_high, rank_low, labels[hi], labels[lo], gains[hi], gains[lo], discounts,
                       inv_idcg, n_rel, acc))
    d_at = np.float32(at[hi] - at[lo])  # XGBoost's float s_high - s_low (exact: its scores are floats)
    if score_norm and varied:
        delta /= abs(np.float64(d_at)) + 0.01
    p_hi = hi - a
    p_lo = lo - a
    ipw = 1.0  # XGBoost's unbiased divisor t+(high) t-(low), where both positions are tracked (x / 1.0 is x)
    if t_plus is not None:  # None: numba compiles the plain copy without these branches
        k = t_plus.shape[0]
        if p_hi < k and p_lo < k and t_minus[p_lo] >= EPS64 and t_plus[p_hi] >= EPS64:
            ipw = t_plus[p_hi] * t_minus[p_lo]
    if want_loss:  # the normalisation's lambda is the one at ``at``
        lam_at = np.float32((_sigmoid32(d_at) - 1.0) * delta / ipw)
        return -2.0 * np.float64(lam_at), (delta * _logistic_loss(scores[hi] - scores[lo], 1.0) / ipw
                                           if delta != 0.0 else 0.0)
    sig = _sigmoid32(np.float32(scores[hi] - scores[lo]))
    lam = np.float32((sig - 1.0) * delta / ipw)
    hes = np.float32(max(sig * (1.0 - sig), 1e-16) * delta * 2.0 / ipw)
    g[p_hi] += lam
    h[p_hi] += hes
    g[p_lo] += -lam
    h[p_lo] += hes
    if li is not None and p_hi < t_plus.shape[0] and p_lo < t_plus.shape[0]:  # eq. 30, 31 of Hu et al.
        one_minus = 1.0 - sig
        cost = (math.log(1.0 / one_minus) if one_minus != 0.0 else math.inf) * delta
        if t_minus[p_lo] >= EPS64:
            li[hi] += cost / t_minus[p_lo]
        if t_plus[p_hi] >= EPS64:
            lj[lo] += cost / t_plus[p_hi]
    if frozen:
        lam = np.float32((_sigmoid32(d_at) - 1.0) * delta / ipw)
    return -2.0 * np.float64(lam), 0.0


@nb.njit(cache=True)
def _query(a: int, n: int, scores: np.ndarray, at: np.ndarray, order: np.ndarray, frozen: bool,
           labels: np.ndarray, gains: np.ndarray, inv_idcg: float, discounts: np.ndarray, metric: int,
           num_pair: int, seed: int | None, score_norm: bool, want_loss: bool,
           g: np.ndarray, h: np.ndarray, t_plus: np.ndarray | None, t_minus: np.ndarray | None,
           li: np.ndarray | None, lj: np.ndarray | None) -> tuple[float, float]:
    """One query's pairs (``MakePairs``): their terms added to ``g``, ``h`` (float32, by position in
    the query's rows); returns ``(sum_lambda, loss)``: XGBoost's ``-2 sum lambda`` (of the terms at
    ``at``) and the held-weights loss. ``seed``: the ``"mean"`` pairs' generator's, ``None`` for the
    ``"topk"`` pairs (numba compiles that copy without the draws)."""
    varied = at[order[a]] != at[order[a + n - 1]]
    n_rel = np.zeros(n if metric == MAP else 0)
    acc = np.zeros(n if metric == MAP else 0)
    if metric == MAP:  # MAPStat: relevant documents and sum of label / position, by position
        n_rel[0] = labels[order[a]]
        acc[0] = labels[order[a]] / 1.0
        for k in range(1, n):
            n_rel[k] = n_rel[k - 1] + labels[order[a + k]]
            acc[k] = acc[k - 1] + labels[order[a + k]] / (k + 1.0)
    sum_lambda = 0.0
    loss = 0.0
    if seed is None:
        for i in range(min(n, num_pair)):
            for j in range(i + 1, n):
                s, l = _visit(i, j, a, scores, at, order, frozen, labels, gains, inv_idcg, discounts, metric,
                              varied, score_norm, want_loss, n_rel, acc, g, h, t_plus, t_minus, li, lj)
                sum_lambda += s
                loss += l
        return sum_lambda, loss
    first, second = mean_pairs(labels[order[a:a + n]], num_pair, seed)
    for t in range(first.shape[0]):
        s, l = _visit(first[t], second[t], a, scores, at, order, frozen, labels, gains, inv_idcg, discounts, metric,
                      varied, score_norm, want_loss, n_rel, acc, g, h, t_plus, t_minus, li, lj)
        sum_lambda += s
        loss += l
    return sum_lambda, loss


@nb.njit(cache=True)
def mean_pairs(ranked_labels: np.ndarray, num_pair: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """XGBoost's ``"mean"`` pairs of one query whose labels in the current order are
    ``ranked_labels``, as positions in that order, in its order: per bucket of equal labels (the
    labels sorted in decreasing order, stably), ``num_pair`` rounds of one draw per document of the
    bucket among the documents outside it, from ``minstd_rand(seed)``."""
    n = ranked_labels.shape[0]
    y_rank = -ranked_labels
    y_sorted = stable_argsort_descending(ranked_labels)  # np.argsort(y_rank, kind="mergesort"), one compile less
    first = np.empty(n * num_pair, dtype=np.int64)
    second = np.empty(n * num_pair, dtype=np.int64)
    count = 0
    state = np.array([seed % _MINSTD_M if seed % _MINSTD_M != 0 else 1], dtype=np.int64)
    i = 0
    while i < n:
        j = i + 1
        while j < n and y_rank[y_sorted[i]] == y_rank[y_sorted[j]]:
            j += 1
        outside = i + (n - j)
        if outside > 0:
            for _ in range(num_pair):
                for pair_idx in range(i, j):
                    r = minstd_uniform(state, outside)
                    if r >= i:
                        r = r - i + j
                    first[count] = y_sorted[pair_idx]
                    second[count] = y_sorted[r]
                    count += 1
        i = j
    return first[:count], second[:count]


@nb.njit(parallel=True, cache=True)
def xgb_lambda_sums(scores: np.ndarray, at: np.ndarray, order: np.ndarray, frozen: bool, labels: np.ndarray,
                    gains: np.ndarray, group_ptr: np.ndarray, inv_idcg: np.ndarray, query_weights: np.ndarray,
                    discounts: np.ndarray, metric: int, num_pair: int,
                    iteration: int | None, score_norm: bool, query_norm: bool, want_loss: bool, grad: np.ndarray,
                    hess: np.ndarray, loss: np.ndarray, t_plus: np.ndarray | None, t_minus: np.ndarray | None,
                    li: np.ndarray | None, lj: np.ndarray | None) -> None:
    """XGBoost's lambdas (``grad``, ``hess``: each row's float32 value) or the held-weights loss
    per query (``want_loss``: ``loss[q]``) at ``scores``, the order and pair weights from ``at``
    (``scores`` itself unless ``frozen``; ``order``: :func:`~._pair_kernels.query_orders` of
    ``at``). ``labels`` are XGBoost's float32 labels; ``query_weights`` multiply each query's float32
    values last, in float64 (as the objective contract has them: XGBoost's built-in rescales its
    weights to mean 1 and multiplies in float32); ``iteration`` seeds the ``"mean"`` pairs (``None``:
    the ``"topk"`` pairs, compiled without the draws). Unbiased:
    ``t_plus``, ``t_minus`` the position biases (``None``: none), ``li``, ``lj`` (one per row, or
    ``None``) take the pairs' costs (:func:`_visit`)."""
    n_queries = group_ptr.shape[0] - 1
    for q in nb.prange(n_queries):
        a = group_ptr[q]
        n = group_ptr[q + 1] - a
        if n == 0 or query_weights[q] == 0.0:  # a query of weight 0 adds nothing, even where its loss overflows
            continue
        g = np.zeros(n, dtype=np.float32)
        h = np.zeros(n, dtype=np.float32)
        seed = None if iteration is None else ((iteration + 1) * n_queries + q) & 0xFFFFFFFF
        sum_lambda, q_loss = _query(a, n, scores, at, order, frozen, labels, gains, inv_idcg[q], discounts,
                                    metric, num_pair, seed, score_norm, want_loss, g, h, t_plus, t_minus,
                                    li, lj)
        norm = 1.0
        if query_norm:
            if iteration is not None:
                norm = 1.0 / num_pair
            elif sum_lambda > 0.0:
                norm = math.log2(1.0 + sum_lambda) / sum_lambda
        # GradientPair's operator*(float): the factor rounded to float32, the product too
        norm32 = np.float32(norm)
        w = query_weights[q]
        if want_loss:
            loss[q] = q_loss * norm32 * w
            continue
        for k in range(n):      # times norm32 = 1 (no normalisation) changes no bit
            grad[a + k] = np.float64(g[k] * norm32) * w
            hess[a + k] = np.float64(h[k] * norm32) * w


@nb.njit(cache=True)
def position_bias_update(li_full: np.ndarray, lj_full: np.ndarray, group_ptr: np.ndarray, t_plus: np.ndarray,
                         t_minus: np.ndarray, regularizer: float) -> None:
    """XGBoost's ``LambdaRankUpdatePositionBias`` (CPU): the rows' costs summed by position over
    the queries in their order (the first ``k = t_plus.size`` rows of each), then, in place,
    ``t_plus[i] = (li[i] / li[0]) ** regularizer`` and ``t_minus[i] = (lj[i] / lj[0]) ** regularizer``
    (eq. 30, 31 of Hu et al.), each left as it was when its position 0 sum is below ``1e-16``."""
    k = t_plus.shape[0]
    li = np.zeros(k)
    lj = np.zeros(k)
    for q in range(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        for i in range(min(group_ptr[q + 1] - a, k)):
            li[i] += li_full[a + i]
            lj[i] += lj_full[a + i]
    for i in range(k):
        if li[0] >= EPS64:
            t_plus[i] = (li[i] / li[0]) ** regularizer
        if lj[0] >= EPS64:
            t_minus[i] = (lj[i] / lj[0]) ** regularizer
