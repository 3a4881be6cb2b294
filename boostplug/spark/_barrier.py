"""What the Spark trainers share: the training DataFrame laid out for barrier tasks (features,
label, query id, weight and a validation flag; whole queries per partition, checked), one
partition's rows as numpy arrays, the objective's registry entry shipped to the executors, and
running one barrier stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from .. import objectives as _objectives
from .._validation import show
from ..frameworks.distributed.rows import Part
from ._spark import require_columns, require_frame
from .partition import ROW_COL, QueryLayout, check_partitions, repartition_by_query

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark.sql import DataFrame

__all__ = ["VALID_COL", "X_COL", "Columns", "ShippedObjective", "features_matrix", "part_arrays",
           "prepare_frame", "check_distributable", "driver_host", "run_barrier"]

#: The features of a row as one array of doubles, as the tasks read them.
X_COL = "__boostplug_x"
#: 1 on the rows of the validation DataFrame, 0 on the training rows.
VALID_COL = "__boostplug_valid"


@dataclass(frozen=True)
class Columns:
    """Where the data is: a vector/array ``features_col`` or numeric ``feature_cols``; the label,
    query id and optional weight (one per row, equal within a query) and document-key columns (the
    key a :class:`~boostplug.keyed_pairs.KeyedPairs` objective parameter names rows by)."""

    label_col: str = "label"
    qid_col: str = "qid"
    features_col: str | None = "features"
    feature_cols: Sequence[str] | None = None
    weight_col: str | None = None
    doc_col: str | None = None

    def __post_init__(self) -> None:
        if self.feature_cols is not None:
            object.__setattr__(self, "feature_cols", tuple(self.feature_cols))
            object.__setattr__(self, "features_col", None)
            if not self.feature_cols:
                raise ValueError("feature_cols is empty; name at least one feature column")

    def feature_columns(self) -> list[str]:
        return [self.features_col] if self.feature_cols is None else list(self.feature_cols)

    def needed(self) -> list[str]:
        optional = [c for c in (self.weight_col, self.doc_col) if c]
        return self.feature_columns() + [self.label_col, self.qid_col] + optional

    def features_as_array(self, df: "DataFrame") -> "DataFrame":
        """``df`` with the features in one array-of-double column (``pyspark.ml`` vectors converted)."""
        from pyspark.sql import functions as F

        if self.feature_cols is not None:
            return df.withColumn(X_COL, F.array(*[F.col(c).cast("double") for c in self.feature_cols]))
        from pyspark.ml.functions import vector_to_array
        from pyspark.ml.linalg import VectorUDT

        col = F.col(self.features_col)
        is_vector = isinstance(df.schema[self.features_col].dataType, VectorUDT)
        return df.withColumn(X_COL, vector_to_array(col) if is_vector else col.cast("array<double>"))


def features_matrix(pdf: "pd.DataFrame") -> np.ndarray:
    """The feature matrix of a pandas batch holding the array column :func:`Columns.features_as_array` made."""
    values = pdf[X_COL].to_numpy()
    return np.stack(values).astype(np.float64, copy=False) if values.shape[0] else np.zeros((0, 0))


def part_arrays(batches: Iterator["pd.DataFrame"], cols: Columns) -> tuple[Part, Part]:
    """The training and validation rows of one barrier task's partition (runs on an executor)."""
    import pandas as pd

    frames = list(batches)
    pdf = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {X_COL: [], cols.label_col: [], cols.qid_col: [], VALID_COL: []})
    out = []
    for flag in (0, 1):
        rows = pdf[pdf[VALID_COL] == flag]
        out.append(Part(features_matrix(rows), rows[cols.label_col].to_numpy(np.float64),
                        rows[cols.qid_col].to_numpy(),
                        rows[cols.weight_col].to_numpy(np.float64) if cols.weight_col else None,
                        rows[cols.doc_col].to_numpy() if cols.doc_col else None))
    return out[0], out[1]


