"""What the Spark entry points check before the frameworks see the rows, and how they name it:
rows of another number of features than the model (scoring); column types, and null, NaN or
ragged rows, named by query before any worker starts (training); and the error Spark reports
when one worker fails is that worker's, not its peers' broken connection."""

from __future__ import annotations

import pickle

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from tests._objectives import FailsOnSparkTaskZero, register
from tests.spark.conftest import frame

pytest.importorskip("pyspark")

from boostplug.spark import predict, train  # noqa: E402
from boostplug.frameworks.distributed.peers import first_line, lost_peer  # noqa: E402
from boostplug.spark._barrier import X_COL, X_IDX, X_SIZE, features_matrix, train_or_defer  # noqa: E402
from boostplug.spark.ml import Ranker, RankerModel, _payload  # noqa: E402
from boostplug.spark.scoring import ModelBytes  # noqa: E402

XGB = {"max_depth": 2, "nthread": 1}


def _boosters(data):
    """A small XGBoost and LightGBM model of ``data``'s features."""
    xgb_booster = xgb.train(bpx.params(max_depth=2, nthread=1), bpx.dmatrix(data.X, data.y, qid=data.qid), 3,
                            obj=bpx.objective("mpboost"))
    lgb_booster = lgb.train({"objective": bpl.objective("mpboost"), "num_leaves": 4, "verbose": -1, "num_threads": 1},
                            bpl.dataset(data.X, data.y, qid=data.qid), 3)
    return {"xgboost": xgb_booster, "lightgbm": lgb_booster}


def test_scored_rows_must_have_the_models_features(ranking):
    """The check the executors make (ModelBytes travels pickled): XGBoost would score 3 of a
    6-feature model's features without a word; LightGBM refuses with its own message."""
    import scipy.sparse as sp

    for kind, booster in _boosters(ranking).items():
        shipped = pickle.loads(pickle.dumps(ModelBytes(booster)))
        np.testing.assert_array_equal(shipped.predict(ranking.X[:5]), booster.predict(
            xgb.DMatrix(ranking.X[:5]), output_margin=True) if kind == "xgboost" else booster.predict(
            ranking.X[:5], raw_score=True))
        for X in (ranking.X[:, :3], sp.csr_matrix(ranking.X[:, :3]), np.hstack([ranking.X, ranking.X])):
            with pytest.raises(ValueError, match=rf"^the feature vectors have {X.shape[1]} features, but the {kind} "
                                                 r"model was trained on 6: score rows of the features it was"):
                shipped.predict(X)
        assert shipped.n_features == 6


def test_spark_scoring_refuses_another_feature_count(spark, ranking):
    """A 3-feature vector column for a 6-feature model fails when the rows are scored, naming both
    counts: XGBoost through bps.predict, LightGBM through RankerModel.transform (one partition:
    each failed job restarts its Python worker, which costs seconds); 3 feature_cols fail at once."""
    narrow = make_ranking(n_queries=4, docs_per_query=(4, 6), n_features=3, n_informative=2, seed=1)
    df = frame(spark, narrow).coalesce(1)
    plain = frame(spark, narrow, vector=False)
    boosters = _boosters(ranking)
    scored = {"xgboost": predict(df, boosters["xgboost"]),
              "lightgbm": RankerModel(framework="lightgbm", modelPayload=_payload(boosters["lightgbm"])).transform(df)}
    for kind, booster in boosters.items():
        with pytest.raises(Exception, match=rf"ValueError: the feature vectors have 3 features, but the {kind} model "
                                            "was trained on 6"):
            scored[kind].collect()
        with pytest.raises(ValueError, match=rf"^the 3 feature_cols have 3 features, but the {kind} model was "
                                             "trained on 6"):
            predict(plain, booster, feature_cols=["f0", "f1", "f2"])


def _batch(values, idx=None, size=None):
    import pandas as pd

    n = len(values)
    return pd.DataFrame({X_COL: values, X_IDX: idx or [None] * n, X_SIZE: size or [None] * n})


def test_a_batch_of_null_or_ragged_vectors_is_named_not_failed_in_numpy():
    """What a task (scoring, or training past the driver's check) says of a null vector or of dense
    vectors of different lengths (numpy's own errors were "all input arrays must have the same shape")."""
    for sparse in (True, False):
        with pytest.raises(ValueError, match=r"^feature vectors of different lengths: 2 and 3 features; every row"):
            features_matrix(_batch([np.ones(3), np.ones(2)]), sparse=sparse)
        with pytest.raises(ValueError, match=r"^1 of 2 rows have a null feature vector: every row needs its features"):
            features_matrix(_batch([np.ones(3), None]), sparse=sparse)


class _LightGBMError(Exception):
    pass


_LightGBMError.__name__ = "LightGBMError"  # lost_peer tells the frameworks' errors by name (neither is imported)


