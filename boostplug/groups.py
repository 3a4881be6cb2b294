"""Query groups: the one boundary format of boostplug, ``group_ptr``.

Inside boostplug, the documents of query ``q`` are the rows
``group_ptr[q]:group_ptr[q + 1]``. ``group_ptr`` is an int64 array of length
``n_queries + 1`` with ``group_ptr[0] == 0``, strictly increasing, and
``group_ptr[-1] == n_docs`` (like a CSR row pointer, and like XGBoost's
``group_ptr``). Every other format is converted once, at the edge:

* ``qid`` arrays (scikit-learn style, one query id per row; XGBoost's ``qid=``):
  :func:`group_ptr_from_qid`, :func:`qid_from_group_ptr`;
* group *sizes* (LightGBM's ``group=``, the ``.query`` sidecar files):
  :func:`group_ptr_from_sizes`, :func:`sizes_from_group_ptr`.

Example:
    >>> group_ptr_from_qid([7, 7, 3, 3, 3])
    array([0, 2, 5])
    >>> sizes_from_group_ptr(group_ptr_from_sizes([2, 3]))
    array([2, 3])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import INT64_MAX, check_group_ptr, check_labels, check_scores, plain
from ._validation import as_1d as _as_1d
from ._validation import show_values as _show

__all__ = [
    "Regrouped",
    "group_ptr_from_qid",
    "group_ptr_from_sizes",
    "sizes_from_group_ptr",
    "qid_from_group_ptr",
    "index_within_query",
    "check_group_ptr",
    "first_noncontiguous",
    "first_varying_row",
    "first_per_query",
    "group_ptr_of_runs",
    "cut_queries",
    "resolve_group_ptr",
    "group_ptr_of",
    "check_ranking_inputs",
    "label_levels",
]


class Regrouped(NamedTuple):
    """Result of :func:`group_ptr_from_qid` with ``regroup=True``.

    ``permutation`` reorders the rows so that every query is contiguous
    (``X[permutation]``, ``y[permutation]``); queries appear in the order of
    their first occurrence and rows keep their relative order (a stable sort).
    """

    group_ptr: NDArray[np.int64]
    permutation: NDArray[np.int64]


def first_noncontiguous(qid: ArrayLike) -> tuple[int, int] | None:
    """Where a ``qid`` array first breaks contiguity, or None if every query is contiguous.

    Returns ``(row, first_row)``: ``row`` is the first row whose qid already
    occurred in an earlier, separate run of rows, and ``first_row`` is the
    first row of that qid.
    """
    q = _as_1d(qid, "qid")
    if q.shape[0] < 2:
        return None
    starts = group_ptr_of_runs(q)[:-1]
    _, first_pos, inverse = np.unique(q[starts], return_index=True, return_inverse=True)
    first_run = first_pos[inverse.reshape(-1)]  # each run's first run of the same id
    again = np.flatnonzero(first_run != np.arange(starts.shape[0]))
    if not again.size:
        return None
    k = int(again[0])
    return int(starts[k]), int(starts[first_run[k]])


def first_varying_row(values: ArrayLike, group_ptr: NDArray[np.int64]) -> tuple[int, int] | None:
    """Where per-row ``values`` that should be constant within each query first are not, or None
    if every query's rows all have its first row's value (NaN never equals it).

    Returns ``(row, query)``: the first row whose value differs from its query's first row's.

    Example:
        >>> first_varying_row([5, 5, 1, 1, 2], np.array([0, 2, 5]))
        (4, 1)
    """
    v = np.asarray(values)
    bad = np.flatnonzero(v != np.repeat(v[group_ptr[:-1]], np.diff(group_ptr)))
    if not bad.size:
        return None
    row = int(bad[0])
    return row, int(np.searchsorted(group_ptr, row, side="right") - 1)


def first_per_query(values: NDArray, group_ptr: NDArray[np.int64], what: str, fix: str) -> NDArray:
    """Each query's first value of per-row numbers ``values`` that must be equal within each query;
    where they are not, a ``ValueError``: ``what``, the first such query with its rows and two of its
    values, then ``fix``."""
    varying = first_varying_row(values, group_ptr)
    if varying is not None:
        row, q = varying
        raise ValueError(f"{what}; query {q} (rows {int(group_ptr[q])}..{int(group_ptr[q + 1]) - 1}) has "
                         f"{float(values[group_ptr[q]]):g} and {float(values[row]):g} (row {row}){fix}")
    return values[group_ptr[:-1]]


def group_ptr_of_runs(qid: ArrayLike) -> NDArray[np.int64]:
    """Group pointer of the runs of equal adjacent ids: a new group starts wherever the id
    changes, so an id that reappears after other ids starts a group of its own (unlike
    :func:`group_ptr_from_qid`, which refuses it)."""
    q = _as_1d(qid, "qid")
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    return np.concatenate(([0], change, [q.shape[0]])).astype(np.int64) if q.shape[0] else np.zeros(1, np.int64)


def cut_queries(group_ptr: ArrayLike, rows: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The queries that the row indices ``rows`` (a training fold, say) hold some but not all
    documents of, and how many of each one's rows they hold.

    Example:
        >>> cut_queries([0, 2, 5], [0, 1, 2])   # query 0 whole, query 1 cut: 1 of its 3 rows
        (array([1]), array([1]))
    """
    g = check_group_ptr(group_ptr)
    sizes = np.diff(g)
    query_of_row = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    held = np.bincount(query_of_row[np.asarray(rows, dtype=np.int64)], minlength=sizes.shape[0])
    cut = np.flatnonzero((held > 0) & (held != sizes))
    return cut, held[cut]


