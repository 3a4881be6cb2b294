"""Every method on every fold under the protocol of :mod:`.protocol` (in parallel processes with
``jobs > 1``), and the table of the results."""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from .conventions import Conventions
from .data import Fold, example_split
from .methods import check_tree_params, get_method
from .protocol import CURVE_METRIC, REPORT_METRICS, Result, choose_round, metric_curve, run_method
from .stats import BootstrapCI, PairedTest, bootstrap_ci, paired_tests

__all__ = [
    "REPORT_METRICS", "CURVE_METRIC", "Result", "Results", "Failure", "example_split", "metric_curve", "choose_round",
    "run_method",
    "run", "threads_per_job", "max_parallel", "check_parallel", "significance", "summary", "folds_finished", "common_folds", "comparable",
    "format_table", "bootstrap", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_LEVEL", "BOOTSTRAP_SEED",
]


def threads_per_job(jobs: int, cores: int | None = None) -> int:
    """``cores // jobs`` (at least 1): the threads each parallel job may use."""
    c = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, c // max(1, jobs))


def max_parallel(cores: int | None = None) -> int:
    """The largest ``jobs`` and ``threads`` accepted: 4 x the cores (at least 4). More only slows
    training down, and far more crashes the frameworks (LightGBM segfaults with 99999 threads,
    libgomp aborts with 40000)."""
    c = cores if cores is not None else (os.cpu_count() or 1)
    return 4 * max(1, c)


def check_parallel(jobs: int, threads: int | None, cores: int | None = None) -> None:
    """``ValueError`` naming the value unless ``1 <= jobs`` and ``1 <= threads`` (``None``: by
    cores) are integers of at most :func:`max_parallel`."""
    limit = max_parallel(cores)
    c = cores if cores is not None else (os.cpu_count() or 1)
    for name, value in (("jobs", jobs), ("threads", threads)):
        if value is None and name == "threads":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        if not 1 <= int(value) <= limit:
            raise ValueError(f"{name} must be between 1 and {limit} (4 x the {c} cores: more only slows training "
                             f"and far more crashes LightGBM), got {int(value)}")


def _worker_init(parent: int) -> None:
    """A worker never outlives the process that started it: the parent stops it (Ctrl-C,
    SIGTERM and SIGHUP are the parent's to handle, so a terminal's signal to the whole group
    does not kill the runs behind the parent's back), the kernel kills it when the parent
    dies (Linux: PR_SET_PDEATHSIG), and elsewhere a thread exits when the parent is gone."""
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="boostplug-parent-watch", daemon=True).start()


def _die_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass
class Failure:
    """A method that raised on one fold: the error in one line (``Type: message``) and its traceback."""

    method: str
    fold: int
    error: str
    traceback: str = field(repr=False, default="")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _failure(name: str, fold: int, exc: BaseException) -> Failure:
    text = "".join(traceback.format_exception(exc))  # with a worker's own traceback (its __cause__)
    # one line: XGBoost appends its C++ stack trace to the message; the whole of it is in ``traceback``
    message = " ".join(str(exc).split("Stack trace:")[0].split())
    if len(message) > 300:
        message = message[:297] + "..."
    return Failure(name, fold, f"{type(exc).__name__}: {message}", text)


def _attempt(name: str, fold_index: int, fold: Fold, kwargs: dict[str, Any], progress: bool,
             stream: TextIO) -> Result | Failure:
    """One run; an exception (not Ctrl-C) becomes a :class:`Failure` so that the other runs go on."""
    train, vali, test = fold
    try:
        return run_method(name, train, vali, test, fold=fold_index, progress=progress, stream=stream, **kwargs)
    except Exception as e:
        return _failure(name, fold_index, e)


def _job(name: str, fold_index: int, fold: Fold, kwargs: dict[str, Any]) -> Result | Failure:
    return _attempt(name, fold_index, fold, kwargs, False, sys.stderr)


class Results(list):
    """The list of :class:`Result` that :func:`run` returns; ``interrupted`` is True after Ctrl-C,
    ``failures`` lists the runs that raised (:class:`Failure`), ``methods`` the methods asked,
    ``conventions`` the metric conventions of every value in it."""

    def __init__(self, items: Sequence[Result] = (), *, interrupted: bool = False,
                 failures: Sequence[Failure] = (), methods: Sequence[str] = (),
                 conventions: Conventions | None = None) -> None:
        super().__init__(items)
        self.conventions = conventions or Conventions()
        self.interrupted = interrupted
        self.failures = list(failures)
        self.methods = list(methods) or list(dict.fromkeys(r.method for r in self))  # as asked, in order


