"""Unbounded parameters are refused before training (issue 22 item 8): rounds beyond the
frameworks' 32-bit counters, tree parameters beyond what LightGBM and XGBoost read, seeds
XGBoost cannot take, and rounds or trials whose records cannot fit in the memory available.
The first tests pin the frameworks' own limits, so that ours are the real ones."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from boostplug import _memory
from boostplug._validation import FLOAT32_MAX, INT32_MAX, ROUNDS_MAX, check_rounds
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost
from boostplug.boosters._estimator import BYTES_PER_ROUND
from boostplug.cli import main
from boostplug.compare import execution, get_method
from boostplug.compare.budget import SCORE_BYTES, TRIAL_BYTES, Budget, check_budget
from boostplug.compare.methods import check_tree_params
from boostplug.data import make_ranking
from tests._helpers import three_way_split


# ---- the frameworks' limits ------------------------------------------------------------------
def _tiny():
    rng = np.random.default_rng(0)
    return rng.normal(size=(200, 3)), rng.integers(0, 3, 200)


def test_lightgbm_counts_rounds_and_reads_max_bin_in_a_32_bit_int():
    lgb = pytest.importorskip("lightgbm")
    X, y = _tiny()
    params = {"objective": "lambdarank", "verbose": -1}

    def stop(env):
        raise StopIteration(env.iteration)

    with pytest.raises(StopIteration):  # 2^31 - 1 rounds start
        lgb.train(params, lgb.Dataset(X, y, group=[20] * 10), num_boost_round=ROUNDS_MAX, callbacks=[stop])
    with pytest.raises(lgb.basic.LightGBMError, match="num_iterations"):  # 2^31 wraps negative
        lgb.train(params, lgb.Dataset(X, y, group=[20] * 10), num_boost_round=ROUNDS_MAX + 1, callbacks=[stop])
    with pytest.raises(lgb.basic.LightGBMError, match="max_bin"):
        lgb.train({**params, "max_bin": INT32_MAX + 1}, lgb.Dataset(X, y, group=[20] * 10), num_boost_round=1)
    # 99999999999 wraps to 1215752191 and trains with that: why boostplug must refuse it itself
    lgb.train({**params, "max_bin": 99999999999}, lgb.Dataset(X, y, group=[20] * 10), num_boost_round=1)


def test_xgboost_reads_max_bin_as_an_int_and_real_parameters_as_floats():
    xgb = pytest.importorskip("xgboost")
    X, y = _tiny()
    d = xgb.DMatrix(X, y)
    d.set_group([20] * 10)
    xgb.train({"objective": "rank:ndcg", "max_bin": INT32_MAX, "eta": FLOAT32_MAX}, d, 1)
    for bad in ({"max_bin": INT32_MAX + 1}, {"eta": 3.5e38}, {"lambda": 3.5e38}, {"min_child_weight": 3.5e38},
                {"seed": 2**63}):
        with pytest.raises(xgb.core.XGBoostError):
            xgb.train({"objective": "rank:ndcg", **bad}, d, 1)


# ---- the boosters' n_rounds ------------------------------------------------------------------
BOOSTERS = [lambda n: RankBoost(n_rounds=n), lambda n: RankBoost(variant="rankboost+", n_rounds=n),
            lambda n: MPBoost(n_rounds=n), lambda n: AdaRank(n_rounds=n), lambda n: NDCGBoost(n_rounds=n)]
IDS = ["rb-c", "rankboost+", "mpboost", "adarank", "ndcg_boost"]


def _fit_data():
    rng = np.random.default_rng(1)
    return rng.normal(size=(30, 3)), rng.integers(0, 3, 30).astype(np.float64), np.repeat(np.arange(3), 10)


@pytest.mark.parametrize("make", BOOSTERS, ids=IDS)
@pytest.mark.parametrize("n", [ROUNDS_MAX + 1, 10**23])
def test_a_booster_refuses_more_rounds_than_the_frameworks_count(make, n):
    X, y, qid = _fit_data()
    with pytest.raises(ValueError, match=rf"n_rounds must be at most 2147483647 .*got {n}$"):
        make(n).fit(X, y, qid=qid)


@pytest.mark.parametrize("make", BOOSTERS, ids=IDS)
def test_a_booster_refuses_rounds_whose_records_cannot_fit(make, monkeypatch):
    X, y, qid = _fit_data()
    monkeypatch.setattr(_memory, "available_memory", lambda: 10**6)
    n = 10**6 // BYTES_PER_ROUND + 1
    with pytest.raises(ValueError, match=rf"n_rounds={n}: the rounds' records \(512 bytes or more each\) would need "
                                         rf"at least {n * 512:,} bytes, more than the 1,000,000 bytes of memory "
                                         "available; train fewer rounds"):
        make(n).fit(X, y, qid=qid)
    # at the limit it trains (a callback stops it after one round)
    model = make(n - 1).fit(X, y, qid=qid, callback=lambda t, rec: True)
    assert len(model.rankers_) <= 1


def test_rounds_up_to_the_maximum_start_when_memory_is_there(monkeypatch):
    X, y, qid = _fit_data()
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**60)
    model = RankBoost(n_rounds=ROUNDS_MAX).fit(X, y, qid=qid, callback=lambda t, rec: True)
    assert len(model.rankers_) == 1
    monkeypatch.setattr(_memory, "available_memory", lambda: None)  # the system does not say: no memory check
    assert RankBoost(n_rounds=ROUNDS_MAX)._check_n_rounds() == ROUNDS_MAX


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3", None])
def test_check_rounds_keeps_its_message_for_values_below_one(value):
    with pytest.raises(ValueError, match=r"n_rounds must be an integer >= 1, got"):
        check_rounds(value)


# ---- compare's tree parameters and methods ---------------------------------------------------
@pytest.mark.parametrize("key, value, text", [
    ("max_bin", 99999999999, ">= 2 and at most 2147483647"),
    ("max_bin", INT32_MAX + 1, ">= 2 and at most 2147483647"),
    ("min_data_in_leaf", INT32_MAX + 1, ">= 0 and at most 2147483647"),
    ("learning_rate", 1e39, "at most 3.40282347e+38"),
    ("lambda_l2", 3.5e38, "at most 3.40282347e+38"),
    ("min_sum_hessian_in_leaf", 1e300, "at most 3.40282347e+38"),
])
def test_tree_parameters_beyond_what_the_frameworks_read_are_refused(key, value, text):
    with pytest.raises(ValueError, match=rf"{re.escape(f'{key}={value!r}')}: must be .*{re.escape(text)}"):
        check_tree_params({key: value})
    with pytest.raises(ValueError, match=rf"{re.escape(f'{key}={value!r}')}: must be"):
        get_method(f"lambdarank[{key}={value!r}]")


def test_tree_parameters_at_the_limits_pass():
    check_tree_params({"max_bin": INT32_MAX, "min_data_in_leaf": INT32_MAX, "learning_rate": FLOAT32_MAX,
                       "lambda_l2": FLOAT32_MAX, "min_sum_hessian_in_leaf": FLOAT32_MAX})


def test_a_booster_methods_round_budget_is_checked_when_configured():
    with pytest.raises(ValueError, match=r"method 'rb-c': n_rounds must be at most 2147483647"):
        get_method(f"rb-c[n_rounds={ROUNDS_MAX + 1}]")


# ---- compare's budget ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def folds():
    d = make_ranking(n_queries=10, docs_per_query=(4, 8), n_features=3, n_informative=2, seed=0)
    return [(0, (d, d.subset(np.arange(3)), d.subset(np.arange(3, 6)))),
            (1, (d, d.subset(np.arange(2)), d.subset(np.arange(2, 10))))]


def test_the_budget_is_the_largest_runs_scores_plus_every_tuned_runs_trials(folds):
    rows = {i: v.n_docs + t.n_docs for i, (_, v, t) in folds}
    runs = [("lambdarank", 0), ("rb-c", 0), ("lambdarank", 1), ("rb-c", 1)]
    b = Budget(rounds=1000, tune=50, folds=folds, runs=runs)
    assert b.score_bytes == 1000 * max(rows.values()) * SCORE_BYTES
    tuned = sum(1 for m, _ in runs if get_method(m).search_space())
    assert tuned >= 2 and b.trial_bytes == tuned * 50 * TRIAL_BYTES
    # a booster's own n_rounds replaces rounds for its runs; only the runs still to train count
    b = Budget(rounds=10, tune=0, folds=folds, runs=[("lambdarank", 1), ("rb-c[n_rounds=5000]", 0)])
    assert b.score_bytes == 5000 * rows[0] * SCORE_BYTES
    b = Budget(rounds=10, tune=0, folds=folds, runs=[("lambdarank", 0)])
    assert b.score_bytes == 10 * rows[0] * SCORE_BYTES
    none = Budget(rounds=1000, tune=50, folds=folds, runs=[])
    assert none.score_bytes == none.trial_bytes == 0


def test_a_method_without_a_search_space_counts_no_trials(folds, monkeypatch):
    from boostplug.compare import methods

    monkeypatch.setattr(methods.Method, "search_space", lambda self: {})
    assert Budget(rounds=10, tune=10**9, folds=folds, runs=[("lambdarank", 0)]).trial_bytes == 0


def test_check_budget_refuses_with_the_estimate(folds, monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**30)
    rows = max(v.n_docs + t.n_docs for _, (_, v, t) in folds)
    n = 2**30 // (rows * SCORE_BYTES) + 1
    runs = [("regression", 0), ("regression", 1)]
    with pytest.raises(ValueError, match=rf"^this comparison, the scores of {n:,} rounds x {rows} validation and test "
                                         r"documents x 8 bytes that one run keeps, would need at least 1.0 GiB, more "
                                         r"than the 1.0 GiB of memory available; lower the rounds \(a model may stop short "
                                         r"of its best round\)$"):
        check_budget(rounds=n, tune=0, folds=folds, runs=runs)
    check_budget(rounds=n - 1, tune=0, folds=folds, runs=runs)
    with pytest.raises(ValueError, match=r"and the records of 10,000,000 trials x 1 tuned runs x 512 bytes "
                                         r"\(4.8 GiB\).*lower the rounds .* or the trials \(a smaller search\)"):
        check_budget(rounds=10, tune=10**7, folds=folds, runs=[("regression", 0)])
    with pytest.raises(ValueError, match="rounds must be at most 2147483647"):
        check_budget(rounds=ROUNDS_MAX + 1, tune=0, folds=folds, runs=[("regression", 0)])


# ---- the command line ------------------------------------------------------------------------
@pytest.fixture
def no_training(monkeypatch):
    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite a bad setting"))
    monkeypatch.setattr(_memory, "available_memory", lambda: 16 * 2**30)


def _usage_error(capsys, argv: list[str]) -> str:
    assert main(["compare", *argv]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("boostplug compare: error:"), err
    return err[0]


@pytest.mark.parametrize("argv, message", [
    (["--rounds", str(10**23)], "--rounds must be at most 2147483647 (2^31 - 1: LightGBM and XGBoost count rounds in "
                                f"a 32-bit int), got {10**23}"),
    (["--rounds", str(2**31)], "--rounds must be at most 2147483647"),
    (["--rounds", str(ROUNDS_MAX)], "the scores of 2,147,483,647 rounds x"),
    (["--param", "max_bin=99999999999"], "--param max_bin=99999999999: must be >= 2 and at most 2147483647"),
    (["--param", "learning_rate=1e39"], "--param learning_rate=1e+39: must be > 0 and at most 3.40282347e+38"),
    (["--seed", "-1"], "--seed must be between 0 and 9223372036854775807"),
    (["--seed", str(2**63)], f"--seed must be between 0 and 9223372036854775807 (XGBoost's seed is a 64-bit int, "
                             f"and numpy's generators take no negative seed), got {2**63}"),
    (["--methods", "lambdarank[max_bin=99999999999]"], "max_bin=99999999999: must be >= 2 and at most 2147483647"),
], ids=["rounds-1e23", "rounds-2^31", "rounds-2^31-1", "max_bin", "learning_rate", "seed-negative", "seed-2^63",
        "method-max_bin"])
def test_compare_refuses_what_cannot_run_before_training(capsys, no_training, letor_file, argv, message):
    base = ["--data", str(letor_file), "--kfold", "3", "--rounds", "3", "--no-progress", "--no-plots"]
    if "--methods" not in argv:
        base += ["--methods", "lambdarank,xgb-rank:ndcg,rb-c"]
    assert message in _usage_error(capsys, [*base, *argv])


def test_compare_refuses_a_trial_budget_that_cannot_fit(capsys, no_training, letor_file):
    pytest.importorskip("optuna")
    err = _usage_error(capsys, ["--data", str(letor_file), "--kfold", "3", "--rounds", "3", "--no-progress",
                                "--no-plots", "--methods", "lambdarank", "--tune", str(10**12)])
    assert "the records of 1,000,000,000,000 trials x 3 tuned runs x 512 bytes" in err
    assert "or the trials (a smaller search)" in err


def test_a_config_file_is_held_to_the_same_limits(capsys, no_training, letor_file, tmp_path):
    """The same limits, and the message names the file and its key, not an option not given."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"rounds": 10**23, "tree_params": {"max_bin": 255}}))
    assert f"--config {config}: rounds must be at most 2147483647" in _usage_error(
        capsys, ["--config", str(config), "--data", str(letor_file), "--no-progress"])
    config.write_text(json.dumps({"rounds": 3, "seed": -1}))
    assert f"--config {config}: seed must be between 0 and 9223372036854775807" in _usage_error(
        capsys, ["--config", str(config), "--data", str(letor_file), "--no-progress"])
    config.write_text(json.dumps({"rounds": 3, "tree_params": {"max_bin": 99999999999}}))
    assert (f"--config {config}: tree_params.max_bin: max_bin=99999999999: must be >= 2 and at most 2147483647"
            in _usage_error(capsys, ["--config", str(config), "--data", str(letor_file), "--no-progress"]))
    # given on the command line, an option is named as the flag
    config.write_text(json.dumps({"rounds": 3}))
    assert "--rounds must be at most 2147483647" in _usage_error(
        capsys, ["--config", str(config), "--rounds", str(2**31), "--data", str(letor_file), "--no-progress"])


