"""What the Spark trainers share: the training DataFrame laid out for barrier tasks (features,
label, query id, weight and a validation flag; whole queries per partition, checked), one
partition's rows as numpy arrays (sparse vectors as a scipy CSR matrix), the objective's
registry entry shipped to the executors, and running one barrier stage."""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

from .. import objectives as _objectives
from .._validation import check_int, show
from ..frameworks._bound_objective import ShippedEntry
from ..frameworks._metric_spec import MetricSpec
from ..frameworks.distributed import lightgbm_worker, xgboost_worker
from ..frameworks.distributed.peers import first_line, lost_peer
from ..frameworks.distributed.rows import Part
from ..frameworks.distributed.stamps import Stamps
from ._spark import require_columns, require_frame
from .partition import ROW_COL, QueryLayout, check_partitions, repartition_by_query

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark import SparkContext
    from pyspark.sql import DataFrame

__all__ = ["VALID_COL", "X_COL", "X_IDX", "X_SIZE", "Columns", "keeps_sparse", "features_matrix",
           "part_arrays", "prepare_frame", "check_rows", "check_boolean_columns", "check_objective_cols",
           "check_distributable", "driver_host", "cancelled_on_error", "run_barrier", "train_or_defer", "Job", "barrier_task", "PEER_GRACE_S", "WORKERS", "SCHEMAS"]

T = TypeVar("T")

#: The features of a row as one array of doubles, as the tasks read them (a sparse vector's nonzeros).
X_COL = "__boostplug_x"
#: A sparse vector's indices (null for a dense row) and its length (null for a dense row).
X_IDX = "__boostplug_x_idx"
X_SIZE = "__boostplug_x_size"
#: 1 on the rows of the validation DataFrame, 0 on the training rows.
VALID_COL = "__boostplug_valid"


@dataclass(frozen=True)
class Columns:
    """Where the data is: a vector/array ``features_col`` or numeric ``feature_cols``; the label,
    query id and optional weight (one per row, equal within a query) and document-key columns (the
    key a :class:`~boostplug.keyed_pairs.KeyedPairs` objective parameter names rows by), and
    ``objective_cols``: ``(parameter, boolean column)`` pairs, a row-set objective parameter
    (QBRank's ``labeled_rows``) given as the training rows where its column is true."""

    label_col: str = "label"
    qid_col: str = "qid"
    features_col: str | None = "features"
    feature_cols: Sequence[str] | None = None
    weight_col: str | None = None
    doc_col: str | None = None
    objective_cols: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "objective_cols", tuple(dict(self.objective_cols).items()))
        if self.feature_cols is not None:
            object.__setattr__(self, "feature_cols", tuple(self.feature_cols))
            object.__setattr__(self, "features_col", None)
            if not self.feature_cols:
                raise ValueError("feature_cols is empty; name at least one feature column")

    def feature_columns(self) -> list[str]:
        return [self.features_col] if self.feature_cols is None else list(self.feature_cols)

    def needed(self, *, training: bool = True) -> list[str]:
        """The columns training reads (of a validation frame: without the row-set columns)."""
        optional = [c for c in (self.weight_col, self.doc_col) if c]
        row_sets = [c for _, c in self.objective_cols] if training else []
        return self.feature_columns() + [self.label_col, self.qid_col] + optional + row_sets

    def check_types(self, df: "DataFrame", who: str, *, training: bool = True) -> None:
        """The columns' types, checked before Spark plans anything (a string features column would
        otherwise fail in Spark's analyzer, a string feature column be cast to nulls): a TypeError
        naming the column, what it holds and its type. Scoring (``training=False``) reads the
        features only."""
        from pyspark.ml.linalg import VectorUDT
        from pyspark.sql.types import ArrayType, BooleanType, NumericType

        def refuse(c: str, role: str, want: str) -> None:
            raise TypeError(f"{who}: column {c!r} ({role}) must be {want}, got {df.schema[c].dataType.simpleString()}")

        if self.feature_cols is None:
            kind = df.schema[self.features_col].dataType
            if not (isinstance(kind, VectorUDT) or isinstance(kind, ArrayType)
                    and isinstance(kind.elementType, (NumericType, BooleanType))):
                refuse(self.features_col, "the features", "a pyspark.ml vector or an array of numbers")
        else:
            for c in self.feature_cols:
                if not isinstance(df.schema[c].dataType, (NumericType, BooleanType)):
                    refuse(c, "a feature", "numeric")
        if training:
            for c, role in ((self.label_col, "the label"), (self.weight_col, "the weight")):
                if c and not isinstance(df.schema[c].dataType, (NumericType, BooleanType)):
                    refuse(c, role, "numeric")

    def features_as_array(self, df: "DataFrame") -> "DataFrame":
        """``df`` with the features as the tasks read them: :data:`X_COL` an array of doubles, and for a
        ``pyspark.ml`` sparse vector its indices (:data:`X_IDX`) and length (:data:`X_SIZE`), so
        that it stays sparse (null for the dense rows and for array or numeric feature columns)."""
        from pyspark.sql import functions as F

        none_idx, none_size = F.lit(None).cast("array<int>"), F.lit(None).cast("int")
        if self.feature_cols is not None:
            x = F.array(*[F.col(c).cast("double") for c in self.feature_cols])
            return df.withColumns({X_COL: x, X_IDX: none_idx, X_SIZE: none_size})
        from pyspark.ml.linalg import VectorUDT

        col = F.col(self.features_col)
        if not isinstance(df.schema[self.features_col].dataType, VectorUDT):
            return df.withColumns({X_COL: col.cast("array<double>"), X_IDX: none_idx, X_SIZE: none_size})
        raw = F.unwrap_udt(col)  # type 0 (sparse): size, indices, values; type 1 (dense): values
        return df.withColumns({X_COL: raw.values, X_IDX: raw.indices, X_SIZE: raw.size})


