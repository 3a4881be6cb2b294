"""The public booster classes by name, each imported from its own module only when asked for:
what ``boostplug.boosters`` exports and what a model file's ``"class"`` may name."""

from __future__ import annotations

import importlib

__all__ = ["PUBLIC", "booster_class"]

#: Class name -> the module of ``boostplug.boosters`` it lives in.
PUBLIC = {
    "RankBoost": "rankboost",
    "AdaRank": "adarank",
    "MPBoost": "mpboost",
    "NDCGBoost": "ndcg_boost",
}


def booster_class(name: str) -> type:
    """The booster class ``name`` (a key of :data:`PUBLIC`), importing only its module."""
    return getattr(importlib.import_module(f"{__package__}.{PUBLIC[name]}"), name)
