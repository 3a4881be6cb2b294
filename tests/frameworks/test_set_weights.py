"""Weights that reach a boostplug objective or metric through a plain ``lgb.Dataset(weight=...)``
or ``xgb.DMatrix`` are refused as ``boostplug.lightgbm.dataset`` / ``boostplug.xgboost.dmatrix``
and the boosters refuse them: negative, infinite (LightGBM stores ``inf`` as 1e38), or zero for
every query. Before, an infinite weight trained a constant model, the metric reported 0.997 where
the weighted mean is about 0.79, and all-zero weights trained to all-zero predictions. (A NaN
weight reaches neither: LightGBM stores it as 0 and XGBoost refuses it.)"""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx

N_Q, PER_Q = 8, 6
LGB = {"verbose": -1, "num_threads": 1, "min_data_in_leaf": 2, "num_leaves": 4}


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_Q * PER_Q, 3))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=X.shape[0]) * 0.5 + 1), 0, 3)
    return X, y, np.repeat(np.arange(N_Q), PER_Q)


def _row_weights(query_value: float, q: int = 2) -> np.ndarray:
    w = np.ones(N_Q * PER_Q)
    w[q * PER_Q:(q + 1) * PER_Q] = query_value
    return w


BAD = [(-1.0, r"query 2 \(rows 12\.\.17\) has weight -1\.0 at row 12 \(6 such weights\); weights must be finite and "
              r"non-negative"),
       (np.inf, r"query 2 \(rows 12\.\.17\) has weight 1e\+38 at row 12 \(6 such weights\), which is how LightGBM "
                r"stores an infinite weight")]


@pytest.mark.parametrize("value, message", BAD, ids=["negative", "inf"])
def test_lgb_train_refuses_the_weights_the_dataset_builder_refuses(value, message) -> None:
    X, y, _ = _data()
    train = lgb.Dataset(X, y, group=[PER_Q] * N_Q, weight=_row_weights(value))
    with pytest.raises(ValueError, match=rf"^qbrank: LightGBM: {message}"):
        lgb.train({**LGB, "objective": bpl.objective("qbrank")}, train, 2)
    with pytest.raises(ValueError, match=r"^LightGBM: query 2 \(rows 12\.\.17\) has weight (-1\.0|inf) at row 12"):
        bpl.dataset(X, y, qid=np.repeat(np.arange(N_Q), PER_Q), weight=_row_weights(value))


@pytest.mark.parametrize("value, message", BAD, ids=["negative", "inf"])
def test_lgb_metric_refuses_them_on_a_weighted_validation_set(value, message) -> None:
    X, y, qid = _data()
    Xv, yv, _ = _data(seed=1)
    train = bpl.dataset(X, y, qid=qid)
    vali = lgb.Dataset(Xv, yv, group=[PER_Q] * N_Q, weight=_row_weights(value), reference=train)
    with pytest.raises(ValueError, match=rf"^boostplug.lightgbm.metric\('ndcg@10'\): LightGBM: {message}"):
        lgb.train({**LGB, "objective": bpl.objective("qbrank"), "metric": "None"}, train, 2, valid_sets=[vali],
                  feval=bpl.metric("ndcg@10"))


def test_zero_weights_for_every_query_are_refused_by_objectives_and_metrics() -> None:
    X, y, qid = _data()
    zero = np.zeros(N_Q * PER_Q)
    message = r"every query has weight 0: nothing to learn from or to measure"
    with pytest.raises(ValueError, match=rf"^qbrank: LightGBM: {message}"):
        lgb.train({**LGB, "objective": bpl.objective("qbrank")}, lgb.Dataset(X, y, group=[PER_Q] * N_Q, weight=zero), 2)
    with pytest.raises(ValueError, match=rf"^qbrank: XGBoost: {message}"):
        dtrain = xgb.DMatrix(X, y, qid=qid, weight=np.zeros(N_Q))
        xgb.train({"nthread": 1}, dtrain, 2, obj=bpx.objective("qbrank"))
    train = bpx.dmatrix(X, y, qid=qid)
    vali = xgb.DMatrix(X, y, qid=qid, weight=np.zeros(N_Q))
    with pytest.raises(ValueError, match=rf"^boostplug.xgboost.metric\('ndcg@10'\): XGBoost: {message}"):
        xgb.train({"nthread": 1, "disable_default_eval_metric": 1}, train, 2, obj=bpx.objective("qbrank"),
                  evals=[(vali, "vali")], custom_metric=bpx.metric("ndcg@10"), verbose_eval=False)


def test_lightgbms_own_ranker_with_a_boostplug_objective_and_metric_refuses_them() -> None:
    X, y, qid = _data()
    ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective("qbrank"), n_estimators=2, verbose=-1, n_jobs=1,
                            min_child_samples=2)
    with pytest.raises(ValueError, match=rf"^qbrank: LightGBM: {BAD[0][1]}"):
        ranker.fit(X, y, group=[PER_Q] * N_Q, sample_weight=_row_weights(-1.0))
    ranker = lgb.LGBMRanker(objective="lambdarank", n_estimators=2, verbose=-1, n_jobs=1, min_child_samples=2)
    with pytest.raises(ValueError, match=rf"^boostplug.lightgbm.sklearn_metric\('ndcg@10'\): LightGBM: {BAD[1][1]}"):
        Xv, yv, _ = _data(seed=1)  # not X itself: LightGBM would evaluate on its training set, without the weights
        ranker.fit(X, y, group=[PER_Q] * N_Q, eval_set=[(Xv, yv)], eval_group=[[PER_Q] * N_Q],
                   eval_sample_weight=[_row_weights(np.inf)], eval_metric=bpl.sklearn_metric("ndcg@10"))


def test_valid_weights_still_train_and_weigh_the_metric() -> None:
    X, y, qid = _data()
    w = _row_weights(0.0)  # one query of weight 0 is fine
    booster = lgb.train({**LGB, "objective": bpl.objective("qbrank"), "metric": "None"},
                        lgb.Dataset(X, y, group=[PER_Q] * N_Q, weight=w), 3,
                        valid_sets=[lgb.Dataset(X, y, group=[PER_Q] * N_Q, weight=w)], feval=bpl.metric("ndcg@10"))
    assert np.isfinite(booster.predict(X)).all() and booster.best_score["valid_0"]["ndcg@10"] > 0
