"""Saved models record the boostplug objective that trained them, convert with treelite,
and LightGBM models refit like LightGBM's own ``Booster.refit``.

The booster JSON model file (boostplug/boosters/_model_file.py): every booster type round-trips
bit for bit (through a file and through ``to_dict``/``from_dict``), every class of corruption is a
ValueError naming the file (or "the model dict") and the field (never a model that predicts wrongly
or an IndexError at predict), and saving is atomic.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost, RankingBooster, load
from boostplug.frameworks.model_record import ObjectiveRecord, record_for, without_checksum


N_Q, PER_Q, N_F = 30, 8, 5

# How a LightGBM model file holds the record (boostplug/frameworks/lightgbm/model_file.py), decoded
# here by hand.
OURS = "[objective: lambdarank_by_boostplug_refit_with_boostplug.lightgbm.refit_"


def _record_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.startswith(OURS)]
    assert len(lines) == 1
    return lines[0]


def _record_json(text: str) -> str:
    encoded = _record_line(text)[len(OURS):-1]
    assert encoded == encoded.lower()
    return base64.b32decode(encoded.upper() + "=" * (-len(encoded) % 8)).decode("utf-8")


def _with_record_json(text: str, record_json: str) -> str:
    encoded = base64.b32encode(record_json.encode("utf-8")).decode("ascii").rstrip("=").lower()
    return text.replace(_record_line(text), f"{OURS}{encoded}]")


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
    line = _record_line(text)
    assert json.loads(_record_json(text))["params"] == {"alpha": 0.3, "ddf": "ldd"}
    assert "[boostplug_objective" not in text
    X, _, _ = _data(1)
    expected = booster.predict(X)
    # LightGBM loads the file and the string, ignores the record, predicts the same ...
    for loaded in (lgb.Booster(model_file=str(path)), lgb.Booster(model_str=text)):
        np.testing.assert_array_equal(loaded.predict(X), expected)
        # ... and writes the record out again when it saves the loaded model (MLflow's log_model does).
        again = loaded.model_to_string()
        assert line in again.splitlines()
        np.testing.assert_array_equal(lgb.Booster(model_str=again).predict(X), expected)
        loaded.save_model(tmp_path / "plain.txt")
        assert bpl.objective_of(tmp_path / "plain.txt").name == "mpboost"
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
    assert json.loads(_record_json(text))["objective"] == "qbrank"
    assert text.count("objective=lambdarank") == 1
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
    # the file's record carries the file's checksum besides; the rest is the same JSON
    assert "model_sha256" in _record_json((tmp_path / "m.txt").read_text())
    assert without_checksum(_record_json((tmp_path / "m.txt").read_text())) == xgb_booster.attr("boostplug_objective")
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
    with pytest.raises(ValueError, match="params_with"):
        bpl.refit(bpl.load_model(tmp_path / "m.txt"), X, y, qid=qid)


def _tampered(tmp_path, booster, record_json: str):
    path = tmp_path / "tampered.txt"
    path.write_text(_with_record_json(bpl.model_to_string(booster, objective="mpboost"), record_json))
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


def test_a_damaged_record_line_is_refused_on_read(tmp_path) -> None:
    text = bpl.model_to_string(_lgb_model(bpl.objective("mpboost"), rounds=2), objective="mpboost")
    line = _record_line(text)
    for damaged, message in ((line[:-1] + "1]", "not base32"), (line[:-1], "cut short")):
        (tmp_path / "m.txt").write_text(text.replace(line, damaged))
        with pytest.raises(ValueError, match=message):
            bpl.objective_of(tmp_path / "m.txt")


# --- what other tools make of the file ------------------------------------------------------------


def _earlier_layout(text: str) -> str:
    """The layout boostplug wrote before: ``[objective: custom]``, no header objective, the record as a
    parameter LightGBM does not know (and without a checksum, which came later)."""
    record_json = without_checksum(_record_json(text))
    text = text.replace(_record_line(text), "[objective: custom]").replace("objective=lambdarank\n", "")
    return text.replace("end of parameters", f"[boostplug_objective: {record_json}]\nend of parameters", 1)


def test_plain_lightgbm_loads_the_file_without_a_warning_and_earlier_files_still_load(tmp_path) -> None:
    obj = bpl.objective("mpboost", ddf="ldd")
    booster = _lgb_model(obj)
    bpl.save_model(booster, tmp_path / "m.txt", objective=obj)
    (tmp_path / "earlier.txt").write_text(_earlier_layout((tmp_path / "m.txt").read_text()))
    X, _, _ = _data(1)

    def said(path):  # what a fresh LightGBM (its log level untouched by verbose=-1) says as it loads the file
        code = "import sys, lightgbm as lgb; lgb.Booster(model_file=sys.argv[1]); print('loaded')"
        run = subprocess.run([sys.executable, "-W", "always", "-c", code, str(path)], capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0 and "loaded" in run.stdout, run.stderr
        return run.stdout + run.stderr

    text = said(tmp_path / "m.txt")
    assert "Warning" not in text and "unrecognized" not in text
    np.testing.assert_array_equal(lgb.Booster(model_file=str(tmp_path / "m.txt")).predict(X), booster.predict(X))
    # The earlier layout: LightGBM warns about the record's line, and boostplug still reads it.
    assert "Ignoring unrecognized parameter 'boostplug_objective'" in said(tmp_path / "earlier.txt")
    earlier = lgb.Booster(model_file=str(tmp_path / "earlier.txt"))
    np.testing.assert_array_equal(earlier.predict(X), booster.predict(X))
    for source in (tmp_path / "earlier.txt", bpl.load_model(tmp_path / "earlier.txt"), earlier):
        assert bpl.objective_of(source) == bpl.objective_of(tmp_path / "m.txt")
    # Saved again by boostplug, an earlier file takes today's layout.
    assert "[boostplug_objective" not in bpl.model_to_string(bpl.load_model(tmp_path / "earlier.txt"))


def test_lightgbm_refit_names_what_to_call_and_onnxmltools_converts(tmp_path) -> None:
    onnxmltools = pytest.importorskip("onnxmltools")
    ort = pytest.importorskip("onnxruntime")
    from onnxmltools.convert.common.data_types import FloatTensorType

    obj = bpl.objective("qbrank")
    bpl.save_model(_lgb_model(obj), tmp_path / "m.txt", objective=obj)
    loaded = lgb.Booster(model_file=str(tmp_path / "m.txt"))
    X, y, qid = _data(1)
    with pytest.raises(lgb.basic.LightGBMError, match=r"refit_with_boostplug\.lightgbm\.refit"):
        loaded.refit(X, y, group=np.full(N_Q, PER_Q))
    model = onnxmltools.convert_lightgbm(loaded, initial_types=[("X", FloatTensorType([None, N_F]))])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"X": X.astype(np.float32)})[0].reshape(-1)
    np.testing.assert_allclose(got, loaded.predict(X), rtol=1e-5, atol=1e-5)
    # what the refit message points to
    refitted = bpl.refit(bpl.load_model(tmp_path / "m.txt"), X, y, qid=qid)
    assert bpl.objective_of(refitted).name == "qbrank"


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


# --- LightGBM refit -----------------------------------------------------------------------


def _l2_objective(preds, train_data):
    """LightGBM's own ``regression`` gradients, in its float32 arithmetic."""
    y = np.asarray(train_data.get_label(), dtype=np.float32).astype(np.float64)
    g = preds - y
    h = np.ones_like(g)
    w = train_data.get_weight()
    if w is not None:
        w = np.asarray(w, dtype=np.float32).astype(np.float64)
        g, h = g * w, w
    return g.astype(np.float32), h.astype(np.float32)


