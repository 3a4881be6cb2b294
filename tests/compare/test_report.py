"""The printed report of a comparison: the compact table within 100 columns (the wide one behind
``wide=True``), the verdict under it and the legend of the method names."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.compare import METHODS, REPORT_METRICS, Result, significance
from boostplug.compare.comparison import bootstrap
from boostplug.compare.report import TABLE_WIDTH, format_table, method_legend, verdict, warnings_note


def _result(method: str, fold: int, ndcg10: list[float], seconds: float = 1.0, *, best_round: int = 3,
            tuning: dict | None = None) -> Result:
    per_query = {m: list(ndcg10) for m in REPORT_METRICS}
    return Result(method=method, framework="lightgbm", fold=fold, best_round=best_round, rounds_trained=300,
                  seconds=seconds, select_metric="ndcg@10",
                  test={m: float(np.mean(v)) for m, v in per_query.items()}, test_per_query=per_query,
                  info={"tuning": tuning} if tuning else {})


def _longest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def _many(names: list[str], folds: int = 5, tuned: bool = False) -> list[Result]:
    """Every name on ``folds`` folds of 40 queries, with the widest cells a run can print: rounds
    from 1 to 300, seconds in the hundreds, p-values below 0.001 and NaN-free means."""
    rng = np.random.default_rng(0)
    out = []
    for f in range(folds):
        base = rng.uniform(0.2, 0.9, 40)
        for k, name in enumerate(names):
            shift = 0.0 if k == 0 else 0.05 * (1 + k % 3) * (-1) ** k
            out.append(_result(name, f, np.clip(base + shift + rng.normal(0, 0.01, 40), 0, 1), 123.456 + k,
                               best_round=1 if f % 2 else 300,
                               tuning={"seconds": 4567.89, "n_trials": 50} if tuned else None))
    return out


def test_compact_report_fits_100_columns_and_the_wide_table_does_not() -> None:
    """The longest printed line of the default table, its verdict and legend, over every registry
    method name (the longest are XGBoost's), five folds and a --tune search, is at most 100
    columns; the wide table keeps every column (NDCG@1/3/5, the intervals, p(W))."""
    names = list(METHODS)
    results = _many(names, tuned=True)
    table = format_table(results, names[0])
    assert _longest(table) <= TABLE_WIDTH == 100
    header = next(line for line in table.splitlines() if line.startswith("method"))
    assert header.split() == ["method", "rounds", "NDCG@10", "MAP", "tune", "s", "dNDCG@10", "dNDCG@10", "95%", "CI",
                              "p(t)"]
    assert "1-300" in table and "<0.001" in table  # the rounds' range over folds, a small p-value
    assert _longest(verdict(results, names[0])) <= 100
    assert _longest(method_legend(names)) <= 100
    wide = format_table(results, names[0], wide=True)
    wide_header = next(line for line in wide.splitlines() if line.startswith("method"))
    for column in ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10 95% CI", "dNDCG@10 95% CI", "p(W)"):
        assert column in wide_header
    assert _longest(wide) > 100 and "300/1/300/1/300" in wide


def test_verdict_names_the_best_and_what_is_significant() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.8, 60)
    results = [_result("base", 0, base), _result("better", 0, base + 0.05 + rng.normal(0, 0.01, 60)),
               _result("same", 0, base + rng.normal(0, 0.05, 60))]
    tests = significance(results, "base")
    assert tests["better"].t_pvalue < 0.001 and tests["same"].t_pvalue > 0.05
    text = verdict(results, "base").split("\nthe 95% interval")[0]
    assert text.startswith("verdict: best NDCG@10 better (")
    assert " ".join(text.split()).endswith(
        f"at p(t) < 0.05 against base, better: better (+{tests['better'].mean_diff:.4f}); the other 1 not "
        "significant")
    # a level above the other method's p-value makes it significant too, on its side
    loose = " ".join(verdict(results, "base", alpha=0.99).split())
    side = "better" if tests["same"].mean_diff > 0 else "worse"
    assert f"{side}: " in loose and f"same ({tests['same'].mean_diff:+.4f})" in loose and "the other" not in loose


def test_verdict_when_nothing_is_significant_or_the_baseline_is_best() -> None:
    results = [_result("base", 0, [0.9, 0.8, 0.7, 0.6]), _result("other", 0, [0.8, 0.85, 0.6, 0.6])]
    text = " ".join(verdict(results, "base").split("\nthe 95% interval")[0].split())
    mean = np.mean([0.9, 0.8, 0.7, 0.6])
    assert text == f"verdict: best NDCG@10 base ({mean:.4f}, the baseline); no difference to base is significant " \
                   "at p(t) < 0.05"
    tied = [_result("a", 0, [0.5, 0.6]), _result("b", 0, [0.5, 0.6]), _result("c", 0, [0.1, 0.4])]
    assert verdict(tied, "c").startswith("verdict: best NDCG@10 a = b (0.5500)")
    only = "verdict: only a ran (test NDCG@10 0.5500): nothing to compare"
    assert verdict([_result("a", 0, [0.5, 0.6])], "a") == only
    apart = [_result("a", 0, [0.5, 0.6]), _result("b", 1, [0.5, 0.6])]
    assert "no fold was finished by every method" in verdict(apart, "a")
    with pytest.raises(ValueError, match="alpha .* between 0 and 1, got 5"):
        verdict(results, "base", alpha=5)


def test_legend_reads_the_method_table(monkeypatch) -> None:
    """One entry per name, its text the method table's summary (what --methods list prints), so a
    changed summary shows up in the legend; a configured name gets its base method's."""
    names = ["lambdarank", "rb-c", "mpboost-ldd[alpha=0.3]", "not-a-method"]
    legend = method_legend(names)
    lines = legend.splitlines()
    assert lines[0] == "methods (boostplug compare --methods list):"
    flat = " ".join(legend.split())
    for name in names[:3]:
        assert f"{name} {' '.join(METHODS[name.split('[')[0]].summary.split())}" in flat
    assert "not-a-method" not in legend and _longest(legend) <= 100
    import dataclasses

    from boostplug.compare import methods

    table = dict(METHODS)
    table["rb-c"] = dataclasses.replace(table["rb-c"], summary="RankBoost, continuous weights")
    monkeypatch.setattr(methods, "METHODS", table)
    assert "  rb-c        RankBoost, continuous weights" in method_legend(["lambdarank", "rb-c"]).splitlines()
    assert method_legend(["not-a-method"]) == ""


LONG = "lambdarank[lambdarank_truncation_level=2147483647,sigmoid=2]"


@pytest.mark.parametrize("folds,tuned", [(1, False), (5, False), (5, True)])
def test_a_long_name_is_shortened_in_the_table_and_spelt_out_under_it(folds: int, tuned: bool) -> None:
    """Settings in a name made the table 133 columns wide: it is shown as its base name and a number,
    with its full spelling in a footnote; the verdict and the notes keep the full name."""
    names = ["lambdarank", "ranknet", LONG,
             "xgb-rank:ndcg[lambdarank_pair_method=mean,lambdarank_num_pair_per_sample=4]"]
    table = format_table(_many(names, folds=folds, tuned=tuned), "lambdarank")
    assert _longest(table) <= TABLE_WIDTH
    lines = table.splitlines()
    assert any(line.startswith("lambdarank (1) ") for line in lines) and f"(1) {LONG}" in lines
    assert any(line.startswith("xgb-rank:n") and " (2) " in line for line in lines)  # as much of it as fits
    assert f"(2) {names[3]}" in lines


def test_the_default_and_the_tuned_table_give_the_differences_interval() -> None:
    """The interval of dNDCG@10 is the wide table's (the same bootstrap) to 3 decimals, in the default table
    and in the tuned one alike, within 100 columns for four methods with names of 15 characters: the
    tuned table shows the search's seconds (tune s) and leaves its chosen trial's (train s) to --wide."""
    names = ["lambdarank", "ranknet", "ndcg_loss2pp", "my_smooth_hinge"]
    for folds, tuned in ((1, False), (5, False), (5, True)):
        results = _many(names, folds=folds, tuned=tuned)
        table, wide = format_table(results, "lambdarank"), format_table(results, "lambdarank", wide=True)
        header = table.splitlines()[2]
        assert _longest(table) <= TABLE_WIDTH and "dNDCG@10 95% CI" in header and ("train s" in header) != tuned
        assert "(1)" not in table  # no name shortened for the width
        cis = bootstrap(results, "lambdarank")
        for name in names[1:]:
            ci = cis[name]["diff"]
            assert f"[{ci.low:+.4f},{ci.high:+.4f}]" in next(line for line in wide.splitlines() if line.startswith(name))
            assert f"[{ci.low:+.3f},{ci.high:+.3f}]" in next(line for line in table.splitlines() if line.startswith(name))


def test_the_verdict_names_a_partial_scope() -> None:
    """Folds compared that are not all of the data's (--folds, an interrupted study, one fold of five) are
    named in the verdict itself; all of them, or an unknown count with every fold run, are not."""
    two = _many(["a", "b"], folds=2)
    assert verdict(two, "a", n_folds=5).startswith("verdict (folds 1,2 of 5: partial): best NDCG@10 ")
    assert verdict(two[:2], "a", n_folds=5).startswith("verdict (fold 1 of 5: partial): ")
    assert verdict(two, "a", n_folds=2).startswith("verdict: best ") and verdict(two, "a").startswith("verdict: ")
    stopped = two[:3]  # b did not finish fold 2
    assert verdict(stopped, "a").startswith("verdict (fold 1 of 1,2: partial): ")


def test_the_verdict_says_what_each_interval_rules_out() -> None:
    """Per method, the table's 95% interval of dNDCG@10 in words: a gain above its upper end and a loss
    below its lower end are ruled out; "any" gain or loss when the interval is all on the other side."""
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.8, 60)
    results = [_result("base", 0, base), _result("better", 0, base + 0.05 + rng.normal(0, 0.01, 60)),
               _result("worse", 0, base - 0.05 + rng.normal(0, 0.01, 60)),
               _result("same", 0, base + rng.normal(0, 0.05, 60))]
    cis = bootstrap(results, "base")
    lines = verdict(results, "base").splitlines()
    k = lines.index("the 95% interval of dNDCG@10 against base rules out:")

    def said(name: str) -> str:
        ci = cis[name]["diff"]
        return f"  {name} [{ci.low:+.3f},{ci.high:+.3f}]: "

    b, w, s = (cis[n]["diff"] for n in ("better", "worse", "same"))
    assert b.low > 0 and w.high < 0 and s.low < 0 < s.high
    assert lines[k + 1:] == [said("better") + f"a gain above {b.high:+.3f}, any loss",
                             said("worse") + f"any gain, a loss below {w.low:+.3f}",
                             said("same") + f"a gain above {s.high:+.3f}, a loss below {s.low:+.3f}"]


