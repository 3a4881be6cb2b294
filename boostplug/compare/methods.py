"""The ranking methods ``boostplug compare`` can train, behind one small interface.

A :class:`Method` trains on a training part and returns a :class:`Trained`
model: validation and test scores after every round (so the round can be chosen
on validation data and curves can be drawn) and the training time.

Five families, each name selectable on the command line (every name: the tables below, and
docs/compare.md, "Methods"):

* LightGBM trees (no prefix): LightGBM's built-ins and, for every objective of
  :mod:`boostplug.objectives`, each of its ``methods`` names (``entry.methods``);
* XGBoost trees (prefix ``xgb-``): XGBoost's built-ins and the same objectives' method names;
* CatBoost trees (prefix ``cb-``, listed when catboost is installed): CatBoost's ranking losses
  and the same objectives' method names (:mod:`boostplug.catboost`; ``cb-yetirank-plugin`` for
  boostplug's ``yetirank``);
* the reference boosters of :mod:`boostplug.boosters` (framework ``"booster"``);
* linear baselines (framework ``"linear"``): ridge regression and RankSVM, one "round" each.

The objectives' methods are read from the registry when :data:`METHODS` is read, so an
objective registered after import (``boostplug.objectives.register``) is listed, configurable
(its declared parameters, row-index ones excepted) and tuned over its declared search ranges.
"""

from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from .._extras import installed
from .._validation import FLOAT32_MAX, INT32_MAX, did_you_mean
from ..data import RankingData
from .method_specs import format_spec, format_value, split_spec
from .search_spaces import LINEAR_SPACE, TREE_SPACE, Dist, booster_space, catboost_space, objective_space
from .training import CATBOOST_NAMES, TRAINERS, XGBOOST_NAMES, Checkpoint, Progress, Trained, TrainingPart

__all__ = [
    "Method", "METHODS", "DEFAULT_METHODS", "TREE_PARAMS", "TREE_PARAM_LIMITS", "FRAMEWORKS",
    "check_tree_params", "check_run", "get_method", "method_names", "CATBOOST_METHODS", "catboost_method_names",
    "unavailable", "BUILTIN_COPIES", "COPY_ONLY", "pair_rule",
]

#: Tree parameters shared by every tree method, so that only the loss differs (LightGBM names; mapped for
#: XGBoost and CatBoost; overridable: ``--param``, ``name[key=value]``).
TREE_PARAMS: dict[str, Any] = {
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 20,
    "min_sum_hessian_in_leaf": 1e-3,
    "lambda_l2": 0.0,
    "feature_fraction": 1.0,
    "max_bin": 255,
}

#: The values each shared tree parameter may take: LightGBM's limits, within what XGBoost reads
#: (its real parameters are C floats, up to 3.4e38) and what both read integers into (C ints,
#: up to 2^31 - 1; LightGBM silently wraps a larger max_bin or min_data_in_leaf around). A test
#: and what it says.
TREE_PARAM_LIMITS: dict[str, tuple[Callable[[float], bool], str]] = {
    "learning_rate": (lambda v: 0 < v <= FLOAT32_MAX, f"> 0 and at most {FLOAT32_MAX:.9g} (XGBoost's float)"),
    "num_leaves": (lambda v: 2 <= v <= 131072, "between 2 and 131072"),
    "min_data_in_leaf": (lambda v: 0 <= v <= INT32_MAX, f">= 0 and at most {INT32_MAX} (a 32-bit int)"),
    **dict.fromkeys(("min_sum_hessian_in_leaf", "lambda_l2"),
                    (lambda v: 0 <= v <= FLOAT32_MAX, f">= 0 and at most {FLOAT32_MAX:.9g} (XGBoost's float)")),
    "feature_fraction": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "max_bin": (lambda v: 2 <= v <= INT32_MAX, f">= 2 and at most {INT32_MAX} (a 32-bit int)"),
}


