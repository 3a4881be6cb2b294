"""Saved models record the boostplug objective that trained them and convert with treelite."""

from __future__ import annotations

import json
import pickle

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug._model_record import ObjectiveRecord, record_for

N_Q, PER_Q, N_F = 30, 8, 5


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = N_Q * PER_Q
    X = rng.normal(size=(n, N_F))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=n) + 1), 0, 3)
    qid = np.repeat(np.arange(N_Q), PER_Q)
    return X, y, qid


LGB_PARAMS = {"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5, "num_threads": 1, "deterministic": True}


def _lgb_model(obj, rounds: int = 6):
    X, y, qid = _data()
    return lgb.train(dict(LGB_PARAMS, objective=obj), bpl.dataset(X, y, qid=qid), rounds)


def _xgb_model(obj, rounds: int = 6):
    X, y, qid = _data()
    return xgb.train(bpx.params(max_depth=2, nthread=1), bpx.dmatrix(X, y, qid=qid), rounds, obj=obj)


# --- the record -------------------------------------------------------------------------


def test_lightgbm_record_round_trips_through_file_string_and_lightgbm_itself(tmp_path) -> None:
    obj = bpl.objective("mpboost", ddf="ldd", alpha=0.3)
    booster = _lgb_model(obj)
    path = tmp_path / "m.txt"
    bpl.save_model(booster, path, objective=obj)
    text = path.read_text()
    line = [ln for ln in text.splitlines() if ln.startswith("[boostplug_objective: ")]
    assert len(line) == 1
    assert json.loads(line[0][len("[boostplug_objective: "):-1])["params"] == {"alpha": 0.3, "ddf": "ldd"}
    X, _, _ = _data(1)
    expected = booster.predict(X)
    # LightGBM loads the file and the string, ignores the record, predicts the same ...
    for loaded in (lgb.Booster(model_file=str(path)), lgb.Booster(model_str=text)):
        np.testing.assert_array_equal(loaded.predict(X), expected)
        # ... and writes the record out again when it saves the loaded model.
        again = loaded.model_to_string()
        assert line[0] in again.splitlines()
        np.testing.assert_array_equal(lgb.Booster(model_str=again).predict(X), expected)
    want = ObjectiveRecord("mpboost", {"ddf": "ldd", "alpha": 0.3})
    for source in (path, str(path), bpl.load_model(path), lgb.Booster(model_file=str(path)),
                   bpl.load_model(model_str=text)):
        rec = bpl.objective_of(source)
        assert (rec.name, dict(rec.params), dict(rec.fingerprints)) == (want.name, want.params, {})
    # The rebuilt objective is the one that trained the model.
    rebuilt = bpl.objective(rec.name, **rec.params_with())
    assert (rebuilt.name, rebuilt.params) == (obj.name, obj.params)


def test_lightgbm_record_objective_then_save_and_pickle(tmp_path) -> None:
    obj = bpl.objective("ndcg_boost", label_gain=[0, 1, 3, 7])
    booster = bpl.record_objective(_lgb_model(obj), obj)
    bpl.save_model(booster, tmp_path / "m.txt")
    assert dict(bpl.objective_of(tmp_path / "m.txt").params) == {"label_gain": [0, 1, 3, 7]}
    assert bpl.objective_of(pickle.loads(pickle.dumps(booster))).name == "ndcg_boost"
    # A loaded model saved again keeps its record; saving with another objective replaces it.
    loaded = bpl.load_model(tmp_path / "m.txt")
    bpl.save_model(loaded, tmp_path / "again.txt")
    assert bpl.objective_of(tmp_path / "again.txt").name == "ndcg_boost"
    bpl.save_model(loaded, tmp_path / "other.txt", objective="qbrank")
    text = (tmp_path / "other.txt").read_text()
    assert text.count("[boostplug_objective: ") == 1
    assert bpl.objective_of(tmp_path / "other.txt").name == "qbrank"


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_xgboost_record_survives_plain_save_model_and_pickle(tmp_path, suffix: str) -> None:
    obj = bpx.objective("mpboost", ddf="logitdd", beta=0.25)
    booster = bpx.record_objective(_xgb_model(obj), obj)
    booster.save_model(tmp_path / f"plain{suffix}")  # XGBoost's own save keeps the attribute
    bpx.save_model(booster, tmp_path / f"bp{suffix}")
    want = {"ddf": "logitdd", "beta": 0.25}
    for source in (tmp_path / f"plain{suffix}", str(tmp_path / f"bp{suffix}"), bpx.load_model(tmp_path / f"bp{suffix}"),
                   pickle.loads(pickle.dumps(booster))):
        rec = bpx.objective_of(source)
        assert (rec.name, dict(rec.params)) == ("mpboost", want)
    X, _, _ = _data(1)
    np.testing.assert_array_equal(bpx.load_model(tmp_path / f"bp{suffix}").predict(xgb.DMatrix(X)),
                                  booster.predict(xgb.DMatrix(X)))


def test_xgboost_save_model_records_the_objective_given(tmp_path) -> None:
    obj = bpx.objective("rankboost")
    booster = _xgb_model(obj)
    assert bpx.objective_of(booster) is None
    bpx.save_model(booster, tmp_path / "m.json", objective=obj)
    assert bpx.objective_of(tmp_path / "m.json").name == "rankboost"


def test_same_encoding_in_both_frameworks(tmp_path) -> None:
    lgb_booster = _lgb_model(bpl.objective("qbrank", w=0.25, tau=0.5))
    bpl.save_model(lgb_booster, tmp_path / "m.txt", objective=bpl.objective("qbrank", w=0.25, tau=0.5))
    xgb_booster = bpx.record_objective(_xgb_model(bpx.objective("qbrank", w=0.25, tau=0.5)),
                                       bpx.objective("qbrank", w=0.25, tau=0.5))
    line = next(ln for ln in (tmp_path / "m.txt").read_text().splitlines() if ln.startswith("[boostplug_objective"))
    assert line == f"[boostplug_objective: {xgb_booster.attr('boostplug_objective')}]"
    assert bpl.objective_of(tmp_path / "m.txt") == bpx.objective_of(xgb_booster)


def test_builtin_objective_models_record_nothing(tmp_path) -> None:
    X, y, qid = _data()
    booster = lgb.train(dict(LGB_PARAMS, objective="lambdarank"), bpl.dataset(X, y, qid=qid), 3)
    booster.save_model(tmp_path / "m.txt")
    assert bpl.objective_of(booster) is None
    assert bpl.objective_of(tmp_path / "m.txt") is None
    assert bpl.load_model(tmp_path / "m.txt").params["objective"] == "lambdarank"
    xb = xgb.train({"objective": "rank:ndcg", "nthread": 1}, bpx.dmatrix(X, y, qid=qid), 3)
    xb.save_model(tmp_path / "x.json")
    assert bpx.objective_of(xb) is None and bpx.objective_of(tmp_path / "x.json") is None


def test_explicit_pairs_are_recorded_by_fingerprint_and_checked_on_the_way_back(tmp_path) -> None:
    X, y, qid = _data()
    pairs = np.array([[0, 1], [8, 9], [16, 20]])
    obj = bpl.objective("qbrank", pairs=pairs, label_pairs=False)
    booster = lgb.train(dict(LGB_PARAMS, objective=obj), bpl.dataset(X, y, qid=qid), 2)
    bpl.save_model(booster, tmp_path / "m.txt", objective=obj)
    assert "[[0,1]" not in (tmp_path / "m.txt").read_text()  # the indices themselves are not saved
    rec = bpl.objective_of(tmp_path / "m.txt")
    assert dict(rec.params) == {"label_pairs": False}
    assert rec.fingerprints["pairs"].shape == (3, 2)
    with pytest.raises(ValueError, match=r"shape \[3, 2\].*params_with\(pairs=\.\.\.\)"):
        rec.params_with()
    with pytest.raises(ValueError, match="not the ones the model was trained with"):
        rec.params_with(pairs=pairs[::-1])
    # Same pairs as a list or another integer dtype match.
    assert rec.params_with(pairs=pairs.astype(np.int32).tolist())["pairs"] == pairs.tolist()
    with pytest.raises(TypeError, match="were not fingerprinted"):
        rec.params_with(pairs=pairs, w=0.5)


def _tampered(tmp_path, booster, record_json: str):
    text = bpl.model_to_string(booster, objective="mpboost")
    start = text.index("[boostplug_objective: ")
    end = text.index("\n", start)
    path = tmp_path / "tampered.txt"
    path.write_text(text[:start] + f"[boostplug_objective: {record_json}]" + text[end:])
    return path


@pytest.mark.parametrize(
    "record_json, message",
    [
        ('{"format":1,"objective":"lambdamart","params":{}}', "unknown objective 'lambdamart'"),
        ('{"format":1,"objective":"mpboost","params":{"ddf":"cubic"}}', "cubic"),
        ('{"format":1,"objective":"mpboost","params":{"gamma":1}}', "gamma"),
        ('{"format":9,"objective":"mpboost","params":{}}', "format 9, newer"),
        ('{"objective":"mpboost"}', "no valid format"),
        ('{"format":1,"objective":"mpboost",', "not JSON"),
        ('[1,2]', "not a JSON object"),
    ],
    ids=["unknown-name", "bad-value", "unknown-param", "newer-format", "no-format", "not-json", "not-object"],
)
def test_an_invalid_record_is_refused_on_read(tmp_path, record_json: str, message: str) -> None:
    path = _tampered(tmp_path, _lgb_model(bpl.objective("mpboost"), rounds=2), record_json)
    lgb.Booster(model_file=str(path))  # LightGBM itself does not care
    with pytest.raises(ValueError, match=message):
        bpl.objective_of(path)
    with pytest.raises(ValueError, match=message):
        bpl.load_model(path)


def test_xgboost_invalid_record_is_refused(tmp_path) -> None:
    booster = _xgb_model(bpx.objective("mpboost"), rounds=2)
    booster.set_attr(boostplug_objective='{"format":1,"objective":"mpboost","params":{"lam":-1}}')
    booster.save_model(tmp_path / "m.json")
    with pytest.raises(ValueError, match="lam"):
        bpx.objective_of(tmp_path / "m.json")
    with pytest.raises(ValueError, match="lam"):
        bpx.load_model(tmp_path / "m.json")


def test_record_refuses_what_is_not_an_objective() -> None:
    with pytest.raises(TypeError, match="got function"):
        record_for(lambda preds, data: (preds, preds))
    with pytest.raises(ValueError, match="unknown objective"):
        record_for("lambdamart")
    with pytest.raises(TypeError, match="got int"):
        bpl.objective_of(3)
    with pytest.raises(TypeError, match="got list"):
        bpx.objective_of([])


# --- treelite -----------------------------------------------------------------------------


def test_treelite_converts_a_lightgbm_model_with_the_record(tmp_path) -> None:
    treelite = pytest.importorskip("treelite")
    obj = bpl.objective("ndcg_boost")
    booster = _lgb_model(obj, rounds=10)
    bpl.save_model(booster, tmp_path / "m.txt", objective=obj)
    X, _, _ = _data(2)
    for model in (treelite.frontend.load_lightgbm_model(str(tmp_path / "m.txt")),
                  treelite.frontend.from_lightgbm(bpl.load_model(tmp_path / "m.txt"))):
        got = np.asarray(treelite.gtil.predict(model, X)).reshape(-1)
        np.testing.assert_allclose(got, booster.predict(X), rtol=0, atol=1e-6)


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_treelite_converts_an_xgboost_model_with_the_record(tmp_path, suffix: str) -> None:
    treelite = pytest.importorskip("treelite")
    obj = bpx.objective("qbrank")
    booster = _xgb_model(obj, rounds=10)
    bpx.save_model(booster, tmp_path / f"m{suffix}", objective=obj)
    X, _, _ = _data(2)
    expected = booster.predict(xgb.DMatrix(X), output_margin=True)
    for model in (treelite.frontend.load_xgboost_model(str(tmp_path / f"m{suffix}"), format_choice="inspect"),
                  treelite.frontend.from_xgboost(bpx.load_model(tmp_path / f"m{suffix}"))):
        got = np.asarray(treelite.gtil.predict(model, X)).reshape(-1)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
