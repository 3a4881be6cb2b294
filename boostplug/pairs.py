"""Critical pairs: the preference pairs that graded labels imply within each query.

A *critical pair* ``(i, j)`` is two rows of the same query with ``labels[i] > labels[j]``
(``i`` is preferred). Used by every pairwise algorithm (QBRank, MPBoost,
RankBoost, the pairwise metrics); computed once per data set, never per round.

Example:
    >>> critical_pairs([2.0, 0.0, 1.0], [0, 3])
    array([[0, 1],
           [0, 2],
           [2, 1]])
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_labels
from .groups import check_group_ptr

__all__ = ["critical_pairs", "count_critical_pairs", "check_pairs"]


@nb.njit(cache=True)
def _count_per_query(labels: np.ndarray, group_ptr: np.ndarray) -> np.ndarray:
    nq = group_ptr.shape[0] - 1
    counts = np.zeros(nq, dtype=np.int64)
    for q in range(nq):
        a, b = group_ptr[q], group_ptr[q + 1]
        c = 0
        for i in range(a, b):
            for j in range(a, b):
                if labels[i] > labels[j]:
                    c += 1
        counts[q] = c
    return counts


@nb.njit(cache=True)
def _fill_pairs(labels: np.ndarray, group_ptr: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> None:
    nq = group_ptr.shape[0] - 1
    for q in range(nq):
        a, b = group_ptr[q], group_ptr[q + 1]
        p = offsets[q]
        for i in range(a, b):
            for j in range(a, b):
                if labels[i] > labels[j]:
                    out[p, 0] = i
                    out[p, 1] = j
                    p += 1


def count_critical_pairs(labels: ArrayLike, group_ptr: ArrayLike) -> NDArray[np.int64]:
    """Number of critical pairs of every query, shape ``(n_queries,)``."""
    y = check_labels(labels)
    g = check_group_ptr(group_ptr, n_docs=y.shape[0])
    return _count_per_query(y, g)


def critical_pairs(labels: ArrayLike, group_ptr: ArrayLike) -> NDArray[np.int64]:
    """All critical pairs, shape ``(n_pairs, 2)``, preferred row first.

    Pairs are ordered by query, then by the preferred row, then by the other row.
    """
    y = check_labels(labels)
    g = check_group_ptr(group_ptr, n_docs=y.shape[0])
    counts = _count_per_query(y, g)
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    out = np.empty((int(offsets[-1]), 2), dtype=np.int64)
    _fill_pairs(y, g, offsets, out)
    return out


def check_pairs(pairs: ArrayLike, n_docs: int, name: str = "pairs") -> NDArray[np.int64]:
    """Explicit preference pairs as an ``(n_pairs, 2)`` int64 array of row indices
    (preferred first), validated: integer, in range, no self-pair."""
    p = np.asarray(pairs)
    if p.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n_pairs, 2), got {p.shape}")
    if p.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer row indices, got dtype {p.dtype}")
    p = np.ascontiguousarray(p, dtype=np.int64)
    bad = np.flatnonzero((p < 0).any(axis=1) | (p >= n_docs).any(axis=1))
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] = {p[bad[0]].tolist()} is outside rows [0, {n_docs})")
    bad = np.flatnonzero(p[:, 0] == p[:, 1])
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] = {p[bad[0]].tolist()} pairs a row with itself")
    return p
