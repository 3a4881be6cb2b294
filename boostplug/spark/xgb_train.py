"""XGBoost's barrier task: each task joins XGBoost's own collective (the tracker on the driver),
builds its ``DMatrix`` from its partition's whole queries and runs ``xgb.train`` with the
boostplug objective, as ``xgboost.spark`` does inside for built-in objectives. The driver's side
is :func:`boostplug.spark.training.train`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from ..frameworks._metric_spec import MetricCallable, MetricSpec
from ..frameworks._query_info import metric_query_weights
from ..frameworks.xgboost.adapters import dmatrix, objective
from ..frameworks.xgboost.adapters import params as xgb_params
from ..frameworks.xgboost.model_file import record_objective
from ._barrier import part_arrays
from ._metric import allreduce, from_sums, metric_sums
from .stages import Stamps

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xgboost as xgb

    from .training import Job

__all__ = ["CollectiveMetric", "SCHEMA", "objective", "prepare_params", "uses_tracker", "task", "load",
           "record_objective"]

#: What each task sends back: its stage stamps, and the first task the model as UBJSON.
SCHEMA = "model binary, stages string"


class CollectiveMetric(MetricCallable):
    """``custom_metric`` for a distributed ``xgb.train``: each worker evaluates its own whole
    queries, and one allreduce sums ``(sum_q w_q m_q, sum_q w_q)`` over workers, so every worker
    sees the metric of the whole validation set (the same value, hence the same early-stopping
    decision). Queries a convention skips (NaN) are left out of both sums, as in one process."""

    def __call__(self, predt: np.ndarray, dmat: Any) -> tuple[str, float]:
        gp = dmat.get_uint_info("group_ptr") if dmat.num_row() else np.zeros(1, dtype=np.int64)
        w = metric_query_weights(dmat.get_weight(), np.asarray(gp, dtype=np.int64), "XGBoost")
        return self.spec.display_name, from_sums(allreduce(metric_sums(self.spec, predt, dmat.get_label(), gp, w)))


def prepare_params(params: dict[str, Any]) -> dict[str, Any]:
    """Booster parameters over :func:`boostplug.xgboost.params`."""
    return xgb_params(**params)


def uses_tracker(metric: MetricSpec | None) -> bool:
    """The workers always join XGBoost's collective (it reduces their histograms)."""
    return True


def task(job: "Job") -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    """The function each barrier task runs on its partition's rows."""
    measure = None if job.metric is None else CollectiveMetric(job.metric.name)

    def run(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        import pandas as pd
        import xgboost as xgb
        from pyspark import BarrierTaskContext
        from xgboost import collective

        stamps = Stamps()
        ctx = BarrierTaskContext.get()
        train, valid = part_arrays(batches, job.cols, stamps)
        obj = job.objective(objective, train)
        with collective.CommunicatorContext(dmlc_task_id=str(ctx.partitionId()), **job.tracker_args):
            stamps.mark("join")
            dtrain = dmatrix(train.X, train.y, qid=train.qid, weight=train.weight, doc=train.doc)
            evals = []
            if measure is not None:
                dvalid = (dmatrix(valid.X, valid.y, qid=valid.qid, weight=valid.weight) if valid.n_rows
                          else xgb.DMatrix(np.zeros((0, train.X.shape[1])), label=np.zeros(0)))
                evals = [(dvalid, "validation")]
            stamps.mark("build")
            booster = xgb.train(job.params, dtrain, job.num_boost_round, obj=obj, evals=evals, custom_metric=measure,
                                verbose_eval=False, early_stopping_rounds=job.early_stopping_rounds,
                                maximize=None if measure is None else measure.spec.higher_is_better)
            stamps.mark("train")
        model = bytes(booster.save_raw(raw_format="ubj")) if ctx.partitionId() == 0 else None
        ctx.barrier()
        stamps.mark("return")
        yield pd.DataFrame({"model": [model], "stages": [stamps.to_json()]})

    return run


def load(payload: bytes) -> "xgb.Booster":
    """The booster from the model the first task sent back."""
    import xgboost as xgb

    booster = xgb.Booster()
    booster.load_model(bytearray(payload))
    return booster
