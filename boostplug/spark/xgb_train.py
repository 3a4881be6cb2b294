"""XGBoost on Spark DataFrames with a boostplug objective: one barrier task per partition joins
XGBoost's own collective (a ``RabitTracker`` on the driver), builds its ``DMatrix`` from its
partition's whole queries and runs ``xgb.train`` with the objective, as ``xgboost.spark`` does
inside for built-in objectives. User documentation: :mod:`boostplug.spark`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from .._validation import check_rounds
from ..frameworks._metric_spec import MetricCallable
from ..frameworks._query_info import metric_query_weights
from ..frameworks.xgboost.adapters import dmatrix, objective as xgb_objective, params as xgb_params
from ..frameworks.xgboost.model_file import record_objective
from ._metric import allreduce, from_sums, metric_sums
from ._barrier import (Columns, ShippedObjective, check_distributable, driver_host, part_arrays, prepare_frame,
                       record_or_warn, run_barrier, start_tracker)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xgboost as xgb
    from pyspark.sql import DataFrame

__all__ = ["CollectiveMetric", "train_xgboost"]


class CollectiveMetric(MetricCallable):
    """``custom_metric`` for a distributed ``xgb.train``: each worker evaluates its own whole
    queries, and one allreduce sums ``(sum_q w_q m_q, sum_q w_q)`` over workers, so every worker
    sees the metric of the whole validation set (the same value, hence the same early-stopping
    decision). Queries a convention skips (NaN) are left out of both sums, as in one process."""

    def __call__(self, predt: np.ndarray, dmat: Any) -> tuple[str, float]:
        gp = dmat.get_uint_info("group_ptr") if dmat.num_row() else np.zeros(1, dtype=np.int64)
        w = metric_query_weights(dmat.get_weight(), np.asarray(gp, dtype=np.int64), "XGBoost")
        return self.spec.display_name, from_sums(allreduce(metric_sums(self.spec, predt, dmat.get_label(), gp, w)))


def train_xgboost(
    df: "DataFrame",
    objective: str,
    *,
    objective_params: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    num_boost_round: int = 100,
    label_col: str = "label",
    qid_col: str = "qid",
    features_col: str | None = "features",
    feature_cols: Any = None,
    weight_col: str | None = None,
    doc_col: str | None = None,
    valid_df: "DataFrame | None" = None,
    metric: str = "ndcg@10",
    early_stopping_rounds: int | None = None,
    num_workers: int | None = None,
    repartition: bool = True,
) -> "xgb.Booster":
    """Train XGBoost with a boostplug objective on a Spark DataFrame, one worker per partition.

    Args:
        df: the training rows: features in ``features_col`` (a ``pyspark.ml`` vector or an
            array of numbers) or in the numeric ``feature_cols``; ``label_col``, ``qid_col`` and
            optionally ``weight_col`` (one weight per row, the same for every row of a query) and
            ``doc_col`` (each row's document key, for a :class:`~boostplug.keyed_pairs.KeyedPairs`
            in ``objective_params``, such as QBRank's ``pairs=clicks.preferences(...).keyed()``:
            the table travels whole, and each worker maps it onto its own rows).
        objective: a registered objective's name (:func:`boostplug.objectives.names`), yours
            included: its registry entry travels to the executors.
        objective_params: its parameters (row-index parameters are refused: each worker numbers
            its own rows; give pairs as a ``KeyedPairs`` table with ``doc_col``).
        params: booster parameters over :func:`boostplug.xgboost.params` (``base_score=0``,
            ``tree_method="hist"``).
        valid_df: validation rows (same columns); its ``metric`` (a boostplug metric name) is
            reported each round over the whole validation set, and ``early_stopping_rounds``
            stops on it (``booster.best_iteration``).
        num_workers: how many barrier tasks (default: Spark's default parallelism); the cluster
            must run that many tasks at once.
        repartition: ``True`` (default) lays the rows out by :func:`repartition_by_query`; ``False``
            keeps ``df``'s partitions, which must hold whole queries (checked: a split query is a
            ``ValueError`` naming it).

    Returns:
        The trained ``xgb.Booster``, with the objective recorded in it
        (:func:`boostplug.xgboost.objective_of`).
    """
    import xgboost as xgb

    check_rounds(num_boost_round, "num_boost_round")
    objective_params = dict(objective_params or {})
    obj = xgb_objective(objective, **objective_params)  # validates the parameters on the driver
    check_distributable(obj, early_stopping_rounds, valid_df)
    cols = Columns(label_col, qid_col, features_col, feature_cols, weight_col, doc_col)
    shipped = ShippedObjective.of(objective)
    booster_params = xgb_params(**(params or {}))
    measure = CollectiveMetric(metric) if valid_df is not None else None
    laid, layout = prepare_frame(df, valid_df, cols, num_workers, repartition, "train_xgboost")
    try:
        tracker_args = start_tracker(driver_host(df), layout.n_partitions)

        def task(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
            import pandas as pd
            from pyspark import BarrierTaskContext
            from xgboost import collective

            ctx = BarrierTaskContext.get()
            train, valid = part_arrays(batches, cols)
            shipped.ensure_registered()
            local_obj = xgb_objective(shipped.name, **objective_params)
            with collective.CommunicatorContext(dmlc_task_id=str(ctx.partitionId()), **tracker_args):
                dtrain = dmatrix(train.X, train.y, qid=train.qid, weight=train.weight, doc=train.doc)
                evals = []
                if measure is not None:
                    dvalid = (dmatrix(valid.X, valid.y, qid=valid.qid, weight=valid.weight) if valid.n_rows
                              else xgb.DMatrix(np.zeros((0, train.X.shape[1])), label=np.zeros(0)))
                    evals = [(dvalid, "validation")]
                booster = xgb.train(booster_params, dtrain, num_boost_round, obj=local_obj, evals=evals,
                                    custom_metric=measure, verbose_eval=False,
                                    early_stopping_rounds=early_stopping_rounds,
                                    maximize=None if measure is None else measure.spec.higher_is_better)
            ctx.barrier()
            if ctx.partitionId() == 0:
                yield pd.DataFrame({"model": [bytes(booster.save_raw(raw_format="ubj"))]})

        rows = run_barrier(laid, task, "model binary")
    finally:
        laid.unpersist()
    booster = xgb.Booster()
    booster.load_model(bytearray(rows[0][0]))
    return record_or_warn(record_objective, booster, obj)
