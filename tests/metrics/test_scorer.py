"""boostplug.metrics.make_scorer: a ranking scorer for GridSearchCV / cross_validate that gets
``qid`` (and per-query ``sample_weight``) through scikit-learn's metadata routing."""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest

import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

import boostplug.lightgbm as bpl
import boostplug.xgboost as bpx
from boostplug import metrics as M
from boostplug.pairs import count_critical_pairs
from boostplug.boosters import AdaRank, RankBoost
from boostplug.data import load_example

N_QUERIES = 45


@pytest.fixture(scope="module")
def data():
    """The first queries of the embedded example: X, y, qid (contiguous, unsorted ids)."""
    train, _ = load_example()
    g = train.group_ptr
    n = int(g[N_QUERIES])
    qid = np.repeat(1000 - np.arange(N_QUERIES), np.diff(g[:N_QUERIES + 1]))  # descending ids
    return train.X[:n], train.y[:n], qid


@pytest.fixture()
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _fold_values(result, X, y, qid, fn):
    return [fn(est.predict(X[te]), y[te], qid[te])
            for est, te in zip(result["estimator"], result["indices"]["test"])]


def test_cross_validate_routes_qid_to_the_scorer(data, routing):
    X, y, qid = data
    r = cross_validate(AdaRank(n_rounds=4, tolerance=None), X, y, cv=GroupKFold(3),
                       scoring={"ndcg": M.make_scorer("ndcg@10", empty=0.0), "r2": M.make_scorer("r2")},
                       params={"qid": qid, "groups": qid}, error_score="raise",
                       return_estimator=True, return_indices=True)
    want = _fold_values(r, X, y, qid, lambda s, yy, q: M.ndcg(s, yy, qid=q, k=10, empty=0.0))
    np.testing.assert_allclose(r["test_ndcg"], want, rtol=0, atol=1e-12)
    want_r2 = _fold_values(r, X, y, qid, lambda s, yy, q: M.rank_loss(s, yy, qid=q))
    np.testing.assert_allclose(r["test_r2"], -np.asarray(want_r2), rtol=0, atol=1e-12)  # negated loss
    assert all(0.0 < v < 1.0 for v in want) and all(v < 0.0 for v in r["test_r2"])


def test_grid_search_over_a_booster_parameter(data, routing):
    X, y, qid = data
    scorer = M.make_scorer("ndcg@10")
    search = GridSearchCV(RankBoost(n_rounds=2), {"n_rounds": [1, 4]}, cv=GroupKFold(3), scoring=scorer,
                          error_score="raise")
    search.fit(X, y, groups=qid, qid=qid)
    assert search.best_params_["n_rounds"] in (1, 4)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    # the reported score is the scorer's, which is the metric over the fold's queries
    assert search.score(X, y, qid=qid) == pytest.approx(M.ndcg(search.predict(X), y, qid=qid, k=10))


def test_without_routing_the_scorer_says_to_enable_it(data):
    X, y, qid = data
    assert not sklearn.get_config()["enable_metadata_routing"]
    search = GridSearchCV(AdaRank(n_rounds=2), {"n_rounds": [1, 2]}, cv=GroupKFold(2),
                          scoring=M.make_scorer("ndcg@10"), error_score="raise")
    with pytest.raises(ValueError, match=r"enable_metadata_routing=True.*one query would be wrong"):
        search.fit(X, y, groups=qid, qid=qid)
    # scikit-learn's default error_score turns it into a warning carrying the message, and NaN
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = cross_validate(AdaRank(n_rounds=2), X, y, groups=qid, cv=GroupKFold(2),
                           scoring=M.make_scorer("ndcg@10"), params={"qid": qid})
    assert np.all(np.isnan(r["test_score"]))
    assert any("enable_metadata_routing=True" in str(w.message) for w in caught)


def test_direct_call_on_lightgbm_ranker_with_a_boostplug_objective(data):
    X, y, qid = data
    sizes = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    model = lgb.LGBMRanker(objective=bpl.sklearn_objective("ndcg_boost"), n_estimators=5, num_leaves=7,
                           verbose=-1, random_state=0).fit(X, y, group=sizes)
    scorer = M.make_scorer("ndcg@5", ties="average")
    got = scorer(model, X, y, qid=qid)
    assert got == pytest.approx(M.ndcg(model.predict(X), y, qid=qid, k=5, ties="average"))
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        scorer(model, X, y)
    with sklearn.config_context(enable_metadata_routing=True), pytest.raises(ValueError, match="got no qid"):
        scorer(model, X, y)


