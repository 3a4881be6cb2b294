"""XGBoost on Spark (two barrier workers on XGBoost's collective) against one process on the same rows."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb

from boostplug import objectives
from boostplug import xgboost as bpx
from boostplug.objectives import Loss
from boostplug.spark import train_xgboost
from tests.spark.conftest import frame

ROUNDS = 15
PARAMS = {"max_depth": 3, "eta": 0.3, "nthread": 1}


def _single(data, name, **kw):
    return xgb.train(bpx.params(**PARAMS), bpx.dmatrix(data.X, data.y, qid=data.qid), ROUNDS,
                     obj=bpx.objective(name, **kw))


# Same rows, same exact histogram cuts (features of few distinct values), same gradients (whole
# queries per worker): the trees are the same; only the order in which the workers' gradient
# histograms are summed differs, a few ulps of float64 per split gain.
@pytest.mark.parametrize("name,kw", [("mpboost", {"ddf": "ldd"}), ("qbrank", {})])
def test_equal_to_one_process(spark, ranking, name, kw):
    booster = train_xgboost(frame(spark, ranking), name, objective_params=kw, params=PARAMS,
                            num_boost_round=ROUNDS, num_workers=2)
    ref = _single(ranking, name, **kw)
    X = xgb.DMatrix(ranking.X)
    np.testing.assert_allclose(booster.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)
    assert bpx.objective_of(booster).name == name
