"""boostplug's objectives on CatBoost's trees: one tree per round, each fitted on gradients boostplug
computed over whole queries.

CatBoost hands a Python objective (``calc_ders_range``) blocks of at most 1,000 rows, in an order
its threads choose, with no row index and no group id, and under ordered boosting prefixes of a
permutation: a ranking loss, which needs a query's scores together, cannot be computed there. So
each round here computes the objective's gradients and Hessians over the whole training set at the
current scores, then grows one CatBoost tree whose objective only looks each row's values up (the
pool's label is the row's index); the tree joins the model through ``init_model``.

Example:
    >>> from boostplug import catboost as bpc  # doctest: +SKIP
    >>> from boostplug.data import make_ranking  # doctest: +SKIP
    >>> d = make_ranking(n_queries=20, seed=0)  # doctest: +SKIP
    >>> pool = bpc.pool(d.X, d.y, group_ptr=d.group_ptr)  # doctest: +SKIP
    >>> model = bpc.train({"depth": 4, "learning_rate": 0.1}, pool, bpc.objective("qbrank"), 10)  # doctest: +SKIP
    >>> model.tree_count_  # doctest: +SKIP
    10

User documentation: docs/catboost.md.
"""

import importlib.util

if importlib.util.find_spec("catboost") is None:  # (boostplug.compare's CATBOOST_MISSING: that import is heavy)
    raise ModuleNotFoundError('boostplug.catboost trains with CatBoost, which is not installed: pip install '
                              '"boostplug[catboost]"', name="catboost")

from ._objective import CatBoostObjective, objective, pool  # noqa: E402 - after the check naming what to install
from ._train import train  # noqa: E402

__all__ = ["objective", "pool", "train", "CatBoostObjective"]
