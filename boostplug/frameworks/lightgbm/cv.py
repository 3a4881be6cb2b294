"""Cross-validation on LightGBM that keeps queries whole: :func:`query_folds` for
``lgb.cv(..., folds=...)`` and :func:`cv`, which makes them."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_rounds
from ...data.splits import row_folds_by_query
from .._builders import builder_init_score
from .adapters import group_ptr_from_lgb_sizes

__all__ = ["query_folds", "cv"]


def query_folds(
    train_set: Any, nfold: int = 5, *, seed: int = 0, shuffle: bool = True
) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Cross-validation folds that keep every query whole, for ``lgb.cv(..., folds=...)``.

    Why ``lgb.cv``'s own folds cut queries: docs/objectives/index.md, "Cross-validation and early stopping".

    Example:
        >>> import lightgbm as lgb
        >>> from boostplug import lightgbm as bpl
        >>> train_set = bpl.dataset(X, y, qid=qid)
        >>> params = {"objective": bpl.objective(name, **objective_params), "metric": "None",
        ...           "num_threads": 1, "verbose": -1}
        >>> folds = bpl.query_folds(train_set, nfold=5, seed=0)
        >>> result = lgb.cv(params, train_set, 20, folds=folds, feval=bpl.metric("ndcg@10"))
        >>> sorted(result)
        ['valid ndcg@10-mean', 'valid ndcg@10-stdv']

    Args:
        train_set: an ``lgb.Dataset`` with query groups.
        nfold: number of folds, 2 to the number of queries.
        seed: seeds the shuffle of the queries (:func:`boostplug.data.kfold_by_query`'s, so
            ``boostplug.xgboost.cv`` and ``boostplug compare`` cut the same folds from the same seed).
        shuffle: shuffle the queries before splitting; else consecutive runs of queries.

    Returns:
        ``nfold`` pairs ``(train_rows, test_rows)`` (sorted int64 row indices); each query is
        in the test rows of exactly one fold, and the folds differ by at most one query.
    """
    if not hasattr(train_set, "construct"):
        raise TypeError(f"query_folds takes an lgb.Dataset with query groups (bpl.dataset(X, y, qid=qid)), got "
                        f"{type(train_set).__name__}; for group sizes: boostplug.data.splits.row_folds_by_query")
    sizes = getattr(train_set, "group", None)  # given to the Dataset: read without constructing it
    if sizes is None:
        sizes = train_set.construct().get_group()
    return row_folds_by_query(np.diff(group_ptr_from_lgb_sizes(sizes, None)), nfold, seed=seed, shuffle=shuffle,
                              name="nfold")


def cv(params: dict[str, Any], train_set: Any, num_boost_round: int = 100, *, nfold: int = 5, seed: int = 0,
       shuffle: bool = True, **kwargs: Any) -> dict[str, Any]:
    """``lgb.cv`` on folds that keep queries whole (:func:`query_folds`).

    ``kwargs`` go to ``lgb.cv`` (``feval``, ``callbacks``, ``return_cvbooster``...); for folds of
    your own call ``lgb.cv(..., folds=...)`` directly.
    """
    import lightgbm as lgb

    if "folds" in kwargs:
        raise TypeError(
            "cv() makes query folds from nfold/seed/shuffle; for your own folds call lgb.cv(..., folds=...)"
        )
    check_rounds(num_boost_round, "num_boost_round")
    # before query_folds constructs it: LightGBM then stores NaN as 0 and +-inf as +-1e300
    builder_init_score(getattr(train_set, "init_score", None), "init_score of train_set")
    folds = query_folds(train_set, nfold, seed=seed, shuffle=shuffle)
    return lgb.cv(params, train_set, num_boost_round, folds=folds, seed=seed, **kwargs)