def keeps_sparse(framework: str, sparse_missing: Any) -> bool:
    """Whether sparse vectors reach ``framework`` as CSR rows (``True``) or as dense rows, their
    absent entries zeros. LightGBM reads a CSR matrix's absent entries as zeros, as a dense row's
    zeros: CSR, whatever ``sparse_missing``, which it refuses. XGBoost reads them as missing, so a
    row would train differently stored sparse than dense: dense rows unless ``sparse_missing``
    asks for that reading."""
    if not isinstance(sparse_missing, (bool, np.bool_)):
        raise TypeError(f"sparse_missing must be True or False, got {show(sparse_missing)}")
    if framework == "lightgbm":
        if sparse_missing:
            raise ValueError("sparse_missing=True is XGBoost's reading of a sparse vector's absent entries; "
                             "LightGBM reads them as zeros (leave sparse_missing out)")
        return True
    return bool(sparse_missing)


def features_matrix(pdf: "pd.DataFrame", *, sparse: bool) -> Any:
    """The feature matrix of a pandas batch holding the columns :meth:`Columns.features_as_array`
    made: a numpy array, or with ``sparse`` a scipy CSR matrix when any row is a sparse vector
    (no dense rows x features array is built then; the dense rows' entries are all stored, zeros
    included, so a zero there stays a value, and only a sparse vector's absent entries are
    absent). Without ``sparse``, a sparse vector's absent entries are zeros of a dense array.
    A null vector, or vectors of different lengths, are a ValueError naming the partition (in a
    Spark task) and the lengths."""
    values = pdf[X_COL].to_numpy()
    if not values.shape[0]:
        return np.zeros((0, 0))
    idx = pdf[X_IDX].to_numpy() if X_IDX in pdf.columns else np.full(values.shape[0], None, dtype=object)
    lengths, width = _lengths_and_width(values, idx, pdf[X_SIZE].to_numpy() if X_SIZE in pdf.columns else idx)
    if not any(i is not None for i in idx):
        return np.stack(values).astype(np.float64, copy=False)
    return _csr(values, idx, lengths, width) if sparse else _dense(values, idx, width)


def _in_partition() -> str:
    """``"partition N: "`` inside a Spark task, else nothing."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return "" if ctx is None else f"partition {ctx.partitionId()}: "


def _lengths_and_width(values: np.ndarray, idx: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's stored entries, and the rows' common length (a ValueError for a null vector or
    rows of different lengths)."""
    nulls = sum(v is None or isinstance(v, float) for v in values)  # Arrow's null: None (NaN from some converters)
    if nulls:
        raise ValueError(f"{_in_partition()}{nulls} of {values.shape[0]} rows have a null feature vector: every row "
                         "needs its features")
    lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=values.shape[0])
    widths = np.array([lengths[r] if i is None else int(sizes[r]) for r, i in enumerate(idx)], dtype=np.int64)
    if widths.min() != widths.max():
        raise ValueError(f"{_in_partition()}feature vectors of different lengths: {int(widths.min())} and "
                         f"{int(widths.max())} features; every row needs the same features, in the same order")
    return lengths, int(widths[0])


