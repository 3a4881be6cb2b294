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

from .. import metrics as _metrics
from .. import objectives as _objectives
from .._validation import check_finite
from ..groups import check_group_ptr, first_varying_row, group_ptr_from_qid, group_ptr_from_sizes
from ..keyed_pairs import KeyedPairs
from ..objectives import Loss

__all__ = ["BoundObjective", "given_row_params", "given_keyed_params", "params_on_rows", "NO_KEYS", "query_weights_from_rows", "metric_query_weights",
           "group_ptr_or_error", "builder_group_ptr", "builder_weights", "builder_init_score", "MetricSpec", "MetricCallable"]


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
    varying = first_varying_row(w, group_ptr)
    if varying is not None:
        row, q = varying
        raise ValueError(
            f"{framework}: ranking objectives weight whole queries, but query {q} (rows "
            f"{int(group_ptr[q])}..{int(group_ptr[q + 1]) - 1}) has different row weights "
            f"({first[q]} and {w[row]} at row {row}); give every row of a query the same weight"
        )
    return first



def given_row_params(objective: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters in ``params`` that hold row indices of one training set, as the registered
    ``objective`` declares them (``boostplug.objectives.get(name).row_params``): they cannot follow
    the rows into another set (a cv fold, a subset, a Dask worker's share). Keyed tables
    (:func:`given_keyed_params`) are not among them: they follow the rows."""
    return {k: params[k] for k in objective.row_params
            if params.get(k) is not None and not isinstance(params[k], KeyedPairs)}


def given_keyed_params(objective: Any, params: dict[str, Any]) -> dict[str, KeyedPairs]:
    """The row parameters in ``params`` given as :class:`~boostplug.keyed_pairs.KeyedPairs`: they
    are mapped onto each training set's rows (:func:`params_on_rows`)."""
    return {k: params[k] for k in objective.row_params if isinstance(params.get(k), KeyedPairs)}


#: How to give a training set its rows' keys, for messages.
NO_KEYS = ("{who}: {param} is a KeyedPairs table, and this training set carries no (qid, doc) key per row to map it "
           "onto; {how}")


def params_on_rows(objective: Any, params: dict[str, Any], qid: Any, doc: Any) -> dict[str, Any]:
    """``params`` with every keyed table mapped onto the rows keyed ``(qid, doc)``: row-index pairs,
    and the table's weights in the parameter the objective declares for them (``weights_in``)."""
    out = dict(params)
    declared = objective.loss_class.declared_params()
    for k, table in given_keyed_params(objective, params).items():
        pairs, weights = table.rows(qid, doc)
        out[k] = pairs
        if table.weight is None:
            continue
        target = declared[k].weights_in
        if target is None:
            raise ValueError(f"{objective.name}: {k} is a weighted KeyedPairs table, but {objective.name} takes no "
                             "weights for it; build the table without weight=")
        if params.get(target) is not None:
            raise ValueError(f"{objective.name}: {k} is a weighted KeyedPairs table and {target} is given too; the "
                             f"table's weights are its {target} (one per pair, following the pairs into every fold): "
                             f"leave {target} unset")
        out[target] = weights
    return out


def _same_arrays(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Element-wise equality of two tuples of arrays (``None`` and empty alike: no such information)."""
    return len(a) == len(b) and all(
        (x is None or np.size(x) == 0) if (y is None or np.size(y) == 0)
        else (x is not None and np.array_equal(x, y))
        for x, y in zip(a, b)
    )


class BoundObjective:
    """One named objective with fixed parameters, bound lazily to each training set.

    ``prepared(key, seen, derive)`` returns the objective prepared for that set,
    preparing it on first use. ``key`` is the framework's set object
    (held weakly: ``lgb.cv``/``xgb.cv`` hand one objective several fold sets and
    each gets its own preparation). A set whose labels or groups changed since it
    was prepared is an error rather than silently stale gradients.
    """

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        self.objective = _objectives.get(name)
        self.name = self.objective.name
        self.objective.check(params)  # fail now, not at the first boosting round
        self.params = dict(params)
        #: The row-index parameters given (:func:`given_row_params`), bound to one training set.
        self.rows_given = given_row_params(self.objective, self.params)
        #: The keyed tables given (:func:`given_keyed_params`), mapped onto each training set's rows.
        self.keyed_given = given_keyed_params(self.objective, self.params)
        self._by_set: "weakref.WeakKeyDictionary[Any, tuple[Loss, tuple[Any, ...]]]" = \
            weakref.WeakKeyDictionary()
        self._last: tuple[Loss, tuple[Any, ...]] | None = None  # for sets not weakly referenceable

    def prepared(
        self,
        key: Any,
        seen: tuple[Any, ...],
        derive: Callable[[], tuple[NDArray[np.floating], NDArray[np.int64], NDArray[np.float64] | None]],
        *,
        strict: bool = True,
        check_new: Callable[[], None] | None = None,
        keys: Callable[[], tuple[Any, Any]] | None = None,
        no_keys: str = "",
    ) -> Loss:
        """The objective prepared for this set. ``seen`` is what the framework hands each round
        (raw labels, groups, weights), compared with what the set was prepared from;
        ``derive() -> (labels, group_ptr, query_weights)``, ``check_new()`` and ``keys() -> (qid, doc)``
        (each row's keys, for keyed tables; ``None``: the set has none, ``no_keys`` says how to
        give them) run only when a set is first prepared (validation and conversion are not
        repeated every round)."""
        try:
            entry = self._by_set.get(key) if key is not None else self._last
        except TypeError:
            entry = self._last
        if entry is not None:
            prep, was_seen = entry
            if _same_arrays(was_seen, seen):
                return prep
            if strict:
                raise ValueError(
                    f"{self.name}: the labels, query groups or weights of this training set changed "
                    "between boosting rounds; an objective is bound to one training set. "
                    "Build a new objective (or a new Dataset/DMatrix) for new labels or weights."
                )
        labels, group_ptr, weights = derive()
        for param, rows in self.rows_given.items():
            if entry is not None or len(self._by_set):
                raise ValueError(
                    f"{self.name}: explicit {param} are row indices of one training set, and this objective "
                    f"was handed a second one (lgb.cv/xgb.cv folds, or a refit on other data): the {param} "
                    f"would read other rows. Build one objective per training set, with its own {param}."
                )
            if np.size(rows) and int(np.max(rows)) >= len(labels):
                raise ValueError(
                    f"{self.name}: explicit {param} index row {int(np.max(rows))}, but this training set has "
                    f"{len(labels)} rows (an xgb.cv/lgb.cv fold? build the folds yourself, each with its own {param})"
                )
        if check_new is not None:
            check_new()
        params = self.params
        if self.keyed_given:
            row_keys = None if keys is None else keys()
            if row_keys is None:
                raise ValueError(NO_KEYS.format(who=self.name, param=next(iter(self.keyed_given)), how=no_keys))
            params = params_on_rows(self.objective, params, *row_keys)
        prep = self.objective.prepare(labels, group_ptr, weights=weights, **params)
        # Copies: a framework may hand the same array object back after changing it in place.
        entry = (prep, tuple(None if a is None else np.array(a, copy=True) for a in seen))
        try:
            if key is not None:
                self._by_set[key] = entry
        except TypeError:
            pass
        self._last = entry
        return prep

    def __getstate__(self) -> dict[str, Any]:
        # Bindings are per process (Dask ships objectives to workers, which bind their own sets).
        return {"name": self.name, "params": self.params}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["params"])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({self.name!r}{', ' if args else ''}{args})"


def group_ptr_or_error(groups: Any, n_docs: int, framework: str, how: str, *, sizes: bool = False,
                       what: str = "the training set") -> NDArray[np.int64]:
    """Validate a framework's group information (offsets, or query ``sizes`` as LightGBM keeps
    them), with an error that says how to add it."""
    if groups is None or len(groups) == 0:
        raise ValueError(f"{framework}: {what} has no query information; ranking objectives need it ({how})")
    if sizes:
        return group_ptr_from_sizes(np.asarray(groups), n_docs=n_docs)
    return check_group_ptr(np.asarray(groups, dtype=np.int64), n_docs=n_docs)


def builder_group_ptr(y: Any, qid: Any, group_ptr: Any, kwargs: dict[str, Any], builder: str) -> NDArray[np.int64]:
    """What ``dataset()``/``dmatrix()`` share: finite labels and a ``group_ptr`` covering them,
    from exactly one of ``qid`` (contiguous, any order) or ``group_ptr``."""
    if (qid is None) == (group_ptr is None):
        raise ValueError("pass exactly one of qid=... or group_ptr=...")
    if "group" in kwargs:
        raise TypeError(f"{builder} builds the query groups from qid= or group_ptr=; don't pass group= too")
    check_finite(y, "y", noun="label")  # the frameworks store NaN/inf labels silently or refuse them without the row
    n = int(np.shape(y)[0])
    if qid is not None and np.shape(qid)[0] != n:
        raise ValueError(f"qid has {np.shape(qid)[0]} rows but y has {n}")
    gp = group_ptr_from_qid(qid) if qid is not None else check_group_ptr(group_ptr)
    if gp[-1] != n:
        raise ValueError(f"the query groups cover {int(gp[-1])} rows but y has {n}")
    return gp


def builder_weights(weight: Any, group_ptr: NDArray[np.int64], framework: str, *,
                    per_query: bool) -> NDArray[np.float64] | None:
    """What ``dataset()``/``dmatrix()`` share: ``weight`` given one per row or one per query, finite
    and non-negative, returned one per row (LightGBM's format) or, with ``per_query``, one per
    query (XGBoost's; rows of a query must then agree). A bad weight is a ``ValueError`` naming
    its query: LightGBM would drop a NaN-weighted query silently and store ``inf`` as 1e38, and
    XGBoost refuses without saying which."""
    if weight is None:
        return None
    w = np.asarray(weight, dtype=np.float64).reshape(-1)
    sizes = np.diff(group_ptr)
    n_q, n = sizes.shape[0], int(group_ptr[-1])
    if w.shape[0] not in (n, n_q):
        raise ValueError(f"{framework}: got {w.shape[0]} weights for {n} rows in {n_q} queries; "
                         "give one per row or one per query")
    by_query = w.shape[0] == n_q and w.shape[0] != n
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        i = int(bad[0])
        q = i if by_query else int(np.searchsorted(group_ptr, i, side="right") - 1)
        where = "" if by_query else f" at row {i}"
        raise ValueError(
            f"{framework}: query {q} (rows {int(group_ptr[q])}..{int(group_ptr[q + 1]) - 1}) has weight "
            f"{float(w[i])!r}{where}" + (f" ({bad.size} such weights)" if bad.size > 1 else "")
            + "; weights must be finite and non-negative"
        )
    if per_query:
        return query_weights_from_rows(w, group_ptr, framework)
    return np.repeat(w, sizes) if by_query else w


def builder_init_score(values: Any, name: str) -> Any:
    """Finite initial scores (``init_score``/``base_margin``) or ``None``: a NaN or infinite start
    would make every gradient of its query NaN. 2-d scores (one column per class) are checked whole."""
    if values is None:
        return None
    v = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(v.reshape(-1)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name} must be finite; entry {i} is {float(v.reshape(-1)[i])!r}"
                         + (f" ({bad.size} such entries)" if bad.size > 1 else ""))
    return values


def metric_query_weights(weights: Any, group_ptr: NDArray[np.int64]) -> NDArray[np.float64] | None:
    """Per-query weights for averaging a metric, as the frameworks' own ranking metrics do:
    one weight per query as given (XGBoost's group weights), or the mean of the query's row
    weights (LightGBM's ``Metadata`` query weights). ``None`` when there are no weights."""
    if weights is None or len(weights) == 0:
        return None
    w = np.asarray(weights, dtype=np.float64)
    n_q, n = group_ptr.shape[0] - 1, int(group_ptr[-1])
    if w.shape[0] == n:
        sizes = np.diff(group_ptr)
        sums = np.add.reduceat(w, group_ptr[:-1]) if n_q and n else np.zeros(n_q)
        return np.divide(sums, sizes, out=np.zeros(n_q), where=sizes > 0)
    if w.shape[0] == n_q:
        return w
    raise ValueError(f"got {w.shape[0]} weights for {n} rows in {n_q} queries; expected one per row or per query")


#: How a weighted metric averages queries: see :class:`MetricSpec`.
WEIGHTINGS = ("query", "framework")


class MetricSpec:
    """A boostplug metric by name (``"ndcg@10"``, ``"map@10"``, ...) for the frameworks' eval hooks.

    With per-query weights ``w_q`` the value is, by ``weighting``:

    * ``"query"`` (default): the weighted mean over queries, ``sum_q w_q m_q / sum_q w_q``
      (queries a convention skips are left out of both sums);
    * ``"framework"`` (NDCG only): what LightGBM's and XGBoost's own weighted ``ndcg@k`` compute.
      A query without a relevant document (ideal DCG 0, NDCG 1 by their convention) adds 1 to
      the numerator but ``w_q`` to the denominator:
      ``(sum_{q relevant} w_q m_q + #{q not relevant}) / sum_q w_q``. With weights above 1 on
      average this is lower than the weighted mean, and the gap grows with the share of such
      queries (a third of MQ2008's queries).
    """

    def __init__(self, name: str, display_name: str | None = None, weighting: str = "query") -> None:
        self.fn: Callable[..., Any] = _metrics.by_name(name)
        self.name = name
        self.display_name = display_name or name
        self.higher_is_better = _metrics.higher_is_better(name)
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}")
        if weighting == "framework" and _metrics.parse_name(name)[0] != "ndcg":
            raise ValueError(f"weighting='framework' reproduces the frameworks' weighted ndcg@k; {name!r} is not an "
                             "NDCG (LightGBM's weighted map@k already weights every query, as weighting='query' does)")
        self.weighting = weighting

    def __getstate__(self) -> dict[str, Any]:
        # By name: the metric function itself may be a closure or a compiled kernel.
        return {"name": self.name, "display_name": self.display_name, "weighting": self.weighting}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["display_name"], state.get("weighting", "query"))

    def __call__(self, preds: NDArray, labels: NDArray, group_ptr: NDArray[np.int64],
                 query_weights: NDArray[np.float64] | None = None) -> float:
        scores = np.asarray(preds, dtype=np.float64).reshape(-1)
        if query_weights is None:
            return float(self.fn(scores, labels, group_ptr))
        per_q = np.asarray(self.fn(scores, labels, group_ptr, per_query=True), dtype=np.float64)
        kept = ~np.isnan(per_q)
        total = float(query_weights[kept].sum())
        if self.weighting == "framework" and per_q.size:
            y = np.asarray(labels, dtype=np.float64).reshape(-1)
            sizes = np.diff(group_ptr)
            best = np.full(per_q.size, -np.inf)
            best[sizes > 0] = np.maximum.reduceat(y, group_ptr[:-1][sizes > 0])
            irrelevant = kept & (best <= 0)
            top = float(np.dot(query_weights[kept & ~irrelevant], per_q[kept & ~irrelevant]) + irrelevant.sum())
            return top / total if total > 0 else float("nan")
        return float(np.dot(query_weights[kept], per_q[kept]) / total) if total > 0 else float("nan")


class MetricCallable:
    """What the frameworks' metric callables share: a :class:`MetricSpec` by name, the
    ``__name__`` frameworks print, and pickling by name (a module-level class, not a closure,
    so joblib, multiprocessing and Dask can ship it). Subclasses add ``__call__``."""

    def __init__(self, name: str, display_name: str | None = None, weighting: str = "query") -> None:
        self.spec = MetricSpec(name, display_name, weighting)
        self.__name__ = f"boostplug_{name}"

    def __getstate__(self) -> dict[str, Any]:
        return self.spec.__getstate__()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["display_name"], state.get("weighting", "query"))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.spec.name!r}, display_name={self.spec.display_name!r}, "
                f"weighting={self.spec.weighting!r})")
