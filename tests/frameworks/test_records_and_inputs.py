"""Records and inputs: LightGBM positions that are not int32 integers are refused naming the value;
model files with a NaN or infinite leaf are refused on load (with or without boostplug's checksum);
a saved objective record names the objective the last rounds were trained with, or the save refuses."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import lightgbm as bpl

lgb = pytest.importorskip("lightgbm")


def _data(n_queries: int = 6, per: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = n_queries * per
    return rng.normal(size=(n, 3)), rng.integers(0, 3, n).astype(float), np.arange(0, n + 1, per)


@pytest.mark.parametrize("bad, shown", [
    (np.nan, "nan"), (0.5, "0.5"), (-1, "-1"), (2**40 + 3, str(2**40 + 3)), (float(2**40 + 3), repr(float(2**40 + 3))),
    ("a", "'a'"),
])
def test_dataset_refuses_positions_that_are_not_int32_integers(bad, shown) -> None:
    X, y, gp = _data()
    position = np.arange(len(y)) % 5
    position = position.astype(object if isinstance(bad, str) else type(bad) if isinstance(bad, float) else np.int64)
    position[7] = bad
    with pytest.raises(ValueError, match=rf"position must hold non-negative integers within int32.*row 7 has "
                                         rf"{__import__('re').escape(shown)}"):
        bpl.dataset(X, y, group_ptr=gp, position=position)


def test_dataset_takes_integer_positions() -> None:
    X, y, gp = _data()
    position = (np.arange(len(y)) % 5).astype(float)   # whole floats: the positions they are
    ds = bpl.dataset(X, y, group_ptr=gp, position=position).construct()
    np.testing.assert_array_equal(ds.get_position(), np.arange(len(y)) % 5)


# ---- NaN or infinite leaves, with or without boostplug's checksum -----------------------------------
@pytest.fixture(scope="module")
def lgb_text() -> str:
    X, y, gp = _data()
    params = {"objective": "lambdarank", "num_leaves": 4, "min_data_in_leaf": 1, "verbose": -1}
    return lgb.train(params, bpl.dataset(X, y, group_ptr=gp), 3).model_to_string()


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_lightgbm_load_refuses_a_non_finite_leaf(lgb_text, tmp_path, bad) -> None:
    lines = lgb_text.split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith("leaf_value="))
    values = lines[i].split("=")[1].split(" ")
    lines[i] = "leaf_value=" + " ".join([values[0], bad, *values[2:]])
    path = tmp_path / "m.txt"
    path.write_text("\n".join(lines))
    with pytest.raises(ValueError, match=rf"Tree=0: leaf_value of leaf 1 is '{bad}', not a finite number"):
        bpl.load_model(path)
    with pytest.raises(ValueError, match=r"leaf_value of leaf 1"):
        bpl.load_model(model_str="\n".join(lines))
    bpl.load_model(model_str=lgb_text)   # the finite original loads


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_xgboost_load_refuses_a_non_finite_leaf(tmp_path, bad) -> None:
    import json

    xgb = pytest.importorskip("xgboost")
    from boostplug import xgboost as bpx

    X, y, gp = _data()
    booster = xgb.train({"objective": "rank:ndcg", "max_depth": 2}, bpx.dmatrix(X, y, group_ptr=gp), 3)
    doc = json.loads(booster.save_raw(raw_format="json"))
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][1]
    leaf = tree["left_children"].index(-1)
    tree["split_conditions"][leaf] = bad
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))   # NaN / Infinity: Python's JSON, which XGBoost reads
    with pytest.raises(ValueError, match=rf"tree 1: split_conditions\[{leaf}\] = {bad!r} is a leaf value that is "
                                         "not finite"):
        bpx.load_model(path)
    booster.save_model(tmp_path / "ok.json")
    bpx.load_model(tmp_path / "ok.json")


# ---- the saved record names the objective of the last rounds, or the save refuses ----------------------
def test_xgboost_save_after_training_continued_elsewhere_refuses_to_guess(tmp_path) -> None:
    xgb = pytest.importorskip("xgboost")
    from boostplug import xgboost as bpx

    X, y, gp = _data()
    dm = bpx.dmatrix(X, y, group_ptr=gp)
    first = xgb.train(bpx.params(), dm, 3, obj=bpx.objective("listmle"))
    bpx.save_model(first, tmp_path / "first.json", objective=bpx.objective("listmle"))   # the record: listmle
    for start in (first, bpx.load_model(tmp_path / "first.json"), xgb.Booster(model_file=tmp_path / "first.json")):
        more = xgb.train(bpx.params(), dm, 2, obj=bpx.objective("approx_ndcg"), xgb_model=start)  # copies the record
        with pytest.raises(ValueError, match=r"names 'listmle' for its first 3 rounds, but it has 5.*pass objective="):
            bpx.save_model(more, tmp_path / "more.json")
        bpx.save_model(more, tmp_path / "more.json", objective=bpx.objective("approx_ndcg"))
        assert bpx.objective_of(tmp_path / "more.json").name == "approx_ndcg"
    bpx.save_model(bpx.load_model(tmp_path / "first.json"), tmp_path / "again.json")   # nothing continued: as before
    assert bpx.objective_of(tmp_path / "again.json").name == "listmle"


def test_lightgbm_save_after_training_continued_in_place_refuses_to_guess(tmp_path) -> None:
    X, y, gp = _data()
    ds = bpl.dataset(X, y, group_ptr=gp, free_raw_data=False)
    booster = lgb.train({"objective": bpl.objective("listmle"), "verbose": -1, "min_data_in_leaf": 1}, ds, 3,
                        keep_training_booster=True)
    bpl.record_objective(booster, "listmle")
    bpl.save_model(booster, tmp_path / "ok.txt")
    booster.update(fobj=lambda preds, data: (np.sign(preds - data.get_label()), np.ones_like(preds)))
    with pytest.raises(ValueError, match=r"names 'listmle' for its first 3 rounds, but it has 4.*pass objective="):
        bpl.save_model(booster, tmp_path / "more.txt")
    loaded = bpl.load_model(tmp_path / "ok.txt")
    bpl.save_model(loaded, tmp_path / "again.txt")
    assert bpl.objective_of(tmp_path / "again.txt").name == "listmle"
