"""The papers' ranking losses as framework-free objectives.

Use :func:`get` to look one up by name and :func:`names` to list them::

    >>> from boostplug import objectives
    >>> obj = objectives.get("mpboost")
    >>> g, h = obj.grad_hess(scores, labels, group_ptr, ddf="logdd")   # doctest: +SKIP

Each entry has ``loss``, ``grad_hess``, ``prepare`` (binds labels/groups once,
for the boosting loop), ``defaults`` and ``hessians`` (what each Hessian mode
is: exact, a bound, or the paper's fitting weights).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Mapping

import numpy as np

from ._base import HESSIAN_FLOOR, NO_INFO_HESSIAN, PreparedObjective, check_params, floor_hessian, show

__all__ = ["Objective", "get", "names", "HESSIAN_FLOOR", "NO_INFO_HESSIAN", "PreparedObjective", "check_params",
           "floor_hessian"]


@dataclass(frozen=True)
class Objective:
    """A registry entry: one paper loss (optionally with fixed parameters)."""

    name: str
    module_name: str
    summary: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module_name}")

    @property
    def defaults(self) -> dict[str, Any]:
        d = dict(self.module.DEFAULTS)
        d.update(self.fixed)
        return d

    @property
    def hessians(self) -> dict[str, str]:
        return dict(self.module.HESSIANS)

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        clash = sorted(k for k in params if k in self.fixed and params[k] != self.fixed[k])
        if clash:
            raise ValueError(
                f"objective {self.name!r} fixes " + ", ".join(f"{k}={show(self.fixed[k])}" for k in clash)
                + "; got " + ", ".join(f"{k}={show(params[k])}" for k in clash)
            )
        merged = dict(params)
        merged.update(self.fixed)
        return merged

    def check(self, params: Mapping[str, Any]) -> None:
        """Raise ``ValueError``/``TypeError`` for an unknown parameter name or an invalid value,
        without data: the objective is bound to a two-document stand-in query, which runs every
        check of its ``prepare`` (explicit ``pairs``, row indices of the real data, are replaced
        by the stand-in's one pair and checked when the objective binds to that data)."""
        check_params(self.name, self._params(params), self.defaults)
        stand_in = dict(params)
        if stand_in.get("pairs") is not None:
            stand_in["pairs"] = [[0, 1]]
        self.prepare(np.zeros(2), np.array([0, 2], dtype=np.int64), **stand_in)

    def prepare(self, labels, group_ptr, *, weights=None, **params) -> PreparedObjective:
        return self.module.prepare(labels, group_ptr, weights=weights, **self._params(params))

    def loss(self, scores, labels, group_ptr, *, weights=None, **params) -> float:
        return self.prepare(labels, group_ptr, weights=weights, **params).loss(scores)

    def grad_hess(self, scores, labels, group_ptr, *, weights=None, **params):
        return self.prepare(labels, group_ptr, weights=weights, **params).grad_hess(scores)


_REGISTRY: dict[str, Objective] = {
    o.name: o
    for o in (
        Objective("qbrank", "qbrank", "QBRank/GBRank: quadratic hinge on preference pairs + squared error (Zheng et al. 2007)"),
        Objective("mpboost", "mpboost", "MPBoost: exponential pairwise loss with directed distance functions (Zhu et al. 2009)"),
        Objective("ndcg_boost", "ndcg_boost", "NDCG_Boost: expected-NDCG bound (Valizadegan et al. 2009)"),
        Objective("rankboost", "mpboost", "RankBoost's exponential pairwise loss (= MPBoost with the BINARY DDF)", {"ddf": "binary"}),
    )
}


def names() -> list[str]:
    """Names of the registered objectives."""
    return list(_REGISTRY)


def get(name: str) -> Objective:
    """The registered objective called ``name`` (``ValueError`` if unknown)."""
    if not isinstance(name, str):
        raise TypeError(f"objective name must be a string, got {type(name).__name__}")
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}; choose one of {names()}") from None
