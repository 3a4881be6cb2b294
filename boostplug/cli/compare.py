"""``boostplug compare``: train ranking methods under one protocol and tabulate them.

The command's jobs, one module each: its options and help texts (:mod:`.compare_parser`), the
``--config`` file (:mod:`.compare_config`), the options checked into one run record
(:mod:`.compare_options`), the study's time before and during it (:mod:`.compare_clock`), the signals
(:mod:`.signals`) and the ``--out`` folder (:mod:`.out_folder`); here, the run itself."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ..compare import (CLICK_METHODS, DEFAULT_METHODS, METHODS, Failure, Result, Results, clicks, format_table,
                       load_folds, run)
from ..compare.budget import check_budget
from ..compare.cluster import connect, prepare
from ..compare.data import data_files, file_digests, fold_count, layout_note
from ..compare.methods import check_run
from ..compare.outdir import OutDir
from ..compare.plugins import load_plugins, registered_here
from ..compare.report import method_legend, verdict, warnings_note, write_outputs
from ..compare.resume import ResumeError, check_same, earlier_provenance, load_earlier
from . import compare_clock
from .errors import UsageError, debug, usage_errors
from .compare_config import resolve_options
from .compare_options import CompareOptions, compare_options, list_methods, twins
from .compare_parser import add_parser as _add_parser
from .out_folder import prepare_out
from .signals import Signals, interrupt_signals


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    return _add_parser(subparsers, run_compare)


def run_compare(args: argparse.Namespace) -> int:
    values = resolve_options(args)
    for spec in values.get("config_imports", ()):  # a config file is code: say what it runs, before it runs
        print(f"boostplug compare: --config {values['config']} imports {spec} (runs it as Python code)",
              file=sys.stderr)
    if values["imports"]:
        with usage_errors():
            load_plugins(values["imports"])
    with usage_errors(ValueError, TypeError):  # the click options: the runner of --clicks, None without
        runner = clicks.runner_from_args(args)
    if values["methods"].strip().lower() == "list":
        print(list_methods(METHODS, DEFAULT_METHODS) if runner is None else list_methods(CLICK_METHODS, ()))
        return 0
    options = compare_options(values, runner)
    for note in twins(options.methods):  # a hyphen or an underscore apart: say which is which
        print(f"boostplug compare: {note}", file=sys.stderr)
    with interrupt_signals() as signals:
        out = prepare_out(options.out, overwrite=options.overwrite or options.resume) if options.out is not None else None
        if out is not None and not (options.plots or values["no_plots"]):  # every other file is written
            print('boostplug compare: the plots are skipped (no matplotlib: pip install "boostplug[plot]")', file=sys.stderr)
        try:
            with contextlib.ExitStack() as stack:
                client = None
                if options.scheduler is not None:  # before the data: a cluster not reached or a worker refused
                    with usage_errors(ValueError, ImportError):  # (local:N's credentials need cryptography)
                        client = stack.enter_context(connect(options.scheduler))
                        prepare(client)
                signals.check()  # a Ctrl-C while the cluster started, which a callback of Dask's may have swallowed
                code = _compare_on(options, out, signals, client)
        finally:
            if out is not None:
                out.release()
                out.remove_if_unused()  # an error or Ctrl-C before any file: no folder left behind
    return 128 + signals.received[0] if signals.received else code  # 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP


def _compare_on(options: CompareOptions, out: OutDir | None, signals: Signals, client: Any) -> int:
    record, runner, methods = options.record, options.runner, options.methods
    try:
        note = layout_note(record.data, record.layout)  # a LETOR folder as downloaded: its Fold folders
        if note:
            print(f"boostplug compare: {note}", file=sys.stderr)
            record = replace(record, layout="folds")
        folds = load_folds(record.data, n_folds=record.kfold, select=record.folds, seed=record.seed,
                           layout=record.layout)
    except OSError as e:  # FileNotFoundError with our message, or the system's about a path under --data
        raise UsageError(str(e) if e.filename is None else f"--data {record.data}: {e.filename}: {e.strerror}") from e
    except ValueError as e:  # what the readers say about the files (no qid, bad line, bad fold, ...)
        raise UsageError(" ".join(str(e).split())) from e
    with usage_errors():  # and the settings against the data and each other (run() again, for its callers)
        options.conventions.check_grades(folds, record.early_stopping_metric)
        check_run(methods if runner is None else (), folds, options.tree_params)
    if runner is not None:  # a click log's keys against the features, before any run
        with usage_errors():
            for note in runner.check_log(folds):
                print(f"boostplug compare: {note}", file=sys.stderr)
    data_sha256 = file_digests(data_files(record.data))  # what was read, before any training
    if runner is not None and runner.log is not None:
        data_sha256.update(file_digests([Path(runner.log)]))
    record = replace(record, data_sha256=data_sha256)
    n_folds = fold_count(record.data, n_folds=record.kfold, layout=record.layout)  # the data's, not those run
    done: list[Result] = []
    if options.resume:
        with usage_errors(ResumeError):
            earlier = load_earlier(options.out)
            check_same(earlier, settings=record.settings(), methods=methods, conventions=options.conventions,
                       data_sha256=record.data_sha256, folds=folds, n_folds=n_folds)
        done = earlier["runs"]
        record = replace(record, earlier_runs=earlier_provenance(earlier))
        print(f"boostplug compare: resuming {options.out}: {len(done)} run(s) finished earlier are kept",
              file=sys.stderr)
    finished = {(r.method, r.fold) for r in done}
    with usage_errors():  # before any training: rounds or trials whose records cannot fit in memory
        check_budget(rounds=record.rounds, tune=record.tune, folds=folds,
                     runs=[(m, i) for i, _ in folds for m in methods if (m, i) not in finished],
                     **({} if runner is None else {"method": runner.compare_method}))
    tuned = f", {record.tune} trial(s) per method and fold" if record.tune else ""
    where = f"jobs {record.jobs}" if client is None else "on a Dask cluster (--scheduler {})".format(
        f"local:{options.scheduler}" if isinstance(options.scheduler, int) else options.scheduler)
    print(f"boostplug compare: {len(methods)} method(s) x {len(folds)} fold(s) of {record.data}, up to "
          f"{record.rounds} rounds, round chosen on validation {record.early_stopping_metric}{tuned}, "
          f"{where}", file=sys.stderr)
    if runner is not None:
        print(f"boostplug compare: {runner.describe()}", file=sys.stderr)
    with usage_errors():  # a scheduler without threads; a method the probe cannot train: before any training
        clock = compare_clock.clock(options, folds, finished, client)
    keep = _keeper(out, options, record, done, clock)
    results = run(methods, folds, rounds=record.rounds, metric=record.early_stopping_metric,
                  tree_params=options.tree_params, seed=record.seed, jobs=record.jobs, threads=record.threads,
                  conventions=options.conventions,
                  tune=record.tune, done=done, on_trained=signals.hold,  # from here a signal waits for the writing
                  runner=runner, isolated=in_workers(), client=client,
                  progress=options.progress and sys.stderr.isatty(),
                  log=options.progress and not sys.stderr.isatty(), on_run=lambda r: (keep(r), signals.check()))
    failed = 1 if results.failures else 0
    # the cluster stopped the study (said in one line), else a KeyboardInterrupt not from our handlers: Ctrl-C
    stopped = 1 if (results.cluster or {}).get("stopped") else 128 + signal.SIGINT
    if not results:
        report_failures(results.failures, None)
        print("boostplug compare: no method finished", file=sys.stderr)
        return stopped if results.interrupted else 1
    record = replace(record, cluster=results.cluster)
    baseline = _baseline(options, results)
    print(format_table(results, baseline, wide=options.wide))
    print()
    print(verdict(results, baseline, options.alpha, n_folds=n_folds))
    legend = method_legend(list(dict.fromkeys(r.method for r in results)), METHODS if runner is None else CLICK_METHODS)
    for block in (legend, warnings_note(results)):
        if block:
            print()
            print(block)
    written = None
    try:
        if out is not None:
            out.write(lambda folder: write_outputs(folder, results, baseline, record, plots=options.plots))
            written = out.path
            print(f"results written to {out.path}", file=sys.stderr)
    finally:  # failures are reported even when writing fails (an OSError: one line from boostplug.cli.main)
        report_failures(results.failures, written)
        if signals.received[signals.trained:] and not results.interrupted:
            kept = "written first" if written is not None else "tabulated first"
            print(f"boostplug compare: {signal.Signals(signals.received[signals.trained]).name} arrived after "
                  f"training; the results were {kept}", file=sys.stderr)
    sys.stdout.flush()  # the hints come last on a terminal, after the table
    if out is None:
        print("boostplug compare: plots and CSVs: add --out DIR", file=sys.stderr)
    if record.data == "example":
        print("boostplug compare: the same on your own data, fairly: boostplug compare --data PATH --tune 20\n"
              "  (--tune searches each method's own parameters alike, the built-ins' included: the fair protocol)",
              file=sys.stderr)
    return stopped if results.interrupted else failed


def _baseline(options: CompareOptions, results: Sequence[Result]) -> str:
    return options.baseline if options.baseline in {r.method for r in results} else results[0].method


def _keeper(out: OutDir | None, options: CompareOptions, record: Any, done: Sequence[Result],
            then: Callable[[Result | Failure], None]) -> Callable[[Result | Failure], None]:
    """What writes each run to ``--out`` as it ends (a failed one with its reason, beside the finished
    runs), as an interrupted study's set of files, then calls ``then``: a study stopped at any point,
    SIGKILL included, leaves every finished run where ``--resume`` reads it."""
    runs, failures = list(done), []

    def keep(outcome: Result | Failure) -> None:
        (failures if isinstance(outcome, Failure) else runs).append(outcome)
        if out is not None and runs:
            now = Results(runs, interrupted=True, failures=failures, methods=options.methods,
                          conventions=options.conventions)
            with contextlib.suppress(OSError):  # (a full disk): written with the next run, or at the end, said there
                out.write(lambda folder: write_outputs(folder, now, _baseline(options, now), record, plots=False))
        then(outcome)
    return keep


#: Train in worker processes at every ``--jobs`` (see :func:`in_workers`); the command's tests that
#: reach into its training from their own process turn it off.
IN_WORKERS = True


def in_workers() -> bool:
    """Whether the runs train in worker processes also with ``--jobs 1``: a signal then ends the
    command within seconds, even inside a compiled kernel that never returns. Not when this
    process holds objectives a worker would not (a script registered its own, then called the
    command): ``--jobs 1`` trains here then, as documented for that use."""
    return IN_WORKERS and not registered_here()


def report_failures(failures: Sequence[Failure], out: Path | None) -> None:
    """One line per method that failed (folds with the same error together) on stderr; the
    tracebacks with ``BOOSTPLUG_DEBUG=1``, else where to find them."""
    if not failures:
        return
    groups: dict[tuple[str, str], list[int]] = {}
    for f in failures:
        if debug():
            print(f.traceback, file=sys.stderr, end="")
        groups.setdefault((f.method, f.error), []).append(f.fold + 1)
    for (method, error), folds in groups.items():
        print(f"boostplug compare: {method} failed on fold {','.join(map(str, folds))}: {error}", file=sys.stderr)
    if not debug():
        where = f" (they are in {out / 'results.json'})" if out is not None else ""
        print(f"boostplug compare: the other runs are kept; BOOSTPLUG_DEBUG=1 prints the tracebacks{where}",
              file=sys.stderr)
