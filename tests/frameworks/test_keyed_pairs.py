"""Keyed click pairs travel with their rows: every workflow that splits a training set (GridSearchCV,
cross_val_score, lgb.cv, boostplug's cv, early stopping, a booster fit on a subset) trains on a
KeyedPairs table exactly as a hand-written loop that builds each fold's row-index pairs itself."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import sklearn
import xgboost as xgb
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

from boostplug import clicks
from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.boosters import RankBoost
from boostplug.data import make_ranking
from boostplug.keyed_pairs import KeyedPairs
from boostplug import objectives
from boostplug.objectives import qbrank

LGB = {"n_estimators": 8, "num_leaves": 7, "min_child_samples": 2, "n_jobs": 1, "verbose": -1}
QB = {"objective": "qbrank", "label_pairs": False, "labeled": "none"}


@pytest.fixture(scope="module")
def clicked():
    """Judged data, its simulated click preferences (document keys: row indices) as a keyed table,
    and each row's (qid, doc) keys, with documents keyed by strings to show keys are not rows."""
    data = make_ranking(n_queries=24, docs_per_query=8, seed=3)
    log = clicks.simulate(data, np.zeros(data.n_docs), n_sessions=400, seed=1)
    prefs = clicks.preferences(log)
    names = np.array([f"d{i}" for i in range(data.n_docs)])
    keyed = KeyedPairs(prefs.query, names[prefs.preferred], names[prefs.other], prefs.weight)
    return data, keyed, np.asarray(data.qid), names


def _dict_rows(keyed: KeyedPairs, qid, doc):
    """Brute force: the pairs of the queries present, by a dict lookup of (query, doc) -> row."""
    where = {(q, d): i for i, (q, d) in enumerate(zip(qid.tolist(), doc.tolist()))}
    present = set(qid.tolist())
    pairs, weights = [], []
    for k, (q, b, w) in enumerate(zip(keyed.query.tolist(), keyed.better.tolist(), keyed.worse.tolist())):
        if q in present:
            pairs.append((where[(q, b)], where[(q, w)]))
            weights.append(None if keyed.weight is None else keyed.weight[k])
    return np.array(pairs, dtype=np.int64).reshape(-1, 2), (None if keyed.weight is None else np.array(weights))


# ---- the key mapping ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_mapping_equals_a_dict_lookup_on_random_subsets_of_whole_queries(clicked, seed: int) -> None:
    data, keyed, qid, doc = clicked
    rng = np.random.default_rng(seed)
    queries = np.unique(qid)
    kept = rng.choice(queries, size=rng.integers(1, queries.size + 1), replace=False)
    rows = np.flatnonzero(np.isin(qid, kept))
    rows = rows[rng.permutation(rows.size)] if seed % 2 else rows  # any order of rows
    got, w = keyed.rows(qid[rows], doc[rows])
    want, want_w = _dict_rows(keyed, qid[rows], doc[rows])
    assert got.tolist() == want.tolist()
    np.testing.assert_array_equal(w, want_w)


def test_the_full_table_matches_to_rows(clicked) -> None:
    data, _, qid, _ = clicked
    log = clicks.simulate(data, np.zeros(data.n_docs), n_sessions=400, seed=1)
    prefs = clicks.preferences(log)
    pairs, w = prefs.keyed().rows(qid, np.arange(data.n_docs))
    rows = clicks.to_rows(prefs, qid)
    assert pairs.tolist() == rows.pairs.tolist()
    np.testing.assert_array_equal(w, rows.weights)


