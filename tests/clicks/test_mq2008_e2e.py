"""End to end on MQ2008 Fold1: a production ranker (a single feature, noisy) shows its top 10,
position-biased noisy clicks are simulated on the training queries, Joachims et al.'s
preferences are extracted and QBRank trains on them with LightGBM through ``pairs=``. Its
test NDCG@10 on the true labels must beat a random ranker's (the exact expectation over
random orders) by a clear margin. Small and fast (seconds); skipped without the data."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from boostplug import clicks, metrics
from boostplug import lightgbm as bpl
from boostplug.data import load_letor_folds
from tests._helpers import MQ2008, need_data

pytestmark = pytest.mark.realdata


def test_qbrank_on_simulated_click_pairs_beats_random() -> None:
    train, _, test = load_letor_folds(need_data(MQ2008), "letor4", folds=[0])[0]
    rng = np.random.default_rng(0)
    production = train.X[:, 0] + rng.normal(scale=float(train.X[:, 0].std()), size=train.n_docs)
    log = clicks.simulate(train, production, 30_000, model="pbm", eta=1.0, eps_plus=1.0, eps_minus=0.1, seed=0)
    prefs = clicks.preferences(log)  # the default strategies: adjacent pairs both ways
    rows = clicks.to_rows(prefs, train.qid)
    ts = clicks.training_set(rows, train.X, train.group_ptr)
    assert len(ts.pairs) > 1000
    objective = bpl.objective("qbrank", **ts.qbrank_params(w=0.5))
    params = {"objective": objective, "learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20,
              "verbose": -1, "num_threads": 1, "deterministic": True, "seed": 0}
    booster = lgb.train(params, bpl.dataset(ts.X, ts.y, group_ptr=ts.group_ptr), num_boost_round=60)
    learned = metrics.ndcg(booster.predict(test.X), test.y, test.group_ptr, k=10)
    random = metrics.ndcg(np.zeros(test.n_docs), test.y, test.group_ptr, k=10, ties="average")
    assert learned > random + 0.05, (learned, random)
