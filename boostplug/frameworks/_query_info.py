"""A framework's query information in boostplug's form: ``group_ptr`` from its group
information, and its weights one per query. :func:`weights_by_query` is the one rule by which
every framework function tells weights given one per row from weights given one per query."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..groups import check_group_ptr, first_per_query, group_ptr_from_sizes

__all__ = ["LIGHTGBM_INF", "weights_by_query", "query_weights_from_rows", "metric_query_weights", "group_ptr_or_error",
           "set_arrays", "refuse_bad_weights", "check_set_weights"]

#: What LightGBM stores for an infinite label or weight when it builds a Dataset (1e38 as float32).
LIGHTGBM_INF = float(np.float32(1e38))
#: What a framework hands on for an infinite weight (XGBoost refuses one).
_INF_STAND_IN = {"LightGBM": LIGHTGBM_INF}


def weights_by_query(n_weights: int, group_ptr: NDArray[np.int64], framework: str = "") -> bool:
    """Whether ``n_weights`` weights for the rows of ``group_ptr`` are one per query (``True``) or
    one per row (``False``); any other count is a ``ValueError``. When both fit (every query a
    single row) the two readings are the same weights: they are taken as one per row."""
    n_q, n = group_ptr.shape[0] - 1, int(group_ptr[-1])
    if n_weights == n:
        return False
    if n_weights == n_q:
        return True
    raise ValueError(f"{framework}{': ' if framework else ''}got {n_weights} weights for {n} rows in {n_q} "
                     "queries; give one weight per row or one per query")


def refuse_bad_weights(w: NDArray[np.float64], group_ptr: NDArray[np.int64], framework: str, by_query: bool,
                       who: str = "") -> None:
    """``ValueError`` naming the first query (and row) whose weight is NaN, negative, infinite or
    the framework's stand-in for infinity: what the builders and every bound set refuse."""
    stand_in = _INF_STAND_IN.get(framework, np.inf)
    bad = np.flatnonzero(~(w >= 0.0) | ~(w < stand_in))  # ~(w >= 0) also catches NaN
    if not bad.size:
        return
    i = int(bad[0])
    q = i if by_query else int(np.searchsorted(group_ptr, i, side="right") - 1)
    stored = w[i] == stand_in != np.inf
    why = f", which is how {framework} stores an infinite weight" if stored else ""
    value = str(np.float32(w[i])) if stored else repr(float(w[i]))
    raise ValueError(
        f"{who}{': ' if who else ''}{framework}: query {q} (rows {int(group_ptr[q])}..{int(group_ptr[q + 1]) - 1}) "
        f"has weight {value}{'' if by_query else f' at row {i}'}"
        + (f" ({bad.size} such weights)" if bad.size > 1 else "") + f"{why}; weights must be finite and non-negative"
    )


def check_set_weights(weights: Any, group_ptr: NDArray[np.int64], framework: str, who: str) -> None:
    """The weights a framework hands a bound objective or metric with one of its sets (once per
    set): what :func:`refuse_bad_weights` refuses, and zero for every query (nothing to learn from
    or to measure), as the boosters refuse them."""
    if weights is None or len(weights) == 0:
        return
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    refuse_bad_weights(w, group_ptr, framework, weights_by_query(w.shape[0], group_ptr, framework), who)
    if group_ptr.shape[0] > 1 and not (w > 0).any():
        raise ValueError(f"{who}: {framework}: every query has weight 0: nothing to learn from or to measure; "
                         "give some query a positive weight")


def query_weights_from_rows(
    row_weights: NDArray[np.floating] | None, group_ptr: NDArray[np.int64], framework: str
) -> NDArray[np.float64] | None:
    """Per-query weights from per-row weights that are constant within each query (or from
    weights already one per query, XGBoost's ranking convention).

    LightGBM stores one weight per row; ranking losses weight whole queries.
    Rows of one query with different weights are an error (which query, which values).
    """
    if row_weights is None or len(row_weights) == 0:
        return None
    w = np.asarray(row_weights, dtype=np.float64)
    if weights_by_query(w.shape[0], group_ptr, framework):
        return w
    return first_per_query(w, group_ptr, f"{framework}: ranking objectives weight whole queries",
                           ": different row weights in one query; give every row of a query the same weight")


def metric_query_weights(weights: Any, group_ptr: NDArray[np.int64], framework: str = "") -> NDArray[np.float64] | None:
    """Per-query weights for averaging a metric, as the frameworks' own ranking metrics do:
    one weight per query as given (XGBoost's group weights), or the mean of the query's row
    weights (LightGBM's ``Metadata`` query weights). ``None`` when there are no weights."""
    if weights is None or len(weights) == 0:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if weights_by_query(w.shape[0], group_ptr, framework):
        return w
    n_q, n = group_ptr.shape[0] - 1, int(group_ptr[-1])
    sizes = np.diff(group_ptr)
    sums = np.add.reduceat(w, group_ptr[:-1]) if n_q and n else np.zeros(n_q)
    return np.divide(sums, sizes, out=np.zeros(n_q), where=sizes > 0)


def group_ptr_or_error(groups: Any, n_docs: int | None, framework: str, how: str, *, sizes: bool = False,
                       what: str = "the training set") -> NDArray[np.int64]:
    """Validate a framework's group information (offsets, or query ``sizes`` as LightGBM keeps
    them), with an error that says how to add it."""
    if groups is None or len(groups) == 0:
        raise ValueError(f"{framework}: {what} has no query information; ranking objectives need it ({how})")
    if sizes:
        return group_ptr_from_sizes(np.asarray(groups), n_docs=n_docs)
    return check_group_ptr(np.asarray(groups, dtype=np.int64), n_docs=n_docs)


def set_arrays(labels: Any, groups: Any, weights: Any, to_group_ptr: Callable[[Any, int], NDArray[np.int64]],
               framework: str, who: str = "") -> tuple[Any, NDArray[np.int64], NDArray[np.float64] | None]:
    """Labels, ``group_ptr`` and per-query weights of a framework's training set, from its labels,
    its group information (``to_group_ptr(groups, n_docs)``) and its row or query weights
    (checked by :func:`check_set_weights`, errors naming ``who``)."""
    group_ptr = to_group_ptr(groups, len(labels))
    check_set_weights(weights, group_ptr, framework, who or "the training set")
    return labels, group_ptr, query_weights_from_rows(weights, group_ptr, framework)
