"""The papers' ranking losses as framework-free objectives, and the registry of objectives.

Use :func:`get` to look one up by name and :func:`names` to list them (:func:`resolve` also takes
an objective class or instance that was never registered)::

    >>> from boostplug import objectives
    >>> obj = objectives.get("mpboost")
    >>> g, h = obj.grad_hess(scores, labels, group_ptr, ddf="logdd")

Each entry has ``loss``, ``grad_hess``, ``prepare`` (binds labels/groups once,
for the boosting loop), ``defaults``, ``hessians`` and ``hessian_kinds`` (what each
Hessian mode is: exact, a bound, or the paper's fitting weights) and ``gradient_kinds``
(whether a mode's gradient is d loss / d score, "exact", or a declared rescaling, "scaled").

A new objective is a subclass of :class:`Loss` (what it declares and the conventions it
follows: docs/objectives/index.md, "The objective contract"), of :class:`PairwiseLoss` for a
loss summed over pairs (:mod:`.pairwise`: a pair loss, its derivatives and optionally a weight
that sees the query's current order, as LambdaRank's), or of :class:`ListwiseLoss` for one
written per query over its whole list (:mod:`.listwise`), added with :func:`register`; the adapters
(``boostplug.lightgbm.objective(name, ...)``, ...) and ``boostplug compare`` then offer it by name.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any, Mapping

from .._extras import installed
from .._validation import did_you_mean, show
from ._contract import (
    HESSIAN_FLOOR,
    NO_INFO_HESSIAN,
    Hessian,
    HessianFloorWarning,
    Loss,
    NonFiniteError,
    Param,
    Search,
    check_contract,
    check_params,
    floor_hessian,
    floor_values,
)
from .approx_ndcg import ApproxMRR, ApproxNDCG
from .ddf import DDF_NAMES
from .lambdaloss import NDCGLoss1, NDCGLoss2, NDCGLoss2PP
from .lambdamart import LambdaERR, LambdaMAP, LambdaMRR, LambdaRBP
from .lambdarank import LambdaRank
from .listmle import ListMLE
from .mpboost import MPBoostObjective
from .ndcg_boost import NDCGBoostObjective
from .pairwise import PairwiseLoss
from .qbrank import QBRankObjective
from .listwise import ListwiseLoss
from .ranknet import RankNet
from .softmax_ce import ListNet
from .yetirank import YetiRank
from .xgb_lambdarank import RankMAP, RankNDCG, RankPairwise
from .xendcg import XENDCG

__all__ = ["Objective", "get", "names", "register", "unregister", "resolve", "settings_of", "is_registered", "Loss",
           "PairwiseLoss", "ListwiseLoss", "Param", "Search", "Hessian", "HESSIAN_FLOOR",
           "NO_INFO_HESSIAN", "HessianFloorWarning", "check_params", "floor_hessian", "floor_values", "NonFiniteError"]

# Objective and method names: lower case (get() folds case), usable in "boostplug:<name>" and
# compare's "name[key=value]" specifications.
_NAME_RX = re.compile(r"[a-z][a-z0-9_.+-]*")


@dataclass(frozen=True)
class Objective:
    """A registry entry: one objective class, optionally with fixed parameters.

    ``methods``: the names under which ``boostplug compare`` lists tree methods for this
    objective, each with the parameters it sets (``{"mpboost-ldd": {"ddf": "ldd"}, ...}``).
    """

    name: str
    loss_class: type[Loss]
    summary: str
    fixed: Mapping[str, Any] = field(default_factory=dict)
    methods: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(self.loss_class.__module__)

    @property
    def defaults(self) -> dict[str, Any]:
        return {**self.loss_class.defaults(), **self.fixed}

    @property
    def hessians(self) -> dict[str, str]:
        """Hessian mode -> what it is."""
        return self.loss_class.hessian_texts()

    @property
    def hessian_kinds(self) -> dict[str, str]:
        """Hessian mode -> ``"exact"``, ``"bound"`` or ``"fitting"``."""
        return self.loss_class.hessian_kinds()

    @property
    def gradient_kinds(self) -> dict[str, str]:
        """Hessian mode -> what its gradient is: ``"exact"`` (d loss / d score) or ``"scaled"``
        (a positive per-document rescaling of it, stated in ``loss_class.hessians[mode].scaling``)."""
        return self.loss_class.gradient_kinds()

    @property
    def row_params(self) -> tuple[str, ...]:
        """Parameters that hold row indices of one training set (QBRank's ``pairs``): they
        cannot be saved with a model nor follow a data set into cross-validation folds."""
        return self.loss_class.row_params()

    def search_space(self, params: Mapping[str, Any] | None = None) -> dict[str, Search]:
        """What ``boostplug compare --tune`` searches for this objective given the settings
        ``params`` (defaults for the rest); fixed parameters are never searched."""
        merged = {**self.defaults, **self._params(params or {})}
        space = self.loss_class.search_space(merged)
        return {k: s for k, s in space.items() if k not in self.fixed}

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        clash = sorted(k for k in params if k in self.fixed and params[k] != self.fixed[k])
        if clash:
            raise ValueError(
                f"objective {self.name!r} fixes " + ", ".join(f"{k}={show(self.fixed[k])}" for k in clash)
                + "; got " + ", ".join(f"{k}={show(params[k])}" for k in clash)
            )
        return {**params, **self.fixed}

    def check(self, params: Mapping[str, Any]) -> None:
        """Raise ``ValueError``/``TypeError`` for an unknown parameter name or an invalid value,
        without data (:meth:`Loss.check`: row-index parameters are checked for their form, and
        against the rows when the objective binds to its data)."""
        self.loss_class.check(**self._params(params))

    def prepare(self, labels, group_ptr, *, weights=None, **params) -> Loss:
        return self.loss_class(labels, group_ptr, weights=weights, **self._params(params))

    def loss(self, scores, labels, group_ptr, *, weights=None, **params) -> float:
        return self.prepare(labels, group_ptr, weights=weights, **params).loss(scores)

    def grad_hess(self, scores, labels, group_ptr, *, weights=None, **params):
        return self.prepare(labels, group_ptr, weights=weights, **params).grad_hess(scores)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The read-only mapping views do not pickle; the entry is rebuilt from plain dicts (the
        # loss class itself pickles by reference), so an unpickled entry equals this one even
        # in a process where it is not registered (spawn workers of a user-registered objective).
        methods = {m: dict(settings) for m, settings in self.methods.items()}
        return _rebuild_entry, (self.name, self.loss_class, self.summary, dict(self.fixed), methods)


def _rebuild_entry(name: str, loss_class: type[Loss], summary: str, fixed: dict[str, Any],
                   methods: dict[str, dict[str, Any]]) -> Objective:
    return Objective(name, loss_class, summary, MappingProxyType(fixed),
                     MappingProxyType({m: MappingProxyType(s) for m, s in methods.items()}))


_REGISTRY: dict[str, Objective] = {}


def _check_name(what: str, name: Any) -> str:
    if not isinstance(name, str) or not _NAME_RX.fullmatch(name):
        raise ValueError(f"{what} must be lower case letters, digits and _.+- (starting with a letter), "
                         f"got {show(name)}")
    return name


def _checked_settings(loss_class: type[Loss], what: str, params: Any) -> dict[str, Any]:
    """``params`` (a mapping of declared, non-row parameters) with each value checked."""
    if not isinstance(params, Mapping):
        raise TypeError(f"{what} must be a dict of parameter -> value, got {type(params).__name__}")
    declared = loss_class.declared_params()
    check_params(loss_class.name, params, declared)
    rows = sorted(set(params) & set(loss_class.row_params()))
    if rows:
        raise ValueError(f"{what} cannot fix {rows}: row indices belong to one training set")
    return {k: declared[k].check(v, k, objective=loss_class.name) for k, v in params.items()}


def register(loss_class: type[Loss], *, name: str | None = None, summary: str | None = None,
             fixed: Mapping[str, Any] | None = None, methods: Mapping[str, Mapping[str, Any]] | None = None,
             replace: bool = False) -> Objective:
    """Add an objective to the registry and return its entry.

    Args:
        loss_class: a :class:`Loss` subclass that follows the contract (``TypeError`` /
            ``ValueError`` naming what it lacks otherwise).
        name: the registry name (default ``loss_class.name``): lower case.
        summary: one line for listings (default ``loss_class.summary``).
        fixed: parameters this entry fixes (``rankboost`` = MPBoost with ``ddf="binary"``).
        methods: compare's tree-method names for it, each with the parameters it sets
            (default ``{name: {}}``); unique across the registry.
        replace: replace an entry of the same name (else that is a ``ValueError``).
    """
    check_contract(loss_class)
    name = _check_name("an objective name", loss_class.name if name is None else name)
    if name in _REGISTRY and not replace:
        raise ValueError(f"objective {name!r} is already registered ({_REGISTRY[name].loss_class.__name__}); "
                         "pass replace=True to replace it")
    summary = loss_class.summary if summary is None else summary
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"objective {name!r} needs a one-line summary (summary= or {loss_class.__name__}.summary)")
    fixed_values = _checked_settings(loss_class, f"objective {name!r}: fixed", fixed or {})
    listed: dict[str, Mapping[str, Any]] = {}
    for method, settings in ({name: {}} if methods is None else methods).items():
        _check_name(f"objective {name!r}: method name", method)
        checked = _checked_settings(loss_class, f"objective {name!r}: method {method!r}", settings)
        clash = sorted(set(checked) & set(fixed_values))
        if clash:
            raise ValueError(f"objective {name!r}: method {method!r} sets {clash}, which the objective fixes")
        owner = next((o.name for o in _REGISTRY.values() if method in o.methods and o.name != name), None)
        if owner is not None:
            raise ValueError(f"objective {name!r}: method name {method!r} is already listed by objective {owner!r}")
        listed[method] = MappingProxyType(checked)
    entry = Objective(name, loss_class, summary, MappingProxyType(fixed_values), MappingProxyType(listed))
    _REGISTRY[name] = entry
    return entry


def unregister(name: str) -> Objective:
    """Remove the objective called ``name`` and return its entry (``ValueError`` if unknown)."""
    entry = get(name)
    del _REGISTRY[entry.name]
    return entry


def names() -> list[str]:
    """Names of the registered objectives, in the order they were registered."""
    return list(_REGISTRY)


def resolve(objective: Any) -> Objective:
    """The entry of ``objective``: a registered name (as :func:`get`), a registry entry, or a
    :class:`Loss` subclass or an instance of one, registered or not (registration is for names on
    the command line and in saved models). A registered class gives its entry (the one of its own
    name, else one that fixes nothing); any other is checked as :func:`register` checks it and gets
    an entry of its own that is not added to the registry.
    ``TypeError`` for anything else."""
    if isinstance(objective, Objective):
        return objective
    if isinstance(objective, str):
        return get(objective)
    cls = type(objective) if isinstance(objective, Loss) else objective
    if not (isinstance(cls, type) and issubclass(cls, Loss)):
        raise TypeError("an objective is a registered objective's name, a boostplug.objectives.Loss subclass or an "
                        f"instance of one, got {show(objective)}")
    mine = [e for e in _REGISTRY.values() if e.loss_class is cls]
    found = next((e for e in mine if e.name == cls.name), None) or next((e for e in mine if not e.fixed), None)
    if found is not None:
        return found
    check_contract(cls)
    name = _check_name(f"{cls.__name__}.name", cls.name)
    return Objective(name, cls, cls.summary or name, MappingProxyType({}), MappingProxyType({}))


def settings_of(objective: Any) -> dict[str, Any]:
    """The settings an objective given as an instance carries (its ``settings``); ``{}`` for a
    name, a class or an entry."""
    return dict(objective.settings) if isinstance(objective, Loss) else {}


def is_registered(entry: Objective) -> bool:
    """Whether ``entry`` is the registry's entry of its name (else a saved model cannot name it)."""
    return _REGISTRY.get(entry.name) == entry


def get(name: str) -> Objective:
    """The registered objective called ``name`` (``ValueError`` if unknown, with the closest names)."""
    if not isinstance(name, str):
        raise TypeError(f"objective name must be a string, got {type(name).__name__}")
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        if name.lower() in JAX_OBJECTIVES:
            raise ValueError(f"objective {name!r} {JAX_MISSING}") from None
        hint = did_you_mean(name.lower(), _REGISTRY, quote=True)
        raise ValueError(f"unknown objective {name!r}; {hint}{' ' if hint else ''}choose one of {names()}") from None


register(QBRankObjective)
register(MPBoostObjective, methods={f"mpboost-{d}": {"ddf": d} for d in DDF_NAMES})
register(NDCGBoostObjective)
register(MPBoostObjective, name="rankboost", summary="RankBoost's exponential pairwise loss (= MPBoost with the "
         "BINARY DDF)", fixed={"ddf": "binary"}, methods={"rankboost-loss": {}})
# compare's method "lambdarank" is LightGBM's built-in; this copy of it is listed beside it
register(LambdaRank, methods={"lambdarank-plugin": {}})
register(YetiRank, methods={"yetirank": {}, "yetiloss": {"mode": "ndcg"}})
# XGBoost's rank:ndcg, rank:pairwise, rank:map: compare's xgb-rank:* are the built-ins, these copies beside them
register(RankNDCG, methods={"rank_ndcg-plugin": {}})
register(RankPairwise, methods={"rank_pair-plugin": {}})  # shorter: compare's table fits 100 columns
register(RankMAP, methods={"rank_map-plugin": {}})
# compare's method "rank_xendcg" is LightGBM's built-in; this copy of it is listed beside it
register(XENDCG, methods={"xendcg-plugin": {}})
# the rest under their own names, each with one method of that name, in this order
for _loss_class in (ListNet, RankNet, NDCGLoss1, NDCGLoss2, NDCGLoss2PP, ApproxNDCG, ApproxMRR, ListMLE, LambdaMAP,
                    LambdaERR, LambdaMRR, LambdaRBP):
    register(_loss_class)
#: The objectives written in JAX (boostplug.autodiff): listed where the jax extra is installed, JAX imported at
#: its first use; elsewhere their names say what to install (a saved model of one loads and predicts without it).
JAX_OBJECTIVES = ("approx_ap", "neural_ndcg", "st_listnet", "rank_cosine")
JAX_MISSING = 'is written in JAX, which is not installed: pip install "boostplug[jax]"'
if installed("jax"):
    from ..autodiff.approx_ap import ApproxAP
    from ..autodiff.neural_ndcg import NeuralNDCG
    from ..autodiff.pt_ranking import RankCosine, STListNet

    for _loss_class in (ApproxAP, NeuralNDCG, STListNet, RankCosine):
        register(_loss_class)
