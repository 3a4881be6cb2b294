"""Objectives that fail on purpose in one worker of a distributed training (Spark's barrier task 0,
Dask's worker 0) at their third gradient, when the other worker is already exchanging histograms
with it. The executors and workers import them from this module."""

from __future__ import annotations

import numpy as np

from boostplug.objectives import Hessian, Loss, Param


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


class CountsRounds(_SquaredError):
    """Writes how many gradients it has computed (one a round) to a file of its own in
    ``progress_dir`` each round, sleeping ``round_s`` seconds, so that a test sees from outside
    whether a worker still trains."""

    name = "counts_rounds"
    summary = "writes its round count to a file each round (test objective)"
    params = {"progress_dir": Param(None, "custom", "folder of the count files", convert=str),
              "round_s": Param(0.0, "real", "seconds slept each round", low=0.0)}

    def _grad_hess(self, scores):
        import os
        import time

        self.calls = getattr(self, "calls", 0) + 1
        if self.progress_dir is None:
            return scores - self.labels, np.ones_like(scores)
        path = os.path.join(self.progress_dir, f"{os.getpid()}-{id(self)}")
        with open(path + ".tmp", "w") as f:
            f.write(str(self.calls))
        os.replace(path + ".tmp", path)
        time.sleep(self.round_s)
        return scores - self.labels, np.ones_like(scores)


def rounds_counted(progress_dir) -> dict:
    """Each count file of :class:`CountsRounds` in ``progress_dir``: its count."""
    import os

    out = {}
    for name in os.listdir(progress_dir):
        if not name.endswith(".tmp"):
            with open(os.path.join(progress_dir, name)) as f:
                out[name] = int(f.read() or 0)
    return out
