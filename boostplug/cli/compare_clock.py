"""``boostplug compare``'s time, before the study and during it.

Before the first training, one line says what the study will take. A probe (:func:`probe`) trains every
method with runs left on the first fold, in this process, with the study's settings and threads but
without the search: ``r1`` rounds twice (the first loads or compiles the kernels and
is not counted) and ``r2`` rounds once. A training of the study's rounds then takes the line through the
two times (:func:`training_seconds`), a run its trials' trainings, and the study its runs over the parallel
slots (:func:`study_seconds`): ``--jobs`` as far as the cores run them at once, or the threads of the
cluster's workers as its scheduler reports them (:func:`slots`). The probe's trainings are not reused (they
train fewer rounds than the study's and search nothing); its time is on the line. It runs when its rounds
are at most :data:`PROBE_SHARE` of the study's, so a small study is not probed. On a cluster it times this
machine, not the workers. The trials a ``--tune`` search prunes stop early: the line counts every trial
whole, so it errs long when many are pruned.

During the study, as each method's first run ends: the rest, every run at its method's measured pace (the
probe's until one ended) over the slots working, less the time gone (:func:`clock`).
"""

from __future__ import annotations

import io
import sys
import time
from typing import Any, Callable, Sequence

from ..compare import Failure, Result, run
from ..compare.execution import threads_per_job
from ..compare.methods import get_method
from .compare_options import CompareOptions
from .errors import UsageError

__all__ = ["PROBE_SHARE", "training_seconds", "study_seconds", "slots", "probe", "clock"]

#: The largest share of the study's rounds (all its trainings') that the probe trains; more: no probe.
PROBE_SHARE = 0.05


def training_seconds(timed: dict[int, float], rounds: int) -> float:
    """The seconds of one training of ``rounds`` rounds on the line through the probe's two times,
    ``{rounds: seconds}`` (a falling line, timing noise or a method that trains its own rounds, is flat)."""
    (r1, t1), (r2, t2) = sorted(timed.items())
    per_round = max(0.0, (t2 - t1) / (r2 - r1))
    return max(t1 + per_round * (rounds - r1), per_round * rounds)


def study_seconds(runs: Sequence[float], slots: int, elapsed: float = 0.0) -> float:
    """The seconds left of a study whose runs take ``runs`` seconds each on ``slots`` parallel slots (no
    more than there are runs), ``elapsed`` seconds after it started: their sum over the slots, at least
    the longest run, less the time gone."""
    if not runs:
        return 0.0
    return max(0.0, max(sum(runs) / min(slots, len(runs)), max(runs)) - elapsed)


def slots(jobs: int, threads: int, client: Any = None, scheduler: Any = None) -> tuple[int, str]:
    """The runs that train at once and how to say it: ``jobs`` as far as the cores run them with ``threads``
    each, or on ``client``'s cluster its workers' threads as the scheduler reports them; a ``ValueError``
    naming what to do when it reports none."""
    if client is None:  # more jobs than the cores run at once: the cores
        return min(jobs, threads_per_job(threads)), f"--jobs {jobs}"
    workers = client.scheduler_info()["workers"]
    n = sum(int(w.get("nthreads", 0)) for w in workers.values())
    if not n:
        raise ValueError(f"--scheduler {scheduler}: the scheduler reports {len(workers)} worker(s) and 0 threads, "
                         f"nothing would train; start workers with threads: dask worker {client.scheduler.address} "
                         "--nthreads 1")
    return n, f"the cluster's {len(workers)} worker(s), {n} thread(s) in all as its scheduler reports"


