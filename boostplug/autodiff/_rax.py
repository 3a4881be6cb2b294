""":func:`from_rax`: a rax loss (google/rax: ``rax.listmle_loss``, ``rax.approx_t12n(rax.ap_metric)``,
``rax.pairwise_logistic_loss``, ...) as a :class:`~.loss.JaxLoss`."""

from __future__ import annotations

import functools
import inspect
import pickle
import re
from types import SimpleNamespace
from typing import Any, Callable, Mapping

from .._validation import show
from ..objectives import _check_name
from ..objectives._contract import Param
from .loss import JaxLoss

__all__ = ["from_rax", "from_rax_classes"]

#: The classes :func:`from_rax` made, by class name: ``pickle`` finds them here (by reference, as
#: any class), in a process that has made them (a worker imports the module that calls from_rax).
from_rax_classes = SimpleNamespace()


def __getattr__(name: str) -> Any:
    if name == "made":  # what pickles of from_rax classes written before 0.1.0 name (no alias kept)
        raise pickle.UnpicklingError(f"{__name__}.made.<class>: a from_rax class pickled under its former path; "
                                     f"from_rax's classes are {__name__}.from_rax_classes.<class>: pickle it again")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rax_query(loss_fn: Callable[..., Any], names: tuple[str, ...], kwargs: Mapping[str, Any], scores: Any,
               labels: Any, mask: Any, *values: Any) -> Any:
    """rax's loss of one padded query: ``loss_fn(scores, labels, where=mask, **kwargs, **params)``."""
    return loss_fn(scores, labels, where=mask, **kwargs, **dict(zip(names, values)))


def _unpadded(lw: Callable[..., Any]) -> Callable[..., Any]:
    """rax's ``dcg_lambdaweight``, ``dcg2_lambdaweight`` (or a partial of one) times ``n / L``: they multiply by
    the list's length, the bucket's ``L`` here, where rax on the query alone multiplies by its ``n`` documents."""
    if getattr(getattr(lw, "func", lw), "__name__", "") not in ("dcg_lambdaweight", "dcg2_lambdaweight"):
        return lw
    return lambda s, y, *, where, **kw: lw(s, y, where=where, **kw) * (where.sum(-1)[..., None, None] / s.shape[-1])


def from_rax(loss_fn: Callable[..., Any], *, name: str, params: Mapping[str, Param] | None = None,
             kwargs: Mapping[str, Any] | None = None, summary: str | None = None) -> type[JaxLoss]:
    """A :class:`~.loss.JaxLoss` class whose query loss is ``loss_fn(scores, labels, where=mask,
    **kwargs, **params)``: rax's loss of the list as rax computes it (its own ``reduce_fn``, default
    the mean; a transformed metric, ``rax.approx_t12n(metric)``, is the negative metric), its
    gradient rax's own ``jax.grad``.

    Args:
        loss_fn: a rax loss function (or any with rax's call: scores, labels, ``where=``).
        name: the objective's name (lower case), for the registry and saved models.
        params: declared parameters (:class:`~boostplug.objectives.Param`), passed to ``loss_fn``
            by keyword (rax's ``epsilon`` of ``poly1_softmax_loss``, say): tunable, recorded.
        kwargs: fixed keyword arguments of ``loss_fn`` (``lambdaweight_fn=rax.dcg_lambdaweight``).
        summary: one line for listings (default: the function's name).

    Example::

        import rax
        RaxAP = from_rax(rax.approx_t12n(rax.ap_metric), name="rax_approx_ap")
    """
    if not callable(loss_fn):
        raise TypeError(f"from_rax: loss_fn must be a rax loss function, got {show(loss_fn)}")
    _check_name("from_rax: name", name)
    params = {} if params is None else params
    kwargs = {} if kwargs is None else kwargs
    for what, given in (("params", params), ("kwargs", kwargs)):
        if not isinstance(given, Mapping):
            raise TypeError(f"from_rax: {what} must be a dict of keyword -> {'Param' if what == 'params' else 'value'}, "
                            f"got {show(given)}")
    bad = [k for k, p in params.items() if not isinstance(p, Param)]
    if bad:
        raise TypeError(f"from_rax: params[{bad[0]!r}] must be a boostplug.objectives.Param, got {show(params[bad[0]])}")
    clash = sorted((set(params) & set(kwargs)) | ({"where"} & (set(params) | set(kwargs))))
    if clash:
        raise ValueError(f"from_rax: {clash} given twice (params, kwargs, or the mask's where=)")
    fn_name = getattr(loss_fn, "__name__", type(loss_fn).__name__)
    try:  # a function without a signature (a builtin) is taken as it is
        accepted = [] if any(p.kind == p.VAR_KEYWORD for p in inspect.signature(loss_fn).parameters.values()) \
            else list(inspect.signature(loss_fn).parameters)
    except (TypeError, ValueError):
        accepted = []
    unknown = [k for k in ["where", *params, *kwargs] if accepted and k not in accepted]
    if unknown:
        raise TypeError(f"from_rax: {fn_name} takes no keyword {unknown[0]!r} (it takes {accepted})")
    kwargs = {k: _unpadded(v) if k == "lambdaweight_fn" else v for k, v in kwargs.items()}
    class_name = "".join(part.capitalize() for part in re.split(r"[^a-z0-9]+", name))
    cls = type(class_name, (JaxLoss,), {
        "__module__": __name__, "__qualname__": f"from_rax_classes.{class_name}",
        "__doc__": f"rax's {fn_name} as a JaxLoss (:func:`boostplug.autodiff.from_rax`).",
        "name": name, "summary": summary or f"rax's {fn_name}", "params": dict(params),
        "query_loss": staticmethod(functools.partial(_rax_query, loss_fn, tuple(params), dict(kwargs))),
    })
    setattr(from_rax_classes, class_name, cls)
    return cls