def check_tree_params(params: dict[str, Any]) -> None:
    """``ValueError`` naming the first parameter that is not a shared tree parameter
    (:data:`TREE_PARAMS`), not a finite number (an integer for the integer ones) or
    outside :data:`TREE_PARAM_LIMITS`; the frameworks would fail only once training starts."""
    for key, value in params.items():
        if key not in TREE_PARAMS:
            raise ValueError(f"unknown tree parameter {key!r}; the shared ones are {', '.join(TREE_PARAMS)}")
        integer = isinstance(TREE_PARAMS[key], int)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{key}={value!r}: must be {'an integer' if integer else 'a number'}")
        if not math.isfinite(value):
            raise ValueError(f"{key}={value!r}: must be finite")
        if integer and value != int(value):
            raise ValueError(f"{key}={value!r}: must be an integer")
        test, text = TREE_PARAM_LIMITS[key]
        if not test(value):
            raise ValueError(f"{key}={value!r}: must be {text}")


#: The frameworks ``--frameworks`` selects from (CatBoost's methods are there when catboost is installed).
FRAMEWORKS = ("lightgbm", "xgboost", "catboost", "booster", "linear")

#: What ``cb-*`` asks for when catboost is not installed.
CATBOOST_MISSING = 'trains with CatBoost, which is not installed: pip install "boostplug[catboost]"'


def unavailable(name: str) -> str | None:
    """Why method ``name`` (``cb-yetirank``, ``cb-qbrank[depth=4]``) cannot run here: its framework is
    not installed; ``None`` when it can, or when it is no method at all."""
    base = name.split("[", 1)[0].split(":", 1)[0].strip()
    if base.startswith("cb-") and not installed("catboost"):
        return f"method {base!r} {CATBOOST_MISSING}"
    from ..objectives import JAX_MISSING, JAX_OBJECTIVES, names

    if base.split("-", 1)[-1] in JAX_OBJECTIVES and base.split("-", 1)[-1] not in names():  # xgb-approx_ap too
        return f"method {base!r} trains a loss that {JAX_MISSING}"
    return None


#: AdaRank settings of the comparison: RankLib's update and stop rule (the paper's
#: rule, tolerance 0.002 on the training measure, stops after one round on MQ2008).
ADARANK_PARAMS: dict[str, Any] = {"update": "multiplicative", "enqueue": True, "max_consecutive": 5, "tolerance": -0.002}


