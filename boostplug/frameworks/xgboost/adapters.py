"""XGBoost's calling conventions for boostplug objectives and metrics: the callables
``xgb.train``/``xgb.cv`` take, a direction-aware early stopping, and a ``DMatrix`` builder
with query groups.

User documentation: :mod:`boostplug.xgboost`.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._core.threads import thread_count
from ...groups import qid_from_group_ptr
from ...keyed_pairs import row_keys
from .._bound_objective import FROM_FRAMEWORK, BoundObjective
from .._builders import builder_group_ptr, builder_init_score, builder_weights
from .._metric_spec import MetricCallable, MetricSpec
from .._query_info import group_ptr_or_error

__all__ = ["XGBoostObjective", "XGBoostMetric", "objective", "metric", "early_stopping", "directed_callbacks",
           "xgboost_maximises", "dmatrix", "params"]

_HOW = "xgb.DMatrix(X, y, qid=sorted_qid) or group=..., or boostplug.xgboost.dmatrix(X, y, qid=qid)"


def _group_ptr_of(raw_ptr: Any, n_docs: int) -> NDArray[np.int64]:
    """``group_ptr`` from a DMatrix's ``group_ptr`` info, with an error that says how to add it."""
    return group_ptr_or_error(raw_ptr, n_docs, "XGBoost", _HOW)


def _group_ptr(dmat: Any) -> NDArray[np.int64]:
    if not hasattr(dmat, "get_uint_info"):
        raise TypeError(f"expected an xgboost.DMatrix with query groups (bpx.dmatrix(X, y, qid=qid)), got "
                        f"{type(dmat).__name__}; for group sizes: boostplug.data.splits.row_folds_by_query")
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


def params_threads(params: dict[str, Any]) -> int | None:
    """The ``nthread`` XGBoost's ``params`` set (or its alias ``n_jobs``), ``None`` for its default."""
    return thread_count(params.get("nthread", params.get("n_jobs")))


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
        return self.round_grad_hess(predt, dtrain, dtrain.get_label(), dtrain.get_uint_info("group_ptr"),
                                    dtrain.get_weight(), framework="XGBoost", to_group_ptr=_group_ptr_of,
                                    threads=self.round_threads(),
                                    keys=lambda: dmatrix_row_keys(dtrain), no_keys=_HOW_KEYS)


def objective(name: Any, *, threads: Any = FROM_FRAMEWORK, **params: Any) -> XGBoostObjective:
    """A boostplug objective for ``xgb.train(obj=...)`` and ``xgb.cv(obj=...)``.

    Not for XGBoost's scikit-learn models: ``xgb.XGBRanker(objective=...)`` refuses any callable
    in its constructor ("custom objective function not supported by XGBRanker"), before this
    object is ever called, so it cannot say more; use ``boostplug.xgboost.XGBRanker(objective=name,
    **params)``, which takes the objective by name. Called as scikit-learn calls a custom
    objective (``y_true, y_pred``, e.g. by ``xgb.XGBRegressor``), it raises a ``TypeError`` saying so.

    Args:
        name: as in :func:`boostplug.lightgbm.objective`.
        threads: the numba threads of its kernels each round. XGBoost calls the objective with
            the predictions and the DMatrix only, so it cannot see the ``nthread`` of
            ``xgb.train``'s parameters: by default the kernels run on numba's own count (every
            core unless ``NUMBA_NUM_THREADS`` or ``numba.set_num_threads`` say otherwise, as
            XGBoost's own default); pass ``threads=`` (e.g. the ``nthread`` you give XGBoost)
            to set it. :func:`boostplug.xgboost.cv` and :class:`boostplug.xgboost.XGBRanker`
            pass the ``nthread`` of their parameters themselves; ``None``: numba's own setting.
        **params: the objective's parameters; unknown names raise ``ValueError``.

    XGBoost hands a custom objective none of ``xgb.train``'s parameters either: a copy of its
    built-ins (``rank_ndcg``...) reads those of its built-in (``lambdarank_num_pair_per_sample``...)
    from the ones you give it, ``objective("rank_ndcg").given_training(params)``;
    :func:`boostplug.xgboost.cv` and :class:`boostplug.xgboost.XGBRanker` give them themselves.
    """
    return XGBoostObjective(name, params, threads)


#: XGBoost's rule for an early stopping left on automatic direction (``maximize=None``; XGBoost
#: 3.2's ``EarlyStopping``): it maximises a metric whose name starts with one of these (``mape``
#: aside) and minimises every other one.
_XGB_MAXIMISED = ("auc", "aucpr", "pre", "pre@", "map", "ndcg", "auc@", "aucpr@", "map@", "ndcg@")


