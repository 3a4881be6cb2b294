"""What a saved search holds pickles: make_scorer's scorer, metrics.by_name's metric,
objectives.get's entry, fitted rankers and a fitted GridSearchCV, through pickle and joblib,
and they work in a spawned process (which receives everything pickled)."""

from __future__ import annotations

import io
import multiprocessing
import pickle
from operator import methodcaller

import joblib
import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from boostplug import lightgbm as bpl
from boostplug import metrics, objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.groups import group_ptr_from_qid


def _pickled(obj):
    return pickle.loads(pickle.dumps(obj))


def _joblibbed(obj):
    buffer = io.BytesIO()
    joblib.dump(obj, buffer)
    buffer.seek(0)
    return joblib.load(buffer)


@pytest.fixture(scope="module")
def data():
    d = make_ranking(n_queries=18, docs_per_query=(5, 12), n_features=5, seed=11)
    return d.X, d.y, np.repeat(np.arange(100, 118), d.sizes)


def _rankers():
    return [bpl.LGBMRanker(objective="mpboost", ddf="ldd", n_estimators=6, num_leaves=5, min_child_samples=3,
                           n_jobs=1, verbose=-1),
            bpx.XGBRanker(objective="qbrank", n_estimators=6, max_depth=2, n_jobs=1)]


@pytest.mark.parametrize("round_trip", [_pickled, _joblibbed], ids=["pickle", "joblib"])
@pytest.mark.parametrize("name", ["ndcg@10", "map", "p@5", "mrr", "err@3", "dcg", "r1", "r2"])
def test_by_name_round_trips(name, round_trip, data):
    X, y, qid = data
    gp = group_ptr_from_qid(qid)
    fn, back = metrics.by_name(name), round_trip(metrics.by_name(name))
    assert back.__name__ == fn.__name__ == name
    assert back(X[:, 0], y, gp) == fn(X[:, 0], y, gp)
    np.testing.assert_array_equal(back(X[:, 0], y, qid=qid, per_query=True), fn(X[:, 0], y, gp, per_query=True))


@pytest.mark.parametrize("round_trip", [_pickled, _joblibbed], ids=["pickle", "joblib"])
def test_make_scorer_round_trips_with_its_conventions_and_requests(round_trip, data):
    X, y, qid = data
    model = _rankers()[0].fit(X, y, qid=qid)
    for scorer in (metrics.make_scorer("ndcg@5", empty=0.0, ties="average"), metrics.make_scorer("r2")):
        back = round_trip(scorer)
        assert repr(back) == repr(scorer)
        assert back(model, X, y, qid=qid) == scorer(model, X, y, qid=qid)
    renamed = metrics.make_scorer("map").set_score_request(sample_weight=False)
    back = round_trip(renamed)
    assert back.get_metadata_routing().score.requests == renamed.get_metadata_routing().score.requests
    assert back.get_metadata_routing().score.requests["sample_weight"] is False


@pytest.mark.parametrize("round_trip", [_pickled, _joblibbed], ids=["pickle", "joblib"])
@pytest.mark.parametrize("name", ["qbrank", "mpboost", "ndcg_boost", "rankboost"])
def test_objectives_get_round_trips(name, round_trip, data):
    _, y, qid = data
    entry = objectives.get(name)
    back = round_trip(entry)
    assert back == entry and back.fixed == entry.fixed and dict(back.methods) == dict(entry.methods)
    with pytest.raises(TypeError):
        back.fixed["ddf"] = "ldd"  # still read-only
    scores = np.linspace(-1, 1, y.shape[0])
    gp = group_ptr_from_qid(qid)
    for a, b in zip(back.grad_hess(scores, y, gp), entry.grad_hess(scores, y, gp)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("round_trip", [_pickled, _joblibbed], ids=["pickle", "joblib"])
def test_fitted_grid_search_round_trips(round_trip, data):
    X, y, qid = data
    for ranker in _rankers():
        search = GridSearchCV(ranker, {"learning_rate": [0.1, 0.3]}, cv=GroupKFold(3),
                              scoring=metrics.make_scorer("ndcg@10"), error_score="raise")
        with sklearn.config_context(enable_metadata_routing=True):
            search.fit(X, y, qid=qid, groups=qid)
        back = round_trip(search)
        np.testing.assert_array_equal(back.predict(X), search.predict(X))
        assert back.scorer_(back.best_estimator_, X, y, qid=qid) == search.scorer_(search.best_estimator_, X, y,
                                                                                   qid=qid)
        assert back.best_params_ == search.best_params_


def test_spawned_processes_and_joblib_workers_use_them(data):
    """A spawned process receives everything by pickle: the fitted search, its scorer, a metric
    by name and an objective entry work there as here; cross_validate with two loky workers
    scores as with one."""
    X, y, qid = data
    gp = group_ptr_from_qid(qid)
    search = GridSearchCV(_rankers()[0], {"learning_rate": [0.1, 0.3]}, cv=GroupKFold(3),
                          scoring=metrics.make_scorer("ndcg@10"), error_score="raise")
    with sklearn.config_context(enable_metadata_routing=True):
        search.fit(X, y, qid=qid, groups=qid)
        scored = [cross_validate(_rankers()[1], X, y, cv=GroupKFold(3), scoring=metrics.make_scorer("map"),
                                 params={"qid": qid, "groups": qid}, n_jobs=n_jobs)["test_score"]
                  for n_jobs in (1, 2)]
    np.testing.assert_array_equal(scored[0], scored[1])
    scores = np.linspace(-1, 1, y.shape[0])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        predicted = pool.apply(methodcaller("predict", X), (search,))
        score = pool.apply(search.scorer_, (search.best_estimator_, X, y), {"qid": qid})
        value = pool.apply(metrics.by_name("err@5"), (scores, y, gp))
        grad, hess = pool.apply(methodcaller("grad_hess", scores, y, gp), (objectives.get("rankboost"),))
    np.testing.assert_array_equal(predicted, search.predict(X))
    assert score == search.scorer_(search.best_estimator_, X, y, qid=qid)
    assert value == metrics.by_name("err@5")(scores, y, gp)
    want = objectives.get("rankboost").grad_hess(scores, y, gp)
    np.testing.assert_array_equal(grad, want[0])
    np.testing.assert_array_equal(hess, want[1])
