"""XGBoost models are checked tree by tree before XGBoost reads them
(boostplug/frameworks/xgboost/model_check.py), as LightGBM's model text is.

XGBoost 3.2 trusts the trees it loads: a JSON or UBJSON model with ``left_children[0] = 99999``,
``split_indices[0] = 2**31 - 5`` or a flipped bit in a child index loaded through
``boostplug.xgboost.load_model``, then ``predict`` ended the process (SIGSEGV); a ``tree_info``
beyond the model's outputs corrupted the heap. Each targeted edit, in a JSON and a UBJSON file, is
refused by the check itself (before XGBoost is called), naming the file, the tree and the field.
Seeded random bit flips of real JSON and UBJSON files are loaded the ways boostplug loads a model
and predicted in a child process (so that a crash fails the test instead of killing pytest): each
ends in a ValueError or a model that predicts (the same model, for a file boostplug saved with its
checksum). Every kind of model XGBoost writes still loads and
predicts as before.
"""

from __future__ import annotations

import functools
import json
import struct
import textwrap
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb

from boostplug import xgboost as bpx
from boostplug.frameworks.model_bytes import booster_from_bytes
from boostplug.frameworks.xgboost.model_check import checked_model_source
from boostplug.frameworks.xgboost.ubjson import parse_ubjson
from tests._child import run_child

N_F = 4


# ---- UBJSON as XGBoost writes it (lengths as int64, typed arrays, smallest integer markers) ----
_TYPED = {np.dtype("int8"): b"i", np.dtype("uint8"): b"U", np.dtype("int16"): b"I", np.dtype("int32"): b"l",
          np.dtype("int64"): b"L", np.dtype("float32"): b"d", np.dtype("float64"): b"D"}


def _length(n: int) -> bytes:
    return b"L" + struct.pack(">q", n)


def ubjson(v: Any) -> bytes:
    if isinstance(v, dict):
        return b"{" + b"".join(_length(len(k.encode())) + k.encode() + ubjson(x) for k, x in v.items()) + b"}"
    if isinstance(v, np.ndarray):
        return b"[$" + _TYPED[v.dtype] + b"#" + _length(v.size) + v.astype(v.dtype.newbyteorder(">")).tobytes()
    if isinstance(v, list):
        return b"[#" + _length(len(v)) + b"".join(ubjson(x) for x in v)
    if isinstance(v, str):
        return b"S" + _length(len(v.encode())) + v.encode()
    if isinstance(v, bool):
        return b"T" if v else b"F"
    if isinstance(v, int):
        for m, f, lo, hi in ((b"i", ">b", -128, 127), (b"U", ">B", 0, 255), (b"I", ">h", -2**15, 2**15 - 1),
                             (b"l", ">i", -2**31, 2**31 - 1)):
            if lo <= v <= hi:
                return m + struct.pack(f, v)
        return b"L" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"d" + struct.pack(">f", v)
    raise TypeError(type(v).__name__)


# ---- models ----------------------------------------------------------------------------------------
def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, N_F))
    return X, rng.integers(0, 3, 120).astype(float), np.repeat(np.arange(12), 10)


@functools.lru_cache(maxsize=1)
def _ranker() -> xgb.Booster:
    """A boostplug-trained model of 3 trees of depth 2 (tree 0: children 1 3 5 / 2 4 6, features 0 2 0)."""
    X, y, qid = _data()
    return xgb.train({"max_depth": 2, "nthread": 1, "seed": 0}, bpx.dmatrix(X, y, qid=qid), 3,
                     obj=bpx.objective("ndcg_boost"))


@functools.lru_cache(maxsize=1)
def _categorical() -> tuple[xgb.Booster, pd.DataFrame]:
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"a": rng.normal(size=n), "c": pd.Categorical(rng.choice(["x", "y", "z", "w"], n)),
                       "d": pd.Categorical(rng.choice([3, 7, 11], n)), "e": rng.normal(size=n)})
    params = {"max_depth": 3, "max_cat_to_onehot": 1, "tree_method": "hist", "nthread": 1, "seed": 0}
    return xgb.train(params, xgb.DMatrix(df, rng.normal(size=n), enable_categorical=True), 3), df


