"""The distributed workers' end of training (what Spark's validation runs): with early stopping the
model serves its best round on the validation rows when the rounds run out before the patience,
as ``lgb.early_stopping`` and XGBoost's early stopping do (one worker here, on its framework's
network and XGBoost's collective)."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import xgboost as bpx
from boostplug._core.early_stopping import BestRound
from boostplug.data import make_ranking
from boostplug.frameworks._metric_spec import MetricSpec
from boostplug.frameworks.distributed import lightgbm_worker, xgboost_worker
from boostplug.frameworks.distributed.rows import Part
from boostplug.metrics import ndcg

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def parts():
    train = make_ranking(n_queries=30, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=0)
    valid = make_ranking(n_queries=20, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=4)
    return Part(train.X, train.y, train.qid, None), Part(valid.X, valid.y, valid.qid, None), valid


def _best(booster_scores, valid) -> int:
    return BestRound.of([ndcg(s, valid.y, valid.group_ptr, k=10) for s in booster_scores], True).best


def test_the_lightgbm_worker_serves_the_best_round_when_the_rounds_run_out(parts) -> None:
    """On main its 40 trees were all kept (best_iteration 0) with patience 1000."""
    train, valid, data = parts
    params = {"verbose": -1, "num_threads": 1, "learning_rate": 0.5, "min_data_in_leaf": 2}
    with xgboost_worker.Tracker("127.0.0.1", 1) as tracker:
        host = "127.0.0.1"
        port = lightgbm_worker.free_port(host)
        text = lightgbm_worker.train_part(train, params, lightgbm_worker.objective("ranknet"), 40,
                                          machines=f"{host}:{port}", port=port, n_workers=1, valid=valid,
                                          metric=MetricSpec("ndcg@10"), early_stopping_rounds=1000,
                                          tracker_args=tracker.args)
        full = lightgbm_worker.train_part(train, params, lightgbm_worker.objective("ranknet"), 40,
                                          machines=f"{host}:{port}", port=port, n_workers=1)
    booster, every = lightgbm_worker.load(text), lightgbm_worker.load(full)
    best = _best([every.predict(valid.X, num_iteration=t, raw_score=True) for t in range(1, 41)], data)
    assert 0 < best < 40 and booster.num_trees() == best
    np.testing.assert_allclose(booster.predict(valid.X, raw_score=True),
                               every.predict(valid.X, num_iteration=best, raw_score=True), rtol=1e-12)


def test_the_xgboost_worker_marks_the_best_round_when_the_rounds_run_out(parts) -> None:
    train, valid, data = parts
    params = xgboost_worker.prepare_params({"nthread": 1, "eta": 0.5})
    with xgboost_worker.Tracker("127.0.0.1", 1) as tracker:
        payload = xgboost_worker.train_part(train, params, bpx.objective("ranknet"), 40, tracker_args=tracker.args,
                                            task_id="0", valid=valid, metric=MetricSpec("ndcg@10"),
                                            early_stopping_rounds=1000)
    booster = xgboost_worker.load(payload)
    import xgboost as xgb

    d = xgb.DMatrix(valid.X)
    best = _best([booster.predict(d, iteration_range=(0, t), output_margin=True) for t in range(1, 41)], data)
    assert booster.num_boosted_rounds() == 40 and booster.best_iteration == best - 1  # XGBoost's: every tree kept
