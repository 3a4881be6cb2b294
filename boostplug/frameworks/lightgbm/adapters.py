"""LightGBM's calling conventions for boostplug objectives and metrics: the callables
``lgb.train``/``lgb.cv`` and ``LGBMRanker`` take, and a ``Dataset`` builder with query groups.

User documentation: :mod:`boostplug.lightgbm`.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._core.threads import thread_count
from ...groups import cut_queries, group_ptr_from_sizes, qid_from_group_ptr, sizes_from_group_ptr
from ...keyed_pairs import row_keys
from .._bound_objective import FROM_FRAMEWORK, BoundObjective
from .._builders import builder_group_ptr, builder_init_score, builder_positions, builder_weights
from .._metric_spec import MetricCallable
from .._query_info import LIGHTGBM_INF, group_ptr_or_error
from .frames import lightgbm_frame

__all__ = ["initial_scores", "LightGBMObjective", "LightGBMSklearnObjective", "LightGBMMetric", "LightGBMSklearnMetric",
           "objective", "sklearn_objective", "metric", "sklearn_metric", "dataset", "group_ptr_from_lgb_sizes"]

_FOLDS_FIX = (
    "pass folds that keep queries whole: lgb.cv(..., folds=boostplug.lightgbm.query_folds(train_set, nfold=5)), "
    "or boostplug.lightgbm.cv(params, train_set, ...)"
)

#: Each row's (qid, doc) keys of the Datasets :func:`dataset` built with ``doc=``; a subset (an
#: ``lgb.cv`` fold, ``Dataset.subset``) has its parent's keys at its ``used_indices``.
_ROW_KEYS: "weakref.WeakKeyDictionary[Any, tuple[np.ndarray, np.ndarray]]" = weakref.WeakKeyDictionary()

_HOW_KEYS = ("build the Dataset with boostplug.lightgbm.dataset(X, y, qid=qid, doc=doc) (one document key per row); "
             "its lgb.cv folds and subsets carry the keys too")


def dataset_row_keys(data: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``(qid, doc)`` keys of a Dataset's rows: recorded by :func:`dataset`, or its parent's at
    ``used_indices`` for a subset; ``None`` when it has none."""
    keys = _ROW_KEYS.get(data)
    if keys is not None:
        return keys
    used, parent = getattr(data, "used_indices", None), getattr(data, "reference", None)
    parent_keys = None if used is None or parent is None else dataset_row_keys(parent)
    if parent_keys is None:
        return None
    idx = np.asarray(used, dtype=np.int64)
    return parent_keys[0][idx], parent_keys[1][idx]


def _check_whole_queries(data: Any, who: str) -> None:
    """A subset Dataset (an ``lgb.cv`` fold) must hold each query of its parent whole or not at all."""
    used, parent = getattr(data, "used_indices", None), getattr(data, "reference", None)
    sizes = None if used is None or parent is None else parent.get_group()
    if sizes is None or len(sizes) == 0:
        return
    sizes = np.asarray(sizes, dtype=np.int64)
    cut, held = cut_queries(group_ptr_from_sizes(sizes), used)
    if cut.size:
        q = int(cut[0])
        raise ValueError(
            f"{who}: this Dataset is a subset of another (an lgb.cv fold) holding {int(held[0])} of the "
            f"{int(sizes[q])} rows of its query {q} ({cut.size} queries cut in all), so documents of one query "
            "sit in both training and validation and the validation score is inflated. lgb.cv splits rows at "
            "random unless the objective is one of its built-in ranking names; " + _FOLDS_FIX
        )


def _check_lgb_labels(labels: Any, who: str) -> None:
    """Refuse LightGBM's stand-in for an infinite label (a NaN label is already 0, undetectable)."""
    y = np.asarray(labels)
    bad = np.flatnonzero(~(np.abs(y) < LIGHTGBM_INF))  # a NaN label is stored as 0
    if bad.size:
        row = int(bad[0])
        raise ValueError(
            f"{who}: row {row} has label {float(y[row]):g}, which is how LightGBM stores an infinite label "
            "(it stores a NaN label as 0, which cannot be detected here); fix the labels: "
            "boostplug.lightgbm.dataset(X, y, ...) refuses NaN and infinite labels with their row"
        )


def _check_set(data: Any, labels: Any, who: str) -> None:
    _check_whole_queries(data, who)
    _check_lgb_labels(labels, who)