def _trained(params: dict, y: Any = None, rounds: int = 3) -> xgb.Booster:
    X, labels, qid = _data()
    group = {"group": [10] * 12} if params.get("objective", "").startswith("rank:") else {}
    return xgb.train(dict(params, nthread=1, seed=0), xgb.DMatrix(X, labels if y is None else y, **group), rounds)


def _doc(booster: xgb.Booster, fmt: str) -> dict:
    """The model as Python values: JSON's lists, or UBJSON's typed arrays (numpy) as XGBoost wrote them."""
    raw = bytes(booster.save_raw(raw_format=fmt))
    return json.loads(raw) if fmt == "json" else parse_ubjson(raw, "the model")


def _write(doc: dict, path: Path) -> Path:
    path.write_bytes(json.dumps(doc).encode() if path.suffix == ".json" else ubjson(doc))
    return path


def _model(d: dict) -> dict:
    booster = d["learner"]["gradient_booster"]
    return booster["model"] if "model" in booster else booster["gbtree"]["model"]


def _tree(d: dict, t: int = 0) -> dict:
    return _model(d)["trees"][t]


def _set(key: str, i: int, value: Any, t: int = 0) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        _tree(d, t)[key][i] = value
    return edit


def _flip(key: str, i: int, bit: int, t: int = 0) -> Callable[[dict], None]:
    """One bit of ``key[i]`` flipped, as a damaged byte would."""
    def edit(d: dict) -> None:
        arr = _tree(d, t)[key]
        arr[i] = int(arr[i]) ^ (1 << bit)
    return edit


def _param(where: Callable[[dict], dict], key: str, value: str) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        where(d)[key] = value
    return edit


def _cut(key: str, t: int = 0) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        _tree(d, t)[key] = _tree(d, t)[key][:-1]
    return edit


def _as_floats(key: str) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        arr = _tree(d)[key]
        _tree(d)[key] = np.asarray(arr, dtype=np.float32) if isinstance(arr, np.ndarray) else [float(v) for v in arr]
    return edit


def _both(*edits: Callable[[dict], None]) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        for e in edits:
            e(d)
    return edit


def _nested(d: dict) -> None:
    deep: Any = []
    for _ in range(100):
        deep = [deep]
    d["learner"]["extra"] = deep


def _learner_param(d: dict) -> dict:
    return d["learner"]["learner_model_param"]


