"""What a comparison compares and the statistics of it: the folds every method finished
(:func:`comparable`), per method the mean and std over folds (:func:`summary`), paired tests
(:func:`significance`) and bootstrap intervals (:func:`bootstrap`) against a baseline. The
table and the files of :mod:`.report` and the figures of :mod:`.plots` read them from here.

A method whose chosen model predicts one value for every test document on some fold
(:func:`.protocol.degenerate`, noted in its runs' ``info``) is degenerate (:func:`degenerate_folds`):
its metrics measure the tie convention, not a ranking, so :func:`comparison` neither tests a difference
of it nor gives an interval of one (nor of any method, when it is the baseline)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .protocol import CURVE_METRIC, Result, reported_metrics
from .stats import PairedTest, bootstrap_ci, paired_tests

__all__ = [
    "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_LEVEL", "BOOTSTRAP_SEED", "summary_columns", "significance", "summary",
    "folds_finished", "common_folds", "comparable", "Comparison", "comparison", "bootstrap", "folds_text",
    "degenerate_folds",
]

#: Resamples, level and seed of the bootstrap intervals in the table, the plots and results.json.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_LEVEL = 0.95
BOOTSTRAP_SEED = 0

def summary_columns(results: Sequence[Result]) -> tuple[str, ...]:
    """The columns of the summary of ``results``: their test metrics, then the training seconds."""
    return (*reported_metrics(results), "seconds")


def significance(results: Sequence[Result], baseline: str, metric: str = CURVE_METRIC) -> dict[str, PairedTest]:
    """Per method: paired tests against ``baseline`` over the per-query test ``metric``
    pooled across the folds both finished (queries paired by fold and position)."""
    base = {r.fold: r.test_per_query[metric] for r in results if r.method == baseline}
    out: dict[str, PairedTest] = {}
    for name in dict.fromkeys(r.method for r in results):
        runs = [r for r in results if r.method == name and r.fold in base]
        out[name] = paired_tests(np.array([v for r in runs for v in r.test_per_query[metric]], dtype=np.float64),
                                 np.array([v for r in runs for v in base[r.fold]], dtype=np.float64))
    return out


def _mean_std(values: Sequence[float]) -> dict[str, float]:
    v = np.asarray(values, dtype=np.float64)
    return {"mean": float(v.mean()), "std": float(v.std())}


def summary(results: Sequence[Result]) -> dict[str, dict[str, Any]]:
    """Per method: mean and std (population, over folds) of each test metric and of
    the training seconds, the chosen rounds and the folds."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r.method for r in results):
        rs = [r for r in results if r.method == name]
        row: dict[str, Any] = {"framework": rs[0].framework, "folds": [r.fold + 1 for r in rs],
                               "best_rounds": [r.best_round for r in rs]}
        for c in summary_columns(rs):
            row[c] = _mean_std([r.seconds if c == "seconds" else r.test[c] for r in rs])
        if any("tuning" in r.info for r in rs):  # --tune: the search's seconds, all trials
            row["tune_seconds"] = _mean_std([r.info.get("tuning", {}).get("seconds", 0.0) for r in rs])
            row["trials"] = [r.info.get("tuning", {}).get("n_trials", 0) for r in rs]
        out[name] = row
    return out


def degenerate_folds(results: Sequence[Result]) -> dict[str, list[int]]:
    """Per degenerate method (in order of appearance): the 1-based folds on which its chosen
    model predicts one value for every test document (``info["degenerate"]``)."""
    flat = folds_finished([r for r in results if r.info.get("degenerate")])
    return {n: [f + 1 for f in folds] for n, folds in flat.items()}


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


@dataclass
class Comparison:
    """What the table and the output files report: ``results`` are those on the ``common``
    folds (every result when no fold is common: each method over its own folds), ``stats``
    their :func:`summary`; ``tests`` (:func:`significance` against the baseline) and ``cis``
    (:func:`bootstrap`) are empty when no fold is common, ``tests`` also without a baseline.
    ``degenerate``: :func:`degenerate_folds` of ``results`` (untested: the module docstring).
    ``tests_by_metric``: the tests of every reported metric (``tests`` is NDCG@10's), for the same methods."""

    common: list[int]
    results: list[Result]
    stats: dict[str, dict[str, Any]]
    tests: dict[str, PairedTest]
    cis: dict[str, dict[str, Any]]
    degenerate: dict[str, list[int]] = field(default_factory=dict)
    tests_by_metric: dict[str, dict[str, PairedTest]] = field(default_factory=dict)


def comparison(results: Sequence[Result], baseline: str | None, *, intervals: bool = True) -> Comparison:
    """The :class:`Comparison` of ``results`` against ``baseline`` (``None``: no tests);
    ``intervals=False``: without the bootstrap intervals (``cis`` empty), which take most of the time."""
    common = common_folds(results)
    compared = comparable(results) if common else list(results)  # nothing common: nothing tested
    stats = summary(compared)
    flat = degenerate_folds(compared)
    tested = bool(common) and baseline in stats and baseline not in flat
    by_metric = {m: {n: t for n, t in significance(compared, baseline, m).items() if n not in flat}
                 for m in reported_metrics(compared)} if tested else {}
    tests = by_metric.get(CURVE_METRIC, {})
    cis = bootstrap(compared, baseline if tests else None) if common and intervals else {}
    for name in cis.keys() & flat.keys():  # no interval of a difference either: it would say what the test does
        cis[name]["diff"] = None
    return Comparison(common, compared, stats, tests, cis, flat, by_metric)


def folds_text(folds: Sequence[int]) -> str:
    """1-based fold numbers, comma-separated."""
    return ",".join(str(f + 1) for f in folds)


def _pooled(by: dict[tuple[str, int], Result], method: str, metric: str,
            folds: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``method``'s per-query ``metric`` on ``folds``, concatenated, and the fold of each query."""
    vals = [np.asarray(by[(method, f)].test_per_query[metric], dtype=np.float64) for f in folds]
    if not vals:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(vals), np.concatenate([np.full(v.size, f) for v, f in zip(vals, folds)])


def bootstrap(results: Sequence[Result], baseline: str | None = None, *, resamples: int = BOOTSTRAP_RESAMPLES,
              level: float = BOOTSTRAP_LEVEL, seed: int = BOOTSTRAP_SEED,
              means: bool = True) -> dict[str, dict[str, Any]]:
    """Per method: ``{"mean": {metric: BootstrapCI}, "diff": BootstrapCI | None}`` (``means=False``: ``mean``
    empty, for the differences alone).

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
        mean = {m: bootstrap_ci(*_pooled(by, name, m, folds), resamples=resamples, level=level, seed=seed,
                                by_stratum=True) for m in (reported_metrics(results) if means else ())}
        diff = None
        if baseline is not None and name != baseline:
            both = [f for f in folds if (baseline, f) in by]
            a, strata = _pooled(by, name, CURVE_METRIC, both)
            b, _ = _pooled(by, baseline, CURVE_METRIC, both)
            if a.shape != b.shape:
                raise ValueError(f"{name} and {baseline} have per-query values of different lengths ({a.size} and "
                                 f"{b.size}) on folds {folds_text(both)}: not the same test queries")
            diff = bootstrap_ci(a - b, strata, resamples=resamples, level=level, seed=seed)
        out[name] = {"mean": mean, "diff": diff}
    return out
