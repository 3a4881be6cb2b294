"""Query-level splitting: every query goes wholly to one side."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .dataset import RankingData

__all__ = ["kfold_by_query", "row_folds_by_query", "train_test_split_by_query"]

Seed = int | np.random.Generator | None


def _n_queries(data: RankingData | int) -> int:
    if isinstance(data, RankingData):
        return data.n_queries
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        return int(data)
    raise TypeError(f"expected a RankingData or a number of queries, got {type(data).__name__}")


def kfold_by_query(
    data: RankingData | int, n_splits: int = 5, *, seed: Seed = 0, shuffle: bool = True, name: str = "n_splits"
) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """K-fold cross-validation over queries.

    Returns ``n_splits`` pairs ``(train_query_idx, test_query_idx)`` of
    sorted 0-based *query* indices (use ``data.subset(idx)`` for the data).
    The test parts are disjoint and cover all queries; their sizes differ by
    at most one (the first ``n_queries % n_splits`` parts are one larger, as
    in scikit-learn's ``KFold``). With ``shuffle`` the queries are assigned
    at random (seeded by ``seed``), else in consecutive blocks.

    Args:
        data: the data set, or its number of queries.
        name: what the errors call ``n_splits`` (a caller's own argument, e.g. ``nfold``).
    """
    nq = _n_queries(data)
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {n_splits!r}")
    if not 2 <= n_splits <= nq:
        raise ValueError(f"{name} must be between 2 and the number of queries ({nq}), got {int(n_splits)}")
    order = np.random.default_rng(seed).permutation(nq) if shuffle else np.arange(nq)
    tests = [np.sort(part).astype(np.int64) for part in np.array_split(order, n_splits)]  # KFold's sizes
    return [(np.setdiff1d(np.arange(nq, dtype=np.int64), test, assume_unique=True), test) for test in tests]


def row_folds_by_query(
    group_sizes: NDArray[np.integer], n_splits: int = 5, *, seed: Seed = 0, shuffle: bool = True,
    name: str = "n_splits",
) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """:func:`kfold_by_query` over the queries of consecutive groups of ``group_sizes`` rows, as
    ``n_splits`` pairs ``(train_rows, test_rows)`` of sorted int64 *row* indices (what ``lgb.cv``'s
    and ``xgb.cv``'s ``folds`` take): the same seed gives the same folds wherever rows are split."""
    sizes = np.asarray(group_sizes, dtype=np.int64)
    fold_of_query = np.empty(sizes.shape[0], dtype=np.int64)
    splits = kfold_by_query(sizes.shape[0], n_splits, seed=seed, shuffle=shuffle, name=name)
    for k, (_, test) in enumerate(splits):
        fold_of_query[test] = k
    fold_of_row = np.repeat(fold_of_query, sizes)
    return [(np.flatnonzero(fold_of_row != k), np.flatnonzero(fold_of_row == k)) for k in range(len(splits))]


def train_test_split_by_query(
    data: RankingData, test_size: float | int = 0.2, *, seed: Seed = 0
) -> tuple[RankingData, RankingData]:
    """Split queries at random into ``(train, test)`` data sets (seeded).

    ``test_size``: a fraction in (0, 1) (the test part gets
    ``ceil(test_size * n_queries)`` queries, as in scikit-learn) or a number
    of queries. Both parts keep the queries' original order. Raises
    ``ValueError`` when either part would be empty.
    """
    if not isinstance(data, RankingData):
        raise TypeError(f"data must be a RankingData, got {type(data).__name__}")
    nq = data.n_queries
    if isinstance(test_size, bool):
        raise TypeError(f"test_size must be a fraction or a number of queries, got {test_size!r}")
    if isinstance(test_size, (int, np.integer)):
        n_test = int(test_size)
    elif isinstance(test_size, (float, np.floating)) and 0.0 < test_size < 1.0:
        n_test = math.ceil(float(test_size) * nq)
    else:
        raise ValueError(f"test_size must be a fraction in (0, 1) or a number of queries, got {test_size!r}")
    if not 1 <= n_test <= nq - 1:
        raise ValueError(
            f"test_size={test_size!r} gives {n_test} test queries out of {nq}: both parts must be non-empty"
        )
    order = np.random.default_rng(seed).permutation(nq)
    return data.subset(np.sort(order[n_test:])), data.subset(np.sort(order[:n_test]))
