"""Numba kernel dispatch shared by the objectives, and the contract's names under their old home.

The objective contract (declarations, the :class:`Loss` base class, the conventions every
objective follows) lives in :mod:`._contract`; ``HESSIAN_FLOOR``, ``NO_INFO_HESSIAN``,
``floor_hessian``, ``check_params`` and ``PreparedObjective`` are importable from here too.
"""

from __future__ import annotations

import types
from typing import Any, Callable

import numba as nb

from .._validation import show
from ._contract import HESSIAN_FLOOR, NO_INFO_HESSIAN, PreparedObjective, check_params, floor_hessian

#: Work (documents for the O(n L) kernels of qbrank/mpboost, document pairs for
#: ndcg_boost's O(n_q^2) kernels) from which the per-round kernels run in parallel over
#: queries; below it they run serially (same per-query code and order: identical
#: results). A parallel call on a small input can stall for milliseconds waiting for a
#: busy core, so calls run in parallel only when their serial time is some 20 ms
#: (measurements: docs/results/objectives_notes/README.md).
PARALLEL_MIN_DOCS = 100_000
PARALLEL_MIN_PAIRS = 5_000_000

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "floor_hessian", "PARALLEL_MIN_DOCS", "PARALLEL_MIN_PAIRS", "PreparedObjective", "check_params",
           "show", "kernel_for"]

_SERIAL: dict[Any, Callable[..., Any]] = {}


def _serial_twin(kernel: Any) -> Callable[..., Any]:
    """``kernel`` (a ``parallel=True`` numba dispatcher) compiled without ``parallel``
    (``prange`` runs as ``range``), cached on disk under its own name."""
    twin = _SERIAL.get(kernel)
    if twin is None:
        fn = kernel.py_func
        copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__,
                                  fn.__closure__)
        # numba's disk cache is indexed by qualified name and line, not by the parallel flag:
        # a distinct name keeps the serial and parallel machine code apart.
        copy.__qualname__ = fn.__qualname__ + "_serial"
        copy.__module__ = fn.__module__
        copy.__doc__ = fn.__doc__
        options = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "nopython")}
        twin = _SERIAL[kernel] = nb.njit(cache=True, **options)(copy)
    return twin


def kernel_for(kernel: Any, work: int, threshold: int) -> Callable[..., Any]:
    """The parallel ``kernel`` when ``work >= threshold`` and numba has more than one
    thread, else its serial twin (see :data:`PARALLEL_MIN_DOCS`)."""
    if work >= threshold and nb.get_num_threads() > 1:
        return kernel
    return _serial_twin(kernel)