def run(methods: Sequence[str], folds: Sequence[tuple[int, Fold]], *, rounds: int, metric: str = "ndcg@10",
        tree_params: dict[str, Any] | None = None, seed: int = 0, jobs: int = 1, threads: int | None = None,
        progress: bool = False, log: bool = False, stream: TextIO = sys.stderr, tune: int = 0,
        conventions: Conventions | None = None, done: Sequence[Result] = ()) -> Results:
    """Every method on every ``(fold_index, (train, vali, test))``, every metric under
    ``conventions`` (:mod:`.conventions`; default the library's).

    ``jobs > 1`` runs (method, fold) pairs in that many spawned processes, each with
    ``threads`` threads (default :func:`threads_per_job`). ``progress``: a bar per run
    (serial) or a line per finished run (parallel); ``log``: a line per finished run. Ctrl-C keeps the results
    of the runs that finished; a run that raises is recorded in ``failures`` and the others go on.
    Results come back ordered by fold, then method. ``tune > 0``: each (method, fold) first searches
    the method's parameters with that many trials (:mod:`.tuning`; a worker runs its own study).
    ``done``: runs finished earlier (:mod:`.resume`); their (method, fold) pairs are not trained
    again and they come back with the new ones.
    """
    for name in methods:
        get_method(name)  # fail on a bad name, setting or tree parameter before any training
    check_tree_params(tree_params or {})
    check_parallel(jobs, threads)
    if isinstance(tune, bool) or not isinstance(tune, (int, np.integer)) or tune < 0:
        raise ValueError(f"tune must be an integer >= 0 (trials per method and fold), got {tune!r}")
    if tune:
        from .tuning import require_optuna

        require_optuna()
    if conventions is not None and not isinstance(conventions, Conventions):
        raise TypeError(f"conventions must be a boostplug.compare.Conventions, got {type(conventions).__name__}")
    conv = conventions or Conventions()
    n_threads = threads if threads is not None else threads_per_job(jobs)
    kwargs = {"rounds": rounds, "metric": metric, "tree_params": tree_params, "seed": seed, "threads": n_threads,
              "tune": int(tune), "conventions": conv}
    finished = {(r.method, r.fold) for r in done}
    tasks = [(name, i, fold) for i, fold in folds for name in methods if (name, i) not in finished]
    results: list[Result] = []
    failures: list[Failure] = []
    interrupted = False

    def record(outcome: Result | Failure, lines: bool, bar: bool = False) -> None:
        """Keep a finished run; ``lines``: log it in a line, ``bar``: a progress bar may be open."""
        done = len(results) + len(failures) + 1
        if isinstance(outcome, Failure):
            failures.append(outcome)
            if lines or bar:
                newline = "\n" if bar else ""
                stream.write(f"{newline}  [{done}/{len(tasks)}] {outcome.method} fold {outcome.fold + 1}: "
                             f"failed: {outcome.error}\n")
                stream.flush()
        else:
            results.append(outcome)
            if lines:
                _log_done(outcome, done, len(tasks), stream)

    try:
        if jobs == 1:
            for name, i, fold in tasks:
                record(_attempt(name, i, fold, kwargs, progress, stream), lines=log, bar=progress)
        else:
            _run_parallel(tasks, kwargs, jobs, lambda outcome: record(outcome, lines=progress or log))
    except KeyboardInterrupt:
        interrupted = True
        stream.write(f"\ninterrupted: reporting the {len(results)} finished run(s)\n")
    order = {n: k for k, n in enumerate(methods)}
    results += [r for r in done if r.method in order]
    return Results(sorted(results, key=lambda r: (r.fold, order[r.method])), interrupted=interrupted,
                   failures=sorted(failures, key=lambda f: (f.fold, order[f.method])), methods=methods,
                   conventions=conv)



def _log_done(r: Result, done: int, total: int, stream: TextIO) -> None:
    tuning = r.info.get("tuning")
    tuned = f", {tuning['n_trials']} trials in {tuning['seconds']:.1f} s" if tuning else ""
    stream.write(f"  [{done}/{total}] {r.method} fold {r.fold + 1}: round {r.best_round}/{r.rounds_trained}, "
                 f"test NDCG@10 {r.test['ndcg@10']:.4f}, {r.seconds:.1f} s{tuned}\n")
    stream.flush()


def _run_parallel(tasks: list[tuple[str, int, Fold]], kwargs: dict[str, Any], jobs: int,
                  record: Callable[[Result | Failure], None]) -> None:
    import multiprocessing

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init, initargs=(os.getpid(),))
    pending: dict[Future, tuple[str, int]] = {pool.submit(_job, n, i, f, kwargs): (n, i) for n, i, f in tasks}

    def outcome(fut: Future, name: str, i: int) -> Result | Failure:
        # the worker turns an error of the run into a Failure; what is left here is the pool's own
        # trouble (a worker that died: BrokenProcessPool, for this run and every one after it)
        exc = fut.exception()
        return _failure(name, i, exc) if exc is not None else fut.result()

    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                name, i = pending.pop(fut)
                record(outcome(fut, name, i))
    except BaseException:
        # Ctrl-C: keep the runs that finished meanwhile, as the serial path does, stop the
        # others, and let the interrupt go on to run(). A future the pool failed (a worker
        # killed by the same signal) is not a finished run.
        for fut in list(pending):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                name, i = pending.pop(fut)
                record(outcome(fut, name, i))
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued runs and end the running ones now (shutdown alone waits for them)."""
    # The worker processes and the pool's manager thread must be taken before shutdown(), which
    # sets pool._processes to None (Python 3.9+); private attributes, hence the defensive getattr.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():  # stuck where SIGTERM does not reach it
            proc.kill()
            proc.join(timeout=10)
    if manager is not None:
        manager.join(timeout=10)  # it sees the workers end, fails their futures and reaps them


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
