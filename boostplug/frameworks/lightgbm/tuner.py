"""Optuna's LightGBM tuners on a boostplug metric: :func:`tuner_cv` and :func:`tuner`.

``optuna_integration.lightgbm.LightGBMTunerCV`` and ``LightGBMTuner`` read the metric to optimise,
and its direction, from ``params["metric"]``, which names only LightGBM's built-in metrics: with
``feval=boostplug.lightgbm.metric(...)`` and ``metric="None"`` they look for a result called
``"valid None-mean"`` (``KeyError``) and would minimise. The tuners made here look up the
boostplug metric's own name and direction instead; everything else (the stepwise search, its
steps, ``time_budget``, ``study``, ``get_best_booster``...) is Optuna's. Needs ``optuna`` and
``optuna-integration`` (the ``tune`` extra).
"""

from __future__ import annotations

from typing import Any

from .adapters import aliases, metric as _metric
from .cv import query_folds

__all__ = ["tuner_cv", "tuner"]


def tuner_cv(params: dict[str, Any], train_set: Any, num_boost_round: int = 1000, *, metric: str = "ndcg@10",
             nfold: int = 5, seed: int = 0, shuffle: bool = True, **kwargs: Any) -> Any:
    """``LightGBMTunerCV`` that optimises the boostplug ``metric`` on folds that keep queries whole.

    Example:
        >>> from boostplug import lightgbm as bpl
        >>> params = {"objective": bpl.objective("qbrank"), "verbose": -1, "num_threads": 1}
        >>> tuner = bpl.tuner_cv(params, bpl.dataset(X, y, qid=qid), 20, nfold=3, time_budget=60)
        >>> tuner.run()  # doctest: +SKIP
        >>> tuner.best_score, tuner.best_params  # doctest: +SKIP

    Args:
        params: LightGBM parameters, the objective included (a boostplug objective or a built-in
            name); ``metric`` is set to ``"None"`` (LightGBM computes no built-in metric) and
            another value there is refused.
        train_set: an ``lgb.Dataset`` with query groups; the folds are
            :func:`~boostplug.frameworks.lightgbm.cv.query_folds` ``(train_set, nfold, seed=seed,
            shuffle=shuffle)``.
        metric: the boostplug metric to optimise (``boostplug.lightgbm.metric(metric)``), maximised
            or minimised as it says.
        kwargs: ``LightGBMTunerCV``'s other arguments (``time_budget``, ``study``, ``callbacks``,
            ``optuna_seed``, ``return_cvbooster``, ``show_progress_bar``...); not ``folds``,
            ``nfold`` (given here) or ``feval`` (``metric``).
    """
    from optuna_integration.lightgbm import LightGBMTunerCV

    _refuse(kwargs, ("folds", "feval", "metrics"), "tuner_cv")
    folds = query_folds(train_set, nfold, seed=seed, shuffle=shuffle)
    return _with_metric(LightGBMTunerCV)(_params(params), train_set, num_boost_round=num_boost_round, folds=folds,
                                         boostplug_metric=_metric(metric), **kwargs)


def tuner(params: dict[str, Any], train_set: Any, num_boost_round: int = 1000, *, valid_sets: Any,
          metric: str = "ndcg@10", **kwargs: Any) -> Any:
    """``LightGBMTuner`` that optimises the boostplug ``metric`` on the last of ``valid_sets``
    (Datasets with query groups, e.g. ``bpl.dataset(Xv, yv, qid=qv, reference=train_set)``).

    ``params`` and ``metric`` as in :func:`tuner_cv`; ``kwargs`` are ``LightGBMTuner``'s other
    arguments (``valid_names``, ``callbacks``, ``time_budget``, ``study``, ``optuna_seed``...), not
    ``feval``.
    """
    from optuna_integration.lightgbm import LightGBMTuner

    _refuse(kwargs, ("feval",), "tuner")
    return _with_metric(LightGBMTuner)(_params(params), train_set, num_boost_round=num_boost_round,
                                       valid_sets=valid_sets, boostplug_metric=_metric(metric), **kwargs)


def _refuse(kwargs: dict[str, Any], names: tuple[str, ...], who: str) -> None:
    for name in names:
        if name in kwargs:
            raise TypeError(f"boostplug.lightgbm.{who}() sets {name!r} itself (metric=... names the boostplug metric; "
                            "the folds keep queries whole); call optuna_integration.lightgbm directly for your own")


def _params(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    names = aliases("metric")
    for key in names:
        value = params.get(key)
        if value not in (None, "None", "none", "", "na", "null", "custom"):
            raise ValueError(f"params[{key!r}] = {value!r}: the tuner optimises the boostplug metric given as "
                             "metric=...; LightGBM's built-in metrics would be computed beside it for nothing")
    return {**{k: v for k, v in params.items() if k not in names}, "metric": "None"}


_CLASSES: dict[type, type] = {}


def _with_metric(base: type) -> type:
    """``base`` (one of Optuna's LightGBM tuners) reading its metric from a boostplug metric."""
    if base not in _CLASSES:

        class Tuner(base):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, boostplug_metric: Any, **kwargs: Any) -> None:
                self._boostplug_metric = boostplug_metric  # the base's __init__ asks for the direction
                super().__init__(*args, feval=boostplug_metric, **kwargs)

            def _get_metric_for_objective(self) -> str:
                return self._boostplug_metric.spec.display_name

            def higher_is_better(self) -> bool:
                return self._boostplug_metric.spec.higher_is_better

            def _create_objective(self, *args: Any, **kwargs: Any) -> Any:
                # Optuna's per-step objective reads the metric the same way as the tuner.
                objective = super()._create_objective(*args, **kwargs)
                objective._get_metric_for_objective = self._get_metric_for_objective
                objective.higher_is_better = self.higher_is_better
                return objective

        Tuner.__name__ = Tuner.__qualname__ = base.__name__
        _CLASSES[base] = Tuner
    return _CLASSES[base]
