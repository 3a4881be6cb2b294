"""The contract every objective module follows, and the machinery they share.

An objective module (``qbrank``, ``mpboost``, ``ndcg_boost``) defines:

* ``DEFAULTS``: ``dict`` of its parameters and their defaults (anything else is
  an unknown parameter and raises ``ValueError``);
* ``HESSIANS``: ``dict`` mode -> one-line statement of what the Hessian is
  (``"exact"``, ``"an upper bound of |d2L|"``, ``"the paper's fitting weights"``);
* a subclass of :class:`PreparedObjective` whose ``__init__`` does all work that
  depends only on labels, groups, weights and parameters (pairs, label levels,
  ideal DCGs), and whose ``loss(scores)`` / ``grad_hess(scores)`` do the
  per-round work;
* ``prepare(labels, group_ptr, *, weights=None, **params)`` returning it;
* the pure functions ``loss(scores, labels, group_ptr, *, weights=None, **params)``
  and ``grad_hess(...)`` (= ``prepare(...).loss(scores)``), which never mutate
  their inputs and do no I/O.

Conventions shared by all objectives:

* ``loss`` is a *sum* over queries (each query's loss times its weight), not a
  mean, like LightGBM's ``lambdarank``: gradient magnitudes do not shrink as the
  data set grows, so the frameworks' ``min_sum_hessian_in_leaf`` /
  ``min_child_weight`` keep their meaning. ``grad`` is exactly d loss / d score,
  with two documented exceptions: QBRank's ``hessian="mean"`` (the paper's averaged
  targets), and MPBoost/``rankboost``, which multiply every gradient and Hessian by one
  positive constant when ``sum |grad|`` or ``sum hess`` exceeds ``GRAD_SUM_CAP`` (1e15),
  so that the larger sum is 1e15: every Newton leaf ``-G/H`` and split ranking is
  unchanged (an L2 leaf penalty then acts as a smaller one), but ``grad`` is then
  a constant multiple of d loss / d score, not the derivative itself.
* ``weights`` are *per-query* weights, shape ``(n_queries,)`` (XGBoost's ranking
  convention; the LightGBM adapter converts per-row weights that are constant
  within each query).
* ``grad_hess`` never returns inf or NaN: values that overflow float64 are a
  ``ValueError`` naming the row and its query.
* Every Hessian is at least :data:`HESSIAN_FLOOR`, so Newton leaves never divide
  by zero. A document without any term at all (zero gradient and an exactly zero
  Hessian: the documents of one-document and single-label queries, a QBRank
  document with no active pair and no squared-error term) gets
  :data:`NO_INFO_HESSIAN` instead; see there.
"""

from __future__ import annotations

import math
import types
from numbers import Real
from typing import Any, Callable, Mapping

import numba as nb
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_labels, check_scores, check_weights, show
from ..groups import check_group_ptr

#: Smallest Hessian any objective returns (a positive floor for Newton leaves).
HESSIAN_FLOOR = 1e-6

#: Hessian of a document the loss does not involve (zero gradient, zero Hessian). Any
#: positive value leaves the gradient sums alone; XGBoost (hist) trains the same models faster
#: than with HESSIAN_FLOOR, and 1e-5 stays far below LightGBM's min_sum_hessian_in_leaf=1e-3
#: (measurements: docs/results/objectives_notes/README.md).
NO_INFO_HESSIAN = 1e-5

#: Work (documents for the O(n L) kernels of qbrank/mpboost, document pairs for
#: ndcg_boost's O(n_q^2) kernels) from which the per-round kernels run in parallel over
#: queries; below it they run serially (same per-query code and order: identical
#: results). A parallel call on a small input can stall for milliseconds waiting for a
#: busy core, so calls run in parallel only when their serial time is some 20 ms
#: (measurements: docs/results/objectives_notes/README.md).
PARALLEL_MIN_DOCS = 100_000
PARALLEL_MIN_PAIRS = 5_000_000

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "floor_hessian", "PARALLEL_MIN_DOCS", "PARALLEL_MIN_PAIRS", "PreparedObjective", "check_params",
           "show", "kernel_for"]

_SERIAL: dict[Any, Callable[..., Any]] = {}


def _serial_twin(kernel: Any) -> Callable[..., Any]:
    """``kernel`` (a ``parallel=True`` numba dispatcher) compiled without ``parallel``
    (``prange`` runs as ``range``), cached on disk under its own name."""
    twin = _SERIAL.get(kernel)
    if twin is None:
        fn = kernel.py_func
        copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__,
                                  fn.__closure__)
        # numba's disk cache is indexed by qualified name and line, not by the parallel flag:
        # a distinct name keeps the serial and parallel machine code apart.
        copy.__qualname__ = fn.__qualname__ + "_serial"
        copy.__module__ = fn.__module__
        copy.__doc__ = fn.__doc__
        options = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "nopython")}
        twin = _SERIAL[kernel] = nb.njit(cache=True, **options)(copy)
    return twin


