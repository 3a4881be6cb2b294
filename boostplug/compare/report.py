"""The report of a comparison: the table (:func:`format_table`, from :mod:`.comparison`), its verdict and
the legend of its method names, and the output files of ``--out`` (:func:`write_outputs`)."""

from __future__ import annotations

import csv
import json
import platform
import re
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .._atomic import atomic_write, write_text
from .comparison import (
    BOOTSTRAP_LEVEL, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Comparison, bootstrap, comparison, folds_finished,
    folds_text, significance, summary_columns,
)
from .conventions import Conventions
from .method_specs import split_spec
from .methods import METHODS, pair_rule
from .plots import write_plots
from .protocol import CURVE_METRIC, REPORT_METRICS, Result, reported_metrics
from .results_schema import with_digests
from .run_record import RunRecord, versions
from .search_spaces import TREE_SPACE
from .stats import BootstrapCI

__all__ = ["format_table", "verdict", "method_legend", "warnings_note", "TABLE_WIDTH", "wrap", "write_outputs"]


def _best(stats: dict[str, dict[str, Any]], column: str, skip: Mapping[str, Any] | None = None) -> float:
    """The best mean of ``column`` over the methods not in ``skip`` (the degenerate ones)."""
    vals = [s[column]["mean"] for n, s in stats.items() if column in s and n not in (skip or {})]
    return (min if column in ("seconds", "tune_seconds") else max)(vals, default=float("nan"))


#: Marks a degenerate method's name in the table (:func:`.comparison.degenerate_folds`).
DEGENERATE_MARK = "!"


def _degenerate_note(flat: Mapping[str, list[int]], baseline: str | None, tested: bool) -> str:
    """What the table's and the verdict's words on degenerate methods say: who, on which folds."""
    who = ", ".join(f"{n} (fold {','.join(map(str, folds))})" for n, folds in flat.items())
    text = (f"degenerate: {who}: the chosen model predicts one value for every test document (its trees stopped "
            "at one leaf, or no round was trained), so its metrics measure the tie convention, not a ranking")
    if baseline in flat:
        return text + f"; {baseline} is the baseline: nothing is tested against it"
    return text + ("; not tested" if tested else "")


def _span(counts: Sequence[int]) -> str:
    """``"40"``, or ``"38-40"`` when the counts differ."""
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"


#: The columns the compact table fits in (:func:`format_table`), for the method table's names over
#: any number of folds; verdict and legend are wrapped to it too.
TABLE_WIDTH = 100
#: The compact table's metric columns besides those ``--metrics`` adds (:func:`format_table`).
COMPACT_METRICS = (CURVE_METRIC, "map")


def wrap(text: str, width: int | None, indent: str = "") -> list[str]:
    """``text`` (its lines) wrapped to ``width`` columns, continuation lines indented; as it is
    with ``width=None``."""
    if width is None:
        return text.splitlines()
    return [w for line in text.splitlines()
            for w in textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [""]]


