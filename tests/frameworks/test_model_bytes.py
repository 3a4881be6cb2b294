"""A booster as bytes and back (boostplug.frameworks.model_bytes): what travels to Spark executors
and distributed workers predicts as the booster did, keeps its objective record, and bad input is
named."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.frameworks.model_bytes import booster_bytes, booster_from_bytes


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=12, docs_per_query=(4, 12), n_features=5, seed=3)


def test_lightgbm_round_trip_keeps_scores_and_record(data):
    obj = bpl.objective("mpboost")
    params = {"objective": obj, "num_leaves": 4, "verbose": -1, "num_threads": 1}
    booster = bpl.record_objective(lgb.train(params, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 5), obj)
    kind, raw = booster_bytes(booster)
    assert kind == "lightgbm" and isinstance(raw, bytes)
    back = booster_from_bytes(kind, raw)
    np.testing.assert_array_equal(back.predict(data.X, raw_score=True), booster.predict(data.X, raw_score=True))
    assert bpl.objective_of(back).name == "mpboost"


def test_xgboost_round_trip_keeps_scores(data):
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    booster = xgb.train(bpx.params(max_depth=2, nthread=1), dm, 5, obj=bpx.objective("qbrank"))
    kind, raw = booster_bytes(booster)
    assert kind == "xgboost"
    back = booster_from_bytes(kind, raw)
    np.testing.assert_array_equal(back.predict(xgb.DMatrix(data.X), output_margin=True),
                                  booster.predict(xgb.DMatrix(data.X), output_margin=True))


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="got dict"):
        booster_bytes({})
    with pytest.raises(ValueError, match="'catboost'"):
        booster_from_bytes("catboost", b"")
    with pytest.raises(ValueError, match="model string"):
        booster_from_bytes("lightgbm", b"tree\nversion=v4\n")
