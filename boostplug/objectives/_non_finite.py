"""Why an objective's loss, gradient or Hessian came out inf or NaN (the data overflowed float64, or
the objective computed it from moderate inputs: a bug in it), or beyond float32: a
:class:`NonFiniteError` naming the first offending row or query and which it is."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import FLOAT32_MAX

__all__ = ["NonFiniteError", "MODERATE_SCORE", "MODERATE_LABEL", "MODERATE_WEIGHT", "grad_hess_error", "loss_error"]

#: Moderate inputs: a loss computed sensibly from them stays far inside float64 (exp(31 * 20) =
#: 1e269; gains 2^31), so a non-finite result there is the objective's own doing.
MODERATE_SCORE = 10.0
MODERATE_LABEL = 31.0
MODERATE_WEIGHT = 1e30


#: The end of the message of an objective's own inf or NaN.
_BUG = ("a bug in {blame}, not an overflow of the data (inf or NaN from such inputs comes from "
        "0 * inf, inf - inf, 0 / 0 or x / 0 inside it; or a parameter is too large)")


class NonFiniteError(ValueError):
    """An objective's ``loss`` or ``grad_hess`` came out inf or NaN, or beyond float32. Attributes:
    ``objective``, ``method`` (``"loss"`` or ``"grad_hess"``), ``cause`` (``"data"``: the offending
    query's scores, labels or weight are beyond the moderate bounds, where float64 overflows;
    ``"objective"``: all moderate, the objective's own inf or NaN, a bug in it; ``"float32"``: a
    finite gradient or Hessian beyond float32, the frameworks' type), ``query`` (the first offending
    one; ``None``: non-finite at all-zero scores), ``row`` (the first offending row, for the loss the
    query's first), ``value`` (the loss, or ``(grad, hess)`` at ``row``)."""

    def __init__(self, message: str, *, objective: str, method: str, cause: str, query: int | None,
                 row: int | None, value: Any) -> None:
        super().__init__(message)
        self.objective = objective
        self.method = method
        self.cause = cause
        self.query = query
        self.row = row
        self.value = value



def grad_hess_error(objective: Any, scores: NDArray[np.float64], g: NDArray[np.float64], h: NDArray[np.float64],
                    blame: str = "", hint: str = "") -> NonFiniteError:
    """The :class:`NonFiniteError` of a gradient or Hessian that is inf or NaN (naming the first such
    row, its query, and the data's values that overflowed or the bug of ``blame``, the function at fault,
    by default the objective's ``_grad_hess``, with ``hint``), else of one beyond float32 (LightGBM and
    XGBoost would train on inf: one leaf, then nothing)."""
    infinite = np.flatnonzero(~(np.isfinite(g) & np.isfinite(h)))
    beyond = infinite if infinite.size else np.flatnonzero(~((np.abs(g) <= FLOAT32_MAX) & (np.abs(h) <= FLOAT32_MAX)))
    i = int(beyond[0])
    q = int(np.searchsorted(objective.group_ptr, i, side="right") - 1)
    found = f"at row {i} (query {q}, {beyond.size} such rows): grad {float(g[i]):g}, hess {float(h[i]):g}"
    value = (float(g[i]), float(h[i]))
    if infinite.size:
        message, cause = _message(objective, scores, q, blame or f"{objective.name}'s _grad_hess",
                                  overflow=f"the gradient or Hessian overflows float64 {found}",
                                  returned=f"{blame or '_grad_hess'} returned a non-finite value {found}")
        return NonFiniteError(message + (f"; {hint}" if hint and cause == "objective" else ""),
                              objective=objective.name, method="grad_hess", cause=cause, query=q, row=i, value=value)
    a, b = int(objective.group_ptr[q]), int(objective.group_ptr[q + 1])
    settings = ", ".join(f"{k}={v!r}" for k, v in getattr(objective, "settings", {}).items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool))
    return NonFiniteError(
        f"{objective.name}: the gradient or Hessian {found} is beyond float32's largest value {FLOAT32_MAX:g}, "
        f"which LightGBM and XGBoost store them in: a parameter is too large ({settings or 'no numeric settings'}) "
        f"or the query's scores too extreme ({float(scores[a:b].min()):g} .. {float(scores[a:b].max()):g})",
        objective=objective.name, method="grad_hess", cause="float32", query=q, row=i, value=value)


