"""The pair base: a pair loss, its two derivatives and (optionally) a weight that sees the query's
current order; the base sums them over pairs, compiled by numba and in parallel over queries.

The objective of query ``k`` (weight ``W_k``) at scores ``s`` is ``W_k sum w_ij pair_loss(s_i -
s_j)`` over its pairs of documents with different labels (``i`` the higher label) of which one is
among the first :meth:`~PairwiseLoss.truncation` positions of the current order (descending scores,
ties in input order). ``w_ij`` is 1, or ``pair_weight(Pair(...), *pair_args())`` (:class:`Pair`: the
pair's positions, labels, gains and discounts); a weight that needs more of the list (|Delta MAP|,
|Delta ERR|: the documents between the two) reads what ``query_prefix(labels, gains, out,
*pair_args())`` writes once per query and round from the labels and gains in the current order
(``prefix_width`` columns, one row per position), as ``pair_weight(p, prefix, *args)``
(:mod:`.metric_weights`).

Without ``pair_weight`` and truncation nothing follows the order: the gradient is the loss's own
(declare :data:`EXACT`, :data:`BOUND`). Otherwise it is the loss's derivative with the weights and
kept pairs held at the current scores (LambdaRank's lambdas, kind ``"lambda"``: :data:`LAMBDA_EXACT`,
:data:`LAMBDA_BOUND`, or a ``"fitting"`` mode), and ``loss(s, weights_at=t)`` holds them at ``t``.
``EXACT`` sums ``w_ij pair_hess(d)`` over a document's pairs (the Hessian's diagonal), ``BOUND``
twice their absolute values (a majorant, Gershgorin). User guide: docs/objectives/custom.md.
"""

from __future__ import annotations

import inspect
import weakref
from typing import Any, Callable, ClassVar, Mapping

import numba as nb
import numpy as np
from numba.core.dispatcher import Dispatcher
from numpy.typing import NDArray

from .._core import dispatch
from .._core.class_kernels import compile_closure
from .._core.dcg import RANK_DOC_WORK, gains_of, inverse_ideal_dcgs, position_discounts
from . import _pair_kernels as K
from ._declarations import Hessian
from ._loss import RunLoss
from ._non_finite import NonFiniteError
from ._naming import (MACHINERY_ERRORS, NUMBA_CANNOT_COMPILE, PairFunctionError, diagnose_pair_functions,
                      explain_pair, pair_failure)
from .logistic import LOGISTIC

__all__ = ["PairwiseLoss", "PairFunctionError", "Pair", "EXACT", "BOUND", "LAMBDA_EXACT", "LAMBDA_BOUND",
           "LOGISTIC", "NO_TRUNCATION", "NUMBA_CANNOT_COMPILE"]

Pair = K.Pair
_DIAGONAL = "the sum of w_ij pair_hess(s_i - s_j) over the document's pairs: the diagonal of the"
_TWICE = "twice the sum of |w_ij pair_hess(s_i - s_j)| over the document's pairs: majorises the"
EXACT = Hessian("exact", f"{_DIAGONAL} loss's Hessian")
BOUND = Hessian("bound", f"{_TWICE} loss's Hessian")
LAMBDA_EXACT = Hessian("exact", f"{_DIAGONAL} Hessian of the loss with the pair weights held", gradient="lambda")
LAMBDA_BOUND = Hessian("bound", f"{_TWICE} Hessian of the loss with the pair weights held", gradient="lambda")

#: A truncation level that keeps every pair.
NO_TRUNCATION = np.iinfo(np.int64).max


