"""Stopping a distributed training's workers from its driver. A driver interrupted (a notebook's
KeyboardInterrupt) or failing stops waiting for its workers, but a worker's training loop runs in
the framework's C++ code and nothing reaches it: it would train to its last round, holding its
threads, ports and network. Each training gets a :class:`StopFlag`; the driver sets it in every
worker process (Dask: ``client.run``), and a callback the worker's framework calls before each
round raises :class:`TrainingStopped` once it is set. (Spark's barrier tasks need none: Spark
kills the Python workers of a cancelled job.)"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from typing import Any

import xgboost as xgb

__all__ = ["TrainingStopped", "StopFlag", "XGBoostStop", "LightGBMStop"]

#: The flags set in this process (the last ones: a flag can arrive after its training ended).
_SET: "OrderedDict[str, None]" = OrderedDict()
_KEEP = 1024
_LOCK = threading.Lock()


class TrainingStopped(RuntimeError):
    """A worker's training stopped because its driver asked (interrupted, or failed)."""


class StopFlag:
    """One training's stop flag, by a token that travels to the workers with their tasks."""

    def __init__(self, token: str | None = None) -> None:
        self.token = uuid.uuid4().hex if token is None else token
        #: Whether the driver has set it in the workers (the driver's to know: it does not travel).
        self.sent = False

    def __reduce__(self) -> tuple[Any, ...]:
        return StopFlag, (self.token,)

    def set_here(self) -> None:
        """Set the flag in this process (what the driver runs in each worker's)."""
        with _LOCK:
            _SET[self.token] = None
            while len(_SET) > _KEEP:
                _SET.popitem(last=False)

    def is_set(self) -> bool:
        return self.token in _SET

    def check(self) -> None:
        """Raise :class:`TrainingStopped` when the flag is set in this process."""
        if self.token in _SET:
            raise TrainingStopped("the training was stopped by its driver (interrupted, or failed elsewhere)")


class XGBoostStop(xgb.callback.TrainingCallback):
    """An XGBoost training callback: :meth:`StopFlag.check` before each round."""

    def __init__(self, flag: StopFlag) -> None:
        super().__init__()
        self.flag = flag

    def before_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
        self.flag.check()
        return False


class LightGBMStop:
    """A LightGBM callback run before each round: :meth:`StopFlag.check`, first freeing the
    booster's network (its sockets and listening port, which the other workers then see closed;
    the booster left inside ``lgb.train`` would keep them until it is garbage). ``booster``: the
    booster trained, once the first round began (to free its network after any failure)."""

    order = 0
    before_iteration = True

    def __init__(self, flag: StopFlag) -> None:
        self.flag = flag
        self.booster: Any = None

    def __call__(self, env: Any) -> None:
        self.booster = env.model
        if self.flag.is_set():
            env.model.free_network()
            self.flag.check()

    def __getstate__(self) -> dict[str, Any]:
        return {"flag": self.flag, "booster": None}