def _leaves(booster) -> list[float]:
    trees = booster.dump_model()["tree_info"]
    return [booster.get_leaf_output(t, j) for t, info in enumerate(trees) for j in range(info["num_leaves"])]


@pytest.mark.parametrize(
    "extra, decay, with_weight, with_init",
    [
        ({}, 0.9, False, False),
        ({"lambda_l2": 2.0, "lambda_l1": 0.5, "max_delta_step": 0.05}, 0.3, True, False),
        ({"reg_lambda": 1.0, "learning_rate": 0.3}, 0.0, False, True),
    ],
    ids=["defaults", "l1-l2-max_delta_step-weights", "alias-init_score-decay0"],
)
def test_refit_matches_lightgbms_own_refit_on_its_regression_objective(extra, decay, with_weight, with_init) -> None:
    X, y, qid = _data()
    booster = lgb.train(dict(LGB_PARAMS, objective="regression", **extra), lgb.Dataset(X, y), 8)
    X2, y2, _ = _data(3)
    rng = np.random.default_rng(4)
    w = rng.uniform(0.5, 2.0, size=len(y2)) if with_weight else None
    init = rng.normal(size=len(y2)) if with_init else None
    theirs = booster.refit(X2, y2, decay_rate=decay, weight=w, init_score=init)
    ours = bpl.refit(booster, X2, y2, group_ptr=np.arange(len(y2) + 1), weight=w, init_score=init,
                     objective=_l2_objective, decay_rate=decay)
    np.testing.assert_allclose(_leaves(ours), _leaves(theirs), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours.predict(X2), theirs.predict(X2), rtol=1e-12, atol=1e-14)
    assert _leaves(ours) != _leaves(booster)