def test_a_config_files_number_beyond_float64_is_named_as_the_files_key(capsys, no_training, letor_file, tmp_path):
    """TOML's ``num_leaves = 1e400`` (read as inf) was reported as ``--param 'num_leaves=inf'``,
    though no --param was given."""
    pytest.importorskip("tomllib")
    config = tmp_path / "c.toml"
    config.write_text("rounds = 3\n[tree_params]\nnum_leaves = 1e400\n")
    err = _usage_error(capsys, ["--config", str(config), "--data", str(letor_file), "--no-progress"])
    assert f"--config {config}: tree_params.num_leaves: num_leaves=inf: must be finite" in err
    assert "1e400, reads as infinite" in err and "--param" not in err
    config.write_text("rounds = 3\n[tree_params]\nnum_leaves = 15.5\n")
    err = _usage_error(capsys, ["--config", str(config), "--data", str(letor_file), "--no-progress"])
    assert f"--config {config}: tree_params.num_leaves: num_leaves=15.5: must be an integer" in err


def test_config_tree_params_train_under_the_command_lines(monkeypatch, letor_file, tmp_path):
    """The file's tree parameters, an integral float for an integer one too, with --param over them."""
    from boostplug.cli.compare_config import resolve_options
    from boostplug.cli.compare_options import compare_options
    from boostplug.cli import build_parser

    config = tmp_path / "c.json"
    config.write_text(json.dumps({"tree_params": {"num_leaves": 15.0, "learning_rate": 0.2}}))
    args = build_parser().parse_args(["compare", "--config", str(config), "--data", str(letor_file),
                                      "--param", "learning_rate=0.3"])
    options = compare_options(resolve_options(args), None)
    assert options.tree_params == {"num_leaves": 15, "learning_rate": 0.3}
    assert isinstance(options.tree_params["num_leaves"], int)