def format_table(results: Sequence[Result], baseline: str | None = None,
                 conventions: Conventions | None = None, *, wide: bool = False) -> str:
    """A first line naming the metric conventions (``conventions``, else those ``results``
    carry, else the library's), then per method the test metrics, mean±std over folds (std
    shown with several folds), best per column marked ``*``; with ``baseline``, the mean per-query
    NDCG@10 difference and the paired t-test p-value against it; notes on what the columns are.

    The default (compact) table has NDCG@10, MAP (and each metric ``--metrics`` adds to the
    default set), the training seconds (mean), the chosen rounds
    as their range over folds and the t-test, and fits :data:`TABLE_WIDTH` columns (its notes
    wrapped to it) with the default metrics. ``wide=True``: every reported metric and the seconds as mean±std,
    the rounds of every fold, the Wilcoxon signed-rank p-value and the bootstrap 95% intervals,
    one unwrapped line per note.

    Means, marks and tests are over the folds every method finished (:func:`.comparison.comparable`);
    a note names the runs left out. When no fold was finished by every method, each row
    is over its own folds (a ``folds`` column), and nothing is marked or tested.
    """
    finished = folds_finished(results)
    compared = comparison(results, baseline, intervals=wide)
    common, stats, tests, cis = compared.common, compared.stats, compared.tests, compared.cis
    flat = compared.degenerate
    reported = reported_metrics(results)
    metrics = reported if wide else [m for m in reported if m in COMPACT_METRICS or m not in REPORT_METRICS]
    tuned = any("tune_seconds" in s for s in stats.values())  # compact: the search's seconds, not its trial's
    cols = [*metrics] + ["seconds"] * (wide or not tuned) + ["tune_seconds"] * tuned
    names = {"seconds": "train s", "tune_seconds": "tune s"}
    header = ["method", "rounds"] + [names.get(c, c.upper()) for c in cols]
    if not common:
        header.insert(1, "folds")
    if cis and wide:
        header.append(f"{CURVE_METRIC.upper()} 95% CI")
    if tests:
        header += ["dNDCG@10", _DIFF_CI, "p(t)", "p(W)"][:None if wide else 3]
    diffs = cis if wide else bootstrap(compared.results, baseline, means=False) if tests else {}
    best = {c: _best(stats, c, flat) for c in cols}
    rows = []
    for name, s in stats.items():
        row = [name, "/".join(str(r) for r in s["best_rounds"]) if wide else _span(s["best_rounds"])]
        if not common:
            row.insert(1, ",".join(map(str, s["folds"])))
        for c in cols:
            digits = 2 if c in names else 4
            if c not in s:  # a method run without tuning next to tuned ones (a run of another command)
                row.append("")
                continue
            cell = f"{s[c]['mean']:.{digits}f}"
            if len(s["folds"]) > 1 and (wide or c not in names):
                cell += f"±{s[c]['std']:.{digits}f}"
            if common and len(stats) > 1 and s[c]["mean"] == best[c] and name not in flat:
                cell += "*"
            row.append(cell)
        if cis and wide:
            row.append(_interval(cis[name]["mean"][CURVE_METRIC]))
        if tests:
            t = tests.get(name)
            if name == baseline or t is None:  # t is None: degenerate, not tested
                row += ["", "(baseline)" if name == baseline else "degenerate"] + [""] * (2 if wide else 1)
            else:  # the compact table's interval in 3 decimals: its width for the names
                ci = _interval(diffs[name]["diff"], signed=True, digits=4 if wide else 3)
                cells = [f"{t.mean_diff:+.4f}", ci, _p(t.t_pvalue, compact=not wide), _p(t.wilcoxon_pvalue)]
                row += cells if wide else cells[:3]
        rows.append(row)
    footnotes = [] if wide else _fit(header, rows, flat)
    for name, row in zip(stats, rows):
        row[0] += f" {DEGENERATE_MARK}" * (name in flat)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    width = None if wide else TABLE_WIDTH
    conv = conventions or getattr(results, "conventions", None) or Conventions()
    out = [*wrap(conv.describe(), width, "  "), line(header), line(["-" * w for w in widths]), *map(line, rows)]

    n_folds = len(common)
    note = "".join(f"{f}\n" for f in footnotes)
    if common:
        rounds = "rounds chosen on validation, per fold" if wide else "rounds: the round chosen on validation"
        if not wide and n_folds > 1:
            rounds += " (lowest-highest over folds)"
        note += (f"test metrics, mean{'±std over ' + str(n_folds) + ' folds' if n_folds > 1 else ' (1 fold)'}; "
                 f"* best per column; {rounds}")
        left_out = sorted({r.fold for r in results} - set(common))
        if left_out:
            lacking = {f: [n for n, fs in finished.items() if f not in fs] for f in left_out}
            which = (f"fold {folds_text(common)}, which every method finished, is" if n_folds == 1 else
                     f"folds {folds_text(common)}, which every method finished, are")
            note += (f"\nonly {which} compared; left out: "
                     + "; ".join(f"fold {f + 1} (not finished by {', '.join(lacking[f])})" for f in left_out))
    else:
        note += ("no fold was finished by every method: each row is the mean over its own folds, so nothing is "
                 "marked or tested")
    if "tune_seconds" in cols:
        trials = sorted({n for s in stats.values() for n in s.get("trials", [])})
        note += (f"\ntune s: seconds of the parameter search per fold ({'/'.join(map(str, trials))} trials, "
                 "trial 0 the defaults; a method without a search space has one); train s"
                 + (": its chosen trial's" if wide else " (its chosen trial's): --wide"))
    note += _settings_note(results)
    if flat:
        note += f"\n{DEGENERATE_MARK} " + _degenerate_note(flat, baseline, bool(tests))
    if tests:
        others = [t.n for name, t in tests.items() if name != baseline] or [tests[baseline].n]
        note += (f"\ndNDCG@10, p(t){', p(W)' * wide}: per-query test NDCG@10 minus {baseline}'s and its paired t-test "
                 + ("and Wilcoxon signed-rank p-values" if wide else "p-value")
                 + f" (two-sided), queries pooled across folds (n={_span(others)})")
    if diffs:
        n_q = _span([c["mean"][CURVE_METRIC].n for c in cis.values()] or [t.n for t in tests.values()])
        of = ["of the mean over folds"] * wide + ["of the paired per-query difference to the baseline"] * bool(tests)
        note += (f"\n{'95% CI' if wide else _DIFF_CI}: percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples (seed "
                 f"{BOOTSTRAP_SEED}) of the n={n_q} test queries, drawn within each fold, {' and '.join(of)}")
    footer = conv.footer()
    if footer:
        note += "\n" + footer
    if not wide:
        more = _names([m for m in reported if m not in metrics])
        note += ("\n--wide: " + (f"also {more}, " if more else "also ") + "the rounds of each fold"
                 + (", the Wilcoxon test" if tests else "") + (" and the means' 95% intervals" if common else ""))
    return "\n".join(out + wrap(note, width, "  "))