def test_refit_with_a_boostplug_objective_where_lightgbm_refuses(tmp_path) -> None:
    obj = bpl.objective("mpboost", ddf="ldd")
    booster = _lgb_model(obj)
    X2, y2, qid2 = _data(5)
    with pytest.raises(lgb.basic.LightGBMError, match="null objective"):
        booster.refit(X2, y2, group=np.full(N_Q, PER_Q))
    # decay 1 keeps every leaf; the recorded objective is the one used by default.
    kept = bpl.refit(bpl.record_objective(booster, obj), X2, y2, qid=qid2, decay_rate=1.0)
    assert _leaves(kept) == _leaves(booster)
    bpl.save_model(booster, tmp_path / "m.txt")
    from_file = bpl.refit(bpl.load_model(tmp_path / "m.txt"), bpl.dataset(X2, y2, qid=qid2))
    explicit = bpl.refit(booster, X2, y2, qid=qid2, objective=bpl.objective("mpboost", ddf="ldd"))
    assert _leaves(from_file) == _leaves(explicit) != _leaves(booster)
    assert bpl.objective_of(from_file) == bpl.objective_of(booster)
    # By hand for the first tree: its gradients are the objective's at score 0.
    g, h = bpl.objective("mpboost", ddf="ldd")(np.zeros(len(y2)), bpl.dataset(X2, y2, qid=qid2).construct())
    leaf = booster.predict(X2, pred_leaf=True)[:, 0]
    n_leaves = booster.dump_model()["tree_info"][0]["num_leaves"]
    g32, h32 = g.astype(np.float32).astype(float), h.astype(np.float32).astype(float)
    fresh = -np.bincount(leaf, g32, n_leaves) / (np.bincount(leaf, h32, n_leaves) + 1e-15) * 0.1
    old = np.array([booster.get_leaf_output(0, j) for j in range(n_leaves)])
    np.testing.assert_allclose(_leaves(explicit)[:n_leaves], 0.9 * old + 0.1 * fresh, rtol=1e-9)


def test_refit_refuses_what_it_cannot_do() -> None:
    X, y, qid = _data()
    plain = _lgb_model(bpl.objective("mpboost"), rounds=2)
    with pytest.raises(ValueError, match="records no boostplug objective"):
        bpl.refit(plain, X, y, qid=qid)
    with pytest.raises(ValueError, match=r"decay_rate must be a number in \[0, 1\], got 1.5"):
        bpl.refit(plain, X, y, qid=qid, objective="mpboost", decay_rate=1.5)
    with pytest.raises(ValueError, match="pass the labels"):
        bpl.refit(plain, X, qid=qid, objective="mpboost")
    with pytest.raises(ValueError, match="come from the Dataset"):
        bpl.refit(plain, bpl.dataset(X, y, qid=qid), y, objective="mpboost")
    with pytest.raises(TypeError, match="got int"):
        bpl.refit(plain, X, y, qid=qid, objective=3)
    freed = bpl.dataset(X, y, qid=qid).construct()
    with pytest.raises(ValueError, match="no longer holds its raw data"):
        bpl.refit(plain, freed, objective="mpboost")
    smooth = lgb.train(dict(LGB_PARAMS, objective=bpl.objective("mpboost"), path_smooth=1.0),
                       bpl.dataset(X, y, qid=qid), 2)
    with pytest.raises(ValueError, match="path_smooth=1.0 is not supported"):
        bpl.refit(smooth, X, y, qid=qid, objective="mpboost")


