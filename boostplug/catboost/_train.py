"""Boosting CatBoost trees on a boostplug objective: one fit of one tree per round."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ._objective import CatBoostObjective, _pool_arrays, objective

__all__ = ["train"]

#: CatBoost parameters this loop sets itself: the loss, one tree per fit, and what keeps CatBoost's
#: derivative calls at the round's scores (plain boosting, one leaf estimation iteration).
_OWN = {"loss_function": None, "objective": None, "iterations": None, "n_estimators": None, "num_boost_round": None,
        "num_trees": None, "eval_metric": None, "boosting_type": "Plain", "leaf_estimation_iterations": 1}
#: Quantization parameters the pool is quantized with, once, before the first round.
_QUANTIZATION = ("border_count", "feature_border_type", "nan_mode", "per_float_feature_quantization")


def _check(params: dict[str, Any]) -> None:
    for key, allowed in _OWN.items():
        if key in params and params[key] != allowed:
            why = (f"must be {allowed!r}: CatBoost would ask for derivatives at scores other than the round's"
                   if allowed is not None else "is set by boostplug.catboost.train")
            raise ValueError(f"boostplug.catboost.train: {key}={params[key]!r} {why}")


def train(params: dict[str, Any], pool: Any, obj: Any, num_boost_round: int, *,
          callback: Callable[[int, Any], Any] | None = None) -> Any:
    """A ``catboost.CatBoost`` model of ``num_boost_round`` trees boosted on the boostplug objective
    ``obj`` (:func:`~boostplug.catboost.objective`, or a name) over :func:`~boostplug.catboost.pool`
    ``pool``. ``params``: CatBoost's (``depth``, ``learning_rate``, ``l2_leaf_reg``, ``random_seed``,
    ``thread_count``...; round ``t`` fits with seed ``random_seed + t``); the loss, the tree count,
    ``boosting_type`` (Plain) and ``leaf_estimation_iterations`` (1) are this loop's. ``callback(t,
    model)`` after each round (1-based). Training stops early when a round's gradients are all zero
    (every further tree would be one leaf of value 0); ``None`` when no tree was grown."""
    from catboost import CatBoost, CatBoostError

    _check(params)
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be a non-negative integer, got {num_boost_round!r}")
    bound = obj if isinstance(obj, CatBoostObjective) else objective(obj)
    labels, _ = _pool_arrays(pool)
    if not pool.is_quantized():  # once: every round's fit would quantize the features again
        pool.quantize(**{k: params[k] for k in _QUANTIZATION if k in params})
    threads = params.get("thread_count", -1)
    seed = int(params.get("random_seed", 0))
    base = {"verbose": False, "allow_writing_files": False, **params, "boosting_type": "Plain",
            "leaf_estimation_iterations": 1, "iterations": 1, "eval_metric": "RMSE"}
    scores = np.zeros(labels.shape[0])
    model = None
    for t in range(int(num_boost_round)):
        ders = bound.round(pool, scores, threads if threads and threads > 0 else None)
        if not np.any(ders.der1):
            break  # nothing to learn: every tree would be one leaf of value 0
        step = CatBoost({**base, "loss_function": ders, "random_seed": seed + t})
        try:
            with warnings.catch_warnings():  # CatBoost's note that it cannot compile the objective, at every fit
                warnings.filterwarnings("ignore", message="Can't optimze method", category=UserWarning)
                step.fit(pool, init_model=model)
        except CatBoostError:
            if ders.error is not None:
                raise ders.error from None
            raise
        scores = scores + step.predict(pool, prediction_type="RawFormulaVal", ntree_start=t, ntree_end=t + 1)
        model = step
        if callback is not None:
            callback(t + 1, model)
    return model
