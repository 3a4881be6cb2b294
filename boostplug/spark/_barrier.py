"""What the Spark trainers share: the training DataFrame laid out for barrier tasks (features,
label, query id, weight and a validation flag; whole queries per partition, checked), one
partition's rows as numpy arrays (sparse vectors as a scipy CSR matrix), the objective's
registry entry shipped to the executors, and running one barrier stage."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from .. import objectives as _objectives
from .._validation import show
from ..frameworks.distributed.rows import Part
from ._spark import require_columns, require_frame
from .partition import ROW_COL, QueryLayout, check_partitions, repartition_by_query

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark.sql import DataFrame

    from ..frameworks.distributed.stamps import Stamps

__all__ = ["VALID_COL", "X_COL", "X_IDX", "X_SIZE", "Columns", "ShippedObjective", "keeps_sparse", "features_matrix",
           "part_arrays", "prepare_frame", "check_boolean_columns", "check_objective_cols", "check_distributable",
           "driver_host", "run_barrier"]

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
    absent). Without ``sparse``, a sparse vector's absent entries are zeros of a dense array."""
    values = pdf[X_COL].to_numpy()
    if not values.shape[0]:
        return np.zeros((0, 0))
    idx = pdf[X_IDX].to_numpy() if X_IDX in pdf.columns else None
    if idx is None or not any(i is not None for i in idx):
        return np.stack(values).astype(np.float64, copy=False)
    lengths, width = _lengths_and_width(values, idx, pdf[X_SIZE].to_numpy())
    return _csr(values, idx, lengths, width) if sparse else _dense(values, idx, width)


def _lengths_and_width(values: np.ndarray, idx: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's stored entries, and the rows' common length (a ValueError naming a row that differs)."""
    lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=values.shape[0])
    widths = np.array([lengths[r] if i is None else int(sizes[r]) for r, i in enumerate(idx)], dtype=np.int64)
    odd = np.flatnonzero(widths != widths[0])
    if odd.size:
        raise ValueError(f"feature vectors of different lengths: row {int(odd[0])} has {int(widths[odd[0]])} "
                         f"features, row 0 has {int(widths[0])}")
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
    for r, (v, i) in enumerate(zip(values, idx)):
        if i is None:
            X[r] = v
        else:
            X[r, np.asarray(i, dtype=np.intp)] = v
    return X


def part_arrays(batches: Iterator["pd.DataFrame"], cols: Columns, stamps: "Stamps | None" = None, *,
                sparse: bool) -> tuple[Part, Part]:
    """The training and validation rows of one barrier task's partition (runs on an executor);
    ``stamps`` marks when the rows were read (Arrow batches to pandas) and made arrays; ``sparse``:
    sparse vectors as CSR rows (:func:`keeps_sparse`)."""
    import pandas as pd

    frames = list(batches)
    pdf = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {X_COL: [], cols.label_col: [], cols.qid_col: [], VALID_COL: []})
    if stamps is not None:
        stamps.mark("read")
    out = []
    for flag in (0, 1):
        rows = pdf[pdf[VALID_COL] == flag]
        row_sets = {p: np.flatnonzero(rows[c].to_numpy(bool)) for p, c in cols.objective_cols} if flag == 0 else {}
        out.append(Part(features_matrix(rows, sparse=sparse), rows[cols.label_col].to_numpy(np.float64),
                        rows[cols.qid_col].to_numpy(),
                        rows[cols.weight_col].to_numpy(np.float64) if cols.weight_col else None,
                        rows[cols.doc_col].to_numpy() if cols.doc_col else None, row_sets))
    if stamps is not None:
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

    require_frame(df, who)
    require_columns(df, cols.needed())
    def needed(frame: "DataFrame") -> list[str]:  # the columns training reads; other columns stay behind
        return [*cols.needed(), *([ROW_COL] if ROW_COL in frame.columns else [])]

    check_boolean_columns(df, [c for _, c in cols.objective_cols])
    frames = [df.select(*needed(df)).withColumn(VALID_COL, F.lit(0))]
    if valid_df is not None:
        require_frame(valid_df, f"{who} (valid_df)")
        require_columns(valid_df, cols.needed(training=False))
        if not repartition:
            raise ValueError("valid_df needs repartition=True: the validation rows are partitioned together with "
                             "the training rows, on the query id")
        # the row-set columns mark training rows only: a validation row is in no set
        unset = {c: F.lit(False) for _, c in cols.objective_cols}
        frames.append(valid_df.withColumns(unset).select(*needed(valid_df)).withColumn(VALID_COL, F.lit(1)))
    if num_workers is not None and (isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer))
                                    or num_workers < 1):
        raise ValueError(f"num_workers must be an integer >= 1, got {show(num_workers)}")
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
    try:
        layout = check_partitions(laid, cols.qid_col, group_cols=[VALID_COL])
    except ValueError:
        laid.unpersist()   # a split query: nothing will read the persisted rows
        raise
    empty = np.flatnonzero(layout.rows_in_group(0) == 0)
    if empty.size:
        laid.unpersist()
        raise ValueError(f"{who}: partition {int(empty[0])} of {layout.n_partitions} holds no training rows, and "
                         f"every worker must train on some queries; the data has {layout.n_queries} queries (training "
                         "and validation): pass a smaller num_workers")
    return laid, layout


@dataclass(frozen=True)
class ShippedObjective:
    """An objective's entry as the executors need it: a user's objective, registered in the driver
    (say in a notebook) or not registered at all, is not registered in the executors' Python
    workers, so the entry travels with the task (the loss class by value when it is not
    importable) and the executors build the objective from it."""

    name: str
    loss_class: type
    summary: str
    fixed: dict[str, Any]
    methods: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, objective: Any) -> "ShippedObjective":
        """``objective``: a registered name, a ``Loss`` subclass or instance, or an entry."""
        e = _objectives.resolve(objective)
        return cls(e.name, e.loss_class, e.summary, dict(e.fixed), {m: dict(s) for m, s in e.methods.items()})

    def entry(self) -> "_objectives.Objective":
        """The entry again, in this process (not registered here: the adapters take it as it is)."""
        return _objectives.Objective(self.name, self.loss_class, self.summary, MappingProxyType(dict(self.fixed)),
                                     MappingProxyType({m: MappingProxyType(dict(s)) for m, s in self.methods.items()}))


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


def run_barrier(laid: "DataFrame", task: Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]],
                schema: str) -> list[Any]:
    """Run ``task`` once per partition of ``laid``, all partitions at once (a barrier stage: Spark
    starts every task together or none), and collect what the tasks yield."""
    rdd = laid.mapInPandas(task, schema=schema).rdd.barrier().mapPartitions(lambda rows: rows)
    return rdd.collect()