EDITS = [  # (name, edit of the ranker's model, what the message says after "<file>: ")
    ("child out of range", _set("left_children", 0, 99999), r"tree 0: left_children\[0\] = 99999 is no node of its 7 "),
    ("a child's bit flipped", _flip("left_children", 1, 3), r"tree 0: left_children\[1\] = 11 is no node of its 7"),
    ("a child's high bit flipped", _flip("right_children", 2, 30, t=2),
     r"tree 2: right_children\[2\] = 1073741830 is no node"),
    ("a leaf's sign bit flipped", _flip("left_children", 3, 1), r"tree 0: left_children\[3\] = -3 is no node"),
    ("split feature", _set("split_indices", 0, 2**31 - 5),
     r"tree 0: split_indices\[0\] = 2147483643 is outside \[0, 3\] \(num_feature=4\)"),
    ("split feature one beyond", _set("split_indices", 1, N_F), r"tree 0: split_indices\[1\] = 4 is outside \[0, 3\]"),
    ("root as a child", _set("left_children", 1, 0), r"tree 0: left_children\[1\] = 0 is no node"),
    ("shared child", _set("right_children", 0, 1), r"tree 0: node 1 is the child of two splits"),
    ("cycle", _both(_set("left_children", 5, 1), _set("right_children", 5, 2)),
     r"tree 0: node [12] is the child of two splits"),
    ("parent out of range", _set("parents", 3, 9999), r"tree 0: parents\[3\] = 9999 is no node of its 7"),
    ("root with a parent", _set("parents", 0, 0), r"tree 0: parents\[0\] = 0, but node 0 is the root"),
    ("parent not the split", _set("parents", 3, 2), r"tree 0: parents\[3\] = 2, but node 3 is a child of node 1"),
    ("array length", _cut("split_conditions"), r"tree 0: split_conditions has 6 values, not 7"),
    ("num_nodes", _param(lambda d: _tree(d)["tree_param"], "num_nodes", "9"),
     r"tree 0: left_children has 7 values, not 9"),
    ("default_left", _set("default_left", 0, 2), r"tree 0: default_left holds a value other than 0 and 1"),
    ("children as floats", _as_floats("left_children"), r"tree 0: left_children holds something other than integers"),
    ("missing array", lambda d: _tree(d).pop("right_children"), r"tree 0 has no 'right_children'"),
    ("output group", lambda d: _model(d)["tree_info"].__setitem__(0, 5),
     r"tree_info\[0\] = 5 is no output of the model's 1"),
    ("tree id", lambda d: _model(d)["trees"][1].__setitem__("id", 0), r"trees\[1\] has id 0, not 1"),
    ("iteration_indptr", lambda d: _model(d).__setitem__("iteration_indptr", [0, 2, 1, 3]),
     r"iteration_indptr must rise from 0 to num_trees=3"),
    ("num_trees", _param(lambda d: _model(d)["gbtree_model_param"], "num_trees", "4"),
     r"the model holds 3 trees, num_trees=4"),
    ("num_feature", _param(_learner_param, "num_feature", "2"), r"tree 0: split_indices\[1\] = 2 is outside \[0, 1\]"),
    ("num_feature not a number", _param(_learner_param, "num_feature", "4x"),
     r"learner_model_param: num_feature = '4x' is not an integer"),
    ("base_score", _param(_learner_param, "base_score", "[5E-1,1E0]"),
     r"learner_model_param: base_score holds 2 values, the model has 1 outputs"),
    ("booster name", lambda d: d["learner"]["gradient_booster"].__setitem__("name", "gbtreex"),
     r"gradient_booster.name = 'gbtreex' is none of gbtree, dart, gblinear"),
    ("nested", _nested,
     r"(not a complete UBJSON model \(cut short or damaged\): )?containers nested more than 64 deep"),
]


def _refused(path: Path, message: str) -> None:
    """The check refuses ``path`` naming it and ``message`` (before XGBoost reads anything), and so
    does every way boostplug loads it."""
    with pytest.raises(ValueError, match=f"^{path}: {message}") as info:
        checked_model_source(path)
    assert "nested" in message or str(info.value).endswith("; a damaged XGBoost model, not loaded")
    for load in (bpx.load_model, bpx.objective_of, lambda p: bpx.XGBRanker().load_model(p)):
        with pytest.raises(ValueError, match=message):
            load(path)
    data = path.read_bytes()
    with pytest.raises(ValueError, match=f"^the model bytes: .*{message}"):
        bpx.XGBRanker().load_model(bytearray(data))
    if path.suffix == ".ubj":
        with pytest.raises(ValueError, match=f"^the model bytes: .*{message}"):
            booster_from_bytes("xgboost", data)


@pytest.mark.parametrize("fmt", ["json", "ubj"])
@pytest.mark.parametrize("name, edit, message", EDITS, ids=[e[0] for e in EDITS])
def test_a_damaged_tree_is_refused_naming_the_tree_and_field(tmp_path, fmt, name, edit, message):
    doc = _doc(_ranker(), fmt)
    assert list(_tree(doc)["left_children"]) == [1, 3, 5, -1, -1, -1, -1]
    assert list(_tree(doc)["split_indices"][:3]) == [0, 2, 0]
    if fmt == "ubj":  # the encoder writes XGBoost's bytes
        assert ubjson(doc) == bytes(_ranker().save_raw(raw_format="ubj"))
    edit(doc)
    _refused(_write(doc, tmp_path / f"model.{fmt}"), message)


