"""Model files saved by boostplug carry a checksum of their content, checked on load.

Before, plausible edits loaded as other models: an AdaRank weight digit, a RankBoost weight x1.01 or
threshold +0.05 in a booster file; a leaf_value digit or num_class=1 -> 2 in a LightGBM file; a
split condition or a leaf of an XGBoost file. Now the booster file's ``sha256`` and the
``model_sha256`` of the LightGBM/XGBoost objective record refuse them, naming the file and saying
that its checksum does not match. Files without a checksum (earlier boostplug versions, the
frameworks' own writers) still load, edits and all: those cannot be told from the original.
"""

from __future__ import annotations

import base64
import json
import re

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.boosters import AdaRank, RankBoost, load
from boostplug.frameworks.lightgbm.model_file import LIGHTGBM_OBJECTIVE, text_with_record
from boostplug.frameworks.model_record import without_checksum
from boostplug.frameworks.xgboost.ubjson import parse_ubjson
from tests.models.test_xgboost_model_trees import ubjson

MISMATCH = r"its checksum does not match its content"


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(80, 4)), 2)
    return X, rng.integers(0, 3, 80).astype(float), np.repeat(np.arange(10), 8)


# ---- boostplug's booster files ---------------------------------------------------------------------
def _booster_edits():
    def weight_digit(d):  # AdaRank: one digit of a weight
        text = repr(d["weights"][0])
        i = next(i for i, c in enumerate(text) if c in "123456789")
        d["weights"][0] = float(text[:i] + str(int(text[i]) % 9 + 1) + text[i + 1:])

    def times(d):
        d["weights"][1] *= 1.01

    def threshold(d):
        r = next(r for r in d["rankers"] if np.isfinite(r.get("threshold", np.nan)))
        r["threshold"] += 0.05

    return [("adarank", weight_digit), ("rankboost", times), ("rankboost", threshold)]


@pytest.fixture(scope="module")
def boosters():
    X, y, qid = _data()
    return X, {"adarank": AdaRank(n_rounds=4, tolerance=None).fit(X, y, qid=qid),
               "rankboost": RankBoost(n_rounds=4).fit(X, y, qid=qid)}


@pytest.mark.parametrize("which, edit", _booster_edits(), ids=["adarank weight digit", "rankboost weight x1.01",
                                                               "rankboost threshold +0.05"])
def test_a_plausible_edit_of_a_booster_file_is_refused_by_its_checksum(boosters, tmp_path, which, edit):
    X, models = boosters
    path = tmp_path / "model.json"
    models[which].save(path)
    d = json.loads(path.read_text())
    assert re.fullmatch(r"[0-9a-f]{64}", d["sha256"])
    edit(d)
    path.write_text(json.dumps(d, indent=1))
    with pytest.raises(ValueError, match=rf"^{path}: {MISMATCH}") as info:
        load(path)
    assert "changed after boostplug saved it" in str(info.value)
    # A file without the checksum (as earlier boostplug versions wrote) loads as before, edit and all.
    del d["sha256"]
    path.write_text(json.dumps(d, indent=1))
    assert not np.array_equal(load(path).predict(X), models[which].predict(X))


def test_booster_files_round_trip_and_the_checksum_must_be_one(boosters, tmp_path):
    X, models = boosters
    path = tmp_path / "model.json"
    for model in models.values():
        model.save(path)
        assert np.array_equal(load(path).predict(X), model.predict(X))
        assert "sha256" not in model.to_dict()  # a dict carries none, and loads as before
        assert np.array_equal(type(model).from_dict(model.to_dict()).predict(X), model.predict(X))
    d = json.loads(path.read_text())
    d["sha256"] = "abc"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"sha256 must be a SHA-256 \(64 hexadecimal digits\), got 'abc'"):
        load(path)
    # the fields are checked first: a damaged field is named, not the checksum
    models["rankboost"].save(path)
    d = json.loads(path.read_text())
    d["rankers"][0]["feature"] = 2.7
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"rankers\[0\]\.feature must be an integer"):
        load(path)