# --- the scikit-learn rankers -----------------------------------------------------------------


def test_lgbm_ranker_models_carry_the_record(tmp_path) -> None:
    X, y, qid = _data()
    ranker = bpl.LGBMRanker(objective="mpboost", ddf="ldd", n_estimators=4, num_leaves=4, verbose=-1, n_jobs=1)
    ranker.fit(X, y, qid=qid)
    want = ("mpboost", {"ddf": "ldd"})
    rec = bpl.objective_of(ranker.booster_)
    assert (rec.name, dict(rec.params)) == want
    ranker.save_model(tmp_path / "ranker.txt")
    bpl.save_model(ranker.booster_, tmp_path / "booster.txt")
    for path in ("ranker.txt", "booster.txt"):
        rec = bpl.objective_of(tmp_path / path)
        assert (rec.name, dict(rec.params)) == want
    loaded = bpl.LGBMRanker().load_model(tmp_path / "ranker.txt")
    assert bpl.objective_of(loaded.booster_) == bpl.objective_of(tmp_path / "ranker.txt")
    # the recorded objective refits the ranker's booster
    X2, y2, qid2 = _data(6)
    assert _leaves(bpl.refit(ranker.booster_, X2, y2, qid=qid2)) != _leaves(ranker.booster_)


def test_xgb_ranker_models_carry_the_record(tmp_path) -> None:
    X, y, qid = _data()
    ranker = bpx.XGBRanker(objective="ndcg_boost", sigma=1.5, n_estimators=4, max_depth=2, n_jobs=1)
    ranker.fit(X, y, qid=qid)
    ranker.save_model(tmp_path / "ranker.json")
    for source in (ranker.get_booster(), tmp_path / "ranker.json"):
        rec = bpx.objective_of(source)
        assert (rec.name, dict(rec.params)) == ("ndcg_boost", {"sigma": 1.5})


def test_record_added_to_model_text_without_a_parameters_section() -> None:
    X, _, _ = _data(1)
    booster = _lgb_model(bpl.objective("mpboost"), rounds=2)
    text = booster.model_to_string()
    start, end = text.index("\nparameters:\n"), text.index("end of parameters\n") + len("end of parameters\n")
    bare = text[:start + 1] + text[end:]
    assert "parameters:" not in bare
    loaded = bpl.load_model(model_str=bpl.model_to_string(lgb.Booster(model_str=bare), objective="qbrank"))
    assert bpl.objective_of(loaded).name == "qbrank"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


# -- the booster JSON model file (boostplug/boosters/_model_file.py) -------------------------------
def data(seed: int = 0, n_queries: int = 5, max_docs: int = 10, n_feat: int = 4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_docs + 1, size=n_queries)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, n_feat)), 1)
    X[rng.random((n, n_feat)) < 0.15] = np.nan  # missing values: -inf thresholds
    y = rng.integers(0, 3, size=n).astype(np.float64)
    return X, y, np.repeat(np.arange(n_queries), sizes)


BOOSTERS = {
    "rb-d": lambda: RankBoost(variant="rb-d", n_rounds=8, thresholds="all"),
    "rb-c": lambda: RankBoost(variant="rb-c", n_rounds=8),
    "rankboost+": lambda: RankBoost(variant="rankboost+", n_rounds=8, random_state=0),
    "rb-ranklib": lambda: RankBoost(variant="rb-c", n_rounds=8, thresholds="ranklib"),  # float32 stumps
    "adarank": lambda: AdaRank(measure="ndcg@5", n_rounds=8, tolerance=None, update="multiplicative"),
    "mpboost": lambda: MPBoost(ddf="ldd", n_rounds=8),
    "ndcgboost": lambda: NDCGBoost(n_rounds=8),
}


