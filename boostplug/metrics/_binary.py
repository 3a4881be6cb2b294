"""Binary-relevance metrics (precision, average precision, reciprocal rank), graded ERR, and RBP."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.dcg import max_query_size
from .._validation import check_flag, check_real, plain
from . import _common as C
from . import _kernels as K

__all__ = ["average_precision", "precision", "reciprocal_rank", "err", "rbp", "ERR_MAX_GRADE"]

#: ``err``'s default largest grade: RankLib's ``ERRScorer`` assumes grades 0-4 (``MAX = 16 = 2^4``).
#: A constant, so that a query's ERR does not depend on the other queries of the batch.
ERR_MAX_GRADE = 4.0


def _binary(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None, qid: ArrayLike | None,
            k: int | None, threshold: float, ties: str,
            metric: int) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    s, y, g, k, code = C.ranked_inputs(scores, labels, group_ptr, qid, k, ties)
    t = C.check_threshold(threshold)
    rel = (y >= t).astype(np.float64)
    raw, n_rel = K.binary_kernel(s, y, rel, g, k, code, metric)
    return raw, n_rel, g


def average_precision(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None,
                      k: int | None = None, *, qid: ArrayLike | None = None, threshold: float = 1.0,
                      empty: C.EmptyValue = 1.0, ties: str = "order",
                      per_query: bool = False) -> float | NDArray[np.float64]:
    """Average precision at ``k`` per query; its mean over queries is MAP@k.

    Example:
        >>> average_precision([3.0, 2.0, 1.0], [1, 0, 1], [0, 3])  # (1/1 + 2/3) / 2
        0.8333333333333333

    Definition:
        A document is relevant when ``label >= threshold``. With ``rel_i`` the relevance at
        rank ``i`` and ``R`` the number of relevant documents of the query,
        ``AP@k = sum_{i <= min(k, n_q)} rel_i * P@i / min(k, R)``, ``P@i = (1/i) sum_{j<=i} rel_j``.
        This is LightGBM's ``map@k`` (src/metric/map_metric.hpp: it divides by
        ``min(k, R)``; relevant means label > 0.5, i.e. ``threshold=1`` for integer labels).
        ``k=None`` is the full AP (divides by R). A query with ``R = 0`` scores ``empty``
        (LightGBM: 1). ``ties="average"`` gives the exact expected AP over random orders of
        each tie (expectations of ``rel_i rel_j`` within a tie group of n documents with r
        relevant: r/n for i = j, r(r-1)/(n(n-1)) otherwise); ``"worst"`` puts tied
        non-relevant documents first.

    Args:
        scores, labels, group_ptr, qid: as in :func:`boostplug.metrics.ndcg`.
        k: cut-off, or ``None`` for the whole list.
        threshold: relevance threshold on the labels.
        empty: value of a query without relevant documents, a number in [0, 1] or ``"skip"``.
        ties: ``"order"``, ``"average"`` or ``"worst"``.
        per_query: return the per-query array instead of the mean.

    Returns:
        MAP@k (float), or the per-query AP@k (NaN where skipped).
    """
    e = C.check_empty(empty)
    pq = check_flag(per_query, "per_query")
    raw, n_rel, _ = _binary(scores, labels, group_ptr, qid, k, threshold, ties, K.AVERAGE_PRECISION)
    norm = n_rel if k is None else np.minimum(n_rel, float(k))
    return C.finish(C.normalise(raw, norm, e), pq)


_DIVISORS = ("k", "min")


def precision(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, k: int | None = None, *,
              qid: ArrayLike | None = None, threshold: float = 1.0, divisor: str = "k", ties: str = "order",
              per_query: bool = False) -> float | NDArray[np.float64]:
    """Precision at ``k``: the fraction of relevant documents among the top ``k``.

    Example:
        >>> precision([3.0, 2.0, 1.0], [1, 0, 1], [0, 3], k=2)
        0.5

    Definition:
        ``P@k = (1/D) * sum_{i <= min(k, n_q)} rel_i`` with ``rel_i = [label >= threshold]`` at
        rank ``i``. ``divisor="k"`` (default): ``D = k`` even when the query has fewer
        documents (trec_eval's ``P_k``), so such a query cannot reach 1; ``divisor="min"``:
        ``D = min(k, n_q)`` (XGBoost's ``pre@k``).
        ``ties="average"`` is the exact expectation over random orders of each tie.

    Args:
        scores, labels, group_ptr, qid, threshold, ties, per_query: as in :func:`average_precision`.
        k: cut-off, an integer >= 1.
        divisor: ``"k"`` or ``"min"`` (``min(k, n_q)``), see above.
    """
    if k is None:
        raise ValueError("precision needs a cut-off k (an integer >= 1); got None")
    if not isinstance(divisor, str) or divisor not in _DIVISORS:
        raise ValueError(f"divisor must be one of {', '.join(repr(d) for d in _DIVISORS)}; got {plain(divisor)!r}")
    pq = check_flag(per_query, "per_query")
    raw, _, g = _binary(scores, labels, group_ptr, qid, k, threshold, ties, K.PRECISION)
    d = np.full(raw.shape[0], float(k)) if divisor == "k" else np.minimum(np.diff(g), k).astype(np.float64)
    return C.finish(raw / d, pq)


def reciprocal_rank(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None,
                    k: int | None = None, *, qid: ArrayLike | None = None, threshold: float = 1.0,
                    empty: C.EmptyValue = 1.0, ties: str = "order",
                    per_query: bool = False) -> float | NDArray[np.float64]:
    """Reciprocal rank of the first relevant document; its mean over queries is MRR.

    Example:
        >>> reciprocal_rank([3.0, 2.0, 1.0], [0, 0, 2], [0, 3])
        0.3333333333333333

    Definition:
        ``RR@k = 1 / rank`` of the first document with ``label >= threshold`` if that rank is
        ``<= k``, else 0. A query with no relevant document at all scores ``empty`` (default
        1, like ``ndcg``/``average_precision``; TREC uses 0). ``ties="average"`` is the exact
        expected value over random orders of each tie: in the first tie group (starting at
        rank ``s``) holding ``r`` relevant of ``n`` documents the first relevant one is at rank
        ``s + j`` with probability ``C(n-j-1, r-1) / C(n, r)``.

    Args:
        scores, labels, group_ptr, k, qid, threshold, empty, ties, per_query: as in
        :func:`average_precision`.

    Returns:
        MRR (float), or the per-query RR (NaN where skipped).
    """
    e = C.check_empty(empty)
    pq = check_flag(per_query, "per_query")
    raw, n_rel, _ = _binary(scores, labels, group_ptr, qid, k, threshold, ties, K.RECIPROCAL_RANK)
    out = np.where(n_rel > 0.0, raw, e)
    return C.finish(out, pq)


def err(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, k: int | None = None, *,
        qid: ArrayLike | None = None, max_grade: float = ERR_MAX_GRADE, ties: str = "order",
        per_query: bool = False) -> float | NDArray[np.float64]:
    """Expected reciprocal rank (Chapelle, Metzler, Zhang and Grinspan, CIKM 2009).

    Example:
        >>> err([2.0, 1.0], [1, 0], [0, 2], max_grade=1)
        0.5

    Definition:
        ``R_g = (2^g - 1) / 2^max_grade`` is the probability that a user stops at a document of
        grade ``g``; ``ERR@k = sum_{r=1}^{min(k, n_q)} (1/r) R_(r) prod_{i<r} (1 - R_(i))``.
        ``max_grade`` defaults to :data:`ERR_MAX_GRADE` = 4 (grades 0-4, as RankLib's
        ``ERRScorer``: ``R_4 = 15/16``), a constant so that a query's value does not depend
        on the other queries evaluated with it; a label above ``max_grade`` is a
        ``ValueError`` (pass the scale's top grade). ERR is not normalised: a query without relevant
        documents scores 0. ``ties``: ``"order"`` or ``"worst"`` only (ERR is not linear in
        the ranking, and no cheap exact tie average exists).

    Args:
        scores, labels, group_ptr, k, qid, per_query: as in :func:`average_precision`.
        max_grade: the largest possible grade (a finite number >= every label), default 4.
        ties: ``"order"`` or ``"worst"``.
    """
    pq = check_flag(per_query, "per_query")
    s, y, g, k, code = C.ranked_inputs(scores, labels, group_ptr, qid, k, ties, allowed=("order", "worst"))
    top = _check_max_grade(max_grade, y)
    with np.errstate(over="ignore"):
        stop = (np.exp2(y - top) - np.exp2(-top)) if y.size else y.copy()
    if not np.all(np.isfinite(stop)):
        raise ValueError(f"err: max_grade {top!r} is too large for float64 (2^max_grade overflows)")
    return C.finish(K.err_kernel(s, y, stop, g, k, code), pq)


def rbp(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, k: int | None = None, *,
        qid: ArrayLike | None = None, persistence: float = 0.8, max_grade: float | None = None,
        threshold: float = 1.0, ties: str = "order", per_query: bool = False) -> float | NDArray[np.float64]:
    """Rank-biased precision (Moffat and Zobel, TOIS 2008).

    Example:
        >>> round(rbp([3.0, 2.0, 1.0], [1, 0, 1], [0, 3], persistence=0.5), 6)  # 0.5 * (1 + 0.25)
        0.625

    Definition:
        ``RBP@k = (1 - p) sum_{i=1}^{min(k, n_q)} rel_(i) p^(i - 1)``: a user reads each next document
        with probability ``p`` (``persistence``). ``rel`` is ``label >= threshold`` (binary), or with
        ``max_grade`` the graded ``label / max_grade`` (a label above it is a ``ValueError``). Not
        normalised: a query without relevant documents scores 0. ``ties`` as in :func:`dcg`.

    Args:
        scores, labels, group_ptr, k, qid, threshold, ties, per_query: as in :func:`average_precision`
            (``threshold``: binary relevance only).
        persistence: ``p``, in (0, 1).
        max_grade: ``None`` (binary relevance) or the largest possible grade.
    """
    pq = check_flag(per_query, "per_query")
    s, y, g, k, code = C.ranked_inputs(scores, labels, group_ptr, qid, k, ties)
    p = check_real("rbp: persistence", persistence, 0.0, 1.0)
    if p == 1.0:
        raise ValueError("rbp: persistence must be below 1 (at 1 every query scores 0), got 1.0")
    if max_grade is None:
        rel = (y >= C.check_threshold(threshold)).astype(np.float64)
    else:
        top = _check_max_grade(max_grade, y)
        rel = y / top if top > 0.0 else np.zeros_like(y)
    discount = p ** np.arange(max(max_query_size(g), 1), dtype=np.float64)
    raw, _ = K.dcg_kernel(s, y, rel, g, discount, k, code)
    return C.finish((1.0 - p) * raw, pq)


def _check_max_grade(max_grade: float, y: NDArray[np.float64]) -> float:
    top = C.checked_number(max_grade, "max_grade", lambda v: np.isfinite(v) and v >= 0, "a finite number >= 0")
    above = y > top
    if above.any():
        i = int(np.flatnonzero(above)[0])
        raise ValueError(f"label {y[i]:g} (row {i}) exceeds max_grade={top:g}; ERR needs the top grade "
                         "of the label scale: pass max_grade=<largest possible label>")
    return top
