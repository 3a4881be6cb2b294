"""Objectives that fail on purpose in one worker of a distributed training (Spark's barrier task 0,
Dask's worker 0) at their third gradient, when the other worker is already exchanging histograms
with it. The executors and workers import them from this module."""

from __future__ import annotations

import numpy as np

from boostplug.objectives import Hessian, Loss


class _SquaredError(Loss):
    """0.5 * sum (s_i - y_i)^2, counting its gradient calls; :meth:`_third_call` is what it does at the third."""

    params: dict = {}
    hessians = {"exact": Hessian("exact", "W_q")}

    def _loss(self, scores):
        r = scores - self.labels
        return 0.5 * float(r @ r)

    def _grad_hess(self, scores):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls == 3:
            self._third_call()
        return scores - self.labels, np.ones_like(scores)

    def _third_call(self) -> None:
        raise NotImplementedError


class FailsOnSparkTaskZero(_SquaredError):
    name = "fails_on_spark_task_zero"
    summary = "raises on Spark barrier task 0 (test objective)"

    def _third_call(self) -> None:
        from pyspark import BarrierTaskContext

        if BarrierTaskContext.get().partitionId() == 0:
            raise RuntimeError("the objective failed on purpose on task 0")


class KillsDaskWorkerZero(_SquaredError):
    name = "kills_dask_worker_zero"
    summary = "kills Dask worker 0's process (test objective)"

    def _third_call(self) -> None:
        import os
        import signal

        from distributed import get_worker

        if get_worker().name == 0:
            os.kill(os.getpid(), signal.SIGKILL)


def register(loss_class: type) -> None:
    """Register ``loss_class`` here unless it is (what ``client.run`` does on each Dask worker too)."""
    from boostplug import objectives

    if loss_class.name not in objectives.names():
        objectives.register(loss_class)
