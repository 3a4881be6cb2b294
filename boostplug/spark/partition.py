"""Whole queries per Spark partition: :func:`repartition_by_query` builds such a DataFrame (how: its
docstring), :func:`check_partitions` verifies one and refuses a split query by name. User
documentation: :mod:`boostplug.spark`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from .._validation import check_int, show
from ..frameworks.distributed.layout import first_split, query_runs
from ._spark import require_frame

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

__all__ = ["ROW_COL", "QueryLayout", "repartition_by_query", "check_partitions"]

#: The column that keeps each row's original order through the shuffle (dropped by the trainers).
ROW_COL = "__boostplug_row"

_FIX = ("every query must sit whole in one partition, contiguous inside it (a barrier task trains on "
        "its partition only, and a ranking loss needs all documents of a query). Call "
        "boostplug.spark.repartition_by_query(df, qid_col={qid_col!r}) first")


@dataclass(frozen=True)
class QueryLayout:
    """How the queries of a query-partitioned DataFrame lie: per partition, its rows and queries,
    and (``group_cols`` of :func:`check_partitions`) its rows per value of those columns."""

    rows_per_partition: np.ndarray
    queries_per_partition: np.ndarray
    group_rows: tuple[dict[tuple[Any, ...], int], ...] = ()

    def rows_in_group(self, *values: Any) -> np.ndarray:
        """Per partition, its rows whose ``group_cols`` equal ``values``."""
        return np.array([g.get(values, 0) for g in self.group_rows], dtype=np.int64)

    @property
    def n_partitions(self) -> int:
        return int(self.rows_per_partition.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.queries_per_partition.sum())


def repartition_by_query(df: "DataFrame", qid_col: str = "qid", num_partitions: int | None = None,
                         *, group_cols: Sequence[str] = ()) -> "DataFrame":
    """``df`` with every query whole and contiguous in one partition.

    ``repartitionByRange(num_partitions, qid_col)`` puts all rows of a query id in one partition
    (range partitioning never cuts a key); ``sortWithinPartitions`` then makes each query's rows
    contiguous, in their original order (kept in the column ``ROW_COL`` through the shuffle).
    ``group_cols`` are sorted on before the query id (the trainers keep training and validation
    rows apart this way). Default ``num_partitions``: Spark's default parallelism.
    """
    from pyspark.sql import functions as F

    require_frame(df, "repartition_by_query", [qid_col, *group_cols])
    if num_partitions is None:
        num_partitions = df.sparkSession.sparkContext.defaultParallelism
    check_int("num_partitions", num_partitions, 1, None)
    if ROW_COL not in df.columns:
        df = df.withColumn(ROW_COL, F.monotonically_increasing_id())
    return (df.repartitionByRange(int(num_partitions), F.col(qid_col))
              .sortWithinPartitions(*group_cols, qid_col, ROW_COL))


def _partition_runs(index: int, rows: Iterator[Any]
                    ) -> Iterator[tuple[int, int, list[tuple[Any, ...]], list[int]]]:
    """``(partition, rows, [key of each run of equal keys], [rows of each run])`` of one partition
    (runs on an executor)."""
    runs, lengths = query_runs(tuple(row) for row in rows)
    yield index, sum(lengths), runs, lengths


def check_partitions(df: "DataFrame", qid_col: str = "qid", *, group_cols: Sequence[str] = ()) -> QueryLayout:
    """Verify that every query of ``df`` sits whole and contiguous in one partition.

    One pass over the query-id column: each partition sends back the id of each run of equal ids,
    so the driver holds one value per query. A query whose rows are in two partitions, or in two
    runs of one partition, is a ``ValueError`` naming it and saying how to repartition. With
    ``group_cols`` a query is keyed by those columns and its id (a validation query may reuse a
    training query's id). Returns the :class:`QueryLayout`.
    """
    require_frame(df, "check_partitions", [qid_col, *group_cols])
    found = sorted(df.select(*group_cols, qid_col).rdd.mapPartitionsWithIndex(_partition_runs).collect(),
                   key=lambda f: f[0])
    rows = np.array([n for _, n, _, _ in found], dtype=np.int64)
    queries = np.array([len(r) for _, _, r, _ in found], dtype=np.int64)
    group_rows = []
    for _, _, run_ids, lengths in found:
        by_group: dict[tuple[Any, ...], int] = {}
        for q, n in zip(run_ids, lengths):
            by_group[q[:-1]] = by_group.get(q[:-1], 0) + n
        group_rows.append(by_group)
    split = first_split((part, run_ids) for part, _, run_ids, _ in found)
    if split is not None:
        q, first, again = split
        where = (f"partitions {first} and {again}" if first != again
                 else f"two separate runs of rows in partition {again}")
        raise ValueError(f"query {show(q[-1])} (column {qid_col!r}) is split: its rows lie in {where}; "
                         + _FIX.format(qid_col=qid_col))
    return QueryLayout(rows, queries, tuple(group_rows))
