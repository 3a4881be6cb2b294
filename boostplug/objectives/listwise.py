"""The listwise base: the objective is ``sum_k W_k list_loss(s[k], doc[k], query[k], *list_args())``
over the queries of two or more documents and non-zero weight ``W_k``; each query's gradient and
Hessian are what ``list_grad_hess(s[k], doc[k], query[k], grad[k], hess[k], *list_args())`` writes,
times ``W_k``. ``doc[k]``, ``query[k]``: the query's rows of the arrays :meth:`~ListwiseLoss.list_inputs`
returns each call. A ``"lambda"`` gradient's functions get, after ``s``, the scores ``at`` the order
comes from. The functions are numba ``@staticmethod``s; the loop over queries, compiled per class
(one for the gradient, one for the loss), runs in parallel and is cached on disk. User guide:
docs/objectives/custom.md.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .. import _memory
from .._core import dispatch
from .._core.class_kernels import compile_closure
from ._loss import RunLoss
from ._naming import MACHINERY_ERRORS, NUMBA_CANNOT_COMPILE, list_failure
from .pairwise import _jit, static_function

__all__ = ["ListwiseLoss", "list_kernel"]

#: Dispatch work of one document of a listwise loss (a few passes over its query).
DOC_WORK = 10


def list_kernel(loss_fn: Any, grad_hess_fn: Any, with_at: bool, want_loss: bool) -> Callable[..., None]:
    """The loop over queries around one class's compiled ``list_grad_hess``, or its ``list_loss``
    with ``want_loss`` (module docstring; ``with_at``: they take ``at`` after the scores; both are
    constants of the closure, so numba compiles only the function the loop calls); ``done[q]`` is
    set when query ``q``'s call returns (an exception on one of numba's worker threads never reaches
    the caller)."""

    def list_sums(scores, at, doc, query, group_ptr, query_weights, args, grad, hess, loss, done):  # type: ignore[no-untyped-def]
        for q in nb.prange(group_ptr.shape[0] - 1):
            a = group_ptr[q]
            b = group_ptr[q + 1]
            w = query_weights[q]
            if b - a >= 2 and w != 0.0:
                if with_at:
                    if want_loss:
                        loss[q] = w * loss_fn(scores[a:b], at[a:b], doc[a:b], query[q], *args)
                    else:
                        grad_hess_fn(scores[a:b], at[a:b], doc[a:b], query[q], grad[a:b], hess[a:b], *args)
                elif want_loss:
                    loss[q] = w * loss_fn(scores[a:b], doc[a:b], query[q], *args)
                else:
                    grad_hess_fn(scores[a:b], doc[a:b], query[q], grad[a:b], hess[a:b], *args)
                if not want_loss and w != 1.0:  # times 1 changes no bit: no pass for it
                    for r in range(a, b):
                        grad[r] = grad[r] * w
                        hess[r] = hess[r] * w
            done[q] = True

    return list_sums


_KERNELS: dict[tuple[Any, ...], Any] = {}


def _read_only(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A read-only view of ``a``: the author's functions cannot write into the caller's scores."""
    view = a.view()
    view.setflags(write=False)
    return view


def _functions(cls: type) -> list[Any]:
    """``cls``'s ``list_loss`` and ``list_grad_hess`` (``TypeError`` unless static)."""
    return [static_function(cls, name, name) for name in ("list_loss", "list_grad_hess")]