# ---- LightGBM ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lgb_model():
    X, y, qid = _data()
    obj = bpl.objective("qbrank", w=0.5)
    params = {"objective": obj, "verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5, "num_threads": 1}
    return X, obj, lgb.train(params, bpl.dataset(X, y, qid=qid), 3)


def _leaf_digit(text: str) -> str:
    start = text.index("\nleaf_value=") + len("\nleaf_value=")
    i = next(i for i in range(start, len(text)) if text[i] in "123456789")
    return text[:i] + str(int(text[i]) % 9 + 1) + text[i + 1:]


def _record_param(text: str) -> str:
    """The record's w=0.5 edited to 0.7 in the file (its base32 line decoded, edited, encoded again)."""
    line = next(ln for ln in text.split("\n") if ln.startswith(f"[objective: {LIGHTGBM_OBJECTIVE}_"))
    encoded = line[len(f"[objective: {LIGHTGBM_OBJECTIVE}_"):-1]
    record = json.loads(base64.b32decode(encoded.upper() + "=" * (-len(encoded) % 8)))
    assert record["params"] == {"w": 0.5}
    record["params"]["w"] = 0.7
    again = base64.b32encode(json.dumps(record).encode()).decode().rstrip("=").lower()
    return text.replace(line, f"[objective: {LIGHTGBM_OBJECTIVE}_{again}]")


LGB_EDITS = {"leaf_value digit": _leaf_digit,
             "num_class 1 -> 2": lambda t: t.replace("\nnum_class=1\n", "\nnum_class=2\n", 1),
             "a parameter of the record": _record_param}


@pytest.mark.parametrize("name", list(LGB_EDITS))
def test_a_plausible_edit_of_a_lightgbm_file_is_refused_by_its_checksum(lgb_model, tmp_path, name):
    X, obj, booster = lgb_model
    path = tmp_path / "model.txt"
    bpl.save_model(booster, path, objective=obj)
    text = path.read_text()
    edited = LGB_EDITS[name](text)
    assert edited != text
    path.write_text(edited)
    for read in (bpl.load_model, bpl.objective_of):
        with pytest.raises(ValueError, match=rf"^{path}: {MISMATCH}"):
            read(path)
    with pytest.raises(ValueError, match=rf"^the model string: {MISMATCH}"):
        bpl.load_model(model_str=edited)
    # The same edit of a file whose record carries no checksum (an earlier boostplug's) goes unseen.
    plain = text_with_record(text, bpl.objective_of(bpl.load_model(model_str=text)), checksum=False)
    assert "model_sha256" not in json.dumps(bpl.objective_of(bpl.load_model(model_str=plain)).to_json())
    path.write_text(LGB_EDITS[name](plain))
    bpl.load_model(path)


def test_lightgbm_files_with_a_checksum_load_through_lightgbms_own_round_trips(lgb_model, tmp_path):
    X, obj, booster = lgb_model
    path = tmp_path / "model.txt"
    bpl.save_model(booster, path, objective=obj)
    expected = booster.predict(X)
    # LightGBM writes a loaded model back unchanged (MLflow's log_model does this), checksum and all
    lgb.Booster(model_file=str(path)).save_model(tmp_path / "again.txt")
    assert (tmp_path / "again.txt").read_text() == path.read_text()
    assert np.array_equal(bpl.load_model(tmp_path / "again.txt").predict(X), expected)
    # A Booster boostplug loaded holds no checksum: LightGBM's own writer, saving fewer trees, makes a
    # file that loads (its record without a checksum), and boostplug's writer gives it a new one.
    loaded = bpl.load_model(path)
    assert "model_sha256" not in loaded.model_to_string()
    loaded.save_model(tmp_path / "fewer.txt", num_iteration=1)
    assert bpl.objective_of(tmp_path / "fewer.txt").name == "qbrank"
    bpl.save_model(loaded, tmp_path / "fewer.txt", num_iteration=1)
    assert bpl.objective_of(tmp_path / "fewer.txt").model_sha256
    assert np.array_equal(bpl.load_model(tmp_path / "fewer.txt").predict(X), booster.predict(X, num_iteration=1))


# ---- XGBoost -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def xgb_model():
    X, y, qid = _data()
    obj = bpx.objective("qbrank", w=0.5)
    return X, obj, xgb.train({"max_depth": 2, "nthread": 1}, bpx.dmatrix(X, y, qid=qid), 3, obj=obj)


def _tree0(d: dict) -> dict:
    return d["learner"]["gradient_booster"]["model"]["trees"][0]


def _split_condition(d: dict) -> None:
    _tree0(d)["split_conditions"][0] += 0.05


def _leaf(d: dict) -> None:
    leaf = list(_tree0(d)["left_children"]).index(-1)
    _tree0(d)["split_conditions"][leaf] *= 1.01


def _xgb_record_param(d: dict) -> None:
    record = json.loads(d["learner"]["attributes"]["boostplug_objective"])
    record["params"]["w"] = 0.7
    d["learner"]["attributes"]["boostplug_objective"] = json.dumps(record)


XGB_EDITS = {"split condition +0.05": _split_condition, "leaf x1.01": _leaf, "a parameter of the record": _xgb_record_param}


def _edited(raw: bytes, fmt: str, edit) -> bytes:
    d = json.loads(raw) if fmt == "json" else parse_ubjson(raw, "m")
    edit(d)
    return json.dumps(d).encode() if fmt == "json" else ubjson(d)


@pytest.mark.parametrize("fmt", ["json", "ubj"])
@pytest.mark.parametrize("name", list(XGB_EDITS))
def test_a_plausible_edit_of_an_xgboost_file_is_refused_by_its_checksum(xgb_model, tmp_path, fmt, name):
    X, obj, booster = xgb_model
    path = tmp_path / f"model.{fmt}"
    bpx.save_model(booster, path, objective=obj)
    assert re.search(r"model_sha256\W+[0-9a-f]{64}", path.read_bytes().decode("latin-1"))
    edited = _edited(path.read_bytes(), fmt, XGB_EDITS[name])
    path.write_bytes(edited)
    for read in (bpx.load_model, bpx.objective_of, lambda p: bpx.XGBRanker().load_model(p)):
        with pytest.raises(ValueError, match=rf"^{path}: {MISMATCH}"):
            read(path)
    with pytest.raises(ValueError, match=rf"^the model bytes: {MISMATCH}"):
        bpx.XGBRanker().load_model(bytearray(edited))
    # The same edit of a file whose record carries no checksum (XGBoost's own writer, an earlier
    # boostplug) goes unseen: it loads, as another model.
    plain = tmp_path / f"plain.{fmt}"
    booster.save_model(plain)
    assert "model_sha256" not in json.dumps(bpx.objective_of(plain).to_json())
    plain.write_bytes(_edited(plain.read_bytes(), fmt, XGB_EDITS[name]))
    bpx.load_model(plain)


def test_xgboost_files_with_a_checksum_load_in_either_format_and_after_more_training(xgb_model, tmp_path):
    X, obj, booster = xgb_model
    rows = xgb.DMatrix(X)
    for fmt in ("json", "ubj"):
        bpx.save_model(booster, tmp_path / f"model.{fmt}", objective=obj)
    # one checksum for either format: it is of the values, not the bytes
    records = [bpx.objective_of(tmp_path / f"model.{fmt}") for fmt in ("json", "ubj")]
    assert records[0].model_sha256 == records[1].model_sha256 != ""
    assert booster.attr("boostplug_objective") == without_checksum(booster.attr("boostplug_objective"))
    loaded = bpx.load_model(tmp_path / "model.json")
    assert np.array_equal(loaded.predict(rows), booster.predict(rows))
    assert "model_sha256" not in loaded.attr("boostplug_objective")
    # trained further and saved by XGBoost itself: its record (without a checksum) still loads
    X, y, qid = _data()
    more = xgb.train({"max_depth": 2, "nthread": 1}, bpx.dmatrix(X, y, qid=qid), 2, obj=obj, xgb_model=loaded)
    more.save_model(tmp_path / "more.ubj")
    assert bpx.load_model(tmp_path / "more.ubj").num_boosted_rounds() == 5
    assert bpx.objective_of(tmp_path / "more.ubj").name == "qbrank"
