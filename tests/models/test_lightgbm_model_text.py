"""LightGBM model text is checked before LightGBM reads it (boostplug/frameworks/lightgbm/model_text.py).

LightGBM 4.7's parser reads past the end of a model cut short or aborts inside its OpenMP loop
(2,705 of the 4,088 cut points of a small boostplug model file kill the process), and 1,007
other cuts load, 482 of them without boostplug's objective record
(docs/results/lightgbm_model_text). Every cut point of two
real small models must be refused with a ValueError naming the file, in a child process so that a
hole in the check fails the test instead of killing pytest; damage that is not a cut (sizes,
children, features, categories) is refused with the line; every kind of model LightGBM writes loads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from boostplug import lightgbm as bpl
from boostplug.frameworks.lightgbm.model_file import text_with_record
from boostplug.frameworks.lightgbm.model_text import check_model_text

PARAMS = {"verbose": -1, "num_threads": 1, "deterministic": True}


def _ranking_model(path: Path) -> str:
    """A boostplug-trained ranking model of 2 trees of 4 leaves, saved with its objective record."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60).astype(float)
    obj = bpl.objective("qbrank")
    booster = lgb.train(dict(PARAMS, objective=obj, num_leaves=4, min_data_in_leaf=2),
                        bpl.dataset(X, y, qid=np.repeat(np.arange(6), 10)), 2)
    bpl.save_model(booster, path, objective=obj)
    return path.read_text()


def _without_checksum(text: str) -> str:
    """``text`` with its record as boostplug wrote it before records carried the text's checksum."""
    return text_with_record(text, bpl.objective_of(bpl.load_model(model_str=text)), checksum=False)


def _earlier_layout(text: str) -> str:
    """``text`` as boostplug wrote it before the record moved into the objective line: no header
    objective, ``[objective: custom]``, the record as a ``[boostplug_objective: ...]`` parameter."""
    record = bpl.objective_of(bpl.load_model(model_str=text))
    plain = text_with_record(text, None)
    return plain.replace("end of parameters", f"[boostplug_objective: {record.to_json()}]\nend of parameters", 1)


def _categorical_linear_model() -> lgb.Booster:
    """Categorical splits (num_cat, cat_boundaries, cat_threshold) and linear leaves (leaf_coeff)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X[:, 3] = rng.integers(0, 6, 300)
    y = X[:, 0] + (X[:, 3] % 3) + 0.1 * rng.normal(size=300)
    params = dict(PARAMS, objective="regression", linear_tree=True, num_leaves=4, min_data_in_leaf=10,
                  cat_smooth=1, min_data_per_group=5, max_cat_to_onehot=2)
    return lgb.train(params, lgb.Dataset(X, y, categorical_feature=[3]), 2)


CUTS = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from boostplug import lightgbm as bpl

    def cuts(source, path):
        text = source.read_text()
        # Every cut as a string; around every line end (and every 97th) also as a file, which must be named.
        as_file = {c for i, ch in enumerate(text) if ch == "\\n" for c in (i - 1, i, i + 1)} | set(range(0, len(text), 97))
        out = {"refused": 0, "loaded": [], "wrong": []}
        for cut in range(len(text)):
            name = str(path) if cut in as_file else "the model string"
            try:
                if cut in as_file:
                    path.write_text(text[:cut])
                    booster = bpl.load_model(path)
                else:
                    booster = bpl.load_model(model_str=text[:cut])
            except ValueError as e:
                if str(e).startswith(name) and ("an incomplete or damaged LightGBM model, not loaded" in str(e)
                                                 or "its checksum does not match its content" in str(e)):
                    out["refused"] += 1
                else:
                    out["wrong"].append([cut, str(e)])
                continue
            except Exception as e:
                out["wrong"].append([cut, repr(e)])
                continue
            out["loaded"].append([cut, bpl.objective_of(booster) is not None])
        return out

    print(json.dumps([cuts(Path(source), Path(sys.argv[-1])) for source in sys.argv[1:-1]]))
""")