def _counted(result: Result, relevant: int) -> Result:
    result.info["relevant_queries"] = relevant
    return result


@pytest.mark.parametrize("empty", ["1", "0", "skip"])
def test_the_verdict_counts_the_queries_that_can_tell_methods_apart(empty: str) -> None:
    """Under the verdict: how many test queries have a relevant document, and the option that keeps the
    others out of the means (--empty skip); when none has one, no comparison is possible."""
    from boostplug.compare import Conventions, make_conventions
    from boostplug.compare.execution import Results

    conv = make_conventions(empty=empty)
    rng = np.random.default_rng(2)
    folds = [rng.uniform(0.3, 0.8, 20) for _ in range(2)]
    runs = [_counted(_result(n, f, v + shift * rng.uniform(0, 0.02, 20)), 15) for f, v in enumerate(folds)
            for n, shift in (("base", 0.0), ("other", 1.0))]
    lines = verdict(Results(runs, conventions=conv), "base").splitlines()
    text = " ".join(" ".join(lines[1:]).split())
    assert lines[1].startswith("queries: 30 of the 40 test queries have a relevant document")
    assert "and can tell the methods apart; the other 10: " in text
    assert ("--empty skip left them out" in text) == (empty == "skip")
    assert (f"the other 10: they score {empty} for every method" in text) == (empty != "skip")
    none = " ".join(verdict(Results([_counted(r, 0) for r in runs], conventions=conv), "base").split())
    assert none.startswith("verdict: no comparison is possible: 0 of the 40 test queries have a relevant document")
    assert "no difference" not in none and "interval" not in none
    assert Conventions().empty == 1.0


