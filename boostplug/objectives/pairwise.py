"""The pair base: write the loss of one pair, its two derivatives and (optionally) a weight that
sees the query's current order; get the objective, compiled and parallel over queries.

RankNet is three functions of ``d = s_i - s_j`` (document ``i`` preferred)::

    class MyRankNet(PairwiseLoss):
        name = "my_ranknet"
        summary = "RankNet's pairwise logistic loss"
        params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True)}
        pair_loss, pair_grad, pair_hess = LOGISTIC   # log(1 + exp(-sigma d)) and its derivatives

and LambdaRank adds its weight, the NDCG a swap of the pair would change::

    class MyLambdaRank(MyRankNet):
        hessians = {"exact": LAMBDA_EXACT}

        @staticmethod
        def pair_weight(p, sigma):                   # p: the pair's view of the current order (Pair)
            return abs(p.gain_i - p.gain_j) * abs(p.discount_i - p.discount_j) * p.inv_max_dcg

The objective of query ``k`` (weight ``W_k``) at scores ``s`` is ``W_k c_k sum w_ij pair_loss(s_i - s_j)``
over its pairs of documents with different labels (``i`` the higher label) of which at least one is
among the first :meth:`~PairwiseLoss.truncation` positions of the current order (by descending
score, ties in input order). ``w_ij`` is 1, or ``pair_weight(Pair(...), *pair_args())``; a weight
that needs more of the list than the pair's two documents (|Delta MAP|, |Delta ERR|: the documents
between them) reads per-query quantities that ``query_prefix(labels, gains, out, *pair_args())``
writes once per query and round, from the labels and gains in the current order, into ``out`` (one
row per position, :attr:`~PairwiseLoss.prefix_width` columns); ``pair_weight`` then takes that
array after the pair: ``pair_weight(p, prefix, *args)``. :mod:`.metric_weights` has the weights of
NDCG, MAP, ERR, MRR and RBP. With :meth:`~PairwiseLoss.normalize` (LightGBM's ``lambdarank_norm``)
each weight is divided by ``0.01 + |s_i - s_j|`` and ``c_k = log2(1 + S) / S`` (``S``: twice the sum
of the query's ``|lambda_ij|``); else ``c_k = 1``.

Gradient and Hessian. When neither the pairs nor their weights depend on the order (no
``pair_weight``, no truncation), the gradient is the loss's own (kind ``"exact"``: declare
:data:`EXACT`, and :data:`BOUND` for a second mode). Otherwise it is the derivative of the loss
with the weights (and the kept pairs) held at the current scores (kind ``"lambda"``, LambdaRank's
lambdas: :data:`LAMBDA_EXACT`, :data:`LAMBDA_BOUND`, or a ``"fitting"`` mode of your own), and
``loss(s, weights_at=t)`` takes them from other scores ``t``. ``EXACT`` sums ``w_ij pair_hess(d)``
over the document's pairs (the diagonal of the Hessian), ``BOUND`` twice the sum of its absolute
values (which majorises it, Gershgorin).

Every function is a ``@staticmethod`` compiled by numba (write it for one number ``d`` with
``math``); the base compiles its loop around them once per class, cached on disk. A function numba
cannot compile is a ``TypeError`` naming it when the class is first bound to data; one that raises
while the sums run is a :class:`PairFunctionError` naming it, its arguments and the pair.
"""

from __future__ import annotations

import inspect
import math
import pickle
import weakref
from typing import Any, Callable, ClassVar, Mapping, NamedTuple

import numba as nb
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaError, UnsupportedBytecodeError
from numpy.typing import ArrayLike, NDArray

from .._core import dispatch
from .._core.class_kernels import compile_closure
from .._core.dcg import RANK_DOC_WORK, gains_of
from . import _pair_kernels as K
from ._contract import Hessian, Loss, NonFiniteError

__all__ = ["PairwiseLoss", "PairFunctionError", "Pair", "EXACT", "BOUND", "LAMBDA_EXACT", "LAMBDA_BOUND",
           "LOGISTIC", "NO_TRUNCATION", "NUMBA_CANNOT_COMPILE"]

