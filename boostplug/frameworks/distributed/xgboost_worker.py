"""One worker of XGBoost's own collective (a tracker the driver or client starts): the worker
builds its ``DMatrix`` from its whole queries and runs ``xgb.train`` with the boostplug
objective, as ``xgboost.spark`` and ``xgboost.dask`` do inside for built-in objectives."""

from __future__ import annotations

import threading
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._core.early_stopping import BestRound
from .._metric_spec import MetricCallable, MetricSpec
from .._query_info import metric_query_weights
from ..model_bytes import booster_bytes, booster_from_bytes
from ..xgboost.adapters import XGBoostObjective, dmatrix, objective, params_threads
from ..xgboost.adapters import params as xgb_params
from ..xgboost.model_file import record_objective
from .failure import record_failure
from .metric import allreduce, from_sums
from .rows import Part
from .stamps import Stamps

if TYPE_CHECKING:  # pragma: no cover
    import xgboost as xgb

    from .stop import StopFlag

__all__ = ["CollectiveMetric", "Tracker", "TRACKER_GRACE_S", "objective", "prepare_params", "uses_tracker",
           "train_part", "load", "record_objective"]


def prepare_params(params: dict[str, Any]) -> dict[str, Any]:
    """Booster parameters over :func:`boostplug.xgboost.params`."""
    return xgb_params(**params)


def uses_tracker(metric: MetricSpec | None) -> bool:
    """The workers always join XGBoost's collective (it reduces their histograms)."""
    return True


class CollectiveMetric(MetricCallable):
    """``custom_metric`` for a distributed ``xgb.train``: each worker evaluates its own whole
    queries, and one allreduce sums ``(sum_q w_q m_q, sum_q w_q)`` over workers, so every worker
    sees the metric of the whole validation set (the same value, hence the same early-stopping
    decision). Queries a convention skips (NaN) are left out of both sums, as in one process."""

    def __call__(self, predt: np.ndarray, dmat: Any) -> tuple[str, float]:
        labels, weights = dmat.get_label(), dmat.get_weight()
        if labels.shape[0] == 0:  # a worker without validation rows adds nothing
            return self.spec.display_name, from_sums(allreduce(np.zeros(2)))
        raw_ptr = dmat.get_uint_info("group_ptr")

        def derive() -> tuple[Any, ...]:
            gp = np.asarray(raw_ptr, dtype=np.int64)
            return self.spec.prepare(np.asarray(labels, dtype=np.float64), gp,
                                     metric_query_weights(weights, gp, "XGBoost"))

        # the set's labels, groups and weights are prepared once, not every round
        prepared = self.prepared(dmat, (labels, raw_ptr, weights), derive)
        return self.spec.display_name, from_sums(allreduce(self.spec.sums(predt, prepared)))


class Tracker:
    """XGBoost's tracker in this process (reachable at ``host``), for ``n_workers`` workers;
    ``args``: the arguments with which each worker joins XGBoost's collective
    (``xgboost.collective.CommunicatorContext``). A context manager: :meth:`close` on leaving,
    however the training ended (else its thread and listening port would live as long as the
    process, and a worker waiting to join would wait for the missing ones)."""

    def __init__(self, host: str, n_workers: int) -> None:
        from xgboost.tracker import RabitTracker

        self._tracker = RabitTracker(n_workers=n_workers, host_ip=host, sortby="task")
        self._tracker.start()
        self.args: dict[str, Any] = {**self._tracker.worker_args(), "n_workers": n_workers}
        self._thread = threading.Thread(target=self._wait, name=f"boostplug-xgboost-tracker-{self.port}", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.args["dmlc_tracker_port"])

    def _wait(self) -> None:
        import xgboost as xgb

        with suppress(xgb.core.XGBoostError):  # stopped by close() before every worker left: the workers report why
            self._tracker.wait_for()

    def close(self, grace: float = 0.0) -> None:
        """Stop the tracker (its thread and port) once every worker has left the collective, or
        ``grace`` seconds have passed (a worker killed never leaves it)."""
        import xgboost as xgb

        self._thread.join(grace)
        # the tracker's error: a worker did not leave (the training's error says why)
        with suppress(xgb.core.XGBoostError):
            self._tracker.free()
        self._thread.join(TRACKER_GRACE_S)

    def __enter__(self) -> "Tracker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(grace=0.0 if exc[0] is not None else TRACKER_GRACE_S)


#: After a training that succeeded, how long the tracker may take to see every worker leave.
TRACKER_GRACE_S = 10.0


def _best_round(patience: int, spec: MetricSpec) -> "xgb.callback.TrainingCallback":
    """XGBoost's early stopping on ``spec`` by :class:`BestRound` (NaN never best), every tree kept."""
    import xgboost as xgb

    rule = BestRound(patience, spec.higher_is_better)

    class Stop(xgb.callback.TrainingCallback):
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            stop = rule.update(evals_log["validation"][spec.display_name][-1])
            if rule.best == rule.rounds:
                model.set_attr(best_iteration=str(epoch), best_score=str(rule.value))  # as XGBoost's own
            return stop

    return Stop()


def train_part(train: Part, params: dict[str, Any], obj: Any, num_boost_round: int, *,
               tracker_args: dict[str, Any], task_id: str, valid: Part | None = None,
               metric: MetricSpec | None = None, early_stopping_rounds: int | None = None,
               stamps: Stamps | None = None, stop: StopFlag | None = None) -> bytes:
    """Train on this worker's rows as task ``task_id`` of XGBoost's collective; the model as UBJSON
    (the same on every worker). ``stamps`` marks the ends of ``join``, ``build`` and ``train``.
    ``stop``: the training's flag, checked before joining and before each round. An error is kept
    for the driver (:func:`~.failure.record_failure`)."""
    import xgboost as xgb
    from xgboost import collective

    from .stop import XGBoostStop

    stamps = stamps if stamps is not None else Stamps()
    if stop is not None:
        stop.check()
    measure = None if metric is None else CollectiveMetric(metric.name, metric.display_name, metric.weighting)
    try:
        with collective.CommunicatorContext(dmlc_task_id=task_id, **tracker_args):
            stamps.mark("join")
            dtrain = dmatrix(train.X, train.y, qid=train.qid, weight=train.weight, doc=train.doc)
            evals = []
            if measure is not None:
                dvalid = (dmatrix(valid.X, valid.y, qid=valid.qid, weight=valid.weight)
                          if valid is not None and valid.n_rows
                          else xgb.DMatrix(np.zeros((0, train.X.shape[1])), label=np.zeros(0)))
                evals = [(dvalid, "validation")]
            stamps.mark("build")
            if isinstance(obj, XGBoostObjective):  # this worker's count is in params
                obj = obj.given_threads(params_threads(params)).given_training(params)
            ends = [] if early_stopping_rounds is None else [_best_round(early_stopping_rounds, metric)]
            booster = xgb.train(params, dtrain, num_boost_round, obj=obj, evals=evals, custom_metric=measure,
                                verbose_eval=False, callbacks=ends + ([] if stop is None else [XGBoostStop(stop)]))
    except Exception as exc:
        record_failure(getattr(obj, "name", repr(obj)), exc)
        raise
    stamps.mark("train")
    return booster_bytes(booster)[1]


def load(payload: bytes) -> "xgb.Booster":
    """The booster from a worker's UBJSON model."""
    return booster_from_bytes("xgboost", payload)
