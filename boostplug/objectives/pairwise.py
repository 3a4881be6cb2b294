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
number per pair. A pair function that raises is a :class:`PairFunctionError` naming it, the
arguments it raised on and the pair (query and rows).
"""

from __future__ import annotations

import inspect
import math
import sys
import weakref
from typing import Any, Callable, ClassVar, Mapping, NamedTuple

import numba as nb
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaError, UnsupportedBytecodeError
from numpy.typing import ArrayLike, NDArray

from .._core import dispatch
from .._validation import check_weights
from ..groups import qid_from_group_ptr
from ..pairs import PAIR_BYTES, critical_pairs
from . import _pairwise_kernels as K
from ._contract import Hessian, Loss, NonFiniteError

__all__ = ["PairwiseLoss", "PairFunctionError", "EXACT", "BOUND", "PAIR_FUNCTIONS", "NUMBA_CANNOT_COMPILE"]

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

#: What numba raises when it cannot compile a function: its ``NumbaError`` family (typing,
#: lowering, unsupported features) and ``UnsupportedBytecodeError`` (an ``import``, a ``class``, a
#: ``with ... as`` inside the function), which numba derives from ``Exception`` directly. Anything
#: else out of numba's compiler is numba's own bug and is not taken for "cannot compile"; numba
#: runs none of the function's code while compiling, so the function's own errors come later.
NUMBA_CANNOT_COMPILE: tuple[type[BaseException], ...] = (NumbaError, UnsupportedBytecodeError)


class PairFunctionError(ValueError):
    """A pair function raised: the message names the function, the arguments it was called with,
    the exception, and (while summing over the pairs) the pair: its query and its two rows, the
    preferred one first. The function's own exception is the ``__cause__``.

    Attributes:
        function: ``"Class.pair_grad"``.
        arguments: what the function got (``(d, *pair_args())``).
        query, rows: the pair's query and rows (``None`` when it raised before any data, as a
            function that raises for every ``d`` does when the class is first bound).
        error: the function's exception.
    """

    def __init__(self, message: str, *, function: str, arguments: tuple[Any, ...], query: int | None,
                 rows: tuple[int, int] | None, error: BaseException) -> None:
        super().__init__(message)
        self.function = function
        self.arguments = arguments
        self.query = query
        self.rows = rows
        self.error = error


def call_named(cls: type, name: str, fn: Callable[..., Any], arguments: tuple[Any, ...], where: str = "",
               query: int | None = None, rows: tuple[int, int] | None = None) -> Any:
    """``fn(*arguments)``, or a :class:`PairFunctionError` naming the objective, ``cls.name``, the
    arguments and ``where`` (the pair) when it raises."""
    try:
        return fn(*arguments)
    except Exception as e:
        shown = ", ".join(repr(float(a)) if isinstance(a, (float, np.floating)) else repr(a) for a in arguments)
        function = f"{cls.__name__}.{name}"
        message = f"{cls.name}: {function}({shown}) raises {type(e).__name__}: {e}{where}"
        raise PairFunctionError(message, function=function, arguments=arguments, query=query, rows=rows,
                                error=e) from e


def abstract_function(fn: Callable[..., Any]) -> staticmethod:
    """A static method a subclass must define (:func:`raw_function` refuses the base's own)."""
    fn.abstract = True  # type: ignore[attr-defined]
    return staticmethod(fn)


class _PairFunctions(NamedTuple):
    """The three pair functions of one class and argument types: numba dispatchers when
    ``compiled``, else the plain functions, called on numpy arrays."""

    loss: Callable[..., Any]
    grad: Callable[..., Any]
    hess: Callable[..., Any]
    compiled: bool
    #: :mod:`.lambda_weighted`'s pair weight and (optional) pair terms, compiled
    weight: Any = None
    terms: Any = None


_FUNCTIONS: dict[tuple[type, tuple[Any, ...]], _PairFunctions] = {}
_JITTED: "weakref.WeakKeyDictionary[Callable[..., Any], Dispatcher]" = weakref.WeakKeyDictionary()


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
    #: The static methods a subclass defines, each with the arguments it takes before
    #: ``*pair_args()`` (a subclass of the base may add its own: :mod:`.lambda_weighted`).
    pair_functions: ClassVar[Mapping[str, tuple[str, ...]]] = {name: ("d",) for name in PAIR_FUNCTIONS}
    #: numba types of those leading arguments.
    lead_types: ClassVar[Mapping[str, Any]] = {"d": nb.float64, "w": nb.float64}
    #: The Hessian kinds its modes may declare (the base computes them).
    _hessian_kinds: ClassVar[tuple[str, ...]] = ("exact", "bound")
    #: What the Hessian modes' gradient is (:class:`Hessian`'s ``gradient``).
    _gradient: ClassVar[str] = "exact"
    #: Whether the functions may run on numpy arrays when numba cannot compile them.
    _numpy_fallback: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:  # an objective (a base for several declares no name)
            check_declaration(cls)

    # -- to define ---------------------------------------------------------------------------------
    @abstract_function
    def pair_loss(d: float, *args: Any) -> float:  # pragma: no cover - abstract
        """The loss of one pair whose scores differ by ``d`` (preferred minus other)."""
        raise NotImplementedError

    @abstract_function
    def pair_grad(d: float, *args: Any) -> float:  # pragma: no cover - abstract
        """``d pair_loss / d d``."""
        raise NotImplementedError

    @abstract_function
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
    def _bind_functions(self) -> None:
        """``self._args`` (:meth:`pair_args`, checked) and ``self._fns``, the class's functions for them."""
        args = self.pair_args()
        if not isinstance(args, tuple):
            raise TypeError(f"{type(self).__name__}.pair_args() must return a tuple, got {type(args).__name__}")
        self._args = args
        self._fns = pair_functions(type(self), args)

    def setup(self) -> None:
        self._bind_functions()
        pairs = critical_pairs(self.labels, self.group_ptr, bytes_per_pair=_BYTES_PER_PAIR,
                               who=f"{self.name}: listing the critical pairs", limit_name=None)
        above, below = pairs[:, 0], pairs[:, 1]
        # pairs are listed by query, so the preferred rows never decrease: each query's pairs are a range
        pair_ptr = np.searchsorted(above, self.group_ptr).astype(np.int64)
        weight = np.repeat(self.query_weights, np.diff(pair_ptr))
        # the labels of every pair only for a class that weighs pairs by them (the default gives None)
        given = (self.pair_weights(self.labels[above], self.labels[below])
                 if type(self).pair_weights is not PairwiseLoss.pair_weights else None)
        if given is not None:
            weight = weight * check_weights(given, above.shape[0],
                                            name=f"{self.name}: pair_weights (one per critical pair)")
            if not np.isfinite(weight).all():
                raise ValueError(f"{self.name}: a query weight times a pair weight overflows float64")
        keep = weight > 0.0  # a pair of weight 0 has no term (0 * inf would be NaN)
        if keep.all():  # the usual case: no copy through a mask
            self._above, self._below, self._weight = np.ascontiguousarray(above), np.ascontiguousarray(below), weight
        else:
            self._above, self._below, self._weight = above[keep], below[keep], weight[keep]
            pair_ptr = np.searchsorted(self._above, self.group_ptr).astype(np.int64)
        self._pair_ptr = pair_ptr
        self._bound = self.hessians[self.hessian].kind == "bound"

    def _loss(self, scores: NDArray[np.float64]) -> float:
        return self._naming_a_raise(self._loss_sums, scores, ("pair_loss",))

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self._naming_a_raise(self._grad_hess_sums, scores, ("pair_grad", "pair_hess"))

    def _naming_a_raise(self, compute: Callable[[NDArray[np.float64]], Any], scores: NDArray[np.float64],
                        names: tuple[str, ...]) -> Any:
        """``compute(scores)``; when it raises (a pair function did, inside the kernel), the
        :class:`PairFunctionError` of the first pair on which one of the functions ``names`` raises."""
        try:
            return compute(scores)
        except MemoryError:  # the sums' own arrays, not a pair function
            raise
        except Exception:
            self._find_the_raise(scores, names)
            raise  # no pair function raises when called alone: not theirs, shown as it is

    def _find_the_raise(self, scores: NDArray[np.float64], names: tuple[str, ...]) -> None:
        """Call the functions ``names`` on every pair, query by query, and raise the
        :class:`PairFunctionError` of the first call that raises (a Python loop: for errors only)."""
        above, below = self._listed_pairs(None)
        queries = qid_from_group_ptr(self.group_ptr)[above]
        d = scores[above] - scores[below]
        for p in range(above.shape[0]):
            for name in names:
                self._call_on_pair(name, (float(d[p]),), int(queries[p]), int(above[p]), int(below[p]))

    def _call_on_pair(self, name: str, lead: tuple[Any, ...], query: int, i: int, j: int) -> float:
        """The pair function ``name`` of ``(*lead, *pair_args())`` as the objective computes it, on the
        pair of rows ``i`` (preferred) and ``j`` of ``query``; a :class:`PairFunctionError` when it raises."""
        fn = getattr(self._fns, name.removeprefix("pair_"))
        if not self._fns.compiled:
            raw = fn
            fn = lambda *a: float(_on_array(raw, np.array(a[:1]), a[1:])[0])  # noqa: E731 - one pair's array
        where = f", on the pair of rows {i} (preferred) and {j} of query {query}"
        return float(call_named(type(self), name, fn, (*lead, *self._args), where, query, (i, j)))

    def _loops(self) -> Any:
        """The pair loops compiled around this class's functions (:func:`._pairwise_kernels.pair_loops`)."""
        fns = self._fns
        return K.pair_loops(fns.loss, fns.grad, fns.hess, fns.weight, fns.terms, bound=self._bound)

    def _loss_sums(self, scores: NDArray[np.float64]) -> float:
        fns = self._fns
        if not fns.compiled:
            return float(np.sum(self._weight * _on_array(fns.loss, self._differences(scores), self._args)))
        out, done = np.empty(self._pair_ptr.shape[0] - 1), np.zeros(self._pair_ptr.shape[0] - 1, dtype=np.bool_)
        run = dispatch.kernel_for(self._loops().listed_loss_sums, self._above.shape[0])
        run(scores, self._above, self._below, self._weight, self._pair_ptr, self._args, out, done)
        self._check_done(done)
        return float(out.sum())

    def _grad_hess_sums(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        fns, n = self._fns, self.n_docs
        if not fns.compiled:
            d = self._differences(scores)
            g = self._weight * _on_array(fns.grad, d, self._args)
            h = self._weight * _on_array(fns.hess, d, self._args)
            if self._bound:
                h = 2.0 * np.abs(h)
            grad = np.bincount(self._above, g, n) - np.bincount(self._below, g, n)
            return grad, np.bincount(self._above, h, n) + np.bincount(self._below, h, n)
        grad, hess, done = np.zeros(n), np.zeros(n), np.zeros(self._pair_ptr.shape[0] - 1, dtype=np.bool_)
        run = dispatch.kernel_for(self._loops().listed_grad_hess_sums, self._above.shape[0])
        run(scores, self._above, self._below, self._weight, self._pair_ptr, self._args, grad, hess,
            done)
        self._check_done(done)
        return grad, hess

    def _check_done(self, done: NDArray[np.bool_]) -> None:
        """A ``RuntimeError`` when a kernel left a query's ``done`` unset: a pair function raised on
        one of numba's worker threads, which never passes the exception on (:mod:`._pairwise_kernels`)."""
        if not done.all():
            q = int(np.flatnonzero(~done)[0])
            raise RuntimeError(f"{self.name}: a pair function raised on a worker thread while summing over query "
                               f"{q}'s pairs (numba's parallel loops lose such exceptions)")

    def _differences(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """``s_i - s_j`` of every pair, preferred first (the numpy path's one gather per call)."""
        return scores[self._above] - scores[self._below]

    # -- the contract's refusals, with the pair function that caused them ----------------------------
    def loss(self, scores: ArrayLike, *, weights_at: ArrayLike | None = None) -> float:
        if weights_at is not None:  # the held copy blames the pair functions
            return self.held(weights_at).loss(scores)
        try:
            return super().loss(scores)
        except NonFiniteError as e:
            raise self._blame(e, scores, ("pair_loss",)) from None

    def grad_hess(self, scores: ArrayLike, *,
                  weights_at: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if weights_at is not None:
            return self.held(weights_at).grad_hess(scores)
        try:
            return super().grad_hess(scores)
        except NonFiniteError as e:
            raise self._blame(e, scores, ("pair_grad", "pair_hess")) from None

    def _listed_pairs(self, query: int | None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The pairs (preferred rows, other rows) whose terms the objective sums, of ``query``
        (``None``: of every query), for :meth:`_blame`."""
        if query is None:
            return self._above, self._below
        a, b = self.group_ptr[query], self.group_ptr[query + 1]
        mine = (self._above >= a) & (self._above < b)
        return self._above[mine], self._below[mine]

    def _blame(self, error: NonFiniteError, scores: ArrayLike, names: tuple[str, ...]) -> NonFiniteError:
        """``error`` with the first pair function in ``names`` that returns inf or NaN on one of the
        offending pairs (the row's, else the query's, else any), when the objective, not the data, is at fault."""
        if error.cause != "objective":
            return error
        s = np.asarray(scores, dtype=np.float64)
        above, below = self._listed_pairs(error.query)
        if error.row is not None and error.method == "grad_hess":
            mine = (above == error.row) | (below == error.row)
            above, below = above[mine], below[mine]
        d = s[above] - s[below]
        raw = {name: raw_function(type(self), name) for name in names}
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
def raw_function(cls: type, name: str) -> Any:
    """``cls``'s ``name`` as declared: the function of a static method, or a numba dispatcher;
    ``TypeError`` when it is missing (still the base's abstract one) or is an instance method."""
    found = inspect.getattr_static(cls, name, None)
    if found is None or getattr(getattr(found, "__func__", found), "abstract", False):
        lead = ", ".join(cls.pair_functions.get(name, ("d",)))
        raise TypeError(f"{cls.__name__} does not define {name}({lead}, ...) (a @staticmethod)")
    if isinstance(found, staticmethod):
        found = found.__func__
    elif not isinstance(found, Dispatcher):
        lead = ", ".join(cls.pair_functions.get(name, ("d",)))
        raise TypeError(f"{cls.__name__}.{name} must be a @staticmethod of ({lead}, ...) (it gets no self), "
                        f"got {found!r}")
    if not callable(found):
        raise TypeError(f"{cls.__name__}.{name} must be a function of (d, ...), got {found!r}")
    return found


def _check_arity(cls: type, name: str, fn: Any, args: tuple[Any, ...]) -> None:
    """``TypeError`` when ``fn`` cannot be called as ``fn(*lead, *args)``."""
    lead = cls.pair_functions[name]
    py = fn.py_func if isinstance(fn, Dispatcher) else fn
    try:
        inspect.signature(py).bind(*(0.0 for _ in lead), *args)
    except TypeError:
        params = list(getattr(cls, "params", {})) if len(args) == len(getattr(cls, "params", {})) else []
        wanted = ", ".join([*lead, *params]) if params else f"{', '.join(lead)} and {len(args)} more (pair_args)"
        raise TypeError(f"{cls.__name__}.{name}{inspect.signature(py)} must take ({wanted}): it is called "
                        f"as {name}({', '.join(lead)}, *pair_args()), with pair_args() = {args!r}") from None


def _declared(cls: type) -> list[str]:
    """The functions ``cls`` defines: every one it must, and the optional ones it does."""
    optional = getattr(cls, "optional_functions", ())
    return [n for n in cls.pair_functions if n not in optional or inspect.getattr_static(cls, n, None) is not None]


def check_declaration(cls: type) -> None:
    """What can be checked of a pairwise class before it is bound to data: its functions are
    static methods, of ``(d, *params)`` (or the leading arguments their class declares) unless
    ``pair_args`` is overridden, and every Hessian mode is exact or a bound, with the gradient
    the base computes."""
    for name in _declared(cls):
        fn = raw_function(cls, name)
        if cls.pair_args is PairwiseLoss.pair_args:
            _check_arity(cls, name, fn, tuple(p.default for p in cls.params.values()))
    for mode, h in cls.hessians.items():
        if not isinstance(h, Hessian) or h.kind not in cls._hessian_kinds or h.gradient != cls._gradient:
            raise TypeError(f"{cls.__name__}.hessians[{mode!r}]: {_MODES_OF[cls._gradient]}, got {h!r}")


_MODES_OF = {
    "exact": "a pairwise loss computes an 'exact' Hessian (pairwise.EXACT) or a 'bound' (pairwise.BOUND) with the "
             "exact gradient",
    "lambda": "a lambda-weighted loss computes an 'exact' Hessian (lambda_weighted.EXACT), a 'bound' "
              "(lambda_weighted.BOUND) or a 'fitting' one with gradient='lambda'",
}


#: What a function that numba finds returns no number is called with, to show what it raises.
_PROBE_LEAD = {"d": 1.0, "w": 1.0, "pair": K.Pair(1.0, 0, 1, 1.0, 0.0, 1.0, 1.0 / math.log2(3.0), 1.0)}


def _compile(cls: type, name: str, fn: Any, args: tuple[Any, ...], arg_types: tuple[Any, ...]) -> Any:
    """``fn`` compiled by numba for the leading arguments of ``name`` and ``args`` (of numba types
    ``arg_types``); raises one of :data:`NUMBA_CANNOT_COMPILE` when numba cannot, ``TypeError``
    for a result that is not a number (or, for ``pair_terms``, a pair of numbers), and
    :class:`PairFunctionError` for a function that raises whatever its arguments (numba types
    its result ``none``)."""
    jitted = fn if isinstance(fn, Dispatcher) else _JITTED.get(fn)
    if jitted is None:  # one dispatcher per function: a subclass that inherits it shares its kernels
        jitted = _JITTED[fn] = _jit(fn)
    lead = cls.pair_functions[name]
    types = [*(cls.lead_types[a] for a in lead), *arg_types]
    py = fn.py_func if isinstance(fn, Dispatcher) else fn
    declared = inspect.signature(py).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in declared):  # (d, sigma, *rest): numba packs the rest in a tuple
        named = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in declared)
        types[named:] = [nb.types.StarArgTuple.from_types(tuple(types[named:]))]
    signature = tuple(types)
    jitted.compile(signature)
    returns = jitted.overloads[signature].signature.return_type
    numbers = (nb.types.Float, nb.types.Integer)
    ok = (isinstance(returns, nb.types.BaseTuple) and len(returns) == 2
          and all(isinstance(t, numbers) for t in returns)) if name == "pair_terms" else isinstance(returns, numbers)
    if not ok:
        if returns == nb.types.none:  # no return, or it raises for every argument: show what it raises
            call_named(cls, name, jitted, (*(_PROBE_LEAD[a] for a in lead), *args),
                       " (numba finds that it returns no number: it raises whatever the arguments)")
        what = ("a (gradient, Hessian) pair of numbers" if name == "pair_terms" else "one number per pair difference d"
                if cls.pair_functions[name] == ("d",) else "one number per pair")
        raise TypeError(f"{cls.__name__}.{name} must return {what}; for a float d it returns {returns}")
    return jitted


def _jit(fn: Callable[..., Any]) -> Dispatcher:
    """``fn`` as a numba dispatcher, cached on disk by numba (beside its file, numba's own cache,
    which a change of that file invalidates) when its module is imported here and numba finds a
    place for the cache: else compiled in every process (a function of ``python -c``, or a Dask
    worker's by-value copy of a function of a module it lacks, whose cached code would import it)."""
    if getattr(fn, "__module__", None) in sys.modules:
        try:
            return nb.njit(cache=True)(fn)
        except RuntimeError:  # numba: "cannot cache function ...: no locator available"
            pass
    return nb.njit(fn)


def pair_functions(cls: type, args: tuple[Any, ...]) -> _PairFunctions:
    """``cls``'s pair functions for arguments like ``args``: compiled by numba (once per class and
    argument types), else (when the class allows it) the plain functions after a call on a small
    array shows they work on numpy arrays (``TypeError`` naming the function when neither works)."""
    why = ""
    try:
        arg_types: tuple[Any, ...] = tuple(nb.typeof(a) for a in args)
    except ValueError as e:  # an argument numba has no type for
        arg_types = tuple(type(a) for a in args)
        why = f"numba cannot compile {cls.__name__}'s functions for pair_args() {args!r}: {e}"
    key = (cls, arg_types)
    found = _FUNCTIONS.get(key)
    if found is not None:
        return found
    names = _declared(cls)
    raw = {name: raw_function(cls, name) for name in names}
    for name, fn in raw.items():
        _check_arity(cls, name, fn, args)
    compiled = {}
    for name, fn in raw.items():
        if why:
            break
        try:
            compiled[name] = _compile(cls, name, fn, args, arg_types)
        except NUMBA_CANNOT_COMPILE as e:
            why = f"numba cannot compile {cls.__name__}.{name}: {str(e).strip().splitlines()[0]}"
    if not why:
        extra = {name.removeprefix("pair_"): f for name, f in compiled.items() if name not in PAIR_FUNCTIONS}
        found = _PairFunctions(*(compiled[n] for n in PAIR_FUNCTIONS), compiled=True, **extra)
    elif not cls._numpy_fallback:
        raise TypeError(f"{why}. Write the functions of a {cls.__mro__[1].__name__} for numba: math functions on "
                        "numbers, one pair at a time")
    else:
        for name in PAIR_FUNCTIONS:
            try:
                _on_array(raw[name], _PROBE, args)
            except Exception as e:  # whatever the user's function raises, it cannot serve: say why
                raise TypeError(f"{cls.__name__}.{name}: {why}; and called on a numpy array of pair differences "
                                f"it fails ({type(e).__name__}: {e}). Write it for numba (math functions on "
                                "one float d) or for numpy arrays") from None
        found = _PairFunctions(*(raw[n] for n in PAIR_FUNCTIONS), compiled=False)
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
