"""XGBoost's calling conventions for boostplug objectives and metrics: the callables
``xgb.train``/``xgb.cv`` take, a direction-aware early stopping, and a ``DMatrix`` builder
with query groups.

User documentation: :mod:`boostplug.xgboost`.
"""

from __future__ import annotations

import json
import sys
import weakref
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._core.threads import thread_count
from ...groups import qid_from_group_ptr
from ...keyed_pairs import row_keys
from .._adapter import (
    FROM_FRAMEWORK, BoundObjective, MetricCallable, builder_group_ptr, builder_init_score, builder_weights,
    check_set_weights, group_ptr_or_error, metric_query_weights,
)
from ..model_record import note_trainer

__all__ = ["XGBoostObjective", "XGBoostMetric", "objective", "metric", "early_stopping", "dmatrix", "params"]

_HOW = "xgb.DMatrix(X, y, qid=sorted_qid) or group=..., or boostplug.xgboost.dmatrix(X, y, qid=qid)"


def _group_ptr_of(raw_ptr: Any, n_docs: int) -> NDArray[np.int64]:
    """``group_ptr`` from a DMatrix's ``group_ptr`` info, with an error that says how to add it."""
    return group_ptr_or_error(raw_ptr, n_docs, "XGBoost", _HOW)


def _group_ptr(dmat: Any) -> NDArray[np.int64]:
    return _group_ptr_of(dmat.get_uint_info("group_ptr"), int(dmat.num_row()))


#: Each row's (qid, doc) keys of the DMatrices :func:`dmatrix` built with ``doc=`` and of the
#: folds :func:`boostplug.xgboost.cv` cut from them (``DMatrix.slice`` drops them).
_ROW_KEYS: "weakref.WeakKeyDictionary[Any, tuple[np.ndarray, np.ndarray]]" = weakref.WeakKeyDictionary()

_HOW_KEYS = ("build the DMatrix with boostplug.xgboost.dmatrix(X, y, qid=qid, doc=doc) (one document key per row); "
             "xgb.cv's folds (DMatrix.slice) lose the keys: cross-validate with boostplug.xgboost.cv, whose folds "
             "keep them")


