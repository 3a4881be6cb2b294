"""What ``boostplug compare --tune`` searches: one dimension (:class:`Dist`), the tree parameters
every tree method searches (:data:`TREE_SPACE`), an objective's declared ranges
(:func:`objective_space`) and the reference boosters' knobs (:func:`booster_space`).

A method's whole space (these, less the settings its name fixes) is
:meth:`boostplug.compare.methods.Method.search_space`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Callable, Mapping

from .method_specs import format_value

__all__ = ["Dist", "TREE_SPACE", "LINEAR_SPACE", "objective_space", "booster_space", "catboost_space"]


@dataclass(frozen=True)
class Dist:
    """One dimension of a search space: ``kind`` ``"float"``, ``"int"`` (``low``..``high``,
    ``log``-uniform or uniform) or ``"categorical"`` (``choices``)."""

    kind: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Any, name: str) -> Any:
        if self.kind == "categorical":
            return trial.suggest_categorical(name, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(name, self.low, self.high, log=self.log)

    def describe(self) -> str:
        if self.kind == "categorical":
            return "{" + ", ".join(format_value(c) for c in self.choices) + "}"
        return f"{format_value(self.low)}..{format_value(self.high)}{' (log)' if self.log else ''}"


#: The tree parameters every tree method searches (LightGBM, XGBoost and the built-ins alike, so
#: that each gets the same budget over the same space; less ``min_data_in_leaf`` on XGBoost's and
#: CatBoost's trees, which do not read it). ``lambda_l2=0``, the default, is trial 0's.
TREE_SPACE: dict[str, Dist] = {
    "learning_rate": Dist("float", 0.01, 0.3, log=True),
    "num_leaves": Dist("int", 7, 127),
    "min_data_in_leaf": Dist("int", 5, 100),
    "lambda_l2": Dist("float", 1e-3, 10.0, log=True),
    "feature_fraction": Dist("float", 0.5, 1.0),
}


#: The linear baselines' regularisation: ridge's ``alpha`` and RankSVM's ``C`` (defaults 1 and 0.01).
LINEAR_SPACE: dict[str, Dist] = {"alpha": Dist("float", 1e-3, 1e3, log=True), "C": Dist("float", 1e-5, 1.0, log=True)}


#: CatBoost's own knobs: the depth of its symmetric trees (beside TREE_SPACE's learning rate and
#: ``lambda_l2``, its ``l2_leaf_reg``) and its losses' parameters (YetiRank's, QuerySoftMax's, LambdaMart's).
_CATBOOST_SPACE: dict[str, Dist] = {
    "depth": Dist("int", 4, 8),
    "permutations": Dist("int", 1, 20),
    "decay": Dist("float", 0.5, 1.0),
    "beta": Dist("float", 0.1, 10.0, log=True),
    "sigma": Dist("float", 0.1, 5.0, log=True),
    "norm": Dist("categorical", choices=(True, False)),
}


def catboost_space(params: Mapping[str, Any]) -> dict[str, Dist]:
    """What ``--tune`` searches for a CatBoost method with parameters ``params``: the learning rate, the
    L2 (``lambda_l2``), the depth and the loss's own parameters."""
    space = {k: TREE_SPACE[k] for k in ("learning_rate", "lambda_l2")}
    space.update({k: d for k, d in _CATBOOST_SPACE.items() if k in params})
    return space


def _dists(space: Mapping[str, Any]) -> dict[str, Dist]:
    """An objective's declared search ranges (:class:`boostplug.objectives.Search`) as :class:`Dist`."""
    return {name: Dist("categorical", choices=tuple(s.choices)) if s.choices else
            Dist("int" if s.integer else "float", s.low, s.high, log=s.log) for name, s in space.items()}


#: The boosters' knobs: RankBoost's stump threshold budget, the objectives' own ranges for the
#: stump MPBoost (its DDF's parameter) and NDCG_Boost (sigma); AdaRank none (its rounds are
#: chosen on validation like everyone's). Each gets the booster's parameters, defaults filled in.
_BOOSTER_SPACE: dict[str, Callable[[dict[str, Any]], dict[str, Dist]]] = {
    "RankBoost": lambda p: {"max_thresholds": Dist("int", 8, 255, log=True)},
    "MPBoost": lambda p: _dists(import_module("boostplug.objectives.ddf").search_space(p["ddf"])),
    "NDCGBoost": lambda p: _dists({"sigma": import_module("boostplug.objectives.ndcg_boost").NDCGBoostObjective
                                   .params["sigma"].search}),
}


def objective_space(entry: Any, params: Mapping[str, Any]) -> dict[str, Dist]:
    """What ``--tune`` searches for the registered objective ``entry`` given its settings
    ``params``: its declared ranges, less its row-index parameters (they belong to one data set)."""
    declared = entry.search_space(params)
    return _dists({k: v for k, v in declared.items() if k not in entry.row_params})


def booster_space(booster: str, params: dict[str, Any]) -> dict[str, Dist]:
    """The knobs of the reference booster class ``booster`` (``"RankBoost"``) given its parameters
    ``params`` (defaults filled in); none for a booster without any."""
    return _BOOSTER_SPACE.get(booster, lambda p: {})(params)
