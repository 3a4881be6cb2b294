"""Naming the author's function behind a failure of the pair or listwise base (private): the pair
function that raises (:class:`PairFunctionError`) or returns inf or NaN, found by running the base's
loop over the offending query as Python; the function numba cannot compile. Runs only after a
failure, and never replaces the error it explains."""

from __future__ import annotations

import inspect
import math
import pickle
from typing import Any, Callable

import numba as nb
import numpy as np
from numba.core.errors import NumbaError, UnsupportedBytecodeError
from numpy.typing import NDArray

from .._core import dispatch
from . import _pair_kernels as K
from ._non_finite import NonFiniteError

__all__ = ["NUMBA_CANNOT_COMPILE", "MACHINERY_ERRORS", "PairFunctionError", "pair_failure", "explain_pair",
           "diagnose_pair_functions", "list_failure"]

#: What numba raises when it cannot compile a function (typing and lowering errors; a function
#: whose bytecode it does not take, such as an ``import`` inside).
NUMBA_CANNOT_COMPILE: tuple[type[BaseException], ...] = (NumbaError, UnsupportedBytecodeError)
#: Errors of the machinery, never an author's function: they pass unchanged.
MACHINERY_ERRORS = (MemoryError, OSError, pickle.PickleError, *NUMBA_CANNOT_COMPILE)


class PairFunctionError(ValueError):
    """A pair function raised. Attributes: ``function`` (``"Class.pair_grad"``), ``arguments`` (what
    it got), ``query`` and ``rows`` (the pair, preferred row first; ``None`` for ``query_prefix``),
    ``error`` (its exception, also the ``__cause__``)."""

    def __init__(self, message: str, *, function: str, arguments: tuple[Any, ...], query: int | None,
                 rows: tuple[int, int] | None, error: BaseException) -> None:
        super().__init__(message)
        self.function, self.arguments, self.query, self.rows, self.error = function, arguments, query, rows, error


_FAILED = object()


class _Found(Exception):
    """What :func:`_scan` found, raised out of the loop run as Python."""