#: The compact table's column of the interval of the difference, there where it fits (:func:`_fit`).
_DIFF_CI = "dNDCG@10 95% CI"


def _fit(header: list[str], rows: list[list[str]], flat: Mapping[str, Any]) -> list[str]:
    """The compact table (changed in place) within :data:`TABLE_WIDTH`: a name longer than the other columns
    leave room for is shown as its base name and a number, ``lambdarank (1)``, spelt out in the footnotes
    returned (``flat``: the names that get the degenerate mark). Every column is kept: the interval of the
    difference is what says which gain a method cannot have."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    room = TABLE_WIDTH - sum(w + 2 for w in widths[1:])
    marks = [len(DEGENERATE_MARK) + 1 if row[0] in flat else 0 for row in rows]
    footnotes: list[str] = []
    for row, mark in zip(rows, marks):
        if len(row[0]) + mark > room:
            footnotes.append(f"({len(footnotes) + 1}) {row[0]}")
            number = f" ({len(footnotes)})"
            row[0] = row[0].split("[", 1)[0][:max(room - mark - len(number), 4)] + number
    return footnotes


def _settings_note(results: Sequence[Result]) -> str:
    """The notes on the methods' own settings: the pairs each loss uses (:func:`.methods.pair_rule`) where the
    methods differ in them, per fold where ``--tune`` chose them, naming every method (those without a pair
    setting together); what ``--tune`` searched beside the tree space."""
    rules: dict[str, list[str]] = {}
    searched: dict[str, str] = {}
    for r in sorted(results, key=lambda r: r.fold):
        tuning, (base, given) = r.info.get("tuning") or {}, split_spec(r.method, METHODS)
        if "clicks" in r.info or base not in METHODS:  # the click protocol's methods, a name of no method
            continue
        rules.setdefault(r.method, []).append(pair_rule({**METHODS[base].parameters(), **given,
                                                         **tuning.get("chosen", {})}))
        if tuning:
            searched[r.method] = ", ".join(f"{k} {d}" for k, d in tuning.get("space", {}).items()
                                           if k not in TREE_SPACE) or "nothing"
    shown = {n: v[0] if len(set(v)) == 1 else "/".join(v) for n, v in rules.items()}
    unset = ", ".join(n for n, v in shown.items() if not v)
    said = [f"{n}: {v}" for n, v in shown.items() if v] + [f"no pair setting: {unset}"] * bool(unset)
    pairs = (f"\npairs each loss uses{' (per fold: --tune chose them)' if searched else ''}: " + "; ".join(said)
             if len(set(shown.values()) - {""}) > 1 else "")
    return pairs + ("\n--tune searched, besides the tree parameters: " + "; ".join(
        f"{n}: {v}" for n, v in searched.items()) if searched else "")


def _names(metrics: Sequence[str]) -> str:
    """Metric names for a note, one base's cut-offs together: ``NDCG@1/3/5, MRR``."""
    out: list[str] = []
    for m in metrics:
        base, at, k = m.upper().partition("@")
        if at and out and out[-1].startswith(base + "@"):
            out[-1] += "/" + k
        else:
            out.append(m.upper())
    return ", ".join(out)


