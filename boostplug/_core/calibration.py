"""Measuring this machine's serial/parallel switch: ``boostplug calibrate``.

:func:`calibrate` times a probe kernel (a pair loop over queries, like the objectives' and the
boosters') serially and in parallel: on one tiny query, what a parallel call costs to start; on a
large input, the serial time per unit of work and the speedup; :func:`store` writes the threshold
where :mod:`.parallel_threshold` reads it for :mod:`.dispatch`.

From the probe's measurements to the threshold: a parallel call pays from the work ``W`` where its
start-up equals the serial time it saves (:func:`crossover`); the machine's threshold is the
default scaled by its ``W`` over the reference CPU's, to the nearest power of two (so the
reference CPU keeps the default, which also holds what the probe cannot see: LightGBM's threads
beside ours, numpy's work between calls), within :data:`SCALE_LIMITS`. A machine whose second
thread speeds the probe up less than :data:`MIN_SPEEDUP` times, or that lets the process run on
one CPU only (its threads can only take turns there), runs every kernel serially.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np

from .dispatch import serial_twin
from .parallel_threshold import (DEFAULT_PARALLEL_MIN_WORK, NEVER, available_cpus, cache_file, machine_key,
                                 read_entries, wait_policy)

__all__ = ["MIN_SPEEDUP", "REFERENCE", "SCALE_LIMITS", "Calibration", "Reference", "calibrate",
           "calibrate_each_wait_policy", "crossover", "store", "threshold_from"]

#: Below this speedup of the parallel probe on large inputs, parallel kernels do not pay.
MIN_SPEEDUP = 1.15
#: The calibrated threshold stays within these multiples of the default (a noisy probe cannot
#: move it further).
SCALE_LIMITS = (0.1, 10.0)


@dataclass(frozen=True)
class Reference:
    """The probe on the CPU the default threshold was measured on, per OpenMP wait policy."""

    cpu: str
    crossover: dict[str, float]   # wait policy -> the work from which a parallel call pays (:func:`crossover`)


#: Measured alone with ``boostplug calibrate`` (docs/results/dispatch_calibration).
REFERENCE = Reference(cpu="rocketlake", crossover={"default": 490.0, "passive": 25_000.0})


def crossover(start_s: float, serial_per_unit_s: float, speedup: float) -> float | None:
    """The work ``W`` where ``start + W u / s = W u`` (a parallel call's start-up against the serial
    time it saves), or ``None`` when the speedup ``s`` is below :data:`MIN_SPEEDUP`."""
    if not speedup >= MIN_SPEEDUP:
        return None
    return max(start_s, 0.0) / (serial_per_unit_s * (1.0 - 1.0 / speedup))


def threshold_from(crossover: float | None, policy: str | None = None) -> int:
    """The threshold for a machine whose parallel probe pays from ``crossover`` (``None``: never),
    under the OpenMP wait ``policy`` (default: this process's)."""
    if crossover is None:
        return NEVER
    lo, hi = SCALE_LIMITS
    ratio = crossover / REFERENCE.crossover[policy or wait_policy()]
    # to the nearest power of two, so that the probe's noise (tens of percent) leaves it in place
    scale = min(max(2.0 ** round(math.log2(ratio)) if ratio > 0 else 0.0, lo), hi)
    return int(DEFAULT_PARALLEL_MIN_WORK * scale)


#: The probe's two inputs: one query of :data:`SMALL_DOCS` documents, whose parallel call costs
#: about its start-up alone, and :data:`LARGE_QUERIES` queries of :data:`LARGE_DOCS`, long enough
#: (about 10 ms serial) for the time per unit of work and the speedup.
SMALL_DOCS = 16
LARGE_QUERIES, LARGE_DOCS = 1024, 64


@dataclass(frozen=True)
class Calibration:
    """One machine's probe: both lines, where they cross, and the threshold that follows."""

    key: str
    threads: int
    start_s: float              # what a parallel call costs more than a serial one on a tiny input
    serial_per_unit_s: float    # serial seconds per unit of work, on the large input
    speedup: float              # serial over parallel time on the large input
    crossover: float | None     # the work from which parallel pays; None: never
    parallel_min_work: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@nb.njit(parallel=True, cache=True, fastmath=False)
def _probe(scores, labels, group_ptr, out):  # pragma: no cover - numba
    """Per query, a logistic over its pairs of different labels (the objectives' pair loop)."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        acc = 0.0
        for i in range(a, b):
            for j in range(i + 1, b):
                if labels[i] != labels[j]:
                    d = scores[i] - scores[j]
                    if labels[i] < labels[j]:
                        d = -d
                    acc += 1.0 / (1.0 + math.exp(d))
        out[q] = acc


def _times(kernels: tuple[Any, ...], args: tuple[Any, ...], repeat: int) -> list[list[float]]:
    """Each kernel's times over ``repeat`` interleaved calls, after one call each."""
    for kernel in kernels:                       # compile (or load), and touch the pages
        kernel(*args)
    times: list[list[float]] = [[] for _ in kernels]
    for _ in range(repeat):
        for k, kernel in enumerate(kernels):
            t0 = time.perf_counter()
            kernel(*args)
            times[k].append(time.perf_counter() - t0)
    return times


def calibrate(repeat: int = 9, seed: int = 0) -> Calibration:
    """Time the probe serial and parallel (``repeat`` interleaved calls; the tiny input five times
    as often) and derive this machine's threshold. Needs more than one numba thread.

    The start-up is the difference of the medians on the tiny input: how long sleeping threads
    take to wake varies from call to call (30-60 us under ``OMP_WAIT_POLICY=PASSIVE`` on one
    idle machine), and a typical call, not the luckiest, is what a kernel pays. The large input
    takes each side's best call (its time varies by what else runs, not by the kernel)."""
    threads = nb.get_num_threads()
    if threads < 2:
        raise ValueError(f"calibrating the parallel switch needs 2 or more numba threads, got {threads} "
                         "(NUMBA_NUM_THREADS); with one thread every kernel runs serially")
    rng = np.random.default_rng(seed)
    n = LARGE_QUERIES * LARGE_DOCS
    scores = rng.standard_normal(n)
    labels = rng.integers(0, 3, n).astype(np.float64)
    kernels = (serial_twin(_probe), _probe)
    small = np.array([0, SMALL_DOCS], dtype=np.int64)
    ser_small, par_small = (float(np.median(t)) for t in _times(kernels, (scores, labels, small, np.empty(1)),
                                                                 5 * repeat))
    large = np.arange(LARGE_QUERIES + 1, dtype=np.int64) * LARGE_DOCS
    ser_large, par_large = (min(t) for t in _times(kernels, (scores, labels, large, np.empty(LARGE_QUERIES)), repeat))
    per_unit = ser_large / (LARGE_QUERIES * LARGE_DOCS * (LARGE_DOCS - 1) // 2)
    start = par_small - ser_small
    speedup = ser_large / par_large
    # on one CPU the threads take turns: a measured speedup there is the other processes' noise
    w = crossover(start, per_unit, speedup) if available_cpus() > 1 else None
    return Calibration(machine_key(), threads, start, per_unit, speedup, w, threshold_from(w))


def calibrate_each_wait_policy(repeat: int = 9) -> list[Calibration]:
    """:func:`calibrate` in a child process per OpenMP wait policy (``OMP_WAIT_POLICY`` unset, then
    ``PASSIVE``: the OpenMP runtime reads it once, when it loads), each with this process's other
    settings (``NUMBA_NUM_THREADS``, ``NUMBA_CPU_NAME``)."""
    import subprocess

    out = []
    for policy in (None, "PASSIVE"):
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        if policy is not None:
            env["OMP_WAIT_POLICY"] = policy
        code = ("import json, sys; from boostplug._core.calibration import calibrate; "
                f"print(json.dumps(calibrate(repeat={int(repeat)}).to_json()))")
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            raise ValueError(lines[-1] if lines else f"the calibration exited with status {done.returncode}")
        out.append(Calibration(**json.loads(done.stdout.strip().splitlines()[-1])))
    return out


def store(cal: Calibration, path: Path | None = None) -> Path:
    """Write ``cal`` under its key, beside other machines' entries; the file written."""
    from .._atomic import write_text

    path = cache_file() if path is None else path
    entries = read_entries(path, warn=False)   # a file that cannot be used is replaced
    entries[cal.key] = cal.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps({"version": 1, "entries": entries}, indent=1, sort_keys=True) + "\n")
    return path

