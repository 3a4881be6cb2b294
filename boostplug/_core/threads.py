"""How many threads boostplug's numba kernels may use during one call: the framework's own count.

LightGBM's ``num_threads`` and XGBoost's ``nthread`` bound the trees' threads; a boostplug
objective called from their training loop runs its kernels under the same bound, so
``num_threads=1`` means one thread for the whole round, and a Dask worker's training (which
the frameworks give the worker's thread count) stays within the worker. The bound is set with
``numba.set_num_threads`` for the call and restored after it: numba's runtime setting, not the
``NUMBA_NUM_THREADS`` environment variable, which numba reads again at every compilation and
refuses to see changed once its threads run.

:func:`fit_blas` bounds the BLAS threads of a booster's fit the same way, by numba's count, and
to one from the first parallel numba kernel on: OpenBLAS's idle threads spin after every call and
took the cores that kernel's threads needed (docs/studies/boosters.md),
while a fit whose kernels all run serially keeps its BLAS threads for the span test's projections.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

__all__ = ["limit_threads", "fit_blas", "parallel_kernel_starts", "thread_count"]

_blas_controller: Any = None
_fit = threading.local()     # .on_parallel: what fit_blas does at its first parallel kernel


def thread_count(value: Any) -> int | None:
    """A framework's thread setting as a positive bound, or ``None`` for "the default" (LightGBM's
    and XGBoost's 0 or a negative value: every core)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


@contextlib.contextmanager
def limit_threads(n: int | None) -> Iterator[None]:
    """Run the block with at most ``n`` numba threads (no bound for ``None``), then restore the
    count the calling thread had."""
    if n is None:
        yield
        return
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


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
