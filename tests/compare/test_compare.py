"""boostplug.compare: round choice, paired tests, the table, folds, method runs, parallel jobs, Ctrl-C."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from scipy import stats

from boostplug.compare import (
    METHODS, REPORT_METRICS, TREE_PARAMS, Result, check_tree_params, choose_round, common_folds, comparable,
    file_folds, folds_finished, format_table, paired_tests, parse_fold_selection, run, run_method, significance,
    summary, threads_per_job,
)
from boostplug.compare import execution
from boostplug.data import load_letor, make_ranking, write_letor
from tests._helpers import three_way_split


@pytest.fixture(scope="module")
def tiny():
    d = make_ranking(n_queries=24, docs_per_query=(4, 9), n_features=5, n_informative=3, seed=3)
    return three_way_split(d, test_size=6, vali_size=6)


# ---- round choice ---------------------------------------------------------------------------
def test_choose_round_maximises_ndcg_and_takes_first_best() -> None:
    assert choose_round([0.1, 0.5, 0.3, 0.5], "ndcg@10") == 1
    assert choose_round([0.9], "map") == 0


def test_choose_round_minimises_losses() -> None:
    curve = [0.4, 0.2, 0.3, 0.2]
    assert choose_round(curve, "r2") == 1
    assert choose_round(curve, "r1") == 1
    assert choose_round(curve, "ndcg@5") == 0


def test_choose_round_empty_curve() -> None:
    assert choose_round([], "ndcg@10") == -1


def test_choose_round_is_early_stoppings_rule_nan_is_never_best() -> None:
    """On main np.argmax chose the NaN (index 1 of the first curve, 0 of the second) where every
    loop's early stopping (BestRound) serves another round."""
    nan = float("nan")
    assert choose_round([0.5, nan, 0.7], "ndcg@10") == 2
    assert choose_round([nan, 0.5, 0.5], "ndcg@10") == 1
    assert choose_round([nan, 0.4, 0.2], "r1") == 2
    assert choose_round([nan, nan], "ndcg@10") == 1  # none best: every round served, as the loops keep every tree


# ---- paired tests ---------------------------------------------------------------------------
def test_paired_tests_equal_scipy_on_hand_made_case() -> None:
    a = np.array([0.9, 0.4, 0.7, 0.65, 0.3, 0.8, 0.55])
    b = np.array([0.7, 0.5, 0.6, 0.40, 0.1, 0.8, 0.35])
    t = paired_tests(a, b)
    assert t.n == 7
    assert t.mean_diff == pytest.approx(np.mean(a - b))
    assert t.t_pvalue == pytest.approx(stats.ttest_rel(a, b).pvalue)
    # the zero difference (0.8 vs 0.8) is dropped by the Wilcoxon test
    assert t.wilcoxon_pvalue == pytest.approx(stats.wilcoxon(a[a != b], b[a != b]).pvalue)
    # by hand: the t statistic is mean(d) / (sd(d) / sqrt(n))
    d = a - b
    t_stat = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    assert t.t_pvalue == pytest.approx(2 * stats.t.sf(abs(t_stat), d.size - 1))


def test_paired_tests_drop_nan_pairs_and_handle_identity() -> None:
    a = np.array([0.5, np.nan, 0.2, 0.9, 0.4])
    b = np.array([0.1, 0.3, np.nan, 0.6, 0.5])
    t = paired_tests(a, b)
    keep = [0, 3, 4]
    assert t.n == 3
    assert t.t_pvalue == pytest.approx(stats.ttest_rel(a[keep], b[keep]).pvalue)
    same = paired_tests(a, a)
    assert (same.mean_diff, same.t_pvalue, same.wilcoxon_pvalue) == (0.0, 1.0, 1.0)
    one = paired_tests([0.3], [0.1])
    assert one.n == 1 and np.isnan(one.t_pvalue)


def test_paired_tests_reject_bad_shapes() -> None:
    with pytest.raises(ValueError, match="shapes"):
        paired_tests([0.1, 0.2], [0.1])


