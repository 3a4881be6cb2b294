"""DCG and NDCG at k with explicit gain, discount, empty-query and tie conventions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.dcg import GainSpec, discounts, gains_of, max_query_size
from .._validation import check_flag
from . import _common as C
from . import _kernels as K

__all__ = ["dcg", "ndcg"]


def _dcg_idcg(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None, qid: ArrayLike | None,
              k: int | None, gain: GainSpec, discount: str,
              ties: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    s, y, g, k, code = C.ranked_inputs(scores, labels, group_ptr, qid, k, ties)
    d = discounts(discount, max_query_size(g))
    gains = gains_of(y, gain)
    return K.dcg_kernel(s, y, gains, g, d, k, code)


def dcg(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, k: int | None = None, *,
        qid: ArrayLike | None = None, gain: GainSpec = "exp2", discount: str = "log2", ties: str = "order",
        per_query: bool = False) -> float | NDArray[np.float64]:
    """Discounted cumulative gain at ``k``, averaged over queries.

    Example:
        >>> round(dcg([0.9, 0.1], [1, 2], [0, 2], gain="linear"), 6)  # 1/log2(2) + 2/log2(3)
        2.26186

    Definition:
        ``DCG@k = sum_{i=1}^{min(k, n_q)} gain(r_(i)) * disc(i)`` where ``r_(i)`` is the label at
        rank ``i`` of the ranking by descending score. ``gain``: ``"exp2"`` 2^r - 1,
        ``"linear"`` r, or an array ``label_gain`` (gain = ``label_gain[r]``, integer labels).
        ``disc``: ``"log2"`` 1/log2(i + 1); ``"letor"`` 1 for i <= 2, 1/log2(i) after.
        ``ties``: ``"order"`` ties keep input order (stable sort); ``"worst"`` tied documents
        lowest label first; ``"average"`` every tied document gets the mean gain of its tie
        (the expected DCG over random orders of each tie, McSherry and Najork 2008).

    Args:
        scores: model scores, shape ``(n_docs,)``, finite.
        labels: graded relevance labels >= 0, shape ``(n_docs,)``.
        group_ptr: query offsets, shape ``(n_queries + 1,)`` (see :mod:`boostplug.groups`;
            LightGBM's group sizes convert with ``group_ptr_from_sizes``).
        k: cut-off (an integer >= 1), or ``None`` for the whole list.
        qid: instead of ``group_ptr``, one query id per row (each query's rows
            contiguous, ids in any order); pass exactly one of the two.
        gain, discount, ties: conventions above.
        per_query: return the per-query array instead of the mean.
    """
    pq = check_flag(per_query, "per_query")
    raw, _ = _dcg_idcg(scores, labels, group_ptr, qid, k, gain, discount, ties)
    return C.finish(raw, pq)


def ndcg(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, k: int | None = None, *,
         qid: ArrayLike | None = None, gain: GainSpec = "exp2", discount: str = "log2",
         empty: C.EmptyValue = 1.0, ties: str = "order",
         per_query: bool = False) -> float | NDArray[np.float64]:
    """Normalised DCG at ``k``, averaged over queries.

    Example:
        >>> ndcg([0.9, 0.1, 0.5], [2, 0, 1], [0, 3], k=2)
        1.0

    Definition:
        ``NDCG@k = DCG@k / IDCG@k``, where ``IDCG@k`` is the DCG@k of the labels sorted by
        descending gain (see :func:`dcg` for gain, discount and ties). A query whose
        ``IDCG@k`` is 0 (no document with a positive gain) scores ``empty``: ``1.0``
        (LightGBM, XGBoost ``ndcg@k``), ``0.0`` (XGBoost ``ndcg@k-``, RankLib, the LETOR
        script, pyltr), or ``"skip"`` (NaN in the per-query array, left out of the mean).

    Args:
        scores, labels, group_ptr, k, qid, gain, discount, ties: as in :func:`dcg`.
        empty: value of a query with ideal DCG 0, a number in [0, 1] or ``"skip"``.
        per_query: return the per-query array instead of the mean.

    Returns:
        The mean NDCG over (non-skipped) queries, or the per-query values (NaN where skipped).
    """
    e = C.check_empty(empty)
    pq = check_flag(per_query, "per_query")
    raw, ideal = _dcg_idcg(scores, labels, group_ptr, qid, k, gain, discount, ties)
    return C.finish(C.normalise(raw, ideal, e), pq)
