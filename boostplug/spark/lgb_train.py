"""LightGBM's barrier task: the tasks exchange their ``host:port`` through the barrier and each
trains as one machine of LightGBM's own socket network
(:func:`boostplug.frameworks.distributed.lightgbm_worker.train_part`). The driver's side is
:func:`boostplug.spark.training.train`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..frameworks.distributed.lightgbm_worker import (free_port, load, objective, prepare_params, record_objective,
                                                      train_part, uses_tracker)
from ..frameworks.distributed.rows import Part
from ..frameworks.distributed.stamps import Stamps
from ._barrier import barrier_task, train_or_defer

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ._job import Job

__all__ = ["SCHEMA", "objective", "prepare_params", "uses_tracker", "task", "load", "record_objective"]

#: What each task sends back: its stage stamps, and the first task the model text.
SCHEMA = "model string, stages string"


def task(job: "Job") -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    """The function each barrier task runs on its partition's rows."""

    def fit(ctx: Any, train: Part, valid: Part, stamps: Stamps) -> str:
        host = ctx.getTaskInfos()[ctx.partitionId()].address.rsplit(":", 1)[0]
        port = free_port(host)
        machines = ",".join(ctx.allGather(f"{host}:{port}"))
        stamps.mark("join")
        return train_or_defer(lambda: train_part(
            train, job.params, job.objective(objective, train), job.num_boost_round, machines=machines, port=port,
            n_workers=job.n_workers, valid=valid, metric=job.metric, early_stopping_rounds=job.early_stopping_rounds,
            tracker_args=job.tracker_args, task_id=str(ctx.partitionId()), stamps=stamps), ctx.partitionId())

    return barrier_task(job, fit)
