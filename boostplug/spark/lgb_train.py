"""LightGBM on Spark DataFrames with a boostplug objective: one barrier task per partition, the
tasks joined by LightGBM's own socket network (``machines``, ``local_listen_port``,
``num_machines``, ``tree_learner="data_parallel"``, ``pre_partition``), as ``lightgbm.dask``
joins its workers. User documentation: :mod:`boostplug.spark`."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from .._validation import check_rounds
from ..frameworks._metric_spec import MetricSpec
from ..frameworks.lightgbm.adapters import dataset, objective as lgb_objective
from ..frameworks.lightgbm.model_file import record_objective
from ..groups import group_ptr_from_qid
from ._barrier import (Columns, Part, ShippedObjective, check_distributable, driver_host, part_arrays,
                       prepare_frame, record_or_warn, run_barrier, start_tracker)
from ._metric import allreduce, from_sums, metric_sums

if TYPE_CHECKING:  # pragma: no cover
    import lightgbm as lgb
    import pandas as pd
    from pyspark.sql import DataFrame

__all__ = ["train_lightgbm"]

#: Parameters this trainer sets itself (the network, and one model over every worker's rows).
_OWN = ("objective", "machines", "local_listen_port", "num_machines", "tree_learner", "pre_partition")


def _free_port(host: str) -> int:
    """A port nobody listens on at ``host`` now (LightGBM opens it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, 0))
        return int(s.getsockname()[1])


class _EarlyStopping:
    """A LightGBM callback: the metric of the whole validation set each round (each worker's sums
    added up on XGBoost's collective, so every worker sees the same value and stops at the same
    round; Spark's own ``allGather`` takes about a second per call), early stopping on it. Each
    round adds only the new tree's scores."""

    order = 30

    def __init__(self, spec: MetricSpec, valid: Part, rounds: int | None) -> None:
        self.spec, self.valid, self.rounds = spec, valid, rounds
        self.gp = group_ptr_from_qid(valid.qid) if valid.n_rows else np.zeros(1, dtype=np.int64)
        self.weights = None if valid.weight is None or not valid.n_rows else valid.weight[self.gp[:-1]]
        self.scores = np.zeros(valid.n_rows)
        self.history: list[float] = []
        self.best = 0

    def __call__(self, env: Any) -> None:
        import lightgbm as lgb

        if self.valid.n_rows:
            # One thread: OpenMP threads left spinning after a parallel predict starve the other workers.
            self.scores += env.model.predict(self.valid.X, start_iteration=env.iteration, num_iteration=1,
                                             raw_score=True, num_threads=1)
        local = metric_sums(self.spec, self.scores, self.valid.y, self.gp, self.weights)
        value = from_sums(allreduce(local))
        self.history.append(value)
        better = value > self.history[self.best] if self.spec.higher_is_better else value < self.history[self.best]
        if better:
            self.best = len(self.history) - 1
        if self.rounds is not None and len(self.history) - 1 - self.best >= self.rounds:
            raise lgb.callback.EarlyStopException(self.best, [("validation", self.spec.display_name,
                                                               self.history[self.best], self.spec.higher_is_better)])


def train_lightgbm(
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
) -> "lgb.Booster":
    """Train LightGBM with a boostplug objective on a Spark DataFrame, one worker per partition.

    The arguments are those of :func:`boostplug.spark.train_xgboost`; ``params`` are LightGBM's
    (``num_leaves``, ``learning_rate``...), without the network and objective, which this sets.
    LightGBM finds each feature's bins from the workers' own rows and reduces histograms across
    workers (``tree_learner="data_parallel"``), so the model is the one-machine model up to those
    bins. With ``valid_df``, ``booster.best_iteration`` is the best round of ``metric`` and the
    returned model is cut there when early stopping fired.

    Returns:
        The trained ``lgb.Booster``, with the objective recorded in it
        (:func:`boostplug.lightgbm.save_model` writes it into the model file).
    """
    import lightgbm as lgb

    check_rounds(num_boost_round, "num_boost_round")
    objective_params = dict(objective_params or {})
    obj = lgb_objective(objective, **objective_params)
    check_distributable(obj, early_stopping_rounds, valid_df)
    clash = sorted(set(params or {}) & set(_OWN))
    if clash:
        raise ValueError(f"params {clash} are set by train_lightgbm (the objective and LightGBM's network); "
                         "leave them out")
    cols = Columns(label_col, qid_col, features_col, feature_cols, weight_col, doc_col)
    shipped = ShippedObjective.of(objective)
    spec = MetricSpec(metric) if valid_df is not None else None
    user_params = {"verbose": -1, **(params or {})}
    laid, layout = prepare_frame(df, valid_df, cols, num_workers, repartition, "train_lightgbm")
    n_workers = layout.n_partitions
    tracker_args = None if spec is None else start_tracker(driver_host(df), n_workers)

    def task(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        import pandas as pd
        from pyspark import BarrierTaskContext

        ctx = BarrierTaskContext.get()
        train, valid = part_arrays(batches, cols)
        shipped.ensure_registered()
        host = ctx.getTaskInfos()[ctx.partitionId()].address.rsplit(":", 1)[0]
        port = _free_port(host)
        machines = ",".join(ctx.allGather(f"{host}:{port}"))
        run_params = {**user_params, "objective": lgb_objective(shipped.name, **objective_params),
                      "machines": machines, "local_listen_port": port, "num_machines": n_workers,
                      "tree_learner": "data_parallel", "pre_partition": True}
        dtrain = dataset(train.X, train.y, qid=train.qid, weight=train.weight, doc=train.doc)
        if spec is None:
            booster = lgb.train(run_params, dtrain, num_boost_round)
        else:
            from xgboost import collective

            with collective.CommunicatorContext(dmlc_task_id=str(ctx.partitionId()), **tracker_args):
                booster = lgb.train(run_params, dtrain, num_boost_round,
                                    callbacks=[_EarlyStopping(spec, valid, early_stopping_rounds)])
        text = booster.model_to_string()
        booster.free_network()
        ctx.barrier()
        if ctx.partitionId() == 0:
            yield pd.DataFrame({"model": [text]})

    try:
        rows = run_barrier(laid, task, "model string")
    finally:
        laid.unpersist()
    booster = lgb.Booster(model_str=rows[0][0])
    return record_or_warn(record_objective, booster, obj)
