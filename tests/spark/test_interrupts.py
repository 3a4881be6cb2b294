"""A Spark training interrupted in its driver (a notebook's KeyboardInterrupt while the barrier tasks
train) cancels its job: every task's Python worker stops within seconds, the driver keeps no
XGBoost tracker thread or listening port, and the next training finds the task slots free."""

from __future__ import annotations

import time

import pytest

from tests._interrupts import counts_once_still, interrupt_at_round, listening_ports, tracker_threads
from tests._objectives import CountsRounds
from tests.spark.conftest import frame

pytest.importorskip("pyspark")

from boostplug.spark import train  # noqa: E402

PARAMS = {"lightgbm": {"verbose": -1, "num_threads": 1, "num_leaves": 4}, "xgboost": {"max_depth": 2, "nthread": 1}}
#: The interrupted training's rounds and the seconds each takes at least: uninterrupted, 100 s.
ROUNDS, ROUND_S = 10_000, 0.01


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_an_interrupt_cancels_the_barrier_tasks_and_a_retry_runs(spark, ranking, tmp_path, framework: str) -> None:
    """After the interrupt, the tasks' round counts stop within seconds and Spark runs no job; the
    retry starts new Python workers (Spark killed the old ones), so its time is not the warm
    one's: it must end well before the interrupted training would have."""
    df = frame(spark, ranking)
    ports, threads = listening_ports(), set(tracker_threads())  # an earlier test's may still run
    with pytest.raises(KeyboardInterrupt), interrupt_at_round(tmp_path):
        train(df, CountsRounds, framework=framework, objective_params={"progress_dir": str(tmp_path),
                                                                        "round_s": ROUND_S},
              params=PARAMS[framework], num_boost_round=ROUNDS, num_workers=2)
    counts = counts_once_still(tmp_path, within=15)
    assert len(counts) == 2 and max(counts.values()) < ROUNDS / 10, counts
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []
    assert set(tracker_threads()) - threads == set()
    assert listening_ports() == ports
    start = time.monotonic()
    train(df, CountsRounds, framework=framework, params=PARAMS[framework], num_boost_round=5, num_workers=2)
    assert time.monotonic() - start < ROUNDS * ROUND_S / 2
