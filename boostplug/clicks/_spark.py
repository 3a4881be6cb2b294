"""Click logs as Spark DataFrames: shuffled so that each session lies in one partition (its rows in
their original order), then each partition validated and its pairs counted on an executor
(:mod:`boostplug.clicks._counts`, as a Dask partition is); only the partial counts travel to the
driver."""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterator, Mapping

from ._counts import merge_partials, partition_counts, roles_of
from .extraction import Extraction
from .log import Dropped

__all__ = ["reduce_spark"]

#: Each log row's place in the input, kept through the shuffle.
_ROW = "__boostplug_log_row"


def reduce_spark(sdf: Any, ex: Extraction, columns: Mapping[str, str | None] | None, on_bad: str,
                 check_roles: Callable[[dict[str, str]], None]) -> tuple[dict[str, str], Dropped]:
    """Count the pairs of the Spark DataFrame ``sdf`` into ``ex``; returns the columns by role and
    the merged report of dropped impressions."""
    from pyspark.sql import functions as F

    roles = roles_of(columns, sdf.columns, check_roles)
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

    partials = [pickle.loads(row[0]) for row in laid.mapInPandas(count, schema="partial binary").collect()]
    return roles, merge_partials(partials, ex)
