"""Spellings that moved, kept working with a ``DeprecationWarning``: the objective modules'
functions of the labels (``qbrank.grad_hess(scores, labels, group_ptr, **params)``, ...) and
:func:`module_functions`, which made them. A gradient is asked one way: of the registry entry,
``objectives.get(name).grad_hess(scores, labels, group_ptr, **params)``, which binds the objective
(``.prepare(labels, group_ptr, **params)``) and asks the bound one, ``grad_hess(scores)``."""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ._loss import Loss

__all__ = ["module_functions", "moved_functions"]

_FUNCTIONS = ("prepare", "loss", "grad_hess")


def _function(loss_class: type[Loss], name: str) -> Callable[..., Any]:
    """``prepare`` (the class itself), or ``name(scores, labels, group_ptr, *, weights=None, **params)``:
    the method ``name`` of ``loss_class`` bound to the labels."""
    if name == "prepare":
        return loss_class

    def function(scores: Any, labels: Any, group_ptr: Any, *, weights: Any = None, **params: Any) -> Any:
        return getattr(loss_class(labels, group_ptr, weights=weights, **params), name)(scores)

    return function


def moved_functions(loss_class: type[Loss], *names: str) -> Callable[[str], Any]:
    """An objective module's ``__getattr__``: its former functions ``prepare``, ``loss``, ``grad_hess``
    and ``names``, each with a ``DeprecationWarning`` that names the registry's spelling."""

    def __getattr__(name: str) -> Any:
        if name not in (*_FUNCTIONS, *names):
            raise AttributeError(f"module {loss_class.__module__!r} has no attribute {name!r}")
        entry = f"boostplug.objectives.get({loss_class.name!r})"
        new = f"{entry}.{name}(...)" if name in _FUNCTIONS else f"{entry}.prepare(...).{name}(scores)"
        warnings.warn(f"{loss_class.__module__}.{name} is deprecated; use {new}", DeprecationWarning, stacklevel=2)
        return _function(loss_class, name)

    return __getattr__


def module_functions(loss_class: type[Loss]) -> tuple[Callable[..., Any], ...]:
    """Deprecated: ``(prepare, loss, grad_hess)`` of ``loss_class`` as functions of the labels; use
    the methods of these names of ``objectives.resolve(loss_class)`` (no registration needed)."""
    warnings.warn("module_functions is deprecated; use boostplug.objectives.resolve(loss_class).prepare, .loss and "
                  ".grad_hess", DeprecationWarning, stacklevel=2)
    return tuple(_function(loss_class, name) for name in _FUNCTIONS)