def group_ptr_from_lgb_sizes(sizes: Any, n_docs: int | None) -> NDArray[np.int64]:
    """``group_ptr`` from LightGBM's group sizes, with an error that says how to add them."""
    return group_ptr_or_error(sizes, n_docs, "LightGBM", "lgb.Dataset(X, y, group=sizes), or "
                              "boostplug.lightgbm.dataset(X, y, qid=qid)", sizes=True, what="the Dataset")


#: LightGBM's names for ``num_threads``, ``n_jobs`` last: in LightGBM's scikit-learn wrapper an alias
#: in the kwargs wins over ``n_jobs``.
_THREAD_ALIASES = ("num_threads", "num_thread", "nthread", "nthreads", "n_jobs")


def aliases(name: str) -> list[str]:
    """LightGBM's names for its parameter ``name``, in the order LightGBM reads them (its own table)."""
    from lightgbm.basic import _ConfigAliases

    return _ConfigAliases.get_sorted(name)


def dataset_position(objective: Any, given: dict[str, Any], data: Any) -> dict[str, Any]:
    """The Dataset's ``position`` for an objective that takes LightGBM's positions (a ``position``
    parameter: the ``lambdarank`` copy), unless given to the objective."""
    if "position" not in objective.defaults or "position" in given:
        return {}
    position = data.get_position()
    return {} if position is None else {"position": position}


def params_threads(params: dict[str, Any]) -> int | None:
    """The ``num_threads`` LightGBM's ``params`` set (any of its aliases), ``None`` for its default."""
    return next((thread_count(params[k]) for k in _THREAD_ALIASES if k in params), None)