def _csr(values: np.ndarray, idx: np.ndarray, lengths: np.ndarray, width: int) -> Any:
    """CSR rows of sparse (indices, values) and dense (values) vectors."""
    import scipy.sparse as sp

    indices = np.concatenate([np.arange(n, dtype=np.int32) if i is None else np.asarray(i, dtype=np.int32)
                              for n, i in zip(lengths, idx)])
    data = np.concatenate([np.asarray(v, dtype=np.float64) for v in values])
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    return sp.csr_matrix((data, indices, indptr), shape=(values.shape[0], width))


def _dense(values: np.ndarray, idx: np.ndarray, width: int) -> np.ndarray:
    """Dense rows of sparse (indices, values) and dense (values) vectors, written straight into one
    array (no CSR copy beside it)."""
    X = np.zeros((values.shape[0], width))
    for r, (v, i) in enumerate(zip(values, idx)):  # a dense row whole, a sparse one at its indices
        X[r, slice(None) if i is None else np.asarray(i, dtype=np.intp)] = v
    return X


def part_arrays(batches: Iterator["pd.DataFrame"], cols: Columns, stamps: Stamps | None = None, *,
                sparse: bool) -> tuple[Part, Part]:
    """The training and validation rows of one barrier task's partition (runs on an executor);
    ``stamps`` marks when the rows were read (Arrow batches to pandas) and made arrays; ``sparse``:
    sparse vectors as CSR rows (:func:`keeps_sparse`)."""
    import pandas as pd

    stamps = Stamps() if stamps is None else stamps
    frames = list(batches)
    pdf = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {X_COL: [], cols.label_col: [], cols.qid_col: [], VALID_COL: []})
    stamps.mark("read")
    out = []
    for flag in (0, 1):
        rows = pdf[pdf[VALID_COL] == flag]
        row_sets = {p: np.flatnonzero(rows[c].to_numpy(bool)) for p, c in cols.objective_cols} if flag == 0 else {}
        out.append(Part.of_frame(rows, features_matrix(rows, sparse=sparse), cols.label_col, cols.qid_col,
                                 cols.weight_col, cols.doc_col, row_sets))
    stamps.mark("arrays")
    return out[0], out[1]


