"""Native reference boosters: the papers' discrete-weight algorithms, as published.

* :class:`RankBoost` -- ``variant="rb-d" | "rb-c" | "rankboost+"`` (Connamacher et al. 2020);
* :class:`AdaRank` -- ``measure="map" | "ndcg@k" | callable`` (Xu and Li 2007);
* :class:`MPBoost` -- stump MPBoost with the four DDFs (Zhu et al. 2009);
* :class:`NDCGBoost` -- stump NDCG_Boost (Valizadegan et al. 2009).

All are scikit-learn style estimators sharing :class:`~boostplug.boosters._estimator.RankingBooster`
(fit/predict/staged_predict, ``history_``, early stopping, JSON ``save``/``load``/``to_dict``/``from_dict``).
"""

from __future__ import annotations

from typing import Any

from ._classes import PUBLIC, booster_class
from ._estimator import RankingBooster
from ._model_file import load

__all__ = sorted(PUBLIC) + ["RankingBooster", "load"]


def __getattr__(name: str) -> Any:
    if name in PUBLIC:
        return booster_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