def group_ptr_from_qid(
    qid: ArrayLike, *, regroup: bool = False, caller: str | None = None
) -> NDArray[np.int64] | Regrouped:
    """Group pointer of a ``qid`` array whose queries are contiguous.

    Query ids need not be sorted (LETOR files are contiguous but unsorted), but
    all rows of one query must be adjacent. If they are not, a ``ValueError``
    names the first qid that reappears and the row where it does. With
    ``regroup=True`` the rows are instead stably regrouped and a
    :class:`Regrouped` ``(group_ptr, permutation)`` is returned.

    Args:
        qid: query id per row, shape ``(n_docs,)``; integers or strings.
        regroup: opt in to reordering rows instead of raising.
        caller: for the error, the function the user gave ``qid`` to (``"LGBMRanker.fit"``), which
            takes no ``regroup``: the error then says how to put the rows in query order for it
            instead of suggesting ``regroup=True``.

    Returns:
        ``group_ptr`` (int64, ``(n_queries + 1,)``), or :class:`Regrouped`.
    """
    q = _as_1d(qid, "qid")
    n = q.shape[0]
    if q.dtype.kind == "f":
        if not np.all(np.isfinite(q)):
            bad = int(np.flatnonzero(~np.isfinite(q))[0])
            raise ValueError(f"qid must be finite; row {bad} has qid {plain(q[bad])!r}")
    bad = first_noncontiguous(q)
    if bad is None:
        ptr = group_ptr_of_runs(q)
        return Regrouped(ptr, np.arange(n, dtype=np.int64)) if regroup else ptr
    if not regroup:
        row, first_row = bad
        fix = ("Sort the rows by query (keeping their order within a query), or pass regroup=True to get the "
               "permutation that does so." if caller is None else
               f"For {caller}, each query's rows must be adjacent: put the rows in query order first, keeping "
               "their order within a query: order = boostplug.groups.group_ptr_from_qid(qid, regroup=True).permutation, "
               "then index every per-row array with it (X[order], y[order], qid[order], ...). In scikit-learn's "
               "model selection, a splitter that ignores groups (ShuffleSplit...) hands rows in random order and cuts "
               "queries: split by query instead (GroupKFold or GroupShuffleSplit, with groups=qid).")
        raise ValueError(
            f"qid {plain(q[row])!r} is not contiguous: its rows start at row {first_row} and "
            f"it appears again at row {row} after other queries. {fix}"
        )
    # Stable regrouping: queries in order of first appearance.
    _, first_row, inverse = np.unique(q, return_index=True, return_inverse=True)
    order_of_query = np.argsort(np.argsort(first_row, kind="stable"), kind="stable")
    key = order_of_query[inverse.reshape(-1)]
    perm = np.argsort(key, kind="stable").astype(np.int64)
    return Regrouped(group_ptr_of_runs(key[perm]), perm)