Pair = K.Pair

#: The exact Hessian diagonal of a loss whose pairs and weights do not depend on the order.
EXACT = Hessian("exact", "the sum of w_ij pair_hess(s_i - s_j) over the document's pairs: the diagonal of the loss's "
                "Hessian")
#: Twice the sum of its absolute values: majorises the loss's Hessian.
BOUND = Hessian("bound", "twice the sum of |w_ij pair_hess(s_i - s_j)| over the document's pairs: majorises the loss's "
                "Hessian")
#: :data:`EXACT` of a loss whose weights (or kept pairs) see the order: the weights held.
LAMBDA_EXACT = Hessian("exact", "the sum of w_ij pair_hess(s_i - s_j) over the document's pairs: the diagonal of the "
                       "Hessian of the loss with the pair weights held", gradient="lambda")
#: :data:`BOUND` of a loss whose weights (or kept pairs) see the order: the weights held.
LAMBDA_BOUND = Hessian("bound", "twice the sum of |w_ij pair_hess(s_i - s_j)| over the document's pairs: majorises "
                       "the Hessian of the loss with the pair weights held", gradient="lambda")

#: A truncation level that keeps every pair.
NO_TRUNCATION = np.iinfo(np.int64).max

#: What numba raises when it cannot compile a function (its typing and lowering errors, and a
#: function whose bytecode it does not take: an ``import`` or a ``class`` inside).
NUMBA_CANNOT_COMPILE: tuple[type[BaseException], ...] = (NumbaError, UnsupportedBytecodeError)
# errors of the machinery, never of a pair function: the kernel's own exception propagates as it is
_NOT_A_PAIR_FUNCTION = (MemoryError, OSError, pickle.PickleError, *NUMBA_CANNOT_COMPILE)


@nb.njit(cache=True)
def _logistic_loss(d: float, sigma: float, *rest: Any) -> float:
    z = sigma * d  # log(1 + exp(-z)), without overflow
    return math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z))


@nb.njit(cache=True)
def _logistic_grad(d: float, sigma: float, *rest: Any) -> float:
    e = math.exp(-abs(sigma * d))  # -sigma / (1 + exp(sigma d))
    return -sigma / (1.0 + e) if d < 0.0 else -sigma * e / (1.0 + e)


@nb.njit(cache=True)
def _logistic_hess(d: float, sigma: float, *rest: Any) -> float:
    e = math.exp(-abs(sigma * d))  # sigma^2 p (1 - p)
    return sigma * sigma * e / (1.0 + e) ** 2


#: RankNet's pair loss ``log(1 + exp(-sigma d))`` and its two derivatives, for ``pair_loss,
#: pair_grad, pair_hess = LOGISTIC``: the first argument after ``d`` is ``sigma``, others are ignored.
LOGISTIC = (staticmethod(_logistic_loss), staticmethod(_logistic_grad), staticmethod(_logistic_hess))


class PairFunctionError(ValueError):
    """A pair function raised. Attributes: ``function`` (``"Class.pair_grad"``), ``arguments`` (what
    it got), ``query`` and ``rows`` (the pair: preferred row first), ``error`` (its exception, also
    the ``__cause__``)."""

    def __init__(self, message: str, *, function: str, arguments: tuple[Any, ...], query: int | None,
                 rows: tuple[int, int] | None, error: BaseException) -> None:
        super().__init__(message)
        self.function, self.arguments, self.query, self.rows, self.error = function, arguments, query, rows, error


# the leading arguments of each function a class may define (the rest are pair_args())
_LEAD = {"pair_loss": ("d",), "pair_grad": ("d",), "pair_hess": ("d",), "pair_weight": ("pair",),
         "query_prefix": ("labels", "gains", "out")}