class PairwiseLoss(RunLoss):
    """A loss summed over pairs (module docstring): declare ``name``, ``summary``, ``params`` and
    ``hessians``; define the static methods ``pair_loss(d, ...)``, ``pair_grad(d, ...)`` (its
    derivative in ``d = s_i - s_j``) and ``pair_hess(d, ...)`` (its second derivative, or a fitting
    weight), optionally ``pair_weight(pair, [prefix,] ...)`` (non-negative) and ``query_prefix``. At
    ``d = +-inf`` (scores whose difference overflows) they should return their limits."""

    hessians: ClassVar[Mapping[str, Hessian]] = {"exact": EXACT}
    #: columns of the per-query array ``query_prefix`` writes (one row per position)
    prefix_width: ClassVar[int] = 0
    #: ``None``: every pair weighs 1; define static methods to weigh them
    pair_weight: ClassVar[Any] = None
    query_prefix: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:  # an objective (a base for several declares no name)
            _check_declaration(cls)

    # -- hooks ---------------------------------------------------------------------------------------
    def pair_args(self) -> tuple[Any, ...]:
        """What the functions get after their leading arguments: the declared ``params``' values."""
        return tuple(self.settings[k] for k in self.params)

    def gains(self) -> NDArray[np.float64]:
        """Each document's gain (the pairs' view), once per data set: ``2^label - 1``."""
        return gains_of(self.labels, "exp2", self.name)

    def truncation(self) -> int:
        """Only pairs with a document among this many first positions count (default: every pair)."""
        return NO_TRUNCATION

    def inverse_max_dcgs(self, gains: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each query's ``1 / ideal DCG`` at the truncation level (0 where it is 0)."""
        return inverse_ideal_dcgs(gains, self.group_ptr, self._discounts, self._top_k)

    def setup(self) -> None:
        self._args = self.pair_args()
        if not isinstance(self._args, tuple):
            raise TypeError(f"{type(self).__name__}.pair_args() must return a tuple, got {type(self._args).__name__}")
        top_k = self.truncation()
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"{self.name}: the truncation level must be an integer >= 1, got {top_k!r}")
        self._top_k, sizes = int(top_k), np.diff(self.group_ptr)
        longest = int(sizes.max(initial=0))
        self._discounts = position_discounts(self.group_ptr)
        self._gains = np.ascontiguousarray(self.gains(), dtype=np.float64)
        if self._gains.shape != (self.n_docs,) or not np.isfinite(self._gains).all():
            raise ValueError(f"{self.name}: gains() must return one finite gain per document")
        self._inv_max_dcg = np.ascontiguousarray(self.inverse_max_dcgs(self._gains), dtype=np.float64)
        # pairs and weights that do not follow the order are visited by label: no sort per round
        self._by_label = type(self).pair_weight is None and self._top_k >= longest
        if not self._by_label and self.hessians[self.hessian].gradient == "exact":
            raise ValueError(f"{self.name}: with truncation the pairs follow the order, so the "
                             f"gradient is a 'lambda' one; mode {self.hessian!r} declares an exact gradient")
        self._work = int(np.sum(sizes * np.minimum(sizes, self._top_k)))
        if self._by_label:  # each query's rows by label, descending; where each label's lower ones start
            self._order = np.lexsort((-self.labels, np.repeat(np.arange(self.n_queries), sizes))).astype(np.int64)
            y = self.labels[self._order]
            starts = np.flatnonzero(np.r_[True, (y[1:] != y[:-1]) | np.isin(np.arange(1, self.n_docs), self.group_ptr)])
            self._next_lower = np.repeat(np.r_[starts[1:], self.n_docs], np.diff(np.r_[starts, self.n_docs]))
        width = self.prefix_width if type(self).query_prefix is not None else 0
        n = self.n_docs if width else 0
        self._scratch = K.Scratch(np.empty(n), np.empty(n), np.empty((n, width)))
        self._docs = K.Docs(self.labels, self._gains, self._discounts)
        self._fns, self._kernel = _kernel(type(self), self._args, self.hessians[self.hessian].kind == "bound",
                                          self._by_label)
        try:  # compile (or load) the kernel this data set's calls take, on its first query: named if it cannot
            self._call(dispatch.kernel_for(self._kernel, self._work), np.zeros(self.n_docs), False, slice(0, 1))
        except NUMBA_CANNOT_COMPILE as e:
            diagnose_pair_functions(type(self), self._fns, self._args, e)
            raise
        except Exception:  # a function that raises at zero scores: named when it raises on real ones
            pass

    def _call(self, kernel: Callable[..., None], scores: NDArray[np.float64], want_loss: bool,
              queries: slice = slice(None)) -> tuple[NDArray[np.float64], ...]:
        """``kernel`` on the queries ``queries``: their sums, or their losses with ``want_loss``."""
        at = self.weights_from(scores)
        n, nq = (0 if want_loss else self.n_docs), self.n_queries
        grad, hess, loss, done = np.zeros(n), np.zeros(n), np.zeros(nq if want_loss else 0), np.zeros(nq, np.bool_)
        if self._by_label:
            order, next_lower = self._order, self._next_lower
        else:
            order, next_lower = np.empty(self.n_docs, dtype=np.int64), self.group_ptr
            dispatch.kernel_for(K.query_orders, self.n_docs * RANK_DOC_WORK)(at, self.group_ptr, order)
        q = range(nq)[queries]
        kernel(scores, at, self._docs,
               K.Queries(self.group_ptr[q.start:q.stop + 1], self.query_weights[queries], self._inv_max_dcg[queries]),
               K.Visit(order, next_lower, self._top_k), want_loss, self._args, self._scratch,
               K.Sums(grad, hess, loss[queries], done[queries]))
        if not done[queries].all():  # numba's parallel loops lose an exception raised on a worker thread
            raise RuntimeError(f"{self.name}: a pair function raised on a worker thread while summing over query "
                               f"{q.start + int(np.flatnonzero(~done[queries])[0])}'s pairs")
        return grad, hess, loss

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        try:
            return self._call(dispatch.kernel_for(self._kernel, self._work), scores, want_loss)
        except MACHINERY_ERRORS:
            raise
        except Exception:  # a pair function raised: name it, or let the original pass as it is
            found = pair_failure(self, scores, want_loss)
            if found is None:
                raise
            raise found from found.error

    def _explain(self, error: NonFiniteError, scores: NDArray[np.float64]) -> NonFiniteError:
        return explain_pair(self, error, scores)


