"""The objective contract: what makes a :class:`Loss` subclass an objective (:func:`check_contract`,
which :func:`register` runs; docs/objectives/index.md). Its parts are importable from here too.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping

import numpy as np

from ._declarations import Hessian, Param, Search, check_params
from ._loss import HESSIAN_FLOOR, NO_INFO_HESSIAN, HessianFloorWarning, Loss, floor_hessian, floor_values
from ._non_finite import NonFiniteError

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "HessianFloorWarning", "floor_hessian", "floor_values", "check_params",
           "Search", "Param", "Hessian", "Loss", "check_contract", "NonFiniteError"]


# Attributes an instance sets itself: a parameter of the same name would overwrite them.
_INSTANCE_ATTRS = ("labels", "group_ptr", "query_weights", "settings", "rounds")


def check_contract(loss_class: Any) -> None:
    """``TypeError``/``ValueError`` naming what ``loss_class`` lacks to be an objective: a
    :class:`Loss` subclass with a ``name``, ``_loss`` and ``_grad_hess``, at least one
    :class:`Hessian` mode (a scaled gradient only with a ``"fitting"`` Hessian), :class:`Param`
    declarations whose names are free and whose defaults (and search ranges) pass their own checks."""
    if not (isinstance(loss_class, type) and issubclass(loss_class, Loss)):
        raise TypeError(f"an objective is a subclass of boostplug.objectives.Loss, got {loss_class!r}")
    who = loss_class.__name__
    if not isinstance(loss_class.name, str) or not loss_class.name:
        raise TypeError(f"{who} declares no name (class attribute name = '...')")
    for method in ("_loss", "_grad_hess"):
        if getattr(loss_class, method) is getattr(Loss, method):
            raise TypeError(f"{who} does not implement {method}(scores)")
    hessians = loss_class.hessians
    if not isinstance(hessians, Mapping) or not hessians:
        raise TypeError(f"{who} declares no Hessian mode (hessians = {{'exact': Hessian('exact', '...')}})")
    for mode, h in hessians.items():
        if not isinstance(mode, str) or not isinstance(h, Hessian):
            raise TypeError(f"{who}.hessians[{mode!r}] must be a Hessian under a string name, got {h!r}")
        if h.gradient in ("scaled", "newton") and h.kind != "fitting":
            raise ValueError(f"{who}.hessians[{mode!r}] declares a {h.gradient} gradient with a {h.kind!r} Hessian: "
                             "only a 'fitting' Hessian may go with it (an exact or bounding Hessian is one of the loss, "
                             f"whose derivative a {h.gradient} gradient is not)")
    if any(h.gradient == "lambda" for h in hessians.values()):
        for method in ("loss", "grad_hess"):
            if "weights_at" not in inspect.signature(getattr(loss_class, method)).parameters:
                raise TypeError(f"{who} declares a 'lambda' gradient, whose pair weights the checks hold, but its "
                                f"{method} takes no weights_at= (Loss.{method} takes it: an override must too)")
    if loss_class.default_hessian is not None and loss_class.default_hessian not in hessians:
        raise ValueError(f"{who}.default_hessian = {loss_class.default_hessian!r} is not among its Hessian "
                         f"modes {list(hessians)}")
    if not isinstance(loss_class.params, Mapping):
        raise TypeError(f"{who}.params must be a dict of name -> Param, got {type(loss_class.params).__name__}")
    if "hessian" in loss_class.params:
        raise TypeError(f"{who} declares a 'hessian' parameter: declare the modes in hessians instead "
                        "(the parameter is added from them)")
    if "hessian_floor" in loss_class.params or not isinstance(loss_class.hessian_floor, (bool, np.bool_)):
        raise TypeError(f"{who}: declare the Hessian floor's default as the class attribute hessian_floor = True or "
                        f"False (the parameter is added from it), got {loss_class.hessian_floor!r}")
    reserved = set(dir(loss_class)) | set(_INSTANCE_ATTRS)
    for pname, p in loss_class.params.items():
        if not isinstance(p, Param):
            raise TypeError(f"{who}.params[{pname!r}] must be a Param, got {p!r}")
        if not isinstance(pname, str) or not pname.isidentifier() or pname in reserved:
            raise TypeError(f"{who}: parameter name {pname!r} is not an identifier or is taken by the "
                            "objective itself (labels, settings, loss, ...)")
    for pname, p in loss_class.declared_params().items():
        try:
            p.check(p.default, pname, objective=loss_class.name)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{who}: the default of {pname!r} fails its own check: {e}") from None
        if p.search is not None:
            ends = p.search.choices or (p.search.low, p.search.high)
            if p.search.integer:
                ends = tuple(int(v) for v in ends)
            for v in ends:
                try:
                    p.check(v, pname, objective=loss_class.name)
                except (TypeError, ValueError) as e:
                    raise ValueError(f"{who}: the search range of {pname!r} leaves its own range: {e}") from None

