"""What every barrier task of one training run needs, for the driver's side
(:mod:`~boostplug.spark.training`) and each framework's task (:mod:`~boostplug.spark.xgb_train`,
:mod:`~boostplug.spark.lgb_train`) alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..frameworks._bound_objective import ShippedEntry
from ..frameworks._metric_spec import MetricSpec
from ..frameworks.distributed.rows import Part
from ._barrier import Columns

__all__ = ["Job"]


@dataclass(frozen=True)
class Job:
    """What every barrier task of one training run needs (it travels pickled with the task)."""

    cols: Columns
    shipped: ShippedEntry  # the objective's entry, built on the executors (a user's may not be registered there)
    objective_params: dict[str, Any]
    params: dict[str, Any]
    num_boost_round: int
    metric: MetricSpec | None
    early_stopping_rounds: int | None
    n_workers: int
    tracker_args: dict[str, Any] | None
    #: Sparse vectors as CSR rows, else dense rows (:func:`~boostplug.spark._barrier.keeps_sparse`).
    sparse: bool

    def objective(self, factory: Any, part: Part) -> Any:
        """The framework's objective callable for a worker's training rows ``part``, built on the
        executor from the shipped entry (row-set parameters from the part's columns)."""
        return factory(self.shipped.entry(), **self.objective_params, **part.row_sets)