def prepare_frame(df: "DataFrame", valid_df: "DataFrame | None", cols: Columns, num_workers: int | None,
                  repartition: bool, who: str) -> tuple["DataFrame", QueryLayout]:
    """The DataFrame the barrier tasks read (persisted: the check and the training read it), and its layout.

    Training and validation rows are unioned with :data:`VALID_COL` and range-partitioned
    together on the query id, so every worker holds whole queries of both. With
    ``repartition=False`` the input's own partitions are kept (and checked). Every partition must
    hold training rows (counted by the check's pass over the persisted rows): a worker without any
    cannot train.
    """
    from pyspark.sql import functions as F

    require_columns(df, cols.needed())  # df is a DataFrame: train checked it
    cols.check_types(df, who)

    def needed(frame: "DataFrame") -> list[str]:  # the columns training reads; other columns stay behind
        return [*cols.needed(), *([ROW_COL] if ROW_COL in frame.columns else [])]

    check_boolean_columns(df, [c for _, c in cols.objective_cols])
    frames = [df.select(*needed(df)).withColumn(VALID_COL, F.lit(0))]
    if valid_df is not None:
        require_frame(valid_df, f"{who} (valid_df)", cols.needed(training=False))
        cols.check_types(valid_df, f"{who} (valid_df)")
        if not repartition:
            raise ValueError("valid_df needs repartition=True: the validation rows are partitioned together with "
                             "the training rows, on the query id")
        # the row-set columns mark training rows only: a validation row is in no set
        unset = {c: F.lit(False) for _, c in cols.objective_cols}
        frames.append(valid_df.withColumns(unset).select(*needed(valid_df)).withColumn(VALID_COL, F.lit(1)))
    if num_workers is not None:
        check_int("num_workers", num_workers, 1, None)
    if not repartition:
        # one barrier task per partition kept: another num_workers would be ignored
        parts = df.rdd.getNumPartitions()
        if num_workers is not None and num_workers != parts:
            raise ValueError(f"{who}: repartition=False trains one worker per partition of the frame ({parts}), "
                             f"not num_workers={int(num_workers)}; repartition it, or leave num_workers unset")
        num_workers = parts
    elif num_workers is None:
        num_workers = df.sparkSession.sparkContext.defaultParallelism
    slots = df.sparkSession.sparkContext.defaultParallelism
    if num_workers > slots:
        # Spark would retry a barrier stage it cannot start for minutes before failing.
        raise ValueError(f"{who}: num_workers={int(num_workers)} barrier tasks must all run at once, but Spark's "
                         f"default parallelism (its task slots) is {slots}: pass num_workers <= {slots}")
    laid = frames[0]  # the training rows as they are partitioned (their columns: those training reads)
    if repartition:
        rows = [f.withColumn(ROW_COL, F.monotonically_increasing_id()) if ROW_COL not in f.columns else f
                for f in frames]
        whole = rows[0] if len(rows) == 1 else rows[0].unionByName(rows[1])
        laid = repartition_by_query(whole, cols.qid_col, int(num_workers), group_cols=[VALID_COL])
    laid = cols.features_as_array(laid).persist()
    try:
        check_rows(laid, cols, who)
        layout = check_partitions(laid, cols.qid_col, group_cols=[VALID_COL])
        empty = np.flatnonzero(layout.rows_in_group(0) == 0)
        if empty.size:
            raise ValueError(f"{who}: partition {int(empty[0])} of {layout.n_partitions} holds no training rows, "
                             f"and every worker must train on some queries; the data has {layout.n_queries} queries "
                             "(training and validation): pass a smaller num_workers")
    except ValueError:
        laid.unpersist()   # a bad row, a split query or an idle worker: nothing will read the persisted rows
        raise
    return laid, layout


