"""The ranking methods ``boostplug compare`` can train, behind one small interface.

A :class:`Method` trains on a training part and returns a :class:`Trained`
model: validation and test scores after every round (so the round can be chosen
on validation data and curves can be drawn) and the training time.

Three families, each name selectable on the command line:

* LightGBM trees (no prefix): the built-ins ``lambdarank``, ``rank_xendcg``,
  ``regression`` and boostplug's objectives ``qbrank``, ``mpboost-{binary,ldd,logdd,logitdd}``,
  ``ndcg_boost``, ``rankboost-loss``;
* XGBoost trees (prefix ``xgb-``): ``xgb-rank:ndcg``, ``xgb-rank:pairwise``,
  ``xgb-reg:squarederror`` and ``xgb-`` + each boostplug objective above;
* the reference boosters of :mod:`boostplug.boosters` (framework ``"booster"``):
  ``rb-d``, ``rb-c``, ``rankboost+``, ``adarank-map``, ``adarank-ndcg``,
  ``mpboost-stumps``, ``ndcg_boost-stumps``.

Tree methods share one set of tree parameters (:data:`TREE_PARAMS`, overridable)
so that only the loss differs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..data import RankingData

__all__ = [
    "Method", "Trained", "METHODS", "DEFAULT_METHODS", "TREE_PARAMS", "TREE_PARAM_LIMITS", "FRAMEWORKS",
    "check_tree_params", "get_method", "method_names",
]

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

#: The values each shared tree parameter may take (LightGBM's limits; XGBoost's are the same or
#: wider): a test and what it says.
TREE_PARAM_LIMITS: dict[str, tuple[Callable[[float], bool], str]] = {
    "learning_rate": (lambda v: v > 0, "> 0"),
    "num_leaves": (lambda v: 2 <= v <= 131072, "between 2 and 131072"),
    "min_data_in_leaf": (lambda v: v >= 0, ">= 0"),
    "min_sum_hessian_in_leaf": (lambda v: v >= 0, ">= 0"),
    "lambda_l2": (lambda v: v >= 0, ">= 0"),
    "feature_fraction": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "max_bin": (lambda v: v >= 2, ">= 2"),
}


def check_tree_params(params: dict[str, Any]) -> None:
    """``ValueError`` naming the first parameter that is not a shared tree parameter
    (:data:`TREE_PARAMS`), not a finite number (an integer for the integer ones) or
    outside :data:`TREE_PARAM_LIMITS`; the frameworks would fail only once training starts."""
    import math

    for key, value in params.items():
        if key not in TREE_PARAMS:
            raise ValueError(f"unknown tree parameter {key!r}; the shared ones are {', '.join(TREE_PARAMS)}")
        integer = isinstance(TREE_PARAMS[key], int)
        kind = "an integer" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{key}={value!r}: must be {kind}")
        if not math.isfinite(value):
            raise ValueError(f"{key}={value!r}: must be finite")
        if integer and value != int(value):
            raise ValueError(f"{key}={value!r}: must be an integer")
        test, text = TREE_PARAM_LIMITS[key]
        if not test(value):
            raise ValueError(f"{key}={value!r}: must be {text}")


#: The frameworks ``--frameworks`` selects from.
FRAMEWORKS = ("lightgbm", "xgboost", "booster")

#: AdaRank settings of the comparison: RankLib's update and stop rule (the paper's
#: rule, tolerance 0.002 on the training measure, stops after one round on MQ2008).
ADARANK_PARAMS: dict[str, Any] = {"update": "multiplicative", "enqueue": True, "max_consecutive": 5, "tolerance": -0.002}

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
    """A named way to train a ranker.

    ``framework`` is ``"lightgbm"``, ``"xgboost"`` or ``"booster"``; ``loss`` is a
    built-in objective name, ``"boostplug:<objective>"`` or, for boosters, the
    class name in :mod:`boostplug.boosters`. ``select_metric`` (boosters only)
    overrides the metric that chooses the round (AdaRank.MAP: ``"map"``).
    """

    name: str
    framework: str
    loss: str
    loss_params: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    select_metric: str | None = None

    def train(self, train: RankingData, vali: RankingData, test: RankingData, *, rounds: int,
              tree_params: dict[str, Any], seed: int, threads: int = 0,
              progress: Progress | None = None) -> Trained:
        """Train for at most ``rounds`` rounds; ``threads=0``: the framework's default."""
        trainers = {"lightgbm": _train_lightgbm, "xgboost": _train_xgboost, "booster": _train_booster}
        if self.framework not in trainers:
            raise ValueError(f"unknown framework {self.framework!r}; expected one of {FRAMEWORKS}")
        return trainers[self.framework](self, train, vali, test, rounds, tree_params, seed, threads, progress)


def _staged(predict: Callable[[int], NDArray], n: int) -> list[NDArray[np.float64]]:
    return [np.asarray(predict(t), dtype=np.float64) for t in range(1, n + 1)]


def _train_lightgbm(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                    tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None) -> Trained:
    import lightgbm as lgb

    from .. import lightgbm as bpl

    params = dict(tree_params)
    params.update({"verbose": -1, "seed": seed, "deterministic": True, "num_threads": threads})
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


#: LightGBM tree parameter -> XGBoost parameter (same meaning).
_XGB_NAMES = {
    "learning_rate": "eta", "num_leaves": "max_leaves", "min_sum_hessian_in_leaf": "min_child_weight",
    "lambda_l2": "lambda", "feature_fraction": "colsample_bytree", "max_bin": "max_bin",
}