@dataclass(frozen=True)
class Method:
    """A named way to train a ranker.

    ``framework`` is ``"lightgbm"``, ``"xgboost"``, ``"catboost"``, ``"booster"`` or ``"linear"``; ``loss`` is a
    built-in objective name (CatBoost's with its fixed settings: ``"LambdaMart:metric=NDCG"``),
    ``"boostplug:<objective>"``, a booster's class name (:mod:`boostplug.boosters`), ``"ridge"`` or ``"ranksvm"``.
    ``select_metric`` (boosters only) overrides the metric that chooses the round (AdaRank.MAP:
    ``"map"``).
    """

    name: str
    framework: str
    loss: str
    loss_params: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    select_metric: str | None = None
    #: this method's own tree parameters, over the shared ones (``lambdarank[num_leaves=15]``)
    tree_params: dict[str, Any] = field(default_factory=dict)
    #: the registry name this method was configured from ("" for a registry entry itself)
    base: str = ""

    @property
    def registry_name(self) -> str:
        return self.base or self.name

    def parameters(self) -> dict[str, Any]:
        """The parameters this method takes (``name[key=value]``, ``--tune``) with their values."""
        if self.framework == "booster":
            from .. import boosters

            sig = inspect.signature(getattr(boosters, self.loss).__init__).parameters
            return {**{k: p.default for k, p in sig.items() if k != "self" and k not in _BOOSTER_FIXED},
                    **self.loss_params}
        if self.framework == "linear":
            return dict(self.loss_params)
        out = dict(self.loss_params) if _catboost_own(self) else {}
        if (obj := _objective(self)) is not None:
            # row-index parameters belong to one data set, a fixed one is no setting, COPY_ONLY the copy's alone
            skip = (*obj.row_params, *obj.fixed, *(COPY_ONLY if self.loss in BUILTIN_COPIES else ()))
            out.update({**{k: v for k, v in obj.defaults.items() if k not in skip}, **self.loss_params})
        return {**out, **TREE_PARAMS, **self.tree_params}

    def configure(self, params: dict[str, Any], *, rename: bool = True) -> "Method":
        """This method with ``params`` set (unknown names: a "did you mean" ``ValueError``; values
        checked as the objective, the booster or :func:`check_tree_params` would, without training).
        ``rename``: the name shows the settings (``mpboost-ldd[alpha=0.3]``)."""
        known = self.parameters()
        for key in params:
            if key not in known:
                hint = did_you_mean(key, known)
                raise ValueError(f"method {self.registry_name!r} has no parameter {key!r}; {hint}{' ' if hint else ''}"
                                 f"its parameters are {', '.join(known)}")
        tree = {k: v for k, v in params.items() if self.framework != "booster" and k in TREE_PARAMS}
        loss = {k: v for k, v in params.items() if k not in tree}
        new = replace(self, loss_params={**self.loss_params, **loss}, tree_params={**self.tree_params, **tree},
                      base=self.registry_name)
        try:
            _check(new, loss, tree)
            for key, value in new.tree_params.items():
                if why := _unread(new, key):
                    raise ValueError(f"{key}={format_value(value)}: {why}")
        except (ValueError, TypeError) as e:
            raise type(e)(f"method {self.registry_name!r}: {e}") from None
        if rename and params:
            new = replace(new, name=format_spec(self.registry_name, {**_shown(self), **params}))
        return new

    def search_space(self) -> dict[str, Dist]:
        """What ``--tune`` searches: :data:`TREE_SPACE` for tree methods (what their trees read) plus the method's
        own knobs, less a setting the user fixed (``name[key=value]``)."""
        if self.framework == "booster":
            space = booster_space(self.loss, self.parameters())
        elif _catboost_own(self):
            space = catboost_space(self.loss_params)
        elif self.framework == "linear":
            space = {k: d for k, d in LINEAR_SPACE.items() if k in self.loss_params}
        else:
            space = {**{k: d for k, d in TREE_SPACE.items() if not _unread(self, k)},
                     **(objective_space(obj, self.loss_params) if (obj := _objective(self)) else {})}
        fixed = set(_shown(self))
        return {k: d for k, d in space.items() if k not in fixed}

    def train(self, train: RankingData, vali: RankingData, test: RankingData, *, rounds: int,
              tree_params: dict[str, Any], seed: int, threads: int = 0,
              progress: Progress | None = None, checkpoint: Checkpoint | None = None) -> Trained:
        """Train for at most ``rounds`` rounds; ``threads=0``: the framework's default.
        ``checkpoint``: called with the validation scores at :func:`checkpoint_rounds`. ``train``: plain
        data, or a :class:`~.training.TrainingPart` with what some learners take beside the rows."""
        if self.framework not in TRAINERS:
            raise ValueError(f"unknown framework {self.framework!r}; expected one of {FRAMEWORKS}")
        part = TrainingPart.of(train)
        if (part.weight is not None or part.init_score is not None) and self.framework != "lightgbm":
            raise ValueError(f"method {self.name!r}: per-row weights and initial scores train with LightGBM only; "
                             f"the {self.framework} trainer takes neither")
        return TRAINERS[self.framework](self, part, vali, test, rounds, tree_params, seed, threads,
                                        progress, checkpoint)


def _m(name: str, framework: str, loss: str, summary: str, select_metric: str | None = None,
       **loss_params: Any) -> Method:
    return Method(name, framework, loss, loss_params, summary, select_metric)


def _objective_methods(entries: tuple[Any, ...], prefix: str, framework: str, label: str,
                       builtins: tuple[Method, ...] = ()) -> list[Method]:
    """A tree method for every ``methods`` name of every registered objective, in registry order;
    one whose name the framework's built-in ``builtins`` hold is the plugin of that built-in
    (``cb-yetirank-plugin``: boostplug's YetiRank on CatBoost trees, beside CatBoost's ``cb-yetirank``)."""
    out = []
    taken = {m.name for m in builtins}
    for entry in entries:
        for method, settings in entry.methods.items():
            shown = ", ".join(f"{k}={format_value(v)}" for k, v in settings.items())
            name = f"{prefix}{method}" + ("-plugin" if f"{prefix}{method}" in taken else "")
            out.append(Method(name, framework, f"boostplug:{entry.name}", dict(settings),
                              f"{entry.summary}{f' [{shown}]' if shown else ''}, on {label} trees"))
    return out