def test_check_fits_compares_with_the_memory_available_now(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**40)
    _memory.check_fits(2**40, "x", "y")
    with pytest.raises(ValueError, match=r"^x would need at least 2048.0 GiB, more than the 1024.0 GiB of memory "
                                         r"available; y$"):
        _memory.check_fits(2**41, "x", "y")
    monkeypatch.setattr(_memory, "available_memory", lambda: None)  # the system does not say
    _memory.check_fits(2**80, "x", "y")


# ---- the framework adapters ------------------------------------------------------------------
@pytest.mark.parametrize("n", [ROUNDS_MAX + 1, 10**23])
def test_the_rankers_refuse_more_estimators_than_the_frameworks_count(n):
    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx

    X, y, qid = _fit_data()
    for ranker in (bpl.LGBMRanker(objective="lambdarank", n_estimators=n, verbose=-1),
                   bpx.XGBRanker(objective="rank:ndcg", n_estimators=n)):
        with pytest.raises(ValueError, match=rf"n_estimators must be at most 2147483647 .*got {n}$"):
            ranker.fit(X, y, qid=qid)


@pytest.mark.parametrize("n", [ROUNDS_MAX + 1, 10**23])
def test_cv_and_the_line_search_refuse_more_rounds_than_lightgbm_counts(n):
    lgb = pytest.importorskip("lightgbm")
    from boostplug import lightgbm as bpl

    X, y, qid = _fit_data()
    with pytest.raises(ValueError, match=rf"num_boost_round must be at most 2147483647 .*got {n}$"):
        bpl.cv({"objective": "lambdarank", "verbose": -1}, lgb.Dataset(X, y, group=[10] * 3), n, nfold=2)
    with pytest.raises(ValueError, match=rf"num_boost_round must be at most 2147483647 .*got {n}$"):
        bpl.train_line_search({"verbose": -1}, lgb.Dataset(X, y, group=[10] * 3), num_boost_round=n)


