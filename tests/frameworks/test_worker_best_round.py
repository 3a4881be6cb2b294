"""The distributed workers' end of training (what Spark's validation runs): with early stopping the
model serves its best round on the validation rows when the rounds run out before the patience,
as ``lgb.early_stopping`` and XGBoost's early stopping do, and a NaN round is never the best
(BestRound's rule; one worker here, on its framework's network and XGBoost's collective)."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import xgboost as bpx
from boostplug.data import load_example
from boostplug.frameworks._metric_spec import MetricSpec
from boostplug.frameworks.distributed import lightgbm_worker, xgboost_worker
from boostplug.frameworks.distributed.rows import Part
from boostplug.metrics import ndcg

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def parts():
    train, valid = load_example()
    return Part(train.X, train.y, train.qid, None), Part(valid.X, valid.y, valid.qid, None), valid


def _best(booster_scores, valid, first: int = 0, patience: int | None = None) -> int:
    """The best round (from 1) early stopping finds on the NDCG@10 curve by brute force: the first
    maximum from round ``first + 1`` on, the curve cut ``patience`` rounds after one."""
    curve = [ndcg(s, valid.y, valid.group_ptr, k=10) for s in booster_scores]
    best = first
    for i in range(first, len(curve)):
        best = i if curve[i] > curve[best] else best
        if patience is not None and i - best >= patience:
            break
    return best + 1


def _lightgbm(train, valid, rounds, patience=None):
    params = {"verbose": -1, "num_threads": 1, "learning_rate": 0.1}
    host = "127.0.0.1"
    port = lightgbm_worker.free_port(host)
    with xgboost_worker.Tracker(host, 1) as tracker:
        return lightgbm_worker.load(lightgbm_worker.train_part(
            train, params, lightgbm_worker.objective("ranknet"), rounds, machines=f"{host}:{port}", port=port,
            n_workers=1, valid=valid, metric=MetricSpec("ndcg@10"), early_stopping_rounds=patience,
            tracker_args=tracker.args))


def _xgboost(train, valid, rounds, patience):
    with xgboost_worker.Tracker("127.0.0.1", 1) as tracker:
        return xgboost_worker.load(xgboost_worker.train_part(
            train, xgboost_worker.prepare_params({"nthread": 1, "eta": 0.1}), bpx.objective("ranknet"), rounds,
            tracker_args=tracker.args, task_id="0", valid=valid, metric=MetricSpec("ndcg@10"),
            early_stopping_rounds=patience))


def _xgboost_curve(booster, valid, rounds):
    import xgboost as xgb

    d = xgb.DMatrix(valid.X)
    return [booster.predict(d, iteration_range=(0, t), output_margin=True) for t in range(1, rounds + 1)]


def test_the_lightgbm_worker_serves_the_best_round_when_the_rounds_run_out(parts) -> None:
    """On main its 40 trees were all kept (best_iteration 0) with patience 1000."""
    train, valid, data = parts
    booster, every = _lightgbm(train, valid, 40, patience=1000), _lightgbm(train, valid, 40)
    best = _best([every.predict(valid.X, num_iteration=t, raw_score=True) for t in range(1, 41)], data)
    assert 1 < best < 40 and every.num_trees() == 40 and booster.num_trees() == best
    np.testing.assert_allclose(booster.predict(valid.X, raw_score=True),
                               every.predict(valid.X, num_iteration=best, raw_score=True), rtol=1e-12)


def test_the_xgboost_worker_marks_the_best_round_when_the_rounds_run_out(parts) -> None:
    train, valid, data = parts
    booster = _xgboost(train, valid, 40, 1000)
    best = _best(_xgboost_curve(booster, valid, 40), data)
    # XGBoost's way: every tree kept, the best round marked
    assert 1 < best < 40 and booster.num_boosted_rounds() == 40 and booster.best_iteration == best - 1


@pytest.mark.parametrize("worker", ["lightgbm", "xgboost"])
def test_a_nan_first_round_is_never_the_workers_best(monkeypatch, parts, worker) -> None:
    """The validation metric NaN in round 1 (no query counted, say): on main the XGBoost worker ran
    XGBoost's own rule, which took that round as the best and stopped 3 rounds later on round 1."""
    train, valid, data = parts
    module = lightgbm_worker if worker == "lightgbm" else xgboost_worker
    real, calls = module.from_sums, []
    monkeypatch.setattr(module, "from_sums", lambda sums: calls.append(1) or (np.nan if len(calls) == 1
                                                                             else real(sums)))
    if worker == "lightgbm":
        booster = _lightgbm(train, valid, 30, patience=3)
        monkeypatch.setattr(module, "from_sums", real)
        every = _lightgbm(train, valid, 30)
        best, served = _best([every.predict(valid.X, num_iteration=t, raw_score=True) for t in range(1, 31)],
                             data, first=1, patience=3), booster.num_trees()
    else:
        booster = _xgboost(train, valid, 30, 3)
        curve = _xgboost_curve(booster, valid, booster.num_boosted_rounds())
        best, served = _best(curve, data, first=1, patience=3), booster.best_iteration + 1
    assert served == best > 1
