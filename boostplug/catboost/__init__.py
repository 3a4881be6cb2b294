"""boostplug's objectives on CatBoost's trees: one tree per round, each fitted on gradients boostplug
computed over whole queries.

CatBoost hands a Python objective (``calc_ders_range``) blocks of at most 1,000 rows, in an order
its threads choose, with no row index and no group id, and under ordered boosting prefixes of a
permutation: a ranking loss, which needs a query's scores together, cannot be computed there. So
each round here computes the objective's gradients and Hessians over the whole training set at the
current scores, then grows one CatBoost tree whose objective only looks each row's values up (the
label of the pool the rounds fit on is the row's index; the user's pool keeps the true labels);
the tree joins the model through ``init_model``.

User documentation: docs/catboost.md.
"""

from ..frameworks._lazy import lazy_getattr
from ._objective import CatBoostObjective, objective, pool
from ._train import load_model, objective_of, record_objective, save_model, train

__all__ = ["objective", "pool", "train", "CatBoostObjective", "CatBoostRanker", "save_model", "load_model",
           "objective_of", "record_objective"]

__getattr__ = lazy_getattr(__name__, {"CatBoostRanker": "boostplug.catboost._ranker"})
