"""``preferences(log, ...)``: Joachims et al.'s strategies over every impression of a click log,
aggregated over sessions.

The log is read once, impression by impression (a compiled loop), and every extracted pair
``(query, preferred, other)`` is counted under packed integer keys; files are streamed in
batches of whole sessions and Dask DataFrames reduced partition by partition, so memory
follows the number of distinct pairs, not the length of the log.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from .._validation import check_choice, check_count, check_real, show
from . import _sources
from . import strategies as _strategies
from .aggregate import Preferences, check_weight
from .extraction import Extraction
from .log import ON_BAD, ClickLog, read_log, stream, warn_dropped

__all__ = ["preferences"]


def _need_columns(names: tuple[str, ...], roles: Mapping[str, object], min_dwell: float | None) -> None:
    """The log's columns (``roles``) have what the strategies and ``min_dwell`` read."""
    needs = [n for n in names if n in _strategies.NEEDS_ORDER]
    if needs and "order" not in roles:
        raise ValueError(
            f"strategies {needs} need the time or order of each click, but the log has no order column; "
            "name it with columns={'order': ...} (if clicks happened top-down, the position column "
            "itself is the order)")
    if min_dwell is not None and "dwell" not in roles:
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
            e.g. after ``ddf.shuffle(on="session")``; checked), or a Spark DataFrame (shuffled by
            session, then reduced partition by partition on the executors).
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
    min_support = check_count(min_support, "min_support")
    weight, confidence = check_weight(weight, confidence)
    if min_dwell is not None:
        min_dwell = check_real("min_dwell", min_dwell, 0.0, float("inf"), lo_open=False)
    on_bad = check_choice("on_bad", on_bad, ON_BAD)
    inv = None
    if propensity is not None:
        if weight == "wilson":
            raise ValueError("weight='wilson' needs whole impression counts; with propensity= use 'net', 'count' "
                             "or 'unit'")
        from .propensity import inverse_propensity

        inv = inverse_propensity(propensity, clip)
    ex = Extraction(mask, min_dwell, inv)
    pieces: Iterator[ClickLog] | list[ClickLog] = []
    kind = "log" if isinstance(log, ClickLog) else _sources.kind_of(log)
    if kind in ("dask", "spark"):
        roles = _sources.resolve_columns(columns, [str(c) for c in log.columns])
    elif kind in ("parquet", "csv", "raw"):
        roles, pieces, dropped = stream(log, columns, on_bad)
    else:
        whole = read_log(log, columns=columns, on_bad=on_bad)  # warns itself; a ClickLog as it is
        roles, pieces, dropped = whole.columns(), [whole], whole.dropped
    _need_columns(names, roles, min_dwell)
    if kind in ("dask", "spark"):
        from ._counts import dask_partials, merge_partials, spark_partials

        partials = (dask_partials if kind == "dask" else spark_partials)(log, roles, ex, on_bad)
        dropped = merge_partials(partials, ex)
    for piece in pieces:
        ex.add_log(piece)
    if kind in ("dask", "spark", "parquet", "csv", "raw"):
        warn_dropped(dropped, ex.n_impressions)
    return ex.result(min_support=min_support, weight=weight, confidence=confidence, names=names, dropped=dropped)
