"""Option parsing and aggregation shared by the metric modules (validation at the boundary).

Gains and discounts: :mod:`boostplug._core.dcg`."""

from __future__ import annotations

import math
from typing import Callable, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_k, plain
from ..groups import check_ranking_inputs
from . import _kernels as K

#: ``empty=`` accepts a number in [0, 1] or this string.
SKIP = "skip"
EmptyValue = Union[float, str]

_TIES = {"order": K.TIES_ORDER, "average": K.TIES_AVERAGE, "worst": K.TIES_WORST}


def ranked_inputs(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None, qid: ArrayLike | None,
                  k: int | None, ties: str, allowed: tuple[str, ...] = ("order", "average", "worst")
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], int, int]:
    """A ranking metric's checked ``(scores, labels, group_ptr, k, ties code)``, in that order, the
    cut-off as the kernels take it (0 = whole list); ``ValueError`` naming an unknown ``ties``."""
    s, y, g = check_ranking_inputs(scores, labels, group_ptr, qid=qid)
    kk = check_k(k)
    if not isinstance(ties, str) or ties not in allowed:
        raise ValueError(f"ties must be one of {', '.join(repr(t) for t in allowed)}; got {plain(ties)!r}")
    return s, y, g, 0 if kk is None else kk, _TIES[ties]


def number(value: object) -> float | None:
    """``value`` as a float (+-inf beyond float64) when it is a real number (not a bool), else ``None``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    try:
        return float(value)
    except OverflowError:  # an int beyond float64
        return math.inf if value > 0 else -math.inf


def checked_number(value: object, name: str, ok: Callable[[float], bool], what: str) -> float:
    """``value`` as a float (:func:`number`) for which ``ok`` holds, else ``"{name} must be {what}"``
    with the value: a ``TypeError`` when it is not a real number, a ``ValueError`` when ``ok`` fails."""
    v = number(value)
    if v is None or not ok(v):
        kind = TypeError if v is None else ValueError
        raise kind(f"{name} must be {what}; got {plain(value)!r}")
    return v


def check_empty(empty: EmptyValue) -> float:
    """Value of a query without anything relevant: a number in [0, 1], or NaN for ``"skip"``."""
    if isinstance(empty, str) and empty == SKIP:
        return math.nan
    value = number(empty)
    if value is None or not 0.0 <= value <= 1.0:
        raise ValueError(f"empty must be a number in [0, 1] or 'skip'; got {plain(empty)!r}")
    return value


def check_threshold(threshold: float) -> float:
    """Relevance threshold (label >= threshold is relevant): a finite number."""
    t = number(threshold)
    if t is None or not math.isfinite(t):
        raise ValueError(f"threshold must be a finite number; got {plain(threshold)!r}")
    return t


def finish(per_query: NDArray[np.float64], return_per_query: bool) -> float | NDArray[np.float64]:
    """The per-query array, or the mean over queries that are not NaN (skipped); NaN if none is left."""
    if return_per_query:
        return per_query
    kept = per_query[~np.isnan(per_query)]
    return float(kept.mean()) if kept.size else math.nan


def normalise(raw: NDArray[np.float64], norm: NDArray[np.float64], empty: float) -> NDArray[np.float64]:
    """``raw / norm`` where ``norm > 0``, else ``empty`` (NaN when skipped), at most 1.

    ``raw <= norm`` holds exactly (a DCG never exceeds the ideal DCG, an AP sum never
    exceeds its divisor), but the two sums add the same terms in different orders, so with
    gains that span many orders of magnitude (2^60 next to 2^12) rounding can put the ratio
    one ulp above 1; it is clamped there."""
    out = np.full(raw.shape[0], empty, dtype=np.float64)
    ok = norm > 0.0
    out[ok] = np.minimum(raw[ok] / norm[ok], 1.0)
    return out
