"""The objective :func:`~.train.train_lightgbm` and :func:`~.train.train_xgboost` hand
``lightgbm.dask`` and ``xgboost.dask``, whose own code runs the training on each worker (nothing
of boostplug's runs around it there but the objective and the stop callback). On a worker it

* runs its kernels on the worker's thread count (``distributed``'s ``nthreads``, what both
  frameworks' Dask code trains with) unless a count was given to it;
* when a round raises, keeps the exception for the client
  (:func:`~..distributed.failure.record_failure`: the peers fail only with a lost connection) and
  ends this worker's LightGBM network at once (:func:`~..distributed.stop.end_running_network`:
  the training's ``LightGBMStop`` callback holds its Booster), so that its peers fail too
  instead of waiting for it."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._bound_objective import FROM_FRAMEWORK
from ..distributed.failure import record_failure
from ..distributed.stop import end_running_network
from ..lightgbm.adapters import LightGBMSklearnObjective
from ..xgboost.adapters import XGBoostObjective

__all__ = ["DaskLightGBMObjective", "DaskXGBoostObjective", "worker_threads"]


def worker_threads() -> int | None:
    """The thread count of the Dask worker running this task (``None`` outside a worker)."""
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):  # not in a worker
        return None


class _OnWorker:
    """What the two objectives below add to their framework's adapter."""

    name: str
    threads: Any

    def round_threads(self, handed: int | None = None) -> int | None:
        if self.threads is FROM_FRAMEWORK and handed is None:
            handed = worker_threads()
        return super().round_threads(handed)  # type: ignore[misc]

    def round_grad_hess(self, *args: Any, **kwargs: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        try:
            return super().round_grad_hess(*args, **kwargs)  # type: ignore[misc]
        except Exception as exc:
            record_failure(self.name, exc)
            raise


class DaskLightGBMObjective(_OnWorker, LightGBMSklearnObjective):
    """``sklearn_objective`` for ``lightgbm.dask.DaskLGBMRanker`` (which trains with each
    worker's thread count, whatever the ranker's ``n_jobs``)."""

    def round_grad_hess(self, *args: Any, **kwargs: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        try:
            return super().round_grad_hess(*args, **kwargs)
        except Exception:
            end_running_network()  # the LightGBMStop of this training saw its first round in this thread
            raise


class DaskXGBoostObjective(_OnWorker, XGBoostObjective):
    """``objective`` for ``xgboost.dask.train`` (which trains with the ``nthread`` of its
    parameters, else each worker's thread count)."""