def _framework_rankers():
    out = []
    for module, cls in ((bpl, "LGBMRanker"), (bpx, "XGBRanker")):
        est = getattr(module, cls, None)
        out.append(pytest.param(est, id=f"{module.__name__}.{cls}",
                                marks=pytest.mark.skipif(est is None, reason=f"{module.__name__}.{cls} not there")))
    return out


@pytest.mark.parametrize("ranker", _framework_rankers())
def test_grid_search_over_a_framework_ranker(ranker, data, routing):
    X, y, qid = data
    est = ranker(objective="ndcg_boost", n_estimators=3, random_state=0)
    if hasattr(est, "set_fit_request"):
        est.set_fit_request(qid=True)
    search = GridSearchCV(est, {"n_estimators": [2, 4]}, cv=GroupKFold(2), scoring=M.make_scorer("ndcg@10"),
                          error_score="raise").fit(X, y, groups=qid, qid=qid)
    assert 0.0 < search.best_score_ <= 1.0


def test_sample_weight_weights_queries(data, routing):
    X, y, qid = data
    model = AdaRank(n_rounds=2).fit(X, y, qid=qid)
    per_query = M.ndcg(model.predict(X), y, qid=qid, k=10, per_query=True)
    n_q = per_query.shape[0]
    wq = np.arange(1, n_q + 1, dtype=np.float64)
    rows = np.repeat(wq, np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])))
    scorer = M.make_scorer("ndcg@10")
    assert scorer(model, X, y, qid=qid, sample_weight=rows) == pytest.approx(np.average(per_query, weights=wq))
    assert scorer(model, X, y, qid=qid, sample_weight=np.ones_like(rows)) == pytest.approx(per_query.mean())
    bad = rows.copy()
    bad[2] += 1.0  # query 0 is one row, query 1 starts at row 1 with weight 2
    with pytest.raises(ValueError, match=r"one weight per query.*query 1 \(rows 1\.\.\d+\) has 2 and 3 \(row 2\)"):
        scorer(model, X, y, qid=qid, sample_weight=bad)
    # r2: every pair weighted by its query's weight
    losses = M.rank_loss(model.predict(X), y, qid=qid, per_query=True)
    pairs = count_critical_pairs(y, M_groups(qid)).astype(float)
    keep = pairs > 0
    want = np.average(losses[keep], weights=(wq * pairs)[keep])
    assert M.make_scorer("r2")(model, X, y, qid=qid, sample_weight=rows) == pytest.approx(-want)


def M_groups(qid):
    from boostplug.groups import group_ptr_from_qid

    return group_ptr_from_qid(qid)


def test_the_scorer_requests_qid_and_sample_weight_by_default():
    from sklearn.utils.metadata_routing import get_routing_for_object

    scorer = M.make_scorer("map")
    request = get_routing_for_object(scorer)
    assert request.consumes("score", ["qid", "sample_weight", "other"]) == {"qid", "sample_weight"}
    scorer.set_score_request(sample_weight=False)
    assert get_routing_for_object(scorer).consumes("score", ["qid", "sample_weight"]) == {"qid"}
    with pytest.raises(TypeError, match="routes only qid, sample_weight"):
        scorer.set_score_request(groups=True)


SCORER_REFUSALS = [  # what make_scorer refuses up front: name, keyword arguments, error, message
    ("ndcg@10", {"empty": 2.0}, ValueError, "empty must be"),
    ("ndcg@10", {"emptyy": 0.0}, TypeError, "unexpected keyword"),
    ("ndcg@10", {"k": 5}, TypeError, "k cannot be set here"),
    ("ndgc@10", {}, ValueError, "unknown metric name"),
]


@pytest.mark.parametrize("name, kwargs, error, message", SCORER_REFUSALS,
                         ids=["empty", "misspelt keyword", "k", "misspelt name"])
def test_make_scorer_checks_its_conventions_up_front(name, kwargs, error, message):
    with pytest.raises(error, match=message):
        M.make_scorer(name, **kwargs)


def test_make_scorer_of_a_loss_says_it_is_negated():
    assert repr(M.make_scorer("r1")) == "make_scorer('r1')  # negated loss"


def test_a_shuffled_split_is_refused_naming_group_splitters(data):
    X, y, qid = data
    model = AdaRank(n_rounds=1).fit(X, y, qid=qid)
    order = np.random.default_rng(0).permutation(qid.shape[0])
    with pytest.raises(ValueError, match="not contiguous.*GroupKFold"):
        M.make_scorer("ndcg@10")(model, X[order], y[order], qid=qid[order])