def xgboost_maximises(name: str) -> bool:
    """Whether XGBoost's early stopping, left on automatic direction, maximises the metric ``name``."""
    return name != "mape" and name.startswith(_XGB_MAXIMISED)


class XGBoostMetric(MetricCallable):
    """``custom_metric`` for ``xgb.train``/``xgb.cv``: ``(predt, dmat) -> (name, value)``.

    XGBoost's early stopping left on automatic direction picks the direction from the metric's
    name (:func:`xgboost_maximises`) and the metric cannot see that callback; so when the name
    rule goes against the metric's own direction, the first call warns, naming the fix (see
    :func:`metric`). ``direction_given``: the code that trains sets the direction itself
    (:func:`boostplug.xgboost.cv`, ``XGBRanker``): no warning.
    """

    def __init__(self, name: str, display_name: str | None = None, weighting: str = "query", *,
                 direction_given: bool = False) -> None:
        super().__init__(name, display_name, weighting)
        self._warn = not direction_given and xgboost_maximises(self.spec.display_name) != self.spec.higher_is_better

    def directed(self) -> "XGBoostMetric":
        """A copy of this metric for a training that sets the early-stopping direction itself."""
        return type(self)(self.spec.name, self.spec.display_name, self.spec.weighting, direction_given=True)

    def __call__(self, predt: NDArray, dmat: Any) -> tuple[str, float]:
        if self._warn:
            self._warn = False
            self._warn_direction()
        value = self.set_value(predt, dmat, dmat.get_label(), dmat.get_uint_info("group_ptr"), dmat.get_weight(),
                               framework="XGBoost", who=f"boostplug.xgboost.metric({self.spec.name!r})",
                               to_group_ptr=lambda raw_ptr, _: _group_ptr_of(raw_ptr, int(dmat.num_row())))
        return self.spec.display_name, value

    def _warn_direction(self) -> None:
        shown, better = self.spec.display_name, self.spec.higher_is_better
        warnings.warn(
            f"boostplug.xgboost.metric({self.spec.name!r}): {'higher' if better else 'lower'} is better, but XGBoost's "
            f"early stopping left on automatic direction (early_stopping_rounds with maximize=None, or an "
            f"EarlyStopping without maximize=) would {'minimise' if better else 'maximise'} {shown!r}: it maximises "
            "only names starting with auc, pre, map or ndcg. If you stop early on it, pass "
            f"maximize={better} to xgb.train/xgb.cv, or callbacks=[boostplug.xgboost.early_stopping(rounds, "
            f"{shown!r})]; boostplug.xgboost.cv and XGBRanker set the direction themselves",
            UserWarning, stacklevel=3)


def directed_callbacks(callbacks: Sequence[Any] | None, watched: MetricSpec) -> list[Any]:
    """``callbacks`` with a copy, in ``watched``'s direction, of each ``EarlyStopping`` left on
    automatic direction that watches it (by its reported name, or the last metric: XGBoost's
    default); the caller's callbacks are not changed."""
    from xgboost.callback import EarlyStopping

    out = []
    for cb in callbacks or []:
        if (isinstance(cb, EarlyStopping) and cb.maximize is None
                and cb.metric_name in (None, watched.display_name)):
            cb = copy.copy(cb)
            cb.maximize = watched.higher_is_better
        out.append(cb)
    return out


def metric(name: str, *, display_name: str | None = None, weighting: str = "query") -> XGBoostMetric:
    """A ``custom_metric`` for ``xgb.train``/``xgb.cv``: boostplug's metric ``name`` (``"ndcg@10"``, ``"map@10"``...).

    The reported name defaults to ``name``. With group weights it is the weighted mean over
    queries; ``weighting="framework"`` gives XGBoost's own weighted ``ndcg@k`` instead, which
    counts a query without a relevant document as 1, not its weight (see
    :class:`boostplug.frameworks._metric_spec.MetricSpec`).

    Early stopping left on automatic direction (``maximize=None``) picks the direction from the
    metric's name and would *minimise* ``mrr``, ``err@10``, ``dcg@10`` or ``rbp``: for such a name
    the metric's first call warns (once), naming the fixes (``maximize=``, :func:`early_stopping`);
    docs/objectives/index.md, "XGBoost early stopping on a boostplug metric". The callable pickles.
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
    return {"base_score": 0.0, "disable_default_eval_metric": 1, "tree_method": "hist", **overrides}
