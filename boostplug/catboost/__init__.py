"""boostplug's objectives on CatBoost's trees: one tree per round, each fitted on gradients boostplug
computed over whole queries (CatBoost's Python objective sees blocks of rows without their queries:
why, and how the rounds find each row's values: :mod:`._objective`, docs/catboost.md)."""

from ..frameworks._lazy import lazy_getattr
from ._objective import CatBoostObjective, objective, pool
from ._train import load_model, objective_of, record_objective, save_model, train

__all__ = ["objective", "pool", "train", "CatBoostObjective", "CatBoostRanker", "save_model", "load_model",
           "objective_of", "record_objective"]

__getattr__ = lazy_getattr(__name__, {"CatBoostRanker": "boostplug.catboost._ranker"})
