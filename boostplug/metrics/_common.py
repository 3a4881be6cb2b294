"""Option parsing and aggregation shared by the metric modules (validation at the boundary).

Gains and discounts: :mod:`boostplug._core.dcg`."""

from __future__ import annotations

import math
from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_k, plain
from ..groups import check_ranking_inputs
from . import _kernels as K

#: ``empty=`` accepts a number in [0, 1] or this string.
SKIP = "skip"
EmptyValue = Union[float, str]

_TIES = {"order": K.TIES_ORDER, "average": K.TIES_AVERAGE, "worst": K.TIES_WORST}


def ties_code(ties: str, *, allowed: tuple[str, ...] = ("order", "average", "worst")) -> int:
    """Kernel code of a ``ties`` option; ``ValueError`` naming an unknown value."""
    if not isinstance(ties, str) or ties not in allowed:
        raise ValueError(f"ties must be one of {', '.join(repr(t) for t in allowed)}; got {plain(ties)!r}")
    return _TIES[ties]


def ranked_inputs(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None, qid: ArrayLike | None,
                  k: int | None, ties: str, allowed: tuple[str, ...] = ("order", "average", "worst")
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], int | None, int]:
    """A ranking metric's checked ``(scores, labels, group_ptr, k, ties code)``, in that order."""
    s, y, g = check_ranking_inputs(scores, labels, group_ptr, qid=qid)
    return s, y, g, check_k(k), ties_code(ties, allowed=allowed)


def check_empty(empty: EmptyValue) -> float:
    """Value of a query without anything relevant: a number in [0, 1], or NaN for ``"skip"``."""
    if isinstance(empty, str):
        if empty == SKIP:
            return math.nan
        raise ValueError(f"empty must be a number in [0, 1] or 'skip'; got {empty!r}")
    if isinstance(empty, (bool, np.bool_)) or not isinstance(empty, (int, float, np.integer, np.floating)):
        raise ValueError(f"empty must be a number in [0, 1] or 'skip'; got {plain(empty)!r}")
    value = float(empty) if not isinstance(empty, int) or abs(empty) <= 1 else math.inf
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"empty must be a number in [0, 1] or 'skip'; got {plain(empty)!r}")
    return value


def check_threshold(threshold: float) -> float:
    """Relevance threshold (label >= threshold is relevant): a finite number."""
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise ValueError(f"threshold must be a finite number; got {plain(threshold)!r}")
    try:
        t = float(threshold)
    except OverflowError:
        raise ValueError(f"threshold must be a finite number; got {plain(threshold)!r}") from None
    if not math.isfinite(t):
        raise ValueError(f"threshold must be a finite number; got {plain(threshold)!r}")
    return t


def kernel_k(k: int | None) -> int:
    """A validated cut-off as the kernels take it (0 = whole list)."""
    return 0 if k is None else int(k)


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
