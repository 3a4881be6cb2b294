"""The printed report of a comparison: the compact table within 100 columns (the wide one behind
``wide=True``), the verdict under it and the legend of the method names."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.compare import METHODS, REPORT_METRICS, Result, significance
from boostplug.compare.report import TABLE_WIDTH, format_table, method_legend, verdict


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
    assert header.split() == ["method", "rounds", "NDCG@10", "MAP", "train", "s", "tune", "s", "dNDCG@10", "p(t)"]
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
    text = verdict(results, "base")
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
    text = " ".join(verdict(results, "base").split())
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
    assert any(line.startswith("xgb-rank:ndcg (2) ") for line in lines)
    assert f"(2) {names[3]}" in lines


def test_the_default_table_gives_the_differences_interval_where_it_fits() -> None:
    """The interval is the wide table's (the same bootstrap), in the default table when it fits in 100
    columns; with a --tune column and five folds it does not, and the table says it is behind --wide."""
    names = ["lambdarank", "ranknet", "ndcg_loss2pp", "yetirank"]
    for folds in (1, 5):
        results = _many(names, folds=folds)
        table, wide = format_table(results, "lambdarank"), format_table(results, "lambdarank", wide=True)
        assert _longest(table) <= TABLE_WIDTH and "dNDCG@10 95% CI" in table.splitlines()[2]
        for name in names[1:]:
            interval = next(c for c in next(line for line in wide.splitlines() if line.startswith(name + " ")).split()
                            if c.startswith("[") and not c.startswith("[0."))  # the signed one: the difference's
            assert interval in next(line for line in table.splitlines() if line.startswith(name + " "))
    tuned = format_table(_many(names, tuned=True), "lambdarank")
    assert "95% CI" not in tuned and "bootstrap 95% intervals" in " ".join(tuned.split())


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