def _categorical_edits() -> list[tuple[str, Callable[[dict], None], str]]:
    trees = _model(_doc(_categorical()[0], "json"))["trees"]
    tree = next(t for t, tr in enumerate(trees) if tr["categories"])
    outside = rf"tree {tree}: categories holds a category outside \[0, 16777216\)"

    def cat(key: str, value: Any) -> Callable[[dict], None]:
        def edit(d: dict) -> None:
            _tree(d, tree)[key][0] = value
        return edit

    def cats(key: str, i: int, value: Any) -> Callable[[dict], None]:
        def edit(d: dict) -> None:
            _model(d)["cats"][key][i] = value
        return edit

    return [
        ("negative category", cat("categories", -1), outside),
        ("huge category", cat("categories", 2**30), outside),
        ("category list beyond", cat("categories_sizes", 99),
         rf"tree {tree}: a categorical split's categories_segments/categories_sizes reach outside the 1 categories"),
        ("category node", cat("categories_nodes", 0),
         rf"tree {tree}: categories_nodes must be the splits whose split_type is 1"),
        ("split type", cat("split_type", 7),
         rf"tree {tree}: split_type holds a value other than 0 \(numerical\) and 1"),
        ("encoding segments", cats("feature_segments", 2, 9), r"cats.feature_segments must rise from 0"),
        ("encoding order", cats("sorted_idx", 0, 5),
         r"cats.sorted_idx of feature 1 is not an order of its 4 categories"),
    ]


@pytest.mark.parametrize("fmt", ["json", "ubj"])
def test_damaged_categorical_splits_and_encodings_are_refused(tmp_path, fmt):
    booster, _ = _categorical()
    for name, edit, message in _categorical_edits():
        doc = _doc(booster, fmt)
        edit(doc)
        _refused(_write(doc, tmp_path / f"model.{fmt}"), message)


@pytest.mark.parametrize("fmt", ["json", "ubj"])
def test_other_boosters_damaged_are_refused(tmp_path, fmt):
    X, y, _ = _data()
    cases = [
        (_trained({"booster": "gblinear"}), lambda d: d["learner"]["gradient_booster"]["model"].__setitem__(
            "weights", d["learner"]["gradient_booster"]["model"]["weights"][:-1]),
         r"gblinear.model: weights has 4 values, not 5"),
        (_trained({"booster": "dart", "max_depth": 2}), lambda d: d["learner"]["gradient_booster"].__setitem__(
            "weight_drop", [1.0]), r"dart: weight_drop has 1 values, not 3"),
        (_trained({"max_depth": 2, "multi_strategy": "multi_output_tree", "tree_method": "hist"}, np.c_[y, 2 * y]),
         _set("right_children", 3, 9), r"tree 0: leaf 3 points to leaf weights 9, outside the 4 of leaf_weights"),
        (_trained({"max_depth": 2, "multi_strategy": "multi_output_tree", "tree_method": "hist"}, np.c_[y, 2 * y]),
         _param(lambda d: _tree(d, 1)["tree_param"], "size_leaf_vector", "3"),
         r"tree 1: tree_param: size_leaf_vector = 3, but the model has 2 outputs"),
        (_trained({"objective": "multi:softprob", "num_class": 3, "max_depth": 2}),
         lambda d: _model(d)["tree_info"].__setitem__(1, 3), r"tree_info\[1\] = 3 is no output of the model's 3"),
    ]
    for booster, edit, message in cases:
        doc = _doc(booster, fmt)
        edit(doc)
        _refused(_write(doc, tmp_path / f"model.{fmt}"), message)


def test_what_xgboost_refuses_itself_is_a_value_error_naming_the_file(tmp_path):
    doc = _doc(_ranker(), "json")
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["tree_param"]["num_deleted"] = "2"
    path = _write(doc, tmp_path / "model.json")
    checked_model_source(path)  # the check leaves it to XGBoost, which refuses it cleanly
    with pytest.raises(ValueError, match=rf"^{path}: XGBoost refused it \(.*num_deleted.*\); a damaged XGBoost model"):
        bpx.load_model(path)