# ---- table, summary, significance on hand-made results ------------------------------------------
def _result(method: str, fold: int, ndcg10: list[float], seconds: float, shift: float = 0.0) -> Result:
    per_query = {m: [v + shift for v in ndcg10] for m in REPORT_METRICS}
    return Result(method=method, framework="lightgbm", fold=fold, best_round=fold + 2, rounds_trained=5,
                  seconds=seconds, select_metric="ndcg@10",
                  test={m: float(np.mean(v)) for m, v in per_query.items()}, test_per_query=per_query)


@pytest.fixture
def hand_results() -> list[Result]:
    return [
        _result("base", 0, [0.5, 0.6, 0.7], 2.0), _result("good", 0, [0.6, 0.8, 0.7], 3.0),
        _result("fast", 0, [0.4, 0.5, 0.7], 0.5),
        _result("base", 1, [0.3, 0.4], 2.2), _result("good", 1, [0.5, 0.5], 3.4), _result("fast", 1, [0.3, 0.1], 0.7),
    ]


def test_summary_is_mean_and_population_std_over_folds(hand_results: list[Result]) -> None:
    s = summary(hand_results)
    assert s["good"]["ndcg@10"]["mean"] == pytest.approx((0.7 + 0.5) / 2)
    assert s["good"]["ndcg@10"]["std"] == pytest.approx(np.std([0.7, 0.5]))
    assert s["fast"]["seconds"]["mean"] == pytest.approx(0.6)
    assert s["base"]["best_rounds"] == [2, 3]


def test_significance_pools_queries_across_folds(hand_results: list[Result]) -> None:
    tests = significance(hand_results, "base")
    a = [0.6, 0.8, 0.7, 0.5, 0.5]
    b = [0.5, 0.6, 0.7, 0.3, 0.4]
    assert tests["good"].n == 5
    assert tests["good"].t_pvalue == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert tests["base"].t_pvalue == 1.0


def test_table_marks_best_per_column_and_shows_tests(hand_results: list[Result]) -> None:
    table = format_table(hand_results, "base", wide=True)
    rows = {line.split()[0]: line for line in table.splitlines()[3:6]}
    # 'good' has the best NDCG (every metric here), 'fast' the least training time
    assert rows["good"].count("*") == 5
    assert rows["fast"].count("*") == 1 and "0.60±0.10*" in rows["fast"]
    assert "*" not in rows["base"] and "(baseline)" in rows["base"]
    p = significance(hand_results, "base")["good"].t_pvalue
    assert f"{p:.3f}" in rows["good"]
    assert "n=5" in table


def test_table_compares_only_the_folds_every_method_finished() -> None:
    """After Ctrl-C (or a failure) 'good' has fold 1 only: over its own folds 'base' would lead
    (0.75 vs 0.70); over the fold both finished, 'good' does (0.70 vs 0.60)."""
    results = [_result("base", 0, [0.5, 0.6, 0.7], 2.0), _result("good", 0, [0.6, 0.8, 0.7], 3.0),
               _result("base", 1, [0.9, 0.9], 2.2)]
    assert folds_finished(results) == {"base": [0, 1], "good": [0]} and common_folds(results) == [0]
    assert comparable(results) == results[:2]
    table = format_table(results, "base", wide=True)
    cells = {line.split()[0]: line.split() for line in table.splitlines()[3:5]}
    assert cells["good"][5] == "0.7000*" and cells["base"][5] == "0.6000"  # NDCG@10, no ±std over one fold
    assert cells["base"][2:7] == ["0.6000"] * 5 and "±" not in table
    assert "(1 fold)" in table and "only fold 1, which every method finished, is compared" in table
    assert "left out: fold 2 (not finished by good)" in table
    assert "(n=3)" in table  # the queries of fold 1, as both the good/base test pairs


def test_table_without_a_common_fold_marks_and_tests_nothing() -> None:
    results = [_result("a", 0, [0.5, 0.6], 1.0), _result("b", 1, [0.9, 0.8], 2.0), _result("b", 2, [0.7], 2.0)]
    assert common_folds(results) == [] and comparable(results) == []
    table = format_table(results, "a")
    lines = table.splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("method")):]  # after the conventions
    assert lines[0].split()[:3] == ["method", "folds", "rounds"]
    assert lines[2].split()[1] == "1" and lines[3].split()[1] == "2,3"
    assert "*" not in table and "p(t)" not in table and "(baseline)" not in table
    assert "no fold was finished by every method" in table


