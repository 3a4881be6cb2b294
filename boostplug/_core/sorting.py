"""Sorts for the kernels, each one numba function: numba's own ``np.sort`` and ``np.argsort``
are built from about ten small jitted functions, each compiled (and re-optimised in every caller)
on first use, which costs a kernel's first call about a second per sort kind
(docs/results/first_use/README.md). These give the same results as numba's:

* :func:`sorted_descending`: a copy of finite values in decreasing order (the values of
  ``np.sort(v)[::-1]``), through :func:`stable_argsort_descending`;
* :func:`stable_argsort_descending`: ``np.argsort(-keys, kind="stable")`` (numba's merge sort in
  decreasing order: no negated copy, one recursive function instead of numba's four).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["sorted_descending", "stable_argsort_descending"]

_SMALL_MERGESORT = 20   # numba's merge sort: insertion sort from 20 items down


@nb.njit(cache=True)
def _merge_sort_down(r: np.ndarray, keys: np.ndarray, ws: np.ndarray) -> None:
    """Sort the indices ``r`` by decreasing ``keys[r]``, equal keys in their order in ``r``:
    numba's ``argmergesort_inner`` (halves, insertion sort from 20 items down) with the order
    reversed, so no negated copy of the keys. ``ws``: room for half of ``r``."""
    n = r.shape[0]
    if n > _SMALL_MERGESORT:
        mid = n // 2
        _merge_sort_down(r[:mid], keys, ws)
        _merge_sort_down(r[mid:], keys, ws)
        for i in range(mid):
            ws[i] = r[i]
        i = 0
        j = mid
        k = 0
        while i < mid and j < n:
            if keys[r[j]] > keys[ws[i]]:
                r[k] = r[j]
                j += 1
            else:
                r[k] = ws[i]
                i += 1
            k += 1
        while i < mid:
            r[k] = ws[i]
            i += 1
            k += 1
    else:
        for i in range(1, n):
            t = r[i]
            v = keys[t]
            j = i
            while j > 0 and v > keys[r[j - 1]]:
                r[j] = r[j - 1]
                j -= 1
            r[j] = t


@nb.njit(cache=True)
def stable_argsort_descending(keys: np.ndarray) -> np.ndarray:
    """Indices ordering ``keys`` (finite) by decreasing value, equal keys in input order:
    ``np.argsort(-keys, kind="stable")``."""
    n = keys.shape[0]
    r = np.empty(n, dtype=np.int64)
    for i in range(n):      # not np.arange: its implementation is a compile of its own
        r[i] = i
    _merge_sort_down(r, keys, np.empty(n // 2, dtype=np.int64))
    return r


@nb.njit(cache=True)
def sorted_descending(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` (finite: no NaN) sorted in decreasing order."""
    order = stable_argsort_descending(values)
    out = np.empty_like(values)
    for i in range(values.shape[0]):
        out[i] = values[order[i]]
    return out
