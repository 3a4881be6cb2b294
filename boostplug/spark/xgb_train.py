"""XGBoost's barrier task: each task trains as one worker of XGBoost's own collective (the tracker
on the driver; :func:`boostplug.frameworks.distributed.xgboost_worker.train_part`). The driver's
side is :func:`boostplug.spark.training.train`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..frameworks.distributed.rows import Part
from ..frameworks.distributed.stamps import Stamps
from ..frameworks.distributed.xgboost_worker import (load, objective, prepare_params, record_objective, train_part,
                                                     uses_tracker)
from ._barrier import barrier_task, train_or_defer

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ._job import Job

__all__ = ["SCHEMA", "objective", "prepare_params", "uses_tracker", "task", "load", "record_objective"]

#: What each task sends back: its stage stamps, and the first task the model as UBJSON.
SCHEMA = "model binary, stages string"


def task(job: "Job") -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    """The function each barrier task runs on its partition's rows."""

    def fit(ctx: Any, train: Part, valid: Part, stamps: Stamps) -> bytes:
        return train_or_defer(lambda: train_part(
            train, job.params, job.objective(objective, train), job.num_boost_round, tracker_args=job.tracker_args,
            task_id=str(ctx.partitionId()), valid=valid, metric=job.metric,
            early_stopping_rounds=job.early_stopping_rounds, stamps=stamps), ctx.partitionId())

    return barrier_task(job, fit)