def verdict(results: Sequence[Result], baseline: str | None = None, alpha: float = 0.05, *,
            width: int | None = TABLE_WIDTH, n_folds: int | None = None) -> str:
    """Who won, in one sentence (wrapped to ``width`` columns; ``None``: one line): the best method
    by test NDCG@10 (the metric of the tests; mean over the folds every method finished), and which
    methods' differences to ``baseline`` are significant at ``p < alpha`` by the paired t-test of
    the table (``p(t)``), or that none is; and :func:`_linear_note`. The p-values are not corrected for
    the number of methods compared. Its scope first when the folds compared are not all of the data's
    ``n_folds`` (default: those ``results`` ran): ``verdict (folds 1,2 of 5: partial)``.

    Under it: how many test queries can tell the methods apart (:func:`_queries`; a study where none can
    is no comparison), and what each method's 95% interval of dNDCG@10 against ``baseline`` (the
    table's) rules out (:func:`_bounds`)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha (the significance level) must be between 0 and 1, got {alpha!r}")
    cmp = comparison(results, baseline, intervals=False)
    flat = cmp.degenerate
    metric = CURVE_METRIC.upper()
    level = f"p(t){_NBSP}<{_NBSP}{alpha:g}"
    ran = sorted({r.fold for r in results})
    of = n_folds or len(ran)
    scope = (f" ({'fold' if len(cmp.common) == 1 else 'folds'} {folds_text(cmp.common)} of "
             f"{of if n_folds else folds_text(ran)}: partial)" if 0 < len(cmp.common) < of else "")
    (some, queries), bounds = _queries(cmp, getattr(results, "conventions", None) or Conventions()), []
    if not cmp.stats:
        text = "none (no method finished)"
    elif not cmp.common:
        text = "none drawn: no fold was finished by every method, so their means do not compare"
    elif len(cmp.stats) == 1:
        (name, s), = cmp.stats.items()
        text = f"only {name} ran (test {metric} {s[CURVE_METRIC]['mean']:.4f}): nothing to compare"
    elif some == 0:  # every query scores the same for every method
        text, queries = f"no comparison is possible: {queries.removeprefix('queries: ')}", ""
    else:
        means = {n: s[CURVE_METRIC]["mean"] for n, s in cmp.stats.items()
                 if np.isfinite(s[CURVE_METRIC]["mean"]) and n not in flat}
        if means:
            top = max(means.values())
            bests = [n for n, v in means.items() if v == top]
            text = (f"best {metric} {' = '.join(bests)} ({top:.4f}"
                    f"{', the baseline' if baseline in bests else ''})")
        else:
            text = f"no method has a test {metric}" + (" that ranks" if flat else "")
        others = {n: t for n, t in cmp.tests.items() if n != baseline}
        significant = {n: t for n, t in others.items() if t.t_pvalue < alpha}
        if others and all(np.isnan(t.t_pvalue) for t in others.values()):
            text += f"; no paired test against {baseline} (fewer than two test queries)"
        elif others and not significant:
            text += f"; no difference to {baseline} is significant at {level}"
        elif others:
            ranked = sorted(significant.items(), key=lambda item: -item[1].mean_diff)
            sides = [f"{side}: " + ", ".join(f"{n}{_NBSP}({t.mean_diff:+.4f})" for n, t in ranked if keep(t.mean_diff))
                     for side, keep in (("better", lambda d: d > 0), ("worse", lambda d: d < 0))
                     if any(keep(t.mean_diff) for t in significant.values())]
            rest = len(others) - len(significant)
            text += (f"; at {level} against {baseline}, " + "; ".join(sides)
                     + (f"; the other {rest} not significant" if rest else ""))
        text += _linear_note(cmp, means, alpha)
        bounds = _bounds(cmp, baseline)
    if cmp.stats and flat:
        names = ", ".join(flat)
        text += (f"; {names} {'is' if len(flat) == 1 else 'are'} degenerate (one value for every test document"
                 + (f"; {baseline} is the baseline: nothing is tested against it)" if baseline in flat else
                    ", not tested)"))
    lines = [*wrap(f"verdict{scope}: {text}", width, "  "), *wrap(queries, width, "  ")]
    return "\n".join(lines + [w for line in bounds for w in wrap(line, width, "    ")]).replace(_NBSP, " ")


def _queries(cmp: Comparison, conv: Conventions) -> tuple[int | None, str]:
    """How many of the compared test queries have a relevant document (label above 0: the others score
    the same for every method, ``--empty``), from the runs' ``info["relevant_queries"]``, and the verdict's
    line of it; ``(None, "")`` when a run does not say (a run of an earlier version)."""
    runs = [r for r in cmp.results if r.method == cmp.results[0].method] if cmp.common else []
    counts = [r.info.get("relevant_queries") for r in runs]
    if not runs or None in counts:
        return None, ""
    some, total = sum(counts), sum(len(r.test_per_query[CURVE_METRIC]) for r in runs)
    rest = ("--empty skip left them out of the means and tests" if conv.empty == "skip" else f"they score "
            f"{conv.empty:g} for every method and shrink each difference: --empty skip leaves them out of the means")
    return some, (f"queries: {some} of the {total} test queries have a relevant document and can tell the methods "
                  "apart" + (f"; the other {total - some}: {rest}" if some < total else ""))


def _bounds(cmp: Comparison, baseline: str | None) -> list[str]:
    """What each tested method's 95% bootstrap interval of dNDCG@10 against ``baseline`` (the table's) rules
    out, in words a choice can follow: a gain above its upper end, a loss below its lower end."""
    diffs = bootstrap(cmp.results, baseline, means=False) if cmp.tests else {}
    said = []
    for name, ci in ((n, diffs[n]["diff"]) for n in cmp.tests if n != baseline):
        if ci is not None and not np.isnan(ci.low):
            gain = f"a gain above {ci.high:+.3f}" if ci.high > 0 else "any gain"
            loss = f"a loss below {ci.low:+.3f}" if ci.low < 0 else "any loss"
            said.append(f"  {name}{_NBSP}{_interval(ci, signed=True, digits=3)}: {gain}, {loss}")
    return [f"the 95% interval of dNDCG@10 against {baseline} rules out:", *said] if said else []


def _linear_note(cmp: Comparison, means: dict[str, float], alpha: float) -> str:
    """The verdict's note when the best linear method is above the best other one or not below it at ``p(t) < alpha``
    (``means``: the verdict's test NDCG@10 of the methods that rank)."""
    linear = {r.method for r in cmp.results if r.framework == "linear"}
    kinds = [[n for n in means if (n in linear) == side] for side in (True, False)]
    if not cmp.common or not all(kinds):
        return ""
    lin, top = (max(names, key=means.__getitem__) for names in kinds)
    test = significance(cmp.results, top)[lin]
    if means[lin] < means[top] and not test.t_pvalue >= alpha:
        return ""
    return (f"; {lin}, a linear model, is {'above' if means[lin] >= means[top] else 'within noise of'} the best boosted "
            f"method, {top}{_NBSP}({test.mean_diff:+.4f}, p(t){_NBSP}{_p(test.t_pvalue)}): this set may not need trees")


#: Joins words the verdict's wrapping keeps on one line (a name and its difference, ``p(t) < 0.05``).
_NBSP = "\u00a0"


def method_legend(names: Sequence[str], table: Mapping[str, Any] | None = None, *,
                  width: int | None = TABLE_WIDTH) -> str:
    """What each method name of a table is: one line per name (wrapped to ``width`` columns), the
    ``summary`` of its entry in ``table`` (default: :data:`.methods.METHODS`, whose summaries
    ``boostplug compare --methods list`` prints; the click protocol's ``CLICK_METHODS``). A
    configured name (``mpboost-ldd[alpha=0.3]``) gets its base method's summary; a name the
    table does not have is left out."""
    if table is None:
        from .methods import METHODS as table
    shown = [(n, table[n.split("[", 1)[0]].summary) for n in dict.fromkeys(names) if n.split("[", 1)[0] in table]
    if not shown:
        return ""
    w = min(max(len(n) for n, _ in shown), 24)  # a longer name pushes its own summary along
    lines = ["methods (boostplug compare --methods list):"]
    for n, summary in shown:
        lines += wrap(f"  {n:<{w}}  {summary}", width, " " * (w + 4))
    return "\n".join(lines)


def warnings_note(results: Sequence[Result], *, width: int | None = TABLE_WIDTH) -> str:
    """Each distinct warning of ``results``' runs (``info["warnings"]``, :mod:`.run_warnings`) once, numbers aside
    (a count in a message varies from run to run), with how many runs raised it and which methods; "" when
    none did."""
    seen: dict[str, tuple[set[str], set[tuple[str, int]]]] = {}
    for r in results:
        for w in r.info.get("warnings", ()):
            texts, runs = seen.setdefault(re.sub(r"\d[\d.e+-]*", "#", w["warning"]), (set(), set()))
            texts.add(w["warning"])
            runs.add((r.method, r.fold))
    said = [f"  {len(runs)} of {len(results)} run(s) ({', '.join(dict.fromkeys(m for m, _ in sorted(runs)))}): "
            + min(texts) + (" (one of its texts: the numbers vary)" if len(texts) > 1 else "")
            for texts, runs in seen.values()]
    head = "warnings the runs raised (each with its run and --tune trial in results.json, info.warnings):"
    return "\n".join(wrap("\n".join([head, *said]), width, "    ")) if said else ""


def _interval(ci: BootstrapCI | None, signed: bool = False, digits: int = 4) -> str:
    if ci is None or np.isnan(ci.low):
        return "n/a"
    return f"[{ci.low:{'+' * signed}.{digits}f},{ci.high:{'+' * signed}.{digits}f}]"


def _p(p: float, compact: bool = False) -> str:
    if np.isnan(p):
        return "n/a"
    if p < 1e-3:
        return "<0.001" if compact else f"{p:.1e}"
    return f"{p:.3f}"



# ---- the output files of --out ----------------------------------------------------------------

def write_outputs(out: Path, results: Sequence[Result], baseline: str, record: RunRecord,
                  plots: bool = True) -> None:
    """results.csv (one row per method and fold), per_query.csv, curves.csv, summary.csv,
    the PNG plots and, last, results.json (all of it plus the ``record``'s settings and provenance
    and the significance tests),
    each file written atomically (``--out`` itself goes through :class:`.outdir.OutDir`, which
    writes them into a staging folder and moves the whole set in).

    The per-run files hold every finished run; summary.csv, the summary and significance of
    results.json and the plots, like the table, only the folds every method finished
    (:func:`.comparison.comparable`), named in results.json's ``compared_folds``. results.json's runs are
    ordered by fold, then method, and it carries the digests ``--resume`` checks
    (:func:`.results_schema.with_digests`)."""
    out.mkdir(parents=True, exist_ok=True)
    cmp = comparison(results, baseline)
    metrics = reported_metrics(results)
    _write_csv(out / "results.csv",
               ["method", "framework", "fold", "best_round", "rounds_trained", "select_metric", "train_seconds",
                *metrics],
               ([r.method, r.framework, r.fold + 1, r.best_round, r.rounds_trained, r.select_metric,
                 repr(r.seconds), *(repr(r.test[m]) for m in metrics)] for r in results))
    _write_csv(out / "per_query.csv", ["method", "fold", "qid", "position", *metrics],
               ([r.method, r.fold + 1, r.test_qids[q] if q < len(r.test_qids) else "", q,
                 *(repr(r.test_per_query[m][q]) for m in metrics)]
                for r in results for q in range(len(r.test_per_query[CURVE_METRIC]))))
    _write_csv(out / "curves.csv", ["method", "fold", "round", "vali_select", "vali_ndcg@10", "test_ndcg@10"],
               ([r.method, r.fold + 1, t + 1, repr(r.vali_curve[t]), repr(r.vali_ndcg10_curve[t]),
                 repr(r.test_curve[t])] for r in results for t in range(len(r.test_curve))))
    tested, columns = [CURVE_METRIC, *(m for m in metrics if m != CURVE_METRIC)], summary_columns(results)
    rows = []  # summary.csv, each column named beside its value; the tests of NDCG@10 first, unsuffixed
    for n, s in cmp.stats.items():
        row = {"method": n, "framework": s["framework"], "folds": " ".join(map(str, s["folds"])),
               **{f"{c}_{k}": repr(s[c][k]) for c in columns for k in ("mean", "std")}}
        for m in tested:
            t, sfx = cmp.tests_by_metric.get(m, {}).get(n), "" if m == CURVE_METRIC else f"_{m}"
            row.update({c: "" if t is None else repr(getattr(t, a)) for c, a in (
                (f"d{m}", "mean_diff"), (f"p_ttest{sfx}", "t_pvalue"), (f"p_wilcoxon{sfx}", "wilcoxon_pvalue"))})
        ci = cmp.cis.get(n) or {"mean": {}, "diff": None}  # the bootstrap intervals: each mean, the difference
        row.update({f"{m}_ci_{side}": "" if i is None else repr(getattr(i, side)) for m, i in (
            *((m, ci["mean"].get(m)) for m in metrics), ("dndcg@10", ci["diff"])) for side in ("low", "high")})
        rows.append(row)
    _write_csv(out / "summary.csv", list(rows[0]) if rows else [], (list(r.values()) for r in rows))
    if any("tuning" in r.info for r in results):
        _write_tuning_csv(out / "tuning.csv", results)
    finished = folds_finished(results)
    methods = getattr(results, "methods", None) or list(finished)
    order = {m: k for k, m in enumerate(methods)}
    runs = sorted(results, key=lambda r: (r.fold, order.get(r.method, len(order))))  # as --resume reads them
    payload = {
        "settings": record.settings(),
        "baseline": baseline,
        "conventions": getattr(results, "conventions", Conventions()).to_dict(),
        "interrupted": bool(getattr(results, "interrupted", False)),
        "folds_completed": {m: [f + 1 for f in finished.get(m, [])] for m in methods},
        "compared_folds": [f + 1 for f in cmp.common],
        "summary": cmp.stats,
        "significance": {n: asdict(t) for n, t in cmp.tests.items()},
        "significance_by_metric": {m: {n: asdict(t) for n, t in tests.items()}
                                   for m, tests in cmp.tests_by_metric.items()},
        "degenerate": cmp.degenerate,
        "bootstrap": _bootstrap_json(cmp.cis),
        "provenance": _provenance(record),
        "results": [{**r.to_dict(), "fold": r.fold + 1} for r in runs],  # folds numbered from 1, as said
        "failures": [{**f.to_dict(), "fold": f.fold + 1} for f in getattr(results, "failures", [])],
    }
    if plots:
        write_plots(cmp.results, out)
    as_read = json.loads(json.dumps(payload, default=_json_default))  # what --resume digests: the file's values
    write_text(out / "results.json", json.dumps(with_digests(as_read), indent=1))  # last: complete


def _write_tuning_csv(path: Path, results: Sequence[Result]) -> None:
    """tuning.csv: one row per trial of every (method, fold) search (``--tune``); ``chosen`` marks
    the trial evaluated on test; ``state`` is complete, pruned (stopped at round ``pruned_at``; its
    value is the best it reached by then) or failed; ``params`` (JSON) are the values the trial
    searched (none for trial 0, the defaults)."""
    _write_csv(path, ["method", "fold", "trial", "value", "best_round", "seconds", "chosen", "state", "pruned_at",
                      "params", "error"],
               ([r.method, r.fold + 1, trial["number"], "" if trial["value"] is None else repr(trial["value"]),
                 trial["best_round"], repr(trial["seconds"]), int(trial["number"] == t["best_trial"]),
                 trial.get("state", "complete"), trial.get("pruned_at", 0) or "",
                 json.dumps(trial["params"], sort_keys=True), trial["error"]]
                for r in results if (t := r.info.get("tuning")) for trial in t["trials"]))


def _bootstrap_json(cis: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "percentile bootstrap over the test queries, resampled within each fold (paired: the same "
                      "draws for every method)",
            "resamples": BOOTSTRAP_RESAMPLES, "level": BOOTSTRAP_LEVEL, "seed": BOOTSTRAP_SEED,
            "intervals": {n: {"mean": {m: asdict(ci) for m, ci in c["mean"].items()},
                              "diff_ndcg@10": asdict(c["diff"]) if c["diff"] is not None else None}
                          for n, c in cis.items()}}


def _provenance(record: RunRecord) -> dict[str, Any]:
    """What reproduces the run: the command line, the versions, the seeds, a SHA-256 per data file read."""
    packages = versions()
    return {
        "argv": ["boostplug", *record.argv] if record.argv is not None else list(sys.argv),
        "python": packages.pop("python"),
        "platform": platform.platform(),
        "versions": packages,
        "seeds": {"splits_and_training": record.seed, "bootstrap": BOOTSTRAP_SEED},
        "data_sha256": record.data_sha256,
        **({"earlier_runs": record.earlier_runs} if record.earlier_runs else {}),
        **({"cluster": record.cluster} if record.cluster else {}),
    }


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _write_csv(path: Path, header: list[str], rows: Any) -> None:
    with atomic_write(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
