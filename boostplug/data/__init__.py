"""Ranking data: the :class:`RankingData` container, LETOR/SVMlight files, folds,
query-level splits, a synthetic generator and the embedded example data.

Example:
    >>> from boostplug.data import make_ranking, train_test_split_by_query
    >>> d = make_ranking(n_queries=10, seed=0)
    >>> train, test = train_test_split_by_query(d, test_size=0.2, seed=0)
    >>> train.n_queries, test.n_queries
    (8, 2)
"""

from .dataset import RankingData, concat
from .example import load_example
from .folds import (LAYOUTS, Layout, fold_plan, folds_from_parts, letor_fold_count, letor_layout, load_letor_folds,
                    load_letor_parts)
from .letor import load_letor, read_query_file, write_letor
from .splits import kfold_by_query, train_test_split_by_query
from .synthetic import make_ranking

__all__ = [
    "RankingData",
    "concat",
    "load_letor",
    "write_letor",
    "read_query_file",
    "load_letor_folds",
    "letor_fold_count",
    "load_letor_parts",
    "folds_from_parts",
    "letor_layout",
    "fold_plan",
    "LAYOUTS",
    "Layout",
    "kfold_by_query",
    "train_test_split_by_query",
    "make_ranking",
    "load_example",
]