def kernel_for(kernel: Any, work: int, threshold: int) -> Callable[..., Any]:
    """The parallel ``kernel`` when ``work >= threshold`` and numba has more than one
    thread, else its serial twin (see :data:`PARALLEL_MIN_DOCS`)."""
    if work >= threshold and nb.get_num_threads() > 1:
        return kernel
    return _serial_twin(kernel)


def floor_hessian(grad: NDArray[np.float64], hess: NDArray[np.float64]) -> NDArray[np.float64]:
    """The Hessian the frameworks get: :data:`NO_INFO_HESSIAN` where gradient and Hessian are
    both exactly 0 (a document the loss does not involve), else at least :data:`HESSIAN_FLOOR`."""
    no_info = (hess == 0.0) & (grad == 0.0)
    return np.where(no_info, NO_INFO_HESSIAN, np.maximum(hess, HESSIAN_FLOOR))


def check_params(name: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``params`` over ``defaults``; unknown names are a ``ValueError``."""
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {unknown} for objective {name!r}; "
            f"its parameters are {sorted(defaults)}"
        )
    merged = dict(defaults)
    merged.update(params)
    return merged


class PreparedObjective:
    """An objective bound to one data set's labels, groups and weights.

    Subclasses set ``name`` and implement ``_loss`` and ``_grad_hess`` on
    validated float64 scores. Construction validates labels, ``group_ptr`` and
    per-query weights once; the per-round calls only validate the scores.
    """

    name: str = "objective"

    def __init__(
        self,
        labels: ArrayLike,
        group_ptr: ArrayLike,
        *,
        weights: ArrayLike | None = None,
    ) -> None:
        self.labels: NDArray[np.float64] = check_labels(labels).copy()
        self.labels.setflags(write=False)
        self.group_ptr: NDArray[np.int64] = check_group_ptr(group_ptr, n_docs=self.labels.shape[0]).copy()
        self.group_ptr.setflags(write=False)
        n_queries = self.group_ptr.shape[0] - 1
        w = check_weights(weights, n_queries, name="weights (one per query)")
        self.query_weights: NDArray[np.float64] = (
            np.ones(n_queries, dtype=np.float64) if w is None else w.copy()
        )
        self.query_weights.setflags(write=False)

    @property
    def n_docs(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.group_ptr.shape[0] - 1)

    def _check(self, scores: ArrayLike) -> NDArray[np.float64]:
        s = check_scores(scores)
        if s.shape[0] != self.n_docs:
            raise ValueError(
                f"{self.name}: got {s.shape[0]} scores for a data set of {self.n_docs} documents"
            )
        return s

    def loss(self, scores: ArrayLike) -> float:
        """The objective's value at ``scores`` (sum over queries, weighted)."""
        return float(self._loss(self._check(scores)))

    def grad_hess(self, scores: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Gradient d loss / d score and the Hessian (diagonal) of the chosen mode."""
        s = self._check(scores)
        g, h = self._grad_hess(s)
        self._check_finite(s, g, h)
        return g, floor_hessian(g, h)

    def _check_finite(self, scores: NDArray[np.float64], g: NDArray[np.float64], h: NDArray[np.float64]) -> None:
        """A gradient or Hessian that overflowed float64 is a ``ValueError`` naming the row, its
        query and the query's scores: the frameworks must never receive inf or NaN."""
        bad = ~(np.isfinite(g) & np.isfinite(h))
        if not bad.any():
            return
        i = int(np.flatnonzero(bad)[0])
        q = int(np.searchsorted(self.group_ptr, i, side="right") - 1)
        sl = scores[self.group_ptr[q]:self.group_ptr[q + 1]]
        raise ValueError(
            f"{self.name}: the gradient or Hessian overflows float64 at row {i} (query {q}, "
            f"{int(bad.sum())} such rows): grad {float(g[i])}, hess {float(h[i])}; the query's scores "
            f"span {float(sl.min())} .. {float(sl.max())}, too far apart for float64 sums (or a parameter "
            "or weight is too large)"
        )

    # -- to implement ---------------------------------------------------------
    def _loss(self, scores: NDArray[np.float64]) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grad_hess(
        self, scores: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # pragma: no cover - abstract
        raise NotImplementedError