def test_table_single_method_marks_nothing(hand_results: list[Result]) -> None:
    table = format_table([r for r in hand_results if r.method == "base"])
    assert "*" not in next(line for line in table.splitlines() if line.startswith("base"))


# ---- folds -------------------------------------------------------------------------------------
def test_parse_fold_selection() -> None:
    assert parse_fold_selection("all", 5) is None
    assert parse_fold_selection(None, 5) is None
    assert parse_fold_selection("3,1,3", 5) == [0, 2]
    with pytest.raises(ValueError, match="fold 6 does not exist"):
        parse_fold_selection("6", 5)
    with pytest.raises(ValueError, match="'x'"):
        parse_fold_selection("1,x", 5)


def test_file_folds_are_query_disjoint_and_cover_the_data() -> None:
    d = make_ranking(n_queries=15, docs_per_query=(3, 5), n_features=3, n_informative=2, seed=0)
    folds = file_folds(d, 3, seed=0)
    tested = np.concatenate([f[2].qid[f[2].group_ptr[:-1]] for f in folds])
    assert sorted(tested.tolist()) == sorted(d.qid[d.group_ptr[:-1]].tolist())
    for train, vali, test in folds:
        parts = [set(p.qid[p.group_ptr[:-1]].tolist()) for p in (train, vali, test)]
        assert not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])
        assert sum(len(p) for p in parts) == 15


def test_only_the_chosen_folds_are_built(tmp_path, monkeypatch) -> None:
    """--folds 2 on a file builds one fold (each fold copies the data): the same fold as a full build."""
    from boostplug.compare import data as compare_data

    d = make_ranking(n_queries=15, docs_per_query=(3, 5), n_features=3, n_informative=2, seed=0)
    path = tmp_path / "d.txt"
    write_letor(path, d)
    full = file_folds(load_letor(path), 3, seed=0)
    built = []
    real = compare_data.file_folds
    monkeypatch.setattr(compare_data, "file_folds", lambda *a, **k: built.append(k["folds"]) or real(*a, **k))
    (i, fold), = compare_data.load_folds(path, n_folds=3, select="2", seed=0)
    assert i == 1 and built == [[1]]
    for a, b in zip(full[1], fold):
        assert np.array_equal(a.X, b.X) and np.array_equal(a.qid, b.qid)
    assert [i for i, _ in compare_data.load_folds(path, n_folds=3, seed=0)] == [0, 1, 2]


def test_file_folds_refuse_exactly_the_kfold_values_that_cannot_split() -> None:
    for n in range(1, 9):
        d = make_ranking(n_queries=n, docs_per_query=(5, 6), n_features=2, n_informative=1, seed=n)
        for k in range(1, 10):
            try:
                folds = file_folds(d, k, seed=0)
            except ValueError as e:
                assert str(e).startswith(f"--kfold {k}: ")
                # every value the message offers works
                offered = re.findall(r"use --kfold (?:between )?(\d+)(?: and (\d+))?", str(e))
                assert offered or n < 3
                for lo, hi in offered:
                    for ok in range(int(lo), int(hi or lo) + 1):
                        file_folds(d, ok, seed=0)
            else:
                assert k <= n and all(p.n_queries >= 1 for f in folds for p in f)


def test_threads_per_job() -> None:
    assert threads_per_job(1, cores=2) == 2
    assert threads_per_job(2, cores=2) == 1
    assert threads_per_job(4, cores=2) == 1


