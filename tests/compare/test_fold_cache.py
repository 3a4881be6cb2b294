"""The per-process fold cache (:mod:`boostplug.compare.fold_cache`): a kept LightGBM Dataset,
XGBoost DMatrix or checked feature array trains exactly as a fresh one, and a tuned comparison
builds each once per fold instead of once per trial."""

from __future__ import annotations

import json
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug.cli import main
from boostplug.compare import fold_cache
from boostplug.data import make_ranking

pytest.importorskip("optuna")


@pytest.fixture(autouse=True)
def _empty_cache():
    fold_cache.clear()
    yield
    fold_cache.clear()


@pytest.fixture
def constructions(monkeypatch):
    """How many LightGBM Datasets got constructed (binned) and XGBoost DMatrix built."""
    counts = {"lightgbm": 0, "xgboost": 0}
    lazy_init, dm_init = lgb.Dataset._lazy_init, xgb.DMatrix.__init__

    def counted_lazy_init(self, *a, **k):
        counts["lightgbm"] += 1
        return lazy_init(self, *a, **k)

    def counted_dm_init(self, *a, **k):
        counts["xgboost"] += 1
        return dm_init(self, *a, **k)

    monkeypatch.setattr(lgb.Dataset, "_lazy_init", counted_lazy_init)
    monkeypatch.setattr(xgb.DMatrix, "__init__", counted_dm_init)
    return counts


def _part_with_a_rare_feature():
    """Feature 0 is non-zero on 30 rows only: LightGBM's pre-filter drops it once
    ``min_data_in_leaf`` exceeds about 30, so which features a Dataset keeps depends on it."""
    d = make_ranking(n_queries=40, docs_per_query=(8, 12), n_features=6, n_informative=4, n_labels=4, noise=0.3,
                     seed=4)
    X = d.X.copy()
    X[:, 0] = 0.0
    X[np.random.default_rng(1).choice(len(X), 30, replace=False), 0] = 1.0
    d.X = X
    return d


def _params(level: int) -> dict:
    return {"objective": "lambdarank", "verbose": -1, "num_threads": 1, "seed": 3, "deterministic": True,
            "num_leaves": 7, "learning_rate": 0.2, "feature_fraction": 0.5, "min_data_in_leaf": level,
            "max_bin": 255}


def _model(d, level: int) -> str:
    def build():
        return bpl.dataset(d.X, d.y, group_ptr=d.group_ptr)

    booster = fold_cache.lightgbm_train(_params(level), d, build, lambda ds: lgb.train(_params(level), ds, 8))
    return booster.model_to_string()


def test_a_kept_lightgbm_dataset_trains_the_same_model_as_a_fresh_one(constructions) -> None:
    d = _part_with_a_rare_feature()
    levels = [20, 5, 60, 10, 40, 25, 60, 15, 50, 20]
    with fold_cache.disabled():
        fresh = [_model(d, m) for m in levels]
    assert constructions["lightgbm"] == len(levels)
    constructions["lightgbm"] = 0
    assert [_model(d, m) for m in levels] == fresh
    # 20, 5, 60 new; 10 between 5 and 20 (same features); 40 between 20 and 60 (not: feature 0 goes)
    # new; 25 between 20 and 40: new only if 40 keeps fewer features than 20; the rest kept
    assert 4 <= constructions["lightgbm"] <= 6 < len(levels)


def test_lambdarank_trials_of_other_truncations_and_sigmoids_share_one_dataset(constructions) -> None:
    d = _part_with_a_rare_feature()
    losses = [{"lambdarank_truncation_level": 30, "sigmoid": 1.0}, {"lambdarank_truncation_level": 2147483647,
              "sigmoid": 2.3}, {"lambdarank_truncation_level": 10, "sigmoid": 0.4}]

    def model(loss: dict) -> str:
        p = {**_params(20), **loss}
        return fold_cache.lightgbm_train(p, d, lambda: bpl.dataset(d.X, d.y, group_ptr=d.group_ptr),
                                         lambda ds: lgb.train(p, ds, 8)).model_to_string()

    with fold_cache.disabled():
        fresh = [model(loss) for loss in losses]
    constructions["lightgbm"] = 0
    assert [model(loss) for loss in losses] == fresh and len(set(fresh)) == 3
    assert constructions["lightgbm"] == 1


def test_a_dataset_binned_for_a_lower_min_data_in_leaf_would_train_another_model() -> None:
    # what the cache guards against: LightGBM accepts a raised min_data_in_leaf on a constructed
    # Dataset but keeps the features the lower one kept, so feature_fraction samples others
    d = _part_with_a_rare_feature()
    ds = bpl.dataset(d.X, d.y, group_ptr=d.group_ptr)
    lgb.train(_params(5), ds, 1)
    assert ds.feature_num_bin(0) > 0
    reused = lgb.train(_params(60), ds, 8).model_to_string()
    with fold_cache.disabled():
        assert reused != _model(d, 60)


def test_other_binning_parameters_never_share_a_dataset(constructions) -> None:
    d = _part_with_a_rare_feature()

    def train(max_bin: int) -> str:
        p = {**_params(20), "max_bin": max_bin}
        return fold_cache.lightgbm_train(p, d, lambda: bpl.dataset(d.X, d.y, group_ptr=d.group_ptr),
                                         lambda ds: lgb.train(p, ds, 4)).model_to_string()

    first, other, again = train(255), train(7), train(255)
    assert constructions["lightgbm"] == 2 and first == again
    with fold_cache.disabled():
        assert other == train(7)


