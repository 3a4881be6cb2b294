"""``preferences(log, ...)``: Joachims et al.'s strategies over every impression of a click log,
aggregated over sessions.

The log is read once, impression by impression (a compiled loop), and every extracted pair
``(query, preferred, other)`` is counted under packed integer keys; files are streamed in
batches of whole sessions and Dask DataFrames reduced partition by partition, so memory
follows the number of distinct pairs, not the length of the log.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_real, show
from . import _sources
from . import strategies as _strategies
from .aggregate import MAX_KEYS, Encoder, PairCounts, Preferences, check_min_support, check_weight, resolve
from .log import ClickLog, Dropped, _check_on_bad, read_log, stream, warn_dropped

__all__ = ["preferences", "Extraction"]

#: Rows per compiled extraction call: bounds the temporary pair arrays.
_CHUNK_ROWS = 1 << 21
_LOW = np.int64(0xFFFFFFFF)


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
        """Extract and count the pairs of every impression of ``log``."""
        from . import _kernels as K

        ptr = log.group_ptr
        clicked = log.clicked
        if self.min_dwell is not None:
            clicked = clicked & (log.dwell >= self.min_dwell)  # type: ignore[operator]
        order = log.order if log.order is not None else np.empty(0)
        self.n_impressions += log.n_impressions
        i = 0
        while i < ptr.shape[0] - 1:
            j = int(np.searchsorted(ptr, ptr[i] + _CHUNK_ROWS, side="right")) - 1
            j = max(j, i + 1)
            a, b = int(ptr[i]), int(ptr[j])
            sub = ptr[i:j + 1] - a
            sub_order = order[a:b] if order.size else order
            per_imp = K.count_pairs(sub, clicked[a:b], sub_order, self.mask)
            offsets = np.zeros(per_imp.shape[0] + 1, dtype=np.int64)
            np.cumsum(per_imp, out=offsets[1:])
            n_pairs = int(offsets[-1])
            if n_pairs:
                pref = np.empty(n_pairs, dtype=np.int64)
                other = np.empty(n_pairs, dtype=np.int64)
                K.fill_pairs(sub, clicked[a:b], sub_order, self.mask, offsets, pref, other)
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

    def _decode(self, key_codes: NDArray[np.int64]) -> tuple[np.ndarray, np.ndarray]:
        """(query, document) of dense key codes."""
        packed = self.keys.values[key_codes]  # type: ignore[index]
        return self.queries.values[packed >> 32], self.docs.values[packed & _LOW]  # type: ignore[index]

    def raw_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, NDArray[np.int64]]:
        """``(query, preferred, other, count)`` of every directed pair seen, unresolved."""
        keys, counts = self.counts.total()
        query, pref = self._decode(keys >> 32)
        _, other = self._decode(keys & _LOW)
        return query, pref, other, counts

    def result(self, *, min_support: int, weight: str, confidence: float, names: tuple[str, ...],
               dropped: Dropped) -> Preferences:
        """The :class:`Preferences` table."""
        keys, counts = self.counts.total()
        count, against, w, pref_key, other_key = resolve(keys, counts, min_support=min_support, weight=weight,
                                                         confidence=confidence)
        if count.size:
            query, pref = self._decode(pref_key)
            _, other = self._decode(other_key)
            order = np.lexsort((other, pref, query))
            query, pref, other = query[order], pref[order], other[order]
            count, against, w = count[order], against[order], w[order]
        else:
            empty = np.zeros(0, dtype=np.int64)
            query = pref = other = empty
        return Preferences(query, pref, other, count, against, w, names, weight, self.n_impressions, dropped)


def _check_min_dwell(min_dwell: object) -> float | None:
    if min_dwell is None:
        return None
    return check_real("min_dwell", min_dwell, 0.0, float("inf"), lo_open=False)


def _need_columns(names: tuple[str, ...], has_order: bool, has_dwell: bool, min_dwell: float | None) -> None:
    needs = [n for n in names if n in _strategies.NEEDS_ORDER]
    if needs and not has_order:
        raise ValueError(
            f"strategies {needs} need the time or order of each click, but the log has no order column; "
            "name it with columns={'order': ...} (if clicks happened top-down, the position column "
            "itself is the order)")
    if min_dwell is not None and not has_dwell:
        raise ValueError(f"min_dwell={show(min_dwell)} needs a dwell column; name it with columns={{'dwell': ...}}")


def preferences(
    log: Any,
    strategies: str | Iterable[str] = _strategies.DEFAULT,
    *,
    min_support: int = 1,
    weight: str = "net",
    confidence: float = 0.95,
    min_dwell: float | None = None,
    propensity: Any = None,
    clip: float = 10.0,
    columns: Mapping[str, str | None] | None = None,
    on_bad: str = "raise",
) -> Preferences:
    """Preference pairs from a click log, aggregated over sessions.

    Example:
        >>> from boostplug import clicks
        >>> log = {"session": [1, 1, 1, 2, 2, 2], "query": [7] * 6, "doc": [10, 11, 12, 10, 11, 12],
        ...        "position": [1, 2, 3, 1, 2, 3], "clicked": [0, 1, 0, 0, 1, 0]}
        >>> clicks.preferences(log, "click>skip-above").to_pandas()
           query  preferred  other  count  against  weight
        0      7         11     10      2        0     2.0

    Args:
        log: a :class:`~boostplug.clicks.ClickLog` (:func:`~boostplug.clicks.read_log`,
            :func:`~boostplug.clicks.simulate`), a pandas / polars / pyarrow table, a
            mapping of column name to array, a ``.parquet`` or ``.csv`` file (streamed in
            batches: each session's rows must be together, in any session order), a raw-format
            log (:class:`~boostplug.clicks.BaiduULTR`, :class:`~boostplug.clicks.YandexRelPred`,
            streamed likewise), or a
            Dask DataFrame (reduced partition by partition: each session within one partition,
            e.g. after ``ddf.shuffle(on="session")``; checked).
        strategies: one strategy name or several (:mod:`boostplug.clicks.strategies`);
            default ``("click>skip-previous", "click>no-click-next")``. ``"all"`` is every one.
        min_support: the net count ``count - against`` a pair needs to be kept (>= 1).
        weight: ``"unit"``, ``"count"``, ``"net"`` (default) or ``"wilson"``
            (:mod:`boostplug.clicks.aggregate`).
        confidence: one-sided level of the ``"wilson"`` bound, in [0.5, 1).
        min_dwell: clicks whose dwell is below this count as no click (they become skips);
            needs a dwell column.
        propensity: examination propensity per position (a
            :class:`~boostplug.clicks.Propensity` or an array, position 1 first): each pair then
            counts ``min(1 / propensity, clip)`` of its preferred (clicked) document's position
            instead of 1 (Joachims, Swaminathan, Schnabel, WSDM 2017), so ``count``, ``against``,
            ``min_support`` and the ``"count"``/``"net"`` weights are inverse-propensity-weighted
            sums; ``"wilson"`` needs whole counts and is refused.
        clip: the largest inverse-propensity weight (with ``propensity``).
        columns: role -> column name for a table or file (:mod:`boostplug.clicks.log`).
        on_bad: ``"raise"`` or ``"skip"`` bad impressions (:func:`~boostplug.clicks.read_log`).

    Returns:
        :class:`~boostplug.clicks.Preferences`, sorted by query, preferred and other key.
    """
    names = _strategies.names(strategies)
    mask = _strategies.mask(names)
    min_support = check_min_support(min_support)
    weight, confidence = check_weight(weight, confidence)
    min_dwell = _check_min_dwell(min_dwell)
    on_bad = _check_on_bad(on_bad)
    inv = None
    if propensity is not None:
        if weight == "wilson":
            raise ValueError("weight='wilson' needs whole impression counts; with propensity= use 'net', 'count' "
                             "or 'unit'")
        from .propensity import inverse_propensity

        inv = inverse_propensity(propensity, clip)
    ex = Extraction(mask, min_dwell, inv)
    pieces: Iterator[ClickLog] | list[ClickLog]
    warn = False
    if isinstance(log, ClickLog):
        _need_columns(names, log.order is not None, log.dwell is not None, min_dwell)
        pieces, dropped = [log], log.dropped
    else:
        kind = _sources.kind_of(log)
        if kind == "dask":
            from ._dask import reduce_partitions

            roles, dropped = reduce_partitions(log, ex, columns, on_bad,
                                               lambda r: _need_columns(names, "order" in r, "dwell" in r, min_dwell))
            warn_dropped(dropped, ex.n_impressions)
            return ex.result(min_support=min_support, weight=weight, confidence=confidence, names=names,
                             dropped=dropped)
        if kind in ("parquet", "csv", "raw"):
            roles, pieces, dropped = stream(log, columns, on_bad)
            _need_columns(names, "order" in roles, "dwell" in roles, min_dwell)
            warn = True
        else:
            whole = read_log(log, columns=columns, on_bad=on_bad)  # warns itself
            _need_columns(names, whole.order is not None, whole.dwell is not None, min_dwell)
            pieces, dropped = [whole], whole.dropped
    for piece in pieces:
        ex.add_log(piece)
    if warn:
        warn_dropped(dropped, ex.n_impressions)
    return ex.result(min_support=min_support, weight=weight, confidence=confidence, names=names, dropped=dropped)
