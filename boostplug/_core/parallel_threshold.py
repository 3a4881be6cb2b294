"""The work from which boostplug's kernels run in parallel on this machine, as
:mod:`boostplug._core.dispatch` loads it at import.

The default, :data:`DEFAULT_PARALLEL_MIN_WORK`, was measured on one CPU
(:data:`boostplug._core.calibration.REFERENCE`). Where a
parallel call costs more to start, or the second thread adds less (two hardware threads of one
core counted as two CPUs), the right threshold is higher; lower where threads start quickly.
``boostplug calibrate`` (:mod:`boostplug._core.calibration`) measures a probe kernel and stores
the machine's threshold in ``boostplug/dispatch.json`` in the user's cache folder, keyed by
:func:`machine_key`: numba's CPU name, the CPUs, numba's thread count and how idle OpenMP threads
wait. :func:`stored_threshold` reads this machine's entry; ``BOOSTPLUG_PARALLEL_MIN_WORK``
overrides it. Serial and parallel kernels give the same bits: the threshold changes speed only.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_PARALLEL_MIN_WORK", "ENV_VAR", "MAX_CACHE_FILE_BYTES", "NEVER", "available_cpus", "cache_file",
           "cpu_name", "machine_key", "parse_threshold", "read_entries", "stored_threshold", "wait_policy"]

#: The threshold measured on :data:`~.calibration.REFERENCE`'s CPU (docs/results/objectives_notes/README.md).
DEFAULT_PARALLEL_MIN_WORK = 5_000_000
#: A threshold no call reaches: every kernel runs serially.
NEVER = 2**62
#: The environment variable that sets the threshold (an integer, or ``never``), over any calibration.
ENV_VAR = "BOOSTPLUG_PARALLEL_MIN_WORK"
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
    from .._cache_folders import user_cache_base

    return user_cache_base() / "boostplug" / "dispatch.json"


#: The largest cache file read (one machine's entry takes about 300 bytes): a larger one is ignored.
MAX_CACHE_FILE_BYTES = 1 << 20


def read_entries(path: Path, *, warn: bool = True) -> dict[str, Any]:
    """The entries of the cache file ``path`` by key: none if it is missing, and none with one
    ``RuntimeWarning`` naming it if it cannot be used. It is read at import, so it is opened only
    when it is a regular file (a FIFO would block the import, a link to ``/dev/zero`` fill the
    memory) of at most :data:`MAX_CACHE_FILE_BYTES`, and any failure to read or parse it (a
    ``RecursionError`` of deeply nested brackets included) is a warning (``warn=False``: not even
    that), never an error."""
    try:
        data = json.loads(_read_small_file(path, MAX_CACHE_FILE_BYTES))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as e:
        if warn:
            _ignored(path, str(e) if isinstance(e, _Unusable) else f"{type(e).__name__}: {e}")
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        if warn:
            _ignored(path, "it holds no table of entries")
        return {}
    return entries


class _Unusable(OSError):
    """A file that is not opened: not a regular file, or too large."""


def _read_small_file(path: Path, limit: int) -> str:
    """The text of ``path`` when it is a regular file (links followed) of at most ``limit`` bytes;
    ``_Unusable`` saying what it is otherwise, before it is opened (and checked again once open, in
    case it was replaced meanwhile: opened non-blocking, so a FIFO put there cannot block)."""
    from .._validation import special_kind

    kind = special_kind(path)
    if kind is not None:
        raise _Unusable(f"it is {kind}, not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Unusable("it is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise _Unusable(f"it is larger than {limit:,} bytes")
    return data.decode("utf-8")


def _ignored(path: Path, why: str) -> None:
    import warnings

    warnings.warn(f"boostplug: ignored {path} ({why}); the kernels' parallel threshold is the default (run "
                  "'boostplug calibrate' to measure this machine's again)", RuntimeWarning, stacklevel=3)


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
    calibration stored for :func:`machine_key`, else :data:`DEFAULT_PARALLEL_MIN_WORK`, or
    :data:`NEVER` for a process allowed on one CPU only (its threads could only take turns there)."""
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
    return (NEVER, "one-CPU") if available_cpus() < 2 else (DEFAULT_PARALLEL_MIN_WORK, "default")
