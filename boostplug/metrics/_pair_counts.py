"""Per-query counts of critical pairs by outcome, without listing the pairs.

A critical pair ``(i, j)`` of a query has ``labels[i] > labels[j]``. For every query the
kernel counts all of them, those whose scores tie, and those the scores reverse
(``scores[i] < scores[j]``), in O(n log n): the rows sorted by score (a numpy sort; the
kernels themselves do not sort, so that no cached kernel here shares numba's generated sort
functions with another module's cache) and the labels' levels (:func:`boostplug.groups.label_levels`),
then a Fenwick tree over the query's label levels filled in descending score order. Inputs are already validated (float64
contiguous arrays, valid ``group_ptr``); nothing here raises.

:class:`CriticalGaps` counts, for a score gap ``g > 0``, the critical pairs whose gap
``|scores[i] - scores[j]|`` is at least ``g`` and those of them ordered correctly, the same
way in O(n log n) per ``g``: a two-pointer sweep over the rows sorted by score keeps in the
Fenwick tree the rows at least ``g`` above the current one (QBRank's precision at K%).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._core import dispatch
from ..groups import label_levels
from ..pairs import critical_counts
from . import _common as C

__all__ = ["critical_pair_counts", "CriticalGaps", "StepCounts", "loss_of_counts"]


@nb.njit(cache=True)
def _count_below(tree: np.ndarray, level: int) -> int:
    """Documents in the Fenwick tree with a level below ``level``."""
    c = 0
    i = level - 1
    while i > 0:
        c += tree[i]
        i -= i & -i
    return c


@nb.njit(cache=True)
def _add(tree: np.ndarray, level: int) -> None:
    i = level
    while i < tree.shape[0]:
        tree[i] += 1
        i += i & -i


@nb.njit(cache=True)
def _tied_reversed(scores: np.ndarray, by_score: np.ndarray, level: np.ndarray, tree: np.ndarray) -> tuple[int, int]:
    """(tied, reversed) critical pairs of one query: its rows ``by_score`` (ascending score), their
    label ``level`` (1 = the query's lowest), ``tree`` a zeroed Fenwick tree of ``levels + 1`` entries."""
    tied = 0
    reversed_ = 0
    end = by_score.shape[0]  # groups of equal scores, from the highest score down
    while end > 0:
        start = end - 1
        while start > 0 and scores[by_score[start - 1]] == scores[by_score[end - 1]]:
            start -= 1
        # Before the group is added the tree holds the strictly higher scores: a lower label
        # there is a reversed pair; the lower labels the group itself adds are its tied pairs.
        before = 0
        for t in range(start, end):
            before += _count_below(tree, level[by_score[t]])
        for t in range(start, end):
            _add(tree, level[by_score[t]])
        after = 0
        for t in range(start, end):
            after += _count_below(tree, level[by_score[t]])
        reversed_ += before
        tied += after - before
        end = start
    return tied, reversed_


@nb.njit(cache=True)
def _by_query(order: np.ndarray, group_ptr: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The rows of ``order`` regrouped by query (``query[i]``: row ``i``'s; queries are contiguous row
    ranges), each query's rows in the order they have in ``order``: a counting sort, O(n)."""
    out = np.empty(order.shape[0], dtype=np.int64)
    nxt = group_ptr[:-1].copy()
    for t in range(order.shape[0]):
        i = order[t]
        q = query[i]
        out[nxt[q]] = i
        nxt[q] += 1
    return out


def _within_queries(values: np.ndarray, group_ptr: np.ndarray) -> np.ndarray:
    """Row indices sorted by query, then by ascending value (ties in any order: the counts do not
    depend on it): one stable sort of all rows, then a counting sort by query (faster than
    ``lexsort``; numpy's default sort is slow on the many ties of a stump ensemble's scores)."""
    if group_ptr.shape[0] <= 2:
        return np.argsort(values, kind="stable")
    query = np.repeat(np.arange(group_ptr.shape[0] - 1), np.diff(group_ptr))
    return _by_query(np.argsort(values, kind="stable"), group_ptr, query)


@nb.njit(cache=True)
def _merge_query(order: np.ndarray, values: np.ndarray, moved: np.ndarray, s: int, e: int, buf: np.ndarray) -> bool:
    """``order[s:e]`` (one query's rows, ascending in earlier values) merged in place from two runs,
    the rows ``moved`` and the others, each kept in its order, by ``values`` (the moved row first on a
    tie), ``buf[s:e]`` the scratch; whether the result is ascending in ``values`` (``False``: the runs
    were not each in order)."""
    nu = s          # the moved rows go to buf[s:nu], in order; the others to buf[nu:e], last first
    ns = e
    for t in range(s, e):
        i = order[t]
        if moved[i]:
            buf[nu] = i
            nu += 1
        else:
            ns -= 1
            buf[ns] = i
    a = s
    b = e - 1
    for t in range(s, e):
        if b < nu or (a < nu and values[buf[a]] <= values[buf[b]]):
            order[t] = buf[a]
            a += 1
        else:
            order[t] = buf[b]
            b -= 1
    for t in range(s + 1, e):
        if not values[order[t - 1]] <= values[order[t]]:
            return False
    return True


#: Work units (see :mod:`boostplug._core.dispatch`) per document of the count, its two orders given:
#: one pass over the documents, not a ranking's sort.
COUNT_DOC_WORK = 4


def critical_pair_counts(scores: np.ndarray, labels: np.ndarray, group_ptr: np.ndarray) -> np.ndarray:
    """Per query, int64 shape ``(n_queries, 3)``: critical pairs, those tied in score, and those
    the scores reverse (the rest are ordered correctly)."""
    steps = StepCounts(labels, group_ptr)
    return np.column_stack([steps.critical, steps.counts(scores)])


def loss_of_counts(critical: np.ndarray, tied: np.ndarray, reversed_: np.ndarray, r1: bool,
                   per_query: bool = False) -> float | np.ndarray:
    """:func:`~boostplug.metrics.rank_loss` (R1 if ``r1``, else R2) from each query's critical, tied and
    reversed pairs."""
    # Twice the loss, in whole numbers: a tie costs 1 of 2 under R2, 2 of 2 under R1.
    errors2 = 2 * reversed_ + (2 if r1 else 1) * tied
    if per_query:
        return C.normalise(errors2.astype(np.float64), 2.0 * critical.astype(np.float64), math.nan)
    m = int(critical.sum())
    return int(errors2.sum()) / (2 * m) if m else math.nan


@nb.njit(cache=True, parallel=True)
def _step_counts(scores: np.ndarray, group_ptr: np.ndarray, queries: np.ndarray, level: np.ndarray,
                 tree_ptr: np.ndarray, trees: np.ndarray, order: np.ndarray, moved: np.ndarray, merge: bool,
                 buf: np.ndarray, out: np.ndarray) -> bool:
    """For the ``queries``: (when ``merge``) their rows of ``order`` merged in place by
    :func:`_merge_query`, then ``out[q] = (tied, reversed)`` by :func:`_tied_reversed` (its tree
    ``trees[tree_ptr[i]:tree_ptr[i + 1]]``); ``False`` if a merge was not ascending (``out`` and
    ``order`` are then partly written)."""
    ok = np.ones(queries.shape[0], dtype=np.bool_)
    for i in nb.prange(queries.shape[0]):
        q = queries[i]
        s, e = group_ptr[q], group_ptr[q + 1]
        if merge and not _merge_query(order, scores, moved, s, e, buf):
            ok[i] = False
            continue
        tree = trees[tree_ptr[i]:tree_ptr[i + 1]]
        tree[:] = 0
        t, r = _tied_reversed(scores, order[s:e], level, tree)
        out[q, 0] = t
        out[q, 1] = r
    return ok.all()


class StepCounts:
    """Per query, the critical pairs a ranking's scores tie and reverse, for a caller that counts
    them after every step of an ensemble with the same labels (a booster's history): the labels'
    levels are found once, only the queries with a critical pair are visited, and a step that moved
    some rows by one constant merges the last score order instead of sorting again (O(n), a full
    sort if that premise turns out false), in the same pass as the count."""

    def __init__(self, labels: np.ndarray, group_ptr: np.ndarray) -> None:
        self.group_ptr = group_ptr
        level, same, n_levels = label_levels(labels, group_ptr)
        #: Critical pairs per query.
        self.critical = critical = critical_counts(same, group_ptr)
        self.level = level + 1      # the Fenwick trees' levels start at 1
        self.queries = np.flatnonzero(critical > 0).astype(np.int64)
        self.tree_ptr = np.concatenate([[0], np.cumsum(n_levels[self.queries] + 1)]).astype(np.int64)
        self._trees = np.empty(int(self.tree_ptr[-1]), dtype=np.int64)
        self._buf = np.empty(0, dtype=np.int64)     # the merge's scratch, made at the first merge
        self._order: np.ndarray | None = None
        self._work = labels.shape[0] * COUNT_DOC_WORK

    def counts(self, scores: np.ndarray, moved: np.ndarray | None = None) -> np.ndarray:
        """``(n_queries, 2)`` int64: the tied and the reversed critical pairs of each query under
        ``scores`` (float64, contiguous, finite). ``moved``: the rows whose scores one constant
        changed since the previous call, when that is the only change (a boolean mask)."""
        out = np.zeros((self.group_ptr.shape[0] - 1, 2), dtype=np.int64)
        run = dispatch.kernel_for(_step_counts, self._work)
        if self._order is not None and moved is not None:
            self._buf = self._buf if self._buf.size else np.empty_like(self._order)
            if run(scores, self.group_ptr, self.queries, self.level, self.tree_ptr, self._trees, self._order,
                   moved, True, self._buf, out):
                return out
        self._order = _within_queries(scores, self.group_ptr)
        run(scores, self.group_ptr, self.queries, self.level, self.tree_ptr, self._trees, self._order,
            np.zeros(0, dtype=np.bool_), False, self._buf, out)
        return out

    def loss(self, scores: np.ndarray, r1: bool) -> float:
        """:func:`~boostplug.metrics.rank_loss` (R1 if ``r1``, else R2) of ``scores`` (as in :meth:`counts`)
        over all the critical pairs."""
        return loss_of_counts(self.critical, *self.counts(scores).T, r1)


# ------------------------------------------------------------------ pairs by score gap

#: Work units (see :mod:`boostplug._core.dispatch`) per document of one gap count: the sweep and
#: three Fenwick walks over a few label levels.
GAP_DOC_WORK = 5


@nb.njit(cache=True)
def _query_gap_counts(scores: np.ndarray, levels: np.ndarray, n_levels: int, gap: float) -> tuple[int, int]:
    """(critical pairs with ``scores[hi] - scores[lo] >= gap``, those with the higher label on the
    higher score) of one query: its ascending ``scores`` and their label ``levels``; ``gap > 0``."""
    n = scores.shape[0]
    if n_levels < 2:
        return 0, 0
    tree = np.zeros(n_levels + 1, dtype=np.int64)
    count = 0
    correct = 0
    p = n  # the tree holds rows p..n-1: those at least ``gap`` above row j
    for j in range(n - 1, -1, -1):
        low = scores[j]
        # The float64 difference itself, as the pair list computes it: it only grows with
        # the upper score and shrinks with the lower one, so p never moves up as j goes down.
        while p > j + 1 and scores[p - 1] - low >= gap:
            p -= 1
            _add(tree, levels[p])
        higher = (n - p) - _count_below(tree, levels[j] + 1)
        count += _count_below(tree, levels[j]) + higher
        correct += higher
    return count, correct


@nb.njit(cache=True, parallel=True)
def _gap_counts_parallel(scores: np.ndarray, levels: np.ndarray, group_ptr: np.ndarray, n_levels: np.ndarray,
                         gap: float, out: np.ndarray) -> None:
    for q in nb.prange(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        c, k = _query_gap_counts(scores[a:b], levels[a:b], n_levels[q], gap)
        out[q, 0] = c
        out[q, 1] = k


class CriticalGaps:
    """The critical pairs of all queries by score gap, without listing them.

    Sorts once (each query's scores ascending, with their label levels, as contiguous
    arrays); then :meth:`at_least` counts in O(n log n) the pairs whose gap, the float64
    difference ``higher score - lower score`` (``|h(x) - h(y)|`` exactly as a pair list
    computes it), is at least ``gap``.
    """

    def __init__(self, scores: np.ndarray, labels: np.ndarray, group_ptr: np.ndarray) -> None:
        by_score = _within_queries(scores, group_ptr)
        level, same, self.n_levels = label_levels(labels, group_ptr)
        self.group_ptr = group_ptr
        self.scores, self.levels = scores[by_score], level[by_score] + 1
        #: Number of critical pairs (every gap is at least 0).
        self.n_pairs = int(critical_counts(same, group_ptr).sum())
        sizes = np.diff(group_ptr)
        # Only the rows beside the largest query can be counted in parallel (one query: none).
        self._work = (scores.shape[0] - int(sizes.max(initial=0))) * GAP_DOC_WORK

    def max_gap(self) -> float:
        """The largest gap of a critical pair (0.0 when there is none)."""
        has = np.flatnonzero(self.n_levels >= 2)
        if not has.size:
            return 0.0
        return float((self.scores[self.group_ptr[has + 1] - 1] - self.scores[self.group_ptr[has]]).max())

    def at_least(self, gap: float) -> tuple[int, int]:
        """(critical pairs with a gap >= ``gap``, those of them the scores order correctly:
        the preferred row strictly higher); ``gap`` must be > 0 (a gap of 0 includes the ties,
        which the sweep would count both ways)."""
        out = np.zeros((self.group_ptr.shape[0] - 1, 2), dtype=np.int64)
        run = dispatch.kernel_for(_gap_counts_parallel, self._work)
        run(self.scores, self.levels, self.group_ptr, self.n_levels, float(gap), out)
        return int(out[:, 0].sum()), int(out[:, 1].sum())
