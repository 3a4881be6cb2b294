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

import os
import re
from collections.abc import Callable

import numba as nb
import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _memory
from ._validation import check_labels, plain
from .groups import check_group_ptr, label_levels

__all__ = ["critical_pairs", "count_critical_pairs", "check_pairs", "check_rows", "check_pair_memory", "pair_memory_limit",
           "PAIR_MEMORY_LIMIT", "PAIR_MEMORY_ENV", "FALLBACK_PAIR_MEMORY_LIMIT", "PAIR_BYTES", "PairMemoryError"]


#: Memory (bytes) a booster or a pairwise metric may allocate for its per-pair arrays before it
#: lists the pairs; a larger estimate is a :class:`PairMemoryError` naming the query (instead of
#: a ``MemoryError`` after minutes of swapping). ``None`` (the default): the limit is derived
#: when the pairs are about to be listed (:func:`pair_memory_limit`: the environment variable
#: :data:`PAIR_MEMORY_ENV`, else the memory available then). Assign a number of bytes to fix it
#: for this process; per call: ``memory_limit=`` (the metrics' ``max_memory=``).
PAIR_MEMORY_LIMIT: int | None = None

#: The environment variable that sets the limit for a process and the processes it starts
#: (``boostplug compare --jobs`` workers): bytes, or a number with ``K``, ``M``, ``G`` or ``T``
#: (powers of 1024, ``16G`` = ``16GiB``).
PAIR_MEMORY_ENV = "BOOSTPLUG_PAIR_MEMORY_LIMIT"

#: The limit when neither is set and the system does not say how much memory is available.
FALLBACK_PAIR_MEMORY_LIMIT = 8 * 2**30

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


class PairMemoryError(ValueError, MemoryError):
    """Listing the preference pairs would need more memory than the limit allows."""

#: Bytes of the pair list itself (two int64 row indices per pair).
PAIR_BYTES = 16


def critical_counts(same: np.ndarray, group_ptr: np.ndarray) -> np.ndarray:
    """Each query's critical pairs: its pairs of rows with different labels, ``(n_q^2 - sum same) / 2``
    (``same``: the rows sharing a row's label, from :func:`~boostplug.groups.label_levels`). O(n) after
    the levels' O(n log n): a query too large to list is refused without an O(n^2) scan."""
    n = np.diff(group_ptr)
    return (n * n - np.diff(np.concatenate(([0], np.cumsum(same)))[group_ptr])) // 2


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
    return critical_counts(label_levels(y, g)[1], g)


def _limit_in_force() -> tuple[int, str]:
    """The pair memory limit in bytes and where it comes from (for the message); ``ValueError`` naming
    :data:`PAIR_MEMORY_ENV`'s value when it is set (not empty) and not a size."""
    if PAIR_MEMORY_LIMIT is not None:
        return check_memory_limit(PAIR_MEMORY_LIMIT, "boostplug.pairs.PAIR_MEMORY_LIMIT"), \
            "set by boostplug.pairs.PAIR_MEMORY_LIMIT"
    text = os.environ.get(PAIR_MEMORY_ENV, "")
    if text.strip():
        m = _SIZE.fullmatch(text)
        if m is None:
            raise ValueError(f"{PAIR_MEMORY_ENV}={text!r} is not a memory size; give bytes or a number with K, M, G "
                             "or T (powers of 1024), e.g. 16G")
        return int(float(m.group(1)) * _UNITS[m.group(2).lower()]), f"set by {PAIR_MEMORY_ENV}"
    available = _memory.available_memory()
    if available is not None:
        return available, "the memory available now"
    return FALLBACK_PAIR_MEMORY_LIMIT, "the default: the system does not say how much memory is available"


def pair_memory_limit() -> int:
    """The pair memory limit in force, in bytes: :data:`PAIR_MEMORY_LIMIT` when assigned, else the
    environment variable :data:`PAIR_MEMORY_ENV`, else the memory this process can allocate now
    (``MemAvailable`` of /proc/meminfo, or ``os.sysconf``, within any cgroup or rlimit), else
    :data:`FALLBACK_PAIR_MEMORY_LIMIT` (8 GiB)."""
    return _limit_in_force()[0]


def check_memory_limit(limit: object, name: str | None = None) -> int:
    """A memory limit: an integer number of bytes >= 0 (``TypeError`` naming ``name`` otherwise; its
    callers take ``None`` for the limit in force, :func:`pair_memory_limit`, before they call it)."""
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
        raise TypeError(f"{name or 'memory_limit'} must be an integer number of bytes >= 0, got {plain(limit)!r}")
    return int(limit)


