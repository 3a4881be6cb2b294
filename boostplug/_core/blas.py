"""The BLAS threads of a booster's fit (:func:`fit_blas`): at most numba's thread count, and one
from the first parallel numba kernel on (:func:`parallel_kernel_starts`, said by
:func:`boostplug._core.dispatch.kernel_for`): OpenBLAS's idle threads spin after every call and
took the cores that kernel's threads needed (docs/studies/boosters.md), while a fit whose kernels
all run serially keeps its BLAS threads for the span test's projections.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

__all__ = ["fit_blas", "parallel_kernel_starts"]

_blas_controller: Any = None
_fit = threading.local()     # .on_parallel: what fit_blas does at its first parallel kernel


def _blas() -> Any:
    global _blas_controller
    from threadpoolctl import ThreadpoolController

    if _blas_controller is None:   # looking the libraries up costs milliseconds: once per process
        _blas_controller = ThreadpoolController()
    return _blas_controller.select(user_api="blas")


@contextlib.contextmanager
def fit_blas() -> Iterator[None]:
    """Run a fit with at most numba's thread count in every loaded BLAS library, and one thread from
    the first parallel numba kernel of the fit on (:func:`parallel_kernel_starts`); restore the
    libraries' counts after."""
    import numba

    blas = _blas()
    counts = [int(i["num_threads"]) for i in blas.info()]
    with contextlib.ExitStack() as stack:
        if counts and numba.get_num_threads() < min(counts):
            stack.enter_context(blas.limit(limits=numba.get_num_threads()))
        outer = getattr(_fit, "on_parallel", None)

        def to_one() -> None:
            _fit.on_parallel = None            # once per fit
            if counts and min(counts) > 1:
                stack.enter_context(blas.limit(limits=1))

        _fit.on_parallel = to_one
        try:
            yield
        finally:
            _fit.on_parallel = outer


def parallel_kernel_starts() -> None:
    """Said by :func:`boostplug._core.dispatch.kernel_for` before a parallel kernel: inside
    :func:`fit_blas`, BLAS drops to one thread for the rest of the fit."""
    on_parallel: Callable[[], None] | None = getattr(_fit, "on_parallel", None)
    if on_parallel is not None:
        on_parallel()