_PAIR_TYPE = nb.typeof(Pair(0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
_LEAD_TYPES = {"d": nb.float64, "pair": _PAIR_TYPE, "prefix": nb.float64[:, ::1], "labels": nb.float64[::1],
               "gains": nb.float64[::1], "out": nb.float64[:, ::1]}


class PairwiseLoss(Loss):
    """A loss summed over pairs (module docstring): declare ``name``, ``summary``, ``params`` and
    ``hessians``; define the static methods ``pair_loss(d, ...)``, ``pair_grad(d, ...)`` (its
    derivative in ``d``) and ``pair_hess(d, ...)`` (its second derivative, or a fitting weight),
    optionally ``pair_weight(pair, [prefix,] ...)`` (non-negative) and ``query_prefix(labels,
    gains, out, ...)``. The functions get ``pair_args()`` after their leading arguments: by
    default the declared ``params``' values in order. Hooks with defaults: :meth:`gains`,
    :meth:`truncation`, :meth:`normalize`, :meth:`inverse_max_dcgs`. They must accept ``d = +-inf``
    (scores so far apart that their difference overflows) and should return their limits there."""

    hessians: ClassVar[Mapping[str, Hessian]] = {"exact": EXACT}
    fresh_output = True
    #: columns of the per-query array ``query_prefix`` fills (one row per position); 0: none
    prefix_width: ClassVar[int] = 0
    #: ``None``: every pair weighs 1 (define a ``pair_weight`` static method to weigh them)
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
        """Each document's gain (the pairs' view), once per data set: ``2^label - 1`` by default."""
        try:
            return gains_of(self.labels, "exp2")
        except ValueError as e:
            raise ValueError(f"{self.name}: {e}") from None

    def truncation(self) -> int:
        """Only pairs with a document among this many first positions count (default: every pair)."""
        return NO_TRUNCATION

    def normalize(self) -> bool:
        """LightGBM's ``lambdarank_norm`` (module docstring); default off."""
        return False

    def inverse_max_dcgs(self, gains: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each query's ``1 / ideal DCG`` at the truncation level (0 where it is 0)."""
        out = np.zeros(self.n_queries)
        for q in range(self.n_queries):
            top = np.sort(gains[self.group_ptr[q]:self.group_ptr[q + 1]])[::-1][:self._top_k]
            out[q] = inverse_dcg(top, self._discounts)
        return out

    # -- the objective -------------------------------------------------------------------------------
    def setup(self) -> None:
        args = self.pair_args()
        if not isinstance(args, tuple):
            raise TypeError(f"{type(self).__name__}.pair_args() must return a tuple, got {type(args).__name__}")
        self._args = args
        top_k = self.truncation()
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"{self.name}: the truncation level must be an integer >= 1, got {top_k!r}")
        self._top_k = int(top_k)
        sizes = np.diff(self.group_ptr)
        longest = int(sizes.max(initial=0))
        self._discounts = np.array([1.0 / math.log2(2.0 + i) for i in range(longest)])
        self._gains = np.ascontiguousarray(self.gains(), dtype=np.float64)
        if self._gains.shape != (self.n_docs,) or not np.isfinite(self._gains).all():
            raise ValueError(f"{self.name}: gains() must return one finite gain per document")
        self._inv_max_dcg = np.ascontiguousarray(self.inverse_max_dcgs(self._gains), dtype=np.float64)
        self._normalize = bool(self.normalize())
        self._bound = self.hessians[self.hessian].kind == "bound"
        self._by_label = type(self).pair_weight is None and self._top_k >= longest and not self._normalize
        if not self._by_label and self.hessians[self.hessian].gradient == "exact":
            raise ValueError(f"{self.name}: with truncation or normalisation the pairs follow the order, so the "
                             f"gradient is a 'lambda' one; mode {self.hessian!r} declares an exact gradient")
        self._work = int(np.sum(sizes * np.minimum(sizes, self._top_k)))
        if self._by_label:  # each query's rows by label, descending, and where each label's lower ones start
            self._order = np.lexsort((-self.labels, np.repeat(np.arange(self.n_queries), sizes))).astype(np.int64)
            y = self.labels[self._order]
            starts = np.flatnonzero(np.r_[True, (y[1:] != y[:-1]) | np.isin(np.arange(1, self.n_docs),
                                                                             self.group_ptr)])
            self._next_lower = np.repeat(np.r_[starts[1:], self.n_docs], np.diff(np.r_[starts, self.n_docs]))
        width = self.prefix_width if type(self).query_prefix is not None else 0
        self._scratch = (np.empty(self.n_docs * (width > 0)), np.empty(self.n_docs * (width > 0)),
                         np.empty((self.n_docs if width else 0, width)))
        self._fns, self._kernel = _kernel(type(self), args, self._bound)
        self._first_call()

    def _call(self, kernel: Callable[..., None], scores: NDArray[np.float64], want_loss: bool,
              queries: slice = slice(None)) -> tuple[NDArray[np.float64], ...]:
        """``kernel`` on the queries ``queries`` (their sums, or losses with ``want_loss``)."""
        at = self.weights_from(scores)
        n, nq = (0 if want_loss else self.n_docs), self.n_queries
        grad, hess, loss, done = np.zeros(n), np.zeros(n), np.zeros(nq if want_loss else 0), np.zeros(nq, np.bool_)
        if self._by_label:
            order, next_lower = self._order, self._next_lower
        else:
            order, next_lower = np.empty(self.n_docs, dtype=np.int64), self.group_ptr
            dispatch.kernel_for(K.query_orders, self.n_docs * RANK_DOC_WORK)(at, self.group_ptr, order)
        q = range(nq)[queries]
        ptr = self.group_ptr[q.start:q.stop + 1]
        kernel(scores, at, order, next_lower, self._by_label, self.labels, self._gains, ptr,
               self._inv_max_dcg[queries], self.query_weights[queries], self._discounts, self._top_k, self._normalize,
               self._at is not None, want_loss, self._args, *self._scratch, grad, hess, loss[queries], done[queries])
        if not done[queries].all():
            raise RuntimeError(f"{self.name}: a pair function raised on a worker thread while summing over query "
                               f"{q.start + int(np.flatnonzero(~done[queries])[0])}'s pairs (numba's parallel loops "
                               "lose such exceptions)")
        return grad, hess, loss

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        try:
            return self._call(dispatch.kernel_for(self._kernel, self._work), scores, want_loss)
        except _NOT_A_PAIR_FUNCTION:
            raise
        except Exception:  # a pair function raised: name it (the search never hides the original)
            found = self._search(scores, want_loss, raised=True)
            if found is None:
                raise
            raise found from found.error

    def _loss(self, scores: NDArray[np.float64]) -> float:
        return float(self._run(scores, True)[2].sum())

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        grad, hess, _ = self._run(scores, False)
        return grad, hess

    def loss(self, scores: ArrayLike, *, weights_at: ArrayLike | None = None) -> float:
        if weights_at is not None:
            return self.held(weights_at).loss(scores)
        try:
            return super().loss(scores)
        except NonFiniteError as e:
            raise self._blame(e, scores, True) from None

    def grad_hess(self, scores: ArrayLike, *,
                  weights_at: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if weights_at is not None:
            return self.held(weights_at).grad_hess(scores)
        try:
            return super().grad_hess(scores)
        except NonFiniteError as e:
            raise self._blame(e, scores, False) from None

    # -- naming the pair function behind a failure ---------------------------------------------------
    def _first_call(self) -> None:
        """Compile the kernel this data set's calls will take (or load it from the cache) on a
        two-document stand-in: a function numba cannot compile is refused now, named."""
        stand_in = _StandIn(self)
        try:
            stand_in._call(dispatch.kernel_for(self._kernel, self._work), np.array([1.0, 0.0]), False)
        except NUMBA_CANNOT_COMPILE as e:
            _diagnose(type(self), self._fns, self._args, e)
            raise
        except Exception:  # a pair function that raises at the stand-in's pair: named when it raises on data
            pass

    def _search(self, scores: NDArray[np.float64], want_loss: bool, *, raised: bool, row: int | None = None,
                query: int | None = None) -> PairFunctionError | tuple[str, tuple[Any, ...], float] | None:
        """The first pair function call that raises (``raised``) or returns inf or NaN, on the pairs
        of the first query whose kernel call fails (or of ``query``, at ``row``): a
        :class:`PairFunctionError`, or ``(function, arguments, value)``; ``None`` when none does."""
        try:
            if query is None:
                serial = dispatch.serial_twin(self._kernel)
                query = next(q for q in range(self.n_queries) if _raises(self._call, serial, scores, want_loss,
                                                                            slice(q, q + 1)))
            return self._scan(scores, want_loss, query, raised, row)
        except Exception:  # the search itself failed (or found no raising query): the original stands
            return None

    def _scan(self, scores: NDArray[np.float64], want_loss: bool, q: int, raised: bool,
              row: int | None) -> PairFunctionError | tuple[str, tuple[Any, ...], float] | None:
        at, (a, b), fns = self.weights_from(scores), self.group_ptr[q:q + 2], self._fns
        rows = a + np.argsort(-at[a:b], kind="stable") if not self._by_label else self._order[a:b]
        prefix = np.zeros((b - a, self.prefix_width if type(self).query_prefix is not None else 0))
        calls: list[tuple[str, tuple[Any, ...], tuple[int, int]]] = []
        if prefix.shape[1]:
            calls.append(("query_prefix", (self.labels[rows], self._gains[rows], prefix), (int(a), int(b))))
        for i in range(min(b - a - 1, self._top_k)):
            for j in range(i + 1, b - a):
                (x, rx), (y, ry) = sorted(((i, rows[i]), (j, rows[j])), key=lambda t: -self.labels[t[1]])
                if self.labels[rx] == self.labels[ry] or (row is not None and row not in (rx, ry)):
                    continue
                view = Pair(float(at[rx] - at[ry]), x, y, float(self.labels[rx]), float(self.labels[ry]),
                            float(self._gains[rx]), float(self._gains[ry]), float(self._discounts[x]),
                            float(self._discounts[y]), float(self._inv_max_dcg[q]))
                pair, d = (int(rx), int(ry)), float(scores[rx] - scores[ry])
                if fns.weight is not None:
                    calls.append(("pair_weight", (view, prefix) if prefix.shape[1] else (view,), pair))
                calls += [(f, (d,), pair) for f in (("pair_loss",) if want_loss else ("pair_grad", "pair_hess"))]
        for name, lead, pair in calls:
            fn = getattr(fns, name.removeprefix("pair_").removeprefix("query_"))
            arguments = (*lead, *self._args)
            try:
                value = fn(*arguments)
            except Exception as e:
                if not raised:
                    continue
                shown = ", ".join(repr(float(v)) if isinstance(v, float) else "..." if isinstance(v, np.ndarray)
                                  else repr(v) for v in arguments)
                where = f", on the pair of rows {pair[0]} (preferred) and {pair[1]} of query {q}" \
                    if name != "query_prefix" else f", on query {q}"
                return PairFunctionError(f"{self.name}: {type(self).__name__}.{name}({shown}) raises "
                                         f"{type(e).__name__}: {e}{where}", function=f"{type(self).__name__}.{name}",
                                         arguments=arguments, query=q, rows=None if name == "query_prefix" else pair,
                                         error=e)
            if not raised and name != "query_prefix" and not math.isfinite(value):
                return f"{type(self).__name__}.{name}", arguments, float(value)
        return None

    def _blame(self, error: NonFiniteError, scores: ArrayLike, want_loss: bool) -> NonFiniteError:
        """``error`` with the first pair function that returns inf or NaN on the offending query's
        (and row's) pairs, when the objective, not the data, is at fault."""
        if error.cause != "objective":
            return error
        s = np.asarray(scores, dtype=np.float64)
        queries = range(self.n_queries) if error.query is None else (error.query,)  # None: at zero scores, anywhere
        found = next((f for q in queries for f in [self._search(s, want_loss, raised=False, query=q,
                                                                 row=None if want_loss else error.row)] if f), None)
        if not isinstance(found, tuple):
            return error
        shown = ", ".join(repr(v) for v in found[1] if not isinstance(v, (np.ndarray, tuple)))
        return NonFiniteError(f"{error}; it is {found[0]}({shown}), which returns {found[2]}", objective=error.objective,
                              method=error.method, cause=error.cause, query=error.query, row=error.row,
                              value=error.value)


class _StandIn(PairwiseLoss):
    """A two-document query (labels 1 and 0) bound like ``like``, for :meth:`PairwiseLoss._first_call`."""

    def __init__(self, like: PairwiseLoss) -> None:  # not an objective: no declarations, no checks
        self.name, self.labels, self.group_ptr = like.name, np.array([1.0, 0.0]), np.array([0, 2], np.int64)
        self.query_weights, self._at, self._args, self._top_k = np.ones(1), None, like._args, like._top_k
        self._gains, self._inv_max_dcg, self._discounts = np.array([1.0, 0.0]), np.ones(1), np.array([1.0, 0.63])
        self._normalize, self._by_label = like._normalize, like._by_label
        self._order, self._next_lower = np.array([0, 1], np.int64), np.array([1, 2], np.int64)
        width = like._scratch[2].shape[1]
        self._scratch = (np.empty(2 * (width > 0)), np.empty(2 * (width > 0)), np.empty((2 if width else 0, width)))
        for a in (self.labels, self.group_ptr, self.query_weights):  # read-only, as a bound objective's (numba types
            a.setflags(write=False)                                   # them apart: one compilation, not two)


def _raises(call: Callable[..., Any], *args: Any) -> bool:
    try:
        call(*args)
    except Exception:
        return True
    return False


def inverse_dcg(gains_in_order: NDArray[np.float64], discounts: NDArray[np.float64]) -> float:
    """``1 / sum_r gains[r] discounts[r]`` summed by position (0 when the sum is 0), as LightGBM
    computes its inverse ideal DCG."""
    total = 0.0
    for r, g in enumerate(gains_in_order):
        total += float(discounts[r]) * float(g)
    return 1.0 / total if total > 0.0 else 0.0


# ---- the class's functions: checked when the class is declared, compiled into its loop when bound ----
class _Functions(NamedTuple):
    loss: Any
    grad: Any
    hess: Any
    weight: Any
    prefix: Any


def _defined(cls: type) -> dict[str, Any]:
    """The functions ``cls`` defines, as declared (a function or a numba dispatcher); ``TypeError``
    for a missing required one or one that is not a static method."""
    out = {}
    for name in _LEAD:
        found = inspect.getattr_static(cls, name, None)
        if found is None and name in ("pair_weight", "query_prefix"):
            continue
        if isinstance(found, staticmethod):
            found = found.__func__
        elif not isinstance(found, Dispatcher):  # a plain function of the class is a method: it would get self
            found = None
        if found is None or not (isinstance(found, Dispatcher) or inspect.isfunction(found)):
            lead = ", ".join(_LEAD[name])
            raise TypeError(f"{cls.__name__} must define {name}({lead}, ...) as a @staticmethod (it gets no self), "
                            f"got {found!r}")
        out[name] = found
    return out


def _lead(cls: type, name: str) -> tuple[str, ...]:
    return ("pair", "prefix") if name == "pair_weight" and cls.query_prefix is not None else _LEAD[name]


def _check_declaration(cls: type) -> None:
    """What can be checked before data: the functions are static methods whose arguments fit
    ``(lead, *params)`` (unless ``pair_args`` is overridden), the modes' gradient kinds fit the
    weights, and ``query_prefix`` comes with a ``prefix_width`` and a ``pair_weight``."""
    fns = _defined(cls)
    if cls.pair_args is PairwiseLoss.pair_args:
        args = tuple(p.default for p in cls.params.values())
        for name, fn in fns.items():
            _check_arity(cls, name, fn, args)
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
    lead = _lead(cls, name)
    py = fn.py_func if isinstance(fn, Dispatcher) else fn
    try:
        inspect.signature(py).bind(*(0.0 for _ in lead), *args)
    except TypeError:
        params = list(cls.params) if len(args) == len(cls.params) else []
        wanted = ", ".join([*lead, *params]) if params else f"{', '.join(lead)} and {len(args)} more (pair_args)"
        raise TypeError(f"{cls.__name__}.{name}{inspect.signature(py)} must take ({wanted}): it is called as "
                        f"{name}({', '.join(lead)}, *pair_args()), with pair_args() = {args!r}") from None


_JITTED: "weakref.WeakKeyDictionary[Any, Dispatcher]" = weakref.WeakKeyDictionary()


def _jit(fn: Any) -> Dispatcher:
    """One dispatcher per function (a subclass that inherits it shares it)."""
    if isinstance(fn, Dispatcher):
        return fn
    if fn not in _JITTED:
        _JITTED[fn] = nb.njit(fn)
    return _JITTED[fn]


_KERNELS: dict[tuple[Any, ...], tuple[_Functions, Any]] = {}


def _kernel(cls: type, args: tuple[Any, ...], bound: bool) -> tuple[_Functions, Any]:
    """``cls``'s compiled functions and its loop (:func:`._pair_kernels.pair_kernel`: a parallel numba
    dispatcher, cached on disk), once per class, argument types and ``bound`` (2 |h| terms)."""
    try:
        key = (cls, tuple(nb.typeof(a) for a in args), bound)
    except ValueError as e:
        raise TypeError(f"numba cannot compile {cls.__name__}'s functions for pair_args() {args!r}: {e}") from None
    if key not in _KERNELS:
        raw = _defined(cls)
        for name, fn in raw.items():
            _check_arity(cls, name, fn, args)
        fns = _Functions(*(_jit(raw[n]) if n in raw else None for n in _LEAD))
        loop = K.pair_kernel(fns.loss, fns.grad, fns.hess, fns.weight, fns.prefix, bound)
        _KERNELS[key] = (fns, compile_closure(loop, parallel=True))
    return _KERNELS[key]


def _diagnose(cls: type, fns: _Functions, args: tuple[Any, ...], error: BaseException) -> None:
    """A ``TypeError`` naming the function numba cannot compile, or that returns no number (showing
    what it raises), else nothing."""
    arg_types = tuple(nb.typeof(a) for a in args)
    width = max(int(cls.prefix_width), 1)
    probe = {"d": 1.0, "pair": Pair(1.0, 0, 1, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0 / math.log2(3.0), 1.0),
             "prefix": np.zeros((2, width)), "labels": np.array([1.0, 0.0]), "gains": np.array([1.0, 0.0]),
             "out": np.zeros((2, width))}
    for name in _LEAD:
        fn = getattr(fns, name.removeprefix("pair_").removeprefix("query_"))
        if fn is None:
            continue
        lead = _lead(cls, name)
        types_ = [*(_LEAD_TYPES[a] for a in lead), *arg_types]
        py = fn.py_func
        if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(py).parameters.values()):
            named = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in inspect.signature(py).parameters.values())
            types_[named:] = [nb.types.StarArgTuple.from_types(tuple(types_[named:]))]
        try:
            fn.compile(tuple(types_))
        except NUMBA_CANNOT_COMPILE as e:
            raise TypeError(f"{cls.__name__}.{name}: numba cannot compile it ({str(e).strip().splitlines()[0]}). "
                            "Write the pair functions for numba: math on numbers, one pair at a time") from error
        returns = fn.overloads[tuple(types_)].signature.return_type
        if returns == nb.types.none and name != "query_prefix":
            try:
                py(*(probe[a] for a in lead), *args)
            except Exception as e:
                raise TypeError(f"{cls.__name__}.{name} raises {type(e).__name__}: {e} whatever its arguments "
                                "(numba finds that it returns no number)") from e
        if name != "query_prefix" and not isinstance(returns, (nb.types.Float, nb.types.Integer)):
            raise TypeError(f"{cls.__name__}.{name} must return one number; numba finds that it returns "
                            f"{returns}") from error
