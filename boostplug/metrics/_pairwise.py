"""Pairwise metrics: RankBoost's ranking losses R1/R2 (Connamacher et al. 2020, Eq. 3-4),
the mis-ordering count, and QBRank's precision at K% (Zheng et al. 2007, Sec. 5).

Over the critical pairs (the default) nothing is listed (:mod:`._pair_counts`):
``rank_loss`` and ``misordered_pairs`` only need per-query counts of tied and reversed pairs,
``pair_precision_at`` counts of the pairs above a score gap, found by bisection, each in
O(n log n). Explicit ``pairs=`` are listed and keep the pair-memory guard."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_flag, plain
from ..groups import check_ranking_inputs
from ..pairs import PairMemoryError, check_memory_limit, check_pair_memory, check_pairs
from . import _common as C
from . import _kernels as K
from ._pair_counts import CriticalGaps, critical_pair_counts, loss_of_counts

__all__ = ["rank_loss", "misordered_pairs", "pair_precision_at", "PairMemoryError"]

_KINDS = ("r1", "r2")

# Bytes per explicit pair each function allocates: the (m, 2) int64 pairs plus per-pair temporaries.
_BYTES_PER_PAIR = {"rank_loss": 32, "rank_loss per_query": 56, "misordered_pairs": 25,
                   "pair_precision_at": 74}


def _inputs(what: str, scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None, qid: ArrayLike | None,
            pairs: ArrayLike | None, max_memory: int | None
            ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64] | None]:
    """Validated scores, labels, group_ptr and the explicit preference pairs (``None``: the critical
    pairs, counted, not listed); refuses (``PairMemoryError``) pairs whose arrays would take more than
    ``max_memory`` bytes, and validates ``max_memory`` (None or a number of bytes) even where nothing
    is listed."""
    s, y, g = check_ranking_inputs(scores, labels, group_ptr, qid=qid)
    if pairs is None:
        if max_memory is not None:
            check_memory_limit(max_memory, "max_memory")
        return s, y, g, None
    p = check_pairs(pairs, s.shape[0])
    check_pair_memory([p.shape[0]], None, _BYTES_PER_PAIR[what], who=what.split()[0], memory_limit=max_memory,
                      limit_name="max_memory")
    return s, y, g, p


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

        Counted without a pair list, or explicit ``pairs`` listed under the :class:`PairMemoryError`
        guard: docs/metrics.md, "Pairwise metrics and memory".

    Args:
        scores, labels, group_ptr, qid: as in :func:`boostplug.metrics.ndcg`.
        kind: ``"r1"`` or ``"r2"``.
        pairs: explicit preference pairs, shape ``(n_pairs, 2)``, preferred row first
            (then ``labels`` only serve validation and ``per_query``).
        per_query: per-query loss over that query's pairs (NaN for a query without pairs);
            explicit pairs must then lie within one query each.
        max_memory: bytes the explicit pairs' arrays may take; default
            :data:`boostplug.pairs.PAIR_MEMORY_LIMIT` (unused, but validated, without ``pairs``).
    """
    if not isinstance(kind, str) or kind.lower() not in _KINDS:
        raise ValueError(f"kind must be 'r1' or 'r2'; got {plain(kind)!r}")
    per_query = check_flag(per_query, "per_query")
    r1 = kind.lower() == "r1"
    what = "rank_loss per_query" if per_query else "rank_loss"
    s, y, g, p = _inputs(what, scores, labels, group_ptr, qid, pairs, max_memory)
    if p is None:
        return loss_of_counts(*critical_pair_counts(s, y, g).T, r1, per_query)
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
    """
    s, y, g, p = _inputs("misordered_pairs", scores, labels, group_ptr, qid, pairs, max_memory)
    if p is None:
        return int(critical_pair_counts(s, y, g)[:, 2].sum())
    return int(np.count_nonzero(K.pair_outcomes(s, p) == 1.0))


def _check_percent(percent: object) -> float:
    """K of precision at K%: a number in (0, 100]."""
    return C.checked_number(percent, "percent", lambda k: 0.0 < k <= 100.0, "a number in (0, 100]")


def _cut(m: int, percent: float) -> int:
    """Pairs kept of ``m``: ``ceil(m K / 100)``, at least 1 (1e-9 absorbs float noise in m K / 100)."""
    return min(m, max(1, math.ceil(m * percent / 100.0 - 1e-9)))


def _gap_scores(s: NDArray[np.float64]) -> NDArray[np.float64]:
    """The scores whose float64 differences are the gaps: halved when a difference could overflow."""
    if s.size and np.abs(s).max() > np.finfo(np.float64).max / 2:
        return s * 0.5  # differences of scores beyond +-9e307 overflow; halving keeps their order
    return s


def _kept_precision(c: int, above: int, correct_above: int | float, at: int, correct_at: int | float) -> float:
    """Precision of the top ``c`` pairs: the ``above`` pairs beyond the cut gap, then ``c - above``
    of the ``at`` pairs at the cut gap, each counted at their average correctness."""
    hits = correct_above + (c - above) * (correct_at / at)
    return float(hits / c)


def _precision_of_pairs(s: NDArray[np.float64], p: NDArray[np.int64], percent: float) -> float:
    """Precision at K% of listed pairs: sort their gaps (also the reference for the counted path)."""
    m = p.shape[0]
    if m == 0:
        return math.nan
    s = _gap_scores(s)
    diff = s[p[:, 0]] - s[p[:, 1]]
    gap = np.abs(diff)
    correct = (diff > 0.0).astype(np.float64)
    c = _cut(m, percent)
    order = np.argsort(-gap, kind="stable")
    gap, correct = gap[order], correct[order]
    edge = gap[c - 1]
    above = gap > edge
    at = gap == edge
    return _kept_precision(c, int(np.count_nonzero(above)), correct[above].sum(), int(np.count_nonzero(at)),
                           correct[at].sum())


def _precision_by_gap(s: NDArray[np.float64], y: NDArray[np.float64], g: NDArray[np.int64], percent: float) -> float:
    """Precision at K% of the critical pairs, counted: the cut gap is the largest float64 ``x``
    with at least ``c`` pairs of gap >= ``x``, found by bisection on the bit patterns."""
    gaps = CriticalGaps(_gap_scores(s), y, g)
    m = gaps.n_pairs
    if m == 0:
        return math.nan
    c = _cut(m, percent)
    seen: dict[int, tuple[int, int]] = {}

    def at_least(bits: int) -> tuple[int, int]:
        """(pairs, correct pairs) with a gap >= the float of ``bits`` (> 0), each counted once."""
        if bits not in seen:
            seen[bits] = gaps.at_least(float(np.int64(bits).view(np.float64)))
        return seen[bits]

    # float64 bit patterns as integers (increasing with a gap >= 0): >= c pairs at gap >= float(lo), fewer at hi
    lo, hi = 0, int(np.float64(gaps.max_gap()).view(np.int64)) + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at_least(mid)[0] >= c:
            lo = mid
        else:
            hi = mid
    above, correct_above = at_least(lo + 1)
    # A gap of 0 holds every pair; the ties there are never correct.
    n_from, correct_from = (m, correct_above) if lo == 0 else at_least(lo)
    return _kept_precision(c, above, float(correct_above), n_from - above, correct_from - correct_above)


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

        The top K% are pairs ranked by their score gap over all queries together, not the
        top K% documents of each query. Over the critical pairs (the default) nothing is
        listed, the pairs above a gap are counted (how: docs/metrics.md, "Pairwise metrics and
        memory"); explicit ``pairs`` are listed and keep the :class:`PairMemoryError` guard.

    Args:
        scores, labels, group_ptr, qid: as in :func:`boostplug.metrics.ndcg`.
        percent: K, in (0, 100] (required).
        pairs: explicit preference pairs (preferred row first); default: all critical pairs.
        max_memory: as in :func:`rank_loss` (about 74 bytes per explicit pair; unused, but
            validated, without ``pairs``).
    """
    k = _check_percent(percent)
    s, y, g, p = _inputs("pair_precision_at", scores, labels, group_ptr, qid, pairs, max_memory)
    return _precision_by_gap(s, y, g, k) if p is None else _precision_of_pairs(s, p, k)
