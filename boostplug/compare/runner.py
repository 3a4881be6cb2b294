"""Deprecated: ``boostplug.compare.runner`` is split by concern. Import from :mod:`boostplug.compare`, or

* :mod:`boostplug.compare.protocol` -- ``Result``, ``choose_round``, ``metric_curve``, ``run_method``,
  ``REPORT_METRICS``, ``CURVE_METRIC`` (what one (method, fold) run does);
* :mod:`boostplug.compare.execution` -- ``run``, ``Results``, ``Failure``, ``threads_per_job``,
  ``max_parallel``, ``check_parallel`` (every run, in parallel processes).

Still here: the report (``summary``, ``significance``, ``bootstrap``, ``format_table``, ...).

Each name still resolves here, the public ones with a ``DeprecationWarning``. Setting a name here
(a patch) sets it in the module that holds it now, where the code that uses it looks it up.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from typing import Any, Sequence

import numpy as np

from .conventions import Conventions
from .protocol import CURVE_METRIC, REPORT_METRICS, Result
from .stats import BootstrapCI, PairedTest, bootstrap_ci, paired_tests

__all__ = [
    "REPORT_METRICS", "CURVE_METRIC", "Result", "Results", "Failure", "example_split", "metric_curve", "choose_round",
    "run_method", "run", "threads_per_job", "max_parallel", "check_parallel", "significance", "summary",
    "folds_finished", "common_folds", "comparable", "format_table", "bootstrap", "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_LEVEL", "BOOTSTRAP_SEED",
]

_MOVED = {
    **dict.fromkeys(("REPORT_METRICS", "CURVE_METRIC", "Result", "metric_curve", "choose_round", "run_method"),
                    "boostplug.compare.protocol"),
    **dict.fromkeys(("Results", "Failure", "run", "threads_per_job", "max_parallel", "check_parallel"),
                    "boostplug.compare.execution"),
    "example_split": "boostplug.compare.data",
}
def significance(results: Sequence[Result], baseline: str, metric: str = CURVE_METRIC) -> dict[str, PairedTest]:
    """Per method: paired tests against ``baseline`` over the per-query test ``metric``
    pooled across the folds both finished (queries paired by fold and position)."""
    base = {r.fold: r.test_per_query[metric] for r in results if r.method == baseline}
    out: dict[str, PairedTest] = {}
    for name in dict.fromkeys(r.method for r in results):
        a: list[float] = []
        b: list[float] = []
        for r in results:
            if r.method == name and r.fold in base:
                a.extend(r.test_per_query[metric])
                b.extend(base[r.fold])
        out[name] = paired_tests(np.array(a), np.array(b))
    return out


def summary(results: Sequence[Result]) -> dict[str, dict[str, Any]]:
    """Per method: mean and std (population, over folds) of each test metric and of
    the training seconds, the chosen rounds and the folds."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r.method for r in results):
        rs = [r for r in results if r.method == name]
        row: dict[str, Any] = {"framework": rs[0].framework, "folds": [r.fold + 1 for r in rs],
                               "best_rounds": [r.best_round for r in rs]}
        for c in (*REPORT_METRICS, "seconds"):
            v = np.array([r.seconds if c == "seconds" else r.test[c] for r in rs], dtype=np.float64)
            row[c] = {"mean": float(v.mean()), "std": float(v.std())}
        if any("tuning" in r.info for r in rs):  # --tune: the search's seconds, all trials
            v = np.array([r.info.get("tuning", {}).get("seconds", 0.0) for r in rs], dtype=np.float64)
            row["tune_seconds"] = {"mean": float(v.mean()), "std": float(v.std())}
            row["trials"] = [r.info.get("tuning", {}).get("n_trials", 0) for r in rs]
        out[name] = row
    return out


def folds_finished(results: Sequence[Result]) -> dict[str, list[int]]:
    """Per method (in order of appearance): the 0-based folds it finished."""
    out: dict[str, list[int]] = {}
    for r in results:
        out.setdefault(r.method, []).append(r.fold)
    return {n: sorted(set(f)) for n, f in out.items()}


def common_folds(results: Sequence[Result]) -> list[int]:
    """The 0-based folds that every method in ``results`` finished (after Ctrl-C or a failure
    some methods may have finished more folds than others)."""
    per_method = [set(f) for f in folds_finished(results).values()]
    return sorted(set.intersection(*per_method)) if per_method else []


def comparable(results: Sequence[Result]) -> list[Result]:
    """The results on :func:`common_folds`: what the table, the summary, the paired tests and
    the plots compare. Empty when no fold was finished by every method."""
    common = set(common_folds(results))
    return [r for r in results if r.fold in common]


