"""boostplug's objectives on CatBoost's trees: one tree per round, each fitted on gradients boostplug
computed over whole queries (CatBoost's Python objective sees blocks of rows without their queries:
why, and how the rounds find each row's values: :mod:`._objective`, docs/catboost.md)."""

from .._extras import installed

if not installed("catboost"):  # (boostplug.compare's CATBOOST_MISSING: that import is heavy)
    raise ModuleNotFoundError('boostplug.catboost trains with CatBoost, which is not installed: pip install '
                              '"boostplug[catboost]"', name="catboost")

from ..frameworks._lazy import lazy_getattr  # noqa: E402 - after the check naming what to install
from ._objective import CatBoostObjective, objective, pool  # noqa: E402
from ._train import load_model, objective_of, record_objective, save_model, train  # noqa: E402

__all__ = ["objective", "pool", "train", "CatBoostObjective", "CatBoostRanker", "save_model", "load_model",
           "objective_of", "record_objective"]

__getattr__ = lazy_getattr(__name__, {"CatBoostRanker": "boostplug.catboost._ranker"})
