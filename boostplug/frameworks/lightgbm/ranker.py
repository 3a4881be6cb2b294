"""``boostplug.lightgbm.LGBMRanker``: LightGBM's ranker taking a boostplug objective by name.

The shared logic is in :mod:`boostplug.frameworks.sklearn_ranker`; this module maps it onto
``lightgbm.LGBMRanker``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
from typing import Any, Callable, Sequence

import lightgbm as lgb
import numpy as np
from lightgbm.basic import _ConfigAliases
from lightgbm.sklearn import _ObjectiveFunctionWrapper
from numpy.typing import ArrayLike

from ... import objectives as _objectives
from .._bound_objective import FROM_FRAMEWORK
from .._builders import builder_init_score
from ..sklearn_ranker import OWN_PARAMS, RankerMixin
from .adapters import LightGBMSklearnObjective, params_threads, sklearn_metric, sklearn_objective
from .frames import lightgbm_frame
from .model_file import load_model, objective_of, record_objective, save_model

__all__ = ["LGBMRanker", "SKOPS_TRUSTED_TYPES"]

#: What a fitted :class:`LGBMRanker` with a registered boostplug objective holds beyond what skops
#: trusts by default (LightGBM's own ranker needs the last two), public names only: pass it as
#: ``skops.io.load(..., trusted=SKOPS_TRUSTED_TYPES)`` or to MLflow's
#: ``mlflow.lightgbm.log_model(ranker, ..., skops_trusted_types=SKOPS_TRUSTED_TYPES)``. The ranker's
#: objective travels as its name and parameters (:meth:`LGBMRanker.__getstate__`), not as the
#: objective object, whose state unpickles the objective's class (which skops exists to avoid).
SKOPS_TRUSTED_TYPES = ["boostplug.frameworks.lightgbm.ranker.LGBMRanker",
                       "boostplug.frameworks.model_record.ObjectiveRecord",
                       "collections.OrderedDict", "lightgbm.basic.Booster"]

# The pickled ranker's key for its objective as plain data: (name, parameters, thread count).
_OBJECTIVE_STATE = "_boostplug_objective_state"


@functools.cache
def _lightgbm_param_names() -> frozenset[str]:
    """Every LightGBM parameter and alias (LightGBM's own table, as its sklearn wrapper uses)."""
    table = _ConfigAliases._get_all_param_aliases()
    return frozenset(table) | frozenset(a for aliases in table.values() for a in aliases)


@functools.cache
def _named_params() -> frozenset[str]:
    """Parameters in the estimator signatures (LightGBM's sklearn-level ones included)."""
    names = set(inspect.signature(lgb.LGBMModel.__init__).parameters) | set(OWN_PARAMS) | {"objective"}
    return frozenset(names - {"self", "kwargs"})


# Newer LightGBM takes validation data as eval_X/eval_y and deprecates eval_set.
_HAS_EVAL_X = "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters


class _EarlyStoppingOnMetric:
    """``lgb.early_stopping`` on one metric, with LightGBM's rule for several eval sets.

    LightGBM's own callback watches every (eval set, metric) pair but the training data and stops
    when the first of them has not improved for ``rounds`` rounds. This one hands it only the
    watched metric's results on every set each round (so the rule for sets is LightGBM's), and,
    when it stops, reports every result of the best round (``best_score_``), as LightGBM does.
    """

    def __init__(self, rounds: int, metric_name: str) -> None:
        # Instance attributes: lgb.train gives a callback without "order" in its __dict__ a slot
        # before record_evaluation, whose last round would then go unrecorded.
        self.order = 30  # LightGBM's own early stopping's slot
        self.before_iteration = False
        self._inner = lgb.early_stopping(rounds, verbose=False)
        self.metric_name = metric_name
        self._results: dict[int, list[Any]] = {}

    def __call__(self, env: Any) -> None:
        results = list(env.evaluation_result_list or [])
        self._results[env.iteration] = results
        watched = [r for r in results if r[1] == self.metric_name]
        # LightGBM's CallbackEnv with the watched results only (a dataclass in LightGBM 4.6+, a named tuple before)
        env = (dataclasses.replace(env, evaluation_result_list=watched) if dataclasses.is_dataclass(env)
               else env._replace(evaluation_result_list=watched))
        try:
            self._inner(env)
        except lgb.callback.EarlyStopException as stop:
            raise lgb.callback.EarlyStopException(stop.best_iteration, self._results[stop.best_iteration]) from None


class _NamedObjectiveWrapper(_ObjectiveFunctionWrapper):
    """LightGBM's wrapper of a scikit-learn-style objective, printed as the boostplug objective it
    wraps: what ``lgb.train`` receives as ``params["objective"]``, which MLflow's autolog records
    as text (LightGBM's own wrapper prints as ``<..._ObjectiveFunctionWrapper object at 0x...>``)."""

    def __repr__(self) -> str:
        return repr(self.func)

    __str__ = __repr__


class LGBMRanker(RankerMixin, lgb.LGBMRanker):
    """``lightgbm.LGBMRanker`` that takes a boostplug objective by name, with its parameters.

    Example:
        >>> ranker = LGBMRanker(objective=name, n_estimators=20, early_stopping_rounds=5,
        ...                     n_jobs=1, verbose=-1, **objective_params)
        >>> ranker.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qid_v])  # doctest: +ELLIPSIS
        LGBMRanker(...)
        >>> 0 <= ranker.score(Xt, yt, qid=qid_t) <= 1   # mean NDCG@10
        True

    Args:
        objective: a boostplug objective name (:func:`boostplug.objectives.names`), a
            :class:`~boostplug.objectives.Loss` subclass or instance (registered or not; an
            instance's settings are its parameters, under the estimator's), or anything
            ``lightgbm.LGBMRanker`` takes (``"lambdarank"``, LightGBM's own, ``"rank_xendcg"``,
            a callable; ``None`` is ``"lambdarank"``).
        eval_metric: the boostplug metric evaluated on ``eval_set`` each round and used by early
            stopping and :meth:`score` (``"ndcg@10"``, ``"map@10"``, ``"err@10"``...), or a list
            of them (``["map@10", "ndcg@10"]``): each is recorded in ``evals_result_`` and the
            last one drives early stopping and :meth:`score` (XGBoost's convention; LightGBM's
            ``first_metric_only`` would take the first). LightGBM's own metrics are switched off
            (``metric="None"``); passing ``metric=`` is an error.
        early_stopping_rounds: stop when the (last) ``eval_metric`` has not improved for this many
            rounds (in the metric's direction) on one of the eval sets, whichever stalls first
            (LightGBM's rule; the training data, when listed, is not watched); ``predict`` then
            uses the best round of that set.
        **kwargs: the objective's parameters (``ddf=``, ``tau=``...; they appear in
            ``get_params`` and never reach LightGBM) and any other LightGBM parameter.
            Unknown names and invalid objective values raise ``ValueError`` at ``fit``.
    """

    _framework = "LightGBM"
    _knows_every_param = True
    # LightGBM's ranking objectives and their aliases: "lambdarank" is LightGBM's own here, not the
    # registered copy of it (pass objective="lambdarank" to boostplug.lightgbm.objective for that)
    _builtin_objectives = frozenset({"lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"})

    def __init__(self, *, objective: Any = None, eval_metric: str | Sequence[str] = "ndcg@10",
                 early_stopping_rounds: int | None = None, **kwargs: Any) -> None:
        super().__init__(objective=objective, **kwargs)
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds

    def _extra_params(self) -> dict[str, Any]:
        named = _named_params()
        return {k: v for k, v in self._other_params.items() if k not in named}

    def _knows_param(self, name: str) -> bool:
        return name in _lightgbm_param_names()

    def _qid_from_X(self, X: Any, qid: Any, group: Any = None, eval_index: int | None = None) -> tuple[Any, Any]:
        """``X`` as LightGBM reads it (:func:`~.frames.lightgbm_frame`), the query ids as given."""
        return lightgbm_frame(X, "X" if eval_index is None else f"eval_set[{eval_index}]"), qid

    def _process_params(self, stage: str) -> dict[str, Any]:
        params = super()._process_params(stage)
        for key in self._not_booster_params():
            params.pop(key, None)
        # The boostplug eval_metric is the only metric: LightGBM's defaults would join early stopping.
        for alias in _ConfigAliases.get("metric"):
            params.pop(alias, None)
        params["metric"] = "None"
        objective = params.get("objective")
        if self._is_boostplug(objective):
            params["objective"] = "None"  # set_params(objective=name) after fit: predict needs no objective
        elif type(objective) is _ObjectiveFunctionWrapper and isinstance(objective.func, LightGBMSklearnObjective):
            params["objective"] = _NamedObjectiveWrapper(objective.func)
        return params

    def fit(  # type: ignore[override]
        self,
        X: Any,
        y: ArrayLike,
        *,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        init_score: ArrayLike | None = None,
        eval_set: Sequence[tuple[Any, Any]] | None = None,
        eval_qid: Sequence[ArrayLike] | None = None,
        eval_group: Sequence[ArrayLike] | None = None,
        eval_sample_weight: Sequence[ArrayLike] | None = None,
        eval_init_score: Sequence[ArrayLike] | None = None,
        eval_names: Sequence[str] | None = None,
        feature_name: Any = "auto",
        categorical_feature: Any = "auto",
        callbacks: list[Callable] | None = None,
        init_model: Any = None,
        doc: ArrayLike | None = None,
    ) -> "LGBMRanker":
        """Fit on queries given by ``qid`` (one id per row, each query's rows adjacent, any
        order) or ``group`` (query sizes).

        ``sample_weight``: one per row (constant within a query) or one per query.
        ``eval_set``: ``[(X, y), ...]`` with ``eval_qid`` (or ``eval_group``) for each;
        ``eval_metric`` is recorded for each in ``evals_result_`` and early stopping stops at
        the first of them to stall (LightGBM's rule). Inside scikit-learn's model selection, a split that puts rows of one
        query in both its training and test part is refused (``ValueError``). ``doc``: one
        document key per row, onto which an objective's keyed pairs
        (:class:`~boostplug.keyed_pairs.KeyedPairs`) are mapped (routed like ``qid``, so each fold
        of ``GridSearchCV`` gets its own pairs). A polars DataFrame or pyarrow Table is converted or
        refused as :func:`boostplug.lightgbm.dataset` says.
        Other arguments as ``lightgbm.LGBMRanker.fit``.
        """
        plan = self._plan_fit(X, y, qid=qid, group=group, sample_weight=sample_weight, eval_set=eval_set,
                              eval_qid=eval_qid, eval_group=eval_group, eval_sample_weight=eval_sample_weight,
                              doc=doc)
        # as boostplug.lightgbm.dataset does: LightGBM would store NaN as 0 and +-inf as +-1e300
        init_score = builder_init_score(init_score, "init_score")
        if eval_init_score is not None:
            eval_init_score = [builder_init_score(s, f"eval_init_score[{i}]") for i, s in enumerate(eval_init_score)]
        metric_given = sorted(set(plan.choice.booster_params) & _ConfigAliases.get("metric"))
        if metric_given:
            key = metric_given[0]
            raise ValueError(
                f"{key}={plan.choice.booster_params[key]!r}: this ranker evaluates its eval_metric (a boostplug "
                f"metric name, now {self.eval_metric!r}) and switches LightGBM's metrics off; set eval_metric= instead"
            )
        if plan.choice.name is not None:
            # LightGBM's scikit-learn wrapper hands the objective neither the thread count it trains with (an
            # alias in the kwargs wins over n_jobs) nor the parameters its built-in would read: both given here
            training = {k: v for k, v in self.get_params().items() if k not in self._not_booster_params()}
            self._objective = sklearn_objective(plan.choice.entry, threads=params_threads(self.get_params()),
                                                **plan.choice.params).given_training(training)
        else:
            self._objective = self.objective
        callbacks = list(callbacks or [])
        if plan.early_stopping_rounds is not None:
            callbacks.append(_EarlyStoppingOnMetric(plan.early_stopping_rounds, plan.watched.display_name))
        eval_kw: dict[str, Any] = {}
        if plan.evals:
            eval_kw = ({"eval_X": tuple(e.X for e in plan.evals), "eval_y": tuple(e.y for e in plan.evals)}
                       if _HAS_EVAL_X else {"eval_set": [(e.X, e.y) for e in plan.evals]})
            weights = [e.row_weights() for e in plan.evals]
            eval_kw.update(
                eval_group=[np.diff(e.group_ptr) for e in plan.evals],
                eval_sample_weight=None if all(w is None for w in weights) else weights,
                eval_init_score=eval_init_score,
                eval_names=eval_names,
                eval_metric=[sklearn_metric(m.name) for m in plan.metrics],
            )
        super().fit(plan.X, y, sample_weight=plan.row_weights(), init_score=init_score,
                    group=np.diff(plan.group_ptr), feature_name=feature_name,
                    categorical_feature=categorical_feature, callbacks=callbacks, init_model=init_model, **eval_kw)
        if self._is_boostplug(self.objective) and callable(self._objective):
            record_objective(self._Booster, self._objective)  # booster_ then says what trained it
        return self

    def __getstate__(self) -> dict[str, Any]:
        """The ranker's state, its objective of a registered name as plain data (name, parameters,
        thread count), rebuilt when unpickled: pickles and skops files hold no objective object."""
        state = super().__getstate__()
        objective = state.get("_objective")
        if isinstance(objective, LightGBMSklearnObjective) and objective.objective is not None \
                and _objectives.is_registered(objective.objective):
            threads = "framework" if objective.threads is FROM_FRAMEWORK else objective.threads
            state = dict(state, _objective=None)
            state[_OBJECTIVE_STATE] = {"name": objective.name, "params": dict(objective.params), "threads": threads}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        spec = state.pop(_OBJECTIVE_STATE, None)
        super().__setstate__(state)
        if spec is not None:
            threads = FROM_FRAMEWORK if spec["threads"] == "framework" else spec["threads"]
            self._objective = sklearn_objective(spec["name"], threads=threads, **spec["params"])

    def predict(self, X: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """``lightgbm.LGBMRanker.predict``; a polars DataFrame or pyarrow Table with categorical
        columns is converted as in :meth:`fit` (LightGBM maps it by the categories it recorded)."""
        return super().predict(lightgbm_frame(X), *args, **kwargs)

    def save_model(self, path: str | os.PathLike[str]) -> None:
        """Write the model as LightGBM model text (up to the best round when early stopping
        chose one), recording which boostplug objective trained it and with which parameters
        (:func:`boostplug.lightgbm.save_model`). Written atomically."""
        save_model(self.booster_, path)

    def load_model(self, path: str | os.PathLike[str]) -> "LGBMRanker":
        """Load a model file (from :meth:`save_model`, or any LightGBM model file) into this ranker.

        The objective recorded in the file becomes ``objective`` and its parameters estimator
        parameters again (``get_params``), so a refit trains the same way; row-index parameters
        (the objective's ``row_params``) are recorded only as a fingerprint and are not restored.
        """
        booster = load_model(path)
        record = objective_of(booster)
        self._Booster = booster
        self._n_features = booster.num_feature()
        self._n_features_in = booster.num_feature()
        names = booster.feature_name()
        self._fitted_with_feature_names = names != [f"Column_{i}" for i in range(len(names))]
        self._best_iteration = -1
        self._best_score = {}
        self._evals_result = {}
        if record is not None:
            self.set_params(objective=record.name, **record.params)
            self._objective = sklearn_objective(record.name, **record.params)
        elif isinstance(booster.params.get("objective"), str) and booster.params["objective"] != "custom":
            self.set_params(objective=booster.params["objective"])
        self.fitted_ = True
        return self