def check_rows(laid: "DataFrame", cols: Columns, who: str) -> None:
    """One pass over the laid-out rows (training and validation) before any worker starts: a null
    query id, a null, NaN or infinite label or weight, a null feature vector, or feature vectors of
    different lengths are a ValueError saying how many rows and naming the first one's query id
    (not a row number inside a partition, which a user cannot find) and whether it is a training
    or a validation row. A worker refusing such rows would fail inside numpy or the framework, or
    leave its peers waiting on the network."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    def usable(c: str) -> Any:  # not null, and for a float column not NaN or infinite
        col = F.col(c)
        if isinstance(laid.schema[c].dataType, (DoubleType, FloatType)):
            return col.isNotNull() & ~F.isnan(col) & (F.abs(col) != float("inf"))
        return col.isNotNull()

    checks = {"qid": (usable(cols.qid_col), f"a null, NaN or infinite query id in column {cols.qid_col!r}",
                      "every row needs its query's id"),
              "label": (usable(cols.label_col), f"a null, NaN or infinite label in column {cols.label_col!r}",
                        "labels must be finite numbers"),
              "x": (F.col(X_COL).isNotNull(), f"a null feature vector in column {cols.features_col!r}",
                    "every row needs its features")}
    if cols.weight_col:
        checks["weight"] = (usable(cols.weight_col), f"a null, NaN or infinite weight in column {cols.weight_col!r}",
                            "weights must be finite numbers")
    first = F.struct(F.col(VALID_COL).alias("valid"), F.col(cols.qid_col).alias("qid"))  # training rows first
    width = F.coalesce(F.col(X_SIZE), F.size(F.col(X_COL)))
    aggs = [a for name, (ok, _, _) in checks.items()
            for a in (F.sum(F.when(~ok, 1).otherwise(0)).alias(f"{name}_n"), F.min(F.when(~ok, first)).alias(name))]
    row = laid.agg(*aggs, F.min(width).alias("w_min"), F.max(width).alias("w_max"),
                   F.min_by(first, width).alias("at_min"), F.max_by(first, width).alias("at_max")).collect()[0]

    def at(found: Any) -> str:
        return f"query {show(found['qid'])} of the {'validation' if found['valid'] else 'training'} rows"

    for name, (_, what, rule) in checks.items():
        n = row[f"{name}_n"] or 0
        if n:
            where = (f"{'validation' if row[name]['valid'] else 'training'} rows" if name == "qid"
                     else f"the first in {at(row[name])}")
            raise ValueError(f"{who}: {n} rows have {what} ({where}); {rule}")
    if row["w_min"] is not None and row["w_min"] != row["w_max"]:
        raise ValueError(f"{who}: the feature vectors differ in length: {row['w_min']} features in "
                         f"{at(row['at_min'])}, {row['w_max']} in {at(row['at_max'])}; every row needs the same "
                         "features, in the same order")


def check_boolean_columns(df: "DataFrame", columns: Sequence[str]) -> None:
    """Each of ``columns`` is a boolean column of ``df``, else a TypeError naming it and its type."""
    from pyspark.sql.types import BooleanType

    for c in columns:
        kind = df.schema[c].dataType
        if not isinstance(kind, BooleanType):
            raise TypeError(f"column {c!r} marks a set of rows and must be boolean, got {kind.simpleString()}")


def check_objective_cols(objective: Any, objective_cols: Any, objective_params: dict[str, Any]) -> None:
    """``objective_cols`` maps row-set parameters of ``objective`` (kind ``row_index``, QBRank's
    ``labeled_rows``) to column names, none of them given in ``objective_params`` too."""
    if not isinstance(objective_cols, Mapping):
        raise TypeError(f"objective_cols must be a dict of parameter -> column, got {type(objective_cols).__name__}")
    if not objective_cols:
        return
    entry = _objectives.resolve(objective)
    objective = entry.name
    declared = entry.loss_class.declared_params()
    for param, col in objective_cols.items():
        kind = declared[param].kind if param in declared else None
        if kind != "row_index":
            sets = [k for k, p in declared.items() if p.kind == "row_index"]
            raise ValueError(f"objective_cols[{param!r}]: a column gives a set of rows, for the row-set parameters "
                             f"of {objective!r} ({sets or 'it has none'}); {param!r} is "
                             + ("not one of its parameters" if kind is None else f"of kind {kind!r}"))
        if not isinstance(col, str) or not col:
            raise TypeError(f"objective_cols[{param!r}] must be a column name, got {show(col)}")
        if param in objective_params:
            raise ValueError(f"{param!r} is given both in objective_params and in objective_cols; give it once")


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


@contextmanager
def cancelled_on_error(sc: "SparkContext") -> Iterator[None]:
    """Spark jobs started in this block (this thread) carry a tag of their own; when the block
    ends with an exception, KeyboardInterrupt included (a notebook's interrupt raises it in the
    driver while Spark runs on), those jobs are cancelled: Spark kills their tasks, a Python
    task's process included, so the workers stop training and free their slots for the next try.
    An error raised while pyspark handled an interrupt (py4j's connection to the JVM, cut by the
    interrupt, can fail the next call once) is reported as the interrupt it hides."""
    tag = f"boostplug-training-{uuid.uuid4().hex}"
    sc.addJobTag(tag)
    try:
        yield
    except BaseException as exc:
        _call_jvm(sc.cancelJobsWithTag, tag)
        interrupt = _interrupt_behind(exc)
        if interrupt is not None and interrupt is not exc:
            raise interrupt from None
        raise
    finally:
        _call_jvm(sc.removeJobTag, tag)


def _call_jvm(method: Callable[[str], Any], tag: str, attempts: int = 3) -> None:
    """``method(tag)`` on the JVM, tried ``attempts`` times: after an interrupt py4j's next call
    can fail once (a new connection to the JVM), and the driver's own error matters more than this."""
    for attempt in range(attempts):
        try:
            method(tag)
            return
        except Exception:  # a Py4JError: the connection, or Spark stopping
            time.sleep(0.2 * (attempt + 1))


def _interrupt_behind(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt ``exc`` is, or was raised while handling (its context chain)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__context__
    return None


def run_barrier(laid: "DataFrame", task: Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]],
                schema: str) -> list[Any]:
    """Run ``task`` once per partition of ``laid``, all partitions at once (a barrier stage: Spark
    starts every task together or none), and collect what the tasks yield."""
    rdd = laid.mapInPandas(task, schema=schema).rdd.barrier().mapPartitions(lambda rows: rows)
    return rdd.collect()


