"""A boostplug metric over queries spread across workers: each worker's share as two sums, which
XGBoost's collective adds up across workers (for both frameworks' distributed trainers) into the
metric of the whole set."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._metric_spec import MetricSpec

__all__ = ["metric_sums", "allreduce", "from_sums"]


def metric_sums(spec: MetricSpec, scores: Any, labels: Any, group_ptr: Any, query_weights: Any) -> np.ndarray:
    """:meth:`MetricSpec.sums` over one worker's whole queries (weights ``None``: 1 each), so the
    metric of the whole set follows its ``weighting`` as in one process."""
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if y.shape[0] == 0:
        return np.zeros(2)
    w = None if query_weights is None else np.asarray(query_weights, dtype=np.float64)
    return spec.sums(scores, spec.prepare(y, np.asarray(group_ptr, dtype=np.int64), w))


def allreduce(sums: np.ndarray) -> np.ndarray:
    """The sums of every worker of XGBoost's collective (this worker's alone outside one)."""
    from xgboost import collective

    return collective.allreduce(sums, collective.Op.SUM) if collective.is_distributed() else sums


def from_sums(sums: np.ndarray) -> float:
    """The metric from the sums of every worker's :func:`metric_sums` (NaN when no query counts)."""
    return float(sums[0] / sums[1]) if sums[1] > 0 else float("nan")
