"""What the Spark entry points check before the frameworks see the rows, and how they name it:
rows of another number of features than the model (scoring)."""

from __future__ import annotations

import pickle

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from tests.spark.conftest import frame

pytest.importorskip("pyspark")

from boostplug.spark import predict  # noqa: E402
from boostplug.spark.ml import RankerModel, _payload  # noqa: E402
from boostplug.spark.scoring import ModelBytes  # noqa: E402


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
