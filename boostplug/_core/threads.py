"""How many threads boostplug's numba kernels may use during one call: the framework's own count.

LightGBM's ``num_threads`` and XGBoost's ``nthread`` bound the trees' threads; a boostplug
objective called from their training loop runs its kernels under the same bound, so
``num_threads=1`` means one thread for the whole round, and a Dask worker's training (which
the frameworks give the worker's thread count) stays within the worker. The bound is set with
``numba.set_num_threads`` for the call and restored after it: numba's runtime setting, not the
``NUMBA_NUM_THREADS`` environment variable, which numba reads again at every compilation and
refuses to see changed once its threads run.

:func:`run_limit` bounds one whole run (``boostplug compare``'s: in this process, a ``--jobs``
worker or a Dask task) in every pool it may start: numba's (as above), OpenMP's and BLAS's
(threadpoolctl's limits on the libraries loaded, ``OMP_NUM_THREADS`` for one loaded during the
run) and XLA's (``PJRT_NPROC``, which JAX's CPU client reads once, when the process first
computes with JAX), so that no framework call inside the run needs a thread count of its own.

The BLAS threads of a booster's fit: :mod:`.blas`.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

__all__ = ["limit_threads", "thread_count", "run_limit", "RUN_LIMIT_ENV"]

#: What a library reads once, when it loads or starts its pool: OpenMP's runtime, JAX's CPU client (XLA's threads).
RUN_LIMIT_ENV = ("OMP_NUM_THREADS", "PJRT_NPROC")


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


@contextlib.contextmanager
def run_limit(n: int | None) -> Iterator[None]:
    """Run the block (one run) with at most ``n`` threads in numba, in the OpenMP and BLAS libraries loaded
    (threadpoolctl), and in those that read :data:`RUN_LIMIT_ENV` when they start during the block (no bound for
    ``None``); then restore the counts and the environment. XLA's pool is started once per process: JAX that
    computed in this process before the block keeps its threads (compare's ``--jobs`` workers start fresh), and
    JAX that starts in the block keeps ``n`` after it, as does an OpenMP runtime first loaded in it."""
    if n is None:
        yield
        return
    from unittest import mock  # patch.dict: the environment restored as it was before the block

    from threadpoolctl import threadpool_limits

    # numba first: starting its OpenMP pool sets OpenMP's count
    with mock.patch.dict(os.environ, dict.fromkeys(RUN_LIMIT_ENV, str(n))), limit_threads(n), \
            threadpool_limits(limits=n):
        yield