_BUILTIN_LIGHTGBM = (
    _m("lambdarank", "lightgbm", "lambdarank", "LightGBM's built-in LambdaRank (LambdaMART)"),
    _m("rank_xendcg", "lightgbm", "rank_xendcg", "LightGBM's built-in XE-NDCG"),
    _m("regression", "lightgbm", "regression", "LightGBM's squared error on the grades (GBT)"),
)
_BUILTIN_XGBOOST = (
    _m("xgb-rank:ndcg", "xgboost", "rank:ndcg", "XGBoost's built-in LambdaMART (NDCG)"),
    _m("xgb-rank:pairwise", "xgboost", "rank:pairwise", "XGBoost's built-in pairwise logistic loss"),
    _m("xgb-rank:map", "xgboost", "rank:map", "XGBoost's built-in LambdaMART (MAP; binary labels)"),
    _m("xgb-reg:squarederror", "xgboost", "reg:squarederror", "XGBoost's squared error on the grades (GBT)"),
)
#: CatBoost's ranking losses, each with its own parameters at CatBoost's defaults and ``depth``
#: (CatBoost's symmetric trees; ``None``: from the shared ``num_leaves``, 31 leaves -> depth 5).
_BUILTIN_CATBOOST = (
    _m("cb-yetirank", "catboost", "YetiRank", "CatBoost's YetiRank (Gulin et al. 2011)", depth=None,
       permutations=10, decay=0.85),
    _m("cb-yetirank-pairwise", "catboost", "YetiRankPairwise", "CatBoost's YetiRankPairwise (pairwise leaf values)",
       depth=None, permutations=10, decay=0.85),
    _m("cb-querysoftmax", "catboost", "QuerySoftMax", "CatBoost's QuerySoftMax (softmax over each query)", depth=None,
       beta=1.0),
    _m("cb-pairlogit", "catboost", "PairLogit", "CatBoost's PairLogit (RankNet's pair loss)", depth=None),
    *(_m(f"cb-lambdamart-{metric.lower()}", "catboost", f"LambdaMart:metric={metric}",
         f"CatBoost's LambdaMART for {metric}", depth=None, sigma=1.0, norm=True)
      for metric in ("NDCG", "MAP", "ERR", "MRR")),
)

#: The names of CatBoost's own losses' methods, installed or not.
CATBOOST_METHODS = tuple(m.name for m in _BUILTIN_CATBOOST)

#: The settings checked here, not by a boostplug objective: CatBoost's own losses', depth, the linear methods'.
OWN_PARAM_LIMITS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "depth": (lambda v: v is None or (_integer(v) and 1 <= v <= 16), "an integer from 1 to 16, or none"),
    "permutations": (lambda v: _integer(v) and 1 <= v <= 1000, "an integer from 1 to 1000"),
    "decay": (lambda v: _number(v) and 0 < v <= 1, "a number in (0, 1]"),
    **dict.fromkeys(("beta", "sigma", "alpha", "C"), (lambda v: _number(v) and 0 < v <= FLOAT32_MAX, "a number > 0")),
    "norm": (lambda v: isinstance(v, bool), "true or false"),
    "max_pairs": (lambda v: _integer(v) and 1 <= v <= INT32_MAX, "an integer >= 1"),
}


