"""MLflow keeps the objective record of boostplug models, and autolog names the objective.

A local file store in tmp_path (MLflow 3 asks for MLFLOW_ALLOW_FILE_STORE=true to use one).
"""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("mlflow.lightgbm")

N_Q, PER_Q = 12, 8


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri(f"file:{tmp_path / 'mlruns'}")
    yield
    mlflow.set_tracking_uri(None)


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_Q * PER_Q, 4))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=len(X)) + 1), 0, 3)
    return X, y, np.repeat(np.arange(N_Q), PER_Q)


# Given requirements, MLflow skips inferring them (a child process that imports the model: seconds).
REQUIREMENTS = {"pip_requirements": ["boostplug"]}


def _logged(model, log=None, **kwargs):
    with mlflow.start_run():
        info = (log or mlflow.lightgbm.log_model)(model, name="model", **REQUIREMENTS, **kwargs)
    return info.model_uri


def test_a_lightgbm_booster_round_trips_with_its_record(store) -> None:
    X, y, qid = _data()
    obj = bpl.objective("mpboost", ddf="ldd")
    booster = lgb.train({"objective": obj, "verbose": -1, "num_threads": 1}, bpl.dataset(X, y, qid=qid), 5)
    # MLflow's own log_model writes what LightGBM's writer knows: no record for a fresh Booster ...
    assert bpl.objective_of(mlflow.lightgbm.load_model(_logged(booster))) is None
    # ... bpl.log_model writes it, and the loaded Booster predicts the same.
    back = mlflow.lightgbm.load_model(_logged(booster, bpl.log_model, objective=obj))
    rec = bpl.objective_of(back)
    assert (rec.name, dict(rec.params)) == ("mpboost", {"ddf": "ldd"})
    np.testing.assert_array_equal(back.predict(X), booster.predict(X))
    # A Booster loaded from boostplug's file keeps its record through MLflow's own log_model.
    loaded = bpl.load_model(model_str=bpl.model_to_string(booster, obj))
    assert bpl.objective_of(mlflow.lightgbm.load_model(_logged(loaded))) == rec
    with pytest.raises(TypeError, match="expected an lgb.Booster, got LGBMRanker"):
        bpl.log_model(bpl.LGBMRanker(objective="qbrank"))


def test_the_rankers_round_trip_with_their_record_through_skops(store) -> None:
    # MLflow 3 saves scikit-learn models with skops, which loads only the types it is told to trust.
    pytest.importorskip("skops")
    X, y, qid = _data()
    ranker = bpl.LGBMRanker(objective="ndcg_boost", n_estimators=4, verbose=-1, n_jobs=1).fit(X, y, qid=qid)
    back = mlflow.lightgbm.load_model(_logged(ranker, skops_trusted_types=bpl.SKOPS_TRUSTED_TYPES))
    assert bpl.objective_of(back.booster_).name == "ndcg_boost"
    np.testing.assert_array_equal(back.predict(X), ranker.predict(X))
    xranker = bpx.XGBRanker(objective="qbrank", n_estimators=4, n_jobs=1).fit(X, y, qid=qid)
    with mlflow.start_run():
        uri = mlflow.xgboost.log_model(xranker, name="model", **REQUIREMENTS).model_uri  # XGBoost's own file, not skops
    xback = mlflow.xgboost.load_model(uri)
    assert bpx.objective_of(xback.get_booster()).name == "qbrank"
    np.testing.assert_array_equal(xback.predict(X), xranker.predict(X))


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_the_trusted_types_are_exactly_what_skops_does_not_trust(framework: str) -> None:
    sio = pytest.importorskip("skops.io")
    X, y, qid = _data()
    if framework == "lightgbm":
        ranker, trusted = bpl.LGBMRanker(objective="mpboost", n_estimators=2, verbose=-1, n_jobs=1), bpl.SKOPS_TRUSTED_TYPES
    else:
        ranker, trusted = bpx.XGBRanker(objective="mpboost", n_estimators=2, n_jobs=1), bpx.SKOPS_TRUSTED_TYPES
    data = sio.dumps(ranker.fit(X, y, qid=qid))
    assert sorted(sio.get_untrusted_types(data=data)) == sorted(trusted)
    np.testing.assert_array_equal(sio.loads(data, trusted=trusted).predict(X), ranker.predict(X))


