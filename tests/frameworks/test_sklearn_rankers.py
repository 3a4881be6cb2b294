"""boostplug.lightgbm.LGBMRanker and boostplug.xgboost.XGBRanker: a boostplug objective by name
in scikit-learn's estimator API (parameters, model selection, early stopping, persistence)."""

from __future__ import annotations

import pickle
import warnings

import lightgbm as lgb
import numpy as np
import pytest
import sklearn
import xgboost as xgb
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug import xgboost as bpx
from boostplug.data import make_ranking

FRAMEWORKS = ["lightgbm", "xgboost"]
#: name of the first eval set in evals_result_
VALID = {"lightgbm": "valid_0", "xgboost": "validation_0"}


@pytest.fixture(scope="module")
def data():
    d = make_ranking(n_queries=36, docs_per_query=(6, 14), n_features=6, seed=3)
    # Contiguous but unsorted query ids, as in LETOR files.
    ids = np.random.default_rng(0).permutation(1000)[: d.n_queries]
    qid = np.repeat(ids, d.sizes)
    return d.X, d.y, qid


def split(data, n_train_queries=24):
    X, y, qid = data
    first = np.unique(qid, return_index=True)[1]
    cut = np.sort(first)[n_train_queries]
    return (X[:cut], y[:cut], qid[:cut]), (X[cut:], y[cut:], qid[cut:])


def ranker(framework, **kw):
    if framework == "lightgbm":
        base = dict(n_estimators=15, num_leaves=7, min_child_samples=5, learning_rate=0.2, n_jobs=1,
                    random_state=0, verbose=-1)
        return bpl.LGBMRanker(**{**base, **kw})
    base = dict(n_estimators=15, max_depth=3, learning_rate=0.2, n_jobs=1, random_state=0, tree_method="hist")
    return bpx.XGBRanker(**{**base, **kw})