# ---- method runs -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["lambdarank", "xgb-mpboost-logitdd", "rb-c", "ndcg_boost-stumps"])
def test_run_method_chooses_round_on_vali_and_reports_that_round(tiny, name: str) -> None:
    train, vali, test = tiny
    r = run_method(name, train, vali, test, rounds=4, threads=1)
    assert r.framework == METHODS[name].framework
    assert 1 <= r.rounds_trained <= 4 and len(r.vali_curve) == len(r.test_curve) == r.rounds_trained
    assert r.best_round == int(np.argmax(r.vali_curve)) + 1
    assert r.test["ndcg@10"] == pytest.approx(r.test_curve[r.best_round - 1])
    assert r.test["ndcg@10"] == pytest.approx(np.nanmean(r.test_per_query["ndcg@10"]))
    assert len(r.test_per_query["map"]) == test.n_queries


def test_run_method_minimises_r2_when_asked(tiny) -> None:
    train, vali, test = tiny
    r = run_method("lambdarank", train, vali, test, rounds=5, metric="r2", threads=1)
    assert r.select_metric == "r2"
    assert r.best_round == int(np.argmin(r.vali_curve)) + 1
    assert r.vali_ndcg10_curve != r.vali_curve


def test_adarank_map_chooses_its_round_by_map(tiny) -> None:
    train, vali, test = tiny
    r = run_method("adarank-map", train, vali, test, rounds=5, metric="ndcg@10", threads=1)
    assert r.select_metric == "map"
    assert r.best_round == int(np.argmax(r.vali_curve)) + 1


def test_unknown_method_fails_before_training(tiny) -> None:
    with pytest.raises(ValueError, match="no-such"):
        run(["lambdarank", "no-such"], [(0, tiny)], rounds=2)


def test_tree_parameters_are_checked_before_training(tiny) -> None:
    check_tree_params(dict(TREE_PARAMS))
    check_tree_params({"num_leaves": 2, "feature_fraction": 1.0, "min_data_in_leaf": 0, "learning_rate": 1e-9})
    for bad, says in [({"num_leaves": 1}, "between 2"), ({"learning_rate": 0.0}, "> 0"),
                      ({"lambda_l2": -1e-9}, ">= 0"), ({"feature_fraction": 1.5}, "in (0, 1]"),
                      ({"max_bin": 1}, ">= 2"), ({"num_leaves": 7.5}, "integer"), ({"learning_rate": np.inf}, "finite"),
                      ({"learning_rate": "0.1"}, "a number"), ({"depth": 3}, "unknown tree parameter")]:
        with pytest.raises(ValueError, match=re.escape(says)):
            check_tree_params(bad)
    # run() refuses them before any training (LightGBM would fail only once training starts)
    with pytest.raises(ValueError, match="num_leaves=1: must be between 2"):
        run(["lambdarank", "xgb-rank:ndcg"], [(0, tiny)], rounds=2, tree_params={"num_leaves": 1})


def test_a_patch_of_execution_run_method_reaches_the_runs(tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    real = execution.run_method
    monkeypatch.setattr(execution, "run_method", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("patched")))
    out = run(["regression"], [(0, tiny)], rounds=2, threads=1)
    assert not out and [f.error for f in out.failures] == ["RuntimeError: patched"]
    monkeypatch.undo()
    assert execution.run_method is real