def _best(stats: dict[str, dict[str, Any]], column: str) -> float:
    vals = [s[column]["mean"] for s in stats.values() if column in s]
    return min(vals) if column in ("seconds", "tune_seconds") else max(vals)


def _folds_text(folds: Sequence[int]) -> str:
    return ",".join(str(f + 1) for f in folds)


def format_table(results: Sequence[Result], baseline: str | None = None,
                 conventions: Conventions | None = None) -> str:
    """A first line naming the metric conventions (``conventions``, else those ``results``
    carry, else the library's), then mean±std over folds per method (std shown with several folds), best per column
    marked ``*``; with ``baseline``, the mean per-query NDCG@10 difference and the
    paired t-test / Wilcoxon p-values against it.

    Means, marks and tests are over the folds every method finished (:func:`comparable`);
    a note names the runs left out. When no fold was finished by every method, each row
    is over its own folds (a ``folds`` column), and nothing is marked or tested.
    """
    finished = folds_finished(results)
    common = common_folds(results)
    shown = comparable(results) if common else list(results)
    stats = summary(shown)
    tests = significance(shown, baseline) if common and baseline in stats else {}
    cis = bootstrap(shown, baseline if tests else None) if common else {}
    cols = [*REPORT_METRICS, "seconds"] + (["tune_seconds"] if any("tune_seconds" in s for s in stats.values()) else [])
    names = {"seconds": "train s", "tune_seconds": "tune s"}
    header = ["method", "rounds"] + [names.get(c, c.upper()) for c in cols]
    if not common:
        header.insert(1, "folds")
    if cis:
        header.append(f"{CURVE_METRIC.upper()} 95% CI")
    if tests:
        header += ["dNDCG@10", "dNDCG@10 95% CI", "p(t)", "p(W)"]
    best = {c: _best(stats, c) for c in cols}
    rows = []
    for name, s in stats.items():
        row = [name, "/".join(str(r) for r in s["best_rounds"])]
        if not common:
            row.insert(1, ",".join(map(str, s["folds"])))
        for c in cols:
            digits = 2 if c in names else 4
            if c not in s:  # a method run without tuning next to tuned ones (a run of another command)
                row.append("")
                continue
            cell = f"{s[c]['mean']:.{digits}f}"
            if len(s["folds"]) > 1:
                cell += f"±{s[c]['std']:.{digits}f}"
            if common and len(stats) > 1 and s[c]["mean"] == best[c]:
                cell += "*"
            row.append(cell)
        if cis:
            row.append(_interval(cis[name]["mean"][CURVE_METRIC]))
        if tests:
            t = tests[name]
            row += (["(baseline)", "", "", ""] if name == baseline else
                    [f"{t.mean_diff:+.4f}", _interval(cis[name]["diff"], signed=True), _p(t.t_pvalue),
                     _p(t.wilcoxon_pvalue)])
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    conv = conventions or getattr(results, "conventions", None) or Conventions()
    out = [conv.describe(), line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]

    n_folds = len(common)
    if common:
        note = (f"test metrics, mean{'±std over ' + str(n_folds) + ' folds' if n_folds > 1 else ' (1 fold)'}; "
                "* best per column; rounds chosen on validation, per fold")
        left_out = sorted({r.fold for r in results} - set(common))
        if left_out:
            lacking = {f: [n for n, fs in finished.items() if f not in fs] for f in left_out}
            which = (f"fold {_folds_text(common)}, which every method finished, is" if n_folds == 1 else
                     f"folds {_folds_text(common)}, which every method finished, are")
            note += (f"\nonly {which} compared; left out: "
                     + "; ".join(f"fold {f + 1} (not finished by {', '.join(lacking[f])})" for f in left_out))
    else:
        note = ("no fold was finished by every method: each row is the mean over its own folds, so nothing is "
                "marked or tested")
    if "tune_seconds" in cols:
        trials = sorted({n for s in stats.values() for n in s.get("trials", [])})
        note += (f"\ntune s: seconds of the parameter search per fold ({'/'.join(map(str, trials))} trials, "
                 "trial 0 the defaults; a method without a search space has one); train s: its chosen trial's")
    if tests:
        others = [t.n for name, t in tests.items() if name != baseline] or [tests[baseline].n]
        n = str(others[0]) if min(others) == max(others) else f"{min(others)}-{max(others)}"
        note += (f"\ndNDCG@10, p(t), p(W): per-query test NDCG@10 minus {baseline}'s, paired t-test and Wilcoxon "
                 f"signed-rank p-values (two-sided) over the queries pooled across folds (n={n})")
    if cis:
        n_q = sorted({ci.n for c in cis.values() for ci in (c["mean"][CURVE_METRIC],)})
        n_text = str(n_q[0]) if len(n_q) == 1 else f"{n_q[0]}-{n_q[-1]}"
        note += (f"\n95% CI: percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples (seed {BOOTSTRAP_SEED}) of the "
                 f"n={n_text} test queries, drawn within each fold"
                 + (", of the mean over folds and of the paired per-query difference to the baseline"
                    if tests else ", of the mean over folds"))
    return "\n".join(out) + "\n" + note