def dmatrix_row_keys(dmat: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``(qid, doc)`` keys of a DMatrix's rows, ``None`` when it carries none."""
    try:
        return _ROW_KEYS.get(dmat)
    except TypeError:
        return None


def keep_row_keys(dmat: Any, keys: tuple[np.ndarray, np.ndarray]) -> None:
    """Record the ``(qid, doc)`` keys of a DMatrix's rows."""
    _ROW_KEYS[dmat] = keys


_BOOSTER_THREADS: "weakref.WeakKeyDictionary[Any, int | None]" = weakref.WeakKeyDictionary()


def xgb_threads(booster: Any) -> int | None:
    """The ``nthread`` of the Booster that calls the objective (``Booster.update``/``boost`` call
    ``obj`` with the Booster as ``self``), read once per Booster; ``None`` for XGBoost's default
    (every core) or when no Booster is found."""
    if not (hasattr(booster, "save_config") and hasattr(booster, "set_param")):
        return None
    try:
        return _BOOSTER_THREADS[booster]
    except (KeyError, TypeError):
        pass
    try:
        n = thread_count(json.loads(booster.save_config())["learner"]["generic_param"]["nthread"])
    except (KeyError, TypeError, ValueError):
        n = None
    try:
        _BOOSTER_THREADS[booster] = n
    except TypeError:
        pass
    return n


def params_threads(params: dict[str, Any]) -> int | None:
    """The ``nthread`` XGBoost's ``params`` set (or its alias ``n_jobs``), ``None`` for its default."""
    return thread_count(params.get("nthread", params.get("n_jobs")))


_HOW_THREADS = "pass threads= to boostplug.xgboost.objective (e.g. the nthread of xgb.train's params)"


def _booster_in(scope: dict[str, Any]) -> Any:
    """The Booster whose ``update``/``boost`` calls the objective (as ``self``)."""
    b = scope.get("self")
    return b if hasattr(b, "save_config") and hasattr(b, "set_param") else None


class XGBoostObjective(BoundObjective):
    """Callable for ``xgb.train(obj=...)`` / ``xgb.cv(obj=...)``: ``(predt, dtrain) -> (grad, hess)``."""

    def __call__(self, predt: NDArray, dtrain: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if not hasattr(dtrain, "get_label"):  # called as scikit-learn's (y_true, y_pred): xgb.XGBRegressor, ...
            raise TypeError(
                f"boostplug.xgboost.objective({self.name!r}) is for xgb.train/xgb.cv (obj=), which hand it a DMatrix, "
                f"and got {type(dtrain).__name__}: scikit-learn's (y_true, y_pred). XGBoost's scikit-learn models "
                f"have no query groups for it (XGBRanker refuses any callable objective): use "
                f"boostplug.xgboost.XGBRanker(objective={self.name!r}, ...)"
            )
        note_trainer(sys._getframe(1), self)  # for save_model without objective=
        return self.round_grad_hess(predt, dtrain, dtrain.get_label(), dtrain.get_uint_info("group_ptr"),
                                    dtrain.get_weight(), framework="XGBoost", to_group_ptr=_group_ptr_of,
                                    threads=self.framework_threads(sys._getframe(1), _booster_in, xgb_threads,
                                                                   "XGBoost", _HOW_THREADS),
                                    keys=lambda: dmatrix_row_keys(dtrain), no_keys=_HOW_KEYS)


def objective(name: Any, *, threads: Any = FROM_FRAMEWORK, **params: Any) -> XGBoostObjective:
    """A boostplug objective for ``xgb.train(obj=...)`` and ``xgb.cv(obj=...)``.

    Not for XGBoost's scikit-learn models: ``xgb.XGBRanker(objective=...)`` refuses any callable
    in its constructor ("custom objective function not supported by XGBRanker"), before this
    object is ever called, so it cannot say more; use ``boostplug.xgboost.XGBRanker(objective=name,
    **params)``, which takes the objective by name. Called as scikit-learn calls a custom
    objective (``y_true, y_pred``, e.g. by ``xgb.XGBRegressor``), it raises a ``TypeError`` saying so.

    Args:
        name: one of :func:`boostplug.objectives.names`, or a :class:`~boostplug.objectives.Loss`
            subclass or instance (an instance's settings are its parameters, ``params`` over
            them), registered or not: registration gives it a name for the command line and for
            saved models, which record the name.
        threads: the numba threads of its kernels each round. By default XGBoost's ``nthread``,
            read from the Booster that calls the objective (up to a few wrappers up the stack; when
            none is found, numba's own setting, with a ``RuntimeWarning``); ``None``: numba's own
            setting.
        **params: the objective's parameters; unknown names raise ``ValueError``.
    """
    return XGBoostObjective(name, params, threads)


#: How many frames up from the metric call to look for XGBoost's callback container
#: (xgb.train: 3, xgb.cv: 5 in XGBoost 3.2).
_CONTAINER_SEARCH_DEPTH = 12


class XGBoostMetric(MetricCallable):
    """``custom_metric`` for ``xgb.train``/``xgb.cv``: ``(predt, dmat) -> (name, value)``.

    Each call also gives an early-stopping callback of that training run that was left on
    automatic direction (``maximize=None``) and watches this metric the metric's own direction;
    see :func:`metric`.
    """

    def __call__(self, predt: NDArray, dmat: Any) -> tuple[str, float]:
        self._direct_early_stopping()
        labels, weights, raw_ptr = dmat.get_label(), dmat.get_weight(), dmat.get_uint_info("group_ptr")

        def derive() -> tuple[Any, ...]:
            gp = _group_ptr_of(raw_ptr, int(dmat.num_row()))
            check_set_weights(weights, gp, "XGBoost", f"boostplug.xgboost.metric({self.spec.name!r})")
            return self.spec.prepare(labels, gp, metric_query_weights(weights, gp, "XGBoost"))

        prepared = self.prepared(dmat, (labels, raw_ptr, weights), derive)
        return self.spec.display_name, self.spec.value(predt, prepared)

    def _direct_early_stopping(self) -> None:
        """Set ``maximize`` of the automatic-direction ``EarlyStopping`` callbacks that watch this metric.

        XGBoost decides an automatic direction by the metric's name (it maximises names starting
        with auc/pre/map/ndcg and minimises every other, so ``mrr`` or ``err@10`` would be
        minimised) when the callback first sees a score, which is after this call in the same
        round. The callbacks are found on XGBoost's ``CallbackContainer`` whose ``metric`` is this
        very object, up the call stack; a ``maximize`` the user chose is left alone.
        """
        from xgboost.callback import CallbackContainer, EarlyStopping

        frame = sys._getframe(2)
        for _ in range(_CONTAINER_SEARCH_DEPTH):
            if frame is None:
                return
            if frame.f_code.co_name == "after_iteration":
                container = frame.f_locals.get("self")
                if isinstance(container, CallbackContainer):
                    if getattr(container, "metric", None) is not self:
                        return
                    for cb in container.callbacks:
                        if (isinstance(cb, EarlyStopping) and cb.maximize is None
                                and cb.metric_name in (None, self.spec.display_name)):
                            cb.maximize = self.spec.higher_is_better
                    return
            frame = frame.f_back


def metric(name: str, *, display_name: str | None = None, weighting: str = "query") -> XGBoostMetric:
    """A ``custom_metric`` for ``xgb.train``/``xgb.cv``: boostplug's metric ``name`` (``"ndcg@10"``, ``"map@10"``...).

    The reported name defaults to ``name``. With group weights it is the weighted mean over
    queries; ``weighting="framework"`` gives XGBoost's own weighted ``ndcg@k`` instead, which
    counts a query without a relevant document as 1, not its weight (see
    :class:`boostplug.frameworks._adapter.MetricSpec`).

    Early stopping: XGBoost's ``early_stopping_rounds`` (with ``maximize`` left at ``None``)
    picks the direction from the metric's name and would *minimise* ``mrr``, ``err@10``,
    ``dcg@10`` or ``precision@5``. This metric sets the direction itself: plain
    ``xgb.train(..., custom_metric=metric("mrr"), early_stopping_rounds=k)`` (and ``xgb.cv``)
    maximises every boostplug score and minimises the losses ``r1``/``r2``. An explicit
    ``maximize=True/False`` (``xgb.train(maximize=...)`` or an ``EarlyStopping`` of your own)
    wins. The direction is set only when this object itself is the ``custom_metric`` of the
    run; when you wrap it in a function of your own, pass ``maximize=`` or use
    :func:`early_stopping`. The callable pickles.
    """
    return XGBoostMetric(name, display_name, weighting)


def early_stopping(rounds: int, metric_name: str, *, maximize: bool | None = None, save_best: bool = False,
                   **kwargs: Any):
    """``xgb.callback.EarlyStopping`` on the metric reported as ``metric_name``, in the right direction.

    ``maximize=None`` takes the direction from boostplug's metric of that name (maximise every
    metric except the losses ``r1``/``r2``); pass it explicitly when ``metric_name`` is a
    ``display_name`` of your own. ``kwargs`` go to ``EarlyStopping`` (``data_name``, ``min_delta``).
    """
    import xgboost as xgb

    from ... import metrics as _metrics

    if maximize is None:
        try:
            maximize = _metrics.higher_is_better(metric_name)
        except ValueError as exc:
            raise ValueError(
                f"early_stopping: {metric_name!r} is not a boostplug metric name; pass maximize=True/False"
            ) from exc
    return xgb.callback.EarlyStopping(rounds=rounds, metric_name=metric_name, maximize=maximize,
                                      save_best=save_best, **kwargs)


def dmatrix(
    X: Any,
    y: ArrayLike,
    *,
    qid: ArrayLike | None = None,
    group_ptr: ArrayLike | None = None,
    weight: ArrayLike | None = None,
    base_margin: ArrayLike | None = None,
    doc: ArrayLike | None = None,
    **kwargs: Any,
):
    """``xgb.DMatrix`` with query groups from a contiguous (possibly unsorted) ``qid`` or ``group_ptr``.

    ``doc``: one document key per row; the DMatrix then carries each row's ``(qid, doc)`` keys (with
    ``group_ptr``, the query's index stands for its id), onto which an objective given keyed pairs
    (:class:`~boostplug.keyed_pairs.KeyedPairs`) maps them; :func:`boostplug.xgboost.cv`'s folds
    carry them too (``xgb.cv``'s do not).

    Queries are renumbered 0, 1, 2, ... in their order of appearance, which is what
    XGBoost's sorted-``qid`` requirement needs. ``weight``: one per query, or one per row
    constant within each query; finite and non-negative, as ``base_margin`` must be finite (a bad
    value is a ``ValueError`` naming its query or entry).
    """
    import xgboost as xgb

    gp = builder_group_ptr(y, qid, group_ptr, kwargs, "boostplug.xgboost.dmatrix() (XGBoost's qid=)")
    weight = builder_weights(weight, gp, "XGBoost", per_query=True)
    base_margin = builder_init_score(base_margin, "base_margin")
    dmat = xgb.DMatrix(X, label=y, qid=qid_from_group_ptr(gp), weight=weight, base_margin=base_margin, **kwargs)
    if doc is not None:
        keep_row_keys(dmat, row_keys(qid_from_group_ptr(gp) if qid is None else qid, doc, len(y)))
    return dmat


def params(**overrides: Any) -> dict[str, Any]:
    """Booster parameters suited to a custom ranking objective: ``base_score=0`` (see the
    module notes), ``disable_default_eval_metric`` (the built-in metric of a custom
    objective is meaningless), ``tree_method="hist"``; ``overrides`` win."""
    p: dict[str, Any] = {"base_score": 0.0, "disable_default_eval_metric": 1, "tree_method": "hist"}
    p.update(overrides)
    return p
