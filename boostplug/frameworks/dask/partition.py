"""Query-whole partitions: every query of a Dask frame in one partition, contiguous inside it
(:func:`repartition_by_query` builds such a frame, :func:`from_arrays` one from Dask arrays,
:func:`check_partitions` verifies one). User documentation: :mod:`boostplug.dask`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_int
from ...groups import first_noncontiguous, group_ptr_from_qid, sizes_from_group_ptr
from ..distributed.layout import first_split

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client

__all__ = ["PartitionLayout", "repartition_by_query", "from_arrays", "check_partitions"]

_FIX = (
    "every query must sit whole in one partition (Dask moves partitions, not rows, between "
    "workers, and a ranking loss needs all documents of a query). Call "
    "boostplug.dask.repartition_by_query(frame, qid_col={qid_col!r}) first"
)


def dask_modules() -> tuple[Any, Any, Any]:
    """``(dask, dask.array, dask.dataframe)``, or an ImportError saying which extra to install."""
    try:
        import dask
        import dask.array as da
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - exercised only without dask
        raise ImportError(
            "boostplug.dask needs dask[array,dataframe] and distributed: pip install 'boostplug[dask]'"
        ) from exc
    return dask, da, dd


def _check_qid_col(frame: Any, qid_col: str) -> None:
    if qid_col not in frame.columns:
        raise ValueError(f"no query-id column {qid_col!r} in the frame; its columns are {list(frame.columns)}")


def compute(tasks: Sequence[Any], client: "Client | None") -> Sequence[Any]:
    """The results of delayed ``tasks``, on ``client`` or else Dask's current scheduler."""
    dask, _, _ = dask_modules()
    return client.compute(list(tasks), sync=True) if client is not None else dask.compute(*tasks)


def require_frame(frame: Any, label_col: str, qid_col: str, who: str) -> None:
    """A Dask DataFrame with the label and query-id columns, else an error naming what is wrong."""
    if not isinstance(frame, dask_modules()[2].DataFrame):
        raise TypeError(
            f"{who} takes a Dask DataFrame with {label_col!r} and {qid_col!r} columns, got "
            f"{type(frame).__name__}; see boostplug.dask.repartition_by_query"
        )
    for col in (label_col, qid_col):
        if col not in frame.columns:
            raise ValueError(f"no column {col!r} in the frame; its columns are {list(frame.columns)}")


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
    dask, _, _ = dask_modules()
    chosen = dask.config.get("scheduler", None)
    try:
        from distributed import Client, get_client
    except ImportError:
        return None
    if isinstance(chosen, Client):  # dask.config.set(scheduler=client): that client, whichever is the default
        return chosen
    try:
        current = get_client()
    except ValueError:
        return None
    return current if chosen is None or chosen is current or chosen in ("dask.distributed", "distributed") else None


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
    _, _, dd = dask_modules()
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
        A Dask DataFrame with the same columns (the index is not kept: rows are renumbered), its
        partitions consecutive runs of whole queries balanced by document count, row order within
        a query kept; the cuts, and the order of the queries from pandas and from Dask (whose
        query-id column must be sortable): docs/dask.md, "Partitioning by query, and why".
    """
    _, _, dd = dask_modules()
    import pandas as pd

    if not isinstance(data, (pd.DataFrame, dd.DataFrame)):
        raise TypeError(
            f"repartition_by_query takes a pandas or Dask DataFrame with a {qid_col!r} column, got "
            f"{type(data).__name__}; build one with e.g. pandas.DataFrame(X).assign(label=y, qid=qid)"
        )
    _check_qid_col(data, qid_col)
    in_memory = isinstance(data, pd.DataFrame)
    if in_memory and len(data) == 0:
        raise ValueError("cannot partition an empty frame (no queries)")
    active = _active_client(client)
    if npartitions is not None:
        n = check_int("npartitions", npartitions, 1, None)
    elif active is not None:  # asked of the scheduler now: Client.scheduler_info() is a periodically refreshed copy
        n = max(1, len(active.nthreads()))
    else:
        n = 1 if in_memory else data.npartitions
    return _repartition_pandas(data, qid_col, n, active) if in_memory else _repartition_dask(data, qid_col, n)


# --------------------------------------------------------------------------- arrays


def _as_row_array(values: Any, name: str, chunks: tuple[int, ...]) -> Any:
    """A 1-D Dask array of ``values`` with the row chunks of ``X``."""
    _, da, _ = dask_modules()
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
    _, da, dd = dask_modules()
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


def local_structure(qid: Any, partition: int, qid_col: str) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """``(group_ptr, qid of each query)`` of one partition's query-id values (runs on a worker). A
    missing id (NaN, None) is a ValueError naming the partition and the row within it (which
    ``frame.partitions[p]`` gives): the id itself, the one thing a user could look for, is missing."""
    import pandas as pd

    q = np.asarray(qid)
    missing = np.asarray(pd.isna(q), dtype=bool)
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{int(missing.sum())} rows have a missing query id (NaN or None) in column {qid_col!r}, the "
                         f"first in partition {partition} at its row {row} (counting from 0 within the partition: "
                         f"frame.partitions[{partition}]); every row needs its query's id")
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


def raise_if_split(first_qids: Sequence[NDArray[Any]], qid_col: str) -> None:
    """A query id that starts a run in two partitions is split between them."""
    split = first_split((p, ids.tolist()) for p, ids in enumerate(first_qids))
    if split is not None:
        value, first, again = split
        raise ValueError(f"query {value!r} is split between partitions {first} and {again}; "
                         + _FIX.format(qid_col=qid_col))


def _qid_partitions(data: Any, qid_col: str) -> list[Any]:
    """Delayed objects, one per partition, for the query ids of a Dask frame/series/array."""
    _, da, dd = dask_modules()
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
    dask, _, _ = dask_modules()
    parts = _qid_partitions(data, qid_col)
    tasks = [dask.delayed(local_structure)(p, i, qid_col) for i, p in enumerate(parts)]
    results = compute(tasks, client)
    gps = tuple(r[0] for r in results)
    ids = tuple(r[1] for r in results)
    raise_if_split(ids, qid_col)
    return PartitionLayout(group_ptrs=gps, first_qids=ids)
