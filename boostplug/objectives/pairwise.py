"""A base for pairwise losses: write the loss of one pair and its first two derivatives, get the objective.

::

    class SquaredHinge(PairwiseLoss):
        name = "squared_hinge"
        summary = "squared hinge on the critical pairs"
        params = {"margin": Param(1.0, "real", "the margin", low=0.0, low_open=True)}

        @staticmethod
        def pair_loss(d, margin):
            return 0.5 * max(0.0, margin - d) ** 2

        @staticmethod
        def pair_grad(d, margin):
            return -max(0.0, margin - d)

        @staticmethod
        def pair_hess(d, margin):
            return 1.0 if d < margin else 0.0

The objective is ``L = sum_k W_k sum_{(i, j)} w_ij pair_loss(s_i - s_j)`` over the critical pairs
``(i, j)`` of each query ``k`` (``y_i > y_j``: :func:`boostplug.pairs.critical_pairs`, listed once
per data set in ``setup``), with the query weights ``W_k`` and the optional per-pair weights
``w_ij`` of :meth:`PairwiseLoss.pair_weights`. Its gradient and Hessian follow from the pair
functions: ``d L / d s_i`` adds ``W_k w_ij pair_grad(d)`` for each pair where ``i`` is preferred and
subtracts it where ``i`` is the other; the ``"exact"`` Hessian mode sums ``W_k w_ij pair_hess(d)``
over the document's pairs, which is the diagonal of the loss's Hessian (each pair's term is
``pair_hess(d) (e_i - e_j)(e_i - e_j)^T``). Declaring :data:`BOUND` adds a ``"bound"`` mode: twice
the sum of ``|W_k w_ij pair_hess(d)|``, which majorises that Hessian (Gershgorin) whatever the
signs of ``pair_hess``. Losses of score differences are shift invariant, as the contract expects.

The pair functions are called as ``f(d, *self.pair_args())``: by default the values of the declared
``params`` in their order. numba compiles them into kernels that run over all pairs, in parallel
over queries for large data (:mod:`boostplug._core.dispatch`). When numba cannot compile one of
them (one calling ``scipy.special.expit``, say), all three are called instead on numpy arrays of
every pair's difference and must then work elementwise on arrays. Either way each returns one
number per pair.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, ClassVar, Mapping, NamedTuple

import numba as nb
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaError
from numpy.typing import ArrayLike, NDArray

from .._core import dispatch
from .._validation import check_weights
from ..groups import qid_from_group_ptr
from ..pairs import PAIR_BYTES, critical_pairs
from . import _pairwise_kernels as K
from ._contract import Hessian, Loss, NonFiniteError

__all__ = ["PairwiseLoss", "EXACT", "BOUND", "PAIR_FUNCTIONS"]

#: The Hessian mode every pairwise loss has: the exact diagonal.
EXACT = Hessian("exact", "the sum of pair_hess(s_i - s_j) over the document's critical pairs, times their "
                "weights: the diagonal of the loss's Hessian")
#: A Hessian mode a pairwise loss may add (``hessians = {"exact": EXACT, "bound": BOUND}``).
BOUND = Hessian("bound", "twice the sum of |pair_hess(s_i - s_j)| over the document's critical pairs, times "
                "their weights: majorises the loss's Hessian")

#: The per-pair functions a :class:`PairwiseLoss` defines, as static methods of ``(d, *pair_args)``.
PAIR_FUNCTIONS = ("pair_loss", "pair_grad", "pair_hess")

# bytes per pair: the list, its weight, and (numpy mode) the round's differences and values
_BYTES_PER_PAIR = PAIR_BYTES + 8 + 3 * 8
_PROBE = np.array([-1.0, 0.0, 1.0])


class _PairFunctions(NamedTuple):
    """The three pair functions of one class and argument types: numba dispatchers when
    ``compiled``, else the plain functions, called on numpy arrays."""

    loss: Callable[..., Any]
    grad: Callable[..., Any]
    hess: Callable[..., Any]
    compiled: bool


_FUNCTIONS: dict[tuple[type, tuple[Any, ...]], _PairFunctions] = {}


class PairwiseLoss(Loss):
    """A loss summed over the critical pairs: subclass it, declare ``name``, ``summary`` and
    ``params``, and define the static methods ``pair_loss(d, ...)``, ``pair_grad(d, ...)`` (its
    derivative in ``d``) and ``pair_hess(d, ...)`` (its second derivative) of the pair difference
    ``d = s_i - s_j`` (``i`` preferred) and :meth:`pair_args`. The module docstring says what the
    objective, its gradient and its Hessian modes (:data:`EXACT`, optionally :data:`BOUND`) are.

    The pair functions must accept ``d = +-inf`` (scores so far apart that their difference
    overflows) and should return their limits there; an inf or NaN from moderate scores is refused
    with a :class:`NonFiniteError` that names the function and the ``d`` it failed at.
    """

    hessians: ClassVar[Mapping[str, Hessian]] = {"exact": EXACT}
    fresh_output = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:  # an objective (a base for several declares no name)
            _check_declaration(cls)

    # -- to define ---------------------------------------------------------------------------------
    @staticmethod
    def pair_loss(d: float, *args: Any) -> float:  # pragma: no cover - abstract
        """The loss of one pair whose scores differ by ``d`` (preferred minus other)."""
        raise NotImplementedError

    @staticmethod
    def pair_grad(d: float, *args: Any) -> float:  # pragma: no cover - abstract
        """``d pair_loss / d d``."""
        raise NotImplementedError

    @staticmethod
    def pair_hess(d: float, *args: Any) -> float:  # pragma: no cover - abstract
        """``d^2 pair_loss / d d^2``."""
        raise NotImplementedError

    def pair_args(self) -> tuple[Any, ...]:
        """What the pair functions get after ``d``: by default the declared ``params``' values in
        declaration order (``(self.sigma,)``)."""
        return tuple(self.settings[k] for k in self.params)

    def pair_weights(self, high: NDArray[np.float64], low: NDArray[np.float64]) -> ArrayLike | None:
        """Weights of the critical pairs from their labels (``high[p] > low[p]``), once per data set:
        ``None`` (the default) for 1, else finite and non-negative, one per pair (e.g. the gain
        difference ``2**high - 2**low``). They multiply the query weights."""
        return None

    # -- the objective -----------------------------------------------------------------------------
    def setup(self) -> None:
        args = self.pair_args()
        if not isinstance(args, tuple):
            raise TypeError(f"{type(self).__name__}.pair_args() must return a tuple, got {type(args).__name__}")
        self._args = args
        self._fns = _pair_functions(type(self), args)
        pairs = critical_pairs(self.labels, self.group_ptr, bytes_per_pair=_BYTES_PER_PAIR,
                               who=f"{self.name}: listing the critical pairs", limit_name=None)
        above, below = pairs[:, 0], pairs[:, 1]
        weight = self.query_weights[qid_from_group_ptr(self.group_ptr)[above]]
        given = self.pair_weights(self.labels[above], self.labels[below])
        if given is not None:
            weight = weight * check_weights(given, above.shape[0],
                                            name=f"{self.name}: pair_weights (one per critical pair)")
            if not np.isfinite(weight).all():
                raise ValueError(f"{self.name}: a query weight times a pair weight overflows float64")
        keep = weight > 0.0  # a pair of weight 0 has no term (0 * inf would be NaN)
        self._above, self._below, self._weight = above[keep], below[keep], weight[keep]
        # pairs are listed by query, so the preferred rows never decrease
        self._pair_ptr = np.searchsorted(self._above, self.group_ptr).astype(np.int64)
        self._bound = self.hessians[self.hessian].kind == "bound"

    def _loss(self, scores: NDArray[np.float64]) -> float:
        fns = self._fns
        if not fns.compiled:
            return float(np.sum(self._weight * _on_array(fns.loss, self._differences(scores), self._args)))
        out = np.empty(self._pair_ptr.shape[0] - 1)
        run = dispatch.kernel_for(K.pair_loss_sums, self._above.shape[0])
        run(scores, self._above, self._below, self._weight, self._pair_ptr, fns.loss, self._args, out)
        return float(out.sum())

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        fns, n = self._fns, self.n_docs
        if not fns.compiled:
            d = self._differences(scores)
            g = self._weight * _on_array(fns.grad, d, self._args)
            h = self._weight * _on_array(fns.hess, d, self._args)
            if self._bound:
                h = 2.0 * np.abs(h)
            grad = np.bincount(self._above, g, n) - np.bincount(self._below, g, n)
            return grad, np.bincount(self._above, h, n) + np.bincount(self._below, h, n)
        grad, hess = np.zeros(n), np.zeros(n)
        run = dispatch.kernel_for(K.pair_grad_hess_sums, self._above.shape[0])
        run(scores, self._above, self._below, self._weight, self._pair_ptr, fns.grad, fns.hess, self._args,
            self._bound, grad, hess)
        return grad, hess

    def _differences(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """``s_i - s_j`` of every pair, preferred first (the numpy path's one gather per call)."""
        return scores[self._above] - scores[self._below]

    # -- the contract's refusals, with the pair function that caused them ----------------------------
    def loss(self, scores: ArrayLike) -> float:
        try:
            return super().loss(scores)
        except NonFiniteError as e:
            raise self._blame(e, scores, ("pair_loss",)) from None

    def grad_hess(self, scores: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        try:
            return super().grad_hess(scores)
        except NonFiniteError as e:
            raise self._blame(e, scores, ("pair_grad", "pair_hess")) from None

    def _blame(self, error: NonFiniteError, scores: ArrayLike, names: tuple[str, ...]) -> NonFiniteError:
        """``error`` with the first pair function in ``names`` that returns inf or NaN on one of the
        offending pairs (the row's, else the query's, else any), when the objective, not the data, is at fault."""
        if error.cause != "objective":
            return error
        s = np.asarray(scores, dtype=np.float64)
        mine = np.ones(self._above.shape[0], dtype=bool)
        if error.query is not None:
            a, b = self.group_ptr[error.query], self.group_ptr[error.query + 1]
            mine = (self._above >= a) & (self._above < b)
        if error.row is not None and error.method == "grad_hess":
            mine &= (self._above == error.row) | (self._below == error.row)
        d = s[self._above[mine]] - s[self._below[mine]]
        raw = {name: _raw_function(type(self), name) for name in names}
        for name in names:
            values = _on_array(raw[name], d, self._args) if not self._fns.compiled else \
                np.array([getattr(self._fns, name.removeprefix("pair_"))(x, *self._args) for x in d], dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                shown = ", ".join(repr(v) for v in (float(d[bad[0]]), *self._args))
                message = (f"{error}; it is {type(self).__name__}.{name}({shown}), which returns "
                           f"{float(values[bad[0]])}")
                return NonFiniteError(message, objective=error.objective, method=error.method, cause=error.cause,
                                      query=error.query, row=error.row, value=error.value)
        return error


# ---- the pair functions: checked when the class is declared, compiled when it is first bound ----------
def _raw_function(cls: type, name: str) -> Any:
    """``cls``'s ``name`` as declared: the function of a static method, or a numba dispatcher;
    ``TypeError`` when it is missing or is an instance method."""
    found = inspect.getattr_static(cls, name)
    if found is inspect.getattr_static(PairwiseLoss, name):
        raise TypeError(f"{cls.__name__} does not define {name}(d, ...) (a @staticmethod)")
    if isinstance(found, staticmethod):
        found = found.__func__
    elif not isinstance(found, Dispatcher):
        raise TypeError(f"{cls.__name__}.{name} must be a @staticmethod of (d, ...) (it gets no self), "
                        f"got {found!r}")
    if not callable(found):
        raise TypeError(f"{cls.__name__}.{name} must be a function of (d, ...), got {found!r}")
    return found


def _check_arity(cls: type, name: str, fn: Any, args: tuple[Any, ...]) -> None:
    """``TypeError`` when ``fn`` cannot be called as ``fn(d, *args)``."""
    py = fn.py_func if isinstance(fn, Dispatcher) else fn
    try:
        inspect.signature(py).bind(0.0, *args)
    except TypeError:
        params = list(getattr(cls, "params", {})) if len(args) == len(getattr(cls, "params", {})) else []
        wanted = ", ".join(["d", *params]) if params else f"d and {len(args)} more (pair_args)"
        raise TypeError(f"{cls.__name__}.{name}{inspect.signature(py)} must take ({wanted}): it is called "
                        f"as {name}(d, *pair_args()), with pair_args() = {args!r}") from None


def _check_declaration(cls: type) -> None:
    """What can be checked of a pairwise class before it is bound to data: the three pair
    functions are static methods, of ``(d, *params)`` unless ``pair_args`` is overridden, and every
    Hessian mode is :data:`EXACT` or :data:`BOUND` in kind."""
    for name in PAIR_FUNCTIONS:
        fn = _raw_function(cls, name)
        if cls.pair_args is PairwiseLoss.pair_args:
            _check_arity(cls, name, fn, tuple(p.default for p in cls.params.values()))
    for mode, h in cls.hessians.items():
        if not isinstance(h, Hessian) or h.kind not in ("exact", "bound") or h.gradient != "exact":
            raise TypeError(f"{cls.__name__}.hessians[{mode!r}]: a pairwise loss computes an 'exact' Hessian "
                            "(pairwise.EXACT) or a 'bound' (pairwise.BOUND) with the exact gradient, "
                            f"got {h!r}")


def _pair_functions(cls: type, args: tuple[Any, ...]) -> _PairFunctions:
    """``cls``'s pair functions for arguments like ``args``: compiled by numba (once per class and
    argument types), else the plain functions after a call on a small array shows they work on
    numpy arrays (``TypeError`` naming the function when neither works)."""
    try:
        arg_types: tuple[Any, ...] = tuple(nb.typeof(a) for a in args)
    except ValueError:
        arg_types = tuple(type(a) for a in args)
    key = (cls, arg_types)
    found = _FUNCTIONS.get(key)
    if found is not None:
        return found
    raw = [_raw_function(cls, name) for name in PAIR_FUNCTIONS]
    for name, fn in zip(PAIR_FUNCTIONS, raw):
        _check_arity(cls, name, fn, args)
    why = ""
    compiled = []
    for name, fn in zip(PAIR_FUNCTIONS, raw):
        jitted = fn if isinstance(fn, Dispatcher) else nb.njit(fn)
        try:
            signature = (nb.float64, *(nb.typeof(a) for a in args))
            jitted.compile(signature)
        except (NumbaError, ValueError) as e:
            why = f"numba cannot compile {cls.__name__}.{name}: {str(e).strip().splitlines()[0]}"
            break
        returns = jitted.overloads[signature].signature.return_type
        if not isinstance(returns, (nb.types.Float, nb.types.Integer)):
            raise TypeError(f"{cls.__name__}.{name} must return one number per pair difference d; for a float d "
                            f"it returns {returns}")
        compiled.append(jitted)
    if not why:
        found = _PairFunctions(*compiled, compiled=True)
    else:
        for name, fn in zip(PAIR_FUNCTIONS, raw):
            try:
                _on_array(fn, _PROBE, args)
            except Exception as e:  # whatever the user's function raises, it cannot serve: say why
                raise TypeError(f"{cls.__name__}.{name}: {why}; and called on a numpy array of pair differences "
                                f"it fails ({type(e).__name__}: {e}). Write it for numba (math functions on "
                                "one float d) or for numpy arrays") from None
        found = _PairFunctions(*raw, compiled=False)
    _FUNCTIONS[key] = found
    return found


def _on_array(fn: Callable[..., Any], d: NDArray[np.float64], args: tuple[Any, ...]) -> NDArray[np.float64]:
    """``fn(d, *args)`` on an array of pair differences: one float64 per pair (a scalar result is
    the same for every pair), else a ``TypeError`` naming the function."""
    out = np.asarray(fn(d, *args), dtype=np.float64)
    if out.shape == d.shape:
        return out
    if out.ndim == 0:
        return np.full(d.shape, float(out))
    raise TypeError(f"{getattr(fn, '__qualname__', fn)} returned shape {out.shape} for {d.shape[0]} pair "
                    "differences: it must return one number per pair")