def _exact(values: NDArray) -> NDArray:
    """Whole floats as Python ints, so that ``1e30`` shows as its integer value."""
    if values.dtype.kind == "f":
        return np.array([int(v) for v in values.tolist()], dtype=object)
    return values


def group_ptr_from_sizes(sizes: ArrayLike, n_docs: int | None = None) -> NDArray[np.int64]:
    """Group pointer from group sizes (LightGBM's ``group``), validated.

    Raises ``ValueError`` for non-integer, zero or negative sizes, and, when
    ``n_docs`` is given, for sizes that do not sum to it.
    """
    s = _as_1d(sizes, "group sizes")
    if s.size and s.dtype.kind == "O" and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                             for v in s.tolist()):
        s = np.array([int(v) for v in s.tolist()], dtype=object)  # Python ints beyond 64 bits
    elif s.size and s.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(s) | (s != np.round(s)))
        if bad.size:
            raise ValueError(
                f"group sizes must be whole numbers; got {_show(s[bad])} at "
                f"positions {_show(bad)}"
            )
    elif s.size and s.dtype.kind not in "iu":
        raise TypeError(f"group sizes must be integers, got dtype {s.dtype}")
    # Range checks on the values as given, before any cast or sum could wrap them.
    bad = np.flatnonzero(s <= 0)
    if bad.size:
        raise ValueError(
            f"group sizes must be positive; got {_show(s[bad])} at positions {_show(bad)}"
        )
    bad = np.flatnonzero(s > INT64_MAX)
    if bad.size:
        raise ValueError(
            f"group sizes must fit in a 64-bit integer; got {_show(_exact(s[bad]))} at positions {_show(bad)}"
        )
    s = s.astype(np.int64)
    if s.size and int(s.max()) > INT64_MAX // s.size:
        total = sum(s.tolist())  # exact Python integers
        if total > INT64_MAX:
            raise ValueError(
                f"group sizes sum to {total}, more than a 64-bit integer holds (sizes: {_show(s)})"
            )
    ptr = np.zeros(s.shape[0] + 1, dtype=np.int64)
    np.cumsum(s, out=ptr[1:])
    if n_docs is not None and ptr[-1] != n_docs:
        raise ValueError(
            f"group sizes sum to {int(ptr[-1])} but there are {n_docs} documents "
            f"(sizes: {_show(s)})"
        )
    return ptr


def sizes_from_group_ptr(group_ptr: ArrayLike) -> NDArray[np.int64]:
    """Group sizes (LightGBM's ``group``) of a validated group pointer."""
    return np.diff(check_group_ptr(group_ptr))


def qid_from_group_ptr(group_ptr: ArrayLike) -> NDArray[np.int64]:
    """Query ids ``0..n_queries-1`` per row, sorted (what XGBoost's ``qid=`` wants)."""
    g = check_group_ptr(group_ptr)
    return np.repeat(np.arange(g.shape[0] - 1, dtype=np.int64), np.diff(g))


def index_within_query(group_ptr: ArrayLike) -> NDArray[np.int64]:
    """The 0-based index of every row within its query (in row order).

    Example:
        >>> index_within_query([0, 3, 5]).tolist()
        [0, 1, 2, 0, 1]
    """
    g = check_group_ptr(group_ptr)
    return np.arange(g[-1], dtype=np.int64) - np.repeat(g[:-1], np.diff(g))


def _sizes_hint(g: np.ndarray, n_docs: int) -> str:
    """Why a rejected ``group_ptr`` looks like LightGBM group sizes, or ``""``."""
    if g.ndim != 1 or g.size == 0 or g.dtype.kind not in "iuf":
        return ""
    with np.errstate(all="ignore"):
        whole = np.all(np.isfinite(g)) and np.all(g == np.round(g)) and np.all(g > 0)
        if not whole or float(g.sum()) != float(n_docs):
            return ""
    return (f"; it looks like group sizes (LightGBM's group=, summing to {n_docs}): convert them with "
            "boostplug.groups.group_ptr_from_sizes(sizes), or pass qid=... instead")


