"""Framework-neutral glue between a framework's training set and an objective.

The LightGBM and XGBoost adapters only translate calling conventions (how to read
labels, groups and weights off a ``Dataset``/``DMatrix``); everything they share
lives here: binding an objective to each training set once (so nothing that
depends only on labels and groups is recomputed per boosting round), noticing
when a set's labels change between rounds, converting weights, and the
custom-metric evaluation.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from . import metrics as _metrics
from . import objectives as _objectives
from .groups import check_group_ptr, group_ptr_from_sizes
from .objectives import PreparedObjective, check_params

__all__ = ["BoundObjective", "query_weights_from_rows", "MetricSpec"]


def query_weights_from_rows(
    row_weights: NDArray[np.floating] | None, group_ptr: NDArray[np.int64], framework: str
) -> NDArray[np.float64] | None:
    """Per-query weights from per-row weights that are constant within each query.

    LightGBM stores one weight per row; ranking losses weight whole queries.
    Rows of one query with different weights are an error (which query, which values).
    """
    if row_weights is None or len(row_weights) == 0:
        return None
    w = np.asarray(row_weights, dtype=np.float64)
    n_q = group_ptr.shape[0] - 1
    if w.shape[0] == n_q and w.shape[0] != group_ptr[-1]:
        return w  # already one weight per query (XGBoost's ranking convention)
    if w.shape[0] != group_ptr[-1]:
        raise ValueError(
            f"{framework}: got {w.shape[0]} weights for {int(group_ptr[-1])} rows in {n_q} queries; "
            "give one weight per row (constant within a query) or one per query"
        )
    first = w[group_ptr[:-1]]
    per_row_first = np.repeat(first, np.diff(group_ptr))
    bad = np.flatnonzero(w != per_row_first)
    if bad.size:
        row = int(bad[0])
        q = int(np.searchsorted(group_ptr, row, side="right") - 1)
        raise ValueError(
            f"{framework}: ranking objectives weight whole queries, but query {q} (rows "
            f"{int(group_ptr[q])}..{int(group_ptr[q + 1]) - 1}) has different row weights "
            f"({first[q]} and {w[row]} at row {row}); give every row of a query the same weight"
        )
    return first


class BoundObjective:
    """One named objective with fixed parameters, bound lazily to each training set.

    ``prepared(key, labels, group_ptr, weights)`` returns the objective prepared
    for that set, preparing it on first use. ``key`` is the framework's set object
    (held weakly: ``lgb.cv``/``xgb.cv`` hand one objective several fold sets and
    each gets its own preparation). A set whose labels or groups changed since it
    was prepared is an error rather than silently stale gradients.
    """

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        self.objective = _objectives.get(name)
        self.name = self.objective.name
        # Fail now, not at the first boosting round, on unknown parameter names.
        check_params(self.name, self.objective._params(params), self.objective.defaults)
        self.params = dict(params)
        self._by_set: "weakref.WeakKeyDictionary[Any, PreparedObjective]" = weakref.WeakKeyDictionary()
        self._last: PreparedObjective | None = None  # for set objects that cannot be weakly referenced

    def prepared(
        self,
        key: Any,
        labels: NDArray[np.floating],
        group_ptr: NDArray[np.int64],
        weights: NDArray[np.float64] | None,
        *,
        strict: bool = True,
    ) -> PreparedObjective:
        try:
            prep = self._by_set.get(key) if key is not None else self._last
        except TypeError:
            prep = self._last
        if prep is not None:
            same = (
                prep.labels.shape[0] == len(labels)
                and np.array_equal(prep.group_ptr, group_ptr)
                and np.array_equal(prep.labels, np.asarray(labels, dtype=np.float64))
            )
            if same:
                return prep
            if strict:
                raise ValueError(
                    f"{self.name}: the labels or query groups of this training set changed between "
                    "boosting rounds; an objective is bound to one training set's labels. "
                    "Build a new objective (or a new Dataset/DMatrix) for new labels."
                )
        prep = self.objective.prepare(labels, group_ptr, weights=weights, **self.params)
        try:
            if key is not None:
                self._by_set[key] = prep
        except TypeError:
            pass
        self._last = prep
        return prep

    def __getstate__(self) -> dict[str, Any]:
        # Bindings are per process (Dask ships objectives to workers, which bind their own sets).
        return {"name": self.name, "params": self.params}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["params"])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({self.name!r}{', ' if args else ''}{args})"


def group_ptr_or_error(group_ptr: Any, n_docs: int, framework: str, how: str) -> NDArray[np.int64]:
    """Validate a framework's group information, with an error that says how to add it."""
    if group_ptr is None or len(group_ptr) == 0:
        raise ValueError(
            f"{framework}: the training set has no query information; ranking objectives need it ({how})"
        )
    return check_group_ptr(np.asarray(group_ptr, dtype=np.int64), n_docs=n_docs)


def group_ptr_from_lgb_sizes(sizes: Any, n_docs: int) -> NDArray[np.int64]:
    if sizes is None or len(sizes) == 0:
        raise ValueError(
            "LightGBM: the Dataset has no query information; ranking objectives need it "
            "(lgb.Dataset(X, y, group=sizes), or boostplug.lightgbm.dataset(X, y, qid=qid))"
        )
    return group_ptr_from_sizes(np.asarray(sizes), n_docs=n_docs)


class MetricSpec:
    """A boostplug metric by name (``"ndcg@10"``, ``"map@10"``, ...) for the frameworks' eval hooks."""

    def __init__(self, name: str, display_name: str | None = None) -> None:
        self.fn: Callable[..., float] = _metrics.by_name(name)
        self.name = name
        self.display_name = display_name or name
        self.higher_is_better = _metrics.higher_is_better(name)

    def __call__(self, preds: NDArray, labels: NDArray, group_ptr: NDArray[np.int64]) -> float:
        return float(self.fn(np.asarray(preds, dtype=np.float64).reshape(-1), labels, group_ptr))
