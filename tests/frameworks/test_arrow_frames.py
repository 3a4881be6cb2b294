"""Polars and pyarrow frames with categorical columns: LightGBM reads such frames through Arrow and
ends the process on a categorical (dictionary), string or date column; boostplug.lightgbm's
dataset() and LGBMRanker convert categorical columns (as LightGBM treats pandas categoricals) and
refuse the rest with a ValueError naming the column."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

import boostplug
from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

CATS = ["a", "b", "c", "d"]
PARAMS = {"objective": "lambdarank", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 2,
          "min_data_per_group": 2, "cat_smooth": 1.0}


def _columns(seed=0, n_queries=12, per_query=10):
    rng = np.random.default_rng(seed)
    n = n_queries * per_query
    cat = np.array(CATS)[rng.integers(0, len(CATS), n)]
    x = rng.normal(size=n)
    # the label depends on the category, so the trees split on it
    y = (np.searchsorted(CATS, cat) % 3 + (x > 1)).astype(np.float64)
    return x, cat, y, np.repeat(np.arange(n_queries), per_query)


def _frame(kind, x, cat):
    if kind == "pandas":
        return pd.DataFrame({"x": x, "c": pd.Categorical(cat, categories=CATS)})
    if kind == "polars_categorical":
        return pl.DataFrame({"x": x, "c": cat}).with_columns(pl.col("c").cast(pl.Categorical))
    if kind == "polars_enum":
        return pl.DataFrame({"x": x, "c": cat}).with_columns(pl.col("c").cast(pl.Enum(CATS)))
    if kind == "pyarrow_dictionary":
        return pa.table({"x": x, "c": pa.array(cat).dictionary_encode()})
    raise AssertionError(kind)


ARROW_KINDS = ["polars_categorical", "polars_enum", "pyarrow_dictionary"]

PATHS = ["dataset", "ranker"]

# Every (kind, path) case in a process of its own, forked from one child that imported the libraries
# once (a fresh interpreter per case paid those imports six times); the child itself runs nothing in
# LightGBM before forking. Prints {"kind-path": [exit status, stderr]} as its last line.
_CHILD = """
import json, os, sys, tempfile, traceback
sys.path.insert(0, {root!r})
from tests.frameworks.test_arrow_frames import _columns, _frame, PARAMS
import lightgbm as lgb
from boostplug import lightgbm as bpl

def case(kind, path):
    x, cat, y, qid = _columns()
    X = _frame(kind, x, cat)
    if path == "dataset":
        booster = lgb.train(PARAMS, bpl.dataset(X, y, qid=qid), 5)
        print(booster.predict(X.to_pandas())[:2])
    else:
        ranker = bpl.LGBMRanker(n_estimators=5, n_jobs=1, verbose=-1, min_child_samples=2)
        print(ranker.fit(X, y, qid=qid).predict(X)[:2])