def resolve_group_ptr(group_ptr: ArrayLike | None, qid: ArrayLike | None, n_docs: int, *,
                      caller: str = "boostplug's metrics") -> NDArray[np.int64]:
    """The validated ``group_ptr`` from exactly one of ``group_ptr`` (offsets) and ``qid``
    (one query id per row, each query's rows contiguous, ids in any order; ``caller``: what the
    user gave them to, named by the error about a non-contiguous ``qid``).

    Group sizes passed as ``group_ptr`` get a message naming
    :func:`boostplug.groups.group_ptr_from_sizes`.
    """
    if group_ptr is None and qid is None:
        raise ValueError("pass the queries as group_ptr=... (offsets) or qid=... (one id per row)")
    if group_ptr is not None and qid is not None:
        raise ValueError("pass either group_ptr or qid, not both")
    if qid is not None:
        q = _as_1d(qid, "qid")
        if q.shape[0] != n_docs:
            raise ValueError(f"qid has length {q.shape[0]} but there are {n_docs} documents")
        return group_ptr_from_qid(q, caller=caller)
    try:
        return check_group_ptr(group_ptr, n_docs=n_docs)
    except ValueError as exc:
        hint = _sizes_hint(np.asarray(group_ptr), n_docs)
        if hint:
            raise ValueError(f"{exc}{hint}") from None
        raise


def group_ptr_of(n_rows: int, qid: ArrayLike | None, group: ArrayLike | None, what: str = "", *,
                 caller: str | None = None) -> NDArray[np.int64]:
    """``group_ptr`` of ``n_rows`` rows from exactly one of ``qid`` (one id per row, each query's rows
    adjacent, any order) or ``group`` (query sizes); ``what`` names the rows in the errors, ``caller``
    the method the user called (named by the error about a non-contiguous ``qid``)."""
    where = f" for {what}" if what else ""
    if (qid is None) == (group is None):
        raise ValueError(f"pass exactly one of qid=... (one query id per row, rows of a query adjacent) or "
                         f"group=... (query sizes) for the query groups{where}")
    if qid is not None:
        if np.shape(qid)[0] != n_rows:
            raise ValueError(f"qid{where} has {np.shape(qid)[0]} values but there are {n_rows} rows")
        return group_ptr_from_qid(qid, caller=caller)
    return group_ptr_from_sizes(group, n_docs=n_rows)


def check_ranking_inputs(
    scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None, *, qid: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Validate ``(scores, labels, group_ptr)`` (or ``qid`` instead of ``group_ptr``) together.

    Returns float64 scores, float64 labels and an int64 ``group_ptr``.
    Raises ``ValueError`` naming the problem: NaN/inf scores, negative or
    non-finite labels, lengths that disagree, an invalid ``group_ptr`` or
    ``qid``, both or neither of them.
    """
    s = check_scores(scores)
    y = check_labels(labels)
    if s.shape[0] != y.shape[0]:
        raise ValueError(
            f"scores and labels have different lengths: {s.shape[0]} and {y.shape[0]}"
        )
    g = resolve_group_ptr(group_ptr, qid, y.shape[0])
    return s, y, g


def label_levels(labels: np.ndarray, group_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per document: dense label level within its query (0 = lowest label) and the
    number of documents of the query sharing its label; per query: the number of levels.

    numpy, not numba: it runs once per objective's ``prepare`` (QBRank, MPBoost; 40 ms on 700,000
    documents, against 11-21 ms compiled), and a kernel cost its first use a compile of its own (0.3 s)."""
    n = labels.shape[0]
    sizes = np.diff(group_ptr)
    query = np.repeat(np.arange(sizes.shape[0]), sizes)
    order = np.lexsort((labels, query))              # by query, then label
    sorted_labels = labels[order]
    sorted_query = query[order]
    starts = np.ones(n, dtype=bool)                  # where a run of one query's equal labels starts
    starts[1:] = (sorted_labels[1:] != sorted_labels[:-1]) | (sorted_query[1:] != sorted_query[:-1])
    run = np.cumsum(starts) - 1                      # each sorted document's run
    first = np.flatnonzero(starts)
    run_size = np.diff(np.append(first, n))
    run_query = sorted_query[first]
    n_levels = np.bincount(run_query, minlength=sizes.shape[0])
    run_level = np.arange(first.shape[0]) - (np.cumsum(n_levels) - n_levels)[run_query]
    level = np.empty(n, dtype=np.int64)
    level[order] = run_level[run]
    same = np.empty(n, dtype=np.int64)
    same[order] = run_size[run]
    return level, same, n_levels