#: How long a barrier task whose connection to another worker broke waits before it fails.
PEER_GRACE_S = 10.0


def train_or_defer(train: Callable[[], T], partition: int, grace: float = PEER_GRACE_S) -> T:
    """``train()`` in barrier task ``partition``; when it fails because the connection to another
    worker broke (:func:`lost_peer`), that worker failed first, with its own error (an objective
    that raised, a bad row): this task waits ``grace`` seconds before failing, so that the error
    Spark reports (its first failed task's) is that one, and Spark cancels this task meanwhile.
    If no such error comes (a worker killed, out of memory), a RuntimeError saying so."""
    try:
        return train()
    except Exception as exc:
        if not lost_peer(exc):
            raise
        time.sleep(grace)
        raise RuntimeError(f"barrier task {partition}: its connection to another worker broke, and no other "
                           f"worker's error reached Spark within {grace:g} s (a worker killed, or out of memory? "
                           f"see the executors' logs): {first_line(exc)}") from exc


@dataclass(frozen=True)
class Job:
    """What every barrier task of one training run needs (it travels pickled with the task)."""

    cols: Columns
    shipped: ShippedEntry  # the objective's entry, built on the executors (a user's may not be registered there)
    objective_params: dict[str, Any]
    params: dict[str, Any]
    num_boost_round: int
    metric: MetricSpec | None
    early_stopping_rounds: int | None
    n_workers: int
    tracker_args: dict[str, Any] | None
    #: Sparse vectors as CSR rows, else dense rows (:func:`keeps_sparse`).
    sparse: bool

    def objective(self, factory: Any, part: Part) -> Any:
        """The framework's objective callable for a worker's training rows ``part``, built on the
        executor from the shipped entry (row-set parameters from the part's columns)."""
        return factory(self.shipped.entry(), **self.objective_params, **part.row_sets)


#: Each framework's worker: its training on its network (:func:`_fit`) and the driver's side of it.
WORKERS: dict[str, Any] = {"xgboost": xgboost_worker, "lightgbm": lightgbm_worker}
#: What each barrier task sends back: its stage stamps, and the first task the model (XGBoost's
#: UBJSON, LightGBM's text).
SCHEMAS = {"xgboost": "model binary, stages string", "lightgbm": "model string, stages string"}


def barrier_task(job: Job, framework: str) -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    """The function each barrier task of ``job`` runs on its partition's rows: it trains one
    worker of ``framework`` (:func:`_fit`); the first task sends back the model."""

    def run(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        import pandas as pd
        from pyspark import BarrierTaskContext

        stamps = Stamps()
        ctx = BarrierTaskContext.get()
        train, valid = part_arrays(batches, job.cols, stamps, sparse=job.sparse)
        model = _fit(framework, job, ctx, train, valid, stamps)
        ctx.barrier()
        stamps.mark("return")
        yield pd.DataFrame({"model": [model if ctx.partitionId() == 0 else None], "stages": [stamps.to_json()]})

    return run


def _fit(framework: str, job: Job, ctx: Any, train: Part, valid: Part, stamps: Stamps) -> Any:
    """One barrier task's worker trained on its rows (``ctx``: the ``BarrierTaskContext``):
    XGBoost's as one worker of XGBoost's own collective (the tracker on the driver;
    :func:`boostplug.frameworks.distributed.xgboost_worker.train_part`), LightGBM's as one machine
    of LightGBM's own socket network, the tasks exchanging their ``host:port`` through the barrier
    (:func:`boostplug.frameworks.distributed.lightgbm_worker.train_part`)."""
    partition, worker = ctx.partitionId(), WORKERS[framework]
    network: dict[str, Any] = {}
    if framework == "lightgbm":
        host = ctx.getTaskInfos()[partition].address.rsplit(":", 1)[0]
        port = worker.free_port(host)
        network = {"machines": ",".join(ctx.allGather(f"{host}:{port}")), "port": port, "n_workers": job.n_workers}
        stamps.mark("join")
    return train_or_defer(lambda: worker.train_part(
        train, job.params, job.objective(worker.objective, train), job.num_boost_round, **network,
        tracker_args=job.tracker_args, task_id=str(partition), valid=valid, metric=job.metric,
        early_stopping_rounds=job.early_stopping_rounds, stamps=stamps), partition)
