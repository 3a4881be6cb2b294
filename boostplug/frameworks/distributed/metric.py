"""A boostplug metric over queries spread across workers: each worker's share as two sums, which
XGBoost's collective adds up across workers (for both frameworks' distributed trainers) into the
metric of the whole set."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._metric_spec import MetricSpec

__all__ = ["metric_sums", "allreduce", "from_sums"]


def metric_sums(spec: MetricSpec, scores: Any, labels: Any, group_ptr: Any, query_weights: Any) -> np.ndarray:
    """``[sum_q w_q m_q, sum_q w_q]`` over one worker's whole queries (weights ``None``: 1 each);
    queries a convention skips (NaN) are in neither sum, as in the one-process metric."""
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if y.shape[0] == 0:
        return np.zeros(2)
    gp = np.asarray(group_ptr, dtype=np.int64)
    per_q = np.asarray(spec.fn(np.asarray(scores, np.float64).reshape(-1), y, gp, per_query=True), dtype=np.float64)
    w = np.ones(per_q.shape[0]) if query_weights is None else np.asarray(query_weights, dtype=np.float64)
    kept = ~np.isnan(per_q)
    return np.array([float(np.dot(w[kept], per_q[kept])), float(w[kept].sum())])


def allreduce(sums: np.ndarray) -> np.ndarray:
    """The sums of every worker of XGBoost's collective (this worker's alone outside one)."""
    from xgboost import collective

    return collective.allreduce(sums, collective.Op.SUM) if collective.is_distributed() else sums


def from_sums(sums: np.ndarray) -> float:
    """The metric from the sums of every worker's :func:`metric_sums` (NaN when no query counts)."""
    return float(sums[0] / sums[1]) if sums[1] > 0 else float("nan")