def test_bad_keys_are_named() -> None:
    qid = np.array([1, 1, 2, 2])
    doc = np.array(["a", "b", "c", "d"])
    with pytest.raises(ValueError, match=r"query 1 has rows here but none with worse document 'c'.*row 2 has that "
                                         r"document key in query 2: a pair across two queries"):
        KeyedPairs([1], ["a"], ["c"]).rows(qid, doc)
    with pytest.raises(ValueError, match=r"none with better document 'zz'"):
        KeyedPairs([2], ["zz"], ["c"]).rows(qid, doc)
    with pytest.raises(ValueError, match=r"rows 0 and 1 have the same \(qid, doc\) = \(1, 'a'\)"):
        KeyedPairs([1], ["a"], ["b"]).rows(qid, np.array(["a", "a", "c", "d"]))
    with pytest.raises(ValueError, match="pair 0 prefers document 'a' of query 1 to itself"):
        KeyedPairs([1], ["a"], ["a"])
    with pytest.raises(TypeError, match="cannot be compared"):
        KeyedPairs([1], [0], [1]).rows(qid, doc)
    with pytest.raises(ValueError, match=r"weight\[0\] is -1.0"):
        KeyedPairs([1], ["a"], ["b"], [-1.0])
    assert KeyedPairs([3], ["a"], ["b"]).rows(qid, doc)[0].shape == (0, 2)  # query 3 is elsewhere


B = 1_500_000_000_000_000_000  # above 2**53: float64 rounds ids here to multiples of 256


def test_mixed_uint64_and_int64_keys_are_compared_exactly() -> None:
    """numpy's common type of uint64 and int64 is float64: a key no row has was mapped to a
    neighbouring document, and adjacent distinct ids were 'the same (qid, doc)'."""
    doc = np.int64([B, B + 1000, B + 2000, B + 3000])
    with pytest.raises(ValueError, match="none with better document 1500000000000001100"):
        KeyedPairs([7], np.uint64([B + 1100]), np.uint64([B + 3000])).rows([7] * 4, doc)  # was [[1, 3]]
    assert KeyedPairs([7], np.uint64([B + 1000]), np.uint64([B + 3000])).rows([7] * 4, doc)[0].tolist() == [[1, 3]]
    assert KeyedPairs([7], np.uint64([B + 1]), np.uint64([B])).rows([7, 7], np.int64([B, B + 1]))[0].tolist() == [[1, 0]]
    # query ids alike
    rows = KeyedPairs(np.uint64([B + 1]), [1], [2]).rows(np.int64([B, B, B + 1, B + 1]), [1, 2, 1, 2])[0]
    assert rows.tolist() == [[2, 3]]
    # better against worse: distinct adjacent ids are a pair, equal ones are not
    assert KeyedPairs([7], np.uint64([B + 1]), np.int64([B])).n_pairs == 1
    with pytest.raises(ValueError, match="prefers document 1500000000000000000 of query 7 to itself"):
        KeyedPairs([7], np.uint64([B]), np.int64([B]))
    # no exact common numpy type (a negative id with ids above int64), or integers with floats: Python numbers
    with pytest.raises(ValueError, match="none with better document -5"):
        KeyedPairs([7], np.int64([-5]), np.uint64([2**63 + 6])).rows([7] * 3, np.uint64([2**63 + 6, 5, 6]))
    big = np.array([2**63 + 6, 5, -5], dtype=object)
    assert KeyedPairs([7], np.int64([-5]), np.uint64([2**63 + 6])).rows([7] * 3, big)[0].tolist() == [[2, 0]]
    floats = KeyedPairs([7], np.float64([2.0**60]), np.int64([2**60 + 1]))
    assert floats.rows([7, 7], np.int64([2**60 + 1, 2**60]))[0].tolist() == [[1, 0]]


@pytest.mark.parametrize("seed", range(4))
def test_mixed_integer_keys_map_as_a_dict_of_python_ints(seed: int) -> None:
    """Random ids a few apart around B, each side in uint64 or int64: the rows a dict lookup finds."""
    rng = np.random.default_rng(seed)
    ids = np.unique(B + rng.integers(0, 5000, size=60))
    doc, qid = rng.permutation(ids)[:40], rng.integers(0, 3, size=40)
    k = rng.integers(0, 40, size=(50, 2))
    k = k[(k[:, 0] != k[:, 1]) & (qid[k[:, 0]] == qid[k[:, 1]])]
    types = [(np.uint64, np.int64), (np.int64, np.uint64), (np.uint64, np.uint64)][seed % 3]
    keyed = KeyedPairs(qid[k[:, 0]], doc[k[:, 0]].astype(types[0]), doc[k[:, 1]].astype(types[0]))
    got, _ = keyed.rows(qid, doc.astype(types[1]))
    assert got.tolist() == _dict_rows(keyed, qid, doc)[0].tolist()


