"""Input validation at the public boundary, shared by metrics, objectives and boosters.

Every public function that takes ``(scores, labels, group_ptr)`` calls
:func:`check_ranking_inputs` once; numba kernels behind it may then assume
float64 contiguous arrays of matching length and a valid ``group_ptr``.
Messages show the offending values (never ``assert``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .groups import check_group_ptr

__all__ = ["check_ranking_inputs", "check_scores", "check_labels", "check_k", "check_weights"]


def _first_bad(mask: np.ndarray, values: np.ndarray) -> str:
    idx = np.flatnonzero(mask)
    i = int(idx[0])
    more = f" ({idx.size} such rows)" if idx.size > 1 else ""
    return f"row {i} has {values[i]!r}{more}"


def _as_float_1d(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def check_scores(scores: ArrayLike, name: str = "scores") -> NDArray[np.float64]:
    """Scores as contiguous float64; NaN or infinite values are a ``ValueError``."""
    s = _as_float_1d(scores, name)
    bad = ~np.isfinite(s)
    if bad.any():
        raise ValueError(f"{name} must be finite; {_first_bad(bad, s)}")
    return s


def check_labels(labels: ArrayLike, name: str = "labels") -> NDArray[np.float64]:
    """Relevance labels as contiguous float64: finite and non-negative."""
    y = _as_float_1d(labels, name)
    bad = ~np.isfinite(y)
    if bad.any():
        raise ValueError(f"{name} must be finite; {_first_bad(bad, y)}")
    bad = y < 0
    if bad.any():
        raise ValueError(f"{name} must be non-negative relevance grades; {_first_bad(bad, y)}")
    return y


def check_weights(weights: ArrayLike | None, n: int, name: str = "weights") -> NDArray[np.float64] | None:
    """Optional non-negative finite weights of length ``n``."""
    if weights is None:
        return None
    w = _as_float_1d(weights, name)
    if w.shape[0] != n:
        raise ValueError(f"{name} has length {w.shape[0]} but {n} were expected")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        raise ValueError(f"{name} must be finite and non-negative; {_first_bad(bad, w)}")
    return w


def check_k(k: int | None, name: str = "k") -> int | None:
    """A cut-off: ``None`` (whole list) or an integer >= 1."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= 1 or None, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1 (or None for the whole list), got {k}")
    return int(k)


def check_ranking_inputs(
    scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Validate ``(scores, labels, group_ptr)`` together.

    Returns float64 scores, float64 labels and an int64 ``group_ptr``.
    Raises ``ValueError`` naming the problem: NaN/inf scores, negative or
    non-finite labels, lengths that disagree, or an invalid ``group_ptr``.
    """
    s = check_scores(scores)
    y = check_labels(labels)
    if s.shape[0] != y.shape[0]:
        raise ValueError(
            f"scores and labels have different lengths: {s.shape[0]} and {y.shape[0]}"
        )
    g = check_group_ptr(group_ptr, n_docs=y.shape[0])
    return s, y, g
