"""boostplug metrics of distributed scores, computed where the partitions live.
User documentation: :mod:`boostplug.dask`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..._core.threads import limit_threads
from .partition import compute, dask_modules, local_structure, raise_if_split, require_frame

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    from distributed import Client

__all__ = ["evaluate"]


def _metric_names(metrics: str | Sequence[str]) -> list[str]:
    from ...metrics import by_name, parse_name

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics must name at least one metric, e.g. ['ndcg@10']")
    for name in names:
        by_name(name)  # ValueError listing the valid names
        if parse_name(name)[0] in ("r1", "r2"):
            raise ValueError(
                f"metric {name!r} averages over critical pairs, not queries; evaluate() reduces "
                "per-query values: use a query-averaged metric (ndcg@k, map@k, p@k, mrr, err)"
            )
    return names


def _partition_metrics(scores: Any, labels: Any, qid: Any, partition: int, qid_col: str,
                       names: list[str], per_query: bool) -> dict[str, Any]:
    """Per-query metric values of one partition, summed (runs where the partition lives)."""
    from ...metrics import by_name

    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if s.shape[0] != y.shape[0]:
        raise ValueError(
            f"partition {partition}: {s.shape[0]} scores for {y.shape[0]} rows; the scores must be "
            "partitioned like the frame (e.g. the output of predict on the same frame)"
        )
    gp, ids = local_structure(qid, partition, qid_col)
    out: dict[str, Any] = {"qids": ids, "sums": {}, "counts": {}, "values": {}}
    for name in names:
        with limit_threads(1):  # one task per worker thread: its kernels stay on that thread
            values = np.asarray(by_name(name)(s, y, gp, per_query=True), dtype=np.float64)
        kept = values[~np.isnan(values)]
        out["sums"][name] = float(kept.sum())
        out["counts"][name] = int(kept.shape[0])
        if per_query:
            out["values"][name] = values
    return out


def _partitions_1d(values: Any, what: str) -> list[Any]:
    _, da, dd = dask_modules()
    if isinstance(values, (dd.Series, dd.DataFrame)):
        return list(values.to_delayed())
    if isinstance(values, da.Array):
        return list(values.to_delayed().ravel())
    raise TypeError(
        f"{what} must be a Dask Series or Dask array partitioned like the frame, got {type(values).__name__}"
    )


def evaluate(
    scores: Any,
    frame: "dd.DataFrame",
    metrics: str | Sequence[str] = ("ndcg@10",),
    *,
    label_col: str = "label",
    qid_col: str = "qid",
    per_query: bool = False,
    client: "Client | None" = None,
) -> dict[str, Any]:
    """boostplug metrics of distributed scores: per-query values computed where the data lives.

    Each partition computes its queries' values with :func:`boostplug.metrics.by_name`
    (``per_query=True``) and sends back only their sum and count (and, on request, the values);
    the client reduces them to the mean over queries, skipping queries whose value is NaN exactly
    as the single-machine metric does. A query split between partitions is a ``ValueError``.

    Args:
        scores: Dask array or Series of scores, one chunk per partition of ``frame`` (e.g.
            ``DaskLGBMRanker.predict(frame[features])`` or ``xgboost.dask.predict``).
        frame: the Dask DataFrame with ``label_col`` and ``qid_col``.
        metrics: metric names (``"ndcg@10"``, ``"map@10"``, ``"p@5"``, ``"mrr"``, ``"err@10"``...).
        per_query: also return the per-query values.
        client: a ``distributed`` client (default: Dask's current scheduler).

    Returns:
        ``{name: mean}``, plus, with ``per_query=True``, ``"per_query"``: a pandas DataFrame
        with one row per query (``qid_col`` and one column per metric), in partition order.
    """
    dask, _, _ = dask_modules()
    import pandas as pd

    names = _metric_names(metrics)
    require_frame(frame, label_col, qid_col, "evaluate")
    score_parts = _partitions_1d(scores, "scores")
    label_parts = list(frame[label_col].to_delayed())
    qid_parts = list(frame[qid_col].to_delayed())
    if len(score_parts) != len(label_parts):
        raise ValueError(
            f"scores have {len(score_parts)} partitions but the frame has {len(label_parts)}; "
            "predict on the same frame so the partitions line up"
        )
    task = dask.delayed(_partition_metrics)
    tasks = [task(s, y, q, i, qid_col, names, per_query)
             for i, (s, y, q) in enumerate(zip(score_parts, label_parts, qid_parts))]
    results = compute(tasks, client)
    raise_if_split([r["qids"] for r in results], qid_col)
    out: dict[str, Any] = {}
    for name in names:
        total = sum(r["sums"][name] for r in results)
        count = sum(r["counts"][name] for r in results)
        out[name] = total / count if count else float("nan")
    if per_query:
        values = {name: np.concatenate([r["values"][name] for r in results]) for name in names}
        out["per_query"] = pd.DataFrame({qid_col: np.concatenate([r["qids"] for r in results]), **values})
    return out