def test_a_worker_that_lost_its_peer_waits_then_says_so():
    assert lost_peer(_LightGBMError("Socket recv error, Connection reset by peer (code: 104)"))
    assert not lost_peer(_LightGBMError("Check failed: num_data > 0"))
    assert not lost_peer(RuntimeError("Socket recv error"))  # an error of the objective's own
    ring = type("XGBoostError", (Exception,), {})(
        "[22:31:19] /__w/xgboost/src/collective/result.cc:83: [histogram.h:197|22:31:19]:\n\n"
        "- [allreduce.cc:135|22:31:19]: Ring Allreduce failed.\nStack trace:")
    assert lost_peer(ring) and first_line(ring) == "[allreduce.cc:135|22:31:19]: Ring Allreduce failed."

    def broken():
        raise _LightGBMError("Socket recv error, Connection reset by peer (code: 104)\nmore")

    with pytest.raises(RuntimeError, match=r"^barrier task 1: its connection to another worker broke, and no other "
                                           r"worker's error reached Spark within 0.05 s .*: Socket recv error, "
                                           r"Connection reset by peer \(code: 104\)$"):
        train_or_defer(broken, 1, grace=0.05)
    with pytest.raises(ValueError, match="a real one"):
        train_or_defer(lambda: (_ for _ in ()).throw(ValueError("a real one")), 0, grace=60)  # at once
    assert train_or_defer(lambda: 7, 0) == 7


def test_bad_columns_and_rows_are_named_before_training(spark, ranking):
    """Column types are checked before Spark plans anything (Spark's AnalysisException named neither
    column nor type); null, NaN or ragged rows are found in one pass before any worker starts, named
    by their query (a worker named its partition's row number, or failed inside numpy)."""
    from pyspark.ml.functions import array_to_vector, vector_to_array
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql import functions as F

    df = frame(spark, ranking)
    with pytest.raises(TypeError, match=r"^train_xgboost: column 'features' \(the features\) must be a pyspark.ml "
                                        r"vector or an array of numbers, got string$"):
        train(df.withColumn("features", F.lit("1,2")), "mpboost", params=XGB)
    with pytest.raises(TypeError, match=r"^predict: column 'f1' \(a feature\) must be numeric, got string$"):
        predict(frame(spark, ranking, vector=False).withColumn("f1", F.lit("x")), xgb.Booster(),
                feature_cols=["f0", "f1"])
    with pytest.raises(TypeError, match=r"^column 'isv' marks a set of rows and must be boolean, got int$"):
        Ranker(validationIndicatorCol="isv", boosterParams=XGB).fit(df.withColumn("isv", F.lit(1)))
    at17 = F.col("qid") == 17
    valid = frame(spark, make_ranking(n_queries=6, docs_per_query=(4, 6), n_features=6, n_informative=3, seed=4),
                  qid_offset=100)
    cases = [
        (df.withColumn("label", F.when(at17, F.lit(float("nan"))).otherwise(F.col("label"))), None,
         r"^train_xgboost: \d+ rows have a null, NaN or infinite label in column 'label' \(the first in query 17 of "
         r"the training rows\); labels must be finite numbers$"),
        (df, valid.withColumn("label", F.when(F.col("qid") == 103, F.lit(None)).otherwise(F.col("label"))),
         r"label in column 'label' \(the first in query 103 of the validation rows\)"),
        (df.withColumn("qid", F.when(at17, F.lit(None)).otherwise(F.col("qid"))), None,
         r"^train_xgboost: \d+ rows have a null, NaN or infinite query id in column 'qid' \(training rows\); every "
         r"row needs"),
        (df.withColumn("features", F.when(at17, F.lit(None).cast(VectorUDT())).otherwise(F.col("features"))), None,
         r"null feature vector in column 'features' \(the first in query 17 of the training rows\)"),
        (df.withColumn("features", array_to_vector(F.when(at17, F.slice(vector_to_array("features"), 1, 4))
                                                   .otherwise(vector_to_array("features")))), None,
         r"^train_xgboost: the feature vectors differ in length: 4 features in query 17 of the training rows, 6 in "
         r"query \d+ of the training rows; every row needs the same features, in the same order$"),
    ]
    for bad, valid_df, message in cases:
        with pytest.raises(ValueError, match=message):
            train(bad, "mpboost", params=XGB, num_boost_round=2, num_workers=2, valid_df=valid_df)


def test_the_error_reported_is_the_failing_workers_not_its_peers(spark, ranking):
    """An objective that raises on one worker: Spark reports the first task that fails, which was the
    peer whose connection broke (LightGBM's "Socket recv error", XGBoost's "Ring allreduce failed");
    that peer now waits (train_or_defer), so the objective's own error is the one reported."""
    register(FailsOnSparkTaskZero)
    try:
        for framework, params in (("lightgbm", {"verbose": -1, "num_threads": 1}), ("xgboost", XGB)):
            with pytest.raises(Exception) as info:
                train(frame(spark, ranking), FailsOnSparkTaskZero.name, framework=framework, params=params,
                      num_boost_round=5, num_workers=2)
            text = str(info.value)
            assert "RuntimeError: the objective failed on purpose on task 0" in text, framework
            assert "Socket recv" not in text and "allreduce" not in text.lower(), framework
    finally:
        objectives.unregister(FailsOnSparkTaskZero.name)
