"""``save_model`` without ``objective=`` records the boostplug objective the booster's parameters hold,
or warns.

Before, ``boostplug.lightgbm.save_model(booster, path)`` of a booster just trained with a boostplug
objective wrote ``[objective: custom]`` and no record (the file then failed in onnxmltools and
``Booster.refit``), and ``boostplug.xgboost.save_model`` wrote XGBoost's placeholder, without a
word. A plain ``lgb.train``/``xgb.train`` Booster keeps no trace of its objective (and nothing in
boostplug reads callers' stack frames to find the Booster an objective's round trains), so such a
save warns, saying to pass ``objective=``; a Booster whose ``params["objective"]`` holds one records it.
"""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.frameworks import model_record

LGB_PARAMS = {"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5, "num_threads": 1}


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    return X, rng.integers(0, 3, 80).astype(float), np.repeat(np.arange(10), 8)


def _squared(preds, data):
    return preds - data.get_label(), np.ones_like(preds)


def _recorded(path):
    rec = (bpl if str(path).endswith(".txt") else bpx).objective_of(path)
    return None if rec is None else (rec.name, dict(rec.params))


#: What each framework's save_model warns when it has no boostplug objective to record.
UNRECORDED = {bpl: r"boostplug.lightgbm.save_model: the booster was trained with a custom objective.*pass objective=",
              bpx: r"boostplug.xgboost.save_model: no boostplug objective is recorded.*pass objective="}


def _saves_unrecorded(booster, path, match=None):
    """``save_model(booster, path)`` (LightGBM's for a ``.txt``) warns (``match``, else the framework's
    :data:`UNRECORDED`) and records no objective."""
    framework = bpl if str(path).endswith(".txt") else bpx
    with pytest.warns(UserWarning, match=match or UNRECORDED[framework]):
        framework.save_model(booster, path)
    assert _recorded(path) is None


@pytest.mark.parametrize("keep", [False, True])
def test_a_plain_training_is_saved_with_the_objective_given_and_warns_without_one(tmp_path, keep):
    X, y, qid = _data()
    obj = bpl.objective("qbrank", w=0.5)
    booster = lgb.train(dict(LGB_PARAMS, objective=obj), bpl.dataset(X, y, qid=qid), 3, keep_training_booster=keep)
    assert booster.params["objective"] == "none"  # LightGBM keeps no trace of the callable
    _saves_unrecorded(booster, tmp_path / "m.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bpl.save_model(booster, tmp_path / "m.txt", objective=obj)
    assert _recorded(tmp_path / "m.txt") == ("qbrank", {"w": 0.5})
    xobj = bpx.objective("mpboost", ddf="logitdd")
    xbooster = xgb.train({"max_depth": 2, "nthread": 1}, bpx.dmatrix(X, y, qid=qid), 3, obj=xobj)
    _saves_unrecorded(xbooster, tmp_path / "m.json")
    bpx.save_model(xbooster, tmp_path / "m.json", objective=xobj)
    assert _recorded(tmp_path / "m.json") == ("mpboost", {"ddf": "logitdd"})


def test_a_boostplug_objective_in_the_boosters_params_is_recorded(tmp_path):
    X, y, _ = _data()
    booster = lgb.train(dict(LGB_PARAMS, objective=_squared), lgb.Dataset(X, y), 2)
    booster.params["objective"] = bpl.objective("ndcg_boost", sigma=2.0)
    bpl.save_model(booster, tmp_path / "m.txt")
    assert _recorded(tmp_path / "m.txt") == ("ndcg_boost", {"sigma": 2.0})


def test_a_custom_objective_boostplug_does_not_know_warns_and_records_nothing(tmp_path):
    X, y, qid = _data()
    booster = lgb.train(dict(LGB_PARAMS, objective=_squared), lgb.Dataset(X, y), 2)
    _saves_unrecorded(booster, tmp_path / "m.txt")
    assert "[objective: custom]" in (tmp_path / "m.txt").read_text()
    xbooster = xgb.train({"max_depth": 2, "nthread": 1}, xgb.DMatrix(X, y), 2, obj=_squared)
    _saves_unrecorded(xbooster, tmp_path / "m.json")
    # built-in objectives: nothing to record, nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bpl.save_model(lgb.train(dict(LGB_PARAMS, objective="lambdarank"), lgb.Dataset(X, y, group=np.full(10, 8)), 2),
                       tmp_path / "b.txt")
        bpx.save_model(xgb.train({"objective": "rank:ndcg", "nthread": 1}, xgb.DMatrix(X, y, qid=qid), 2),
                       tmp_path / "b.json")
    assert _recorded(tmp_path / "b.txt") is None and _recorded(tmp_path / "b.json") is None


def test_an_objective_that_cannot_be_recorded_is_left_out_with_a_warning(tmp_path, monkeypatch):
    X, y, qid = _data()
    booster = lgb.train(dict(LGB_PARAMS, objective=bpl.objective("qbrank")), bpl.dataset(X, y, qid=qid), 2)
    booster.params["objective"] = bpl.objective("qbrank")  # where save_model finds it without objective=

    def unsavable(objective):
        raise TypeError("qbrank: parameter x of type function cannot be saved in a model file")

    monkeypatch.setattr(model_record, "record_for", unsavable)
    _saves_unrecorded(booster, tmp_path / "m.txt", r"trained with the objective 'qbrank', which cannot be recorded "
                      r"\(qbrank: parameter x")