def _integer(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(v)


_BOOSTERS = (
    _m("rb-d", "booster", "RankBoost", "RankBoost Rb-d, discrete stumps (Connamacher et al. 2020)",
       variant="rb-d"),
    _m("rb-c", "booster", "RankBoost", "RankBoost Rb-c, continuous-weight stumps", variant="rb-c"),
    _m("rankboost+", "booster", "RankBoost", "RankBoost+ (efficient, Algorithm 2)", variant="rankboost+"),
    _m("adarank-map", "booster", "AdaRank", "AdaRank.MAP (RankLib update/stop rule; round chosen by MAP)",
       "map", measure="map", **ADARANK_PARAMS),
    _m("adarank-ndcg", "booster", "AdaRank", "AdaRank.NDCG@5 (RankLib update/stop rule)",
       None, measure="ndcg@5", **ADARANK_PARAMS),
    _m("mpboost-stumps", "booster", "MPBoost", "stump MPBoost.LOGDD (the booster's default DDF)"),
    _m("ndcg_boost-stumps", "booster", "NDCGBoost", "stump NDCG_Boost"),
)
_LINEAR = (
    _m("linear-ridge", "linear", "ridge", "ridge regression on the grades, standardised features", alpha=1.0),
    _m("linear-ranksvm", "linear", "ranksvm", "RankSVM: a linear SVM on within-query pair differences "
       "(Herbrich et al. 2000; Joachims 2002)", C=0.01, max_pairs=100),
)


def catboost_method_names() -> list[str]:
    """The names of the CatBoost methods (``cb-*``: its losses and the registered objectives on its
    trees), installed or not (``--methods list`` shows them when it is)."""
    from .. import objectives

    table = _build_methods(tuple(objectives.get(n) for n in objectives.names()), catboost=True)
    return [n for n, m in table.items() if m.framework == "catboost"]


def _build_methods(entries: tuple[Any, ...], catboost: bool) -> dict[str, Method]:
    """The built-in methods with the registered objectives' tree methods after each framework's
    built-ins (CatBoost's only when ``catboost``); a registered name that a built-in method already
    has is left out, with a warning."""
    catboost = _BUILTIN_CATBOOST if catboost else ()
    on_catboost = _objective_methods(entries, "cb-", "catboost", "CatBoost", catboost) if catboost else []
    builtin = {m.name for m in (*_BUILTIN_LIGHTGBM, *_BUILTIN_XGBOOST, *catboost, *_BOOSTERS, *_LINEAR)}
    table: dict[str, Method] = {}
    for m in (*_BUILTIN_LIGHTGBM, *_objective_methods(entries, "", "lightgbm", "LightGBM"),
              *_BUILTIN_XGBOOST, *_objective_methods(entries, "xgb-", "xgboost", "XGBoost"), *catboost, *on_catboost,
              *_BOOSTERS, *_LINEAR):
        if m.name in table or (m.name in builtin and m.loss.startswith("boostplug:")):
            warnings.warn(f"objective {m.loss.split(':', 1)[1]!r}: the compare method name {m.name!r} is taken by "
                          "another method and is not listed; register the objective with other methods= names",
                          stacklevel=4)
            continue
        table[m.name] = m
    return table


class MethodTable(Mapping[str, Method]):
    """:data:`METHODS`: method name -> :class:`Method`, read from the objective registry on
    access (rebuilt only when the registry changed), so that objectives registered or
    unregistered after import are listed as they stand."""

    def __init__(self) -> None:
        self._entries: tuple[Any, ...] | None = None
        self._table: dict[str, Method] = {}

    def _current(self) -> dict[str, Method]:
        from .. import objectives

        entries = (installed("catboost"), *(objectives.get(n) for n in objectives.names()))
        if self._entries is None or len(entries) != len(self._entries) or any(
                a is not b for a, b in zip(entries, self._entries)):
            self._table = _build_methods(entries[1:], catboost=entries[0])
            self._entries = entries
        return self._table

    def __getitem__(self, name: str) -> Method:
        return self._current()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._current()))

    def __len__(self) -> int:
        return len(self._current())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._current())})"


#: Every method by name, in the order ``--methods list`` shows them (built-ins first within each
#: framework, then the registered objectives' methods, then the reference boosters and linear baselines).
METHODS: Mapping[str, Method] = MethodTable()

#: What ``boostplug compare`` runs when no ``--methods`` is given (a quick run on the
#: embedded data; docs/compare.md has the time).
DEFAULT_METHODS = ("lambdarank", "regression", "qbrank", "mpboost-logitdd", "ndcg_boost", "rankboost-loss",
                   "xgb-rank:ndcg", "rb-c", "ndcg_boost-stumps")


def method_names(frameworks: tuple[str, ...] | list[str] | None = None) -> list[str]:
    """All method names, or those of the given frameworks, in registry order."""
    return [n for n, m in METHODS.items() if frameworks is None or m.framework in frameworks]


