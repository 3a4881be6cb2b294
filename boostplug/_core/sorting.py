"""The kernels' stable sort as one numba function: numba's own ``np.argsort`` is built from
several small jitted functions, each compiled (and re-optimised in every caller) on first use, which
costs a kernel's first call about a second (docs/results/first_use/README.md).
:func:`stable_argsort_descending` gives ``np.argsort(-keys, kind="stable")`` without the negated copy.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["stable_argsort_descending"]

_RUN = 20   # insertion-sorted runs (numba's merge sort: insertion sort from 20 items down)


@nb.njit(cache=True)
def stable_argsort_descending(keys: np.ndarray) -> np.ndarray:
    """Indices ordering ``keys`` (finite) by decreasing value, equal keys in input order:
    ``np.argsort(-keys, kind="stable")``. Insertion sort of runs of 20, then bottom-up merges
    between two buffers: no recursion, which numba types twice."""
    n = keys.shape[0]
    r = np.empty(n, dtype=np.int64)
    for i in range(n):      # not np.arange: its implementation is a compile of its own
        r[i] = i
    for lo in range(0, n, _RUN):
        hi = lo + _RUN if lo + _RUN < n else n
        for i in range(lo + 1, hi):
            t = r[i]
            v = keys[t]
            j = i
            while j > lo and v > keys[r[j - 1]]:
                r[j] = r[j - 1]
                j -= 1
            r[j] = t
    if n <= _RUN:
        return r
    ws = np.empty(n, dtype=np.int64)
    width = _RUN
    while width < n:
        src, dst = r, ws
        for lo in range(0, n, 2 * width):
            mid = lo + width if lo + width < n else n
            hi = mid + width if mid + width < n else n
            i, j = lo, mid
            for k in range(lo, hi):     # the right run's key goes first only when strictly greater
                if j < hi and (i >= mid or keys[src[j]] > keys[src[i]]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
        r, ws = dst, src
        width *= 2
    return r
