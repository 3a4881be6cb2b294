"""Option parsing and aggregation shared by the metric modules (validation at the boundary)."""

from __future__ import annotations

import math
from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import plain
from . import _kernels as K

#: ``empty=`` accepts a number in [0, 1] or this string.
SKIP = "skip"
EmptyValue = Union[float, str]
GainSpec = Union[str, ArrayLike]

_TIES = {"order": K.TIES_ORDER, "average": K.TIES_AVERAGE, "worst": K.TIES_WORST}
_DISCOUNTS = ("log2", "letor")
_GAINS = ("exp2", "linear")


def ties_code(ties: str, *, allowed: tuple[str, ...] = ("order", "average", "worst")) -> int:
    """Kernel code of a ``ties`` option; ``ValueError`` naming an unknown value."""
    if not isinstance(ties, str) or ties not in allowed:
        raise ValueError(f"ties must be one of {', '.join(repr(t) for t in allowed)}; got {plain(ties)!r}")
    return _TIES[ties]


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


def gains_of(labels: NDArray[np.float64], gain: GainSpec) -> NDArray[np.float64]:
    """Per-document gains: ``exp2`` 2^r - 1, ``linear`` r, or ``label_gain[r]``.

    The one gain computation of boostplug (metrics, the NDCG_Boost objective and booster).
    Raises ``ValueError`` for an unknown gain name, a gain that overflows, or, with a
    ``label_gain`` array (see :func:`check_label_gain`), a label that is not an integer
    index into it.
    """
    if isinstance(gain, str):
        if gain == "exp2":
            with np.errstate(over="ignore"):
                g = np.exp2(labels) - 1.0  # exact for integer labels
            bad = ~np.isfinite(g)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"the gain 2^r - 1 of label {float(labels[i])!r} (row {i}) overflows float64; "
                    "labels must be below 1024, or pass a label_gain table"
                )
            return g
        if gain == "linear":
            return labels.copy()
        raise ValueError(
            f"gain must be one of {', '.join(repr(x) for x in _GAINS)} or a label_gain array; got {gain!r}"
        )
    lg = check_label_gain(gain)
    bad = (labels != np.floor(labels)) | (labels >= lg.shape[0])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"with label_gain of length {lg.shape[0]} labels must be integers in 0..{lg.shape[0] - 1}; "
            f"row {i} has label {float(labels[i])!r}"
        )
    return lg[labels.astype(np.int64)]


def check_label_gain(label_gain: ArrayLike) -> NDArray[np.float64]:
    """A gain table indexed by label (LightGBM's ``label_gain``) as float64: 1-D, non-empty,
    numeric (else ``TypeError``), finite and non-negative (a negative gain makes NDCG leave
    [0, 1])."""
    if isinstance(label_gain, (str, bytes)) or np.ndim(label_gain) != 1:
        raise ValueError(f"label_gain must be a 1-D sequence of gains indexed by label; got {plain(label_gain)!r}")
    arr = np.asarray(label_gain)
    if arr.shape[0] == 0:
        raise ValueError("label_gain must not be empty")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"label_gain must be numeric; got dtype {arr.dtype}")
    lg = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(lg) | (lg < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"label_gain must be finite and >= 0; label_gain[{i}] = {lg[i]:g}")
    return lg


def discounts(discount: str, n: int) -> NDArray[np.float64]:
    """Discount of ranks 1..n: ``log2`` 1/log2(rank + 1); ``letor`` 1 for ranks 1-2, then 1/log2(rank)."""
    if not isinstance(discount, str) or discount not in _DISCOUNTS:
        raise ValueError(f"discount must be one of {', '.join(repr(x) for x in _DISCOUNTS)}; got {plain(discount)!r}")
    rank = np.arange(1, max(n, 1) + 1, dtype=np.float64)
    if discount == "log2":
        return 1.0 / np.log2(rank + 1.0)
    d = np.ones_like(rank)
    d[2:] = 1.0 / np.log2(rank[2:])
    return d


def max_query_size(group_ptr: NDArray[np.int64]) -> int:
    return int(np.diff(group_ptr).max()) if group_ptr.shape[0] > 1 else 0


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
