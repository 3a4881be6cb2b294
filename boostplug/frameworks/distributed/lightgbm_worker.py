"""One worker of LightGBM's own socket network (``machines``, ``local_listen_port``,
``num_machines``, ``tree_learner="data_parallel"``, ``pre_partition``), as ``lightgbm.dask`` joins
its workers: ``lgb.train`` with the boostplug objective on the worker's whole queries, and early
stopping on the metric of every worker's validation rows."""

from __future__ import annotations

import socket
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._core.early_stopping import BestRound
from ...groups import group_ptr_from_qid
from .._builders import builder_weights
from .._metric_spec import MetricSpec
from ..lightgbm.adapters import dataset, objective
from ..lightgbm.model_file import record_objective
from ..model_bytes import booster_from_bytes
from .failure import record_failure
from .metric import allreduce, from_sums
from .rows import Part
from .stamps import Stamps

if TYPE_CHECKING:  # pragma: no cover
    import lightgbm as lgb

    from .stop import StopFlag

__all__ = ["NETWORK_PARAMS", "free_port", "objective", "prepare_params", "uses_tracker", "train_part", "load",
           "record_objective"]

#: Parameters the distributed trainers set themselves (the network, and one model over every worker's rows).
NETWORK_PARAMS = ("objective", "machines", "local_listen_port", "num_machines", "tree_learner", "pre_partition")


#: Where :func:`free_port` looks first: below the system's ephemeral ports (Linux's default
#: 32768-60999), from this port up.
PORT_FLOOR = 10_000


def _ephemeral_range() -> tuple[int, int] | None:
    """The ports the system hands out to outgoing connections and to ``bind(0)`` (Linux), or ``None``."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(v) for v in f.read().split()[:2])
    except (OSError, ValueError):
        return None
    return lo, hi


def _binds(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def free_port(host: str) -> int:
    """A port nobody listens on at ``host`` now (LightGBM opens it right after).

    Taken below the system's ephemeral range where it can be read: a port from ``bind(0)`` lies in
    that range, and between this check and LightGBM's bind an outgoing connection of the cluster's
    own (Dask's, Spark's) could take it ("Binding port ... failed"). A random port of
    ``PORT_FLOOR`` up to the range's start that binds now, else one from ``bind(0)``."""
    import random

    span = _ephemeral_range()
    if span is not None and span[0] - PORT_FLOOR >= 1_000:
        rng = random.SystemRandom()
        for _ in range(64):
            port = rng.randrange(PORT_FLOOR, span[0])
            if _binds(host, port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, 0))
        return int(s.getsockname()[1])


def prepare_params(params: dict[str, Any]) -> dict[str, Any]:
    """LightGBM's parameters, quiet by default; the network and objective are refused (set here)."""
    clash = sorted(set(params) & set(NETWORK_PARAMS))
    if clash:
        raise ValueError(f"params {clash} are set by train_lightgbm (the objective and LightGBM's network); "
                         "leave them out")
    return {"verbose": -1, **params}


def uses_tracker(metric: MetricSpec | None) -> bool:
    """XGBoost's collective only adds up the early-stopping metric: needed with validation rows."""
    return metric is not None


class _EarlyStopping:
    """A LightGBM callback: the metric of the whole validation set each round (each worker's sums
    added up on XGBoost's collective, so every worker sees the same value and stops at the same
    round), early stopping on it (:class:`BestRound`). Each round adds only the new tree's scores."""

    order = 30

    def __init__(self, spec: MetricSpec, valid: Part, rounds: int | None) -> None:
        self.spec, self.valid = spec, valid
        self.gp = group_ptr_from_qid(valid.qid) if valid.n_rows else np.zeros(1, dtype=np.int64)
        # checked and reduced to one per query as the builders do (XGBoost's worker gets them through dmatrix)
        weights = builder_weights(valid.weight, self.gp, "LightGBM", per_query=True) if valid.n_rows else None
        # what the metric reads besides the scores depends on the set only: prepared once
        self.prepared = (spec.prepare(np.asarray(valid.y, dtype=np.float64).reshape(-1), self.gp, weights)
                         if valid.n_rows else None)
        self.scores = np.zeros(valid.n_rows)
        self.rule = BestRound(rounds, spec.higher_is_better)

    def __call__(self, env: Any) -> None:
        import lightgbm as lgb

        if self.valid.n_rows:
            # One thread: OpenMP threads left spinning after a parallel predict starve the other workers.
            self.scores += env.model.predict(self.valid.X, start_iteration=env.iteration, num_iteration=1,
                                             raw_score=True, num_threads=1)
        local = np.zeros(2) if self.prepared is None else self.spec.sums(self.scores, self.prepared)
        stop = self.rule.update(from_sums(allreduce(local)))  # the best round served (-1, all NaN: every tree)
        if stop or (self.rule.patience is not None and env.iteration == env.end_iteration - 1):  # lgb.early_stopping's
            raise lgb.callback.EarlyStopException(self.rule.best - 1, [("validation", self.spec.display_name,
                                                                    self.rule.value, self.spec.higher_is_better)])


def train_part(train: Part, params: dict[str, Any], objective: Any, num_boost_round: int, *, machines: str,
               port: int, n_workers: int, valid: Part | None = None, metric: MetricSpec | None = None,
               early_stopping_rounds: int | None = None, tracker_args: dict[str, Any] | None = None,
               task_id: str = "0", stamps: Stamps | None = None, stop: StopFlag | None = None) -> str:
    """Train on this worker's rows as one of ``n_workers`` machines listening at ``machines``
    (this one on ``port``); the model text, the same on every worker. With ``metric``, the
    workers also join XGBoost's collective (``tracker_args``) to add up the validation metric.
    ``stamps`` marks the ends of ``build`` and ``train``. ``stop``: the training's flag, checked
    before each round. The network is freed however the training ends; when it fails here (the
    objective raised), with a reset, so that the other workers fail at once instead of waiting
    for this one for ever (:meth:`~.stop.LightGBMStop.free`), and the error is kept for the
    driver (:func:`~.failure.record_failure`)."""
    import lightgbm as lgb

    from .stop import LightGBMStop, StopFlag

    stamps = stamps if stamps is not None else Stamps()
    stop = stop if stop is not None else StopFlag()
    stop.check()
    network = LightGBMStop(stop)
    run_params = {**params, "objective": objective, "machines": machines, "local_listen_port": port,
                  "num_machines": n_workers, "tree_learner": "data_parallel", "pre_partition": True}
    dtrain = dataset(train.X, train.y, qid=train.qid, weight=train.weight, doc=train.doc)
    stamps.mark("build")  # the Dataset itself is built inside lgb.train
    try:
        from xgboost import collective  # with a metric, the workers add it up on XGBoost's collective

        with nullcontext() if metric is None else collective.CommunicatorContext(dmlc_task_id=task_id, **tracker_args):
            ends = [] if metric is None else [_EarlyStopping(metric, valid, early_stopping_rounds)]
            booster = lgb.train(run_params, dtrain, num_boost_round, callbacks=[network, *ends])
        stamps.mark("train")
        return booster.model_to_string()
    except Exception as exc:
        network.free(reset=True)
        stop.check()  # the network broken by the stop's watchdog: TrainingStopped, not LightGBM's socket error
        record_failure(getattr(objective, "name", repr(objective)), exc)
        raise
    finally:
        network.free()


def load(payload: str) -> "lgb.Booster":
    """The booster from a worker's model text (checked before LightGBM parses it)."""
    return booster_from_bytes("lightgbm", payload.encode("utf-8"))
