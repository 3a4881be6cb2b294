"""The objective :func:`~.train.train_lightgbm` and :func:`~.train.train_xgboost` hand
``lightgbm.dask`` and ``xgboost.dask``, whose own code runs the training on each worker (nothing
of boostplug's runs around it there but the objective and the stop callback). On a worker,
when a round raises, it keeps the exception for the client
(:func:`~..distributed.failure.record_failure`: the peers fail only with a lost connection) and
ends this worker's LightGBM network at once (:func:`~..distributed.stop.end_running_network`:
the training's ``LightGBMStop`` callback holds its Booster), so that its peers fail too
instead of waiting for it."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..distributed.failure import record_failure
from ..distributed.stop import end_running_network
from ..lightgbm.adapters import LightGBMSklearnObjective
from ..xgboost.adapters import XGBoostObjective

__all__ = ["DaskLightGBMObjective", "DaskXGBoostObjective"]


class _OnWorker:
    """What the two objectives below add to their framework's adapter."""

    name: str

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
