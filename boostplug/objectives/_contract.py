"""The objective contract: what makes a :class:`Loss` subclass an objective (:func:`check_contract`)
and the module-level ``prepare``/``loss``/``grad_hess`` made from one (:func:`module_functions`).

The contract is stated for users in docs/objectives/index.md ("The objective contract"); its
parts live in :mod:`._declarations` (``Param``, ``Search``, ``Hessian``), :mod:`._loss` (the
``Loss`` base, the Hessian floor) and :mod:`._non_finite` (``NonFiniteError``), and are
importable from here too.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._declarations import GRADIENT_KINDS, HESSIAN_KINDS, PARAM_KINDS, Hessian, Param, Search, check_params
from ._loss import HESSIAN_FLOOR, NO_INFO_HESSIAN, HessianFloorWarning, Loss, floor_hessian, floor_values
from ._non_finite import MODERATE_LABEL, MODERATE_SCORE, MODERATE_WEIGHT, NonFiniteError

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "HessianFloorWarning", "floor_hessian", "floor_values", "check_params",
           "PARAM_KINDS", "HESSIAN_KINDS", "GRADIENT_KINDS", "Search", "Param", "Hessian", "Loss", "check_contract",
           "ModuleFunctions", "module_functions", "scores_function", "NonFiniteError", "MODERATE_SCORE",
           "MODERATE_LABEL", "MODERATE_WEIGHT"]


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


# ---- module-level functions from a Loss class -------------------------------------------------------
class ModuleFunctions(NamedTuple):
    """An objective's module-level ``prepare``, ``loss`` and ``grad_hess``."""

    prepare: Callable[..., Loss]
    loss: Callable[..., float]
    grad_hess: Callable[..., tuple[NDArray[np.float64], NDArray[np.float64]]]


def _as_module_function(fn: Callable[..., Any], loss_class: type[Loss], name: str, doc: str) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = loss_class.__module__
    fn.__doc__ = doc
    return fn


def scores_function(loss_class: type[Loss], method: str) -> Callable[..., Any]:
    """``f(scores, labels, group_ptr, *, weights=None, **params)`` =
    ``loss_class(labels, group_ptr, weights=weights, **params).<method>(scores)``, named
    ``method`` in ``loss_class``'s module (MPBoost's ``log_loss``, every objective's
    ``loss`` and ``grad_hess``)."""
    if not callable(getattr(loss_class, method, None)):
        raise TypeError(f"{loss_class.__name__} has no method {method!r}")

    def f(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike, *, weights: ArrayLike | None = None,
          **params: Any) -> Any:
        return getattr(loss_class(labels, group_ptr, weights=weights, **params), method)(scores)

    head = (getattr(loss_class, method).__doc__ or "").strip().splitlines()
    doc = (f"{head[0] if head else method}\n\n{loss_class.name}: "
           f"``prepare(labels, group_ptr, weights=weights, **params).{method}(scores)``.")
    return _as_module_function(f, loss_class, method, doc)


def module_functions(loss_class: type[Loss]) -> ModuleFunctions:
    """The module-level ``prepare``, ``loss`` and ``grad_hess`` of an objective module::

        prepare, loss, grad_hess = module_functions(QBRankObjective)
    """

    def prepare(labels: ArrayLike, group_ptr: ArrayLike, *, weights: ArrayLike | None = None,
                **params: Any) -> Loss:
        return loss_class(labels, group_ptr, weights=weights, **params)

    doc = (f"Bind {loss_class.name} to ``labels``/``group_ptr`` (per-query ``weights``) once: a "
           f":class:`{loss_class.__name__}`.\n\nRaises ``ValueError``/``TypeError`` naming any unknown "
           "or invalid parameter.")
    return ModuleFunctions(_as_module_function(prepare, loss_class, "prepare", doc),
                           scores_function(loss_class, "loss"), scores_function(loss_class, "grad_hess"))
