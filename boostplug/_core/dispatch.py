"""Serial or parallel: the one policy deciding how a ``parallel=True`` numba kernel runs.

Every kernel family (objectives, metrics, boosters) asks :func:`kernel_for` for the kernel
to call, with an estimate of the call's work in one unit: about one visit of a pair loop,
a few nanoseconds of serial time. Each caller estimates the work of its kernel beside the
call. Below :data:`PARALLEL_MIN_WORK` (or with one numba thread) the kernel's serial twin
runs: the same code compiled without ``parallel`` (``prange`` runs as ``range``), so both
give identical results. Inside a booster's round (:func:`booster_round`) work counts
:data:`ROUND_WORK_FACTOR` times. Tests force either path by setting ``PARALLEL_MIN_WORK`` here.

The threshold is this machine's: ``BOOSTPLUG_PARALLEL_MIN_WORK`` if set, else the one
``boostplug calibrate`` measured and cached for this CPU and thread count
(:mod:`boostplug._core.parallel_threshold`), else the default measured on one CPU.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

import numba as nb

from .blas import parallel_kernel_starts
from .class_kernels import cached_like, renamed_copy
from .parallel_threshold import stored_threshold

__all__ = ["PARALLEL_MIN_WORK", "ROUND_WORK_FACTOR", "THRESHOLD_SOURCE", "booster_round", "kernel_for",
           "serial_twin"]

#: Work from which kernels run in parallel. Below it a parallel call costs more than it saves: on a
#: small input it can stall waiting for a busy core, and its idle threads slow the numpy work
#: between calls (docs/results/objectives_notes/README.md, docs/results/README.md). By default
#: ``parallel_threshold.DEFAULT_PARALLEL_MIN_WORK``, 5 million; :data:`THRESHOLD_SOURCE` says where it came from.
PARALLEL_MIN_WORK, THRESHOLD_SOURCE = stored_threshold()

#: Inside a booster's round a kernel goes parallel from a fifth of the work: no framework's threads
#: compete with numba's there, and the rounds' main kernels on OHSUMED and MQ2008 ran faster in
#: parallel, on idle cores and on busy ones (docs/studies/performance.md, docs/results/boosters_speed/README.md).
ROUND_WORK_FACTOR = 5

_SERIAL: dict[Any, Callable[..., Any]] = {}
_scope = threading.local()        # .factor: the work factor of the calling thread's kernels


@contextlib.contextmanager
def booster_round() -> Iterator[None]:
    """Run one round of a booster's fit: its kernels' work counts :data:`ROUND_WORK_FACTOR` times."""
    before = getattr(_scope, "factor", 1)
    _scope.factor = ROUND_WORK_FACTOR
    try:
        yield
    finally:
        _scope.factor = before


def serial_twin(kernel: Any) -> Callable[..., Any]:
    """``kernel`` (a ``parallel=True`` numba dispatcher) compiled without ``parallel``
    (``prange`` runs as ``range``), cached on disk under its own name when ``kernel`` is."""
    twin = _SERIAL.get(kernel)
    if twin is None:
        copy = renamed_copy(kernel.py_func, "_serial", kernel.py_func.__closure__)
        options = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "nopython")}
        twin = _SERIAL[kernel] = nb.njit(**options)(copy)
        cached_like(kernel, twin)  # numba's cache, a class kernel's digest cache, or none, as the kernel's
    return twin


def kernel_for(kernel: Any, work: int) -> Callable[..., Any]:
    """The parallel ``kernel`` when ``work`` (times :data:`ROUND_WORK_FACTOR` in a booster's round)
    reaches ``PARALLEL_MIN_WORK`` and numba has more than one thread, else its serial twin."""
    if work * getattr(_scope, "factor", 1) >= PARALLEL_MIN_WORK and nb.get_num_threads() > 1:
        parallel_kernel_starts()      # a booster's fit gives its BLAS threads' cores to this kernel
        return kernel
    return serial_twin(kernel)
