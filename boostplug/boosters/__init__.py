"""Native reference boosters: the papers' discrete-weight algorithms, as published.

* :class:`RankBoost` -- ``variant="rb-d" | "rb-c" | "rankboost+"`` (Connamacher et al. 2020);
* :class:`AdaRank` -- ``measure="map" | "ndcg@k" | callable`` (Xu and Li 2007);
* :class:`MPBoost` -- stump MPBoost with the four DDFs (Zhu et al. 2009);
* :class:`NDCGBoost` -- stump NDCG_Boost (Valizadegan et al. 2009).

All are scikit-learn style estimators sharing :class:`~boostplug.boosters._estimator.RankingBooster`
(fit/predict/staged_predict, ``history_``, early stopping, JSON ``save``/``load``/``to_dict``/``from_dict``).
"""

from __future__ import annotations

import importlib
from typing import Any

from ._estimator import RankingBooster
from ._model_file import load

_PUBLIC = {
    "RankBoost": "rankboost",
    "AdaRank": "adarank",
    "MPBoost": "mpboost",
    "NDCGBoost": "ndcg_boost",
}

__all__ = sorted(_PUBLIC) + ["RankingBooster", "load"]


def _class(name: str) -> type:
    """The booster class ``name`` (a key of ``_PUBLIC``), importing only its module."""
    return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return _class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