def probe(options: CompareOptions, folds: Sequence[tuple[int, Any]], methods: Sequence[str],
          trainings: int) -> tuple[dict[str, float], float, tuple[int, int]]:
    """Per method of ``methods``: the seconds of one of the study's trainings by the module's probe, the
    probe's seconds and its two round counts, a tenth of the study's rounds (at least 2) and a third of that;
    no method when the probe would train more than :data:`PROBE_SHARE` of the ``trainings``' rounds. A
    :class:`.errors.UsageError` naming a method the probe could not train."""
    record, start, timed = options.record, time.perf_counter(), {}  # type: ignore[var-annotated]
    r2 = max(2, -(-record.rounds // 10))
    r1 = max(1, r2 // 3)
    if not methods or len(methods) * (2 * r1 + r2) > PROBE_SHARE * trainings * record.rounds:
        return {}, 0.0, (r1, r2)
    for rounds in (r1, r1, r2):  # the first r1: the kernels loaded (its times are replaced by the second's)
        marks = [time.perf_counter()]  # one run after the other, in the order of methods
        done = run(methods, folds[:1], rounds=rounds, metric=record.early_stopping_metric, seed=record.seed,
                   tree_params=options.tree_params, threads=record.threads, conventions=options.conventions,
                   runner=options.runner, stream=io.StringIO(), on_run=lambda _: marks.append(time.perf_counter()))
        if done.interrupted:
            raise KeyboardInterrupt
        for f in done.failures:
            raise UsageError(f"{f.method} cannot train on this data: {rounds} rounds on fold {f.fold + 1} (the probe "
                             f"of the study's time) failed: {f.error}; leave it out of --methods or change its settings")
        for m, a, b in zip(methods, marks, marks[1:]):
            timed.setdefault(m, {})[rounds] = b - a
    return {m: training_seconds(t, record.rounds) for m, t in timed.items()}, time.perf_counter() - start, (r1, r2)


def clock(options: CompareOptions, folds: Sequence[tuple[int, Any]], finished: set[tuple[str, int]],
          client: Any = None) -> Callable[[Result | Failure], None]:
    """Say the study's trainings (``--tune``) and its expected time, before it starts; returns what says the
    rest as each method's first run ends (``finished``: the runs of an earlier study, kept)."""
    record, methods = options.record, options.methods
    left = {m: sum((m, i) not in finished for i, _ in folds) for m in methods}
    one = [m for m in methods if record.tune and options.runner is None and not get_method(m).search_space()]
    trials = {m: 1 if m in one or not record.tune else record.tune for m in methods}
    todo, total = sum(left[m] * trials[m] for m in methods), len(folds) * sum(trials.values())
    if record.tune:
        print(f"boostplug compare: --tune {record.tune}: " + (f"{todo} of {total} trainings left" if finished else
              f"{total} trainings") + f" of up to {record.rounds} rounds ({len(methods)} method(s) x {len(folds)} "
              f"fold(s) x {record.tune} trials" + (f"; {', '.join(one)}: one per fold, nothing to search)" if one
                                                   else ")"), file=sys.stderr)
    n, where = slots(record.jobs, record.threads, client, options.scheduler)
    cost, took, (r1, r2) = probe(options, folds, [m for m in methods if left[m]], todo)
    per_run = {m: trials[m] * c for m, c in cost.items()}
    if per_run:
        expected = study_seconds([per_run[m] for m in methods for _ in range(left[m])], n)
        print(f"boostplug compare: expected time about {_duration(expected)} on {n} parallel slot(s) ({where}), "
              f"from a probe of {r1} and {r2} rounds per method on fold {folds[0][0] + 1} (it took {took:.1f} s, "
              "not reused)", file=sys.stderr)
    paces: dict[str, list[float]] = {}
    start = time.perf_counter()

    def on_run(r: Result | Failure) -> None:
        left[r.method] -= 1
        if isinstance(r, Failure):
            return
        first = r.method not in paces
        paces.setdefault(r.method, []).append(r.info.get("tuning", {}).get("seconds", r.seconds))
        pace = {**per_run, **{m: sum(p) / len(p) for m, p in paces.items()}}
        if not first or not (record.tune or per_run) or any(left[m] and m not in pace for m in methods):
            return
        working = sum(client.nthreads().values()) or n if client is not None else n  # the workers there now
        runs = [s for p in paces.values() for s in p] + [pace[m] for m in methods for _ in range(left[m])]
        rest = study_seconds(runs, working, time.perf_counter() - start)
        if any(left.values()):  # the last runs' first: nothing left to say
            print(f"boostplug compare: {r.method}'s first run took {_duration(paces[r.method][0])}; the study about "
                  f"{_duration(rest)} more on {working} slot(s)", file=sys.stderr)
    return on_run


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"
