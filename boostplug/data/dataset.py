"""The ranking data container: features, labels and query groups of one data set."""

from __future__ import annotations

from dataclasses import dataclass, replace
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._features import check_features
from .._validation import GroupedRows
from ..groups import (check_group_ptr, first_varying_row, group_ptr_from_qid, group_ptr_from_sizes, qid_from_group_ptr,
                      sizes_from_group_ptr)

__all__ = ["RankingData", "concat"]


def _check_y(y: ArrayLike, n: int) -> NDArray[np.float64]:
    arr = np.asarray(y)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"y must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"y has {arr.shape[0]} rows but X has {n}")
    return np.asarray(arr, dtype=np.float64)


@dataclass(eq=False)
class RankingData(GroupedRows):
    """Features, labels and query groups of one ranking data set.

    The documents of query ``q`` are the rows ``group_ptr[q]:group_ptr[q + 1]``
    (see :mod:`boostplug.groups`). ``qid`` keeps the query ids as they were read
    (LETOR files: the ``qid:`` values, in file order, not sorted); it is
    constant within each query. Missing features are zero (the LETOR/SVMlight
    convention).

    Attributes:
        X: ``(n_docs, n_features)`` dense float64 array, or a scipy CSR matrix.
        y: ``(n_docs,)`` float64 relevance labels.
        qid: ``(n_docs,)`` query id per row (int64 when read from a file).
        group_ptr: ``(n_queries + 1,)`` int64 offsets.
        comments: one string per row (the text after ``#`` in LETOR files), or None.

    Shapes and the group pointer are validated on construction (``ValueError``).
    ``qid=None`` or ``group_ptr=None`` is filled in from the other one.
    """

    X: NDArray[np.float64] | sp.csr_matrix
    y: NDArray[np.float64]
    qid: NDArray | None = None
    group_ptr: NDArray[np.int64] | None = None
    comments: list[str] | None = None

    def __post_init__(self) -> None:
        # NaN, inf and zero columns are data here; the boosters refuse what they cannot fit
        self.X = check_features(self.X, dense=False, allow_inf=True, allow_empty=True)
        n = self.X.shape[0]
        self.y = _check_y(self.y, n)
        if self.group_ptr is None and self.qid is None:
            raise ValueError("RankingData needs qid or group_ptr (or both)")
        if self.group_ptr is None:
            self.group_ptr = group_ptr_from_qid(self.qid, caller="RankingData")  # type: ignore[assignment]
        self.group_ptr = check_group_ptr(self.group_ptr, n_docs=n)
        if self.qid is None:
            self.qid = qid_from_group_ptr(self.group_ptr)
        self.qid = self._check_qid(np.asarray(self.qid), n)
        if self.comments is not None:
            self.comments = list(self.comments)
            if len(self.comments) != n:
                raise ValueError(f"comments has {len(self.comments)} entries but X has {n} rows")

    def _check_qid(self, qid: NDArray, n: int) -> NDArray:
        if qid.ndim != 1 or qid.shape[0] != n:
            raise ValueError(f"qid must have shape ({n},), got {qid.shape}")
        varying = first_varying_row(qid, self.group_ptr) if n else None
        if varying is not None:
            r, q = varying
            g = self.group_ptr
            raise ValueError(
                f"qid is not constant within query {q} (rows {int(g[q])}..{int(g[q + 1]) - 1}): "
                f"row {r} has qid {qid[r].item()!r}, the query's first row has {qid[g[q]].item()!r}"
            )
        return qid

    # --- shape (and GroupedRows' n_docs, n_queries) -----------------------------
    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def sizes(self) -> NDArray[np.int64]:
        """Documents per query (LightGBM's ``group``)."""
        return sizes_from_group_ptr(self.group_ptr)

    def __repr__(self) -> str:
        kind = "CSR" if sp.issparse(self.X) else "dense"
        return (
            f"RankingData(n_queries={self.n_queries}, n_docs={self.n_docs}, "
            f"n_features={self.n_features}, X={kind}, comments={self.comments is not None})"
        )

    # --- selection ---------------------------------------------------------------
    def rows_of(self, query_indices: ArrayLike) -> NDArray[np.int64]:
        """Row indices of the given queries, queries in the given order."""
        q = _check_query_indices(query_indices, self.n_queries)
        g = self.group_ptr
        starts, sizes = g[q], g[q + 1] - g[q]
        # Row r of the output is starts[k] + (r - offset[k]) for the k-th chosen query.
        offsets = np.cumsum(sizes) - sizes
        return (np.repeat(starts - offsets, sizes) + np.arange(int(sizes.sum()))).astype(np.int64)

    def subset(self, query_indices: ArrayLike) -> "RankingData":
        """The given queries (0-based indices, in the given order), rows contiguous.

        Raises ``ValueError`` for an index out of range or repeated.
        """
        q = _check_query_indices(query_indices, self.n_queries)
        rows = self.rows_of(q)
        comments = None if self.comments is None else [self.comments[i] for i in rows]
        return RankingData(self.X[rows], self.y[rows], self.qid[rows], group_ptr_from_sizes(self.sizes[q]), comments)

    @classmethod
    def concat(cls, *parts: "RankingData") -> "RankingData":
        """Concatenate data sets (queries of the first, then of the second, ...).

        All parts must have the same number of features and the same kind of
        ``X`` (dense or CSR). Comments are kept only if every part has them.
        Queries are never merged, even if two parts use the same qid.
        """
        if not parts:
            raise ValueError("concat needs at least one RankingData")
        for i, p in enumerate(parts):
            if not isinstance(p, RankingData):
                raise TypeError(f"concat: part {i} is a {type(p).__name__}, not RankingData")
        widths = [p.n_features for p in parts]
        if len(set(widths)) != 1:
            raise ValueError(f"concat: the parts have different numbers of features {widths}")
        kinds = [sp.issparse(p.X) for p in parts]
        if len(set(kinds)) != 1:
            raise TypeError("concat: mixing dense and CSR feature matrices; convert one first")
        X = sp.vstack([p.X for p in parts], format="csr") if kinds[0] else np.concatenate([p.X for p in parts])
        y = np.concatenate([p.y for p in parts])
        qid = np.concatenate([p.qid for p in parts])
        ptr = group_ptr_from_sizes(np.concatenate([p.sizes for p in parts]))
        kept = all(p.comments is not None for p in parts)
        return cls(X, y, qid, ptr, [c for p in parts for c in p.comments] if kept else None)  # type: ignore[union-attr]

    def with_n_features(self, n_features: int) -> "RankingData":
        """The same data widened with zero columns to ``n_features`` columns."""
        if n_features < self.n_features:
            raise ValueError(f"cannot narrow {self.n_features} features to {n_features}")
        if n_features == self.n_features:
            return self
        if sp.issparse(self.X):
            return replace(self, X=sp.csr_matrix((self.X.data, self.X.indices, self.X.indptr),
                                                 shape=(self.n_docs, n_features)))
        return replace(self, X=np.pad(self.X, ((0, 0), (0, n_features - self.n_features))))

    def to_dense(self) -> "RankingData":
        """The same data with a dense ``X``."""
        return replace(self, X=self.X.toarray()) if sp.issparse(self.X) else self

    def to_csr(self) -> "RankingData":
        """The same data with a CSR ``X`` (explicit zeros dropped)."""
        return self if sp.issparse(self.X) else replace(self, X=sp.csr_matrix(self.X))


def _check_query_indices(query_indices: ArrayLike, n_queries: int) -> NDArray[np.int64]:
    q = np.asarray(query_indices)
    if q.ndim != 1:
        raise ValueError(f"query indices must be one-dimensional, got shape {q.shape}")
    if q.size == 0:
        return np.zeros(0, dtype=np.int64)
    if q.dtype.kind not in "iu":
        raise TypeError(f"query indices must be integers, got dtype {q.dtype}")
    q = q.astype(np.int64)
    bad = np.flatnonzero((q < 0) | (q >= n_queries))
    if bad.size:
        raise ValueError(f"query index {int(q[bad[0]])} is outside [0, {n_queries})")
    if np.unique(q).size != q.size:
        vals, counts = np.unique(q, return_counts=True)
        raise ValueError(f"query index {int(vals[counts > 1][0])} is repeated")
    return q


concat = RankingData.concat  # the function form