def get_method(name: str) -> Method:
    """The method called ``name``: a registry name, or one with settings, ``name[key=value,...]``
    (the configured method's own name) or ``name:key=value,...``; values as
    :func:`.method_specs.parse_value`."""
    if not isinstance(name, str):
        raise TypeError(f"a method name must be a string, got {name!r}")
    if name in METHODS:
        return METHODS[name]
    base, params = split_spec(name, METHODS)
    if base not in METHODS:
        missing = unavailable(base)
        if missing:
            raise ValueError(missing)
        hint = did_you_mean(base, METHODS)
        raise ValueError(f"unknown method {base!r}{f' ({hint})' if hint else ''}; "
                         "run 'boostplug compare --methods list' for the names")
    return METHODS[base].configure(params)


# ---- method settings: name[key=value,...] ---------------------------------------------------
#: Booster constructor arguments the comparison sets itself (seed, no printing, full curves).
_BOOSTER_FIXED = ("random_state", "verbose", "early_stopping_rounds", "eval_metric")


def _catboost_own(m: Method) -> bool:
    """Whether ``m`` is one of CatBoost's own losses (its parameters: the loss's and ``depth``)."""
    return m.framework == "catboost" and not m.loss.startswith("boostplug:")


#: The built-ins reproduced in :mod:`boostplug.objectives` -> their copy: a built-in's loss parameters are the copy's
#: (the framework's names, defaults, limits; ``--tune``'s ranges), passed to it as they are, less :data:`COPY_ONLY`:
#: the data's positions, the learning rate (a tree parameter here) and the plugin's Hessian.
BUILTIN_COPIES = {"lambdarank": "lambdarank", "rank_xendcg": "xendcg", "rank:ndcg": "rank_ndcg",
                  "rank:pairwise": "rank_pairwise", "rank:map": "rank_map"}
COPY_ONLY = ("position", "learning_rate", "hessian", "hessian_floor")


def _objective(m: Method) -> Any:
    """The registry entry whose parameters ``m``'s loss takes: its objective's, or a built-in's copy's."""
    from .. import objectives

    name = m.loss.split(":", 1)[1] if m.loss.startswith("boostplug:") else BUILTIN_COPIES.get(m.loss)
    return None if name is None else objectives.get(name)


def pair_rule(params: Mapping[str, Any]) -> str:
    """Which pairs a loss with these parameters (a method's) uses: ``"top 30"`` (those with a document among the
    first 30 positions), ``"every pair"``, ``"1 drawn per document"`` (XGBoost's ``mean``), ``"neighbours in 10
    perturbed orders"`` (YetiRank's); ``""``: no such setting."""
    from ..objectives.lambdarank import EVERY_PAIR
    from ..objectives.xgb_lambdarank import DEFAULT_NUM_PAIR

    if "permutations" in params:  # YetiRank, YetiLoss: pairs of neighbours of each order, at their distance
        n, top = (1, None) if params.get("mode", "classic") == "classic" else (params["num_neighbors"], params["top"])
        near = "neighbours" if n == 1 else "every pair" if n < 0 else f"pairs up to {n} apart"
        return f"{near}{f' from the top {top}' if top else ''} in {params['permutations']} perturbed orders"

    method = params.get("lambdarank_pair_method")  # XGBoost's: a top-k level or a count per document
    k = params.get("lambdarank_num_pair_per_sample") or DEFAULT_NUM_PAIR.get(method)
    if method == "mean":
        return f"{k} drawn per document"
    level = k if method else params.get("lambdarank_truncation_level", params.get("truncation_level", ""))
    return level if level == "" else "every pair" if level is None or level >= EVERY_PAIR else f"top {level}"


def _shown(m: Method) -> dict[str, Any]:
    """The settings a configured method's name already shows."""
    return split_spec(m.name, METHODS)[1] if m.base else {}