def test_no_training_sees_the_parameters_of_another_on_a_kept_dataset(constructions) -> None:
    # LightGBM's objectives read the training's parameters from the Dataset: a kept one carried those of the
    # training that constructed it (lambdarank's truncation and sigmoid), which the catalogue's copy of lambdarank
    # then trained with and ndcg_loss2pp warned about ("... which ndcg_loss2pp does not read")
    import warnings

    from boostplug.compare import TREE_PARAMS, get_method

    d = _part_with_a_rare_feature()
    specs = ["lambdarank[lambdarank_truncation_level=10,sigmoid=2]", "lambdarank-plugin", "ndcg_loss2pp"]

    def scores(spec: str) -> list:
        return get_method(spec).train(d, d, d, rounds=5, tree_params=TREE_PARAMS, seed=0).test_scores

    with fold_cache.disabled():
        fresh = [scores(s) for s in specs]
    constructions["lightgbm"] = 0
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        kept = [scores(s) for s in specs]
    assert constructions["lightgbm"] == 1  # one Dataset for the three
    for a, b in zip(kept, fresh):
        assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not [w for w in said if "lambdarank_truncation_level" in str(w.message) or "sigmoid" in str(w.message)]


_FAILED_CONSTRUCTION = """
import sys
from dataclasses import replace
from boostplug.compare import METHODS, load_folds
from boostplug.compare.execution import _attempt
from boostplug.compare.fold_cache import _store

fold = load_folds(sys.argv[1], n_folds=3, seed=0)[0][1]
bad = replace(METHODS["lambdarank"], loss_params={"lambdarank_truncation_level": 2**31})  # past get_method's check
for _ in range(2):
    failed = _attempt("lambdarank[lambdarank_truncation_level=2147483648]", 0, fold, {"rounds": 2, "method": bad})
    print(type(failed).__name__, failed.method, failed.fold, failed.error.split(" at ")[0])
    print("kept", sum(len(t.levels) for t in _store.values() if hasattr(t, "levels")))
good = _attempt("lambdarank", 0, fold, {"rounds": 2})
print(type(good).__name__, good.method, "kept", sum(len(t.levels) for t in _store.values() if hasattr(t, "levels")))
"""


def test_a_dataset_whose_construction_failed_is_never_kept_nor_read(tmp_path: Path) -> None:
    # LightGBM refuses a truncation beyond its 32-bit int while constructing the Dataset, which was kept with its null
    # handle and read: the process segfaulted (rc 139), through compare's workers and through the Python API alike
    import subprocess
    import sys

    from boostplug.data import write_letor

    data = tmp_path / "g.txt"
    write_letor(data, make_ranking(n_queries=30, docs_per_query=10, n_labels=4, seed=0))
    out = subprocess.run([sys.executable, "-c", _FAILED_CONSTRUCTION, str(data)], capture_output=True, text=True,
                         timeout=600, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    failed = ("Failure lambdarank[lambdarank_truncation_level=2147483648] 0 LightGBMError: Check failed: "
              "(lambdarank_truncation_level) > (0)")
    assert out.stdout.splitlines() == [failed, "kept 0", failed, "kept 0", "Result lambdarank kept 1"]


TUNED_METHODS = "lambdarank,ndcg_boost,xgb-rank:ndcg,xgb-mpboost-ldd,rb-c"


def _numbers(out: Path) -> dict:
    """results.json without what varies between runs (times, provenance, the digests over them)."""
    payload = json.loads((out / "results.json").read_text())

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if k not in ("seconds", "provenance", "started", "finished", "digest")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(payload["results"])


def test_a_tuned_comparison_gives_the_same_results_with_the_cache_and_builds_once_per_fold(
        tmp_path: Path, capsys, constructions) -> None:
    argv = ["compare", "--methods", TUNED_METHODS, "--tune", "3", "--rounds", "8", "--protocol", "letor",
            "--select", "map", "--jobs", "1", "--threads", "1", "--no-progress", "--no-plots"]
    with fold_cache.disabled():
        assert main([*argv, "--out", str(tmp_path / "fresh")]) == 0
    fresh = dict(constructions)
    constructions.update(lightgbm=0, xgboost=0)
    assert main([*argv, "--out", str(tmp_path / "kept")]) == 0
    capsys.readouterr()
    kept = _numbers(tmp_path / "kept")
    assert kept == _numbers(tmp_path / "fresh")
    trials = [t for r in kept for t in r["info"]["tuning"]["trials"]]
    assert len(trials) == 5 * 3 and {t["state"] for t in trials} <= {"complete", "pruned"}
    # fresh: a Dataset per LightGBM trial, three DMatrix (train, vali, test) per XGBoost trial
    assert fresh == {"lightgbm": 6, "xgboost": 18}
    # kept: the two LightGBM methods share the fold's Datasets (one per min_data_in_leaf that
    # keeps other features, at most one per trial), the XGBoost ones build three DMatrix once
    assert constructions["xgboost"] == 3 and constructions["lightgbm"] < fresh["lightgbm"]


def test_dense_features_are_checked_once_per_part() -> None:
    d = make_ranking(n_queries=5, docs_per_query=(3, 4), n_features=2, n_informative=2, seed=0)
    calls = []
    first = fold_cache.cached("dense-features", d, lambda: calls.append(1) or d.X.copy())
    again = fold_cache.cached("dense-features", d, lambda: calls.append(1) or d.X.copy())
    assert first is again and len(calls) == 1
    other = make_ranking(n_queries=5, docs_per_query=(3, 4), n_features=2, n_informative=2, seed=1)
    assert fold_cache.cached("dense-features", other, lambda: other.X) is other.X  # other content, other entry
    with fold_cache.disabled():
        assert fold_cache.cached("dense-features", d, lambda: "fresh") == "fresh"