@pytest.fixture(scope="module")
def fitted():
    X, y, qid = data()
    return X, {name: make().fit(X, y, qid=qid) for name, make in BOOSTERS.items()}


@pytest.mark.parametrize("name", list(BOOSTERS))
def test_every_booster_round_trips_bit_for_bit(name, fitted, tmp_path):
    X, models = fitted
    model = models[name]
    path = tmp_path / f"{name}.json"
    model.save(path)
    back = load(path)
    assert type(back) is type(model) and back.to_dict() == model.to_dict()
    assert np.array_equal(back.predict(X), model.predict(X))
    assert type(back).load(path).to_dict() == model.to_dict()


@pytest.mark.parametrize("name", list(BOOSTERS))
def test_from_dict_gives_what_load_gives(name, fitted, tmp_path):
    X, models = fitted
    model = models[name]
    model.save(tmp_path / "m.json")
    from_file, from_dict = load(tmp_path / "m.json"), RankingBooster.from_dict(model.to_dict())
    assert type(from_dict) is type(model) and from_dict.to_dict() == from_file.to_dict() == model.to_dict()
    assert np.array_equal(from_dict.predict(X), model.predict(X))
    assert type(model).from_dict(model.to_dict()).get_params() == model.get_params()
    # neither the dict nor the model built from it shares an object with the model it came from
    d = model.to_dict()
    d["rankers"][0]["feature"] = d["history"][0]["round"] = -1
    from_dict.rankers_[0]["feature"] = from_dict.history_[0]["round"] = -1
    assert model.rankers_[0]["feature"] >= 0 and model.history_[0]["round"] == 1


def test_from_dict_validates_as_load_does(fitted):
    _, models = fitted
    d = models["mpboost"].to_dict()
    d["rankers"][0] = dict(d["rankers"][0], feature=4)
    with pytest.raises(ValueError, match=r"^the model dict: rankers\[0\]\.feature = 4 is outside \[0, 4\)"):
        RankingBooster.from_dict(d)
    with pytest.raises(ValueError, match=r"^the model dict holds a MPBoost, not a RankBoost$"):
        RankBoost.from_dict(models["mpboost"].to_dict())
    with pytest.raises(ValueError, match=r"^the model dict is not a boostplug booster JSON file"):
        RankingBooster.from_dict({"format": "lightgbm"})


def test_the_fixture_covers_minus_inf_thresholds_and_float32(fitted):
    _, models = fitted
    thresholds = [r["threshold"] for m in models.values() for r in m.rankers_ if r["kind"] == "stump"]
    assert -np.inf in thresholds
    assert any(r.get("float32") for r in models["rb-ranklib"].rankers_)


def _corrupt(tmp_path, models, name, mutate):
    path = tmp_path / "bad.json"
    models[name].save(path)
    d = json.loads(path.read_text())
    mutate(d)
    path.write_text(json.dumps(d))
    return path


def _set_ranker(key, value, t=0):
    def mutate(d):
        d["rankers"][t][key] = value
    return mutate


def _del(*keys):
    def mutate(d):
        obj = d
        for k in keys[:-1]:
            obj = obj[k]
        del obj[keys[-1]]
    return mutate


def _top(key, value):
    def mutate(d):
        d[key] = value
    return mutate


def _weight(value, t=1):
    def mutate(d):
        d["weights"][t] = value
    return mutate