def fit_quietly(model, *args, **kwargs):
    """Fit, failing on any warning (an unknown parameter reaching the booster warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return model.fit(*args, **kwargs)


# -- parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_objective_params_are_estimator_params_and_clone_keeps_them(framework):
    r = ranker(framework, objective="mpboost", ddf="ldd", lam=2.0)
    params = r.get_params()
    assert params["objective"] == "mpboost" and params["ddf"] == "ldd" and params["lam"] == 2.0
    assert params["eval_metric"] == "ndcg@10" and params["early_stopping_rounds"] is None
    c = clone(r)
    assert type(c) is type(r) and c.get_params() == params
    c.set_params(ddf="logdd")
    assert c.get_params()["ddf"] == "logdd" and r.get_params()["ddf"] == "ldd"


def test_lightgbm_predictions_equal_lgb_train_with_the_same_objective(data):
    (X, y, qid), _ = split(data)
    r = fit_quietly(ranker("lightgbm", objective="mpboost", ddf="ldd", lam=2.0), X, y, qid=qid)
    booster = lgb.train(
        {"objective": bpl.objective("mpboost", ddf="ldd", lam=2.0), "metric": "None", "num_leaves": 7,
         "min_data_in_leaf": 5, "learning_rate": 0.2, "num_threads": 1, "seed": 0, "verbose": -1},
        bpl.dataset(X, y, qid=qid), 15,
    )
    np.testing.assert_allclose(r.predict(X), booster.predict(X), rtol=0, atol=1e-12)
    # ...and the parameters matter: the default ddf trains another model.
    other = ranker("lightgbm", objective="mpboost").fit(X, y, qid=qid)
    assert not np.allclose(other.predict(X), r.predict(X))


def test_xgboost_predictions_equal_xgb_train_with_the_same_objective(data):
    (X, y, qid), _ = split(data)
    r = fit_quietly(ranker("xgboost", objective="mpboost", ddf="ldd", lam=2.0), X, y, qid=qid)
    booster = xgb.train(bpx.params(max_depth=3, eta=0.2, nthread=1, seed=0), bpx.dmatrix(X, y, qid=qid), 15,
                        obj=bpx.objective("mpboost", ddf="ldd", lam=2.0))
    np.testing.assert_allclose(r.predict(X), booster.predict(xgb.DMatrix(X)), rtol=0, atol=1e-6)
    other = ranker("xgboost", objective="mpboost").fit(X, y, qid=qid)
    assert not np.allclose(other.predict(X), r.predict(X))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    "kw, match",
    [
        pytest.param({"objective": "qbrank", "ddf": "ldd"}, r"ddf='ldd' is a parameter of .*mpboost.*not of "
                     r"objective 'qbrank'", id="other-objectives-param"),
        pytest.param({"objective": "mpboost", "ddf": "nope"}, r"objective='mpboost'.*'nope'", id="bad-value"),
        pytest.param({"objective": "qbrank", "tau": np.float64(-1.0)}, r"got -1\.0$", id="plain-number"),
        pytest.param({"objective": "rank:ndcg", "tau": 1.0}, r"tau=1\.0 is a parameter of .*qbrank", id="builtin"),
        pytest.param({"objective": "qbrank", "eval_metric": "ndcg@x"}, r"ndcg@x", id="eval-metric"),
        pytest.param({"objective": "qbrank", "early_stopping_rounds": 0},
                     r"early_stopping_rounds must be an integer >= 1 or None, got 0", id="rounds"),
    ],
)
def test_invalid_parameters_raise_at_fit_naming_the_value(framework, data, kw, match):
    X, y, qid = data
    if framework == "lightgbm" and kw["objective"] == "rank:ndcg":
        kw = {**kw, "objective": "lambdarank"}
    r = ranker(framework, **kw)  # constructing never validates (scikit-learn convention)
    with pytest.raises(ValueError, match=match):
        r.fit(X, y, qid=qid)


def test_lightgbm_unknown_name_and_metric_raise(data):
    X, y, qid = data
    with pytest.raises(ValueError, match=r"ddff=1 is neither a LightGBM parameter nor a parameter of objective"):
        ranker("lightgbm", objective="qbrank", ddff=1).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"metric='ndcg'.*set eval_metric="):
        ranker("lightgbm", objective="qbrank", metric="ndcg").fit(X, y, qid=qid)


def test_xgboost_takes_no_callable_objective(data):
    X, y, qid = data
    with pytest.raises(TypeError, match="objective name"):
        ranker("xgboost", objective=lambda y, p: (y, p)).fit(X, y, qid=qid)


# -- fitting --------------------------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("objective", ["qbrank", "builtin"])
def test_fit_with_eval_set_records_only_the_boostplug_metric(framework, objective, data):
    (X, y, qid), (Xv, yv, qv) = split(data)
    if objective == "builtin":
        objective = "lambdarank" if framework == "lightgbm" else "rank:ndcg"
    r = fit_quietly(ranker(framework, objective=objective, eval_metric="map@5"), X, y, qid=qid,
                    eval_set=[(Xv, yv)], eval_qid=[qv])
    assert list(r.evals_result_) == [VALID[framework]]
    assert list(r.evals_result_[VALID[framework]]) == ["map@5"]
    curve = r.evals_result_[VALID[framework]]["map@5"]
    assert len(curve) == 15
    gp = np.flatnonzero(np.r_[True, qv[1:] != qv[:-1], True])
    assert curve[-1] == pytest.approx(metrics.by_name("map@5")(r.predict(Xv), yv, gp))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("eval_metric", ["ndcg@5", "r1"])
def test_early_stopping_picks_the_best_round_of_the_boostplug_metric(framework, eval_metric, data):
    (X, y, qid), (Xv, yv, qv) = split(data)
    r = ranker(framework, objective="mpboost", n_estimators=80, learning_rate=0.5, eval_metric=eval_metric,
               early_stopping_rounds=4)
    r.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    curve = np.asarray(r.evals_result_[VALID[framework]][eval_metric])
    best = int(np.argmax(curve) if eval_metric != "r1" else np.argmin(curve))  # first best round, 0-based
    assert len(curve) == min(80, best + 1 + 4)
    if framework == "lightgbm":
        assert r.best_iteration_ == best + 1
        expected = r.booster_.predict(Xv, num_iteration=best + 1)
    else:
        assert r.best_iteration == best
        expected = r.get_booster().predict(xgb.DMatrix(Xv), iteration_range=(0, best + 1))
    np.testing.assert_allclose(r.predict(Xv), expected)


def _stop(curve, rounds, maximize):
    """Brute-force early stopping on one curve: (best round, rounds trained), both 0-based/counts;
    a round is better only if strictly so, as in both frameworks."""
    best = 0
    for i, value in enumerate(curve):
        if (value > curve[best]) if maximize else (value < curve[best]):
            best = i
        if i - best >= rounds:
            return best, i + 1
    return best, len(curve)


def _best_round(framework, r):
    return r.best_iteration_ - 1 if framework == "lightgbm" else r.best_iteration


def _first_to_stall(curves, rounds):
    """LightGBM's rule: the set whose curve stalls in the earliest round (the one listed first
    on a tie), as (best round, rounds trained)."""
    stops = [_stop(c, rounds, maximize=True) for c in curves]
    return min(stops, key=lambda s: s[1])  # min keeps the first of equal ones


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_early_stopping_follows_the_frameworks_rule_for_several_eval_sets(framework, data):
    """XGBRanker watches the last set, as xgboost.XGBRanker does; LGBMRanker stops at whichever
    set stalls first, as lightgbm.LGBMRanker does (before, it watched the last set: 27 rounds
    where LightGBM's own ranker stopped at 14). A set whose score stalls at once (reversed
    labels) tells the rules apart, listed first or last."""
    (X, y, qid), (Xv, yv, qv) = split(data)
    sets, qids = [(Xv, 4 - yv), (Xv, yv)], [qv, qv]
    full = ranker(framework, objective="mpboost", n_estimators=60, learning_rate=0.3).fit(
        X, y, qid=qid, eval_set=sets, eval_qid=qids)
    curves = [np.asarray(c["ndcg@10"]) for c in full.evals_result_.values()]
    assert _stop(curves[0], 5, maximize=True) != _stop(curves[1], 5, maximize=True)  # the test tells the sets apart
    for order in ([0, 1], [1, 0]):
        ordered = [curves[i] for i in order]
        want = _first_to_stall(ordered, 5) if framework == "lightgbm" else _stop(ordered[-1], 5, maximize=True)
        r = ranker(framework, objective="mpboost", n_estimators=60, learning_rate=0.3, early_stopping_rounds=5)
        r.fit(X, y, qid=qid, eval_set=[sets[i] for i in order], eval_qid=[qids[i] for i in order])
        trained = [len(c["ndcg@10"]) for c in r.evals_result_.values()]
        assert (_best_round(framework, r), trained[-1]) == want and trained[0] == want[1]
        if framework == "lightgbm":  # and exactly as LightGBM's own ranker with the same objective and metric
            own = lgb.LGBMRanker(objective=bpl.sklearn_objective("mpboost"), n_estimators=60, learning_rate=0.3,
                                 num_leaves=7, min_child_samples=5, n_jobs=1, random_state=0, verbose=-1,
                                 metric="None")
            own.fit(X, y, group=np.unique(qid, return_counts=True)[1], eval_set=[sets[i] for i in order],
                    eval_group=[np.unique(qids[i], return_counts=True)[1] for i in order],
                    eval_metric=bpl.sklearn_metric("ndcg@10"), callbacks=[lgb.early_stopping(5, verbose=False)])
            assert own.best_iteration_ == r.best_iteration_


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_list_of_eval_metrics_is_recorded_and_the_last_one_stops(framework, data):
    (X, y, qid), (Xv, yv, qv) = split(data)
    fit = dict(eval_set=[(Xv, yv)], eval_qid=[qv])
    full = ranker(framework, objective="mpboost", n_estimators=60, learning_rate=0.3,
                  eval_metric=["ndcg@10", "map@3"]).fit(X, y, qid=qid, **fit)
    curves = full.evals_result_[VALID[framework]]
    assert list(curves) == ["ndcg@10", "map@3"] and all(len(c) == 60 for c in curves.values())
    stops = {m: _stop(curves[m], 4, maximize=True) for m in curves}
    assert stops["ndcg@10"] != stops["map@3"]  # the test tells the metrics apart
    gp = np.flatnonzero(np.r_[True, qv[1:] != qv[:-1], True])
    for metric_list in (["ndcg@10", "map@3"], ("map@3", "ndcg@10")):
        last = metric_list[-1]
        r = ranker(framework, objective="mpboost", n_estimators=60, learning_rate=0.3, eval_metric=metric_list,
                   early_stopping_rounds=4).fit(X, y, qid=qid, **fit)
        recorded = r.evals_result_[VALID[framework]]
        assert list(recorded) == list(metric_list) and all(len(c) == stops[last][1] for c in recorded.values())
        assert _best_round(framework, r) == stops[last][0]
        assert r.score(Xv, yv, qid=qv) == pytest.approx(metrics.by_name(last)(r.predict(Xv), yv, gp))
        assert clone(r).get_params()["eval_metric"] == metric_list
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(r)).predict(Xv), r.predict(Xv))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("bad,err,match", [
    ([], ValueError, "empty list"),
    ([10], TypeError, "metric name such as 'ndcg@10' or a list of them"),
    (5, TypeError, "metric name such as 'ndcg@10' or a list of them"),
    (["map", "MAP"], ValueError, "lists 'MAP' twice"),
    (["ndcg@10", "ndgc"], ValueError, "unknown metric name 'ndgc'"),
], ids=["empty", "not-a-name", "not-a-list", "twice", "unknown"])
def test_bad_eval_metric_lists_are_refused_at_fit(framework, bad, err, match, data):
    (X, y, qid), (Xv, yv, qv) = split(data)
    with pytest.raises(err, match=match):
        ranker(framework, eval_metric=bad).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_group_sizes_unsorted_qid_and_sorted_qid_train_the_same_model(framework, data):
    X, y, qid = data
    sizes = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    sorted_qid = np.repeat(np.arange(sizes.size), sizes)
    preds = [ranker(framework, objective="ndcg_boost").fit(X, y, **kw).predict(X)
             for kw in ({"qid": qid}, {"qid": sorted_qid}, {"group": sizes})]
    np.testing.assert_array_equal(preds[0], preds[1])
    np.testing.assert_array_equal(preds[0], preds[2])


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_sample_weight_per_query_equals_per_row(framework, data):
    X, y, qid = data
    sizes = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    qw = np.linspace(0.5, 2.0, sizes.size)
    per_query = ranker(framework, objective="qbrank").fit(X, y, qid=qid, sample_weight=qw).predict(X)
    per_row = ranker(framework, objective="qbrank").fit(X, y, qid=qid, sample_weight=np.repeat(qw, sizes)).predict(X)
    unweighted = ranker(framework, objective="qbrank").fit(X, y, qid=qid).predict(X)
    np.testing.assert_array_equal(per_query, per_row)
    assert not np.allclose(per_query, unweighted)
    mixed = np.repeat(qw, sizes)
    mixed[1] += 1.0
    with pytest.raises(ValueError, match="query 0"):
        ranker(framework, objective="qbrank").fit(X, y, qid=qid, sample_weight=mixed)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fit_input_errors(framework, data):
    X, y, qid = data
    with pytest.raises(ValueError, match="exactly one of qid"):
        ranker(framework, objective="qbrank").fit(X, y)
    with pytest.raises(ValueError, match="early_stopping_rounds=5 needs validation data"):
        ranker(framework, objective="qbrank", early_stopping_rounds=5).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"eval_set\[0\]"):
        ranker(framework, objective="qbrank").fit(X, y, qid=qid, eval_set=[(X, y)])


# -- scoring and model selection ------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_score_is_the_weighted_mean_eval_metric(framework, data):
    (X, y, qid), (Xv, yv, qv) = split(data)
    r = ranker(framework, objective="qbrank").fit(X, y, qid=qid)
    gp = np.flatnonzero(np.r_[True, qv[1:] != qv[:-1], True])
    per_q = metrics.by_name("ndcg@10")(r.predict(Xv), yv, gp, per_query=True)
    assert r.score(Xv, yv, qid=qv) == pytest.approx(np.mean(per_q))
    w = np.arange(1.0, gp.size)
    assert r.score(Xv, yv, qid=qv, sample_weight=w) == pytest.approx(np.average(per_q, weights=w))
    with pytest.raises(ValueError, match="score needs qid"):
        r.score(Xv, yv)
    r.set_params(eval_metric="r1")  # a loss: negated, so that greater is better
    assert r.score(Xv, yv, qid=qv) == pytest.approx(-metrics.by_name("r1")(r.predict(Xv), yv, gp))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_grid_search_over_an_objective_parameter_with_group_kfold(framework, data):
    X, y, qid = data
    search = GridSearchCV(ranker(framework, objective="mpboost", n_estimators=8), {"ddf": ["ldd", "binary"]},
                          cv=GroupKFold(n_splits=3))
    with sklearn.config_context(enable_metadata_routing=True):
        search.fit(X, y, qid=qid, groups=qid)
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores > 0) & (scores <= 1)) and scores[0] != scores[1]
    assert search.best_params_["ddf"] == ["ldd", "binary"][int(np.argmax(scores))]
    assert search.best_estimator_.get_params()["ddf"] == search.best_params_["ddf"]
    # The ranker's score is the NDCG@10 scorer's value on every split.
    scored = clone(search).set_params(scoring=metrics.make_scorer("ndcg@10"), error_score="raise")
    with sklearn.config_context(enable_metadata_routing=True):
        scored.fit(X, y, qid=qid, groups=qid)
    np.testing.assert_allclose(scored.cv_results_["mean_test_score"], scores)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_cross_validate_routes_qid_to_fit_and_score(framework, data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        # With routing on, the splitter's groups travel in params too.
        res = cross_validate(ranker(framework, objective="ndcg_boost", n_estimators=8), X, y,
                             cv=GroupKFold(n_splits=3), params={"qid": qid, "groups": qid})
    assert res["test_score"].shape == (3,) and np.all((res["test_score"] > 0) & (res["test_score"] <= 1))


# -- persistence -----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=FRAMEWORKS)
def early_stopped(request, data):
    (X, y, qid), (Xv, yv, qv) = split(data)
    r = ranker(request.param, objective="mpboost", ddf="ldd", n_estimators=60, learning_rate=0.5,
               early_stopping_rounds=3)
    return request.param, r.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv]), Xv


def test_pickle_round_trip_predicts_the_same(early_stopped):
    _, r, Xv = early_stopped
    back = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(back.predict(Xv), r.predict(Xv))
    params, back_params = r.get_params(), back.get_params()
    assert np.isnan(params.pop("missing", np.nan)) and np.isnan(back_params.pop("missing", np.nan))  # XGBoost's
    assert back_params == params


def test_save_then_load_into_a_fresh_ranker_predicts_the_same(early_stopped, tmp_path):
    framework, r, Xv = early_stopped
    path = tmp_path / ("model.txt" if framework == "lightgbm" else "model.json")
    r.save_model(path)
    record = (bpl if framework == "lightgbm" else bpx).objective_of(path)
    assert record.name == "mpboost" and record.params == {"ddf": "ldd"}
    fresh = type(r)().load_model(path)
    np.testing.assert_allclose(fresh.predict(Xv), r.predict(Xv), rtol=0, atol=1e-6)
    assert fresh.get_params()["objective"] == "mpboost"
    assert fresh.get_params()["ddf"] == "ldd"


def test_builtin_objective_round_trips_without_a_record(tmp_path, data):
    X, y, qid = data
    r = ranker("lightgbm", objective="lambdarank").fit(X, y, qid=qid)
    r.save_model(tmp_path / "m.txt")
    fresh = bpl.LGBMRanker().load_model(tmp_path / "m.txt")
    np.testing.assert_allclose(fresh.predict(X), r.predict(X))
    assert fresh.objective == "lambdarank"