def test_the_warnings_of_the_runs_once_each_with_how_many_runs_raised_them() -> None:
    """Each distinct warning once (a count in its text aside), with the runs that raised it and their methods."""
    runs = [_result("a", 0, [0.5, 0.6]), _result("b", 0, [0.5, 0.6]), _result("a", 1, [0.5, 0.6])]
    runs[0].info["warnings"] = [{"warning": "HessianFloorWarning: x: raised 5 of 9", "trial": None},
                                {"warning": "UserWarning: other", "trial": 2}]
    runs[2].info["warnings"] = [{"warning": "HessianFloorWarning: x: raised 7 of 9", "trial": None}]
    lines = warnings_note(runs).splitlines()
    assert lines[0].startswith("warnings the runs raised")
    assert lines[1:] == ["  2 of 3 run(s) (a): HessianFloorWarning: x: raised 5 of 9 (one of its texts: the numbers "
                         "vary)", "  1 of 3 run(s) (a): UserWarning: other"]
    assert warnings_note(runs[1:2]) == ""


def test_the_pairs_line_names_every_method_of_the_run() -> None:
    """YetiRank (the pairs of neighbours in each perturbed order) was left out, and so was every method
    without a pair setting."""
    names = ["lambdarank", "ranknet", "ndcg_loss2pp", "yetirank", "regression", "listnet", "cb-yetirank",
             "yetiloss[num_neighbors=3,top=10]"]
    names = [n for n in names if n.split("[")[0] in METHODS]  # (cb-: when catboost is installed)
    note = " ".join(format_table(_many(names, folds=1), "lambdarank").split())
    pairs = note.split("pairs each loss uses: ")[1].split(" dNDCG@10")[0]
    assert pairs.startswith("lambdarank: top 30; ranknet: every pair; ndcg_loss2pp: every pair; "
                            "yetirank: neighbours in 10 perturbed orders; ")
    assert "yetiloss[num_neighbors=3,top=10]: pairs up to 3 apart from the top 10 in 10 perturbed orders" in pairs
    assert pairs.endswith("no pair setting: regression, listnet")
    if "cb-yetirank" in names:
        assert "cb-yetirank: neighbours in 10 perturbed orders" in pairs