def check_pair_memory(counts: ArrayLike, group_ptr: ArrayLike | None, bytes_per_pair: int, *,
                      who: str = "listing pairs", memory_limit: int | None = None,
                      limit_name: str | None = None, where: Callable[[int], str] | None = None,
                      noun: str = "preference pairs") -> None:
    """Refuse (:class:`PairMemoryError`) when ``sum(counts) * bytes_per_pair`` exceeds ``memory_limit``
    (default: :func:`pair_memory_limit`), naming the query with the most pairs, its size, the
    pair count, the estimate and the limit with where it comes from. ``counts``: pairs per query
    (:func:`count_critical_pairs`); ``group_ptr=None``: ``counts`` is one count of explicit pairs.
    ``where(q)``: the sentence naming group ``q`` (the one with the most pairs) and what to do,
    for groups that are not queries (or for ``counts`` of other pairs, ``noun``)."""
    if memory_limit is None:
        limit, source = _limit_in_force()
    else:
        limit, source = check_memory_limit(memory_limit, limit_name), f"set by {limit_name or 'memory_limit'}="
    c = np.asarray(counts, dtype=np.int64)
    total = int(c.sum())
    need = total * int(bytes_per_pair)
    if need <= limit:
        return
    if where is not None:
        named = where(int(np.argmax(c)))
    elif group_ptr is None:
        named = "they are the explicit pairs given. Pass fewer pairs"
    else:
        g = np.asarray(group_ptr, dtype=np.int64)
        q = int(np.argmax(c))
        named = (f"the largest query is query {q} with {int(g[q + 1] - g[q]):,} documents and {int(c[q]):,} "
                 "pairs. Split or subsample large queries")
    raise PairMemoryError(
        f"{who}: {total:,} {noun} would need ~{_memory.format_bytes(need)} ({bytes_per_pair} bytes per pair), "
        f"above the limit of {_memory.format_bytes(limit)} ({source}); {named}, "
        + (f"or pass {limit_name}=<bytes>, or " if limit_name else "or ")
        + f"set the limit with the environment variable {PAIR_MEMORY_ENV} or boostplug.pairs.PAIR_MEMORY_LIMIT "
        "if the memory is there"
    )


def critical_pairs(labels: ArrayLike, group_ptr: ArrayLike, *, bytes_per_pair: int = PAIR_BYTES,
                   who: str = "critical_pairs", memory_limit: int | None = None,
                   limit_name: str | None = "memory_limit") -> NDArray[np.int64]:
    """All critical pairs, shape ``(n_pairs, 2)``, preferred row first.

    Pairs are ordered by query, then by the preferred row, then by the other row. The pairs
    are counted first: when ``n_pairs * bytes_per_pair`` (the caller's memory per pair, the
    pair list's 16 bytes included) exceeds ``memory_limit`` (default
    :func:`pair_memory_limit`) nothing is allocated and a ``ValueError`` names the largest
    query, its size, the pair count and the estimate (see :func:`check_pair_memory`).
    """
    y = check_labels(labels)
    g = check_group_ptr(group_ptr, n_docs=y.shape[0])
    counts = critical_counts(label_levels(y, g)[1], g)
    check_pair_memory(counts, g, max(int(bytes_per_pair), PAIR_BYTES), who=who, memory_limit=memory_limit,
                      limit_name=limit_name)
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    out = np.empty((int(offsets[-1]), 2), dtype=np.int64)
    _fill_pairs(y, g, offsets, out)
    return out


def check_rows(rows: ArrayLike, n_docs: int, name: str = "rows") -> NDArray[np.int64]:
    """Row indices as a 1-d int64 array, validated: integer, in range, each row once."""
    r = np.asarray(rows)
    if r.size == 0:
        return np.zeros(0, dtype=np.int64)
    if r.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of row indices, got shape {r.shape}")
    if r.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer row indices, got dtype {r.dtype}")
    r = np.ascontiguousarray(r, dtype=np.int64)
    bad = np.flatnonzero((r < 0) | (r >= n_docs))
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] = {int(r[bad[0]])} is outside rows [0, {n_docs})")
    uniq, first = np.unique(r, return_index=True)
    if uniq.size != r.size:
        dup = int(np.setdiff1d(np.arange(r.size), first)[0])
        raise ValueError(f"{name}[{dup}] = {int(r[dup])} repeats a row")
    return r


def check_pairs(pairs: ArrayLike, n_docs: int, name: str = "pairs", outside: str = "") -> NDArray[np.int64]:
    """Explicit preference pairs as an ``(n_pairs, 2)`` int64 array of row indices
    (preferred first), validated: integer, in range, no self-pair. ``outside``: what the
    message about a row out of range adds."""
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
        raise ValueError(f"{name}[{int(bad[0])}] = {p[bad[0]].tolist()} is outside rows [0, {n_docs}){outside}")
    bad = np.flatnonzero(p[:, 0] == p[:, 1])
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] = {p[bad[0]].tolist()} pairs a row with itself")
    return p
