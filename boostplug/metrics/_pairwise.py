"""Pairwise metrics: RankBoost's ranking losses R1/R2 (Connamacher et al. 2020, Eq. 3-4),
the mis-ordering count, and QBRank's precision at K% (Zheng et al. 2007, Sec. 5).

Over the critical pairs (the default) ``rank_loss`` and ``misordered_pairs`` only need
per-query counts of tied and reversed pairs, computed in O(n log n) without listing a pair
(:mod:`._pair_counts`); explicit ``pairs=`` and ``pair_precision_at`` list pairs and keep
the pair-memory guard."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_flag, check_ranking_inputs, plain
from ..pairs import PairMemoryError, _count_per_query, check_memory_limit, check_pair_memory, check_pairs, critical_pairs
from . import _common as C
from . import _kernels as K
from ._pair_counts import critical_pair_counts

__all__ = ["rank_loss", "misordered_pairs", "pair_precision_at", "PairMemoryError"]

_KINDS = ("r1", "r2")

# Bytes per pair each function allocates: the (m, 2) int64 pair list plus its per-pair temporaries.
_BYTES_PER_PAIR = {"rank_loss": 32, "rank_loss per_query": 56, "misordered_pairs": 25,
                   "pair_precision_at": 74}


def _check_max_memory(max_memory: object) -> None:
    """``max_memory`` is None or a number of bytes (the guard's rule), even where nothing is listed."""
    if max_memory is not None:
        check_memory_limit(max_memory, "max_memory")


def _pairs_of(what: str, scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None,
              qid: ArrayLike | None, pairs: ArrayLike | None, max_memory: int | None
              ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Validated scores, the preference pairs (critical pairs when ``pairs`` is None), and group_ptr;
    refuses (``PairMemoryError``) before allocating more than ``max_memory`` bytes of pairs."""
    s, y, g = check_ranking_inputs(scores, labels, group_ptr, qid=qid)
    if pairs is None:
        counts = _count_per_query(y, g)
        check_pair_memory(counts, g, _BYTES_PER_PAIR[what], who=what.split()[0], memory_limit=max_memory,
                          limit_name="max_memory")
        return s, critical_pairs(y, g, memory_limit=2**63 - 1), g
    p = check_pairs(pairs, s.shape[0])
    check_pair_memory([p.shape[0]], None, _BYTES_PER_PAIR[what], who=what.split()[0], memory_limit=max_memory,
                      limit_name="max_memory")
    return s, p, g


def _query_of_pairs(p: NDArray[np.int64], g: NDArray[np.int64]) -> NDArray[np.int64]:
    """Query index of every pair; ``ValueError`` for a pair whose rows are in different queries."""
    q0 = np.searchsorted(g, p[:, 0], side="right") - 1
    q1 = np.searchsorted(g, p[:, 1], side="right") - 1
    bad = np.flatnonzero(q0 != q1)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"per_query needs pairs within one query; pairs[{i}] = {p[i].tolist()} joins "
            f"query {int(q0[i])} and query {int(q1[i])}"
        )
    return q0


def _counted(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None, qid: ArrayLike | None,
             max_memory: int | None) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Per query: critical pairs, pairs tied in score, pairs the scores reverse (nothing listed)."""
    s, y, g = check_ranking_inputs(scores, labels, group_ptr, qid=qid)
    _check_max_memory(max_memory)
    counts = critical_pair_counts(s, y, g)
    return counts[:, 0], counts[:, 1], counts[:, 2]


def rank_loss(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, *,
              qid: ArrayLike | None = None, kind: str = "r2", pairs: ArrayLike | None = None,
              per_query: bool = False, max_memory: int | None = None) -> float | NDArray[np.float64]:
    """RankBoost's empirical ranking loss R1 or R2 over preference pairs (lower is better).

    Example:
        >>> rank_loss([1.0, 1.0, 0.0], [2, 1, 0], [0, 3], kind="r1")  # one tie among 3 pairs
        0.3333333333333333

    Definition:
        Over the ``m`` preference pairs ``(x_i, x'_i)`` (``x_i`` preferred; by default all
        critical pairs of all queries, the uniform distribution D_1),
        ``R1 = (1/m) sum_i 1[h(x_i) - h(x'_i) <= 0]`` (Eq. 3: ties are errors) and
        ``R2 = (1/m) sum_i (1[h(x_i) - h(x'_i) < 0] + 1/2 1[h(x_i) = h(x'_i)])`` (Eq. 4: ties
        count half). The float result weights every pair equally across queries (it is
        not the mean of the per-query values). NaN when there is no pair.

        Over the critical pairs nothing is listed: each query's tied and reversed pairs are
        counted in O(n log n) (one query of 100,000 documents with labels 0-4 has about
        4e9 pairs). Explicit ``pairs`` are checked in memory (about 32 bytes each, 56 with
        ``per_query``): a call that would need more than ``max_memory`` is refused with
        :class:`PairMemoryError` (a ``ValueError`` and ``MemoryError``) before anything is
        allocated.

    Args:
        scores, labels, group_ptr, qid: as in :func:`boostplug.metrics.ndcg`.
        kind: ``"r1"`` or ``"r2"``.
        pairs: explicit preference pairs, shape ``(n_pairs, 2)``, preferred row first
            (then ``labels`` only serve validation and ``per_query``).
        per_query: per-query loss over that query's pairs (NaN for a query without pairs);
            explicit pairs must then lie within one query each.
        max_memory: bytes the explicit pairs' arrays may take; default
            :data:`boostplug.pairs.PAIR_MEMORY_LIMIT` (unused, but validated, without ``pairs``).

    Returns:
        The loss (float), or per-query losses, shape ``(n_queries,)``.
    """
    if not isinstance(kind, str) or kind.lower() not in _KINDS:
        raise ValueError(f"kind must be 'r1' or 'r2'; got {plain(kind)!r}")
    per_query = check_flag(per_query, "per_query")
    r1 = kind.lower() == "r1"
    if pairs is None:
        critical, tied, reversed_ = _counted(scores, labels, group_ptr, qid, max_memory)
        # Twice the loss, in whole numbers: a tie costs 1 of 2 under R2, 2 of 2 under R1.
        errors2 = 2 * reversed_ + (2 if r1 else 1) * tied
        if per_query:
            return C.normalise(errors2.astype(np.float64), 2.0 * critical.astype(np.float64), math.nan)
        m = int(critical.sum())
        return int(errors2.sum()) / (2 * m) if m else math.nan
    what = "rank_loss per_query" if per_query else "rank_loss"
    s, p, g = _pairs_of(what, scores, labels, group_ptr, qid, pairs, max_memory)
    out = K.pair_outcomes(s, p)
    if r1:
        out = np.where(out > 0.0, 1.0, 0.0)
    if not per_query:
        return float(out.mean()) if out.size else math.nan
    nq = g.shape[0] - 1
    q = _query_of_pairs(p, g)
    total = np.bincount(q, weights=out, minlength=nq)
    count = np.bincount(q, minlength=nq).astype(np.float64)
    return C.normalise(total, count, math.nan)


def misordered_pairs(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, *,
                     qid: ArrayLike | None = None, pairs: ArrayLike | None = None,
                     max_memory: int | None = None) -> int:
    """Number of preference pairs the scores strictly reverse.

    Example:
        >>> misordered_pairs([0.0, 1.0, 1.0], [2, 1, 0], [0, 3])
        2

    Definition:
        ``sum_i 1[h(x_i) < h(x'_i)]`` over the pairs (``x_i`` preferred); ties are not counted.
        Over the critical pairs it is counted in O(n log n) per query, nothing listed.

    Args:
        scores, labels, group_ptr, qid: as in :func:`boostplug.metrics.ndcg`.
        pairs: explicit preference pairs (preferred row first); default: all critical pairs.
        max_memory: as in :func:`rank_loss` (about 25 bytes per explicit pair).

    Returns:
        The count (int).
    """
    if pairs is None:
        return int(_counted(scores, labels, group_ptr, qid, max_memory)[2].sum())
    s, p, _ = _pairs_of("misordered_pairs", scores, labels, group_ptr, qid, pairs, max_memory)
    return int(np.count_nonzero(K.pair_outcomes(s, p) == 1.0))


def pair_precision_at(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None,
                      percent: float | None = None, *, qid: ArrayLike | None = None,
                      pairs: ArrayLike | None = None, max_memory: int | None = None) -> float:
    """QBRank's "precision at K%" of preference pairs (Zheng et al., NIPS 2007, Sec. 5).

    Example:
        >>> pair_precision_at([3.0, 0.0, 1.0], [2, 1, 0], [0, 3], 100)  # (0,1) ok, (0,2) ok, (1,2) not
        0.6666666666666666

    Definition:
        Sort the ``m`` preference pairs by ``|h(x) - h(y)|`` descending and keep the top
        ``c = ceil(m * K / 100)``; the result is the fraction of them that are not
        contradicted, i.e. ``h(preferred) > h(other)`` strictly: a tied pair counts as
        contradicted, so precision at 100% equals ``1 - R1``. When pairs with equal
        ``|h(x) - h(y)|`` straddle the cut, each counts in proportion (the cut takes their
        average correctness), so the result does not depend on the order of the pairs.
        NaN when there is no pair.

        Unlike :func:`rank_loss`, this lists the pairs (about 74 bytes each) and keeps the
        :class:`PairMemoryError` guard: the top K% are pairs ranked by their score gap over
        all queries together, not the top K% documents of each query, so which pairs are
        kept depends on every pair's gap and no per-query count of documents gives it.

    Args:
        scores, labels, group_ptr, qid: as in :func:`boostplug.metrics.ndcg`.
        percent: K, in (0, 100] (required).
        pairs: explicit preference pairs (preferred row first); default: all critical pairs.
        max_memory: as in :func:`rank_loss` (about 74 bytes per pair).

    Returns:
        The precision (float).
    """
    if isinstance(percent, (bool, np.bool_)) or not isinstance(percent, (int, float, np.integer, np.floating)):
        raise TypeError(f"percent must be a number in (0, 100]; got {plain(percent)!r}")
    if not (isinstance(percent, (int, np.integer)) and 0 < percent <= 100
            or not isinstance(percent, (int, np.integer)) and 0.0 < float(percent) <= 100.0):
        raise ValueError(f"percent must be a number in (0, 100]; got {plain(percent)!r}")
    s, p, _ = _pairs_of("pair_precision_at", scores, labels, group_ptr, qid, pairs, max_memory)
    m = p.shape[0]
    if m == 0:
        return math.nan
    if np.abs(s).max() > np.finfo(np.float64).max / 2:
        s = s * 0.5  # differences of scores beyond +-9e307 overflow; halving keeps their order
    diff = s[p[:, 0]] - s[p[:, 1]]
    gap = np.abs(diff)
    correct = (diff > 0.0).astype(np.float64)
    c = min(m, max(1, math.ceil(m * float(percent) / 100.0 - 1e-9)))
    order = np.argsort(-gap, kind="stable")
    gap, correct = gap[order], correct[order]
    edge = gap[c - 1]
    above = gap > edge
    at = gap == edge
    n_above = int(np.count_nonzero(above))
    hits = correct[above].sum() + (c - n_above) * correct[at].mean()
    return float(hits / c)
