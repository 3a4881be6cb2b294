"""How many threads boostplug's numba kernels may use during one call: the framework's own count.

LightGBM's ``num_threads`` and XGBoost's ``nthread`` bound the trees' threads; a boostplug
objective called from their training loop runs its kernels under the same bound, so
``num_threads=1`` means one thread for the whole round, and a Dask worker's training (which
the frameworks give the worker's thread count) stays within the worker. The bound is set with
``numba.set_num_threads`` for the call and restored after it: numba's runtime setting, not the
``NUMBA_NUM_THREADS`` environment variable, which numba reads again at every compilation and
refuses to see changed once its threads run.

The BLAS threads of a booster's fit: :mod:`.blas`.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

__all__ = ["limit_threads", "thread_count"]


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