def _quietly(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, or :data:`_FAILED` when it raises (the search for a failing function must
    never replace the error it explains)."""
    try:
        return call(*args)
    except Exception:
        return _FAILED


def _plain(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """numpy scalars (as the loop run as Python makes them) as Python numbers, in a pair's view too."""
    def plain(v: Any) -> Any:
        return float(v) if isinstance(v, np.floating) else int(v) if isinstance(v, np.integer) else v
    return tuple(K.Pair(*map(plain, v)) if isinstance(v, K.Pair) else plain(v) for v in values)


def pair_failure(loss: Any, scores: NDArray[np.float64], want_loss: bool) -> PairFunctionError | None:
    """The :class:`PairFunctionError` of the first pair function call that raises, on the first
    query whose kernel call fails; ``None`` when none is found."""
    found = _quietly(_scan, loss, scores, want_loss, None, True)
    return found if isinstance(found, PairFunctionError) else None


def _scan(loss: Any, scores: NDArray[np.float64], want_loss: bool, q: int | None, raised: bool,
          row: int | None = None) -> PairFunctionError | tuple[str, tuple[Any, ...], float] | None:
    """The first call of the loop over query ``q``'s pairs (``None``: the first query whose kernel
    call fails; ``row``: only its pairs), run as Python, that raises (``raised``: a
    :class:`PairFunctionError`) or returns inf or NaN (``(function, arguments, value)``)."""
    if q is None:
        serial = dispatch.serial_twin(loss._kernel)
        q = next(k for k in range(loss.n_queries) if _quietly(loss._call, serial, scores, want_loss,
                                                              slice(k, k + 1)) is _FAILED)
    cls, seen = type(loss).__name__, [None]   # the pair being summed: (preferred row, other row)

    def watched(name: str, fn: Any) -> Callable[..., Any]:
        def call(*arguments: Any) -> Any:
            pair, arguments = seen[-1] if name != "query_prefix" else None, _plain(arguments)
            try:
                value = fn(*arguments)
            except Exception as e:
                shown = ", ".join("..." if isinstance(v, np.ndarray) else repr(v) for v in arguments)
                where = f"query {q}" if pair is None else f"the pair of rows {pair[0]} (preferred) and {pair[1]} " \
                                                           f"of query {q}"
                raise _Found(PairFunctionError(f"{loss.name}: {cls}.{name}({shown}) raises {type(e).__name__}: {e}, "
                                               f"on {where}", function=f"{cls}.{name}", arguments=arguments,
                                               query=q, rows=pair, error=e)) from e
            if name == "pair_weight" and value < 0.0:
                shown = ", ".join(repr(v) for v in arguments if not isinstance(v, np.ndarray))
                raise _Found(PairFunctionError(
                    f"{loss.name}: {cls}.pair_weight({shown}) returns {value!r}, a negative weight, on the pair of "
                    f"rows {pair[0]} (preferred) and {pair[1]} of query {q}: pair weights must be >= 0",
                    function=f"{cls}.pair_weight", arguments=arguments, query=q, rows=pair,
                    error=ValueError(f"negative pair weight {value!r}")))
            if pair is not None and row in (None, *pair) and not math.isfinite(value):
                raise _Found((f"{cls}.{name}", arguments, float(value)))
            return value
        return call

    fns = [fn if fn is None else watched(name, fn) for name, fn in zip(K.FUNCTIONS, loss._fns)]
    loop = K.pair_kernel(*fns, False, loss._by_label, note=lambda ri, rj, up: seen.append((int(ri), int(rj)) if up else
                                                                           (int(rj), int(ri))))
    try:
        loss._call(loop, scores, want_loss, slice(q, q + 1))
    except _Found as found:
        if raised == isinstance(found.args[0], PairFunctionError):
            return found.args[0]
    return None


def explain_pair(loss: Any, error: NonFiniteError, scores: NDArray[np.float64]) -> NonFiniteError:
    """``error`` with the first pair function that returns inf or NaN on the offending query's (and
    row's) pairs, when the objective, not the data, is at fault."""
    if error.cause != "objective":
        return error
    want_loss = error.method == "loss"
    queries = range(loss.n_queries) if error.query is None else (error.query,)  # None: zero scores, anywhere
    found = next((f for q in queries if isinstance(f := _quietly(_scan, loss, scores, want_loss, q, False,
                                                                 None if want_loss else error.row), tuple)), None)
    if found is None:
        return error
    shown = ", ".join(repr(v) for v in found[1] if not isinstance(v, (np.ndarray, tuple)))
    return NonFiniteError(f"{error}; it is {found[0]}({shown}), which returns {found[2]}",
                          objective=error.objective, method=error.method, cause=error.cause, query=error.query,
                          row=error.row, value=error.value)


def diagnose_pair_functions(cls: type, fns: Any, args: tuple[Any, ...], error: BaseException) -> None:
    """A ``TypeError`` naming the function numba cannot compile, or that returns no number (with
    what it raises when it raises whatever its arguments), else nothing."""
    width = max(int(cls.prefix_width), 1)
    probe = {"d": 1.0, "pair": K.Pair(1.0, 0, 1, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0 / math.log2(3.0), 1.0),
             "prefix": np.zeros((2, width)), "labels": np.array([1.0, 0.0]), "gains": np.array([1.0, 0.0]),
             "out": np.zeros((2, width))}
    for name, fn in zip(K.FUNCTIONS, fns):
        if fn is None:
            continue
        values = (*(probe[a] for a in K.leading(cls, name)), *args)
        signature = _signature(fn, values)
        try:
            fn.compile(signature)
        except NUMBA_CANNOT_COMPILE as e:
            raise TypeError(f"{cls.__name__}.{name}: numba cannot compile it ({str(e).strip().splitlines()[0]}). "
                            "Write the pair functions for numba: math on numbers, one pair at a time") from error
        returns = fn.overloads[signature].signature.return_type
        if name == "query_prefix" or isinstance(returns, (nb.types.Float, nb.types.Integer)):
            continue
        if returns == nb.types.none:
            try:
                fn.py_func(*values)
            except Exception as e:
                raise TypeError(f"{cls.__name__}.{name} raises {type(e).__name__}: {e} whatever its arguments "
                                "(numba finds that it returns no number)") from e
        raise TypeError(f"{cls.__name__}.{name} must return one number; numba finds that it returns {returns}") \
            from error


def _signature(fn: Any, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """numba's signature of ``fn(*values)`` (a ``*rest`` takes the extra values as one tuple)."""
    parameters = inspect.signature(fn.py_func).parameters.values()
    types_ = [nb.typeof(v) for v in values]
    if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return tuple(types_)
    named = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in parameters)
    return (*types_[:named], nb.types.StarArgTuple.from_types(tuple(types_[named:])))


def list_failure(loss: Any, scores: NDArray[np.float64], want_loss: bool, inputs: Any) -> ValueError | None:
    """A ``ValueError`` naming the list function and the first query on which the loop, run
    serially one query at a time on the failed call's ``inputs``, raises (the original as its
    cause); ``None`` when none does."""
    serial = dispatch.serial_twin(loss._kernels[want_loss])
    for q in range(loss.n_queries):
        try:
            loss._call(serial, scores, want_loss, inputs, q)
        except Exception as found:
            fname = "list_loss" if want_loss else "list_grad_hess"
            a, b = loss.group_ptr[q], loss.group_ptr[q + 1]
            error = ValueError(f"{loss.name}: {type(loss).__name__}.{fname} raises {type(found).__name__}: {found}, "
                               f"on query {q} (rows {a}..{b - 1})")
            error.__cause__ = found
            return error
    return None
