"""Spark trains an objective that was never registered: its class travels to the executors with the
task, which build the objective from it (the driver's and the executors' registries stay as they were)."""

from __future__ import annotations

import lightgbm as lgb

from boostplug import lightgbm as bpl
from boostplug import metrics, objectives
from boostplug.data import make_ranking
from boostplug.objectives import Param
from boostplug.objectives.pairwise import LOGISTIC
from boostplug.objectives.pairwise import PairwiseLoss
from boostplug.spark import train_lightgbm
from tests.spark.conftest import frame

PARAMS = {"num_leaves": 7, "learning_rate": 0.2, "min_data_in_leaf": 5, "num_threads": 1, "verbose": -1}


class SparkUnlisted(PairwiseLoss):
    """RankNet's logistic pair loss, never registered (module level: the executors import it)."""

    name = "test_spark_unlisted"
    summary = "RankNet, unregistered (test objective)"
    params = {"sigma": Param(1.0, "real", "slope", low=0.0, low_open=True)}
    pair_loss, pair_grad, pair_hess = LOGISTIC


def test_an_unregistered_class_trains_on_two_workers(spark, ranking):
    instance = SparkUnlisted(ranking.y, ranking.group_ptr, sigma=2.0)   # its settings are the parameters
    booster = train_lightgbm(frame(spark, ranking), instance, params=PARAMS, num_boost_round=5, num_workers=2)
    ref = lgb.train({**PARAMS, "objective": bpl.objective(SparkUnlisted, sigma=2.0)},
                    bpl.dataset(ranking.X, ranking.y, qid=ranking.qid), 5)
    assert booster.num_trees() == 5 and SparkUnlisted.name not in objectives.names()
    record = bpl.objective_of(booster)
    assert record.name == SparkUnlisted.name and record.params["sigma"] == 2.0
    assert record.loss_class == "tests.spark.test_unregistered.SparkUnlisted"
    # the same objective as on one machine (test_lightgbm.py's check: two workers train a model of
    # the same quality, not the same model)
    test = make_ranking(n_queries=40, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=5)
    ndcg = metrics.ndcg(booster.predict(test.X), test.y, test.group_ptr, k=10)
    assert abs(ndcg - metrics.ndcg(ref.predict(test.X), test.y, test.group_ptr, k=10)) < 0.02


def test_a_registered_class_only_the_driver_can_import_trains_by_name(spark, ranking, tmp_path, monkeypatch):
    """Registered in the driver from a module the executors cannot import (its folder joins the
    driver's path only now): the class travels by value, and the executors train with it."""
    from tests.frameworks.test_shipped_objective import MODULE

    (tmp_path / "i45c_spark_driver_only.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    from i45c_spark_driver_only import DriverOnly

    objectives.register(DriverOnly)
    try:
        booster = train_lightgbm(frame(spark, ranking), DriverOnly.name, objective_params={"margin": 0.5},
                                 params=PARAMS, num_boost_round=3, num_workers=2)
    finally:
        objectives.unregister(DriverOnly.name)
    assert booster.num_trees() == 3
    record = bpl.objective_of(booster)
    assert record.name == DriverOnly.name and record.params["margin"] == 0.5
