"""compare's per-round scores (one leaf prediction and a running sum) equal LightGBM's and XGBoost's
own staged predictions bit for bit."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import scipy.sparse as sp

from boostplug import lightgbm as bpl
from boostplug.compare.training import lightgbm_staged_scores
from boostplug.data import make_ranking


@pytest.mark.parametrize("objective", ["regression", "lambdarank", "boostplug"])
def test_staged_scores_equal_lightgbms_predictions(objective):
    d = make_ranking(n_queries=30, docs_per_query=(3, 15), n_features=5, n_informative=3, n_labels=4, noise=0.5,
                     seed=2)
    obj = bpl.objective("mpboost") if objective == "boostplug" else objective
    params = {"objective": obj, "verbose": -1, "num_threads": 1, "num_leaves": 7, "min_data_in_leaf": 3,
              "learning_rate": 0.3}
    booster = lgb.train(params, bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), 25)
    n = booster.current_iteration()
    X = np.random.default_rng(0).normal(size=(40, 5))
    X[::7, 1] = np.nan  # missing values take their own branch
    staged = lightgbm_staged_scores(booster, X, n)
    assert len(staged) == n
    for t, s in enumerate(staged, start=1):
        assert np.array_equal(s, booster.predict(X, num_iteration=t, raw_score=True)), t
    csr = sp.csr_matrix(np.nan_to_num(X))
    for t, s in zip((1, n), (lightgbm_staged_scores(booster, csr, n)[0], lightgbm_staged_scores(booster, csr, n)[-1])):
        assert np.array_equal(s, booster.predict(csr, num_iteration=t, raw_score=True))


def test_staged_scores_of_no_rows_and_no_trees():
    d = make_ranking(n_queries=10, docs_per_query=(3, 6), n_features=3, n_informative=2, n_labels=3, seed=1)
    booster = lgb.train({"objective": "lambdarank", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 2},
                        bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), 3)
    assert [s.shape for s in lightgbm_staged_scores(booster, np.zeros((0, 3)), 3)] == [(0,)] * 3
    assert lightgbm_staged_scores(booster, d.X, 0) == []


@pytest.mark.parametrize("objective", ["rank:ndcg", "reg:squarederror", "boostplug"])
def test_xgboost_staged_scores_equal_xgboosts_predictions(objective):
    import xgboost as xgb

    from boostplug import xgboost as bpx
    from boostplug.compare.training import xgboost_staged_scores

    d = make_ranking(n_queries=30, docs_per_query=(3, 15), n_features=5, n_informative=3, n_labels=4, noise=0.5,
                     seed=3)
    params = {"tree_method": "hist", "grow_policy": "lossguide", "max_depth": 0, "max_leaves": 7, "eta": 0.3,
              "colsample_bytree": 0.7, "seed": 1, "nthread": 1}
    obj = None
    if objective == "boostplug":
        obj, params = bpx.objective("mpboost"), bpx.params(**params)
    else:
        params["objective"] = objective
    booster = xgb.train(params, bpx.dmatrix(d.X, d.y, group_ptr=d.group_ptr), 25, obj=obj)
    X = np.random.default_rng(0).normal(size=(40, 5))
    X[::7, 1] = np.nan  # missing values take their own branch
    dmat = xgb.DMatrix(X)
    staged = xgboost_staged_scores(booster, dmat, 25)
    assert len(staged) == 25
    for t, s in enumerate(staged, start=1):
        assert np.array_equal(s, booster.predict(dmat, iteration_range=(0, t), output_margin=True)), t
    assert xgboost_staged_scores(booster, dmat, 0) == []
    assert [s.shape for s in xgboost_staged_scores(booster, xgb.DMatrix(np.zeros((0, 5))), 2)] == [(0,)] * 2