def _unread(m: Method, key: str) -> str:
    """Why ``m``'s trees do not read the shared tree parameter ``key`` (``""``: they do)."""
    depth = m.loss_params.get("depth") if _catboost_own(m) else None
    if m.framework in ("booster", "linear"):
        return f"the {m.framework} methods take no tree parameters"
    if m.framework == "xgboost" and key not in XGBOOST_NAMES:
        return "XGBoost's trees do not read it"
    if m.framework == "catboost" and key == "num_leaves" and depth is not None:
        return f"CatBoost's trees take depth={depth} instead"
    unread = m.framework == "catboost" and key not in {*CATBOOST_NAMES, "num_leaves"}
    return "CatBoost's trees do not read it" if unread else ""


def check_run(methods: Sequence[str], folds: Sequence[tuple[int, Any]], tree_params: Mapping[str, Any]) -> None:
    """Before any training, a ``ValueError`` naming the method, the setting, its value and why for what the
    run's data or its other methods decide: a setting without effect here (:class:`~boostplug.objectives.Param`
    ``needs``; ``position``: the training parts' positions), a ``label_gain`` the training labels outrun or that
    gives each of them the same gain (every gradient 0), XGBoost's ``rank:map`` on graded labels, a ``max_bin``
    beyond CatBoost's; and a shared tree parameter (``tree_params``, :func:`check_tree_params`) no method reads."""
    check_tree_params(dict(tree_params))
    ms = [get_method(n) for n in methods]
    for key, value in tree_params.items():
        if ms and all(_unread(m, key) for m in ms):
            raise ValueError(f"the shared tree parameter {key}={format_value(value)}: no method of the run reads it "
                             f"({_unread(ms[0], key)})")
    trains = [TrainingPart.of(fold[0]) for _, fold in folds]
    labels = np.unique(np.concatenate([np.asarray(t.y, dtype=np.float64) for t in trains] or [np.zeros(1)]))
    for m in ms:
        have = {**m.parameters(), **tree_params, **m.tree_params,
                "position": any(t.position is not None for t in trains)}
        obj, gain, top = _objective(m), have.get("label_gain"), labels.max()
        idle = [(k, p.needs) for k, p in (obj.loss_class.declared_params().items() if obj else ())
                if p.needs and k in m.loss_params and not have.get(p.needs)]
        where = f"method {m.name!r}"
        if idle:
            key, need = idle[0]
            raise ValueError(f"{where}: {key}={format_value(m.loss_params[key])} has no effect: "
                             + ("the training data has no positions" if need == "position" else f"{need} is off"))
        if gain is not None and len(gain) <= top:
            raise ValueError(f"{where}: label_gain={format_value(gain)} has {len(gain)} gains; the training labels go "
                             f"up to {top:g}")
        if gain is not None and np.ptp(np.asarray(gain, dtype=np.float64)[labels.astype(int)]) == 0:
            raise ValueError(f"{where}: label_gain={format_value(gain)} gives every training label the same gain: "
                             "every pair's |Delta NDCG|, so every gradient, is 0")
        if m.loss == "rank:map" and not np.isin(labels, (0, 1)).all():
            raise ValueError(f"{where}: XGBoost's rank:map takes labels 0 and 1; the training labels go up to {top:g} "
                             "(xgb-rank_map-plugin counts grades from 1 up as relevant)")
        if m.framework == "catboost" and have["max_bin"] > 65535:
            raise ValueError(f"{where}: max_bin={have['max_bin']}: CatBoost's border_count is at most 65535")


def _check(m: Method, loss: dict[str, Any], tree: dict[str, Any]) -> None:
    """The checks training would make, now: tree parameters, the objective's own check, or the
    booster's (a one-round fit on a four-document stand-in query, where its checks run)."""
    check_tree_params(tree)
    if _catboost_own(m) or m.framework == "linear":
        for key, value in loss.items():
            test, text = OWN_PARAM_LIMITS[key]
            if not test(value):
                raise ValueError(f"{key}={value!r}: must be {text}")
        return
    if m.framework != "booster":
        if (obj := _objective(m)) is not None:
            obj.check(m.loss_params)
        return
    from .. import boosters

    est = getattr(boosters, m.loss)(**{"n_rounds": 1, **m.loss_params})  # its own n_rounds checked, if set
    est._check_n_rounds()
    est.n_rounds = 1
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [0.5, 0.2]])
    est.fit(X, np.array([0.0, 1.0, 2.0, 0.0]), group=[4])