def test_every_cut_point_of_two_real_model_files_is_refused_naming_the_file(tmp_path):
    ranking, other, earlier = tmp_path / "ranking.txt", tmp_path / "categorical_linear.txt", tmp_path / "earlier.txt"
    texts = [_ranking_model(ranking)]
    _categorical_linear_model().save_model(other)
    texts.append(other.read_text())
    texts.append(_earlier_layout(texts[0]))
    earlier.write_text(texts[2])
    assert "[objective: lambdarank_by_boostplug" in texts[0] and "[boostplug_objective: " in texts[2]
    assert "cat_boundaries=" in texts[1] and "leaf_coeff=" in texts[1]
    run = subprocess.run([sys.executable, "-c", CUTS, str(ranking), str(other), str(earlier),
                          str(tmp_path / "cut.txt")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"the process died ({run.returncode}): {run.stderr[-2000:]}"
    for text, out in zip(texts, json.loads(run.stdout.splitlines()[-1])):
        assert out["wrong"] == []
        # The cut that drops the final newline loses nothing: it loads, record and all. The cut right
        # after 'end of parameters' is also what LightGBM's own writer (the CLI, the C API, R) gives,
        # so a file without boostplug's record loads: it lacks only the Python package's
        # pandas_categorical line, null here. The record saved by boostplug carries the text's
        # checksum, which that cut no longer matches: refused. The earlier layout's record line may
        # only be cut off with the pandas_categorical line, by the Python package: that cut is refused.
        end = text.index("end of parameters\n") + len("end of parameters\n")
        if "[boostplug_objective: " in text or "lambdarank_by_boostplug" in text:
            expected = [[len(text) - 1, True]]
        else:
            expected = [[end, False], [len(text) - 1, False]]
        assert out["loaded"] == expected
        assert out["refused"] == len(text) - len(expected)


def test_a_cut_file_names_the_line_and_what_is_missing(tmp_path):
    text = _ranking_model(tmp_path / "m.txt")
    earlier = _earlier_layout(text)
    cases = {
        text[: text.index("leaf_value=", text.index("Tree=1")) + 15]: r"cut\.txt, line 40: the text ends inside Tree=1",
        text[: text.index("end of trees")]: r"the text ends after 2 trees, without 'end of trees'",
        text[: text.index("parameters:")]: r"the text stops after its trees, before its last line",
        text[: text.index("[objective: lambdarank_by")]: r"the parameters section has no 'end of parameters' line",
        earlier[: earlier.rindex("\npandas_categorical:")]: r"holds boostplug's objective record but stops before "
                                                            r"the pandas_categorical: line",
        text[: text.rindex("pandas_categorical:")]: r"the text stops after its parameters, before its last line",
        "": r"the model text is empty",
    }
    for cut, message in cases.items():
        path = tmp_path / "cut.txt"
        path.write_text(cut)
        for load in (bpl.load_model, bpl.objective_of):  # objective_of(path) reads the same check
            with pytest.raises(ValueError, match=message) as info:
                load(path)
            assert str(info.value).startswith(str(path))
        with pytest.raises(ValueError, match="^the model string"):
            bpl.load_model(model_str=cut)
    # A cut pandas_categorical: line: the Python package's JSON error, wrapped naming the file; the
    # record before it is whole (a record without the checksum, which refuses the cut text itself).
    path.write_text(_without_checksum(text)[:-4])
    with pytest.raises(ValueError, match=r"cut\.txt: LightGBM refused it \(Expecting value.*not loaded$"):
        bpl.load_model(path)
    assert bpl.objective_of(path) == bpl.objective_of(bpl.load_model(model_str=text))
    path.write_text(text[:-4])
    with pytest.raises(ValueError, match=r"cut\.txt: its checksum does not match its content"):
        bpl.load_model(path)


def _sub(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    def mutate(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, count)
    return mutate


def _tree0_field(key: str, value: str) -> Callable[[str], str]:
    """Tree=0's ``key`` line set to ``value``, tree_sizes updated to the block's new length."""
    def mutate(text: str) -> str:
        start = text.index(f"\n{key}=", text.index("Tree=0")) + len(key) + 2
        end = text.index("\n", start)
        sizes = text[text.index("tree_sizes=") + 11: text.index("\n", text.index("tree_sizes="))].split(" ")
        sizes[0] = str(int(sizes[0]) + len(value) - (end - start))
        return _header("tree_sizes", " ".join(sizes))(text[:start] + value + text[end:])
    return mutate


def _header(key: str, value: str) -> Callable[[str], str]:
    def mutate(text: str) -> str:
        start = text.index(f"\n{key}=") + len(key) + 2
        return text[:start] + value + text[text.index("\n", start):]
    return mutate


# The ranking model's Tree=0: 4 leaves, left_child=-1 -2 -3, right_child=1 2 -4, 3 features.
DAMAGE = [
    ("tree_sizes", _header("tree_sizes", "478 489"), r"tree_sizes gives Tree=1 489 characters, its block has 488"),
    ("tree_sizes count", _header("tree_sizes", "478"), r"tree_sizes lists 1 tree, the text holds 2"),
    ("child out of range", _tree0_field("left_child", "-1 -2 7"), r"Tree=0: left_child\[2\] = 7 is no node or leaf"),
    ("leaf out of range", _tree0_field("left_child", "-1 -2 -9"), r"left_child\[2\] = -9 is no node or leaf"),
    ("root as a child", _tree0_field("right_child", "0 2 -4"), r"right_child\[0\] = 0 is no node or leaf"),
    ("shared child", _tree0_field("right_child", "1 1 -4"), r"Tree=0: node 1 is the child of two splits"),
    ("unreachable cycle", _tree0_field("left_child", "-1 2 1")
     , r"Tree=0: node 1 is the child of two splits|node \d's child node \d comes before it"),
    ("cycle with unique children",
     lambda t: _tree0_field("right_child", "-2 -3 -4")(_tree0_field("left_child", "-1 2 1")(t)),
     r"Tree=0: node 2's child node 1 comes before it"),
    ("split feature", _tree0_field("split_feature", "1 2 3"), r"split_feature\[2\] = 3 is outside \[0, 2\]"),
    ("array length", _tree0_field("decision_type", "2 2"), r"Tree=0: decision_type has 2 values, num_leaves=4 needs 3"),
    ("not numbers", _tree0_field("leaf_count", "31 4 x 21"), r"Tree=0: leaf_count holds something other than integers"),
    ("decision type", _tree0_field("decision_type", "2 2 99"), r"decision_type\[2\] = 99 is not one LightGBM writes"),
    ("categorical without categories", _tree0_field("decision_type", "2 2 1"),
     r"Tree=0: split 2 is categorical but num_cat=0"),
    ("num_leaves", _tree0_field("num_leaves", "9"), r"Tree=0: split_feature has 3 values, num_leaves=9 needs 8"),
    ("missing field", _sub("\nleaf_value=", "\nleaf_valu="), r"Tree=0 has no leaf_value="),
    ("duplicate field", _sub("num_cat=0\n", "num_cat=0\nnum_cat=0\n"),
     r"line 12: tree_sizes gives Tree=0 478 characters, its block has 488"),  # LightGBM cuts at 478: SIGABRT
    ("trees per iteration", _header("num_tree_per_iteration", "0"), r"num_tree_per_iteration=0 is outside \[1, "),
    ("trees per iteration multiple", _header("num_tree_per_iteration", "3"),
     r"2 trees is not a multiple of num_tree_per_iteration=3"),
    # LightGBM's own errors, wrapped
    ("feature names", _header("feature_names", "a b"), r"LightGBM refused it \(Wrong size of feature_names\)"),
    ("no feature_infos", _sub("\nfeature_infos=", "\nfeature_inf="),
     r"LightGBM refused it \(Model file doesn't contain feature_infos\)"),
    ("pandas not last", lambda t: t + "Column_0=1\n", r"LightGBM refused it \(Extra data: line 2"),
    ("not a tree model", lambda t: '{"learner": {}}\n', r"line 2: the text ends in the header"),
    ("NUL", _sub("num_cat=0", "num_cat=\x00"), r"the model text holds a NUL character"),
]


def test_what_lightgbm_reads_safely_is_left_to_it(tmp_path):
    """The numbers after Tree= and the first line: LightGBM reads neither (the same predictions). A
    file that carries its checksum is refused all the same: its text changed."""
    text = _ranking_model(tmp_path / "m.txt")
    X = np.random.default_rng(3).normal(size=(20, 3))
    expected = bpl.load_model(model_str=text).predict(X)
    for mutate in (_sub("Tree=1\n", "Tree=5\n"), lambda t: "xtree" + t[4:]):
        assert np.array_equal(bpl.load_model(model_str=mutate(_without_checksum(text))).predict(X), expected)
        with pytest.raises(ValueError, match=r"^the model string: its checksum does not match its content"):
            bpl.load_model(model_str=mutate(text))


@pytest.mark.parametrize("name, mutate, message", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_damaged_model_text_is_refused_naming_the_line(tmp_path, name, mutate, message):
    text = _ranking_model(tmp_path / "m.txt")
    assert "tree_sizes=478 488" in text and "left_child=-1 -2 -3\nright_child=1 2 -4" in text
    # A file whose record carries no checksum (an earlier boostplug's): the damage itself is named.
    (tmp_path / "bad.txt").write_text(mutate(_without_checksum(text)))
    with pytest.raises(ValueError, match=message) as info:
        bpl.load_model(tmp_path / "bad.txt")
    assert str(info.value).startswith(str(tmp_path / "bad.txt"))
    # Today's file: refused too, by the damage or by the checksum it no longer matches.
    (tmp_path / "bad.txt").write_text(mutate(text))
    with pytest.raises(ValueError, match=f"{message}|its checksum does not match its content") as info:
        bpl.load_model(tmp_path / "bad.txt")
    assert str(info.value).startswith(str(tmp_path / "bad.txt"))


def test_damaged_categories_are_refused(tmp_path):
    text = _categorical_linear_model().model_to_string()
    tree0 = text.index("Tree=0")
    for old, new, message in [
        ("threshold=-0.32014606995311679 0 1", "threshold=-0.32014606995311679 0 2",
         r"the categorical split 2 has threshold 2\.0, not a category set in \[0, 2\)"),
        ("cat_boundaries=0 1 2", "cat_boundaries=0 1 3", r"cat_boundaries must rise from 0 to the 2 values"),
        ("cat_threshold=9 36", "cat_threshold=9 99999999999", r"cat_threshold holds a value beyond an unsigned"),
        ("num_features=0 0 0 0", "num_features=0 0 0 1", r"leaf_features has 0 values, num_features sums to 1"),
    ]:
        assert text.index(old) > tree0, old
        with pytest.raises(ValueError, match=message):
            bpl.load_model(model_str=text.replace(old, new, 1))


def test_a_file_that_is_not_utf8_text_is_refused_naming_it(tmp_path):
    path = tmp_path / "m.bin"
    path.write_bytes(b"tree\nversion=v4\n\xff\xfe")
    with pytest.raises(ValueError, match=r"m\.bin: not a LightGBM text model file \(byte 16 is not UTF-8 text\)"):
        bpl.load_model(path)


def _models() -> dict[str, lgb.Booster]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 6))
    X[rng.random((400, 6)) < 0.1] = np.nan
    X[:, 5] = rng.integers(0, 8, 400)
    y = (X[:, 5] % 3).astype(int)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    frame["f"] = pd.Categorical(X[:, 5].astype(int))
    cases = {
        "categorical": ({"objective": "regression", "num_leaves": 8, "min_data_in_leaf": 5},
                        lgb.Dataset(X, y.astype(float), categorical_feature=[5])),
        "linear": ({"objective": "regression", "linear_tree": True, "num_leaves": 4},
                   lgb.Dataset(np.nan_to_num(X), y.astype(float))),
        "multiclass": ({"objective": "multiclass", "num_class": 3, "num_leaves": 4}, lgb.Dataset(X, y)),
        "one-leaf trees": ({"objective": "regression", "num_leaves": 2, "min_data_in_leaf": 1000},
                           lgb.Dataset(X, y.astype(float))),
        "lambdarank": ({"objective": "lambdarank", "num_leaves": 8}, lgb.Dataset(X, y, group=[40] * 10)),
        "pandas categorical": ({"objective": "regression", "num_leaves": 4}, lgb.Dataset(frame, y.astype(float))),
    }
    return {name: lgb.train(dict(PARAMS, **params), ds, 5) for name, (params, ds) in cases.items()}


def test_every_kind_of_model_lightgbm_writes_loads_and_predicts_the_same(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 6))
    X[:, 5] = rng.integers(0, 8, 50)
    for name, booster in _models().items():
        path = tmp_path / f"{name}.txt"
        booster.save_model(path)
        loaded = bpl.load_model(path)
        data = X
        if name == "pandas categorical":
            data = pd.DataFrame(X, columns=list("abcdef"))
            data["f"] = pd.Categorical(X[:, 5].astype(int), categories=booster.pandas_categorical[0])
        assert np.array_equal(loaded.predict(data), booster.predict(data)), name
        for text in (booster.model_to_string(num_iteration=2), booster.model_to_string(start_iteration=3)):
            check_model_text(text, name)
        # LightGBM's own writer (the CLI, the C API) ends at 'end of parameters', without the line
        # the Python package appends.
        text = booster.model_to_string()
        check_model_text(text[: text.rindex("\npandas_categorical:")], name)
