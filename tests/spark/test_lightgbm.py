"""LightGBM on Spark: two barrier workers on LightGBM's socket network, against one process."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug.data import make_ranking
from boostplug.spark import predict, train_lightgbm
from tests.spark.conftest import frame

PARAMS = {"num_leaves": 7, "learning_rate": 0.2, "min_data_in_leaf": 5, "num_threads": 1, "verbose": -1}


def test_quality_of_one_process(spark, ranking):
    test = make_ranking(n_queries=40, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=5)
    booster = train_lightgbm(frame(spark, ranking), "mpboost", params=PARAMS, num_boost_round=20, num_workers=2)
    ref = lgb.train({**PARAMS, "objective": bpl.objective("mpboost")},
                    bpl.dataset(ranking.X, ranking.y, qid=ranking.qid), 20)
    assert booster.num_trees() == 20
    ndcg = metrics.ndcg(booster.predict(test.X), test.y, test.group_ptr, k=10)
    ref_ndcg = metrics.ndcg(ref.predict(test.X), test.y, test.group_ptr, k=10)
    # The workers bin each feature from their own rows (exactly here: features of few distinct
    # values), histograms are summed across workers: the same model up to summation order, so the
    # test NDCG@10 agrees far inside the noise of 40 test queries (a standard error near 0.03).
    assert abs(ndcg - ref_ndcg) < 0.01
    assert bpl.objective_of(booster).name == "mpboost"
    scored = predict(frame(spark, test), booster).select("prediction").toPandas()["prediction"].to_numpy()
    np.testing.assert_allclose(np.sort(scored), np.sort(booster.predict(test.X, raw_score=True)), rtol=1e-9)


def test_early_stopping_stops_every_worker_at_the_same_round(spark, ranking):
    valid = make_ranking(n_queries=20, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=4)
    booster = train_lightgbm(frame(spark, ranking), "qbrank", params=PARAMS, num_boost_round=200,
                             valid_df=frame(spark, valid), metric="ndcg@5", early_stopping_rounds=3, num_workers=2)
    assert 1 <= booster.num_trees() < 200  # the model kept its best round, and the run ended
