"""Dask adapter: boostplug objectives and metrics on ``lightgbm.dask`` and ``xgboost.dask``.

Pairwise and listwise losses couple the documents of a query, so each worker's
gradients are exact only when every query sits whole on one worker. Dask moves
*partitions* between workers, never parts of one, so the rule here is: **every
query in one partition, contiguous inside it**.

Example:
    >>> from distributed import Client, LocalCluster
    >>> from boostplug import dask as bpd
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1,
    ...                              env=bpd.WORKER_ENV))                  # doctest: +SKIP
    >>> frame = bpd.repartition_by_query(df, qid_col="qid", npartitions=2)   # doctest: +SKIP
    >>> ranker = bpd.train_lightgbm(client, frame, "mpboost", objective_params={"ddf": "logdd"},
    ...                             n_estimators=100)                      # doctest: +SKIP
    >>> out = bpd.train_xgboost(client, frame, "ndcg_boost", num_boost_round=100)  # doctest: +SKIP
    >>> bpd.evaluate(ranker.predict(frame[features]), frame, ["ndcg@10"])  # doctest: +SKIP

* :func:`repartition_by_query` builds such a frame (from pandas or Dask), with
  partitions balanced by document count; :func:`from_arrays` makes a frame of Dask
  arrays ``X, y, qid`` (one partition per row chunk of ``X``).
* :func:`check_partitions` verifies it in one pass over the query-id column and
  returns the per-partition group structure; :func:`train_lightgbm`,
  :func:`train_xgboost` and :func:`evaluate` call it, so a split query is a
  ``ValueError`` that says to repartition, never silently wrong gradients.
* The helpers only build what the frameworks need (group *sizes* aligned with
  the partitions for ``DaskLGBMRanker.fit(group=...)``, dense sorted query ids for
  ``xgboost.dask.DaskDMatrix(qid=...)``) and call them; the math lives in
  :mod:`boostplug.objectives`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from numpy.typing import NDArray

from .groups import first_noncontiguous, group_ptr_from_qid, sizes_from_group_ptr

if TYPE_CHECKING:  # pragma: no cover
    import dask.array as da
    import dask.dataframe as dd
    import lightgbm as lgb
    import pandas as pd
    from distributed import Client

__all__ = [
    "WORKER_ENV",
    "PartitionLayout",
    "repartition_by_query",
    "from_arrays",
    "check_partitions",
    "lightgbm_group",
    "dense_qid",
    "train_lightgbm",
    "train_xgboost",
    "evaluate",
]

#: Environment for Dask workers (``LocalCluster(env=WORKER_ENV)`` or ``dask worker``'s
#: environment): boostplug's numba kernels run their query loops in parallel and would
#: otherwise start one thread per core in *every* worker process, on top of
#: LightGBM/XGBoost's own threads. Raise it to the worker's ``nthreads`` when a worker
#: has several. (The nanny already pins OMP/MKL/OpenBLAS to one thread.)
WORKER_ENV: dict[str, str] = {"NUMBA_NUM_THREADS": "1"}

_FIX = (
    "every query must sit whole in one partition (Dask moves partitions, not rows, between "
    "workers, and a ranking loss needs all documents of a query). Call "
    "boostplug.dask.repartition_by_query(frame, qid_col={qid_col!r}) first"
)


def _dask_modules() -> tuple[Any, Any, Any]:
    try:
        import dask
        import dask.array as da
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - exercised only without dask
        raise ImportError(
            "boostplug.dask needs dask[array,dataframe] and distributed: pip install 'boostplug[dask]'"
        ) from exc
    return dask, da, dd


def _is_dask_frame(obj: Any) -> bool:
    _, _, dd = _dask_modules()
    return isinstance(obj, dd.DataFrame)


def _check_qid_col(frame: Any, qid_col: str) -> None:
    if qid_col not in frame.columns:
        raise ValueError(f"no query-id column {qid_col!r} in the frame; its columns are {list(frame.columns)}")


# --------------------------------------------------------------------------- repartition


def _balanced_cuts(sizes: NDArray[np.int64], npartitions: int) -> NDArray[np.int64]:
    """Query indices ``0 = c_0 < c_1 < ... < c_k = n_queries`` splitting ``sizes`` into
    ``k = min(npartitions, n_queries)`` contiguous runs whose document counts are as even as
    whole queries allow: each cut is the query boundary nearest to ``j * n_docs / k``."""
    n_q = sizes.shape[0]
    k = min(npartitions, n_q)
    cum = np.concatenate(([0], np.cumsum(sizes)))
    targets = cum[-1] * np.arange(1, k) / k
    right = np.clip(np.searchsorted(cum, targets), 1, n_q)
    left = right - 1
    nearest = np.where(targets - cum[left] <= cum[right] - targets, left, right)
    cuts = np.concatenate(([0], nearest, [n_q])).astype(np.int64)
    # Keep every partition non-empty: cut j strictly between its neighbours.
    for j in range(1, k):
        cuts[j] = max(cuts[j], cuts[j - 1] + 1)
    for j in range(k - 1, 0, -1):
        cuts[j] = min(cuts[j], cuts[j + 1] - 1)
    return cuts


def _active_client(client: "Client | None") -> "Client | None":
    """``client``, else the running ``distributed`` client unless ``dask.config`` picked another
    scheduler (``scheduler="sync"``, ``"threads"``...) for the current block."""
    if client is not None:
        return client
    try:
        from distributed import get_client

        current = get_client()
    except (ImportError, ValueError):
        return None
    dask, _, _ = _dask_modules()
    chosen = dask.config.get("scheduler", None)
    if chosen is None or chosen is current or chosen in ("dask.distributed", "distributed"):
        return current
    return None


def _default_npartitions(current: int, client: "Client | None") -> int:
    if client is None:
        return current
    return max(1, len(client.scheduler_info()["workers"]))


def _check_npartitions(npartitions: Any) -> int:
    if isinstance(npartitions, bool) or not isinstance(npartitions, (int, np.integer)) or npartitions < 1:
        raise ValueError(f"npartitions must be an integer >= 1, got {npartitions!r}")
    return int(npartitions)


def _identity(piece: Any) -> Any:
    return piece


def _repartition_pandas(df: "pd.DataFrame", qid_col: str, npartitions: int,
                        client: "Client | None") -> "dd.DataFrame":
    """Cut a pandas frame at balanced query boundaries; each piece becomes one partition.

    With a ``distributed`` client the pieces are scattered (spread over the workers in turn),
    so the result is already in worker memory, balanced, and the scheduler never holds the data.
    (``dd.from_pandas(df, npartitions=1).repartition(...)`` would put the whole frame into the
    task graph, then on one worker, and every partition sliced from it would stay there.)
    Without one, each piece is one independent task (``from_map``) for the local scheduler.
    """
    _, _, dd = _dask_modules()
    gp, perm = group_ptr_from_qid(df[qid_col].to_numpy(), regroup=True)
    already_grouped = bool(np.array_equal(perm, np.arange(perm.shape[0])))
    ordered = (df if already_grouped else df.iloc[perm]).reset_index(drop=True)
    cuts = gp[_balanced_cuts(sizes_from_group_ptr(gp), npartitions)]
    pieces = [ordered.iloc[int(a):int(b)] for a, b in zip(cuts[:-1], cuts[1:])]
    # Divisions on the row position: partition i holds rows cuts[i] .. cuts[i+1] - 1.
    divisions = [int(c) for c in cuts[:-1]] + [int(cuts[-1]) - 1]
    meta = ordered.iloc[:0]
    if client is None:
        return dd.from_map(_identity, pieces, meta=meta, divisions=divisions, enforce_metadata=False)
    frame = dd.from_delayed(client.scatter(pieces), meta=meta, divisions=divisions, verify_meta=False)
    # Persisting futures costs nothing, and Dask (2026.8) cannot turn an unpersisted
    # from_delayed frame into an array (``to_dask_array`` fails with a missing dependency).
    return client.persist(frame)


def _repartition_dask(frame: "dd.DataFrame", qid_col: str, npartitions: int) -> "dd.DataFrame":
    """Shuffle whole queries into ``npartitions`` balanced partitions (queries in sorted-qid order)."""
    import pandas as pd

    counts = frame[qid_col].value_counts().compute().sort_index()
    cuts = _balanced_cuts(counts.to_numpy().astype(np.int64), npartitions)
    k = cuts.shape[0] - 1
    part_of_query = pd.Series(np.repeat(np.arange(k), np.diff(cuts)), index=counts.index)
    rank_of_query = pd.Series(np.arange(counts.shape[0]), index=counts.index)
    # A global row number keeps the original row order inside each query (the shuffle doesn't).
    row = frame[qid_col].map_partitions(lambda s: pd.Series(np.ones(len(s), np.int64), index=s.index),
                                        meta=(qid_col, "int64")).cumsum()
    tagged = frame.assign(
        __part=frame[qid_col].map(part_of_query, meta=(qid_col, "int64")),
        __rank=frame[qid_col].map(rank_of_query, meta=(qid_col, "int64")),
        __row=row,
    )
    shuffled = tagged.set_index("__part", divisions=list(range(k)) + [k - 1], sort=True)

    def _order(part: "pd.DataFrame") -> "pd.DataFrame":
        return part.sort_values(["__rank", "__row"]).drop(columns=["__rank", "__row"]).reset_index(drop=True)

    meta = tagged._meta.drop(columns=["__part", "__rank", "__row"]).reset_index(drop=True)
    return shuffled.map_partitions(_order, meta=meta)


def repartition_by_query(
    data: Any, qid_col: str = "qid", *, npartitions: int | None = None, client: "Client | None" = None
) -> "dd.DataFrame":
    """A Dask DataFrame in which every query sits whole, and contiguous, in one partition.

    Args:
        data: a pandas or Dask DataFrame with a query-id column. Rows of a query may be
            scattered (in pandas, across the frame; in Dask, across partitions).
        qid_col: the query-id column.
        npartitions: how many partitions (at most one per query). Default: the number of
            workers of the client, else the input's partition count (1 for pandas).
        client: a ``distributed`` client. Default: the running client, unless
            ``dask.config.set(scheduler=...)`` chose another scheduler. From pandas, the
            partitions are scattered to its workers (spread evenly, already in memory there).

    Returns:
        A Dask DataFrame with the same columns (the index is not kept: rows are renumbered).
        Partitions hold consecutive runs of whole queries, balanced by document count (each
        cut at the query boundary nearest an even split, so a partition is off by less than
        one query's size). Row order within a query is kept. From pandas, queries keep their
        order of first appearance and no data moves through a shuffle or the task graph; from
        Dask, queries come out in sorted-qid order after one shuffle (the query-id column must
        be sortable).
    """
    _, _, dd = _dask_modules()
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        _check_qid_col(data, qid_col)
        if len(data) == 0:
            raise ValueError("cannot partition an empty frame (no queries)")
        active = _active_client(client)
        n = _default_npartitions(1, active) if npartitions is None else _check_npartitions(npartitions)
        return _repartition_pandas(data, qid_col, n, active)
    if isinstance(data, dd.DataFrame):
        _check_qid_col(data, qid_col)
        active = _active_client(client)
        n = _default_npartitions(data.npartitions, active) if npartitions is None else _check_npartitions(npartitions)
        return _repartition_dask(data, qid_col, n)
    raise TypeError(
        f"repartition_by_query takes a pandas or Dask DataFrame with a {qid_col!r} column, got "
        f"{type(data).__name__}; build one with e.g. pandas.DataFrame(X).assign(label=y, qid=qid)"
    )


# --------------------------------------------------------------------------- arrays


def _as_row_array(values: Any, name: str, chunks: tuple[int, ...]) -> Any:
    """A 1-D Dask array of ``values`` with the row chunks of ``X``."""
    _, da, _ = _dask_modules()
    arr = values if isinstance(values, da.Array) else np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if isinstance(arr, da.Array) and any(np.isnan(c) for c in arr.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
    if arr.shape[0] != sum(chunks):
        raise ValueError(f"{name} has {arr.shape[0]} rows but X has {sum(chunks)}")
    return arr.rechunk((chunks,)) if isinstance(arr, da.Array) else da.from_array(arr, chunks=(chunks,))


def from_arrays(
    X: Any,
    y: Any,
    qid: Any,
    *,
    feature_names: Sequence[str] | None = None,
    label_col: str = "label",
    qid_col: str = "qid",
) -> "dd.DataFrame":
    """A Dask DataFrame of features, label and query id from Dask arrays, one partition per row chunk of ``X``.

    The frame the other functions take: train and evaluate on it directly when every query
    already sits whole in one chunk of ``X`` (:func:`check_partitions` tells), else pass it
    through :func:`repartition_by_query` first.

    Args:
        X: 2-D Dask array of features (row chunks = partitions; known chunk sizes).
        y: labels, a 1-D Dask or NumPy array (rechunked to ``X``'s rows).
        qid: query ids, a 1-D Dask or NumPy array (rechunked to ``X``'s rows).
        feature_names: column names for ``X`` (default ``f0, f1, ...``).
        label_col, qid_col: names of the label and query-id columns.

    Raises:
        TypeError: ``X`` is not a Dask array.
        ValueError: shapes or lengths that disagree, unknown chunk sizes, or a feature name
            equal to the label or query-id column.
    """
    _, da, dd = _dask_modules()
    if not isinstance(X, da.Array):
        raise TypeError(
            f"from_arrays takes X as a 2-D Dask array, got {type(X).__name__}; for in-memory data "
            "use repartition_by_query(pandas.DataFrame(X).assign(label=y, qid=qid))"
        )
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first")
    names = [f"f{i}" for i in range(X.shape[1])] if feature_names is None else list(feature_names)
    if len(names) != X.shape[1]:
        raise ValueError(f"{len(names)} feature names for {X.shape[1]} columns of X")
    clash = sorted({label_col, qid_col} & set(names))
    if clash or label_col == qid_col or len(set(names)) != len(names):
        raise ValueError(
            f"column names must be distinct: features {names}, label {label_col!r}, query id {qid_col!r}"
        )
    rows = tuple(int(c) for c in X.chunks[0])
    label = _as_row_array(y, "y", rows)
    query = _as_row_array(qid, "qid", rows)
    frame = dd.from_dask_array(X.rechunk({1: -1}), columns=names)
    # Same row chunks -> same divisions: the columns line up partition by partition.
    return frame.assign(**{label_col: dd.from_dask_array(label), qid_col: dd.from_dask_array(query)})


# --------------------------------------------------------------------------- check


@dataclass(frozen=True)
class PartitionLayout:
    """The query structure of a partitioned frame, as found by :func:`check_partitions`.

    Attributes:
        group_ptrs: one partition-local ``group_ptr`` per partition.
        first_qids: the query ids in order of appearance, one array per partition.
    """

    group_ptrs: tuple[NDArray[np.int64], ...]
    first_qids: tuple[NDArray[Any], ...]

    @property
    def docs_per_partition(self) -> NDArray[np.int64]:
        return np.array([int(g[-1]) for g in self.group_ptrs], dtype=np.int64)

    @property
    def queries_per_partition(self) -> NDArray[np.int64]:
        return np.array([g.shape[0] - 1 for g in self.group_ptrs], dtype=np.int64)

    @property
    def query_offsets(self) -> NDArray[np.int64]:
        """Global index of each partition's first query (queries numbered in partition order)."""
        return np.concatenate(([0], np.cumsum(self.queries_per_partition)[:-1])).astype(np.int64)

    def group_sizes(self, partition: int) -> NDArray[np.int64]:
        return sizes_from_group_ptr(self.group_ptrs[partition])


def _local_structure(qid: Any, partition: int, qid_col: str) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """``(group_ptr, qid of each query)`` of one partition's query-id values (runs on a worker)."""
    q = np.asarray(qid)
    bad = first_noncontiguous(q)
    if bad is not None:
        row, first_row = bad
        raise ValueError(
            f"query {q[row].item() if hasattr(q[row], 'item') else q[row]!r} is not contiguous inside "
            f"partition {partition}: its rows start at local row {first_row} and it appears again at "
            f"local row {row}; " + _FIX.format(qid_col=qid_col)
        )
    gp = group_ptr_from_qid(q)
    return gp, q[gp[:-1]]


def _raise_if_split(first_qids: Sequence[NDArray[Any]], qid_col: str) -> None:
    """A query id that starts a run in two partitions is split between them."""
    seen: dict[Any, int] = {}
    for p, ids in enumerate(first_qids):
        for value in ids.tolist():
            if value in seen:
                raise ValueError(
                    f"query {value!r} is split between partitions {seen[value]} and {p}; "
                    + _FIX.format(qid_col=qid_col)
                )
            seen[value] = p


def _qid_partitions(data: Any, qid_col: str) -> list[Any]:
    """Delayed objects, one per partition, for the query ids of a Dask frame/series/array."""
    _, da, dd = _dask_modules()
    if isinstance(data, dd.DataFrame):
        _check_qid_col(data, qid_col)
        data = data[qid_col]
    if isinstance(data, dd.Series):
        return list(data.to_delayed())
    if isinstance(data, da.Array):
        if data.ndim != 1:
            raise ValueError(f"a query-id array must be one-dimensional, got shape {data.shape}")
        return list(data.to_delayed().ravel())
    raise TypeError(
        f"check_partitions takes a Dask DataFrame (with a {qid_col!r} column), a Dask Series or a "
        f"1-D Dask array of query ids, got {type(data).__name__}"
    )


def check_partitions(data: Any, qid_col: str = "qid", *, client: "Client | None" = None) -> PartitionLayout:
    """Check that every query sits whole, and contiguous, in one partition.

    One pass over the query-id column, computed where the partitions live; only each
    partition's query ids and sizes come back.

    Args:
        data: a Dask DataFrame with ``qid_col``, or a Dask Series / 1-D Dask array of query ids
            (chunks = the partitions that will be trained on).
        qid_col: the query-id column of a DataFrame.
        client: a ``distributed`` client (default: Dask's current scheduler).

    Returns:
        :class:`PartitionLayout` (partition-local group pointers, the query ids).

    Raises:
        ValueError: a query split between two partitions, or not contiguous within one,
            naming the query and the partitions and saying to call :func:`repartition_by_query`.
    """
    dask, _, _ = _dask_modules()
    parts = _qid_partitions(data, qid_col)
    tasks = [dask.delayed(_local_structure)(p, i, qid_col) for i, p in enumerate(parts)]
    results = client.compute(tasks, sync=True) if client is not None else dask.compute(*tasks)
    gps = tuple(r[0] for r in results)
    ids = tuple(r[1] for r in results)
    _raise_if_split(ids, qid_col)
    return PartitionLayout(group_ptrs=gps, first_qids=ids)


# --------------------------------------------------------------------------- training


def _features(frame: "dd.DataFrame", feature_cols: Sequence[str] | None, drop: Sequence[str]) -> list[str]:
    if feature_cols is None:
        return [c for c in frame.columns if c not in drop]
    missing = [c for c in feature_cols if c not in frame.columns]
    if missing:
        raise ValueError(f"feature columns {missing} are not in the frame; its columns are {list(frame.columns)}")
    return list(feature_cols)


def _require_frame(frame: Any, label_col: str, qid_col: str, who: str) -> None:
    if not _is_dask_frame(frame):
        raise TypeError(
            f"{who} takes a Dask DataFrame with {label_col!r} and {qid_col!r} columns, got "
            f"{type(frame).__name__}; see boostplug.dask.repartition_by_query"
        )
    for col in (label_col, qid_col):
        if col not in frame.columns:
            raise ValueError(f"no column {col!r} in the frame; its columns are {list(frame.columns)}")


def _check_row_bound_params(objective_params: dict[str, Any] | None) -> dict[str, Any]:
    """Objective parameters that hold row indices of the whole training set cannot be split
    between workers: each worker's objective sees its own rows, numbered from 0."""
    params = dict(objective_params or {})
    if params.get("pairs") is not None:
        raise ValueError(
            "objective_params['pairs'] holds row indices of the whole training set, but each Dask "
            "worker's objective sees only its own rows (numbered from 0): explicit pairs cannot be "
            "used in distributed training. Use the grade-derived pairs (label_pairs=True) or train on "
            "one machine with boostplug.lightgbm / boostplug.xgboost"
        )
    return params


def _first_nonfinite(labels: Any) -> tuple[int, float, int] | None:
    """``(local row, label, how many)`` of the first NaN/infinite label of a partition (runs on a worker)."""
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(y))
    return (int(bad[0]), float(y[bad[0]]), int(bad.size)) if bad.size else None


def _check_finite_labels(frame: "dd.DataFrame", label_col: str, layout: PartitionLayout,
                         client: "Client | None") -> None:
    """LightGBM stores a NaN label as 0 and an infinite one as 1e38 before the objective sees it:
    refuse them here, naming the row."""
    dask, _, _ = _dask_modules()
    tasks = [dask.delayed(_first_nonfinite)(p) for p in frame[label_col].to_delayed()]
    results = client.compute(tasks, sync=True) if client is not None else dask.compute(*tasks)
    starts = np.concatenate(([0], np.cumsum(layout.docs_per_partition)))
    for p, found in enumerate(results):
        if found is not None:
            local, value, count = found
            raise ValueError(
                f"labels must be finite (LightGBM would silently train on a NaN label as 0); row "
                f"{int(starts[p]) + local} of column {label_col!r} (partition {p}, local row {local}) has "
                f"label {value} ({count} non-finite in that partition)"
            )


def lightgbm_group(layout: PartitionLayout) -> "da.Array":
    """Group sizes as a Dask array with one chunk per partition (what ``DaskLGBMRanker.fit(group=...)``
    splits alongside ``X``: chunk ``i`` holds the sizes of partition ``i``'s queries)."""
    _, da, _ = _dask_modules()
    sizes = np.concatenate([layout.group_sizes(i) for i in range(len(layout.group_ptrs))])
    return da.from_array(sizes, chunks=(tuple(int(n) for n in layout.queries_per_partition),))


def train_lightgbm(
    client: "Client",
    frame: "dd.DataFrame",
    objective: str,
    *,
    objective_params: dict[str, Any] | None = None,
    label_col: str = "label",
    qid_col: str = "qid",
    feature_cols: Sequence[str] | None = None,
    **ranker_params: Any,
) -> "lgb.DaskLGBMRanker":
    """Fit ``lightgbm.dask.DaskLGBMRanker`` with a boostplug objective on a query-partitioned frame.

    Checks the partitions (:func:`check_partitions`) and that every label is finite (LightGBM
    would store a NaN label as 0 unseen), builds the group sizes aligned with
    them and calls ``DaskLGBMRanker(client=client, objective=sklearn_objective(objective,
    **objective_params), **ranker_params).fit(X, y, group=sizes)``.

    Args:
        client: the ``distributed`` client.
        frame: Dask DataFrame with features, ``label_col`` and ``qid_col``
            (see :func:`repartition_by_query`).
        objective: a boostplug objective name (:func:`boostplug.objectives.names`).
        objective_params: the objective's parameters.
        feature_cols: default: every column but the label and query id.
        **ranker_params: ``DaskLGBMRanker`` parameters (``n_estimators``, ``learning_rate``...).

    Returns:
        The fitted ``DaskLGBMRanker`` (``.to_local()`` gives an ``LGBMRanker``).
    """
    import lightgbm as lgb

    from .lightgbm import sklearn_objective

    _require_frame(frame, label_col, qid_col, "train_lightgbm")
    if "objective" in ranker_params:
        raise ValueError("pass the boostplug objective name as `objective`, not in the ranker parameters")
    obj = sklearn_objective(objective, **_check_row_bound_params(objective_params))
    layout = check_partitions(frame, qid_col, client=client)
    _check_finite_labels(frame, label_col, layout, client)
    cols = _features(frame, feature_cols, (label_col, qid_col))
    ranker = lgb.DaskLGBMRanker(client=client, objective=obj, **ranker_params)
    return ranker.fit(frame[cols], frame[label_col], group=lightgbm_group(layout))


def dense_qid(frame: "dd.DataFrame", layout: PartitionLayout, qid_col: str = "qid") -> "dd.Series":
    """Query ids renumbered ``0, 1, 2, ...`` in partition order (int64, sorted across partitions), as
    ``xgboost.dask.DaskDMatrix(qid=...)`` wants: XGBoost needs numeric ids, non-decreasing
    within each worker's data (else it re-sorts every worker's data)."""
    import pandas as pd

    offsets = layout.query_offsets

    def _codes(part: "pd.DataFrame", partition_info: dict[str, Any] | None = None) -> "pd.Series":
        i = partition_info["number"] if partition_info is not None else 0
        q = part[qid_col].to_numpy()
        gp = group_ptr_from_qid(q) if q.shape[0] else np.zeros(1, dtype=np.int64)
        codes = offsets[i] + np.repeat(np.arange(gp.shape[0] - 1, dtype=np.int64), np.diff(gp))
        return pd.Series(codes, index=part.index, name=qid_col)

    return frame.map_partitions(_codes, meta=(qid_col, "int64"))


def train_xgboost(
    client: "Client",
    frame: "dd.DataFrame",
    objective: str,
    *,
    objective_params: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    num_boost_round: int = 100,
    label_col: str = "label",
    qid_col: str = "qid",
    feature_cols: Sequence[str] | None = None,
    **train_kwargs: Any,
) -> dict[str, Any]:
    """``xgboost.dask.train`` with a boostplug objective on a query-partitioned frame.

    Checks the partitions, builds ``DaskDMatrix(client, X, y, qid=dense_qid)`` and calls
    ``xgboost.dask.train(client, boostplug.xgboost.params(**params), dtrain, num_boost_round,
    obj=boostplug.xgboost.objective(objective, **objective_params), **train_kwargs)``.

    Returns:
        XGBoost's ``{"booster": Booster, "history": {...}}``.
    """
    import xgboost.dask as xgb_dask

    from .xgboost import objective as xgb_objective
    from .xgboost import params as xgb_params

    _require_frame(frame, label_col, qid_col, "train_xgboost")
    obj = xgb_objective(objective, **_check_row_bound_params(objective_params))
    layout = check_partitions(frame, qid_col, client=client)
    cols = _features(frame, feature_cols, (label_col, qid_col))
    dtrain = xgb_dask.DaskDMatrix(client, frame[cols], frame[label_col], qid=dense_qid(frame, layout, qid_col))
    return xgb_dask.train(client, xgb_params(**(params or {})), dtrain, num_boost_round, obj=obj, **train_kwargs)


# --------------------------------------------------------------------------- evaluation


def _metric_names(metrics: str | Sequence[str]) -> list[str]:
    from .metrics import by_name, parse_name

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics must name at least one metric, e.g. ['ndcg@10']")
    for name in names:
        by_name(name)  # ValueError listing the valid names
        if parse_name(name)[0] in ("r1", "r2"):
            raise ValueError(
                f"metric {name!r} averages over critical pairs, not queries; evaluate() reduces "
                "per-query values: use a query-averaged metric (ndcg@k, map@k, p@k, mrr, err)"
            )
    return names


def _partition_metrics(scores: Any, labels: Any, qid: Any, partition: int, qid_col: str,
                       names: list[str], per_query: bool) -> dict[str, Any]:
    """Per-query metric values of one partition, summed (runs where the partition lives)."""
    from .metrics import by_name

    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if s.shape[0] != y.shape[0]:
        raise ValueError(
            f"partition {partition}: {s.shape[0]} scores for {y.shape[0]} rows; the scores must be "
            "partitioned like the frame (e.g. the output of predict on the same frame)"
        )
    gp, ids = _local_structure(qid, partition, qid_col)
    out: dict[str, Any] = {"qids": ids, "sums": {}, "counts": {}, "values": {}}
    for name in names:
        values = np.asarray(by_name(name)(s, y, gp, per_query=True), dtype=np.float64)
        kept = values[~np.isnan(values)]
        out["sums"][name] = float(kept.sum())
        out["counts"][name] = int(kept.shape[0])
        if per_query:
            out["values"][name] = values
    return out


def _partitions_1d(values: Any, what: str) -> list[Any]:
    _, da, dd = _dask_modules()
    if isinstance(values, (dd.Series, dd.DataFrame)):
        return list(values.to_delayed())
    if isinstance(values, da.Array):
        return list(values.to_delayed().ravel())
    raise TypeError(
        f"{what} must be a Dask Series or Dask array partitioned like the frame, got {type(values).__name__}"
    )


def evaluate(
    scores: Any,
    frame: "dd.DataFrame",
    metrics: str | Sequence[str] = ("ndcg@10",),
    *,
    label_col: str = "label",
    qid_col: str = "qid",
    per_query: bool = False,
    client: "Client | None" = None,
) -> dict[str, Any]:
    """boostplug metrics of distributed scores: per-query values computed where the data lives.

    Each partition computes its queries' values with :func:`boostplug.metrics.by_name`
    (``per_query=True``) and sends back only their sum and count (and, on request, the values);
    the client reduces them to the mean over queries, skipping queries whose value is NaN exactly
    as the single-machine metric does. A query split between partitions is a ``ValueError``.

    Args:
        scores: Dask array or Series of scores, one chunk per partition of ``frame`` (e.g.
            ``DaskLGBMRanker.predict(frame[features])`` or ``xgboost.dask.predict``).
        frame: the Dask DataFrame with ``label_col`` and ``qid_col``.
        metrics: metric names (``"ndcg@10"``, ``"map@10"``, ``"p@5"``, ``"mrr"``, ``"err@10"``...).
        per_query: also return the per-query values.
        client: a ``distributed`` client (default: Dask's current scheduler).

    Returns:
        ``{name: mean}``, plus, with ``per_query=True``, ``"per_query"``: a pandas DataFrame
        with one row per query (``qid_col`` and one column per metric), in partition order.
    """
    dask, _, _ = _dask_modules()
    import pandas as pd

    names = _metric_names(metrics)
    _require_frame(frame, label_col, qid_col, "evaluate")
    score_parts = _partitions_1d(scores, "scores")
    label_parts = list(frame[label_col].to_delayed())
    qid_parts = list(frame[qid_col].to_delayed())
    if len(score_parts) != len(label_parts):
        raise ValueError(
            f"scores have {len(score_parts)} partitions but the frame has {len(label_parts)}; "
            "predict on the same frame so the partitions line up"
        )
    task = dask.delayed(_partition_metrics)
    tasks = [task(s, y, q, i, qid_col, names, per_query)
             for i, (s, y, q) in enumerate(zip(score_parts, label_parts, qid_parts))]
    results = client.compute(tasks, sync=True) if client is not None else dask.compute(*tasks)
    _raise_if_split([r["qids"] for r in results], qid_col)
    out: dict[str, Any] = {}
    for name in names:
        total = sum(r["sums"][name] for r in results)
        count = sum(r["counts"][name] for r in results)
        out[name] = total / count if count else float("nan")
    if per_query:
        table = {qid_col: np.concatenate([r["qids"] for r in results])}
        for name in names:
            table[name] = np.concatenate([r["values"][name] for r in results])
        out["per_query"] = pd.DataFrame(table)
    return out