CORRUPTIONS = [
    # feature indices: exact integer type, within n_features_in (4)
    ("mpboost", _set_ranker("feature", -1), r"rankers\[0\]\.feature = -1 is outside \[0, 4\)"),
    ("mpboost", _set_ranker("feature", 4), r"rankers\[0\]\.feature = 4 is outside \[0, 4\)"),
    ("mpboost", _set_ranker("feature", 2.7), r"rankers\[0\]\.feature must be an integer, got a JSON float \(2\.7\)"),
    ("mpboost", _set_ranker("feature", 2.0), r"rankers\[0\]\.feature must be an integer, got a JSON float"),
    ("mpboost", _set_ranker("feature", "3"), r"rankers\[0\]\.feature must be an integer, got a JSON str \('3'\)"),
    ("mpboost", _set_ranker("feature", True), r"rankers\[0\]\.feature must be an integer, got a boolean"),
    ("adarank", _set_ranker("feature", None), r"rankers\[0\]\.feature must be an integer, got null"),
    # thresholds: finite or -Infinity
    ("mpboost", _set_ranker("threshold", float("nan")), r"rankers\[0\]\.threshold must be finite or -Infinity"),
    ("mpboost", _set_ranker("threshold", float("inf")), r"rankers\[0\]\.threshold must be finite or -Infinity"),
    ("mpboost", _set_ranker("threshold", "0.5"), r"rankers\[0\]\.threshold must be a number"),
    ("mpboost", _del("rankers", 0, "threshold"), r"rankers\[0\] \(a stump\) has no 'threshold'"),
    # kinds and keys
    ("mpboost", _del("rankers", 2, "kind"), r"rankers\[2\] has no 'kind'"),
    ("mpboost", _set_ranker("kind", "tree", 3), r"rankers\[3\]\.kind = 'tree' is not a known weak ranker kind"),
    ("mpboost", _set_ranker("treshold", 0.5), r"rankers\[0\] \(a stump\) has unknown keys \['treshold'\]"),
    ("rb-ranklib", _set_ranker("float32", "yes"), r"rankers\[0\]\.float32 must be true or false"),
    ("mpboost", lambda d: d["rankers"].__setitem__(0, 1), r"rankers\[0\] must be a JSON object"),
    # weights
    ("mpboost", _weight(float("nan")), r"weights\[1\] must be finite, got nan"),
    ("mpboost", _weight(float("inf")), r"weights\[1\] must be finite, got inf"),
    ("mpboost", _weight("0.3"), r"weights\[1\] must be a number"),
    ("mpboost", _weight(True), r"weights\[1\] must be a number, got a boolean"),
    # numbers JSON can spell but float64 cannot hold (json reads a 400-digit integer exactly, as an int)
    ("mpboost", _weight(10**400), r"weights\[1\] must be finite, got 100000000000\.\.\.\(401 digits\), beyond the float64"),
    ("mpboost", _weight(-(10**400)), r"weights\[1\] must be finite, got -100000000000\.\.\.\(401 digits\)"),
    ("mpboost", _set_ranker("threshold", 10**400),
     r"rankers\[0\]\.threshold must be finite or -Infinity .*\(401 digits\), beyond the float64 range"),
    ("mpboost", _set_ranker("threshold", -(10**400)), r"rankers\[0\]\.threshold must be finite or -Infinity"),
    ("mpboost", _set_ranker("feature", 10**400), r"rankers\[0\]\.feature = 100000000000\.\.\.\(401 digits\) is outside"),
    ("mpboost", _top("n_features_in", 2**31), r"n_features_in = 2147483648 is outside \[1, 2147483648\)"),
    # weights whose absolute values overflow when summed: a stump ensemble would predict inf
    ("mpboost", lambda d: d.__setitem__("weights", [1.7e308] * len(d["weights"])),
     r"weights\[1\] = 1\.7e\+308 makes \|weights\[0\]\| \+ \.\.\. \+ \|weights\[1\]\| overflow float64"),
    ("adarank", lambda d: d.__setitem__("weights", [-1e308] * len(d["weights"])), r"weights\[1\] = -1e\+308 makes"),
    # the envelope
    ("mpboost", _top("version", True), r"has booster format version True"),
    ("mpboost", _top("version", "1"), r"has booster format version '1'"),
    ("mpboost", _top("n_features_in", 2.5), r"n_features_in must be an integer"),
    ("mpboost", _top("n_features_in", 0), r"n_features_in = 0 is outside \[1, 2147483648\)"),
    ("mpboost", _top("n_features_in", 2), r"rankers\[\d+\]\.feature = \d is outside \[0, 2\)"),
    ("mpboost", _del("class"), r"has no 'class'"),
    ("mpboost", _del("weights"), r"has no 'weights'"),
    ("mpboost", _top("extra", 1), r"has unknown keys \['extra'\]"),
    ("mpboost", _top("best_iteration", 99), r"best_iteration = 99 is outside \[1, 9\)"),
    ("mpboost", _top("best_iteration", 1.5), r"best_iteration must be an integer"),
    ("mpboost", _top("stop_reason", 3), r"stop_reason must be a string or null"),
    ("mpboost", _top("history", {"a": 1}), r"history must be a JSON list of objects"),
    ("mpboost", _top("params", {"n_rounds": 8, "depth": 3}), r"params has keys \['depth'\] that MPBoost does not take"),
    ("mpboost", _top("fitted", {"span_size_": 1}), r"fitted has keys \['span_size_'\] that a MPBoost model does not have"),
    ("rb-c", _top("fitted", {"undefined_round_": None, "span_size_": -1, "pruned_round_": None}),
     r"fitted\.span_size_ = -1 is outside >= 0"),
    ("rb-c", _top("fitted", {"undefined_round_": None, "span_size_": 0, "pruned_round_": 0.5}),
     r"fitted\.pruned_round_ must be an integer"),
    ("rb-c", _top("fitted", {"undefined_round_": {"ranker": {"kind": "stump", "feature": 9, "threshold": 0.0}},
                             "span_size_": 0, "pruned_round_": None}),
     r"fitted\.undefined_round_\.ranker\.feature = 9 is outside \[0, 4\)"),
]