def prepare_frame(df: "DataFrame", valid_df: "DataFrame | None", cols: Columns, num_workers: int | None,
                  repartition: bool, who: str) -> tuple["DataFrame", QueryLayout]:
    """The DataFrame the barrier tasks read (persisted: the check and the training read it), and its layout.

    Training and validation rows are unioned with :data:`VALID_COL` and range-partitioned
    together on the query id, so every worker holds whole queries of both. With
    ``repartition=False`` the input's own partitions are kept (and checked). Every partition must
    hold training rows (counted in one more pass over the persisted rows): a worker without any
    cannot train.
    """
    from pyspark.sql import functions as F

    require_frame(df, who)
    require_columns(df, cols.needed())
    def needed(frame: "DataFrame") -> list[str]:  # the columns training reads; other columns stay behind
        return [*cols.needed(), *([ROW_COL] if ROW_COL in frame.columns else [])]

    frames = [df.select(*needed(df)).withColumn(VALID_COL, F.lit(0))]
    if valid_df is not None:
        require_frame(valid_df, f"{who} (valid_df)")
        require_columns(valid_df, cols.needed())
        if not repartition:
            raise ValueError("valid_df needs repartition=True: the validation rows are partitioned together with "
                             "the training rows, on the query id")
        frames.append(valid_df.select(*needed(valid_df)).withColumn(VALID_COL, F.lit(1)))
    if num_workers is None:
        num_workers = df.rdd.getNumPartitions() if not repartition else \
            df.sparkSession.sparkContext.defaultParallelism
    if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)) or num_workers < 1:
        raise ValueError(f"num_workers must be an integer >= 1, got {show(num_workers)}")
    slots = df.sparkSession.sparkContext.defaultParallelism
    if num_workers > slots:
        # Spark would retry a barrier stage it cannot start for minutes before failing.
        raise ValueError(f"{who}: num_workers={int(num_workers)} barrier tasks must all run at once, but Spark's "
                         f"default parallelism (its task slots) is {slots}: pass num_workers <= {slots}")
    keep = [*needed(df), VALID_COL]
    if repartition:
        rows = [f.withColumn(ROW_COL, F.monotonically_increasing_id()) if ROW_COL not in f.columns else f
                for f in frames]
        whole = rows[0] if len(rows) == 1 else rows[0].unionByName(rows[1])
        laid = repartition_by_query(whole.select(*keep, *([] if ROW_COL in keep else [ROW_COL])), cols.qid_col,
                                    int(num_workers), group_cols=[VALID_COL])
    else:
        laid = frames[0].select(*keep)
    laid = cols.features_as_array(laid).persist()
    layout = check_partitions(laid, cols.qid_col, group_cols=[VALID_COL])
    training = np.zeros(layout.n_partitions, dtype=np.int64)
    counted = laid.where(F.col(VALID_COL) == 0).groupBy(F.spark_partition_id().alias("p")).count().collect()
    for row in counted:
        training[row["p"]] = row["count"]
    empty = np.flatnonzero(training == 0)
    if empty.size:
        laid.unpersist()
        raise ValueError(f"{who}: partition {int(empty[0])} of {layout.n_partitions} holds no training rows, and "
                         f"every worker must train on some queries; the data has {layout.n_queries} queries (training "
                         "and validation): pass a smaller num_workers")
    return laid, layout


@dataclass(frozen=True)
class ShippedObjective:
    """A registry entry as the executors need it: a user's objective registered in the driver
    (say in a notebook) is not registered in the executors' Python workers, so the entry travels
    with the task (the loss class by value when it is not importable) and is registered there."""

    name: str
    loss_class: type
    summary: str
    fixed: dict[str, Any]
    methods: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, name: str) -> "ShippedObjective":
        e = _objectives.get(name)
        return cls(e.name, e.loss_class, e.summary, dict(e.fixed), {m: dict(s) for m, s in e.methods.items()})

    def ensure_registered(self) -> None:
        """Register the entry in this process unless an entry of that name is already there."""
        if self.name not in _objectives.names():
            _objectives.register(self.loss_class, name=self.name, summary=self.summary, fixed=self.fixed,
                                 methods=self.methods)


def check_distributable(obj: Any, early_stopping_rounds: Any, valid_df: Any) -> None:
    """Refuse what cannot be split between workers: row-index objective parameters (each worker
    numbers its own rows), and early stopping without validation rows."""
    if obj.rows_given:
        raise ValueError(f"objective_params[{next(iter(obj.rows_given))!r}] holds row indices of the whole training "
                         "set, but each Spark worker numbers its own rows: leave it unset, or train on one machine")
    if early_stopping_rounds is not None and valid_df is None:
        raise ValueError("early_stopping_rounds needs valid_df (the rows the metric is evaluated on)")


def driver_host(df: "DataFrame") -> str:
    """The address the executors reach the driver at (Spark's ``spark.driver.host``; loopback by default)."""
    return df.sparkSession.sparkContext.getConf().get("spark.driver.host", "127.0.0.1")


def run_barrier(laid: "DataFrame", task: Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]],
                schema: str) -> list[Any]:
    """Run ``task`` once per partition of ``laid``, all partitions at once (a barrier stage: Spark
    starts every task together or none), and collect what the tasks yield."""
    rdd = laid.mapInPandas(task, schema=schema).rdd.barrier().mapPartitions(lambda rows: rows)
    return rdd.collect()