def test_the_table_has_no_len_so_scikit_learn_never_slices_it() -> None:
    assert not hasattr(KeyedPairs([1], ["a"], ["b"]), "__len__")


def test_binding_a_keyed_table_without_keys_is_a_type_error(clicked) -> None:
    data, keyed, _, _ = clicked
    qbrank.QBRankObjective.check(pairs=keyed, label_pairs=False, labeled="none")  # fine without data
    with pytest.raises(TypeError, match="KeyedPairs table, which names documents, not rows"):
        objectives.get("qbrank").prepare(data.y, data.group_ptr, pairs=keyed)


def test_weights_twice_are_refused(clicked) -> None:
    data, keyed, qid, doc = clicked
    ranker = bpl.LGBMRanker(pairs=keyed, pair_weights=np.ones(keyed.n_pairs), **QB, **LGB)
    with pytest.raises(ValueError, match="leave pair_weights unset"):
        ranker.fit(data.X, data.y, qid=qid, doc=doc)
    with pytest.raises(ValueError, match=r"pass fit\(\.\.\., doc=doc\)"):
        bpl.LGBMRanker(pairs=keyed, **QB, **LGB).fit(data.X, data.y, qid=qid)


# ---- scikit-learn: GridSearchCV / cross_val_score with GroupKFold ---------------------------------
def _hand_cv_scores(make, data, keyed, qid, doc, cv):
    """Each fold's score from a ranker trained on that fold's row-index pairs, built here."""
    scores = []
    for train, test in cv.split(data.X, data.y, groups=qid):
        pairs, weights = _dict_rows(keyed, qid[train], doc[train])
        model = make(pairs, weights).fit(data.X[train], data.y[train], qid=qid[train])
        scores.append(model.score(data.X[test], data.y[test], qid=qid[test]))
    return np.array(scores)


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_grid_search_over_w_pair_tau_and_trees_equals_a_hand_loop(clicked, framework: str) -> None:
    data, keyed, qid, doc = clicked
    cv = GroupKFold(3)
    if framework == "lightgbm":
        base, tree = {**QB, **LGB}, ("num_leaves", [3, 7])
        cls = bpl.LGBMRanker
    else:
        base, tree = {**QB, "n_estimators": 8, "max_depth": 3, "n_jobs": 1}, ("max_depth", [2, 3])
        cls = bpx.XGBRanker
    grid = {"w": [0.3, 0.8], "pair_tau": [0.5, 1.0], tree[0]: tree[1]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(cls(pairs=keyed, **base), grid, cv=cv).fit(data.X, data.y, qid=qid, doc=doc,
                                                                          groups=qid)
    for i, params in enumerate(search.cv_results_["params"]):
        hand = _hand_cv_scores(lambda p, w: cls(**{**base, **params, "pairs": p, "pair_weights": w}),
                               data, keyed, qid, doc, cv)
        got = [search.cv_results_[f"split{k}_test_score"][i] for k in range(3)]
        np.testing.assert_allclose(got, hand, rtol=1e-12, atol=1e-12)
    # the refit on all rows equals a fit on all rows' pairs
    pairs, weights = _dict_rows(keyed, qid, doc)
    full = cls(**{**base, **search.best_params_, "pairs": pairs, "pair_weights": weights}).fit(data.X, data.y, qid=qid)
    np.testing.assert_allclose(search.predict(data.X), full.predict(data.X), rtol=1e-12, atol=1e-12)


def test_booster_cross_val_score_on_keyed_pairs_equals_a_hand_loop(clicked) -> None:
    data, keyed, qid, doc = clicked
    unweighted = KeyedPairs(keyed.query, keyed.better, keyed.worse)
    cv = GroupKFold(3)
    model = RankBoost(variant="rb-d", n_rounds=10, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        got = cross_val_score(model, data.X, data.y, cv=cv,
                              params={"qid": qid, "doc": doc, "pairs": unweighted, "groups": qid})
    hand = []
    for train, test in cv.split(data.X, data.y, groups=qid):
        pairs, _ = _dict_rows(unweighted, qid[train], doc[train])
        m = RankBoost(variant="rb-d", n_rounds=10, random_state=0).fit(data.X[train], data.y[train], qid=qid[train],
                                                                        pairs=pairs)
        hand.append(m.score(data.X[test], data.y[test], qid=qid[test]))
    np.testing.assert_allclose(got, hand, rtol=1e-12, atol=1e-12)


def test_row_index_pairs_routed_into_cross_validation_are_refused(clicked) -> None:
    """Routing hands a (n_pairs, 2) array to every fold whole; its row numbers would name other rows
    of the fold. A fold holds fewer rows than the data, so pairs of the whole data name a row beyond
    the fold's: refused, naming the likely cause and KeyedPairs (it trains outside). Pairs that all
    fall within the fold's rows cannot be told apart (docs/reliability.md)."""
    data, keyed, qid, doc = clicked
    rows, _ = _dict_rows(keyed, qid, doc)
    model = RankBoost(variant="rb-d", n_rounds=3, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match=r"RankBoost.fit: pairs\[\d+\] = \[\d+, \d+\] is outside rows \[0, \d+\); "
                                             r"row-index pairs .*routing passes the whole data set's pairs to every "
                                             r"fold unchanged.*KeyedPairs"):
            cross_val_score(model, data.X, data.y, cv=GroupKFold(3), error_score="raise",
                            params={"qid": qid, "pairs": rows, "groups": qid})
    model.fit(data.X, data.y, qid=qid, pairs=rows)  # outside model selection the same pairs train


def test_booster_fit_on_a_subset(clicked) -> None:
    data, keyed, qid, doc = clicked
    unweighted = KeyedPairs(keyed.query, keyed.better, keyed.worse)
    rows = np.flatnonzero(np.isin(qid, np.unique(qid)[::2]))
    pairs, _ = _dict_rows(unweighted, qid[rows], doc[rows])
    a = RankBoost(variant="rb-d", n_rounds=10).fit(data.X[rows], data.y[rows], qid=qid[rows], pairs=unweighted,
                                                   doc=doc[rows])
    b = RankBoost(variant="rb-d", n_rounds=10).fit(data.X[rows], data.y[rows], qid=qid[rows], pairs=pairs)
    np.testing.assert_array_equal(a.predict(data.X), b.predict(data.X))
    with pytest.raises(ValueError, match="take no pair weights"):
        RankBoost(n_rounds=2).fit(data.X, data.y, qid=qid, pairs=keyed, doc=doc)
    with pytest.raises(ValueError, match=r"pass fit\(\.\.\., doc=doc\)"):
        RankBoost(n_rounds=2).fit(data.X, data.y, qid=qid, pairs=unweighted)


# ---- LightGBM: lgb.cv, boostplug.lightgbm.cv, early stopping ---------------------------------------
def _lgb_params(**objective_params):
    return {"objective": bpl.objective("qbrank", label_pairs=False, labeled="none", **objective_params),
            "metric": "None", "num_threads": 1, "verbose": -1, "num_leaves": 7, "min_data_in_leaf": 2}


@pytest.mark.parametrize("how", ["lgb.cv", "boostplug.lightgbm.cv"])
def test_lightgbm_cv_on_keyed_pairs_equals_a_hand_loop(clicked, how: str) -> None:
    data, keyed, qid, doc = clicked
    train_set = bpl.dataset(data.X, data.y, qid=qid, doc=doc, free_raw_data=False)
    folds = bpl.query_folds(train_set, nfold=3, seed=0)
    if how == "lgb.cv":
        got = lgb.cv(_lgb_params(pairs=keyed, w=0.7), train_set, 6, folds=folds, feval=bpl.metric("ndcg@10"))
    else:
        got = bpl.cv(_lgb_params(pairs=keyed, w=0.7), train_set, 6, nfold=3, seed=0, feval=bpl.metric("ndcg@10"))
    per_fold = []
    bins = bpl.dataset(data.X, data.y, qid=qid).construct()  # the folds' feature bins, as lgb.cv's subsets have
    for train, test in folds:
        pairs, weights = _dict_rows(keyed, qid[train], doc[train])
        dtrain = bpl.dataset(data.X[train], data.y[train], qid=qid[train], reference=bins)
        dtest = bpl.dataset(data.X[test], data.y[test], qid=qid[test], reference=bins)
        record: dict = {}
        lgb.train(_lgb_params(pairs=pairs, pair_weights=weights, w=0.7), dtrain, 6, valid_sets=[dtest],
                  valid_names=["valid"], feval=bpl.metric("ndcg@10"), callbacks=[lgb.record_evaluation(record)])
        per_fold.append(record["valid"]["ndcg@10"])
    np.testing.assert_allclose(got["valid ndcg@10-mean"], np.mean(per_fold, axis=0), rtol=1e-12, atol=1e-12)


def test_lightgbm_without_row_keys_is_told_how(clicked) -> None:
    data, keyed, qid, _ = clicked
    with pytest.raises(ValueError, match=r"carries no \(qid, doc\) key per row.*doc=doc"):
        lgb.train(_lgb_params(pairs=keyed), bpl.dataset(data.X, data.y, qid=qid), 2)


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_early_stopping_on_judged_queries(clicked, framework: str) -> None:
    data, keyed, qid, doc = clicked
    train = np.flatnonzero(np.isin(qid, np.unique(qid)[:16]))
    vali = np.setdiff1d(np.arange(data.n_docs), train)
    cls, base = ((bpl.LGBMRanker, {**QB, **LGB, "n_estimators": 40}) if framework == "lightgbm" else
                 (bpx.XGBRanker, {**QB, "n_estimators": 40, "max_depth": 3, "n_jobs": 1}))
    fit = {"eval_set": [(data.X[vali], data.y[vali])], "eval_qid": [qid[vali]]}
    a = cls(pairs=keyed, early_stopping_rounds=3, **base).fit(data.X[train], data.y[train], qid=qid[train],
                                                               doc=doc[train], **fit)
    pairs, weights = _dict_rows(keyed, qid[train], doc[train])
    b = cls(pairs=pairs, pair_weights=weights, early_stopping_rounds=3, **base).fit(data.X[train], data.y[train],
                                                                                    qid=qid[train], **fit)
    best = "best_iteration_" if framework == "lightgbm" else "best_iteration"
    assert getattr(a, best) == getattr(b, best) < 39  # it stopped early
    np.testing.assert_allclose(a.predict(data.X), b.predict(data.X), rtol=1e-12, atol=1e-12)


# ---- XGBoost: boostplug.xgboost.cv (xgb.cv's slices lose the keys) -----------------------------------
def test_xgboost_cv_on_keyed_pairs_equals_a_hand_loop(clicked) -> None:
    data, keyed, qid, doc = clicked
    dtrain = bpx.dmatrix(data.X, data.y, qid=qid, doc=doc)
    params = bpx.params(max_depth=3, nthread=1)
    obj = bpx.objective("qbrank", label_pairs=False, labeled="none", w=0.7, pairs=keyed)
    got = bpx.cv(params, dtrain, 6, nfold=3, seed=0, obj=obj, custom_metric=bpx.metric("ndcg@10"), as_pandas=False)
    per_fold = []
    for train, test in bpx.query_fold_rows(dtrain, 3, seed=0):
        pairs, weights = _dict_rows(keyed, qid[train], doc[train])
        record: dict = {}
        xgb.train(params, bpx.dmatrix(data.X[train], data.y[train], qid=qid[train]), 6,
                  obj=bpx.objective("qbrank", label_pairs=False, labeled="none", w=0.7, pairs=pairs,
                                    pair_weights=weights),
                  evals=[(bpx.dmatrix(data.X[test], data.y[test], qid=qid[test]), "test")],
                  custom_metric=bpx.metric("ndcg@10"), evals_result=record, verbose_eval=False)
        per_fold.append(record["test"]["ndcg@10"])
    np.testing.assert_allclose(got["test-ndcg@10-mean"], np.mean(per_fold, axis=0), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"lose the keys: cross-validate with boostplug.xgboost.cv"):
        xgb.cv(params, dtrain, 2, nfold=3, obj=obj)
