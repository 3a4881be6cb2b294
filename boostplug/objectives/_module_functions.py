"""The module-level ``prepare``/``loss``/``grad_hess`` of an objective's module, made from its
class (``qbrank.loss(scores, labels, group_ptr, ...)``)."""

from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike

from ._loss import Loss

__all__ = ["module_functions", "scores_function"]


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


def module_functions(loss_class: type[Loss]) -> tuple[Callable[..., Loss], Callable[..., float], Callable[..., Any]]:
    """The module-level ``prepare``, ``loss`` and ``grad_hess`` of an objective module::

        prepare, loss, grad_hess = module_functions(QBRankObjective)
    """

    def prepare(labels: ArrayLike, group_ptr: ArrayLike, *, weights: ArrayLike | None = None,
                **params: Any) -> Loss:
        return loss_class(labels, group_ptr, weights=weights, **params)

    doc = (f"Bind {loss_class.name} to ``labels``/``group_ptr`` (per-query ``weights``) once: a "
           f":class:`{loss_class.__name__}`.\n\nRaises ``ValueError``/``TypeError`` naming any unknown "
           "or invalid parameter.")
    return (_as_module_function(prepare, loss_class, "prepare", doc), scores_function(loss_class, "loss"),
            scores_function(loss_class, "grad_hess"))
