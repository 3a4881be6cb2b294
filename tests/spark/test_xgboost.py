"""XGBoost on Spark (two barrier workers on XGBoost's collective) against one process on the same rows."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb

from boostplug import objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.spark import predict, train_xgboost
from boostplug.spark.stages import StageTimes
from tests.spark.conftest import frame

ROUNDS = 15
PARAMS = {"max_depth": 3, "eta": 0.3, "nthread": 1}


def _single(data, name, rounds=ROUNDS, **kw):
    return xgb.train(bpx.params(**PARAMS), bpx.dmatrix(data.X, data.y, qid=data.qid), rounds,
                     obj=bpx.objective(name, **kw))


def _close(a, b):
    # Same rows, same exact histogram cuts (features of few distinct values), same gradients
    # (whole queries per worker): the same trees; only the order in which the workers' gradient
    # histograms are summed differs, a few ulps of float64 per split gain and leaf value.
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kw", [("mpboost", {"ddf": "ldd"}), ("qbrank", {})])
def test_equal_to_one_process(spark, ranking, name, kw):
    times = StageTimes()
    booster = train_xgboost(frame(spark, ranking), name, objective_params=kw, params=PARAMS,
                            num_boost_round=ROUNDS, num_workers=2, stage_times=times)
    X = xgb.DMatrix(ranking.X)
    _close(booster.predict(X), _single(ranking, name, **kw).predict(X))
    rec = bpx.objective_of(booster)
    assert (rec.name, dict(rec.params)) == (name, kw)
    # every worker stamped its stages, and each stage took a time (a launch may see clocks differ)
    assert len(times.workers) == 2
    stages = times.seconds()
    assert list(stages) == ["layout", "launch", "read", "arrays", "join", "build", "train", "return", "collect",
                            "load", "total"]
    assert all(s >= 0 for name, s in stages.items() if name != "launch")


def test_registered_user_objective_travels_to_the_executors(spark, ranking):
    # Registered here only, not where the executors' Python workers import boostplug.
    entry = objectives.get("mpboost")
    objectives.register(entry.loss_class, name="spark_test_ldd", summary="MPBoost ldd, registered by a test",
                        fixed={"ddf": "ldd"})
    try:
        booster = train_xgboost(frame(spark, ranking, vector=False), "spark_test_ldd", params=PARAMS,
                                num_boost_round=ROUNDS, feature_cols=[f"f{j}" for j in range(ranking.X.shape[1])])
        X = xgb.DMatrix(ranking.X)
        _close(booster.predict(X), _single(ranking, "mpboost", ddf="ldd").predict(X))
    finally:
        objectives.unregister("spark_test_ldd")


def test_early_stopping_on_a_validation_frame_equals_one_process(spark, ranking):
    valid = make_ranking(n_queries=20, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=4)
    valid.X[:] = np.round(valid.X, 1)
    # Query weights: one per row, equal within each query.
    qw = 1.0 + (ranking.qid % 3)
    from pyspark.sql import functions as F

    # the training frame has a column the validation frame lacks (and training does not read)
    train_df = frame(spark, ranking, weight=qw).withColumn("source", F.lit("crawl"))
    booster = train_xgboost(train_df, "mpboost", params=PARAMS, num_boost_round=60,
                            weight_col="w", valid_df=frame(spark, valid, weight=np.ones(len(valid.y))),
                            metric="ndcg@5", early_stopping_rounds=3)
    dtrain = bpx.dmatrix(ranking.X, ranking.y, qid=ranking.qid, weight=qw)
    dvalid = bpx.dmatrix(valid.X, valid.y, qid=valid.qid)
    ref = xgb.train(bpx.params(**PARAMS), dtrain, 60, obj=bpx.objective("mpboost"), evals=[(dvalid, "validation")],
                    custom_metric=bpx.metric("ndcg@5"), early_stopping_rounds=3, verbose_eval=False)
    assert ref.best_iteration < 59  # it did stop early
    assert booster.best_iteration == ref.best_iteration
    X = xgb.DMatrix(valid.X)
    _close(booster.predict(X), ref.predict(X))


def test_predict_scores_a_frame_like_the_booster(spark, ranking):
    booster = _single(ranking, "mpboost")
    from pyspark.sql import functions as F

    df = frame(spark, ranking).withColumn("row", F.monotonically_increasing_id())
    out = predict(df, booster).orderBy("row").select("prediction").toPandas()["prediction"].to_numpy()
    np.testing.assert_allclose(out, booster.predict(xgb.DMatrix(ranking.X), output_margin=True), rtol=1e-6)


def test_row_index_parameters_and_unknown_objectives_are_refused(spark, ranking):
    df = frame(spark, ranking)
    with pytest.raises(ValueError, match="unknown objective 'mpbost'"):
        train_xgboost(df, "mpbost")
    with pytest.raises(ValueError, match="early_stopping_rounds needs valid_df"):
        train_xgboost(df, "mpboost", early_stopping_rounds=3)
    with pytest.raises(ValueError, match="no column 'nope'"):
        train_xgboost(df, "mpboost", label_col="nope")
    with pytest.raises(TypeError, match="pyspark.sql.DataFrame, got ndarray"):
        train_xgboost(ranking.X, "mpboost")
