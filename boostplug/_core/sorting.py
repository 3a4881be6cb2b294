"""Sorts for the kernels, each one numba function: numba's own ``np.sort`` and ``np.argsort``
are built from about ten small jitted functions, each compiled (and re-optimised in every caller)
on first use, which costs a kernel's first call about a second per sort kind
(docs/results/first_use/README.md). These give the same results as numba's:

* :func:`sorted_descending`: a copy of finite values in decreasing order (the values of
  ``np.sort(v)[::-1]``), through :func:`stable_argsort_descending`;
* :func:`quick_argsort`: ``np.argsort(keys)`` (numba's quicksort, the same order of equal keys);
* :func:`stable_argsort_descending`: ``np.argsort(-keys, kind="stable")`` (numba's merge sort in
  decreasing order: no negated copy, one recursive function instead of numba's four).

numba's cache does not see changes in other files: after editing a function here, clear the
``__pycache__`` of the kernel modules that call it.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["quick_argsort", "sorted_descending", "stable_argsort_descending"]

_SMALL_QUICKSORT = 15   # numba's quicksort: insertion sort from high - low < 15
_SMALL_MERGESORT = 20   # numba's merge sort: insertion sort from 20 items down
_MAX_STACK = 100        # pending partitions (the smaller side is sorted first: log2(n) at most)


@nb.njit(cache=True, inline="always")
def _ranges(n: int) -> tuple[np.ndarray, int]:
    """The quicksort's stack of ranges still to sort (``low, high`` pairs, both included), holding
    the whole ``0..n-1``, and its height 1."""
    stack = np.empty(2 * _MAX_STACK, dtype=np.int64)
    stack[0] = 0
    stack[1] = n - 1
    return stack, np.int64(1)      # not a literal 1: _pop would be compiled for Literal[int](1) too


@nb.njit(cache=True, inline="always")
def _pop(stack: np.ndarray, top: int) -> tuple[int, int, int]:
    """The stack's height less one, and the ``low, high`` it pops."""
    top -= 1
    return top, stack[2 * top], stack[2 * top + 1]


@nb.njit(cache=True, inline="always")
def _push_larger(stack: np.ndarray, top: int, low: int, i: int, high: int) -> tuple[int, int, int]:
    """After a partition of ``low..high`` at ``i``: the larger side waits on the stack (numba's
    order), the smaller one is sorted next. Returns the height and that side's ``low, high``."""
    if high - i > i - low:
        if high > i:
            stack[2 * top] = i + 1
            stack[2 * top + 1] = high
            top += 1
        return top, low, i - 1
    if i > low:
        stack[2 * top] = low
        stack[2 * top + 1] = i - 1
        top += 1
    return top, i + 1, high


@nb.njit(cache=True)
def _before(x: float, y: float) -> bool:
    """numba's float order (``lt_floats``): ``x < y``, NaN after every number."""
    return x < y or (np.isnan(y) and not np.isnan(x))


@nb.njit(cache=True)
def quick_argsort(keys: np.ndarray) -> np.ndarray:
    """Indices sorting ``keys`` ascending, NaN last: numba's ``np.argsort(keys)`` step for step
    (equal keys end in the same order)."""
    n = keys.shape[0]
    r = np.empty(n, dtype=np.int64)
    for i in range(n):      # not np.arange: its implementation is a compile of its own
        r[i] = i
    if n < 2:
        return r
    stack, top = _ranges(n)
    while top > 0:
        top, low, high = _pop(stack, top)
        while high - low >= _SMALL_QUICKSORT:
            mid = (low + high) >> 1
            if _before(keys[r[mid]], keys[r[low]]):
                r[low], r[mid] = r[mid], r[low]
            if _before(keys[r[high]], keys[r[mid]]):
                r[high], r[mid] = r[mid], r[high]
            if _before(keys[r[mid]], keys[r[low]]):
                r[low], r[mid] = r[mid], r[low]
            pivot = keys[r[mid]]
            r[high], r[mid] = r[mid], r[high]
            i = low
            j = high - 1
            while True:
                while i < high and _before(keys[r[i]], pivot):
                    i += 1
                while j >= low and _before(pivot, keys[r[j]]):
                    j -= 1
                if i >= j:
                    break
                r[i], r[j] = r[j], r[i]
                i += 1
                j -= 1
            r[i], r[high] = r[high], r[i]
            top, low, high = _push_larger(stack, top, low, i, high)
        for i in range(low + 1, high + 1):
            t = r[i]
            v = keys[t]
            j = i
            while j > low and _before(v, keys[r[j - 1]]):
                r[j] = r[j - 1]
                j -= 1
            r[j] = t
    return r


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