def test_dask_xgboost_training_refuses_more_rounds_than_xgboost_counts():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    from boostplug.dask import train_xgboost

    frame = dd.from_pandas(pd.DataFrame({"label": [1.0, 0.0], "qid": [0, 0], "f0": [0.5, 0.1]}), npartitions=1)
    with pytest.raises(ValueError, match=r"num_boost_round must be at most 2147483647 .*got 2147483648$"):
        train_xgboost(None, frame, "qbrank", num_boost_round=ROUNDS_MAX + 1)  # refused before any client use


def test_the_python_api_refuses_a_run_that_cannot_fit_in_memory_before_training(monkeypatch) -> None:
    from boostplug.compare import execution, run
    from boostplug.data import make_ranking

    d = make_ranking(n_queries=12, docs_per_query=(4, 6), n_features=3, n_informative=2, seed=0)
    train, vali, test = three_way_split(d, test_size=3, vali_size=3)
    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite the budget"))
    with pytest.raises(ValueError, match="memory"):
        run(["lambdarank"], [(0, (train, vali, test))], rounds=2**31 - 1)


@pytest.mark.parametrize("objective, key, value", [("ranknet", "truncation_level", 2**70),
                                                   ("ranknet", "truncation_level", 2**63),
                                                   ("yetirank", "first_round", 2**70)])
def test_an_objective_integer_beyond_int64_names_the_real_limit(objective, key, value):
    """``truncation_level=2**70`` was refused as "must be an integer >= 1", which it is (lambdarank's level, LightGBM's
    32-bit int, is bounded by its own limit)."""
    from boostplug import objectives

    with pytest.raises(ValueError) as err:
        objectives.get(objective).check({key: value})
    low = 0 if key == "first_round" else 1
    assert (f"{objective}: {key} must be an integer in [{low}, 9223372036854775807] (the kernels hold it in a "
            f"64-bit integer: at most 2^63 - 1), got {value}") == str(err.value)
