"""The work from which boostplug's kernels run in parallel on this machine, as
:mod:`boostplug._core.dispatch` loads it at import.

The default, :data:`DEFAULT_PARALLEL_MIN_WORK`, was measured on one CPU (:data:`REFERENCE`). Where a
parallel call costs more to start, or the second thread adds less (two hardware threads of one
core counted as two CPUs), the right threshold is higher; lower where threads start quickly.
``boostplug calibrate`` (:mod:`boostplug._core.calibration`) measures a probe kernel and stores
the machine's threshold in ``boostplug/dispatch.json`` in the user's cache folder, keyed by
:func:`machine_key`: numba's CPU name, the CPUs, numba's thread count and how idle OpenMP threads
wait. :func:`stored_threshold` reads this machine's entry; ``BOOSTPLUG_PARALLEL_MIN_WORK``
overrides it. Serial and parallel kernels give the same bits: the threshold changes speed only.

From the probe's measurements to the threshold: a parallel call pays from the work ``W`` where its
start-up equals the serial time it saves (:func:`crossover`); the machine's threshold is the
default scaled by its ``W`` over the reference CPU's, to the nearest power of two (so the
reference CPU keeps the default, which also holds what the probe cannot see: LightGBM's threads
beside ours, numpy's work between calls), within :data:`SCALE_LIMITS`. A machine whose second
thread speeds the probe up less than :data:`MIN_SPEEDUP` times runs every kernel serially.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_PARALLEL_MIN_WORK", "ENV_VAR", "MIN_SPEEDUP", "NEVER", "REFERENCE", "SCALE_LIMITS",
           "available_cpus", "cache_file", "cpu_name", "crossover", "machine_key", "parse_threshold",
           "read_entries", "stored_threshold", "threshold_from", "wait_policy"]

#: The threshold measured on :data:`REFERENCE`'s CPU (docs/results/objectives_notes/README.md).
DEFAULT_PARALLEL_MIN_WORK = 5_000_000
#: A threshold no call reaches: every kernel runs serially.
NEVER = 2**62
#: The environment variable that sets the threshold (an integer, or ``never``), over any calibration.
ENV_VAR = "BOOSTPLUG_PARALLEL_MIN_WORK"
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


def cpu_name() -> str:
    """The CPU numba compiles for (``NUMBA_CPU_NAME``, else the host's)."""
    import llvmlite.binding as llvm
    import numba as nb

    return nb.config.CPU_NAME or llvm.get_host_cpu_name()


def wait_policy() -> str:
    """How idle OpenMP threads wait in this process (``OMP_WAIT_POLICY``): ``passive`` (they sleep,
    and a parallel call wakes them: tens of microseconds), else ``default`` (they spin a while)."""
    return "passive" if os.environ.get("OMP_WAIT_POLICY", "").strip().lower() == "passive" else "default"


def machine_key(threads: int | None = None) -> str:
    """What a calibration holds for: numba's CPU name, the CPUs, numba's thread count and how idle
    OpenMP threads wait."""
    import numba as nb

    t = nb.config.NUMBA_NUM_THREADS if threads is None else threads
    return f"{cpu_name()}|cpus={available_cpus()}|threads={t}|wait={wait_policy()}"


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cache_file() -> Path:
    """``boostplug/dispatch.json`` in the user's cache folder (``XDG_CACHE_HOME``, ``~/.cache``)."""
    from .._numba_cache import user_cache_base

    return user_cache_base() / "boostplug" / "dispatch.json"


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

def read_entries(path: Path) -> dict[str, Any]:
    """The entries of the cache file ``path`` by key (none if it is missing or broken)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}

def parse_threshold(value: str) -> int:
    """``BOOSTPLUG_PARALLEL_MIN_WORK``'s value: a non-negative integer, or ``never``."""
    text = value.strip().lower()
    if text == "never":
        return NEVER
    try:
        n = int(text.replace("_", ""))
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"{ENV_VAR}={value!r}: expected a non-negative integer (work units) or 'never'")
    return n


def stored_threshold(path: Path | None = None) -> tuple[int, str]:
    """This machine's threshold and where it comes from: ``BOOSTPLUG_PARALLEL_MIN_WORK``, else the
    calibration stored for :func:`machine_key`, else :data:`DEFAULT_PARALLEL_MIN_WORK`."""
    env = os.environ.get(ENV_VAR)
    if env is not None and env.strip():
        return parse_threshold(env), ENV_VAR
    path = cache_file() if path is None else path
    entries = read_entries(path)
    entry = entries.get(machine_key()) if entries else None   # no file: no key to work out
    if isinstance(entry, dict):
        value = entry.get("parallel_min_work")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value, str(path)
    return DEFAULT_PARALLEL_MIN_WORK, "default"