class LightGBMObjective(BoundObjective):
    """Callable for ``params["objective"]`` of ``lgb.train`` / ``lgb.cv``: ``(preds, train_data) -> (grad, hess)``."""

    def __call__(self, preds: NDArray, train_data: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if not hasattr(train_data, "get_label"):  # called as scikit-learn's (y_true, y_pred): lgb.LGBMRanker
            raise TypeError(
                f"boostplug.lightgbm.objective({self.name!r}) is for lgb.train/lgb.cv, which hand it an lgb.Dataset, "
                f"and got {type(train_data).__name__}: scikit-learn's (y_true, y_pred), as lgb.LGBMRanker calls it. "
                f"Use boostplug.lightgbm.LGBMRanker(objective={self.name!r}, ...), or "
                f"lgb.LGBMRanker(objective=boostplug.lightgbm.sklearn_objective({self.name!r}, ...))"
            )
        if self.rows_given and getattr(train_data, "used_indices", None) is not None:
            key = next(iter(self.rows_given))
            raise ValueError(
                f"{self.name}: explicit {key} are row indices of the full training set, but LightGBM "
                f"handed a subset of it (lgb.cv folds): build the folds yourself, each with its own {key}"
            )
        labels = train_data.get_label()
        # lgb.train hands the Dataset, whose params carry the training's num_threads
        threads = params_threads(getattr(train_data, "params", None) or {})
        return self.round_grad_hess(preds, train_data, labels, train_data.get_group(), train_data.get_weight(),
                                    framework="LightGBM", to_group_ptr=group_ptr_from_lgb_sizes,
                                    threads=self.round_threads(threads),
                                    check_new=lambda: _check_set(train_data, labels, self.name),
                                    keys=lambda: dataset_row_keys(train_data), no_keys=_HOW_KEYS,
                                    from_set=lambda: dataset_position(self.objective, self.params, train_data),
                                    training=lambda: train_data.params)


class LightGBMSklearnObjective(BoundObjective):
    """Callable for ``LGBMRanker(objective=...)``: ``(y_true, y_pred, weight, group) -> (grad, hess)``."""

    def __call__(self, y_true: NDArray, y_pred: NDArray, weight: NDArray | None, group: NDArray | None):
        # A refit on new data legitimately brings new labels: re-bind instead of raising.
        return self.round_grad_hess(y_pred, None, y_true, group, weight, framework="LightGBM",
                                    to_group_ptr=group_ptr_from_lgb_sizes, threads=self.round_threads(), strict=False,
                                    check_new=lambda: _check_lgb_labels(y_true, self.name),
                                    no_keys="use boostplug.lightgbm.LGBMRanker(objective=name, ...).fit(X, y, qid=qid, "
                                            "doc=doc), which maps it onto each fit's rows")


def objective(name: Any, *, threads: Any = FROM_FRAMEWORK, **params: Any) -> LightGBMObjective:
    """A boostplug objective for ``lgb.train(params={"objective": ...})`` and ``lgb.cv``.

    Not for ``lgb.LGBMRanker(objective=...)``, which calls it with arrays instead of a Dataset (a
    ``TypeError`` saying so): use ``boostplug.lightgbm.LGBMRanker(objective=name, **params)``, or
    :func:`sklearn_objective` for LightGBM's own ranker.

    Args:
        name: one of :func:`boostplug.objectives.names`, or a :class:`~boostplug.objectives.Loss`
            subclass or instance (an instance's settings are its parameters, ``params`` over
            them), registered or not: registration gives it a name for the command line and for
            saved models, which record the name.
        threads: the numba threads of its kernels each round; by default LightGBM's
            ``num_threads`` (or an alias), read from the parameters of the Dataset ``lgb.train``
            hands the objective (unset or 0: numba's own count); ``None``: numba's own setting.
        **params: the objective's parameters (see its module); unknown names raise ``ValueError``.

    A copy of LightGBM's built-ins (``lambdarank``, ``xendcg``) reads the parameters its built-in
    reads (``lambdarank_truncation_level``, ``sigmoid``...) from the training's, which the Dataset
    ``lgb.train`` hands it carries, unless given here (given both ways, they must agree).
    """
    return LightGBMObjective(name, params, threads)


def sklearn_objective(name: Any, *, threads: Any = FROM_FRAMEWORK, **params: Any) -> LightGBMSklearnObjective:
    """A boostplug objective in the 4-argument form ``LGBMRanker(objective=...)`` accepts
    (``name``: as in :func:`objective`).

    ``threads``: the numba threads of its kernels each round. LightGBM's ranker calls the
    objective with arrays only, so it cannot see the ranker's ``n_jobs``/``num_threads``: by
    default the kernels run on numba's own count (every core unless ``NUMBA_NUM_THREADS`` or
    ``numba.set_num_threads`` say otherwise, as LightGBM's own default); pass ``threads=`` (e.g.
    the ranker's ``n_jobs``) to set it. :class:`boostplug.lightgbm.LGBMRanker` passes its
    ``n_jobs`` itself, and :func:`objective` for ``lgb.train`` reads the parameters of the
    Dataset LightGBM hands it. Nor does it see the parameters a copy of a built-in reads from the
    training's (``lambdarank_truncation_level``...): give them,
    ``sklearn_objective("lambdarank").given_training(ranker_params)``; boostplug's ranker does."""
    return LightGBMSklearnObjective(name, params, threads)


class LightGBMMetric(MetricCallable):
    """``feval`` for ``lgb.train``/``lgb.cv``: ``(preds, eval_data) -> (name, value, is_higher_better)``."""

    def __call__(self, preds: NDArray, eval_data: Any) -> tuple[str, float, bool]:
        name = self.spec.name
        if not hasattr(eval_data, "get_label"):
            raise TypeError(
                f"boostplug.lightgbm.metric({name!r}) is a feval for lgb.train/lgb.cv and got "
                f"{type(eval_data).__name__} instead of an lgb.Dataset; for LGBMRanker.fit(eval_metric=...) "
                f"use boostplug.lightgbm.sklearn_metric({name!r})"
            )
        labels, who = eval_data.get_label(), f"boostplug.lightgbm.metric({name!r})"
        value = self.set_value(preds, eval_data, labels, eval_data.get_group(), eval_data.get_weight(),
                               framework="LightGBM", to_group_ptr=group_ptr_from_lgb_sizes, who=who,
                               check=lambda: _check_set(eval_data, labels, who))
        return self.spec.display_name, value, self.spec.higher_is_better


class LightGBMSklearnMetric(MetricCallable):
    """``eval_metric`` for ``LGBMRanker.fit``: ``(y_true, y_pred, weight, group) -> (name, value,
    is_higher_better)``."""

    def __call__(self, y_true: NDArray, y_pred: NDArray, weight: Any, group: Any) -> tuple[str, float, bool]:
        who = f"boostplug.lightgbm.sklearn_metric({self.spec.name!r})"
        # LightGBM hands an eval set's same label array every round
        value = self.set_value(y_pred, y_true, y_true, group, weight, framework="LightGBM",
                               to_group_ptr=group_ptr_from_lgb_sizes, who=who,
                               check=lambda: _check_lgb_labels(y_true, who))
        return self.spec.display_name, value, self.spec.higher_is_better


def metric(name: str, *, display_name: str | None = None, weighting: str = "query") -> LightGBMMetric:
    """A ``feval`` for ``lgb.train``/``lgb.cv``: boostplug's metric ``name`` (e.g. ``"ndcg@10"``, ``"map@10"``)
    with boostplug's default conventions, reported as ``(display_name, value, is_higher_better)``
    (``is_higher_better`` is ``False`` only for the losses ``r1``/``r2``, so LightGBM's early
    stopping goes the right way). With row weights it is the mean over queries weighted by each
    query's mean row weight (LightGBM's query weight); ``weighting="framework"`` gives LightGBM's
    own weighted ``ndcg@k`` instead, which counts a query without a relevant document as 1, not
    its weight (see :class:`boostplug.frameworks._metric_spec.MetricSpec`). For
    ``LGBMRanker.fit(eval_metric=...)`` use :func:`sklearn_metric`.

    An ``lgb.cv`` fold that cuts a query of the full Dataset is refused (see :func:`query_folds`),
    as is LightGBM's stand-in for an infinite label. The callable pickles.

    Don't also ask LightGBM for its built-in metric of the same name, or pass ``display_name``.
    """
    return LightGBMMetric(name, display_name, weighting)


def sklearn_metric(name: str, *, display_name: str | None = None, weighting: str = "query") -> LightGBMSklearnMetric:
    """An ``eval_metric`` for ``LGBMRanker.fit``: ``(y_true, y_pred, weight, group) -> (name, value,
    is_higher_better)``; ``weighting`` as in :func:`metric`."""
    return LightGBMSklearnMetric(name, display_name, weighting)


def dataset(
    X: Any,
    y: ArrayLike,
    *,
    qid: ArrayLike | None = None,
    group_ptr: ArrayLike | None = None,
    weight: ArrayLike | None = None,
    init_score: ArrayLike | None = None,
    reference: Any = None,
    doc: ArrayLike | None = None,
    **kwargs: Any,
):
    """``lgb.Dataset`` with query groups from ``qid`` (contiguous, any order) or ``group_ptr``.

    ``doc``: one document key per row. The Dataset then carries each row's ``(qid, doc)`` keys
    (with ``group_ptr``, the query's index stands for its id), and so do the folds ``lgb.cv``
    and :func:`cv` cut from it: an objective given keyed pairs
    (:class:`~boostplug.keyed_pairs.KeyedPairs`) maps them onto the rows of each set it trains on.

    ``weight`` may be one per row or one per query (expanded to rows). Labels, weights and
    ``init_score`` must be finite, weights non-negative: LightGBM would store a NaN label as 0 and
    an infinite one as 1e38, drop a NaN-weighted query silently and let an infinite weight (1e38)
    dominate, so they are refused here, naming the row or query. ``group_ptr`` must hold whole
    numbers from 0 to ``len(y)``. ``position`` (LightGBM's, passed on) must hold non-negative
    integers within int32: LightGBM casts it to int32 (``2**40 + k`` would train as ``k``, 0.5 as 0),
    so another value is a ``ValueError`` naming its row.

    A polars DataFrame or pyarrow Table with categorical columns (polars ``Categorical``/``Enum``,
    Arrow dictionaries) is converted to pandas, whose ``category`` columns LightGBM trains on as
    categorical features and records in the model; predict on such a frame with
    ``booster.predict(X.to_pandas())`` (LightGBM's own ``predict`` cannot read it). A column of
    another type LightGBM cannot read (strings, dates...) is a ``ValueError`` naming it
    (:func:`~boostplug.frameworks.lightgbm.frames.lightgbm_frame`).
    """
    import lightgbm as lgb

    gp = builder_group_ptr(y, qid, group_ptr, kwargs, "boostplug.lightgbm.dataset() (LightGBM's group=)")
    sizes = sizes_from_group_ptr(gp)
    weight = builder_weights(weight, gp, "LightGBM", per_query=False)
    init_score = builder_init_score(init_score, "init_score")
    if "position" in kwargs:
        kwargs["position"] = builder_positions(kwargs["position"])
    X = lightgbm_frame(X)
    data = lgb.Dataset(X, label=y, group=sizes, weight=weight, init_score=init_score, reference=reference, **kwargs)
    if doc is not None:
        _ROW_KEYS[data] = row_keys(qid_from_group_ptr(gp) if qid is None else qid, doc, len(y))
    return data


def initial_scores(dataset: Any) -> NDArray[np.float64]:
    """A constructed Dataset's ``init_score`` as one score per row (zeros without one)."""
    init = dataset.get_init_score()
    n = dataset.num_data()
    if init is None or len(init) == 0:
        return np.zeros(n)
    s = np.asarray(init, dtype=np.float64).reshape(-1)
    if s.shape[0] != n:
        raise ValueError(f"init_score has {s.shape[0]} values for {n} rows (one column only for ranking)")
    return s.copy()
