"""Pair counts of a click log under packed integer keys (:class:`Extraction`): what
:func:`~boostplug.clicks.preferences` fills impression by impression, and each Dask partition
fills where it lives (:mod:`boostplug.clicks._counts`) before the partial counts are summed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import show
from .aggregate import _LOW, MAX_KEYS, Encoder, PairCounts, Preferences, resolve
from .log import ClickLog, Dropped

__all__ = ["Extraction"]

#: Rows and pairs per compiled extraction call: bound the temporary pair arrays.
_CHUNK_ROWS = 1 << 21
_CHUNK_PAIRS = 1 << 22
#: Peak bytes per listed pair: two row indices, their packed key and its temporaries, the sort.
_BYTES_PER_PAIR = 64


class Extraction:
    """Pair counts of the impressions added so far, under codes shared by every piece of a log.

    ``mask``: the union of strategy bits; ``min_dwell``: clicks with a shorter dwell count as
    no click (``None``: every click counts); ``inverse_propensity``: a pair counts the weight of
    its preferred document's position (index ``position - 1``) instead of 1 (``None``: 1)."""

    def __init__(self, mask: int, min_dwell: float | None,
                 inverse_propensity: NDArray[np.float64] | None = None) -> None:
        self.mask = mask
        self.min_dwell = min_dwell
        self.inverse_propensity = inverse_propensity
        self.queries = Encoder()
        self.docs = Encoder()
        self.keys = Encoder()  # (query code, doc code) packed in one int64 -> dense key code
        self.counts = PairCounts()
        self.n_impressions = 0

    def _key_codes(self, query_codes: NDArray[np.int64], doc_codes: NDArray[np.int64]) -> NDArray[np.int64]:
        if len(self.queries) >= MAX_KEYS or len(self.docs) >= MAX_KEYS:
            raise ValueError(f"boostplug.clicks counts at most {MAX_KEYS:,} distinct queries and documents")
        codes = self.keys.encode((query_codes << 32) | doc_codes)
        if len(self.keys) >= MAX_KEYS:
            raise ValueError(f"boostplug.clicks counts at most {MAX_KEYS:,} distinct (query, document) keys")
        return codes

    def add_log(self, log: ClickLog) -> None:
        """Extract and count the pairs of every impression of ``log``, a piece of at most
        ``_CHUNK_ROWS`` rows and ``_CHUNK_PAIRS`` pairs (and the pair memory limit) at a time; an
        impression whose pairs alone exceed the limit is a :class:`~boostplug.pairs.PairMemoryError`
        naming it, before they are listed."""
        # boostplug.pairs loads numba: imported on first use, like the kernels
        from ..pairs import check_pair_memory, pair_memory_limit
        from . import _kernels as K

        ptr = log.group_ptr
        clicked = log.clicked
        if self.min_dwell is not None:
            clicked = clicked & (log.dwell >= self.min_dwell)  # type: ignore[operator]
        order = log.order if log.order is not None else np.empty(0)
        none = np.empty(0, dtype=np.int64)
        per_imp = np.zeros(ptr.shape[0] - 1, dtype=np.int64)
        K.impression_pairs(ptr, clicked, order, self.mask, none, none, none, per_imp)  # linear: the pairs are not listed
        pairs_before = np.zeros(per_imp.shape[0] + 1, dtype=np.int64)
        np.cumsum(per_imp, out=pairs_before[1:])
        max_pairs = max(1, min(_CHUNK_PAIRS, pair_memory_limit() // _BYTES_PER_PAIR))
        self.n_impressions += log.n_impressions
        i = 0
        while i < ptr.shape[0] - 1:
            j = min(int(np.searchsorted(ptr, ptr[i] + _CHUNK_ROWS, side="right")),
                    int(np.searchsorted(pairs_before, pairs_before[i] + max_pairs, side="right"))) - 1
            j = max(j, i + 1)
            a, b = int(ptr[i]), int(ptr[j])
            sub = ptr[i:j + 1] - a
            check_pair_memory(per_imp[i:j], sub, _BYTES_PER_PAIR, who="boostplug.clicks.preferences",
                              where=lambda k, i=i: _largest_impression(log, i + k, int(per_imp[i + k])))
            offsets = pairs_before[i:j + 1] - pairs_before[i]
            n_pairs = int(offsets[-1])
            if n_pairs:
                pref = np.empty(n_pairs, dtype=np.int64)
                other = np.empty(n_pairs, dtype=np.int64)
                sub_order = order[a:b] if order.size else order
                K.impression_pairs(sub, clicked[a:b], sub_order, self.mask, offsets, pref, other, none)
                q = np.repeat(self.queries.encode(log.query[ptr[i:j]]), np.diff(sub))
                codes = self._key_codes(q, self.docs.encode(log.doc[a:b]))
                self.counts.add((codes[pref] << 32) | codes[other], self._pair_weights(log.position[a:b][pref]))
            i = j

    def _pair_weights(self, position: NDArray[np.int64]) -> NDArray[np.float64] | None:
        """The inverse propensity of each pair's preferred position (``None`` without propensities)."""
        inv = self.inverse_propensity
        if inv is None:
            return None
        if position.size and position.max() > inv.shape[0]:
            raise ValueError(f"a click at position {int(position.max())} is below the {inv.shape[0]} positions of "
                             "propensity=; estimate the propensities down to the log's deepest clicked position")
        return inv[position - 1]

    def add_counts(self, query: np.ndarray, preferred: np.ndarray, other: np.ndarray,
                   count: NDArray[np.int64] | NDArray[np.float64]) -> None:
        """Add counts already summed elsewhere (a Dask partition's :meth:`raw_counts`)."""
        if not len(count):
            return
        q = self.queries.encode(query)
        d = self.docs.encode(np.concatenate((preferred, other)))
        codes = self._key_codes(np.concatenate((q, q)), d)
        n = q.shape[0]
        self.counts.add((codes[:n] << 32) | codes[n:], np.asarray(count))

    def _pairs(self, pref_key: NDArray[np.int64], other_key: NDArray[np.int64]) -> tuple[np.ndarray, ...]:
        """``(query, preferred, other)`` of pairs of dense key codes (int64 when there is none)."""
        if not pref_key.size:  # maybe nothing encoded yet: a partition with no pair (or no row)
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        pref, other = self.keys.values[pref_key], self.keys.values[other_key]  # type: ignore[index]
        docs = self.docs.values
        return self.queries.values[pref >> 32], docs[pref & _LOW], docs[other & _LOW]  # type: ignore[index]

    def raw_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, NDArray[np.int64]]:
        """``(query, preferred, other, count)`` of every directed pair seen, unresolved."""
        keys, counts = self.counts.total()
        query, pref, other = self._pairs(keys >> 32, keys & _LOW)
        return query, pref, other, counts

    def result(self, *, min_support: int, weight: str, confidence: float, names: tuple[str, ...],
               dropped: Dropped) -> Preferences:
        """The :class:`Preferences` table."""
        keys, counts = self.counts.total()
        count, against, w, pref_key, other_key = resolve(keys, counts, min_support=min_support, weight=weight,
                                                         confidence=confidence)
        query, pref, other = self._pairs(pref_key, other_key)
        order = np.lexsort((other, pref, query))
        return Preferences(*(c[order] for c in (query, pref, other, count, against, w)), names, weight,
                           self.n_impressions, dropped)


def _largest_impression(log: ClickLog, i: int, n_pairs: int) -> str:
    """What a :class:`~boostplug.pairs.PairMemoryError` says of impression ``i`` and what to do."""
    a, b = int(log.group_ptr[i]), int(log.group_ptr[i + 1])
    return (f"the largest impression is session {show(log.session[a])}, query "
            f"{show(log.query[a])} with {b - a:,} documents and {n_pairs:,} pairs. Leave such impressions out, or choose strategies that yield fewer pairs (the neighbours: "
            "click>skip-previous, click>no-click-next)")