results = {{}}
for kind, path in {cases!r}:
    with tempfile.TemporaryFile() as err:
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.dup2(err.fileno(), 2)
                case(kind, path)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush(); sys.stderr.flush()
                os._exit(code)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        err.seek(0)
        results[kind + "-" + path] = [status, err.read().decode(errors="replace")]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def categorical_runs() -> dict:
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(boostplug.__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")]))
    cases = [(kind, path) for kind in ARROW_KINDS for path in PATHS]
    run = subprocess.run([sys.executable, "-c", _CHILD.format(root=root, cases=cases)],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", ARROW_KINDS)
def test_categorical_frame_does_not_end_the_process(kind, path, categorical_runs):
    # Before the conversion LightGBM aborted here (exit 134, "Unsupported Arrow type: dictionary"):
    # in a process of its own, so an abort fails this test instead of killing pytest.
    returncode, stderr = categorical_runs[f"{kind}-{path}"]
    assert returncode == 0, (returncode, stderr[-2000:])
    assert "Unsupported Arrow type" not in stderr


def _pandas_reference():
    x, cat, y, qid = _columns()
    X = _frame("pandas", x, cat)
    return X, y, qid, lgb.train(PARAMS, lgb.Dataset(X, y, group=np.bincount(qid)), 8)


@pytest.mark.parametrize("kind", ARROW_KINDS)
def test_dataset_trains_as_on_pandas_categoricals(kind):
    X_pd, y, qid, reference = _pandas_reference()
    x, cat, _, _ = _columns()
    X = _frame(kind, x, cat)
    booster = lgb.train(PARAMS, bpl.dataset(X, y, qid=qid), 8)
    # the column is a categorical feature, its categories recorded in the model
    assert [sorted(c) for c in booster.pandas_categorical] == [CATS]
    assert "num_cat=0" not in booster.model_to_string().split("Tree=0", 1)[1].split("Tree=1", 1)[0]
    # the same model as on pandas categoricals (codes may be numbered in another order: not bitwise)
    np.testing.assert_allclose(booster.predict(X.to_pandas()), reference.predict(X_pd), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ARROW_KINDS)
def test_ranker_fits_and_predicts_on_categorical_frames(kind):
    x, cat, y, qid = _columns()
    xv, catv, yv, qidv = _columns(seed=1)
    kw = dict(n_estimators=8, n_jobs=1, verbose=-1, min_child_samples=2, min_data_per_group=2, cat_smooth=1.0)
    ref = bpl.LGBMRanker(**kw).fit(_frame("pandas", x, cat), y, qid=qid,
                                   eval_set=[(_frame("pandas", xv, catv), yv)], eval_qid=[qidv])
    ranker = bpl.LGBMRanker(**kw).fit(_frame(kind, x, cat), y, qid=qid,
                                      eval_set=[(_frame(kind, xv, catv), yv)], eval_qid=[qidv])
    assert ranker.booster_.pandas_categorical and sorted(ranker.booster_.pandas_categorical[0]) == CATS
    Xt = _frame(kind, xv, catv)
    np.testing.assert_allclose(ranker.predict(Xt), ref.predict(_frame("pandas", xv, catv)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ranker.evals_result_["valid_0"]["ndcg@10"], ref.evals_result_["valid_0"]["ndcg@10"],
                               rtol=1e-12)
    assert 0 <= ranker.score(Xt, yv, qid=qidv) <= 1


def test_prediction_maps_categories_by_value_not_code():
    x, cat, y, qid = _columns()
    booster = lgb.train(PARAMS, bpl.dataset(_frame("pyarrow_dictionary", x, cat), y, qid=qid), 8)
    ranker = bpl.LGBMRanker(n_estimators=8, n_jobs=1, verbose=-1, min_child_samples=2, min_data_per_group=2,
                            cat_smooth=1.0).fit(_frame("pyarrow_dictionary", x, cat), y, qid=qid)
    # the same values under another dictionary order: other codes for each category
    trained = _frame("pyarrow_dictionary", x, cat)
    order = ["b", "d", "a", "c"]
    assert trained.column("c").chunk(0).dictionary.to_pylist() != order
    reordered = pa.table({"x": x, "c": pa.DictionaryArray.from_arrays(
        pa.array([order.index(c) for c in cat], pa.int32()), pa.array(order))})
    np.testing.assert_array_equal(booster.predict(reordered.to_pandas()), booster.predict(trained.to_pandas()))
    np.testing.assert_array_equal(ranker.predict(reordered), ranker.predict(trained))


def test_pandas_and_numeric_frames_pass_unchanged():
    from boostplug.frameworks.lightgbm.frames import lightgbm_frame

    x, cat, _, _ = _columns()
    for X in (_frame("pandas", x, cat), pl.DataFrame({"x": x, "b": x > 0}), pa.table({"x": x}), np.c_[x, x]):
        assert lightgbm_frame(X) is X


def test_boolean_columns_next_to_categoricals_become_floats():
    from boostplug.frameworks.lightgbm.frames import lightgbm_frame

    X = pl.DataFrame({"b": [True, None, False], "c": ["a", "b", "a"]}).with_columns(pl.col("c").cast(pl.Categorical))
    out = lightgbm_frame(X)
    np.testing.assert_array_equal(out["b"].to_numpy(), [1.0, np.nan, 0.0])
    assert isinstance(out["c"].dtype, pd.CategoricalDtype) and not out["c"].cat.ordered


BAD_COLUMNS = {
    "string": lambda n: pl.Series(["a"] * n),
    "date": lambda n: pl.Series([dt.date(2020, 1, 1)] * n),
    "decimal": lambda n: pl.Series([1] * n).cast(pl.Decimal(10, 2)),
    "list": lambda n: pl.Series([[1.0]] * n),
}


@pytest.mark.parametrize("bad", sorted(BAD_COLUMNS))
@pytest.mark.parametrize("source", ["polars", "pyarrow"])
def test_unreadable_column_is_refused_naming_it(bad, source):
    x, cat, y, qid = _columns()
    X = pl.DataFrame({"x": x, "weird": BAD_COLUMNS[bad](len(x))})
    if source == "pyarrow":
        X = X.to_arrow()
    with pytest.raises(ValueError, match=r"column 'weird' has type .*LightGBM cannot read"):
        bpl.dataset(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"column 'weird'"):
        bpl.LGBMRanker(n_estimators=2, verbose=-1).fit(X, y, qid=qid)
    good = bpl.LGBMRanker(n_estimators=2, verbose=-1, n_jobs=1).fit(pl.DataFrame({"x": x, "weird": x}), y, qid=qid)
    with pytest.raises(ValueError, match=r"X: column 'weird'"):
        good.predict(X)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: column 'weird'"):
        bpl.LGBMRanker(n_estimators=2, verbose=-1).fit(pl.DataFrame({"x": x, "weird": x}), y, qid=qid,
                                                       eval_set=[(X, y)], eval_qid=[qid])


@pytest.mark.parametrize("kind", ARROW_KINDS)
def test_xgboost_takes_categorical_frames_as_pandas(kind):
    # XGBoost reads these frames itself (enable_categorical=True) without ending the process.
    x, cat, y, qid = _columns()
    params = {"objective": "rank:ndcg", "nthread": 1, "tree_method": "hist", "max_cat_to_onehot": 1}
    ref = xgb.train(params, bpx.dmatrix(_frame("pandas", x, cat), y, qid=qid, enable_categorical=True), 5)
    X = _frame(kind, x, cat)
    booster = xgb.train(params, bpx.dmatrix(X, y, qid=qid, enable_categorical=True), 5)
    dpd = xgb.DMatrix(_frame("pandas", x, cat), enable_categorical=True)
    np.testing.assert_allclose(booster.predict(dpd), ref.predict(dpd), rtol=1e-6)
    ranker = bpx.XGBRanker(n_estimators=5, n_jobs=1, enable_categorical=True).fit(X, y, qid=qid)
    assert ranker.predict(X).shape == y.shape