def _xgb_params(tree_params: dict[str, Any], seed: int, threads: int) -> dict[str, Any]:
    """XGBoost's names for the shared tree parameters (``min_data_in_leaf`` has no
    XGBoost counterpart: XGBoost bounds leaves by hessian only)."""
    p: dict[str, Any] = {"grow_policy": "lossguide", "max_depth": 0, "tree_method": "hist", "seed": seed}
    for k, v in tree_params.items():
        if k in _XGB_NAMES:
            p[_XGB_NAMES[k]] = v
    if threads > 0:
        p["nthread"] = threads
    return p


def _train_xgboost(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None) -> Trained:
    import xgboost as xgb

    from .. import xgboost as bpx

    params = _xgb_params(tree_params, seed, threads)
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


def _train_booster(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None) -> Trained:
    """A reference booster: at most ``rounds`` rounds (fewer when its own stop rule ends it)."""
    from .. import boosters

    if threads > 0:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    est = getattr(boosters, m.loss)(n_rounds=rounds, random_state=seed, **m.loss_params)

    def cb(t: int, record: dict[str, Any]) -> None:
        if progress is not None:
            progress(t, rounds)

    X_train, X_vali, X_test = (np.asarray(d.to_dense().X) for d in (train, vali, test))
    t0 = time.perf_counter()
    est.fit(X_train, train.y, group=np.diff(train.group_ptr), callback=cb)
    seconds = time.perf_counter() - t0
    if est.stop_reason_ == "interrupted":
        raise KeyboardInterrupt  # the booster kept its rounds; the comparison drops the unfinished method
    if progress is not None:
        progress(rounds, rounds)
    return Trained(list(est.staged_predict(X_vali)), list(est.staged_predict(X_test)), seconds,
                   {"stop_reason": est.stop_reason_})


def _m(name: str, framework: str, loss: str, summary: str, select_metric: str | None = None,
       **loss_params: Any) -> Method:
    return Method(name, framework, loss, loss_params, summary, select_metric)


def _paper_objectives(prefix: str, framework: str, label: str) -> list[Method]:
    out = [_m(f"{prefix}qbrank", framework, "boostplug:qbrank", f"QBRank on {label} trees")]
    for ddf in ("binary", "ldd", "logdd", "logitdd"):
        out.append(_m(f"{prefix}mpboost-{ddf}", framework, "boostplug:mpboost",
                      f"MPBoost.{ddf.upper()} on {label} trees", ddf=ddf))
    out.append(_m(f"{prefix}ndcg_boost", framework, "boostplug:ndcg_boost", f"NDCG_Boost on {label} trees"))
    out.append(_m(f"{prefix}rankboost-loss", framework, "boostplug:rankboost",
                  f"RankBoost's exponential pair loss on {label} trees"))
    return out


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        _m("lambdarank", "lightgbm", "lambdarank", "LightGBM's built-in LambdaRank (LambdaMART)"),
        _m("rank_xendcg", "lightgbm", "rank_xendcg", "LightGBM's built-in XE-NDCG"),
        _m("regression", "lightgbm", "regression", "LightGBM's squared error on the grades (GBT)"),
        *_paper_objectives("", "lightgbm", "LightGBM"),
        _m("xgb-rank:ndcg", "xgboost", "rank:ndcg", "XGBoost's built-in LambdaMART (NDCG)"),
        _m("xgb-rank:pairwise", "xgboost", "rank:pairwise", "XGBoost's built-in pairwise logistic loss"),
        _m("xgb-reg:squarederror", "xgboost", "reg:squarederror", "XGBoost's squared error on the grades (GBT)"),
        *_paper_objectives("xgb-", "xgboost", "XGBoost"),
        _m("rb-d", "booster", "RankBoost", "RankBoost Rb-d, discrete stumps (Connamacher et al. 2020)",
           variant="rb-d"),
        _m("rb-c", "booster", "RankBoost", "RankBoost Rb-c, continuous-weight stumps", variant="rb-c"),
        _m("rankboost+", "booster", "RankBoost", "RankBoost+ (efficient, Algorithm 2)", variant="rankboost+"),
        _m("adarank-map", "booster", "AdaRank", "AdaRank.MAP (RankLib update/stop rule; round chosen by MAP)",
           "map", measure="map", **ADARANK_PARAMS),
        _m("adarank-ndcg", "booster", "AdaRank", "AdaRank.NDCG@5 (RankLib update/stop rule)",
           None, measure="ndcg@5", **ADARANK_PARAMS),
        _m("mpboost-stumps", "booster", "MPBoost", "stump MPBoost.LOGDD (the booster's default DDF)"),
        _m("ndcg_boost-stumps", "booster", "NDCGBoost", "stump NDCG_Boost"),
    )
}

#: What ``boostplug compare`` runs when no ``--methods`` is given (finishes on the
#: embedded data in well under two minutes on 2 cores; docs/compare.md has the time).
DEFAULT_METHODS = ("lambdarank", "regression", "qbrank", "mpboost-logitdd", "ndcg_boost", "rankboost-loss",
                   "xgb-rank:ndcg", "rb-c", "ndcg_boost-stumps")


def method_names(frameworks: tuple[str, ...] | list[str] | None = None) -> list[str]:
    """All method names, or those of the given frameworks, in registry order."""
    return [n for n, m in METHODS.items() if frameworks is None or m.framework in frameworks]


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; run 'boostplug compare --methods list' for the names") from None
