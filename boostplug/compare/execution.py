"""Every (method, fold) run of a comparison: in this process or in worker processes (that never
outlive the parent, and that a signal ends wherever they are), Ctrl-C and failures that keep the
finished runs, and runs finished earlier (:mod:`.resume`) that are not trained again."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from .._core.threads import run_limit
from . import _worker_guard, run_warnings
from .budget import check_budget
from .conventions import Conventions
from .data import Fold
from .plugins import load_plugins, loaded_plugins
from .methods import check_run, get_method
from .protocol import Result, run_method
from .tuning import require_optuna

__all__ = ["Failure", "Results", "run", "threads_per_job", "max_parallel", "check_parallel"]

#: Seconds the workers get to end after SIGTERM once a run is stopped; then SIGKILL.
STOP_SECONDS = 1.0


def _cores(cores: int | None) -> int:
    return cores if cores is not None else (os.cpu_count() or 1)


def threads_per_job(jobs: int, cores: int | None = None) -> int:
    """``cores // jobs`` (at least 1): the threads each parallel job may use."""
    return max(1, _cores(cores) // max(1, jobs))


def max_parallel(cores: int | None = None) -> int:
    """The largest ``jobs`` and ``threads`` accepted: 4 x the cores (at least 4). More only slows
    training down, and far more crashes the frameworks (LightGBM segfaults with 99999 threads,
    libgomp aborts with 40000)."""
    return 4 * max(1, _cores(cores))


def check_parallel(jobs: int, threads: int | None, cores: int | None = None) -> None:
    """``ValueError`` naming the value unless ``1 <= jobs`` and ``1 <= threads`` (``None``: by
    cores) are integers of at most :func:`max_parallel`."""
    limit = max_parallel(cores)
    for name, value in [("jobs", jobs)] + ([("threads", threads)] if threads is not None else []):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        if not 1 <= int(value) <= limit:
            raise ValueError(f"{name} must be between 1 and {limit} (4 x the {_cores(cores)} cores: more only slows "
                             f"training and far more crashes LightGBM), got {int(value)}")


def _worker_init(parent: int, plugins: Sequence[str] = ()) -> None:
    """A worker never outlives the process that started it: the parent stops it (Ctrl-C,
    SIGTERM and SIGHUP are the parent's to handle, so a terminal's signal to the whole group
    does not kill the runs behind the parent's back), and it dies with the parent
    (:func:`._worker_guard.die_with_parent`, asked again after :mod:`._worker_guard`'s early request).
    ``plugins``: the parent's ``--import`` modules, so that the objectives they register exist here too."""
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    _worker_guard.die_with_parent(parent)
    if plugins:
        load_plugins(plugins)


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


def _attempt(name: str, fold_index: int, fold: Fold, kwargs: dict[str, Any], progress: bool = False,
             stream: TextIO | None = None) -> Result | Failure:
    """One run (``stream``: of its progress bar, default this process's stderr); an exception (not
    Ctrl-C) becomes a :class:`Failure` so that the other runs go on. The warnings it raised go with it,
    on every path (here, a ``--jobs`` worker, a Dask worker): ``info["warnings"]`` (:mod:`.run_warnings`)."""
    train, vali, test = fold
    rest = dict(kwargs)
    one = rest.pop("runner", None) or run_method
    try:  # the run within its threads: every framework call, kernel and JAX computation (_core.threads.run_limit)
        with run_limit(rest.get("threads") or None), run_warnings.kept() as caught:
            outcome = one(name, train, vali, test, fold=fold_index, progress=progress, stream=stream or sys.stderr,
                          **rest)
    except Exception as e:
        return _failure(name, fold_index, e)
    outcome.info = {**outcome.info, **({"warnings": caught} if caught else {})}
    return outcome


class Results(list):
    """The list of :class:`Result` that :func:`run` returns; ``interrupted`` is True after Ctrl-C,
    ``failures`` lists the runs that raised (:class:`Failure`), ``methods`` the methods asked,
    ``conventions`` the metric conventions of every value in it, ``cluster`` the record of a
    Dask cluster's runs."""

    def __init__(self, items: Sequence[Result] = (), *, interrupted: bool = False,
                 failures: Sequence[Failure] = (), methods: Sequence[str] = (),
                 conventions: Conventions | None = None, cluster: dict[str, Any] | None = None) -> None:
        super().__init__(items)
        self.cluster = cluster  # where a cluster's runs trained (.cluster.run_tasks), None without one
        self.conventions = conventions or Conventions()
        self.interrupted = interrupted
        self.failures = list(failures)
        self.methods = list(methods) or list(dict.fromkeys(r.method for r in self))  # as asked, in order


def run(methods: Sequence[str], folds: Sequence[tuple[int, Fold]], *, rounds: int, metric: str = "ndcg@10",
        tree_params: dict[str, Any] | None = None, seed: int = 0, jobs: int = 1, threads: int | None = None,
        progress: bool = False, log: bool = False, stream: TextIO = sys.stderr, tune: int = 0,
        conventions: Conventions | None = None, done: Sequence[Result] = (),
        on_trained: Callable[[], None] | None = None, runner: Any = None, isolated: bool = False,
        client: Any = None, on_run: Callable[[Result | Failure], None] = lambda outcome: None) -> Results:
    """Every method on every ``(fold_index, (train, vali, test))``, every metric under
    ``conventions`` (:mod:`.conventions`; default the library's).

    ``jobs > 1`` runs (method, fold) pairs in that many spawned processes, each with
    ``threads`` threads (default :func:`threads_per_job`). ``progress``: a bar per run
    (serial) or a line per finished run (parallel); ``log``: a line per finished run. Ctrl-C keeps the results
    of the runs that finished; a run that raises is recorded in ``failures`` and the others go on.
    Results come back ordered by fold, then method. ``tune > 0``: each (method, fold) first searches
    the method's parameters with that many trials (:mod:`.tuning`; a worker runs its own study).
    ``done``: runs finished earlier (:mod:`.resume`); their (method, fold) pairs are not trained
    again and they come back with the new ones. ``on_trained``: called the moment training ends
    (all runs done, or stopped by Ctrl-C), before ``run`` returns: from then on an interrupt
    would lose runs held only in memory (``boostplug compare`` stops letting its signals raise).
    ``on_run``: called with each run's :class:`Result` or :class:`Failure` as it ends.
    Rounds or trials whose records cannot fit in the memory available are a ``ValueError`` before
    any training (:mod:`.budget`). ``runner``: what runs one (method, fold) instead of
    :func:`.protocol.run_method` (its arguments;
    picklable for ``jobs > 1``), whose ``check(name)`` checks each name first (the click protocol's
    :class:`.clicks.ClickRunner`). ``isolated``: ``jobs=1`` trains in one spawned worker process
    too, where a signal ends a run at once, even inside a compiled kernel that never returns to
    Python (in this process such a kernel never lets a signal handler run); its progress bars go
    to the worker's stderr. Without it, ``jobs=1`` trains in this process: a debugger reaches
    the training, and objectives registered only here train. ``client``: a ``distributed.Client``
    whose cluster runs each (method, fold) as one task (:mod:`.cluster`; ``jobs`` must be 1 then,
    ``threads`` default 1), with the same results as here.
    """
    for name in methods:
        # fail on a bad name, setting or tree parameter before any training
        (get_method if runner is None else runner.check)(name)
    check_run(methods if runner is None else (), folds, tree_params or {})
    check_parallel(jobs, threads)
    if client is not None and jobs != 1:
        raise ValueError(f"give jobs (local processes, {jobs}) or client (a Dask cluster), not both")
    if isinstance(tune, bool) or not isinstance(tune, (int, np.integer)) or tune < 0:
        raise ValueError(f"tune must be an integer >= 0 (trials per method and fold), got {tune!r}")
    if tune:
        require_optuna()
    if conventions is not None and not isinstance(conventions, Conventions):
        raise TypeError(f"conventions must be a boostplug.compare.Conventions, got {type(conventions).__name__}")
    conv = conventions or Conventions()
    n_threads = threads if threads is not None else 1 if client is not None else threads_per_job(jobs)
    kwargs = {"rounds": rounds, "metric": metric, "tree_params": tree_params, "seed": seed, "threads": n_threads,
              "tune": int(tune), "conventions": conv, **({} if runner is None else {"runner": runner})}
    finished = {(r.method, r.fold) for r in done}
    tasks = [(name, i, fold) for i, fold in folds for name in methods if (name, i) not in finished]
    check_budget(rounds=rounds, tune=int(tune), folds=folds, runs=[(name, i) for name, i, _ in tasks],
                 **({} if runner is None else {"method": runner.compare_method}))
    results: list[Result] = []
    failures: list[Failure] = []
    interrupted = False
    cluster: dict[str, Any] = {}

    bars = progress and jobs == 1 and client is None  # one run at a time: a bar per run, else a line per finished run
    lines = log or (progress and not bars)

    def record(outcome: Result | Failure) -> None:
        """Keep a finished run, and log it in a line (a failure below the bar too)."""
        done = len(results) + len(failures) + 1
        failed = isinstance(outcome, Failure)
        (failures if failed else results).append(outcome)
        if lines or (bars and failed):
            _log_done(outcome, done, len(tasks), stream, newline=bars and failed)
        on_run(outcome)

    trained = on_trained or (lambda: None)
    try:
        if client is not None:
            from .cluster import run_tasks

            interrupted = run_tasks(client, tasks, kwargs, _attempt, _failure, record,  # True: said why
                                    lambda text: stream.write(f"boostplug compare: {text}\n"), cluster)
        elif jobs == 1 and not isolated:
            for name, i, fold in tasks:
                record(_attempt(name, i, fold, kwargs, progress, stream))
        else:
            _run_parallel(tasks, kwargs, jobs, record, bars)
        trained()  # inside the try: an interrupt up to here is one during training
    except KeyboardInterrupt:
        trained()
        interrupted = True
        stream.write(f"\ninterrupted: reporting the {len(results)} finished run(s)\n")
    order = {n: k for k, n in enumerate(methods)}
    results += [r for r in done if r.method in order]
    return Results(sorted(results, key=lambda r: (r.fold, order[r.method])), interrupted=interrupted,
                   failures=sorted(failures, key=lambda f: (f.fold, order[f.method])), methods=methods,
                   conventions=conv, cluster=cluster or None)


def _log_done(r: Result | Failure, done: int, total: int, stream: TextIO, newline: bool = False) -> None:
    """A line for a finished run (its round, test NDCG@10 and seconds) or a failed one (its error);
    ``newline``: first end the line of a progress bar."""
    if isinstance(r, Failure):
        what = f"failed: {r.error}"
    else:
        tuning = r.info.get("tuning")
        tuned = f", {tuning['n_trials']} trials in {tuning['seconds']:.1f} s" if tuning else ""
        what = (f"round {r.best_round}/{r.rounds_trained}, test NDCG@10 {r.test['ndcg@10']:.4f}, "
                f"{r.seconds:.1f} s{tuned}")
    start = "\n" if newline else ""
    stream.write(f"{start}  [{done}/{total}] {r.method} fold {r.fold + 1}: {what}\n")
    stream.flush()


def _run_parallel(tasks: list[tuple[str, int, Fold]], kwargs: dict[str, Any], jobs: int,
                  record: Callable[[Result | Failure], None], bars: bool = False) -> None:
    """The runs in ``jobs`` spawned worker processes; ``bars``: each draws its progress bar."""
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init, initargs=(os.getpid(), loaded_plugins()))
    pending: dict[Future, tuple[str, int]] = {}

    def finish(fut: Future) -> None:
        # the worker turns an error of the run into a Failure; what is left here is the pool's own
        # trouble (a worker that died: BrokenProcessPool, for this run and every one after it)
        name, i = pending.pop(fut)
        exc = fut.exception()
        record(_failure(name, i, exc) if exc is not None else fut.result())

    try:
        with _worker_guard.exported(os.getpid()):  # the workers start in submit()
            for n, i, f in tasks:
                pending[pool.submit(_attempt, n, i, f, kwargs, bars)] = (n, i)
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                finish(fut)
    except BaseException:
        # Ctrl-C: keep the runs that finished meanwhile, as the serial path does, stop the
        # others, and let the interrupt go on to run(). A future the pool failed (a worker
        # killed by the same signal) is not a finished run.
        for fut in list(pending):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                finish(fut)
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
        proc.terminate()  # ends a worker anywhere, a compiled kernel included (SIGTERM's default action)
    deadline = time.monotonic() + STOP_SECONDS
    for proc in procs:
        proc.join(timeout=max(0.0, deadline - time.monotonic()))
        if proc.is_alive():  # a handler of SIGTERM in the user's code, which a compiled kernel never lets run
            proc.kill()
            proc.join(timeout=10)
    if manager is not None:
        manager.join(timeout=10)  # it sees the workers end, fails their futures and reaps them
