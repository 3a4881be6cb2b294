"""End to end on MQ2008 Fold1 (train S1-S3, vali S4, test S5): every boostplug objective with
LightGBM and XGBoost learns (training NDCG@10 rises over rounds), and after early stopping on
vali its test NDCG@10 is not more than 0.01 below the framework's built-in LambdaMART
(LightGBM ``lambdarank``, XGBoost ``rank:ndcg``) trained with the same tree parameters, the
same early stopping and the same metric (issue 3's claim). Single-threaded; skipped without
the data. The measured numbers are in docs/studies/objectives.md.

Patience 50 (the protocol of the objectives' 5-fold measurements): vali NDCG@10 on Fold1 is
flat within ~0.005 after round ~10, and NDCG_Boost (bound Hessian: smaller Newton steps) rises
more slowly in its first 30 rounds than rank:ndcg, so with patience 20 XGBoost + NDCG_Boost
stopped in that slow start (test 0.7866 against rank:ndcg's 0.8015); trained 200 rounds, both
average 0.8075 test NDCG@10 over rounds 20-200.
"""

from __future__ import annotations

from typing import Any, Callable

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug import xgboost as bpx
from boostplug.data import RankingData, load_letor_folds
from tests._helpers import MQ2008, need_data

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

OBJECTIVES = ["qbrank", "mpboost", "ndcg_boost", "rankboost"]
ROUNDS, PATIENCE, LEARNING_RATE = 400, 50, 0.1
#: The claim: a sound objective lands within 0.01 NDCG@10 of the built-in LambdaMART.
TOLERANCE = 0.01
LGB_PARAMS = {"learning_rate": LEARNING_RATE, "num_leaves": 31, "min_data_in_leaf": 20, "metric": "None",
              "verbose": -1, "num_threads": 1, "deterministic": True, "seed": 0}
# XGBoost's default lambda=1 is kept for every model (see docs/objectives/index.md on lambda; measured: docs/studies/objectives.md).
XGB_PARAMS = {"eta": LEARNING_RATE, "max_leaves": 31, "grow_policy": "lossguide", "max_depth": 0,
              "min_child_weight": 1e-3, "tree_method": "hist", "nthread": 1, "seed": 0}

ndcg10 = metrics.by_name("ndcg@10")


@pytest.fixture(scope="module")
def fold1() -> tuple[RankingData, RankingData, RankingData]:
    # module scope (read once), so the path comes from conftest rather than its function-scoped fixture
    train, vali, test = load_letor_folds(need_data(MQ2008), "letor4")[0]
    return train, vali, test


@pytest.fixture(scope="module", autouse=True)
def one_numba_thread():
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(previous)


def _train_curve(predict_at: Callable[[int], np.ndarray], train: RankingData, n_rounds: int) -> list[float]:
    """Training NDCG@10 after 1, n/4, n/2 and n rounds."""
    points = sorted({1, max(1, n_rounds // 4), max(1, n_rounds // 2), n_rounds})
    return [ndcg10(predict_at(r), train.y, train.group_ptr) for r in points]


def _lightgbm(objective: Any, fold) -> tuple[float, list[float]]:
    train, vali, test = fold
    dtrain = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr)
    dvali = bpl.dataset(vali.X, vali.y, group_ptr=vali.group_ptr, reference=dtrain)
    booster = lgb.train({**LGB_PARAMS, "objective": objective}, dtrain, ROUNDS, valid_sets=[dvali],
                        feval=bpl.metric("ndcg@10"), callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])
    best = booster.best_iteration
    test_ndcg = ndcg10(booster.predict(test.X, num_iteration=best), test.y, test.group_ptr)
    curve = _train_curve(lambda r: booster.predict(train.X, num_iteration=r), train, booster.current_iteration())
    return test_ndcg, curve


def _xgboost(objective: Any, fold) -> tuple[float, list[float]]:
    train, vali, test = fold
    dtrain = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
    dvali = bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr)
    if callable(objective):
        params, kwargs = bpx.params(**XGB_PARAMS), {"obj": objective}
    else:
        params, kwargs = {**XGB_PARAMS, "objective": objective, "disable_default_eval_metric": 1}, {}
    booster = xgb.train(params, dtrain, ROUNDS, evals=[(dvali, "vali")], custom_metric=bpx.metric("ndcg@10"),
                        early_stopping_rounds=PATIENCE, verbose_eval=False, **kwargs)

    def predict_at(data: RankingData, rounds: int) -> np.ndarray:
        dm = xgb.DMatrix(data.X)
        return booster.predict(dm, iteration_range=(0, rounds), output_margin=True)

    test_ndcg = ndcg10(predict_at(test, booster.best_iteration + 1), test.y, test.group_ptr)
    curve = _train_curve(lambda r: predict_at(train, r), train, booster.num_boosted_rounds())
    return test_ndcg, curve


@pytest.fixture(scope="module")
def builtin(fold1) -> dict[str, float]:
    return {"lightgbm": _lightgbm("lambdarank", fold1)[0], "xgboost": _xgboost("rank:ndcg", fold1)[0]}


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("name", OBJECTIVES)
def test_objective_learns_and_matches_builtin_lambdamart(name: str, framework: str, fold1, builtin) -> None:
    if framework == "lightgbm":
        test_ndcg, curve = _lightgbm(bpl.objective(name), fold1)
    else:
        test_ndcg, curve = _xgboost(bpx.objective(name), fold1)
    print(f"\n{framework} {name}: test NDCG@10 {test_ndcg:.4f} (built-in {builtin[framework]:.4f}); "
          f"train NDCG@10 over rounds {np.round(curve, 4).tolist()}")
    assert all(b > a for a, b in zip(curve, curve[1:])), f"training NDCG@10 does not rise: {curve}"
    assert curve[-1] > curve[0] + 0.02
    assert test_ndcg >= builtin[framework] - TOLERANCE, (
        f"{name} on {framework}: test NDCG@10 {test_ndcg:.4f} is more than {TOLERANCE} below the "
        f"built-in {builtin[framework]:.4f}"
    )