@pytest.mark.parametrize("name,mutate,match", CORRUPTIONS, ids=[c[2][:48] for c in CORRUPTIONS])
def test_each_corruption_is_a_value_error_naming_the_file_and_field(name, mutate, match, fitted, tmp_path):
    _, models = fitted
    path = _corrupt(tmp_path, models, name, mutate)
    with pytest.raises(ValueError, match=match) as info:
        load(path)
    assert str(info.value).startswith(str(path))


def test_weights_summing_to_just_below_overflow_load_and_predict_finitely(fitted, tmp_path):
    X, models = fitted
    d = models["mpboost"].to_dict()
    d["weights"] = [1.7e308 / len(d["weights"])] * len(d["weights"])  # the most a stump ensemble may hold
    scores = RankingBooster.from_dict(d).predict(X)
    assert np.isfinite(scores).all() and scores.max() > 1e307


def test_integers_beyond_the_digit_limit_name_the_file_or_the_dict(fitted, tmp_path):
    _, models = fitted
    path = tmp_path / "m.json"
    text = json.dumps(models["mpboost"].to_dict()).replace('"weights": [', '"weights": [' + "1" * 5000 + ", ", 1)
    path.write_text(text)
    with pytest.raises(ValueError, match=r"m\.json is not a boostplug booster JSON file \(it holds a number that "
                                         r"cannot be read"):
        load(path)
    d = models["mpboost"].to_dict()
    d["weights"][0] = 10**5000
    with pytest.raises(ValueError, match="the model dict cannot be read as a model file"):
        RankingBooster.from_dict(d)


def test_old_checks_still_hold(fitted, tmp_path):
    _, models = fitted
    path = _corrupt(tmp_path, models, "mpboost", _top("class", "XGBRanker"))
    with pytest.raises(ValueError, match="unknown booster class 'XGBRanker'"):
        load(path)
    path = _corrupt(tmp_path, models, "rb-c", _del("fitted", "span_size_"))
    with pytest.raises(ValueError, match=r"lacks the fitted attributes \['span_size_'\]"):
        load(path)
    path = _corrupt(tmp_path, models, "mpboost", lambda d: None)
    with pytest.raises(ValueError, match="holds a MPBoost, not a RankBoost"):
        RankBoost.load(path)
    (tmp_path / "deep.json").write_text("[" * 100_000)
    with pytest.raises(ValueError, match="not valid JSON"):
        load(tmp_path / "deep.json")


