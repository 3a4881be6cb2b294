"""Optuna's LightGBM tuners on a boostplug metric (boostplug/frameworks/lightgbm/tuner.py).

Optuna's own LightGBMTunerCV, given feval=bpl.metric(...) and metric "None", fails with
KeyError 'valid None-mean' (and would minimise NDCG); the tuners of boostplug.lightgbm optimise
the boostplug metric in its own direction, on folds that keep queries whole.
"""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from boostplug import lightgbm as bpl

optuna = pytest.importorskip("optuna")
pytest.importorskip("optuna_integration")
optuna.logging.set_verbosity(optuna.logging.WARNING)

N_Q, PER_Q = 24, 10


def _set(seed: int = 0, reference=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_Q * PER_Q, 4))
    y = np.clip(np.round(X[:, 0] + 0.7 * rng.normal(size=len(X)) + 1), 0, 3)
    return bpl.dataset(X, y, qid=np.repeat(np.arange(N_Q), PER_Q), reference=reference, free_raw_data=False)


PARAMS = {"objective": bpl.objective("qbrank"), "verbose": -1, "num_threads": 1, "min_data_in_leaf": 5}


def test_optunas_own_tuner_cannot_tune_on_a_boostplug_metric() -> None:
    from optuna_integration.lightgbm import LightGBMTunerCV

    train = _set()
    tuner = LightGBMTunerCV(dict(PARAMS, metric="None"), train, num_boost_round=3, folds=bpl.query_folds(train, 3),
                            feval=bpl.metric("ndcg@10"), show_progress_bar=False, optuna_seed=0)
    with pytest.raises(KeyError, match="None-mean"):
        tuner.tune_feature_fraction(n_trials=1)


@pytest.mark.parametrize("metric, direction", [("ndcg@10", "MAXIMIZE"), ("r1", "MINIMIZE")])
def test_tuner_cv_optimises_the_boostplug_metric_on_query_folds(metric: str, direction: str) -> None:
    train = _set()
    tuner = bpl.tuner_cv(PARAMS, train, 4, metric=metric, nfold=3, seed=1, show_progress_bar=False, optuna_seed=0)
    assert tuner.study.direction.name == direction
    tuner.tune_feature_fraction(n_trials=3)
    values = [t.value for t in tuner.study.trials]
    assert len(values) == 3 and all(np.isfinite(values))
    best = max(values) if direction == "MAXIMIZE" else min(values)
    assert tuner.best_score == best
    # The score is the boostplug metric of lgb.cv on the same query folds with the best parameters.
    params = {k: v for k, v in tuner.best_params.items()}
    again = lgb.cv(params, train, 4, folds=bpl.query_folds(train, 3, seed=1), feval=bpl.metric(metric))
    assert again[f"valid {metric}-mean"][-1] == pytest.approx(best, rel=1e-12)


def test_tuner_optimises_the_boostplug_metric_on_a_validation_set() -> None:
    train = _set()
    vali = _set(1, reference=train)
    tuner = bpl.tuner(PARAMS, train, 4, valid_sets=[vali], show_progress_bar=False, optuna_seed=0)
    assert tuner.study.direction.name == "MAXIMIZE"
    tuner.tune_num_leaves(n_trials=2)
    booster = tuner.get_best_booster()
    assert booster.best_score["valid_0"]["ndcg@10"] == pytest.approx(tuner.best_score, rel=1e-12)


def test_what_the_tuners_refuse() -> None:
    train = _set()
    with pytest.raises(ValueError, match=r"params\['metric'\] = 'ndcg'"):
        bpl.tuner_cv(dict(PARAMS, metric="ndcg"), train, 2)
    with pytest.raises(TypeError, match="sets 'folds' itself"):
        bpl.tuner_cv(PARAMS, train, 2, folds=bpl.query_folds(train, 3))
    with pytest.raises(TypeError, match="sets 'feval' itself"):
        bpl.tuner(PARAMS, train, 2, valid_sets=[train], feval=bpl.metric("ndcg@5"))
    with pytest.raises(TypeError, match="params must be a dict, got list"):
        bpl.tuner_cv([("objective", "lambdarank")], train, 2)
    with pytest.raises(ValueError, match="unknown metric|ndcg@x"):
        bpl.tuner_cv(PARAMS, train, 2, metric="ndcg@x")