def _interval(ci: BootstrapCI | None, signed: bool = False) -> str:
    if ci is None or np.isnan(ci.low):
        return "n/a"
    sign = "+" if signed else ""
    return f"[{ci.low:{sign}.4f},{ci.high:{sign}.4f}]"


#: Resamples, level and seed of the bootstrap intervals in the table, the plots and results.json.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_LEVEL = 0.95
BOOTSTRAP_SEED = 0


def bootstrap(results: Sequence[Result], baseline: str | None = None, *, resamples: int = BOOTSTRAP_RESAMPLES,
              level: float = BOOTSTRAP_LEVEL, seed: int = BOOTSTRAP_SEED) -> dict[str, dict[str, Any]]:
    """Per method: ``{"mean": {metric: BootstrapCI}, "diff": BootstrapCI | None}``.

    ``mean``: the interval of each test metric's mean over folds (the table's value), from
    resampling the test queries within each fold (:func:`.stats.bootstrap_ci`). ``diff``
    (with ``baseline``, for the other methods): the interval of the mean per-query NDCG@10
    difference to the baseline over the folds both finished, queries pooled (the table's
    ``dNDCG@10``), resampled within folds. One seed for every method: the resamples draw the
    same queries for all of them (a paired bootstrap).
    """
    by = {(r.method, r.fold): r for r in results}
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r.method for r in results):
        folds = sorted(f for m, f in by if m == name)

        def pooled(method: str, metric: str, fs: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
            vals = [np.asarray(by[(method, f)].test_per_query[metric], dtype=np.float64) for f in fs]
            return (np.concatenate(vals) if vals else np.zeros(0),
                    np.concatenate([np.full(v.size, f) for v, f in zip(vals, fs)]) if vals else np.zeros(0))

        mean = {}
        for m in REPORT_METRICS:
            v, strata = pooled(name, m, folds)
            mean[m] = bootstrap_ci(v, strata, resamples=resamples, level=level, seed=seed, by_stratum=True)
        diff = None
        if baseline is not None and name != baseline:
            both = [f for f in folds if (baseline, f) in by]
            a, strata = pooled(name, CURVE_METRIC, both)
            b, _ = pooled(baseline, CURVE_METRIC, both)
            if a.shape != b.shape:
                raise ValueError(f"{name} and {baseline} have per-query values of different lengths ({a.size} and "
                                 f"{b.size}) on folds {_folds_text(both)}: not the same test queries")
            diff = bootstrap_ci(a - b, strata, resamples=resamples, level=level, seed=seed)
        out[name] = {"mean": mean, "diff": diff}
    return out



def _p(p: float) -> str:
    if np.isnan(p):
        return "n/a"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


#: Private names of the split module that code outside it used (the worker set-up, the run log).
_PRIVATE = dict.fromkeys(("_worker_init", "_die_with_parent", "_log_done"), "boostplug.compare.execution")
#: The modules the split module's code went to.
_HOMES = ("boostplug.compare.protocol", "boostplug.compare.execution")


class _Runner(types.ModuleType):
    """This module, with each moved name a property: reading it reads the name where it lives now
    (a public one with a ``DeprecationWarning``); setting it (a patch) sets it there and in every
    module that imported it from there (runner.run_method must reach execution's)."""


def _moved(name: str, home: str) -> property:
    def get(self: types.ModuleType) -> Any:
        if name in _MOVED:
            warnings.warn(f"boostplug.compare.runner.{name} is deprecated; import it from {home}",
                          DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(home), name)

    def set(self: types.ModuleType, value: Any) -> None:
        current = getattr(importlib.import_module(home), name)
        holders = [importlib.import_module(home),
                   *(m for m in map(importlib.import_module, _HOMES) if vars(m).get(name) is current)]
        for module in dict.fromkeys(holders):
            setattr(module, name, value)

    return property(get, set, doc=f"{home}.{name}")


for _name, _where in {**_MOVED, **_PRIVATE}.items():
    setattr(_Runner, _name, _moved(_name, _where))


def __dir__() -> list[str]:
    return sorted({*globals(), *_MOVED})


sys.modules[__name__].__class__ = _Runner
