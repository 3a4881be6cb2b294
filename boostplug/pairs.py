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

__all__ = ["critical_pairs", "count_critical_pairs", "check_pairs", "check_pair_memory", "PAIR_MEMORY_LIMIT",
           "PAIR_BYTES", "PairMemoryError"]


#: Memory (bytes) a booster or a pairwise metric may allocate for its per-pair arrays before it
#: lists the pairs; a larger estimate is a :class:`PairMemoryError` naming the query (instead of
#: a ``MemoryError`` after minutes of swapping). Override by assigning
#: ``boostplug.pairs.PAIR_MEMORY_LIMIT``, or per call (``memory_limit=``, the metrics' ``max_memory=``).
PAIR_MEMORY_LIMIT = 8 * 2**30


class PairMemoryError(ValueError, MemoryError):
    """Listing the preference pairs would need more memory than the limit allows."""

#: Bytes of the pair list itself (two int64 row indices per pair).
PAIR_BYTES = 16


@nb.njit(cache=True)
def _count_per_query(labels: np.ndarray, group_ptr: np.ndarray) -> np.ndarray:
    """Pairs with ``labels[i] > labels[j]`` per query, from the sorted labels: O(n log n), so
    that a query too large to list is refused without an O(n^2) scan."""
    nq = group_ptr.shape[0] - 1
    counts = np.zeros(nq, dtype=np.int64)
    for q in range(nq):
        a, b = group_ptr[q], group_ptr[q + 1]
        y = np.sort(labels[a:b])
        c = 0
        below = 0  # documents with a strictly lower label than the current run
        k = 0
        while k < y.shape[0]:
            run = 1
            while k + run < y.shape[0] and y[k + run] == y[k]:
                run += 1
            c += run * below
            below += run
            k += run
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


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes:,} bytes"


def check_memory_limit(limit: object, name: str | None = None) -> int:
    """A memory limit: an integer number of bytes >= 0 (``TypeError`` naming ``name`` otherwise)."""
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
        shown = limit.item() if isinstance(limit, np.generic) else limit
        raise TypeError(f"{name or 'memory_limit'} must be an integer number of bytes >= 0, got {shown!r}")
    return int(limit)


def check_pair_memory(counts: ArrayLike, group_ptr: ArrayLike | None, bytes_per_pair: int, *,
                      who: str = "listing pairs", memory_limit: int | None = None,
                      limit_name: str | None = None) -> None:
    """Refuse (:class:`PairMemoryError`) when ``sum(counts) * bytes_per_pair`` exceeds ``memory_limit``
    (default :data:`PAIR_MEMORY_LIMIT`), naming the query with the most pairs, its size, the
    pair count and the estimate. ``counts``: pairs per query (:func:`count_critical_pairs`);
    ``group_ptr=None``: ``counts`` is one count of explicit pairs."""
    limit = PAIR_MEMORY_LIMIT if memory_limit is None else check_memory_limit(memory_limit, limit_name)
    c = np.asarray(counts, dtype=np.int64)
    total = int(c.sum())
    need = total * int(bytes_per_pair)
    if need <= limit:
        return
    if group_ptr is None:
        where = "they are the explicit pairs given. Pass fewer pairs"
    else:
        g = np.asarray(group_ptr, dtype=np.int64)
        q = int(np.argmax(c))
        where = (f"the largest query is query {q} with {int(g[q + 1] - g[q]):,} documents and {int(c[q]):,} "
                 "pairs. Split or subsample large queries")
    raise PairMemoryError(
        f"{who}: {total:,} preference pairs would need ~{_gib(need)} ({bytes_per_pair} bytes per pair), "
        f"above the limit of {_gib(limit)} (boostplug.pairs.PAIR_MEMORY_LIMIT); {where}, "
        + (f"or pass {limit_name}=<bytes>, or " if limit_name else "or ")
        + "raise boostplug.pairs.PAIR_MEMORY_LIMIT if the memory is there"
    )


def critical_pairs(labels: ArrayLike, group_ptr: ArrayLike, *, bytes_per_pair: int = PAIR_BYTES,
                   who: str = "critical_pairs", memory_limit: int | None = None,
                   limit_name: str | None = "memory_limit") -> NDArray[np.int64]:
    """All critical pairs, shape ``(n_pairs, 2)``, preferred row first.

    Pairs are ordered by query, then by the preferred row, then by the other row. The pairs
    are counted first: when ``n_pairs * bytes_per_pair`` (the caller's memory per pair, the
    pair list's 16 bytes included) exceeds ``memory_limit`` (default
    :data:`PAIR_MEMORY_LIMIT`) nothing is allocated and a ``ValueError`` names the largest
    query, its size, the pair count and the estimate (see :func:`check_pair_memory`).
    """
    y = check_labels(labels)
    g = check_group_ptr(group_ptr, n_docs=y.shape[0])
    counts = _count_per_query(y, g)
    check_pair_memory(counts, g, max(int(bytes_per_pair), PAIR_BYTES), who=who, memory_limit=memory_limit,
                      limit_name=limit_name)
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