def loss_error(objective: Any, scores: NDArray[np.float64], value: float, query: int | None = None,
               blame: str = "") -> NonFiniteError:
    """The :class:`NonFiniteError` of a loss that is inf or NaN, naming the first query that makes it
    so (``query``, when ``blame`` found it) and either the data's values that overflowed or the bug of
    ``blame``, the function at fault (by default the objective's ``_loss``)."""
    ptr = objective.group_ptr
    q = _first_non_finite_query(objective, scores) if query is None else query
    span = f"the scores span {float(scores.min())} .. {float(scores.max())}" if scores.size else ""
    if q is None and not math.isnan(value) and scores.size and np.abs(scores).max() > MODERATE_SCORE \
            and math.isfinite(float(objective._loss(np.zeros_like(scores)))):
        # each query's loss is finite alone (the bisection found none that is not), their sum is not
        return NonFiniteError(f"{objective.name}: the loss overflows float64 ({value}): each query's loss is finite, "
                             f"their sum is not; {span}: too large for float64 in this objective", objective=objective.name,
                             method="loss", cause="data", query=None, row=None, value=value)
    where = (", and does at all-zero scores too (so no one query's scores cause it)" if q is None else
             f" in query {q} (rows {int(ptr[q])}..{int(ptr[q + 1]) - 1})")
    message, cause = _message(objective, scores, q, blame or f"{objective.name}'s _loss", overflow=f"the loss "
                              f"overflows float64 ({value}){where}", returned=f"{blame or '_loss'} returned {value}"
                              f"{where}")
    first_row = None if q is None else int(ptr[q])
    return NonFiniteError(message, objective=objective.name, method="loss", cause=cause, query=q, row=first_row,
                          value=value)


def _message(objective: Any, scores: NDArray[np.float64], q: int | None, blame: str, *, overflow: str,
             returned: str) -> tuple[str, str]:
    """``(message, cause)`` of a :class:`NonFiniteError` from ``blame``: ``"data"`` with the
    ``overflow`` text when query ``q``'s values are too large for float64, else ``"objective"``
    with the ``returned`` text and the moderate inputs that exposed the objective's bug."""
    name = objective.name
    too_large = _too_large(objective, scores, q)
    if too_large:
        return (f"{name}: {overflow}; {too_large}: too large for float64 in this objective (or a parameter "
                "is too large)"), "data"
    return (f"{name}: {returned}, from moderate inputs ({_moderate(objective, scores, q)}): "
            f"{_BUG.format(blame=blame)}"), "objective"


def _first_non_finite_query(objective: Any, scores: NDArray[np.float64]) -> int | None:
    """The first query whose scores, with every other query's set to 0, make the loss
    non-finite (the loss is a sum over queries: bisection, O(log n_queries) evaluations);
    ``None`` when the loss is non-finite at all-zero scores, or no single query does it."""
    ptr = objective.group_ptr

    def non_finite(first: int, stop: int) -> bool:  # queries first..stop-1 keep their scores
        kept = np.zeros_like(scores)
        kept[ptr[first]:ptr[stop]] = scores[ptr[first]:ptr[stop]]
        return not math.isfinite(float(objective._loss(kept)))

    if non_finite(0, 0):
        return None
    lo, hi = 0, objective.n_queries
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if non_finite(lo, mid):
            hi = mid
        else:
            lo = mid
    return lo if non_finite(lo, lo + 1) else None


def _query_inputs(objective: Any, scores: NDArray[np.float64],
                  q: int | None) -> tuple[str, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(what, scores, labels, weights) of query ``q``, or of the whole data set at all-zero
    scores (``q=None``)."""
    if q is None:
        return "the data set's", np.zeros(1), objective.labels, objective.query_weights
    a, b = int(objective.group_ptr[q]), int(objective.group_ptr[q + 1])
    return "the query's", scores[a:b], objective.labels[a:b], objective.query_weights[q:q + 1]


def _too_large(objective: Any, scores: NDArray[np.float64], q: int | None) -> str:
    """The inputs of query ``q`` (``None``: the data set at zero scores) beyond the moderate
    bounds, in words ("" when all are moderate)."""
    what, s, y, w = _query_inputs(objective, scores, q)
    parts = []
    if s.size and np.abs(s).max() > MODERATE_SCORE:
        parts.append(f"{what} scores span {float(s.min())} .. {float(s.max())}")
    if y.size and y.max() > MODERATE_LABEL:
        parts.append(f"{what} largest label is {float(y.max())}")
    if w.size and w.max() > MODERATE_WEIGHT:
        parts.append(f"{what} largest weight is {float(w.max())}" if q is None else f"its weight is {float(w[0])}")
    return ", ".join(parts)


def _moderate(objective: Any, scores: NDArray[np.float64], q: int | None) -> str:
    """The inputs of query ``q`` (``None``: the data set at zero scores) in words, for the
    message of an objective's own inf or NaN."""
    _, s, y, w = _query_inputs(objective, scores, q)
    labels = f"labels {float(y.min(initial=0.0))} .. {float(y.max(initial=0.0))}"
    given = (f"all scores 0, {labels}, weights up to {float(w.max(initial=0.0))}" if q is None else
             f"the query's scores {float(s.min())} .. {float(s.max())}, {labels}, weight {float(w[0])}")
    return (f"{given}; moderate: |score| <= {MODERATE_SCORE:g}, label <= {MODERATE_LABEL:g}, "
            f"weight <= {MODERATE_WEIGHT:g}")
