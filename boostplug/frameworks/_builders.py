"""What the ``dataset()``/``dmatrix()`` builders share: query groups from ``qid`` or
``group_ptr``, finite weights and initial scores and integer positions, refused naming the row or query."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import INT32_MAX, check_finite, show
from ..groups import check_group_ptr, group_ptr_from_qid
from ._query_info import query_weights_from_rows, refuse_bad_weights, weights_by_query

__all__ = ["builder_group_ptr", "builder_weights", "builder_init_score", "builder_positions"]


def builder_group_ptr(y: Any, qid: Any, group_ptr: Any, kwargs: dict[str, Any], builder: str) -> NDArray[np.int64]:
    """What ``dataset()``/``dmatrix()`` share: finite labels and a ``group_ptr`` covering them,
    from exactly one of ``qid`` (contiguous, any order) or ``group_ptr``."""
    if (qid is None) == (group_ptr is None):
        raise ValueError("pass exactly one of qid=... or group_ptr=...")
    if "group" in kwargs:
        raise TypeError(f"{builder} builds the query groups from qid= or group_ptr=; don't pass group= too")
    check_finite(y, "y", noun="label")  # the frameworks store NaN/inf labels silently or refuse them without the row
    n = int(np.shape(y)[0])
    if qid is not None and np.shape(qid)[0] != n:
        raise ValueError(f"qid has {np.shape(qid)[0]} rows but y has {n}")
    gp = group_ptr_from_qid(qid, caller=builder.split(" (")[0]) if qid is not None else check_group_ptr(group_ptr)
    if gp[-1] != n:
        raise ValueError(f"the query groups cover {int(gp[-1])} rows but y has {n}")
    return gp


def builder_weights(weight: Any, group_ptr: NDArray[np.int64], framework: str, *,
                    per_query: bool) -> NDArray[np.float64] | None:
    """What ``dataset()``/``dmatrix()`` share: ``weight`` given one per row or one per query, finite
    and non-negative, returned one per row (LightGBM's format) or, with ``per_query``, one per
    query (XGBoost's; rows of a query must then agree). A bad weight is a ``ValueError`` naming
    its query: LightGBM would drop a NaN-weighted query silently and store ``inf`` as 1e38, and
    XGBoost refuses without saying which."""
    if weight is None:
        return None
    w = np.asarray(weight, dtype=np.float64).reshape(-1)
    by_query = weights_by_query(w.shape[0], group_ptr, framework)
    refuse_bad_weights(w, group_ptr, framework, by_query)
    if per_query:
        return query_weights_from_rows(w, group_ptr, framework)
    return np.repeat(w, np.diff(group_ptr)) if by_query else w


def builder_init_score(values: Any, name: str) -> Any:
    """Finite initial scores (``init_score``/``base_margin``) or ``None``: a NaN or infinite start
    would make every gradient of its query NaN. 2-d scores (one column per class) are checked whole."""
    if values is None:
        return None
    v = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(v.reshape(-1)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name} must be finite; entry {i} is {float(v.reshape(-1)[i])!r}"
                         + (f" ({bad.size} such entries)" if bad.size > 1 else ""))
    return values



def builder_positions(position: Any) -> Any:
    """Positions (LightGBM's Dataset ``position``) as int32, or ``None``: non-negative whole numbers
    within int32, else a ``ValueError`` naming the first other value and its row (LightGBM casts
    them to int32: ``2**40 + k`` would train as ``k``, 0.5 as 0, NaN as whatever the cast gives)."""
    if position is None:
        return None
    arr = np.asarray(position)
    if arr.ndim != 1:
        raise ValueError(f"position must be one integer per row, got an array of shape {arr.shape}")
    if arr.dtype.kind in "iufO":  # in an object array, what is not a number is no position (NaN here)
        v = np.array([x if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) else np.nan
                      for x in arr.tolist()], dtype=np.float64) if arr.dtype.kind == "O" else arr.astype(np.float64)
        bad = ~np.isfinite(v) | (np.floor(v) != v) | (v < 0) | (v > INT32_MAX)
    else:  # strings, booleans: no position
        bad = np.ones(arr.shape[0], dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"position must hold non-negative integers within int32 (0 to {INT32_MAX}: LightGBM stores "
                         f"them as int32); row {i} has {show(arr[i])}")
    return arr.astype(np.int32)