# ---- atomic save --------------------------------------------------------------------------------
def test_a_failed_save_leaves_the_old_model_whole(fitted, tmp_path, monkeypatch):
    X, models = fitted
    path = tmp_path / "model.json"
    models["mpboost"].save(path)
    before = path.read_bytes()

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("boostplug._atomic.os.fsync", disk_full)
    with pytest.raises(OSError, match="could not write"):
        models["ndcgboost"].save(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.json"]  # no temporary file left behind
    assert np.array_equal(load(path).predict(X), models["mpboost"].predict(X))


def test_an_unwritable_parameter_leaves_the_old_model_whole(tmp_path):
    X, y, qid = data(1)
    path = tmp_path / "model.json"
    AdaRank(n_rounds=2).fit(X, y, qid=qid).save(path)
    before = path.read_bytes()
    custom = AdaRank(measure=lambda s, l, g: np.zeros(g.shape[0] - 1), n_rounds=2).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="callable"):
        custom.save(path)
    assert path.read_bytes() == before
    assert isinstance(RankingBooster.load(path), AdaRank)


def test_a_feature_ranker_whose_product_overflows_is_refused_at_predict(fitted, tmp_path):
    X, models = fitted
    # a finite weight whose absolute sum is finite: the file itself is valid (without the checksum that
    # refuses the edit, as an earlier boostplug wrote it)
    path = _corrupt(tmp_path, models, "adarank", lambda d: (_weight(1e308, t=0)(d), d.pop("sha256")))
    model = load(path)
    feature = int(model.rankers_[0]["feature"])
    X = np.nan_to_num(X).clip(-1.0, 1.0)
    X[3, feature] = 2.5  # an ordinary feature value
    with pytest.raises(ValueError, match=rf"row 3: round 1 \(weight 1e\+308 times feature {feature} = "
                                         r"2.5\) makes the score inf") as info:
        model.predict(X)
    assert "AdaRank" in str(info.value)
    with pytest.raises(ValueError, match=r"makes the score -?inf"):
        list(model.staged_predict(X))
    X[3, feature] = 1.0  # the same model on features its weight can multiply predicts finitely
    assert np.isfinite(model.predict(X)).all()


def test_keyed_pairs_are_recorded_by_fingerprint(tmp_path) -> None:
    """A KeyedPairs table (click pairs keyed by query and document) is saved as a fingerprint of its
    keys and weights, like row-index pairs, and checked on the way back."""
    from boostplug.keyed_pairs import KeyedPairs

    X, y, qid = _data()
    doc = np.arange(len(y)) + 100
    table = KeyedPairs(qid[[0, 8]], doc[[0, 8]], doc[[1, 9]], weight=[1.0, 2.0])
    obj = bpl.objective("qbrank", pairs=table, label_pairs=False, labeled="none")
    booster = lgb.train(dict(LGB_PARAMS, objective=obj), bpl.dataset(X, y, qid=qid, doc=doc), 2)
    bpl.save_model(booster, tmp_path / "m.txt", objective=obj)
    rec = bpl.objective_of(tmp_path / "m.txt")
    assert rec.fingerprints["pairs"].shape == (2,) and rec.fingerprints["pairs"].dtype == "keyed_pairs"
    same = KeyedPairs(qid[[0, 8]].astype(np.int32), doc[[0, 8]].astype(np.int32), doc[[1, 9]], weight=[1.0, 2.0])
    assert rec.params_with(pairs=same)["pairs"] is same
    for other in (KeyedPairs(qid[[0, 8]], doc[[0, 8]], doc[[1, 9]]),                    # no weights
                  KeyedPairs(qid[[0, 8]], doc[[0, 8]], doc[[1, 9]], weight=[1.0, 3.0]),  # other weights
                  KeyedPairs(qid[[0, 8]], doc[[0, 8]], doc[[2, 9]], weight=[1.0, 2.0])):  # another document
        with pytest.raises(ValueError, match="not the ones the model was trained with"):
            rec.params_with(pairs=other)
