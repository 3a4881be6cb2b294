"""The frameworks' metric callables prepare a set (checks, group offsets, query weights) once,
not every evaluation round, and give the values a fresh preparation gives."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.frameworks._metric_spec import MetricSpec


@pytest.fixture
def prepares(monkeypatch):
    calls = []
    prepare = MetricSpec.prepare

    def counted(self, *a, **k):
        calls.append(self.name)
        return prepare(self, *a, **k)

    monkeypatch.setattr(MetricSpec, "prepare", counted)
    return calls


def _data(seed=0):
    return make_ranking(n_queries=12, docs_per_query=(3, 8), n_features=4, n_informative=3, n_labels=3, seed=seed)


@pytest.mark.parametrize("weighting", ["query", "framework"])
def test_lightgbm_feval_prepares_each_set_once(prepares, weighting) -> None:
    d, v = _data(0), _data(1)
    w = np.repeat(np.linspace(0.5, 2, 12), np.diff(v.group_ptr))
    vali = bpl.dataset(v.X, v.y, group_ptr=v.group_ptr, weight=w)
    feval = bpl.metric("ndcg@5", weighting=weighting)
    log = {}
    lgb.train({"objective": "lambdarank", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 2, "metric": "None"},
              bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), 6, valid_sets=[vali], feval=feval,
              callbacks=[lgb.record_evaluation(log)])
    assert len(prepares) == 1
    scores = np.random.default_rng(0).normal(size=len(v.y))
    assert feval(scores, vali) == bpl.metric("ndcg@5", weighting=weighting)(scores, vali)  # a fresh preparation
    assert len(log["valid_0"]["ndcg@5"]) == 6


def test_a_set_whose_labels_changed_is_prepared_again(prepares) -> None:
    v = _data(1)
    feval = bpl.sklearn_metric("map")
    scores = np.arange(len(v.y), dtype=float)
    sizes = np.diff(v.group_ptr)
    first = feval(v.y, scores, None, sizes)
    assert feval(v.y, scores, None, sizes) == first and len(prepares) == 1
    y = v.y.copy()
    feval(y, scores, None, sizes)  # another array: prepared for it
    y[:] = (y + 1) % 3  # same array, other labels: prepared again
    assert feval(y, scores, None, sizes)[1] == MetricSpec("map")(scores, y, v.group_ptr)
    assert len(prepares) == 3
    with pytest.raises(ValueError):  # the label check still runs on a new set
        feval(np.full(len(y), np.inf), scores, None, sizes)


def test_xgboost_metric_prepares_each_set_once(prepares) -> None:
    d, v = _data(0), _data(1)
    dvali = bpx.dmatrix(v.X, v.y, group_ptr=v.group_ptr)
    metric = bpx.metric("ndcg@5")
    log = {}
    xgb.train({"objective": "rank:ndcg", "nthread": 1, "disable_default_eval_metric": 1},
              bpx.dmatrix(d.X, d.y, group_ptr=d.group_ptr), 5, evals=[(dvali, "vali")], custom_metric=metric,
              evals_result=log, verbose_eval=False)
    assert len(prepares) == 1 and len(log["vali"]["ndcg@5"]) == 5
    scores = np.random.default_rng(2).normal(size=len(v.y))
    assert metric(scores, dvali)[1] == MetricSpec("ndcg@5")(scores, v.y, v.group_ptr)
