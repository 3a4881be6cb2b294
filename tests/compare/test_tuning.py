"""``boostplug compare``: method settings (``name:key=value`` / ``name[key=value]``), the
``--config`` file and its precedence, and ``--tune`` (Optuna, one study per method and fold)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from boostplug.cli import main
from boostplug.compare import METHODS, get_method, run
from boostplug.compare import execution as runner_mod
from boostplug.compare.method_specs import format_value, parse_value, split_specs
from boostplug.compare.search_spaces import TREE_SPACE
from boostplug.data import make_ranking
from tests._helpers import three_way_split

pytest.importorskip("optuna")

FAST = ["--rounds", "3", "--no-progress", "--no-plots"]


@pytest.fixture(scope="module")
def fold():
    d = make_ranking(n_queries=30, docs_per_query=(5, 9), n_features=5, n_informative=3, seed=3)
    return three_way_split(d, test_size=6, vali_size=8)


def _error(capsys, argv: list[str]) -> str:
    assert main(["compare", *argv]) == 2
    return capsys.readouterr().err


def _no_training(monkeypatch) -> None:
    monkeypatch.setattr(runner_mod, "run_method", lambda *a, **k: pytest.fail("trained despite a bad setting"))


# ---- settings syntax -----------------------------------------------------------------------
def test_specs_split_on_commas_between_methods_only() -> None:
    text = "mpboost-ldd:alpha=0.3,lam=2,lambdarank,xgb-rank:ndcg,xgb-rank:ndcg:lambda_l2=1,rb-c[max_thresholds=16]"
    assert split_specs(text) == ["mpboost-ldd:alpha=0.3,lam=2", "lambdarank", "xgb-rank:ndcg",
                                 "xgb-rank:ndcg:lambda_l2=1", "rb-c[max_thresholds=16]"]
    assert split_specs("qbrank;ndcg_boost:sigma=1") == ["qbrank", "ndcg_boost:sigma=1"]


@pytest.mark.parametrize("text,value", [("3", 3), ("0.3", 0.3), ("1e-3", 1e-3), ("true", True), ("False", False),
                                        ("none", None), ("ldd", "ldd"), ("ndcg@5", "ndcg@5"), ("[0,1,3]", [0, 1, 3])])
def test_values_parse_and_print_back(text: str, value) -> None:
    assert parse_value(text) == value and type(parse_value(text)) is type(value)
    assert parse_value(format_value(value)) == value
    assert format_value(np.float64(0.25)) == "0.25"


def test_a_configured_method_shows_its_settings_and_reads_back() -> None:
    m = get_method("mpboost-ldd:alpha=0.3")
    assert m.name == "mpboost-ldd[alpha=0.3]" and m.registry_name == "mpboost-ldd"
    assert m.loss_params == {"ddf": "ldd", "alpha": 0.3} and m.framework == "lightgbm"
    assert get_method(m.name) == m  # the display name is itself a spec
    t = get_method("xgb-rank:ndcg:lambda_l2=1,num_leaves=15")
    assert t.name == "xgb-rank:ndcg[lambda_l2=1,num_leaves=15]" and t.tree_params == {"lambda_l2": 1, "num_leaves": 15}
    b = get_method("ndcg_boost-stumps[n_rounds=7,sigma=1.5]")
    assert b.loss_params == {"n_rounds": 7, "sigma": 1.5}
    assert get_method("lambdarank") is METHODS["lambdarank"]


def test_unknown_setting_says_did_you_mean_and_lists_the_parameters() -> None:
    with pytest.raises(ValueError, match=r"has no parameter 'alpah'; did you mean alpha\? its parameters are "
                                         r"ddf, alpha, lam, beta, hessian, hessian_floor, learning_rate"):
        get_method("mpboost-ldd:alpah=0.3")
    with pytest.raises(ValueError, match=r"'rb-c' has no parameter 'max_threshold'; did you mean max_thresholds"):
        get_method("rb-c:max_threshold=8")
    with pytest.raises(ValueError, match=r"unknown method 'lambdrank' \(did you mean lambdarank"):
        get_method("lambdrank:num_leaves=3")


@pytest.mark.parametrize("spec,says", [
    ("mpboost-ldd:alpha=-1", "alpha must be a positive finite number"),                 # the objective's check
    ("ndcg_boost:sigma=abc", "sigma must be a number"),
    ("qbrank:tau=fast", "tau must be one of ['grade']"),
    ("rb-c:thresholds=x", "thresholds must be one of"),                       # the booster's own check
    ("rb-c:n_rounds=0", "n_rounds must be an integer >= 1, got 0"),
    ("mpboost-stumps:lam=-1", "lam for ddf='logdd' must be a positive finite number"),
    ("lambdarank:num_leaves=1", "num_leaves=1: must be between 2 and 131072"),  # check_tree_params
    ("mpboost-ldd:learning_rate=0", "learning_rate=0: must be > 0"),
])
def test_invalid_settings_are_refused_before_training(capsys, monkeypatch, spec: str, says: str) -> None:
    _no_training(monkeypatch)
    err = _error(capsys, ["--methods", spec, *FAST])
    assert says in err and spec.split(":")[0] in err


def test_methods_accepts_several_words_and_did_you_mean(capsys, monkeypatch) -> None:
    _no_training(monkeypatch)
    assert "did you mean alpha" in _error(capsys, ["--methods", "lambdarank", "mpboost-ldd:alpah=1", *FAST])
    assert "(did you mean lambdarank" in _error(capsys, ["--methods", "lambdrank", *FAST])


def test_two_settings_of_one_method_run_side_by_side(fold) -> None:
    names = ["mpboost-ldd", "mpboost-ldd[alpha=1.0]", "lambdarank[num_leaves=3]"]
    rs = run(names, [(0, fold)], rounds=5, threads=1)
    assert [r.method for r in rs] == names and not rs.failures
    assert set(rs[0].info) == {"relevant_queries"} and rs[1].rounds_trained == 5


@pytest.mark.parametrize("plain,configured", [("mpboost-ldd", "mpboost-ldd[alpha=1.0]"),
                                              ("lambdarank", "lambdarank[num_leaves=3]"),
                                              ("xgb-rank:ndcg", "xgb-rank:ndcg[num_leaves=3]"),
                                              ("rb-c", "rb-c[max_thresholds=2]")])
def test_a_setting_reaches_training(fold, plain: str, configured: str) -> None:
    kw = {"rounds": 3, "tree_params": {"min_data_in_leaf": 3, "num_leaves": 31}, "seed": 0, "threads": 1}
    a, b = (get_method(n).train(*fold, **kw) for n in (plain, configured))
    assert not np.allclose(a.vali_scores[-1], b.vali_scores[-1])


def test_cli_table_names_the_settings(letor_file: Path, capsys) -> None:
    assert main(["compare", "--data", str(letor_file), "--folds", "1", "--methods",
                 "mpboost-ldd:alpha=0.3", "mpboost-ldd", *FAST]) == 0
    out = capsys.readouterr().out
    assert "mpboost-ldd[alpha=0.3]" in out and "\nmpboost-ldd " in out


# ---- --config ------------------------------------------------------------------------------
def _capture_run(monkeypatch) -> dict:
    from boostplug.cli import compare as cli

    seen: dict = {}

    def fake_run(methods, folds, **kw):
        seen.update(kw, methods=methods)
        return runner_mod.Results([], methods=methods)

    monkeypatch.setattr(cli, "run", fake_run)
    return seen


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_config_file_and_command_line_precedence(tmp_path: Path, letor_file: Path, monkeypatch, suffix: str) -> None:
    seen = _capture_run(monkeypatch)
    cfg = tmp_path / f"c{suffix}"
    if suffix == ".toml":
        cfg.write_text(f'data = "{letor_file}"\nrounds = 7\nselect = "map"\ntune = 2\nseed = 4\n'
                       'methods = ["lambdarank", {name = "mpboost-ldd", alpha = 0.3}, "rb-c:max_thresholds=16"]\n'
                       '[tree_params]\nnum_leaves = 15\nlearning_rate = 0.2\n')
    else:
        cfg.write_text(json.dumps({"data": str(letor_file), "rounds": 7, "select": "map", "tune": 2, "seed": 4,
                                   "methods": ["lambdarank", {"name": "mpboost-ldd", "alpha": 0.3},
                                               "rb-c:max_thresholds=16"],
                                   "tree_params": {"num_leaves": 15, "learning_rate": 0.2}}))
    main(["compare", "--config", str(cfg), "--folds", "1", "--no-progress"])
    assert seen["methods"] == ["lambdarank", "mpboost-ldd[alpha=0.3]", "rb-c[max_thresholds=16]"]
    assert (seen["rounds"], seen["metric"], seen["tune"], seen["seed"]) == (7, "map", 2, 4)
    assert seen["tree_params"] == {"num_leaves": 15, "learning_rate": 0.2}
    # flags win; --param goes over the file's tree_params key by key
    main(["compare", "--config", str(cfg), "--folds", "1", "--no-progress", "--rounds", "300", "--tune", "0",
          "--early-stopping-metric", "ndcg@5", "--methods", "qbrank", "--param", "num_leaves=7"])
    assert seen["methods"] == ["qbrank"]
    assert (seen["rounds"], seen["metric"], seen["tune"], seen["seed"]) == (300, "ndcg@5", 0, 4)
    assert seen["tree_params"] == {"num_leaves": 7, "learning_rate": 0.2}


def test_config_errors_are_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    _no_training(monkeypatch)
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"round": 3}))
    assert "unknown setting 'round'; did you mean rounds?" in _error(capsys, ["--config", str(bad)])
    bad.write_text(json.dumps({"rounds": "many"}))
    assert "rounds must be an integer, got 'many'" in _error(capsys, ["--config", str(bad)])
    bad.write_text("{")
    assert "not valid JSON" in _error(capsys, ["--config", str(bad)])
    bad.write_text(json.dumps({"methods": [{"name": "mpboost-ldd", "alpah": 1}]}))
    assert "did you mean alpha" in _error(capsys, ["--config", str(bad)])


def test_bad_tune_is_refused(capsys, monkeypatch) -> None:
    _no_training(monkeypatch)
    assert "--tune must be >= 0" in _error(capsys, ["--tune", "-1", *FAST])
    import sys

    monkeypatch.setitem(sys.modules, "optuna", None)
    assert "pip install 'optuna>=4.0'" in _error(capsys, ["--tune", "2", *FAST])


# ---- --tune --------------------------------------------------------------------------------
TUNED = ["lambdarank", "mpboost-ldd", "xgb-rank:ndcg", "rb-c", "adarank-map"]


@pytest.fixture(scope="module")
def tuned(fold):
    return run(TUNED, [(0, fold)], rounds=6, tune=3, seed=5, threads=1)


def _trials(results) -> list:
    return [[(t["params"], t["value"], t["best_round"]) for t in r.info["tuning"]["trials"]] for r in results]


def test_tuning_is_deterministic_with_a_seed(fold, tuned) -> None:
    again = run(TUNED, [(0, fold)], rounds=6, tune=3, seed=5, threads=1)
    assert _trials(again) == _trials(tuned)
    assert [r.test for r in again] == [r.test for r in tuned]
    other = run(["lambdarank"], [(0, fold)], rounds=6, tune=3, seed=6, threads=1)
    assert _trials(other)[0][1][0] != _trials(tuned)[0][1][0]  # another seed, other trials


def test_every_method_with_a_space_gets_the_same_trials(tuned) -> None:
    counts = {r.method: r.info["tuning"]["n_trials"] for r in tuned}
    assert counts == {"lambdarank": 3, "mpboost-ldd": 3, "xgb-rank:ndcg": 3, "rb-c": 3, "adarank-map": 1}
    for r in tuned:
        t = r.info["tuning"]
        assert len(t["trials"]) == t["n_trials"] and t["trials"][0]["params"] == {}  # trial 0: the defaults
        assert t["seconds"] > 0
    spaces = {r.method: set(r.info["tuning"]["space"]) for r in tuned}
    assert spaces["lambdarank"] == set(TREE_SPACE) | {"sigmoid", "lambdarank_truncation_level"}  # its own too
    assert spaces["xgb-rank:ndcg"] == set(TREE_SPACE) - {"min_data_in_leaf"} | {"lambdarank_num_pair_per_sample"}
    assert spaces["mpboost-ldd"] == set(TREE_SPACE) | {"alpha"}
    assert spaces["rb-c"] == {"max_thresholds"} and spaces["adarank-map"] == set()


def test_a_fixed_setting_is_not_searched(fold) -> None:
    r = run(["mpboost-ldd[alpha=0.5,num_leaves=7]"], [(0, fold)], rounds=3, tune=2, threads=1)[0]
    assert set(r.info["tuning"]["space"]) == set(TREE_SPACE) - {"num_leaves"}
    assert all("alpha" not in t["params"] for t in r.info["tuning"]["trials"])


def test_the_chosen_trial_is_the_model_evaluated_and_no_worse_than_the_defaults(fold) -> None:
    # 2 rounds at learning rate 0.001 barely move the scores: the search finds a better setting
    r = run(["lambdarank"], [(0, fold)], rounds=2, tune=4, seed=0, threads=1,
            tree_params={"learning_rate": 0.001})[0]
    t = r.info["tuning"]
    values = [x["value"] for x in t["trials"]]
    best = t["trials"][t["best_trial"]]
    assert best["value"] == max(values) >= values[0]
    assert best["value"] > values[0]  # built so that the defaults lose
    # the evaluated model is the chosen trial's (kept, not retrained): its validation curve peaks there
    assert max(r.vali_curve) == pytest.approx(best["value"]) and r.best_round == best["best_round"]
    assert t["chosen"]["learning_rate"] == best["params"]["learning_rate"] > 0.001


def test_parallel_tuning_equals_serial(fold, tuned) -> None:
    par = run(TUNED, [(0, fold)], rounds=6, tune=3, seed=5, jobs=2, threads=1)
    assert _trials(par) == _trials(tuned)
    assert [r.test for r in par] == [r.test for r in tuned]


def test_tuning_records_in_results_json_and_tuning_csv(letor_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1,2", "--methods",
                 "lambdarank,adarank-map", "--tune", "2", "--out", str(out), *FAST]) == 0
    table = capsys.readouterr().out
    assert "tune s" in table and "2/1 trials" not in table and "1/2 trials" in table
    payload = json.loads((out / "results.json").read_text())
    assert payload["settings"]["tune"] == 2
    tunings = {(r["method"], r["fold"]): r["info"]["tuning"] for r in payload["results"]}
    assert sorted(tunings) == [("adarank-map", 1), ("adarank-map", 2), ("lambdarank", 1), ("lambdarank", 2)]
    lam = tunings[("lambdarank", 1)]
    assert set(lam["chosen"]) == set(TREE_SPACE) | {"sigmoid", "lambdarank_truncation_level"} and len(lam["trials"]) == 2 and lam["seconds"] > 0
    assert {"params", "value", "best_round", "seconds"} <= set(lam["trials"][0])
    with open(out / "tuning.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 + 2 * 1
    first = [r for r in rows if r["method"] == "lambdarank" and r["fold"] == "1"]
    assert [json.loads(r["params"]) for r in first] == [t["params"] for t in lam["trials"]]
    assert [float(r["value"]) for r in first] == [t["value"] for t in lam["trials"]]
    assert sum(int(r["chosen"]) for r in first) == 1
    assert [r["state"] for r in first] == [t["state"] for t in lam["trials"]] == ["complete", "complete"]


def test_ctrl_c_during_a_search_keeps_the_finished_studies(fold, monkeypatch) -> None:
    from boostplug.compare import tuning

    real = tuning.tune
    calls = []

    def interrupted_second(method, *a, **k):
        calls.append(method.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(method, *a, **k)

    monkeypatch.setattr(tuning, "tune", interrupted_second)
    rs = run(["lambdarank", "qbrank", "regression"], [(0, fold)], rounds=3, tune=2, threads=1)
    assert rs.interrupted and [r.method for r in rs] == ["lambdarank"]
    assert rs[0].info["tuning"]["n_trials"] == 2


def test_a_trial_that_fails_is_recorded_and_the_search_goes_on(fold, monkeypatch) -> None:
    from boostplug.compare import methods

    real = methods.Method.train

    def fail_small_leaves(self, *a, **k):
        if self.tree_params.get("num_leaves", 31) < 60:
            raise ValueError("refused on purpose")
        return real(self, *a, **k)

    monkeypatch.setattr(methods.Method, "train", fail_small_leaves)
    r = run(["lambdarank"], [(0, fold)], rounds=2, tune=4, seed=1, threads=1)[0]
    trials = r.info["tuning"]["trials"]
    failed = [t for t in trials if t["error"]]
    assert failed and all(t["value"] is None and "refused on purpose" in t["error"] for t in failed)
    assert len(trials) == 4 and trials[r.info["tuning"]["best_trial"]]["error"] == ""


def test_an_interrupt_in_a_trial_propagates_without_redrawing_progress_or_recording_a_failure() -> None:
    from boostplug.compare import tuning

    calls: list[tuple[int, int]] = []

    def train_one(method, checkpoint):
        raise KeyboardInterrupt

    def progress(done: int, total: int) -> None:  # a terminal gone after SIGHUP: writing fails
        calls.append((done, total))
        raise OSError("terminal gone")

    with pytest.raises(KeyboardInterrupt):
        tuning.tune(get_method("lambdarank"), 3, train_one, lambda trained: (0.5, 1), metric="ndcg@10", seed=0, fold=0,
                    progress=progress)
    assert calls == []


# ---- pruning on the validation curve ---------------------------------------------------------------
def test_pruning_stops_poor_trials_counts_them_and_never_prunes_the_defaults(fold, tmp_path: Path) -> None:
    from boostplug.compare.tuning import PRUNE_STARTUP

    r = run(["lambdarank", "rb-c"], [(0, fold)], rounds=20, tune=16, seed=1, threads=1)
    for res in r:
        t = res.info["tuning"]
        trials = t["trials"]
        assert len(trials) == t["n_trials"] == (16 if res.method == "lambdarank" else len(trials))
        assert trials[0]["state"] == "complete"
        pruned = [x for x in trials if x["state"] == "pruned"]
        for x in pruned:
            assert x["number"] >= PRUNE_STARTUP and 0 < x["pruned_at"] < 20 and x["value"] is not None
        assert trials[t["best_trial"]]["state"] == "complete"
    lam = next(res for res in r if res.method == "lambdarank")
    assert any(x["state"] == "pruned" for x in lam.info["tuning"]["trials"])


def test_a_pruned_trial_reports_its_best_checkpoint_value(fold, monkeypatch) -> None:
    """The value a pruned trial carries is the best selection-metric value of its checkpoints."""
    from boostplug.compare import tuning
    from boostplug.compare.training import checkpoint_rounds

    seen: dict[int, list[float]] = {}
    real = tuning.tune

    def spy(method, n_trials, train_one, score, **kw):
        def train(m, checkpoint):
            values: list[float] = []
            seen[len(seen)] = values

            def watch(step, vali_scores):
                values.append(kw["value"](vali_scores))
                checkpoint(step, vali_scores)

            return train_one(m, watch)

        return real(method, n_trials, train, score, **kw)

    monkeypatch.setattr(tuning, "tune", spy)
    r = run(["lambdarank"], [(0, fold)], rounds=20, tune=16, seed=1, threads=1)[0]
    assert list(checkpoint_rounds(20)) == [2, 4, 6, 8, 10, 12, 14, 16, 18]
    for x in r.info["tuning"]["trials"]:
        values = seen[x["number"]]
        if x["state"] == "pruned":
            assert x["value"] == max(values) and len(values) == list(checkpoint_rounds(20)).index(x["pruned_at"]) + 1
        else:
            assert len(values) == 9


def test_booster_scores_summed_while_training_equal_staged_predict(fold) -> None:
    from boostplug import boosters

    train, vali, test = fold
    got = get_method("rankboost+").train(train, vali, test, rounds=8, tree_params={}, seed=0)
    est = boosters.RankBoost(variant="rankboost+", n_rounds=8, random_state=0)
    est.fit(train.X, train.y, group=np.diff(train.group_ptr))
    for mine, want in ((got.vali_scores, est.staged_predict(vali.X)), (got.test_scores, est.staged_predict(test.X))):
        want = list(want)
        assert len(mine) == len(want) == len(est.rankers_)
        for a, b in zip(mine, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["lambdarank", "cb-yetirank-plugin", "click:lgb-clicks"])
def test_a_runs_predictions_and_kernels_keep_to_its_threads(fold, monkeypatch, method: str) -> None:
    """LightGBM's and CatBoost's predict use every core unless told (not the training's thread count):
    the pruning checkpoints and the staged scores of a --tune run took a second core with --threads 1,
    and so did the click protocol's production ranker (its predictions had no count). LightGBM's
    predictions keep to the run's limit (OpenMP's count, not one passed at each call); CatBoost's own
    pool takes its ``thread_count``."""
    from boostplug.compare import ClickSettings
    from boostplug.compare.clicks import ClickRunner

    import lightgbm as lgb
    import numba
    from threadpoolctl import threadpool_info

    seen = []
    if method != "cb-yetirank-plugin":
        real = lgb.Booster.predict

        def predict(self, data, *args, **kwargs):
            openmp = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "openmp"]
            seen.append((max(openmp), numba.get_num_threads()))
            return real(self, data, *args, **kwargs)

        monkeypatch.setattr(lgb.Booster, "predict", predict)
    else:
        catboost = pytest.importorskip("catboost")
        real = catboost.CatBoost.predict

        def predict(self, data, *args, **kwargs):
            seen.append((kwargs.get("thread_count"), numba.get_num_threads()))
            return real(self, data, *args, **kwargs)

        monkeypatch.setattr(catboost.CatBoost, "predict", predict)
    click = ClickRunner(ClickSettings(n_sessions=500, labeled_fraction=0.5, production_rounds=5))
    results = run([method.removeprefix("click:")], [(0, fold)], rounds=4, tune=2, jobs=1, threads=1, seed=0,
                  runner=click if method.startswith("click:") else None)
    assert len(results) == 1 and not results.failures
    assert seen and set(seen) == {(1, 1)}, seen


#: A child process's run under threads=1 (fresh: JAX's CPU client starts in the run), measured after a first run that
#: compiles: its CPU seconds over wall seconds, and each thread's share of the CPU time (from /proc: a share does not
#: depend on how busy the machine is, where CPU / wall does).
_CORES_CHILD = """
import json, os, sys, time
from boostplug.compare import run
from boostplug.data import make_ranking
from tests._helpers import three_way_split


