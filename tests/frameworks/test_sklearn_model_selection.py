"""scikit-learn model selection keeps queries whole: a cross-validation split that puts rows of
one query in both its training and test part is refused when boostplug's rankers score it
(their ``score`` and ``make_scorer``'s scorer; cross_validate, GridSearchCV, RandomizedSearchCV,
OptunaSearchCV, joblib workers), and no split by query is. How, without seeing the split: a
ranker records the query ids it was fitted on, and with metadata routing on (how scikit-learn
hands qid to a score) rows with those ids are refused unless they are the fitted rows
themselves; so with routing on a separate test set numbered like the training set is refused
too, until renumbered."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
import xgboost as xgb
from sklearn.base import BaseEstimator
from sklearn.model_selection import (GridSearchCV, GroupKFold, GroupShuffleSplit, KFold, LeaveOneGroupOut,
                                     RandomizedSearchCV, ShuffleSplit, StratifiedKFold, cross_validate,
                                     learning_curve, permutation_test_score, validation_curve)

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug import xgboost as bpx
from boostplug._sklearn_folds import check_scored_queries, record_fitted_queries
from boostplug.boosters import AdaRank
from boostplug.data import make_ranking
from boostplug.metrics import QuerySplitWarning
from boostplug.groups import cut_queries, group_ptr_of_runs

CUT = "the rows scored share query ids with the rows this model was fitted on"

# Every refusal also warns (for callers that hide the error); asserted where it matters.
pytestmark = pytest.mark.filterwarnings("ignore::boostplug.metrics.QuerySplitWarning")


@pytest.fixture(scope="module")
def data():
    d = make_ranking(n_queries=24, docs_per_query=(6, 14), n_features=6, seed=5)
    ids = np.random.default_rng(1).permutation(500)[: d.n_queries]  # contiguous, unsorted ids
    return d.X, d.y, np.repeat(ids, d.sizes)


@pytest.fixture()
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


ESTIMATORS = {
    "LGBMRanker": lambda: bpl.LGBMRanker(objective="mpboost", n_estimators=4, num_leaves=5, min_child_samples=3,
                                         n_jobs=1, verbose=-1),
    "XGBRanker": lambda: bpx.XGBRanker(objective="mpboost", n_estimators=4, max_depth=2, n_jobs=1),
    "AdaRank": lambda: AdaRank(n_rounds=3, tolerance=None),
}

ROW_SPLITTERS = {
    "KFold": lambda: KFold(3),
    "KFold-shuffled": lambda: KFold(3, shuffle=True, random_state=0),
    "ShuffleSplit": lambda: ShuffleSplit(3, test_size=0.3, random_state=0),
    "StratifiedKFold": lambda: StratifiedKFold(3, shuffle=True, random_state=0),
}

QUERY_SPLITTERS = {
    "GroupKFold": lambda: GroupKFold(3),
    "GroupShuffleSplit": lambda: GroupShuffleSplit(3, test_size=0.3, random_state=0),
    "LeaveOneGroupOut": LeaveOneGroupOut,
}


# -- the leak ----------------------------------------------------------------------------------


def test_a_row_split_inflates_the_score(data):
    """Why the refusal: fitted and scored by hand (outside scikit-learn, so nothing refuses), a
    shuffled KFold scores far above GroupKFold on the same data and ranker."""
    X, y, qid = data

    def mean_ndcg(splits):
        values = []
        for train, test in splits:
            r = ESTIMATORS["LGBMRanker"]().set_params(n_estimators=30).fit(X[train], y[train], qid=qid[train])
            values.append(metrics.ndcg(r.predict(X[test]), y[test], qid=qid[test], k=10))
        return float(np.mean(values))

    leaky = mean_ndcg(KFold(3, shuffle=True, random_state=0).split(X))
    whole = mean_ndcg(GroupKFold(3).split(X, groups=qid))
    assert leaky > whole + 0.03


# -- refused: every tool, estimator and row splitter ---------------------------------------------


@pytest.mark.parametrize("splitter", ROW_SPLITTERS)
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_cross_validate_refuses_row_splitters(estimator, splitter, data, routing):
    """Refused when the ranker scores the test part; ShuffleSplit's training rows come in random
    order, which fit refuses first (a query's rows must be adjacent), naming the same fix."""
    X, y, qid = data
    message = (f"is not contiguous.*{estimator}.fit.*GroupKFold" if splitter == "ShuffleSplit"
               else f"{estimator}.score: {CUT}.*GroupKFold")
    with pytest.raises(ValueError, match=message):
        cross_validate(ESTIMATORS[estimator](), X, y, cv=ROW_SPLITTERS[splitter](), params={"qid": qid},
                       error_score="raise")


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_grid_and_randomized_search_refuse_a_shuffled_kfold(estimator, data, routing):
    """The issue's call: GridSearchCV(..., cv=KFold(3, shuffle=True), scoring=make_scorer("ndcg@10"))."""
    X, y, qid = data
    est = ESTIMATORS[estimator]()
    grid = {"n_rounds": [2, 3]} if estimator == "AdaRank" else {"learning_rate": [0.1, 0.3]}
    for search in (GridSearchCV(est, grid, cv=KFold(3, shuffle=True, random_state=0),
                                scoring=metrics.make_scorer("ndcg@10"), error_score="raise"),
                   RandomizedSearchCV(est, grid, n_iter=2, cv=KFold(3, shuffle=True, random_state=0),
                                      random_state=0, error_score="raise")):
        with pytest.raises(ValueError, match=CUT):
            search.fit(X, y, qid=qid)


def test_with_the_default_error_score_the_refusal_still_surfaces(data, routing):
    """error_score=nan turns each refused score into NaN and scikit-learn's "Scoring failed"
    warning, which quotes the refusal; a QuerySplitWarning says it too. No inflated score is left."""
    X, y, qid = data
    search = GridSearchCV(ESTIMATORS["LGBMRanker"](), {"learning_rate": [0.1]}, cv=KFold(3, shuffle=True,
                                                                                         random_state=0))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        search.fit(X, y, qid=qid)
    assert np.all(np.isnan(search.cv_results_["mean_test_score"]))
    assert any(issubclass(w.category, QuerySplitWarning) for w in seen)
    assert any(CUT in str(w.message) for w in seen if not issubclass(w.category, QuerySplitWarning))


def test_the_scorer_refuses_for_a_boostplug_ranker_and_cannot_check_another(data, routing):
    """make_scorer refuses a sorted KFold split of a boostplug ranker when it scores; xgboost's own
    XGBRanker records no query ids, so the same split of it cannot be told apart (docs/objectives:
    the scorer checks boostplug's rankers and boosters only). Before, the scorer read the split
    off scikit-learn's call stack."""
    X, y, _ = data
    qid = np.repeat(np.arange(24), np.diff(np.flatnonzero(np.r_[True, data[2][1:] != data[2][:-1], True])))
    with pytest.raises(ValueError, match=rf"make_scorer\('ndcg@10'\): {CUT}"):
        cross_validate(ESTIMATORS["XGBRanker"](), X, y, cv=KFold(3), scoring=metrics.make_scorer("ndcg@10"),
                       params={"qid": qid}, error_score="raise")
    plain = xgb.XGBRanker(n_estimators=3, max_depth=2, n_jobs=1).set_fit_request(qid=True)
    for cv, params in ((KFold(3), {"qid": qid}), (GroupKFold(3), {"qid": qid, "groups": qid})):
        res = cross_validate(plain, X, y, cv=cv, scoring=metrics.make_scorer("ndcg@10"), params=params,
                             error_score="raise")
        assert np.all((res["test_score"] > 0) & (res["test_score"] <= 1))


def test_joblib_workers_refuse_too(data, routing):
    X, y, qid = data
    with pytest.raises(ValueError, match=CUT):
        cross_validate(ESTIMATORS["LGBMRanker"](), X, y, cv=KFold(2), params={"qid": qid}, n_jobs=2,
                       error_score="raise")


def test_optuna_search_cv_refuses_a_row_split_and_takes_query_folds(data, routing):
    """OptunaSearchCV records any ValueError of cross_validate as a failed trial, so the refusal
    shows as a QuerySplitWarning and a search without any completed trial (no inflated score)."""
    optuna_integration = pytest.importorskip("optuna_integration")
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    X, y, qid = data
    space = {"learning_rate": optuna.distributions.FloatDistribution(0.05, 0.3)}

    def search(cv):
        return optuna_integration.OptunaSearchCV(ESTIMATORS["XGBRanker"](), space, cv=cv, n_trials=2,
                                                 scoring=metrics.make_scorer("ndcg@10"), random_state=0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna's experimental and NaN-trial warnings
        warnings.simplefilter("always", QuerySplitWarning)
        with pytest.warns(QuerySplitWarning, match="rows scored share query ids.*GroupKFold"):
            refused = search(KFold(3, shuffle=True, random_state=0)).fit(X, y, qid=qid)
        assert not any(t.state == optuna.trial.TrialState.COMPLETE for t in refused.study_.trials)
        # OptunaSearchCV passes groups= outside the routed params, which routing refuses: give the folds.
        fitted = search(list(GroupKFold(3).split(X, y, groups=qid))).fit(X, y, qid=qid)
    assert 0 < fitted.best_score_ <= 1


# -- accepted: splits by query, separate test sets -------------------------------------------------


@pytest.mark.parametrize("splitter", QUERY_SPLITTERS)
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_query_splitters_are_accepted(estimator, splitter, data, routing):
    X, y, qid = data
    res = cross_validate(ESTIMATORS[estimator](), X, y, cv=QUERY_SPLITTERS[splitter](),
                         scoring=metrics.make_scorer("ndcg@10"), params={"qid": qid, "groups": qid},
                         error_score="raise", return_train_score=True)
    assert np.all((res["test_score"] > 0) & (res["test_score"] <= 1))


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_grid_search_by_query_is_accepted(estimator, data, routing):
    X, y, qid = data
    grid = {"n_rounds": [2, 3]} if estimator == "AdaRank" else {"learning_rate": [0.1, 0.3]}
    search = GridSearchCV(ESTIMATORS[estimator](), grid, cv=GroupKFold(3), scoring=metrics.make_scorer("ndcg@10"),
                          error_score="raise").fit(X, y, qid=qid, groups=qid)
    assert 0 < search.best_score_ <= 1


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_a_test_set_numbered_like_the_training_set(estimator, data):
    """Train and test files each with query ids 0..k cannot be told from a split that cuts queries
    (the ranker sees one side at a time). Scored by hand with routing off, as before; with routing
    on (how model selection hands qid over), refused, naming the fix; renumbered, scored; the
    fitted rows themselves (a training score) are scored. (Before, only a split found on
    scikit-learn's call stack was refused.)"""
    X, y, qid = data
    sizes = np.diff(group_ptr_of_runs(qid))
    renumbered = np.repeat(np.arange(24) % 12, sizes)  # 0..11 in the first half, again in the second
    cut = int(np.sum(sizes[:12]))
    model = ESTIMATORS[estimator]().fit(X[:cut], y[:cut], qid=renumbered[:cut])
    Xt, yt, qt = X[cut:], y[cut:], renumbered[cut:]
    want = metrics.ndcg(model.predict(Xt), yt, qid=qt, k=10)
    assert model.score(Xt, yt, qid=qt) == pytest.approx(want)
    assert metrics.make_scorer("ndcg@10")(model, Xt, yt, qid=qt) == pytest.approx(want)
    with sklearn.config_context(enable_metadata_routing=True):
        for who, score in ((f"{estimator}.score", model.score), ("make_scorer\\('ndcg@10'\\)",
                                                                   lambda *a, **k: metrics.make_scorer("ndcg@10")(model, *a, **k))):
            with pytest.raises(ValueError, match=rf"^{who}: {CUT}: query id 0 has \d+ rows in the data the model was "
                                                 r"fitted on and \d+ in the data scored \(12 of 12 scored query ids "
                                                 r"are training ids\).*renumber its ids"):
                score(Xt, yt, qid=qt)
            want = metrics.ndcg(model.predict(Xt), yt, qid=qt + 100, k=10)
            assert score(Xt, yt, qid=qt + 100) == pytest.approx(want)
            train_want = metrics.ndcg(model.predict(X[:cut]), y[:cut], qid=renumbered[:cut], k=10)
            assert score(X[:cut], y[:cut], qid=renumbered[:cut]) == pytest.approx(train_want)
            with pytest.raises(ValueError, match=CUT):  # the training queries, other labels: not the fitted rows
                score(X[:cut], y[:cut][::-1], qid=renumbered[:cut])


# -- the check itself, against a brute force -----------------------------------------------------


class Probe(BaseEstimator):
    """An instant estimator that records the query ids of its fit (on ``qid + 10_000`` with
    ``other_ids``: other data than the split's) and checks them when it scores, or not at all."""

    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(self, check: bool = True, other_ids: bool = False) -> None:
        self.check = check
        self.other_ids = other_ids

    def fit(self, X, y, qid=None):
        if self.check:
            record_fitted_queries(self, np.asarray(qid) + 10_000 if self.other_ids else qid, y)
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]

    def score(self, X, y, qid=None):
        check_scored_queries(self, qid, y, "Probe.score")
        return 0.0


def _cuts_a_query(qid, train, test) -> bool:
    """Brute force: a query is a maximal run of equal ids; is one in both parts?"""
    run = np.cumsum(np.r_[0, qid[1:] != qid[:-1]])
    return bool(set(run[train]) & set(run[test]))


def _random_case(rng, leave_out: bool):
    sizes = rng.integers(1, 5, size=rng.integers(2, 8))
    ids = rng.integers(0, 4, size=sizes.shape[0])  # an id may come back in a later, separate run
    for i in range(1, ids.shape[0]):
        if ids[i] == ids[i - 1]:
            ids[i] = ids[i] + 10  # adjacent runs are different queries only with different ids
    qid = np.repeat(ids, sizes)
    parts = 3 if leave_out else 2  # 0 train, 1 test, 2 left out
    if rng.random() < 0.5:
        side = rng.integers(0, parts, size=qid.shape[0])  # by row
    else:
        side = rng.integers(0, parts, size=sizes.shape[0]).repeat(sizes)  # by query
    train, test = np.flatnonzero(side == 0), np.flatnonzero(side == 1)
    if rng.random() < 0.3:
        test = rng.permutation(test)  # ShuffleSplit's test rows come unsorted
    return qid, train, test


def _refused(estimator, qid, train, test, scoring, rng) -> bool | None:
    X = rng.normal(size=(qid.shape[0], 2))
    y = np.arange(qid.shape[0], dtype=float) % 7  # no two parts with the same labels row for row
    try:
        cross_validate(estimator, X, y, cv=[(train, test)], scoring=scoring, params={"qid": qid},
                       error_score="raise")
    except ValueError as exc:
        if CUT not in str(exc):
            return None  # a kept query whose test rows come unsorted: the scorer's contiguity error
        return True
    return False


@pytest.mark.parametrize("leave_out", [False, True], ids=["every-row", "rows-left-out"])
def test_check_equals_the_brute_force_on_random_splits(leave_out, routing):
    """Refused exactly when an id is on both sides of the split: so always when a query is cut
    (and also when two queries share an id, one on each side)."""
    rng = np.random.default_rng(7)
    seen = {True: 0, False: 0}
    for _ in range(120):
        qid, train, test = _random_case(rng, leave_out)
        if train.size == 0 or test.size == 0:
            continue
        want = bool(set(qid[train]) & set(qid[test]))
        seen[want] += 1
        for scoring, probe in ((None, Probe()), (metrics.make_scorer("ndcg@10"), Probe())):
            refused = _refused(probe, qid, train, test, scoring, rng)
            if refused is None:
                continue
            case = (qid.tolist(), train.tolist(), test.tolist())
            assert refused == want, case
            assert refused or not _cuts_a_query(qid, train, test), case
    assert seen[True] > 15 and seen[False] > 15


def test_the_message_names_a_shared_query_and_counts(routing):
    qid = np.array([7, 7, 7, 3, 3, 9, 9, 9, 9])
    train, test = np.array([0, 1, 3, 4, 5]), np.array([2, 6, 7, 8])
    X, y = np.zeros((9, 1)), np.zeros(9)
    with pytest.raises(ValueError, match=r"Probe.score: .*query id 7 has 2 rows in the data the model was fitted on "
                                         r"and 1 in the data scored \(2 of 2 scored query ids are training ids\)"):
        cross_validate(Probe(), X, y, cv=[(train, test)], params={"qid": qid}, error_score="raise")


def test_ids_other_than_the_fitted_ones_are_not_refused(data, routing):
    """A model fitted inside an estimator on other data than the split's is not refused, nor an
    estimator that records nothing (no ids: queries given as sizes)."""
    X, y, qid = data
    cross_validate(Probe(other_ids=True), X, y, cv=KFold(3), params={"qid": qid}, error_score="raise")
    cross_validate(Probe(check=False), X, y, cv=KFold(3), params={"qid": qid}, error_score="raise")
    with sklearn.config_context(enable_metadata_routing=False):
        record_fitted_queries(p := Probe(), qid, y)
        check_scored_queries(p, qid[:10], y[:10], "direct")  # routing off: scored by hand
    check_scored_queries(Probe(), qid, y, "direct")  # never fitted
    record_fitted_queries(p, None, y)  # group sizes: no ids
    check_scored_queries(p, qid, y, "direct")
    record_fitted_queries(p, qid, y)
    check_scored_queries(p, None, y, "direct")


@pytest.mark.parametrize("tool", ["learning_curve", "validation_curve", "permutation_test_score"])
def test_other_model_selection_tools_refuse_too(tool, data, routing):
    X, y, qid = data

    def run(cv, params):
        if tool == "learning_curve":
            return learning_curve(Probe(), X, y, cv=cv, train_sizes=[0.5, 1.0], params=params, error_score="raise")
        if tool == "validation_curve":
            return validation_curve(Probe(), X, y, param_name="other_ids", param_range=[False], cv=cv,
                                    params=params, error_score="raise")
        return permutation_test_score(Probe(), X, y, cv=cv, n_permutations=2, params=params)

    with pytest.raises(ValueError, match=CUT):
        run(KFold(3, shuffle=True, random_state=0), {"qid": qid})
    run(GroupKFold(3), {"qid": qid, "groups": qid})


def test_cut_queries_against_a_loop():
    rng = np.random.default_rng(3)
    for _ in range(50):
        sizes = rng.integers(1, 6, size=rng.integers(1, 7))
        gp = np.r_[0, np.cumsum(sizes)]
        rows = np.flatnonzero(rng.random(gp[-1]) < 0.5)
        cut, held = cut_queries(gp, rows)
        want = [(q, int(np.sum((rows >= gp[q]) & (rows < gp[q + 1])))) for q in range(sizes.shape[0])]
        want = [(q, h) for q, h in want if 0 < h < sizes[q]]
        assert list(zip(cut.tolist(), held.tolist())) == want


def test_group_ptr_of_runs():
    np.testing.assert_array_equal(group_ptr_of_runs([3, 3, 1, 3]), [0, 2, 3, 4])
    np.testing.assert_array_equal(group_ptr_of_runs(["a", "a", "b"]), [0, 2, 3])
    np.testing.assert_array_equal(group_ptr_of_runs([]), [0])