class ListwiseLoss(RunLoss):
    """A loss written per query (module docstring): declare ``name``, ``summary``, ``params`` and
    ``hessians``; define the static methods ``list_loss`` and ``list_grad_hess`` and the hook
    :meth:`list_inputs` (and :meth:`list_args` to pass other arguments than the parameters)."""

    #: compile the loops when bound, for numba's refusal then (boostplug's, which boosters bind, at their first call)
    compile_at_bind: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            _functions(cls)

    def list_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """This call's inputs: one row per document (``(n_docs, m)``) and one per query
        (``(n_queries, k)``); by default the labels as one column, and no per-query column."""
        return self.labels[:, None], np.zeros((self.n_queries, 0))

    def list_args(self) -> tuple[Any, ...]:
        """What the functions get after their arrays: the declared ``params``' values."""
        return tuple(self.settings[k] for k in self.params)

    def list_work(self) -> int:
        """The work of one call, in visits of a pair loop (:mod:`boostplug._core.dispatch`: from how
        much the queries run in parallel): ``DOC_WORK`` per document; a loss whose functions visit
        every pair of a query returns their count (the sum of the squared query sizes)."""
        return self.n_docs * DOC_WORK

    def query_bytes(self, n: int) -> int:
        """The memory one call of the functions allocates on a query of ``n`` documents (default 0); a
        loss that allocates per pair (``n * n`` doubles) says so, and a query that cannot fit in the
        memory available is refused before any allocation (a ``ValueError`` naming the query)."""
        return 0

    def _check_memory(self) -> None:
        """``ValueError`` when the largest query's :meth:`query_bytes` exceed the memory available."""
        sizes = np.diff(self.group_ptr)
        q = int(np.argmax(sizes)) if sizes.size else 0
        need = int(self.query_bytes(int(sizes[q]))) if sizes.size else 0
        if need:
            _memory.check_fits(need, f"{self.name}: query {q} ({int(sizes[q])} documents)",
                               "split the query, or use a loss whose memory grows with the documents, not the pairs")

    def setup(self) -> None:
        self._check_memory()
        self._args = self.list_args()
        with_at = any(h.gradient == "lambda" for h in self.hessians.values())
        key = (type(self), tuple(nb.typeof(a) for a in self._args))
        if key not in _KERNELS:
            fns = [_jit(f) for f in _functions(type(self))]
            _KERNELS[key] = tuple(compile_closure(list_kernel(*fns, with_at, want), parallel=True) for want in (False, True))
        self._kernels, self._work = _KERNELS[key], int(self.list_work())
        for want_loss in (True, False) if self.compile_at_bind else ():  # compiled (or loaded) now, not run
            kernel = dispatch.kernel_for(self._kernels[want_loss], self._work)
            types = self._call(kernel, np.zeros(self.n_docs), want_loss, self._checked_inputs(), 0, True)
            try:
                kernel.compile(types)
            except NUMBA_CANNOT_COMPILE as e:  # numba's reason in a sentence, a write into the read-only arrays plainly
                why = "it writes into an array that is read-only: the scores, the order's scores and the labels" \
                    if "Cannot modify readonly array" in str(e) else str(e).strip().splitlines()[0]
                raise TypeError(f"{type(self).__name__}: numba cannot compile its list_loss or list_grad_hess ({why}); "
                                "write them for numba") from e
            except Exception as e:  # raised while compiling: numba's own failure
                raise TypeError(f"{type(self).__name__}: numba failed compiling its list_loss or list_grad_hess "
                                f"({type(e).__name__}: {e}), as it does on an in-place operation on the read-only "
                                "s, at or doc (s -= s.max()): compute a new array (s = s - s.max())") from e

    def _checked_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        doc, query = self.list_inputs()
        doc = np.ascontiguousarray(doc, dtype=np.float64)
        query = np.ascontiguousarray(query, dtype=np.float64)
        if doc.ndim != 2 or doc.shape[0] != self.n_docs or query.ndim != 2 or query.shape[0] != self.n_queries:
            raise ValueError(f"{self.name}: list_inputs() must return arrays of shapes (n_docs, m) and "
                             f"(n_queries, k); got {doc.shape} and {query.shape}")
        return doc, query

    def _call(self, kernel: Any, scores: NDArray[np.float64], want_loss: bool,
              inputs: tuple[NDArray[np.float64], NDArray[np.float64]], only: int | None = None,
              typed: bool = False) -> tuple[Any, ...]:
        """``kernel`` on every query, or on query ``only``: their sums, or their losses with ``want_loss``
        (``typed``: the types of its arguments, for numba, instead)."""
        doc, query = inputs
        nq, n = self.n_queries, (0 if want_loss else self.n_docs)
        grad, hess, loss, done = np.zeros(n), np.zeros(n), np.zeros(nq if want_loss else 0), np.zeros(nq, np.bool_)
        qs = slice(None) if only is None else slice(only, only + 1)
        ptr = self.group_ptr if only is None else self.group_ptr[only:only + 2]
        args = (_read_only(scores), _read_only(self.weights_from(scores)), doc, query[qs], ptr, self.query_weights[qs],
                self._args, grad, hess, loss[qs], done[qs])
        if typed:
            return tuple(nb.typeof(a) for a in args)
        kernel(*args)
        if not done[qs].all():
            raise RuntimeError(f"{self.name}: a list function raised on a worker thread (numba's parallel loops "
                               "lose such exceptions)")
        return grad, hess, loss

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        inputs = self._checked_inputs()
        try:
            return self._call(dispatch.kernel_for(self._kernels[want_loss], self._work), scores, want_loss, inputs)
        except MACHINERY_ERRORS:
            raise
        except Exception:  # name the function and the query (the original stays the cause)
            found = list_failure(self, scores, want_loss, inputs)
            if found is None:
                raise
            raise found from found.__cause__
