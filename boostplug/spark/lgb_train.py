"""LightGBM's barrier task: the tasks exchange their ``host:port`` through the barrier and join
LightGBM's own socket network (``machines``, ``local_listen_port``, ``num_machines``,
``tree_learner="data_parallel"``, ``pre_partition``), as ``lightgbm.dask`` joins its workers,
then run ``lgb.train`` with the boostplug objective. The driver's side is
:func:`boostplug.spark.training.train`."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from ..frameworks._metric_spec import MetricSpec
from ..frameworks.lightgbm.adapters import dataset, objective
from ..frameworks.lightgbm.model_file import record_objective
from ..groups import group_ptr_from_qid
from ._barrier import Part, part_arrays
from ._metric import allreduce, from_sums, metric_sums
from .stages import Stamps

if TYPE_CHECKING:  # pragma: no cover
    import lightgbm as lgb
    import pandas as pd

    from .training import Job

__all__ = ["SCHEMA", "objective", "prepare_params", "uses_tracker", "task", "load", "record_objective"]

#: What each task sends back: its stage stamps, and the first task the model text.
SCHEMA = "model string, stages string"

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


def prepare_params(params: dict[str, Any]) -> dict[str, Any]:
    """LightGBM's parameters, quiet by default; the network and objective are refused (set here)."""
    clash = sorted(set(params) & set(_OWN))
    if clash:
        raise ValueError(f"params {clash} are set by train_lightgbm (the objective and LightGBM's network); "
                         "leave them out")
    return {"verbose": -1, **params}


def uses_tracker(metric: MetricSpec | None) -> bool:
    """XGBoost's collective only adds up the early-stopping metric: needed with validation rows."""
    return metric is not None


def task(job: "Job") -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    """The function each barrier task runs on its partition's rows."""

    def run(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        import lightgbm as lgb
        import pandas as pd
        from pyspark import BarrierTaskContext

        stamps = Stamps()
        ctx = BarrierTaskContext.get()
        train, valid = part_arrays(batches, job.cols, stamps)
        host = ctx.getTaskInfos()[ctx.partitionId()].address.rsplit(":", 1)[0]
        port = _free_port(host)
        machines = ",".join(ctx.allGather(f"{host}:{port}"))
        stamps.mark("join")
        run_params = {**job.params, "objective": job.objective(objective, train), "machines": machines,
                      "local_listen_port": port, "num_machines": job.n_workers, "tree_learner": "data_parallel",
                      "pre_partition": True}
        dtrain = dataset(train.X, train.y, qid=train.qid, weight=train.weight, doc=train.doc)
        stamps.mark("build")  # the Dataset itself is built inside lgb.train
        if job.metric is None:
            booster = lgb.train(run_params, dtrain, job.num_boost_round)
        else:
            from xgboost import collective

            with collective.CommunicatorContext(dmlc_task_id=str(ctx.partitionId()), **job.tracker_args):
                booster = lgb.train(run_params, dtrain, job.num_boost_round,
                                    callbacks=[_EarlyStopping(job.metric, valid, job.early_stopping_rounds)])
        stamps.mark("train")
        text = booster.model_to_string() if ctx.partitionId() == 0 else None
        booster.free_network()
        ctx.barrier()
        stamps.mark("return")
        yield pd.DataFrame({"model": [text], "stages": [stamps.to_json()]})

    return run


def load(payload: str) -> "lgb.Booster":
    """The booster from the model text the first task sent back."""
    import lightgbm as lgb

    return lgb.Booster(model_str=payload)