def test_every_kind_of_model_xgboost_writes_loads_and_predicts_the_same(tmp_path):
    X, y, _ = _data()
    boosters = {
        "ranker": _ranker(),
        "rank:ndcg": _trained({"objective": "rank:ndcg", "max_depth": 3}),
        "gblinear": _trained({"booster": "gblinear"}),
        "dart": _trained({"booster": "dart", "max_depth": 2}),
        "multiclass": _trained({"objective": "multi:softprob", "num_class": 3, "max_depth": 2}),
        "forest": _trained({"max_depth": 2, "num_parallel_tree": 2}),
        "multi-target": _trained({"max_depth": 2, "multi_strategy": "multi_output_tree", "tree_method": "hist"},
                                 np.c_[y, 2 * y]),
        "one tree per target": _trained({"max_depth": 2, "tree_method": "hist"}, np.c_[y, 2 * y]),
        "pruned (deleted nodes)": _trained({"max_depth": 6, "tree_method": "exact", "gamma": 5.0,
                                            "updater": "grow_colmaker,prune"}),
        "stumps": _trained({"max_depth": 1}),
    }
    pruned = _doc(boosters["pruned (deleted nodes)"], "json")
    assert any(int(t["tree_param"]["num_deleted"]) > 0 for t in _model(pruned)["trees"])
    rows = xgb.DMatrix(X)
    for name, booster in boosters.items():
        for fmt in ("json", "ubj"):
            path = tmp_path / f"model.{fmt}"
            booster.save_model(path)
            np.testing.assert_array_equal(bpx.load_model(path).predict(rows), booster.predict(rows), err_msg=name)
    booster, df = _categorical()
    rows = xgb.DMatrix(df, enable_categorical=True)
    for fmt in ("json", "ubj"):
        booster.save_model(tmp_path / f"model.{fmt}")
        np.testing.assert_array_equal(bpx.load_model(tmp_path / f"model.{fmt}").predict(rows), booster.predict(rows))


FLIPS = textwrap.dedent("""
    import json, random, sys
    from pathlib import Path
    import numpy as np, xgboost as xgb
    from boostplug import xgboost as bpx
    from boostplug.frameworks.model_bytes import booster_from_bytes

    X = np.random.default_rng(1).normal(size=(40, 4))
    X[::5, 1] = np.nan
    out = {}
    for source in map(Path, sys.argv[2:]):
        data = source.read_bytes()
        expected = bpx.load_model(source).predict(xgb.DMatrix(X))
        flipped = source.with_name("flipped" + source.suffix)
        ways = [lambda: bpx.load_model(flipped), lambda: bpx.XGBRanker().load_model(bytearray(b)).get_booster()]
        if source.suffix == ".ubj":
            ways.append(lambda: booster_from_bytes("xgboost", bytes(b)))
        rng = random.Random(int(sys.argv[1]))
        counts = {"refused": 0, "same": 0, "other": 0, "wrong": []}
        for i in range(40):
            b = bytearray(data)
            bit = rng.randrange(len(b) * 8)
            b[bit // 8] ^= 1 << bit % 8
            flipped.write_bytes(bytes(b))
            print(source.name, bit, file=sys.stderr, flush=True)  # the last line names a flip that kills the process
            try:
                predicted = ways[i % len(ways)]().predict(xgb.DMatrix(X))
            except ValueError as e:
                named = str(e).startswith((str(flipped), "the model bytes"))
                counts["refused" if named else "wrong"] += 1 if named else [bit, str(e)[:300]]
                continue
            except Exception as e:
                counts["wrong"].append([bit, repr(e)[:300]])
                continue
            counts["same" if np.array_equal(predicted, expected, equal_nan=True) else "other"] += 1
        out[source.name] = counts
    print(json.dumps(out))
""")


def test_random_bit_flips_end_in_a_value_error_or_a_model_that_predicts(tmp_path):
    """XGBoost's own files (no checksum): refused or a model that predicts, never a crash. Files saved
    by boostplug with the objective record carry their checksum: refused, or the same model (a flip
    that leaves every value as it was, such as ``E`` to ``e`` in a JSON number)."""
    files = []
    for fmt in ("json", "ubj"):
        files.append(tmp_path / f"plain.{fmt}")
        _ranker().save_model(files[-1])
        files.append(tmp_path / f"saved.{fmt}")
        bpx.save_model(_ranker(), files[-1], objective="ndcg_boost")
    out = run_child(FLIPS, "55", *map(str, files))  # its stderr's last line: the file and the bit
    for name, counts in out.items():
        assert counts["wrong"] == [], name
        assert counts["refused"] > 20, (name, counts)
        if name.startswith("saved"):
            assert counts["other"] == 0, (name, counts)
