"""``boostplug.xgboost.XGBRanker``: XGBoost's ranker taking a boostplug objective by name.

The shared logic is in :mod:`boostplug.frameworks.sklearn_ranker`; this module maps it onto
``xgboost.XGBRanker`` (whose own ``fit`` refuses custom objectives, so ``fit`` calls
``xgb.train`` directly, with the objective and metric callables of :mod:`boostplug.frameworks.xgboost.adapters`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import xgboost as xgb
from numpy.typing import ArrayLike, NDArray

from ... import objectives as _objectives
from .._builders import builder_init_score
from ..sklearn_ranker import RankerMixin, per_set
from .adapters import XGBoostMetric, directed_callbacks, dmatrix, early_stopping, params_threads
from .adapters import objective as make_objective
from .model_file import objective_of, record_objective
from .model_check import forget_checksum, load_checked

__all__ = ["XGBRanker", "SKOPS_TRUSTED_TYPES"]

#: What a fitted :class:`XGBRanker` holds beyond what skops trusts by default: pass it as
#: ``skops.io.load(..., trusted=SKOPS_TRUSTED_TYPES)`` or to MLflow's
#: ``mlflow.xgboost.log_model(ranker, ..., skops_trusted_types=SKOPS_TRUSTED_TYPES)``.
SKOPS_TRUSTED_TYPES = ["boostplug.frameworks.xgboost.ranker.XGBRanker", "xgboost.core.Booster"]

# XGBoost's names that are also parameter names of a boostplug objective ("alpha" = reg_alpha):
# with another objective they are XGBoost's.
_XGB_SHARED_NAMES = frozenset({"alpha"})


class _Metrics:
    """``custom_metric`` for the ranker's boostplug metrics: XGBoost takes one callable, which may
    return a list of ``(name, value)`` pairs (recorded in this order; early stopping is told
    which one to watch). Pickles, as each metric does."""

    def __init__(self, names: Sequence[str]) -> None:
        self.metrics = [XGBoostMetric(name, direction_given=True) for name in names]

    def __call__(self, predt: NDArray, dmat: Any) -> list[tuple[str, float]]:
        return [m(predt, dmat) for m in self.metrics]


class XGBRanker(RankerMixin, xgb.XGBRanker):
    """``xgboost.XGBRanker`` that takes a boostplug objective by name, with its parameters.

    Example:
        >>> ranker = XGBRanker(objective=name, n_estimators=20, early_stopping_rounds=5,
        ...                    n_jobs=1, **objective_params)
        >>> ranker.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qid_v])  # doctest: +ELLIPSIS
        XGBRanker(...)
        >>> 0 <= ranker.score(Xt, yt, qid=qid_t) <= 1   # mean NDCG@10
        True

    Args:
        objective: a boostplug objective name (:func:`boostplug.objectives.names`), a
            :class:`~boostplug.objectives.Loss` subclass or instance (registered or not; an
            instance's settings are its parameters, under the estimator's) or an XGBoost ranking
            objective (``"rank:ndcg"``, ``"rank:pairwise"``...).
        eval_metric: the boostplug metric evaluated on ``eval_set`` each round and used by early
            stopping and :meth:`score` (``"ndcg@10"``, ``"map@10"``, ``"err@10"``...), or a list
            of them (``["map@10", "ndcg@10"]``): each is recorded in ``evals_result_`` and the
            last one drives early stopping and :meth:`score`, as in ``xgboost.XGBRanker``.
            XGBoost's default metric is off (``disable_default_eval_metric``).
        early_stopping_rounds: stop when the (last) ``eval_metric`` on the last eval set has not
            improved for this many rounds, in the metric's direction; ``predict`` then uses the
            best round.
        **kwargs: the objective's parameters (``ddf=``, ``tau=``...; they appear in
            ``get_params`` and never reach XGBoost) and any other XGBoost parameter.

    With a boostplug objective ``base_score`` defaults to 0 (ranking scores are relative
    within a query; see :mod:`boostplug.xgboost`).
    """

    _framework = "XGBoost"
    _knows_every_param = False

    def __init__(self, *, objective: Any = "rank:ndcg", eval_metric: str | Sequence[str] = "ndcg@10",
                 early_stopping_rounds: int | None = None, **kwargs: Any) -> None:
        # xgboost.XGBRanker.__init__ refuses every objective but "rank:*": skip to XGBModel's.
        xgb.XGBModel.__init__(self, objective=objective, eval_metric=eval_metric,
                              early_stopping_rounds=early_stopping_rounds, **kwargs)

    def _extra_params(self) -> dict[str, Any]:
        return dict(getattr(self, "kwargs", None) or {})

    def _knows_param(self, name: str) -> bool:
        return name in _XGB_SHARED_NAMES

    def get_xgb_params(self) -> dict[str, Any]:
        """The booster's parameters: without the objective's, the ranker's own, or a boostplug objective name."""
        params = super().get_xgb_params()
        for key in self._not_booster_params():
            params.pop(key, None)
        if self._is_boostplug(self.objective):
            params.pop("objective", None)
        return params

    def _qid_from_X(self, X: Any, qid: Any, group: Any = None, eval_index: int | None = None) -> tuple[Any, Any]:
        """XGBoost's convention (``xgboost.XGBRanker``): a pandas DataFrame's column named ``qid``
        holds the query ids and is no feature; refused next to ``qid=`` or ``group=``."""
        if not (type(X).__module__.startswith("pandas") and hasattr(X, "columns") and "qid" in X.columns):
            return X, qid
        for name, given in (("qid", qid), ("group", group)):
            if given is not None:
                what, key = ("X", name) if eval_index is None else (f"eval_set[{eval_index}][0]", f"eval_{name}")
                raise ValueError(f"{what} has a column named 'qid' (XGBoost's query-id column) and {key}= is given "
                                 "too: remove one of them")
        return X.drop(columns="qid"), X["qid"].to_numpy()

    def _dmatrix(self, X: Any, y: Any, group_ptr: NDArray[np.int64], query_weights: Any, base_margin: Any) -> Any:
        return dmatrix(X, y, group_ptr=group_ptr, weight=query_weights, base_margin=base_margin,
                       missing=self.missing, enable_categorical=self.enable_categorical,
                       feature_types=self.feature_types, nthread=self.n_jobs)

    def fit(  # type: ignore[override]
        self,
        X: Any,
        y: ArrayLike,
        *,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        base_margin: ArrayLike | None = None,
        eval_set: Sequence[tuple[Any, Any]] | None = None,
        eval_qid: Sequence[ArrayLike] | None = None,
        eval_group: Sequence[ArrayLike] | None = None,
        sample_weight_eval_set: Sequence[ArrayLike] | None = None,
        base_margin_eval_set: Sequence[ArrayLike] | None = None,
        verbose: bool | int = False,
        xgb_model: Any = None,
        doc: ArrayLike | None = None,
    ) -> "XGBRanker":
        """Fit on queries given by ``qid`` (one id per row, each query's rows adjacent, any
        order: unlike ``xgboost.XGBRanker``, ids need not be sorted) or ``group`` (query sizes).

        ``sample_weight``: one per query (XGBoost's ranking convention) or one per row constant
        within a query. ``eval_set``: ``[(X, y), ...]`` with ``eval_qid`` (or ``eval_group``)
        for each; ``eval_metric`` is recorded for each in ``evals_result_`` and early stopping
        watches the last one. Inside scikit-learn's model selection, a split that puts rows of
        one query in both its training and test part is refused (``ValueError``). ``doc``: one
        document key per row, onto which an objective's keyed pairs
        (:class:`~boostplug.keyed_pairs.KeyedPairs`) are mapped (routed like ``qid``). Other
        arguments as ``xgboost.XGBRanker.fit``.

        As in ``xgboost.XGBRanker``, a pandas ``X`` (or an ``eval_set`` frame) may carry the query
        ids as a column named ``qid`` instead of ``qid=`` (``eval_qid``); that column is then no
        feature, and ``predict`` and :meth:`score` read or drop it the same way.
        """
        plan = self._plan_fit(X, y, qid=qid, group=group, sample_weight=sample_weight, eval_set=eval_set,
                              eval_qid=eval_qid, eval_group=eval_group, eval_sample_weight=sample_weight_eval_set,
                              doc=doc)
        if not isinstance(self.objective, str) and not self._is_boostplug(self.objective):
            raise TypeError(
                f"XGBRanker takes a boostplug objective (one of {_objectives.names()}, or a "
                f"boostplug.objectives.Loss subclass or instance) or an XGBoost 'rank:*' objective name, got "
                f"{type(self.objective).__name__}"
            )
        margins = [builder_init_score(m, f"base_margin_eval_set[{i}]")
                   for i, m in enumerate(per_set(base_margin_eval_set, len(plan.evals), "base_margin_eval_set"))]
        with xgb.config_context(verbosity=self.verbosity):
            params = self.get_xgb_params()
            params["disable_default_eval_metric"] = 1
            obj = None
            if plan.choice.name is not None:
                obj = make_objective(plan.choice.entry, threads=params_threads(params),
                                     **plan.choice.params).given_training(params)
                if params.get("base_score") is None:
                    params["base_score"] = 0.0
            dtrain = self._dmatrix(plan.X, y, plan.group_ptr, plan.query_weights, base_margin)
            evals = [(self._dmatrix(e.X, e.y, e.group_ptr, e.query_weights, m), f"validation_{i}")
                     for i, (e, m) in enumerate(zip(plan.evals, margins))]
            callbacks = directed_callbacks(self.callbacks, plan.watched)  # a user's left on automatic direction
            if plan.early_stopping_rounds is not None:
                callbacks.append(early_stopping(plan.early_stopping_rounds, plan.watched.name))
            model = xgb_model.get_booster() if isinstance(xgb_model, xgb.XGBModel) else xgb_model
            evals_result: dict[str, Any] = {}
            self._Booster = xgb.train(
                params, dtrain, self.get_num_boosting_rounds(), evals=evals, obj=obj,
                custom_metric=_Metrics([m.name for m in plan.metrics]) if evals else None,
                evals_result=evals_result, verbose_eval=verbose, xgb_model=model, callbacks=callbacks,
            )
        if obj is not None:
            record_objective(self._Booster, obj)  # a booster attribute: every saved copy says what trained it
        self._set_evaluation_result(evals_result)
        return self

    def load_model(self, fname: Any) -> "XGBRanker":  # type: ignore[override]
        """``xgboost.XGBRanker.load_model``, then the recorded boostplug objective becomes
        ``objective`` and its parameters estimator parameters again (``get_params``); row-index
        parameters (the objective's ``row_params``) are recorded only as a fingerprint and not restored.
        A model cut short or damaged is a ``ValueError`` (:func:`~.model_check.load_checked`)."""
        load_checked(fname, super().load_model)
        forget_checksum(self.get_booster())
        record = objective_of(self.get_booster())
        if record is not None:
            self.objective = record.name
            self.kwargs = {**(getattr(self, "kwargs", None) or {}), **record.params}
        return self