@pytest.mark.parametrize("trusted", [bpl.SKOPS_TRUSTED_TYPES, bpx.SKOPS_TRUSTED_TYPES], ids=["lightgbm", "xgboost"])
def test_the_trusted_types_are_public_names(trusted) -> None:
    """It listed boostplug.frameworks._bound_objective.ShippedEntry, a private class whose state unpickles
    the objective's class: trusting it let a skops file run pickle."""
    for name in trusted:
        assert not any(part.startswith("_") for part in name.split(".")), name


def test_a_ranker_loaded_from_skops_or_a_pickle_has_its_objective_back() -> None:
    import pickle

    sio = pytest.importorskip("skops.io")
    X, y, qid = _data()
    ranker = bpl.LGBMRanker(objective="ndcg_boost", sigma=2.0, n_estimators=2, verbose=-1, n_jobs=1).fit(X, y, qid=qid)
    for again in (sio.loads(sio.dumps(ranker), trusted=bpl.SKOPS_TRUSTED_TYPES), pickle.loads(pickle.dumps(ranker))):
        objective = again.objective_
        assert (type(objective).__name__, objective.name, objective.params, objective.threads) == \
            ("LightGBMSklearnObjective", "ndcg_boost", {"sigma": 2.0}, 1)
        np.testing.assert_array_equal(again.predict(X), ranker.predict(X))
        np.testing.assert_array_equal(again.fit(X, y, qid=qid).predict(X), ranker.predict(X))  # it refits the same


def test_an_xgboost_booster_round_trips_with_its_record(store) -> None:
    X, y, qid = _data()
    obj = bpx.objective("qbrank", w=0.5)
    booster = bpx.record_objective(xgb.train(bpx.params(nthread=1), bpx.dmatrix(X, y, qid=qid), 4, obj=obj), obj)
    with mlflow.start_run():
        uri = mlflow.xgboost.log_model(booster, name="model", **REQUIREMENTS).model_uri
    rec = bpx.objective_of(mlflow.xgboost.load_model(uri))
    assert (rec.name, dict(rec.params)) == ("qbrank", {"w": 0.5})


def test_log_model_records_the_objective_given_and_autolog_keeps_only_its_name(store) -> None:
    """MLflow's own writers (log_model, autolog) keep a fresh Booster without its record; autolog logs the
    objective as a run parameter, text only. bpl.log_model(booster, objective=obj) records it;
    without objective= it warns (before, it logged the Booster without a record, silently)."""
    X, y, qid = _data()
    mlflow.lightgbm.autolog(log_datasets=False, silent=True)
    try:
        with mlflow.start_run() as run:
            obj = bpl.objective("mpboost", ddf="ldd")
            booster = lgb.train({"objective": obj, "verbose": -1, "num_threads": 1}, bpl.dataset(X, y, qid=qid), 3)
    finally:
        mlflow.lightgbm.autolog(disable=True)
    assert mlflow.get_run(run.info.run_id).data.params["objective"] == "LightGBMObjective('mpboost', ddf='ldd')"
    logged = mlflow.search_logged_models(experiment_ids=[run.info.experiment_id], output_format="list")
    assert bpl.objective_of(mlflow.lightgbm.load_model(logged[0].model_uri)) is None
    with pytest.warns(UserWarning, match="pass objective="):
        assert bpl.objective_of(mlflow.lightgbm.load_model(_logged(booster, bpl.log_model))) is None
    rec = bpl.objective_of(mlflow.lightgbm.load_model(_logged(booster, bpl.log_model, objective=obj)))
    assert (rec.name, dict(rec.params)) == ("mpboost", {"ddf": "ldd"})


def test_autolog_names_the_boostplug_objective_of_a_ranker(store) -> None:
    X, y, qid = _data()
    mlflow.lightgbm.autolog(log_models=False, log_datasets=False, silent=True)
    try:
        with mlflow.start_run() as run:
            bpl.LGBMRanker(objective="mpboost", ddf="ldd", n_estimators=3, verbose=-1, n_jobs=1).fit(X, y, qid=qid)
        logged = mlflow.get_run(run.info.run_id).data.params["objective"]
    finally:
        mlflow.lightgbm.autolog(disable=True)
    assert "object at 0x" not in logged
    assert "mpboost" in logged and "ldd" in logged