# ---- the class's functions: checked when the class is declared, compiled into its loop when bound ----
def static_function(cls: type, name: str, call: str) -> Any:
    """``cls``'s function ``name``: a ``@staticmethod``'s function, or a numba dispatcher; a ``TypeError``
    showing ``call`` for a missing one or a plain function (a method, which would get ``self``)."""
    found = inspect.getattr_static(cls, name, None)
    if not isinstance(found, (staticmethod, Dispatcher)):
        raise TypeError(f"{cls.__name__} must define {call} as a @staticmethod (it gets no self), got {found!r}")
    return found.__func__ if isinstance(found, staticmethod) else found


def _defined(cls: type) -> dict[str, Any]:
    """The functions ``cls`` defines (``pair_weight`` and ``query_prefix`` may be left out)."""
    return {name: static_function(cls, name, f"{name}({', '.join(lead)}, ...)") for name, lead in K.FUNCTIONS.items()
            if name not in ("pair_weight", "query_prefix") or inspect.getattr_static(cls, name, None) is not None}


def _check_declaration(cls: type) -> None:
    """Before data: the functions' arguments fit ``(lead, *params)`` (unless ``pair_args`` is
    overridden), a ``query_prefix`` comes with a ``prefix_width`` and a ``pair_weight``, and the
    modes' gradient kinds fit the weights."""
    fns = _defined(cls)
    if "normalize" in vars(cls):  # it was a hook: refused, not silently ignored
        raise TypeError(f"{cls.__name__}.normalize: the pair base has no score-gap normalisation (LightGBM's "
                        "lambdarank_norm is the lambdarank objective's); put a factor in pair_weight")
    if cls.pair_args is PairwiseLoss.pair_args:
        for name, fn in fns.items():
            _check_arity(cls, name, fn, tuple(p.default for p in cls.params.values()))
    if "query_prefix" in fns and ("pair_weight" not in fns or not isinstance(cls.prefix_width, int)
                                  or cls.prefix_width < 1):
        raise TypeError(f"{cls.__name__} defines query_prefix: it needs prefix_width (an int >= 1, the columns it "
                        "fills) and a pair_weight(pair, prefix, ...) that reads them")
    for mode, h in cls.hessians.items():
        if not isinstance(h, Hessian) or h.kind not in ("exact", "bound", "fitting") \
                or h.gradient not in ("exact", "lambda") or (h.gradient == "exact" and h.kind == "fitting") \
                or ("pair_weight" in fns and h.gradient != "lambda"):
            raise TypeError(f"{cls.__name__}.hessians[{mode!r}]: a pairwise loss declares EXACT or BOUND (exact "
                            "gradient: no pair_weight, no truncation) or, when its weights or pairs follow the order, "
                            f"LAMBDA_EXACT, LAMBDA_BOUND or a 'fitting' mode with gradient='lambda'; got {h!r}")


def _check_arity(cls: type, name: str, fn: Any, args: tuple[Any, ...]) -> None:
    lead, py = K.leading(cls, name), getattr(fn, "py_func", fn)
    try:
        inspect.signature(py).bind(*(0.0 for _ in lead), *args)
    except TypeError:
        params = list(cls.params) if len(args) == len(cls.params) else []
        wanted = ", ".join([*lead, *params]) if params else f"{', '.join(lead)} and {len(args)} more (pair_args)"
        raise TypeError(f"{cls.__name__}.{name}{inspect.signature(py)} must take ({wanted}): it is called as "
                        f"{name}({', '.join(lead)}, *pair_args()), with pair_args() = {args!r}") from None


_JITTED: "weakref.WeakKeyDictionary[Any, Dispatcher]" = weakref.WeakKeyDictionary()
#: per class, argument types and choices: its compiled functions (``K.FUNCTIONS``' order) and its loop
_KERNELS: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}


def _jit(fn: Any) -> Dispatcher:
    """One dispatcher per function (a subclass that inherits it shares it)."""
    if isinstance(fn, Dispatcher):
        return fn
    if fn not in _JITTED:
        _JITTED[fn] = nb.njit(fn)
    return _JITTED[fn]


def _kernel(cls: type, args: tuple[Any, ...], bound: bool, by_label: bool) -> tuple[tuple[Any, ...], Any]:
    """``cls``'s compiled functions and its loop (:func:`._pair_kernels.pair_kernel`, a parallel numba
    dispatcher cached on disk), once per class, argument types, ``bound`` (2 |h| terms) and ``by_label``."""
    try:
        key = (cls, tuple(nb.typeof(a) for a in args), bound, by_label)
    except ValueError as e:
        raise TypeError(f"numba cannot compile {cls.__name__}'s functions for pair_args() {args!r}: {e}") from None
    if key not in _KERNELS:
        raw = _defined(cls)
        for name, fn in raw.items():
            _check_arity(cls, name, fn, args)
        fns = tuple(_jit(raw[n]) if n in raw else None for n in K.FUNCTIONS)
        _KERNELS[key] = fns, compile_closure(K.pair_kernel(*fns, bound, by_label), parallel=True)
    return _KERNELS[key]