def ticks():
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            fields = open(f"/proc/self/task/{t}/stat").read().rsplit(")", 1)[1].split()
            out[t] = int(fields[11]) + int(fields[12])
        except OSError:  # a thread that ended
            pass
    return out


d = make_ranking(n_queries=80, docs_per_query=(20, 40), n_features=8, n_informative=4, seed=3)
fold = three_way_split(d, test_size=12, vali_size=12)
assert not run([sys.argv[1]], [(0, fold)], rounds=8, jobs=1, threads=1, seed=0).failures
before, t0, c0 = ticks(), time.perf_counter(), time.process_time()
assert not run([sys.argv[1]], [(0, fold)], rounds=8, jobs=1, threads=1, seed=0).failures
wall, cpu, after = time.perf_counter() - t0, time.process_time() - c0, ticks()
used = {t: n - before.get(t, 0) for t, n in after.items()}
others = sorted((n / max(1, sum(used.values())) for t, n in used.items() if t != str(os.getpid())), reverse=True)
print(json.dumps({"cores": cpu / wall, "shares": others[:4]}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the threads' CPU times from /proc")
def test_a_neural_ndcg_run_under_threads_1_keeps_to_one_core() -> None:
    """Under threads=1 a neural_ndcg run used 1.33 cores: XLA computed the JaxLoss on a pool of a thread per core. One
    limit around each run (_core.threads.run_limit) starts XLA's pool with the run's count: at most 1.1 cores (CPU
    seconds over wall seconds), and the work on one thread beside the main one (XLA's: a quarter of the CPU or more; another thread took a fifth
    once, one after the other, in a loaded suite: the cores stayed at 1.0)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("jax")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PJRT_NPROC")}
    out = subprocess.run([sys.executable, "-c", _CORES_CHILD, "neural_ndcg"], capture_output=True, text=True,
                         cwd=root, env={**env, "PYTHONPATH": str(root)}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["cores"] <= 1.1 and sum(share >= 0.25 for share in got["shares"]) <= 1, got
