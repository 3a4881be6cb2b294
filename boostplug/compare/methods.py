"""The ranking methods ``boostplug compare`` can train, behind one small interface.

A :class:`Method` trains on a training part with a validation part and returns
a :class:`Trained` model: validation and test scores after every round (so the
round can be chosen on validation data and curves can be drawn) and the
training time. Tree methods share one set of tree parameters
(:data:`TREE_PARAMS`, overridable) so that only the loss differs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..data import RankingData

__all__ = ["Method", "Trained", "METHODS", "DEFAULT_METHODS", "TREE_PARAMS", "get_method", "method_names"]

#: Tree parameters shared by every tree method (LightGBM names; mapped for XGBoost).
TREE_PARAMS: dict[str, Any] = {
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 20,
    "min_sum_hessian_in_leaf": 1e-3,
    "lambda_l2": 0.0,
    "feature_fraction": 1.0,
    "max_bin": 255,
}

Progress = Callable[[int, int], None]


@dataclass
class Trained:
    """Scores after every round on the validation and test parts, and the training time."""

    vali_scores: list[NDArray[np.float64]]
    test_scores: list[NDArray[np.float64]]
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """A named way to train a ranker: a framework and a loss (built-in or boostplug's)."""

    name: str
    framework: str          # "lightgbm" | "xgboost"
    loss: str               # built-in objective name, or "boostplug:<name>"
    loss_params: dict[str, Any] = field(default_factory=dict)
    summary: str = ""

    def train(self, train: RankingData, vali: RankingData, test: RankingData, *, rounds: int,
              tree_params: dict[str, Any], seed: int, progress: Progress | None = None) -> Trained:
        if self.framework == "lightgbm":
            return _train_lightgbm(self, train, vali, test, rounds, tree_params, seed, progress)
        if self.framework == "xgboost":
            return _train_xgboost(self, train, vali, test, rounds, tree_params, seed, progress)
        raise ValueError(f"unknown framework {self.framework!r}")


def _staged(predict: Callable[[int], NDArray], n: int) -> list[NDArray[np.float64]]:
    return [np.asarray(predict(t), dtype=np.float64) for t in range(1, n + 1)]


def _train_lightgbm(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                    tree_params: dict[str, Any], seed: int, progress: Progress | None) -> Trained:
    import lightgbm as lgb

    from .. import lightgbm as bpl

    params = dict(tree_params)
    params.update({"verbose": -1, "seed": seed, "deterministic": True, "num_threads": 0})
    if m.loss.startswith("boostplug:"):
        params["objective"] = bpl.objective(m.loss.split(":", 1)[1], **m.loss_params)
    else:
        params["objective"] = m.loss
        params.update(m.loss_params)
    dtrain = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr)

    def cb(env: Any) -> None:
        if progress is not None:
            progress(env.iteration + 1, rounds)

    t0 = time.perf_counter()
    booster = lgb.train(params, dtrain, num_boost_round=rounds, callbacks=[cb])
    seconds = time.perf_counter() - t0
    n = booster.current_iteration()
    return Trained(
        _staged(lambda t: booster.predict(vali.X, num_iteration=t, raw_score=True), n),
        _staged(lambda t: booster.predict(test.X, num_iteration=t, raw_score=True), n),
        seconds,
    )


def _xgb_params(tree_params: dict[str, Any], seed: int) -> dict[str, Any]:
    return {
        "eta": tree_params["learning_rate"],
        "max_leaves": tree_params["num_leaves"],
        "grow_policy": "lossguide",
        "max_depth": 0,
        "min_child_weight": tree_params["min_sum_hessian_in_leaf"],
        "lambda": tree_params["lambda_l2"],
        "colsample_bytree": tree_params["feature_fraction"],
        "max_bin": tree_params["max_bin"],
        "tree_method": "hist",
        "seed": seed,
        "nthread": 2,
    }


def _train_xgboost(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, progress: Progress | None) -> Trained:
    import xgboost as xgb

    from .. import xgboost as bpx

    params = _xgb_params(tree_params, seed)
    obj = None
    if m.loss.startswith("boostplug:"):
        obj = bpx.objective(m.loss.split(":", 1)[1], **m.loss_params)
        params = bpx.params(**params)
    else:
        params["objective"] = m.loss
        params.update(m.loss_params)
    dtrain = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
    dvali = xgb.DMatrix(vali.X)
    dtest = xgb.DMatrix(test.X)

    class _Progress(xgb.callback.TrainingCallback):
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            if progress is not None:
                progress(epoch + 1, rounds)
            return False

    t0 = time.perf_counter()
    booster = xgb.train(params, dtrain, num_boost_round=rounds, obj=obj, callbacks=[_Progress()])
    seconds = time.perf_counter() - t0
    n = booster.num_boosted_rounds()
    return Trained(
        _staged(lambda t: booster.predict(dvali, iteration_range=(0, t), output_margin=True), n),
        _staged(lambda t: booster.predict(dtest, iteration_range=(0, t), output_margin=True), n),
        seconds,
    )


def _m(name: str, framework: str, loss: str, summary: str, **loss_params: Any) -> Method:
    return Method(name, framework, loss, loss_params, summary)


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        _m("lambdarank", "lightgbm", "lambdarank", "LightGBM's built-in LambdaRank"),
        _m("rank_xendcg", "lightgbm", "rank_xendcg", "LightGBM's built-in XE-NDCG"),
        _m("regression", "lightgbm", "regression", "LightGBM's squared error on the grades (GBT)"),
        _m("qbrank", "lightgbm", "boostplug:qbrank", "QBRank on LightGBM trees"),
        _m("mpboost-binary", "lightgbm", "boostplug:mpboost", "MPBoost.BINARY on LightGBM trees", ddf="binary"),
        _m("mpboost-ldd", "lightgbm", "boostplug:mpboost", "MPBoost.LDD on LightGBM trees", ddf="ldd"),
        _m("mpboost-logdd", "lightgbm", "boostplug:mpboost", "MPBoost.LOGDD on LightGBM trees", ddf="logdd"),
        _m("mpboost-logitdd", "lightgbm", "boostplug:mpboost", "MPBoost.LOGITDD on LightGBM trees", ddf="logitdd"),
        _m("ndcg_boost", "lightgbm", "boostplug:ndcg_boost", "NDCG_Boost on LightGBM trees"),
        _m("rankboost-loss", "lightgbm", "boostplug:rankboost", "RankBoost's exponential loss on LightGBM trees"),
        _m("xgb-rank:ndcg", "xgboost", "rank:ndcg", "XGBoost's built-in LambdaMART (NDCG)"),
        _m("xgb-rank:pairwise", "xgboost", "rank:pairwise", "XGBoost's built-in pairwise loss"),
        _m("xgb-reg:squarederror", "xgboost", "reg:squarederror", "XGBoost's squared error on the grades"),
        _m("xgb-qbrank", "xgboost", "boostplug:qbrank", "QBRank on XGBoost trees"),
        _m("xgb-mpboost-logdd", "xgboost", "boostplug:mpboost", "MPBoost.LOGDD on XGBoost trees", ddf="logdd"),
        _m("xgb-ndcg_boost", "xgboost", "boostplug:ndcg_boost", "NDCG_Boost on XGBoost trees"),
        _m("xgb-rankboost-loss", "xgboost", "boostplug:rankboost", "RankBoost's exponential loss on XGBoost trees"),
    )
}

#: What ``boostplug compare`` runs when no ``--methods`` is given.
DEFAULT_METHODS = ("lambdarank",)


def method_names() -> list[str]:
    return list(METHODS)


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}") from None
