"""The click counts of a partitioned log, whatever engine holds the partitions: each partition's
log validated and reduced to its pair counts where it lives (:func:`partition_counts`, one row
per distinct directed pair, and the partition's session ids), and the partial counts summed on
the driver (:func:`merge_partials`), after checking that no session lies in two partitions. The
engines only lay the rows out and move the partials: a Dask DataFrame's partitions as they are
(:func:`dask_partials`; a session must lie within one, ``ddf.shuffle(on=<session column>)``
arranges that), a Spark DataFrame shuffled by session first (:func:`spark_partials`)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from .._validation import show
from . import _sources
from .extraction import Extraction
from .log import Dropped, _validate

__all__ = ["Partial", "partition_counts", "merge_partials", "dask_partials", "spark_partials"]

#: Each log row's place in a Spark DataFrame, kept through the shuffle.
_ROW = "__boostplug_log_row"


@dataclass
class Partial:
    """One partition's pair counts, its session ids and its report of dropped impressions."""

    query: np.ndarray
    preferred: np.ndarray
    other: np.ndarray
    count: np.ndarray
    sessions: np.ndarray
    n_impressions: int
    dropped: Dropped
    error: str | None = None  # a refusal, raised once the sessions are known to be whole


def partition_counts(frame: Any, index: int, roles: dict[str, str], mask: int, min_dwell: float | None,
                     inverse_propensity: np.ndarray | None, on_bad: str) -> Partial:
    """One partition's validated log (a pandas frame) reduced to its pair counts (run on a worker)."""
    batch = _sources._batch_from(frame, "pandas", roles, 0)
    dropped = Dropped()
    s = batch.values["session"]
    if batch.nulls["session"] is not None:
        s = s[~batch.nulls["session"]]
    sessions = np.unique(s)
    try:
        log = _validate(batch, roles, on_bad, dropped)
    except ValueError as exc:  # a session split across partitions looks like a bad impression: check that first
        none = np.zeros(0, dtype=np.int64)
        return Partial(none, none, none, none, sessions, 0, dropped,
                       f"partition {index} (log rows counted from the partition's start): {exc}")
    ex = Extraction(mask, min_dwell, inverse_propensity)
    ex.add_log(log)
    q, a, b, c = ex.raw_counts()
    return Partial(q, a, b, c, sessions, log.n_impressions, dropped)


def _check_sessions_whole(partials: list[Partial]) -> None:
    sessions = [p.sessions for p in partials]
    if not sessions:
        return
    ids = np.concatenate(sessions)
    part = np.repeat(np.arange(len(sessions)), [s.shape[0] for s in sessions])
    order = np.argsort(ids, kind="stable")
    ids, part = ids[order], part[order]
    again = np.flatnonzero(ids[1:] == ids[:-1])
    if again.size:
        k = int(again[0])
        raise ValueError(
            f"click log: session {show(ids[k])} lies in partitions {int(part[k])} and {int(part[k + 1])} of the Dask "
            "DataFrame; each session must be within one partition: ddf.shuffle(on=<session column>) first")


def merge_partials(partials: list[Partial], ex: Extraction) -> Dropped:
    """Sum the partitions' counts into ``ex`` (after checking that no session spans two of them,
    and raising the first partition's refusal); returns the merged report of dropped impressions."""
    _check_sessions_whole(partials)
    errors = [p.error for p in partials if p.error is not None]
    if errors:
        raise ValueError(errors[0])
    dropped = Dropped()
    for p in partials:
        ex.add_counts(p.query, p.preferred, p.other, p.count)
        ex.n_impressions += p.n_impressions
        dropped.merge(p.dropped)
    return dropped


def dask_partials(ddf: Any, roles: dict[str, str], ex: Extraction, on_bad: str) -> list[Partial]:
    """The partial counts of every partition of the Dask DataFrame ``ddf``, counted where it lives."""
    import dask

    tasks = [dask.delayed(partition_counts)(part, i, roles, ex.mask, ex.min_dwell, ex.inverse_propensity, on_bad)
             for i, part in enumerate(ddf.to_delayed())]
    return list(dask.compute(*tasks))


def spark_partials(sdf: Any, roles: dict[str, str], ex: Extraction, on_bad: str) -> list[Partial]:
    """The partial counts of the Spark DataFrame ``sdf``, shuffled so that each session lies in one
    partition (its rows in their original order), each partition counted on an executor."""
    from pyspark.sql import functions as F

    session = roles["session"]
    laid = (sdf.select(*roles.values()).withColumn(_ROW, F.monotonically_increasing_id())
               .repartition(F.col(session)).sortWithinPartitions(session, _ROW).drop(_ROW))
    mask, min_dwell, inverse = ex.mask, ex.min_dwell, ex.inverse_propensity

    def count(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd
        from pyspark import TaskContext

        frames = [f for f in batches if len(f)]
        if not frames:  # a partition no session hashed to
            return
        part = pd.concat(frames, ignore_index=True)
        partial = partition_counts(part, TaskContext.get().partitionId(), roles, mask, min_dwell, inverse, on_bad)
        yield pd.DataFrame({"partial": [pickle.dumps(partial)]})

    return [pickle.loads(row[0]) for row in laid.mapInPandas(count, schema="partial binary").collect()]