def test_ctrl_c_keeps_finished_runs(tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = execution.run_method

    def flaky(name, *a, **k):
        calls.append(name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", flaky)
    err = io.StringIO()
    out = run(["lambdarank", "regression", "rb-c"], [(0, tiny)], rounds=3, threads=1, stream=err)
    assert out.interrupted and [r.method for r in out] == ["lambdarank"]
    assert "interrupted" in err.getvalue()


def test_parallel_jobs_equal_serial(tiny) -> None:
    folds = [(0, tiny), (1, (tiny[1], tiny[0], tiny[2]))]
    names = ["regression", "rb-c"]
    serial = run(names, folds, rounds=3, threads=1)
    for parallel in (run(names, folds, rounds=3, jobs=2), run(names, folds, rounds=3, threads=1, isolated=True)):
        assert [(r.method, r.fold) for r in parallel] == [(r.method, r.fold) for r in serial]
        for a, b in zip(serial, parallel):
            assert a.best_round == b.best_round
            assert a.test_curve == pytest.approx(b.test_curve)


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt during the test, whatever the test runner inherited: a
    background job of a script starts with SIGINT ignored (the signal then did nothing and the
    test below failed in CI with ``interrupted`` False)."""
    import signal

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _interrupt_after_first_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (a real SIGINT) right after the first finished run is logged, in the main thread:
    ``raise_signal`` delivers it to the calling thread before it returns (``os.kill`` to the
    process may hand it to another thread, and the main thread then sees it late)."""
    import signal

    real = execution._log_done
    calls = []

    def log_then_sigint(*a, **k):
        real(*a, **k)
        calls.append(1)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(execution, "_log_done", log_then_sigint)


def test_parallel_ctrl_c_keeps_finished_runs_and_stops_the_workers(tiny, monkeypatch: pytest.MonkeyPatch,
                                                                    ctrl_c_raises) -> None:
    import multiprocessing

    _interrupt_after_first_log(monkeypatch)
    folds = [(0, tiny), (1, (tiny[1], tiny[0], tiny[2])), (2, (tiny[2], tiny[1], tiny[0]))]
    names = ["regression", "rb-c"]
    err = io.StringIO()
    out = run(names, folds, rounds=3, jobs=2, log=True, stream=err)
    assert out.interrupted and "interrupted" in err.getvalue()
    # at least the logged run is kept, every kept run is complete, and the order is fold, then method
    first = err.getvalue().splitlines()[0]
    assert any(first.split("] ")[1].startswith(f"{r.method} fold {r.fold + 1}:") for r in out)
    assert 1 <= len(out) <= 6 and all(r.rounds_trained == len(r.test_curve) > 0 for r in out)
    assert [(r.fold, names.index(r.method)) for r in out] == sorted((r.fold, names.index(r.method)) for r in out)
    assert multiprocessing.active_children() == []  # the workers were stopped


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_run_is_recorded_and_the_others_go_on(tiny, jobs: int) -> None:
    """A real error in training or prediction (here: a test part with more features than the
    training part), in this process or in a worker: recorded with its type, message and traceback."""
    train, vali, test = tiny
    folds = [(0, tiny), (1, (train, vali, test.with_n_features(7)))]
    names = ["regression", "rb-c", "xgb-rank:ndcg"][:3 if jobs == 1 else 2]  # workers importing XGBoost: +1.5 s
    err = io.StringIO()
    out = run(names, folds, rounds=3, jobs=jobs, threads=1, log=True, stream=err)
    assert not out.interrupted
    assert [(r.method, r.fold) for r in out] == [(n, 0) for n in names]
    assert [(f.method, f.fold) for f in out.failures] == [(n, 1) for n in names]
    lgb, rbc = out.failures[:2]
    assert lgb.error.startswith("LightGBMError: The number of features in data (7)")
    assert rbc.error == "ValueError: X has 7 features but the model was fitted with 5"
    assert "Traceback" in lgb.traceback and "predict" in lgb.traceback and "\n" not in lgb.error
    assert err.getvalue().count(" fold 2: failed: ") == len(names)
    if jobs == 1:  # XGBoost's message without the C++ stack trace it appends
        xgb = out.failures[2]
        assert xgb.error.startswith("XGBoostError: ") and "Stack trace" not in xgb.error and len(xgb.error) <= 320


# ---- metric conventions (--protocol, --gain, --discount, --empty, --ties) ----------------------------
def test_protocols_and_overrides() -> None:
    from boostplug.compare import PROTOCOLS, Conventions, make_conventions

    assert make_conventions() == Conventions() == PROTOCOLS["library"]
    letor = make_conventions("letor")
    assert (letor.gain, letor.discount, letor.empty, letor.ties, letor.protocol) == ("exp2", "letor", 0.0, "order",
                                                                                     "letor")
    assert letor.options("map") == {"empty": 0.0, "ties": "order"} and letor.options("r2") == {}
    custom = make_conventions("letor", empty="skip", ties="average")
    assert (custom.empty, custom.ties, custom.discount, custom.protocol) == ("skip", "average", "letor", "custom")
    assert make_conventions("letor", empty="0").protocol == "letor"  # the protocol's own value changes nothing
    assert "LETOR discount (ranks 1-2 undiscounted" in letor.describe() and "scores 0" in letor.describe()
    with pytest.raises(ValueError, match="protocol must be one of library, letor; got 'trec'"):
        make_conventions("trec")
    with pytest.raises(ValueError, match="empty must be one of 1, 0, skip; got '0.5'"):
        make_conventions(empty="0.5")
    with pytest.raises(ValueError, match="discount must be one of log2, letor; got 'ln'"):
        Conventions(discount="ln")


def test_conventions_reach_every_metric_and_the_round_choice(tiny) -> None:
    from boostplug import metrics
    from boostplug.compare import make_conventions

    train, vali, test = tiny
    test = test.subset(np.arange(test.n_queries))
    g = test.group_ptr
    test.y[g[0]:g[1]] = 0.0  # a query without a relevant document: 1 by the library, 0 by LETOR
    letor = make_conventions("letor")
    lib = run_method("regression", train, vali, test, rounds=4, tree_params={"min_data_in_leaf": 1})
    r = run_method("regression", train, vali, test, rounds=4, tree_params={"min_data_in_leaf": 1},
                   conventions=letor)
    assert lib.test_per_query["ndcg@10"][0] == 1.0 and r.test_per_query["ndcg@10"][0] == 0.0
    assert r.test_per_query["map"][0] == 0.0
    # the same model and round: the values are the LETOR script's of the same scores
    from boostplug.compare.methods import get_method

    trained = get_method("regression").train(train, vali, test, rounds=4, tree_params={**TREE_PARAMS,
                                             "min_data_in_leaf": 1}, seed=0, threads=1)
    scores = trained.test_scores[r.best_round - 1]
    want = metrics.ndcg(scores, test.y, g, 5, discount="letor", empty=0.0, per_query=True)
    assert np.allclose(r.test_per_query["ndcg@5"], want)
    assert r.vali_curve == [pytest.approx(metrics.ndcg(s, vali.y, vali.group_ptr, 10, discount="letor", empty=0.0))
                            for s in trained.vali_scores]
    assert r.test_curve[r.best_round - 1] == pytest.approx(r.test["ndcg@10"])
    res = run(["regression"], [(0, (train, vali, test))], rounds=2, conventions=letor)
    assert res.conventions == letor and format_table(res).splitlines()[0].startswith("letor conventions: NDCG")
    with pytest.raises(TypeError, match="conventions must be a boostplug.compare.Conventions, got dict"):
        run(["regression"], [(0, (train, vali, test))], rounds=2, conventions={"empty": 0})


# ---- bootstrap confidence intervals ------------------------------------------------------------
def test_bootstrap_hand_computable_case() -> None:
    from boostplug.compare import bootstrap_ci, bootstrap_means

    # two queries 0 and 1: a resample is {0,0}, {0,1}, {1,0} or {1,1}, so its mean is 0, 0.5 or 1
    # with probabilities 1/4, 1/2, 1/4, and the 95% percentile interval is [0, 1]
    means = bootstrap_means([0.0, 1.0], resamples=4000, seed=3)
    assert set(np.unique(means)) == {0.0, 0.5, 1.0}
    assert [np.mean(means == x) for x in (0.0, 0.5, 1.0)] == pytest.approx([0.25, 0.5, 0.25], abs=0.03)
    ci = bootstrap_ci([0.0, 1.0], seed=3)
    assert (ci.n, ci.estimate, ci.low, ci.high, ci.level, ci.resamples) == (2, 0.5, 0.0, 1.0, 0.95, 2000)
    # resampled within folds of one query each, nothing varies: a zero-width interval at the mean
    strat = bootstrap_ci([0.0, 1.0], ["fold1", "fold2"], by_stratum=True)
    assert (strat.low, strat.high, strat.estimate) == (0.5, 0.5, 0.5)
    # the mean over folds of per-fold means, not the pooled mean: folds [0, 0, 0] and [1] give 0.5
    assert bootstrap_ci([0.0, 0.0, 0.0, 1.0], [1, 1, 1, 2], by_stratum=True).estimate == 0.5
    assert bootstrap_ci([0.3] * 5).low == bootstrap_ci([0.3] * 5).high == pytest.approx(0.3)
    nan = bootstrap_ci([np.nan, 0.2, 0.4])  # a skipped query is left out
    assert nan.n == 2 and nan.estimate == pytest.approx(0.3) and (nan.low, nan.high) == pytest.approx((0.2, 0.4))


def test_bootstrap_is_seeded_paired_and_near_the_normal_interval() -> None:
    from boostplug.compare import bootstrap_ci, bootstrap_means

    rng = np.random.default_rng(0)
    a, b = rng.random(60), rng.random(60)
    strata = np.repeat([0, 1, 2], 20)
    assert np.array_equal(bootstrap_means(a, strata, seed=5), bootstrap_means(a, strata, seed=5))
    assert not np.array_equal(bootstrap_means(a, strata, seed=5), bootstrap_means(a, strata, seed=6))
    # paired: one seed draws the same queries for every method, so the means' difference is the
    # resampled mean of the differences
    assert np.allclose(bootstrap_means(a, strata) - bootstrap_means(b, strata), bootstrap_means(a - b, strata))
    x = rng.normal(size=400)
    ci = bootstrap_ci(x)
    assert ci.high - ci.low == pytest.approx(2 * 1.96 * x.std(ddof=1) / 20, rel=0.1)
    with pytest.raises(ValueError, match="resamples must be an integer >= 1, got 0"):
        bootstrap_ci(a, resamples=0)
    with pytest.raises(ValueError, match=r"strata must have one label per value \(60\), got shape \(2,\)"):
        bootstrap_ci(a, [0, 1])
    with pytest.raises(ValueError, match="level must be between 0 and 1, got 95"):
        bootstrap_ci(a, level=95)


def test_table_shows_intervals_with_one_fold(hand_results: list[Result]) -> None:
    from boostplug.compare import bootstrap, bootstrap_ci

    one_fold = [r for r in hand_results if r.fold == 0]
    table = format_table(one_fold, "base", wide=True)
    header = table.splitlines()[1].split("  ")
    assert "NDCG@10 95% CI" in [h.strip() for h in header] and "dNDCG@10 95% CI" in [h.strip() for h in header]
    cis = bootstrap(one_fold, "base")
    good = cis["good"]
    assert good["mean"]["ndcg@10"].low < good["mean"]["ndcg@10"].high  # a width, where the std over folds is 0
    diff = bootstrap_ci(np.array([0.6, 0.8, 0.7]) - np.array([0.5, 0.6, 0.7]), np.zeros(3))
    assert (good["diff"].low, good["diff"].high) == (diff.low, diff.high)
    row = next(line for line in table.splitlines() if line.startswith("good"))
    assert f"[{diff.low:+.4f},{diff.high:+.4f}]" in row
    assert f"[{good['mean']['ndcg@10'].low:.4f},{good['mean']['ndcg@10'].high:.4f}]" in row
    assert cis["base"]["diff"] is None and "95% CI: percentile bootstrap, 2000 resamples (seed 0)" in table


def test_bar_plot_error_bars_are_the_bootstrap_intervals(hand_results: list[Result], tmp_path, monkeypatch) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    from boostplug.compare import bootstrap, plots

    drawn = []
    real = matplotlib.axes.Axes.barh
    monkeypatch.setattr(matplotlib.axes.Axes, "barh",
                        lambda self, y, w, **kw: drawn.append((np.asarray(w), kw["xerr"])) or real(self, y, w, **kw))
    one_fold = [r for r in hand_results if r.fold == 0]
    plots.plot_bars(one_fold, tmp_path / "m.png")
    cis = bootstrap(one_fold)
    means, xerr = drawn[3]  # the NDCG@10 panel
    low = [cis[n]["mean"]["ndcg@10"].low for n in ("base", "good", "fast")]
    high = [cis[n]["mean"]["ndcg@10"].high for n in ("base", "good", "fast")]
    assert np.allclose(xerr[0], means - low) and np.allclose(xerr[1], np.array(high) - means)
    assert (xerr > 0).any()  # one fold: std error bars had zero length
