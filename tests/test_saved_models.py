"""Saved models record the boostplug objective that trained them, convert with treelite,
and LightGBM models refit like LightGBM's own ``Booster.refit``."""

from __future__ import annotations

import json
import pickle

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.frameworks.model_record import ObjectiveRecord, record_for

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
    with pytest.raises(ValueError, match="params_with"):
        bpl.refit(bpl.load_model(tmp_path / "m.txt"), X, y, qid=qid)


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
