"""Framework workflows that used to mislead silently: cross-validation folds that cut queries,
early stopping in the wrong direction, NaN/inf labels turned into numbers, fractional group
pointers, and metric callables that would not pickle."""

from __future__ import annotations

import pickle
import warnings

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from tests._helpers import lgbm_eval_kwargs

LGB_PARAMS = {"verbose": -1, "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5, "num_threads": 1,
              "deterministic": True, "seed": 1, "metric": "None"}


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=40, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                        noise=0.5, seed=3)


def _query_of_row(group_ptr: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(group_ptr.shape[0] - 1), np.diff(group_ptr))


def _assert_whole_queries(rows: np.ndarray, group_ptr: np.ndarray) -> set[int]:
    """The queries ``rows`` (indices of the full set) hold, each of them whole."""
    sizes = np.diff(group_ptr)
    counts = np.bincount(_query_of_row(group_ptr)[rows], minlength=sizes.shape[0])
    held = np.flatnonzero(counts)
    np.testing.assert_array_equal(counts[held], sizes[held])
    return set(held.tolist())


# --------------------------------------------------------------------------- lgb.cv folds


def test_lgb_cv_with_row_folds_is_refused_by_the_objective(data):
    """lgb.cv splits rows at random for a callable objective (its default, stratified, and
    stratified=False alike): the fold cuts queries, and the objective says how to fix it."""
    for stratified in (True, False):
        with pytest.raises(ValueError, match=r"cuts|query .*both training and validation.*query_folds"):
            lgb.cv({**LGB_PARAMS, "objective": bpl.objective("mpboost")},
                   bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 3, nfold=3, stratified=stratified)


def test_lgb_cv_with_row_folds_is_refused_by_the_metric(data):
    """A built-in pointwise objective gets row folds too: the boostplug feval refuses them."""
    with pytest.raises(ValueError, match=r"metric\('ndcg@5'\).*subset.*query_folds"):
        lgb.cv({**LGB_PARAMS, "objective": "regression"}, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr),
               3, nfold=3, feval=bpl.metric("ndcg@5"))
    # lambdarank is one of LightGBM's ranking names: its folds keep queries whole and pass.
    res = lgb.cv({**LGB_PARAMS, "objective": "lambdarank"}, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr),
                 3, nfold=3, feval=bpl.metric("ndcg@5"))
    assert len(res["valid ndcg@5-mean"]) == 3


def test_query_folds_partition_the_queries(data):
    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    folds = bpl.query_folds(ds, nfold=3, seed=0)
    assert len(folds) == 3
    tested: list[set[int]] = []
    for train_idx, test_idx in folds:
        assert np.intersect1d(train_idx, test_idx).size == 0
        assert train_idx.size + test_idx.size == data.n_docs
        assert np.all(np.diff(test_idx) > 0) and np.all(np.diff(train_idx) > 0)
        tested.append(_assert_whole_queries(test_idx, data.group_ptr))
        _assert_whole_queries(train_idx, data.group_ptr)
    assert sorted(len(t) for t in tested) == [13, 13, 14]
    assert set().union(*tested) == set(range(data.n_queries))
    again = bpl.query_folds(ds, nfold=3, seed=0)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = bpl.query_folds(ds, nfold=3, seed=1)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))
    in_order = bpl.query_folds(ds, nfold=3, shuffle=False)
    np.testing.assert_array_equal(in_order[0][1], np.arange(data.group_ptr[14]))


def test_query_folds_are_the_same_on_both_frameworks_and_in_compare(data):
    """One seed, one set of folds: LightGBM's and XGBoost's query folds are kfold_by_query's query
    folds (what the comparison cuts) with each query's rows, for shuffled and consecutive folds."""
    from boostplug.data import kfold_by_query

    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    query_of_row = _query_of_row(data.group_ptr)
    for seed, shuffle in ((0, True), (7, True), (0, False)):
        lgb_folds = bpl.query_folds(ds, nfold=4, seed=seed, shuffle=shuffle)
        xgb_folds = bpx.query_fold_rows(dm, nfold=4, seed=seed, shuffle=shuffle)
        by_query = kfold_by_query(data.n_queries, 4, seed=seed, shuffle=shuffle)
        for (lt, lv), (xt, xv), (qt, qv) in zip(lgb_folds, xgb_folds, by_query):
            np.testing.assert_array_equal(lt, xt)
            np.testing.assert_array_equal(lv, xv)
            np.testing.assert_array_equal(lv, np.flatnonzero(np.isin(query_of_row, qv)))
            np.testing.assert_array_equal(lt, np.flatnonzero(np.isin(query_of_row, qt)))


@pytest.mark.parametrize("nfold,err", [(1, ValueError), (41, ValueError), (2.5, TypeError), (True, TypeError)])
def test_query_folds_bad_nfold(data, nfold, err):
    # both frameworks' folds name the caller's argument, nfold, and its value
    with pytest.raises(err, match=f"nfold must be .*{nfold!r}" if err is TypeError else f"nfold .*got {nfold}$"):
        bpl.query_folds(bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), nfold)
    with pytest.raises(err, match=f"nfold must be .*{nfold!r}" if err is TypeError else f"nfold .*got {nfold}$"):
        bpx.query_fold_rows(bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), nfold)


def test_query_folds_needs_query_groups(data):
    with pytest.raises(ValueError, match="no query information"):
        bpl.query_folds(lgb.Dataset(data.X, label=data.y), 3)


@pytest.mark.parametrize("call", [bpl.query_folds, bpx.query_fold_rows, lambda a: bpl.cv({}, a),
                                  lambda a: bpx.cv({}, a)])
def test_query_folds_refuse_a_bare_array_saying_what_they_take(call):
    with pytest.raises(TypeError, match=r"(lgb\.Dataset|xgboost\.DMatrix) with query groups.*got ndarray"):
        call(np.array([0, 3, 6]))


def test_bpl_cv_trains_every_fold_on_whole_queries(data):
    """boostplug.lightgbm.cv is lgb.cv on query folds: the objective sees only whole queries of
    the full set, and the result equals lgb.cv(folds=query_folds(...))."""
    seen: list[np.ndarray] = []
    obj = bpl.objective("mpboost")

    def spy(preds, train_data):
        if train_data.used_indices is not None and not any(s is train_data.used_indices for s in seen):
            seen.append(train_data.used_indices)
        return obj(preds, train_data)

    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    res = bpl.cv({**LGB_PARAMS, "objective": spy}, ds, 4, nfold=3, seed=2, feval=bpl.metric("ndcg@5"))
    assert len(seen) == 3
    for rows in seen:
        _assert_whole_queries(np.asarray(rows), data.group_ptr)
    ref = lgb.cv({**LGB_PARAMS, "objective": bpl.objective("mpboost")},
                 bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 4,
                 folds=bpl.query_folds(ds, 3, seed=2), feval=bpl.metric("ndcg@5"))
    np.testing.assert_allclose(res["valid ndcg@5-mean"], ref["valid ndcg@5-mean"], rtol=1e-12)
    with pytest.raises(TypeError, match="own folds"):
        bpl.cv(LGB_PARAMS, ds, 2, folds=[])


def test_xgb_cv_folds_hold_whole_disjoint_queries(data):
    """xgb.cv splits by group: column 0 carries the row number, so the sets the objective and
    the metric get can be traced back to the full set's queries."""
    X = np.column_stack([np.arange(data.n_docs, dtype=np.float64), data.X])
    dall = bpx.dmatrix(X, data.y, group_ptr=data.group_ptr)
    obj, met = bpx.objective("mpboost"), bpx.metric("ndcg@5")
    train_sets: dict[int, np.ndarray] = {}
    all_sets: dict[int, np.ndarray] = {}

    def rows_of(dmat):
        return np.asarray(dmat.get_data()[:, 0].toarray()).reshape(-1).astype(np.int64)

    def spy_obj(predt, dtrain):
        train_sets.setdefault(id(dtrain), rows_of(dtrain))
        return obj(predt, dtrain)

    def spy_metric(predt, dmat):
        all_sets.setdefault(id(dmat), rows_of(dmat))
        return met(predt, dmat)

    xgb.cv(bpx.params(nthread=1, seed=1, max_depth=3), dall, 2, nfold=3, obj=spy_obj, custom_metric=spy_metric,
           seed=0)
    assert len(train_sets) == 3 and len(all_sets) == 6
    tests = [rows for key, rows in all_sets.items() if key not in train_sets]
    assert len(tests) == 3
    tested = [_assert_whole_queries(t, data.group_ptr) for t in tests]
    assert sum(len(t) for t in tested) == data.n_queries
    assert set().union(*tested) == set(range(data.n_queries))
    for train in train_sets.values():
        held = _assert_whole_queries(train, data.group_ptr)
        left_out = [t for t in tested if not (held & t)]
        assert len(left_out) == 1 and held == set(range(data.n_queries)) - left_out[0]


# --------------------------------------------------------------------------- XGBoost early stopping


@pytest.fixture(scope="module")
def stopping_data():
    train = make_ranking(n_queries=60, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                         noise=0.5, seed=3)
    vali = make_ranking(n_queries=40, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                        noise=0.5, seed=4)
    return (bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr),
            bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr))


XGB_STOP_PARAMS = bpx.params(eta=0.3, nthread=1, seed=1)


def _train_stopped(dtrain, dvali, name, **kwargs):
    hist: dict = {}
    booster = xgb.train(XGB_STOP_PARAMS, dtrain, 60, obj=bpx.objective("mpboost"), evals=[(dvali, "vali")],
                        custom_metric=bpx.metric(name), evals_result=hist, verbose_eval=False, **kwargs)
    return booster, np.asarray(hist["vali"][name])


@pytest.mark.parametrize("name", ["mrr", "err@10", "dcg@10", "ndcg@10", "map@5", "precision@5", "r1", "r2"])
def test_xgb_metric_warns_exactly_where_xgboosts_name_rule_goes_the_wrong_way(stopping_data, name):
    """XGBoost hands a custom metric no handle on its early stopping, whose automatic direction
    follows the name (it would minimise mrr, err@10 and dcg@10 and stop after the worst round):
    the metric warns once, naming the fix, exactly when that rule goes against the metric.
    XGBoost's own choice is read off an EarlyStopping left on automatic direction. (Before, the
    metric set the callback's direction from the call stack, silently.)"""
    from boostplug import metrics

    dtrain, dvali = stopping_data
    es = xgb.callback.EarlyStopping(rounds=5)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _, curve = _train_stopped(dtrain, dvali, name, callbacks=[es])
    ours = [w for w in seen if "boostplug.xgboost.metric" in str(w.message)]
    higher = metrics.higher_is_better(name)
    assert (es.maximize != higher) == bool(ours), (es.maximize, [str(w.message) for w in ours])
    assert bool(ours) == (name in ("mrr", "err@10", "dcg@10"))
    if ours:
        assert len(ours) == 1  # once, not every round
        text = str(ours[0].message)
        assert f"boostplug.xgboost.metric('{name}'): higher is better" in text
        assert f"maximize=True" in text and f"early_stopping(rounds, '{name}')" in text
        assert len(curve) < 60 and int(np.argmin(curve)) == len(curve) - 6  # what it warns of: the worst round kept


@pytest.mark.parametrize("name", ["mrr", "err@10", "dcg@10", "ndcg@10", "r1"])
def test_xgb_early_stopping_follows_the_metric_with_either_fix(stopping_data, name):
    """The two fixes the warning names: maximize= in the metric's direction, or boostplug's
    early_stopping callback, which takes the direction from the metric's name."""
    from boostplug import metrics

    dtrain, dvali = stopping_data
    higher = metrics.higher_is_better(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kwargs in ({"early_stopping_rounds": 5, "maximize": higher},
                       {"callbacks": [bpx.early_stopping(5, name)]}):
            booster, curve = _train_stopped(dtrain, dvali, name, **kwargs)
            best = int(np.argmax(curve)) if higher else int(np.argmin(curve))
            assert booster.best_iteration == best
            assert len(curve) == best + 1 + 5


def test_xgb_explicit_maximize_wins(stopping_data):
    dtrain, dvali = stopping_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster, curve = _train_stopped(dtrain, dvali, "mrr", early_stopping_rounds=5, maximize=False)
    assert booster.best_iteration == int(np.argmin(curve))
    # A callback watching another metric name is left alone too.
    es = xgb.callback.EarlyStopping(rounds=3, metric_name="something_else")
    bpx.metric("mrr")  # building one changes nothing
    assert es.maximize is None


def test_boostplug_cv_sets_the_direction_itself(stopping_data):
    """``boostplug.xgboost.cv`` passes the metric's direction (no warning); plain ``xgb.cv``
    cannot, and warns. Before, both went through the metric reading the call stack."""
    dtrain, _ = stopping_data
    kwargs = {"nfold": 3, "obj": bpx.objective("mpboost"), "seed": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = bpx.cv(XGB_STOP_PARAMS, dtrain, 40, custom_metric=bpx.metric("err@10"), **kwargs)
        full = full["test-err@10-mean"].to_numpy()
        own = xgb.callback.EarlyStopping(rounds=5)
        for stop in ({"early_stopping_rounds": 5}, {"callbacks": [own]}):
            kwargs["obj"] = bpx.objective("mpboost")
            stopped = bpx.cv(XGB_STOP_PARAMS, dtrain, 40, custom_metric=bpx.metric("err@10"), **stop, **kwargs)
            best = int(np.argmax(full[: len(stopped) + 5]))
            assert len(stopped) == best + 1 < 40
            assert int(np.argmin(full[: len(stopped) + 5])) != best  # minimising would have stopped elsewhere
    assert own.maximize is None  # the caller's callback is not changed: a copy is directed
    with pytest.warns(UserWarning, match=r"boostplug.xgboost.metric\('err@10'\): higher is better"):
        xgb.cv(XGB_STOP_PARAMS, dtrain, 3, nfold=3, obj=bpx.objective("mpboost"), custom_metric=bpx.metric("err@10"))


def test_xgbranker_directs_a_users_own_early_stopping(stopping_data):
    """An ``EarlyStopping`` of the user's in ``XGBRanker(callbacks=...)`` left on automatic direction
    watches mrr in its direction (XGBRanker passes a directed copy), without a warning."""
    train = make_ranking(n_queries=60, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                         noise=0.5, seed=3)
    vali = make_ranking(n_queries=40, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                        noise=0.5, seed=4)
    own = xgb.callback.EarlyStopping(rounds=5)
    common = dict(objective="mpboost", eval_metric="mrr", n_estimators=60, learning_rate=0.3, n_jobs=1,
                  random_state=1)
    fit = dict(eval_set=[(vali.X, vali.y)], eval_qid=[vali.qid])
    curve = np.asarray(bpx.XGBRanker(**common).fit(train.X, train.y, qid=train.qid, **fit)
                       .evals_result_["validation_0"]["mrr"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = bpx.XGBRanker(callbacks=[own], **common).fit(train.X, train.y, qid=train.qid, **fit)
    assert int(np.argmax(curve)) != int(np.argmin(curve[:20]))  # the directions tell apart
    trained = len(r.evals_result_["validation_0"]["mrr"])
    best = int(np.argmax(curve[:trained]))
    assert r.best_iteration == best and trained == min(best + 1 + 5, 60)
    assert own.maximize is None


# --------------------------------------------------------------------------- labels and groups


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_dataset_builders_refuse_nonfinite_labels_with_the_row(data, bad):
    y = data.y.astype(np.float64)
    y[17] = bad
    with pytest.raises(ValueError, match=f"row 17 has label {bad}"):
        bpl.dataset(data.X, y, group_ptr=data.group_ptr)
    with pytest.raises(ValueError, match=f"row 17 has label {bad}"):
        bpx.dmatrix(data.X, y, group_ptr=data.group_ptr)


def test_plain_lgb_dataset_inf_label_is_refused_by_objective_and_metrics(data):
    """LightGBM stores inf as 1e38 (and NaN as 0, which nothing downstream can see)."""
    y = data.y.astype(np.float64)
    y[5] = np.inf
    sizes = np.diff(data.group_ptr)
    with pytest.raises(ValueError, match="row 5 has label 1e\\+38.*infinite"):
        lgb.train({**LGB_PARAMS, "objective": bpl.objective("ndcg_boost")}, lgb.Dataset(data.X, y, group=sizes), 2)
    with pytest.raises(ValueError, match="row 5 has label -1e\\+38"):
        lgb.train({**LGB_PARAMS, "objective": "regression"}, lgb.Dataset(data.X, -y, group=sizes), 1,
                  valid_sets=[lgb.Dataset(data.X, -y, group=sizes)], feval=bpl.metric("ndcg@5"))
    # (LGBMRanker.fit refuses NaN/inf y itself, through scikit-learn's checks.)
    with pytest.raises(ValueError, match="row 5 has label"):
        bpl.sklearn_metric("ndcg@5")(np.float32(y), np.zeros(data.n_docs), None, sizes)


def test_lgb_dataset_refuses_bad_group_inputs(data):
    n = data.n_docs
    with pytest.raises(ValueError, match="whole numbers.*4.5"):
        bpl.dataset(data.X, data.y, group_ptr=[0, 4.5, n])
    with pytest.raises(ValueError, match=f"cover {n - 1} rows but y has {n}"):
        bpl.dataset(data.X, data.y, group_ptr=[0, 4, n - 1])
    with pytest.raises(ValueError, match="qid has 3 rows"):
        bpl.dataset(data.X, data.y, qid=[1, 1, 2])
    with pytest.raises(ValueError, match="7 weights"):
        bpl.dataset(data.X, data.y, group_ptr=data.group_ptr, weight=np.ones(7))
    with pytest.raises(TypeError, match="group="):
        bpl.dataset(data.X, data.y, group_ptr=data.group_ptr, group=np.diff(data.group_ptr))
    with pytest.raises(ValueError, match="whole numbers.*4.5"):
        bpx.dmatrix(data.X, data.y, group_ptr=[0, 4.5, n])
    with pytest.raises(TypeError, match="group="):
        bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr, group=np.diff(data.group_ptr))


def test_dask_train_lightgbm_refuses_nonfinite_labels(data):
    pd = pytest.importorskip("pandas")
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    from boostplug import dask as bpd

    frame = pd.DataFrame(data.X, columns=[f"f{i}" for i in range(data.X.shape[1])])
    frame = frame.assign(label=data.y.astype(np.float64), qid=data.qid)
    frame.loc[int(data.group_ptr[30]) + 1, "label"] = np.nan
    with dask.config.set(scheduler="sync"):
        parts = bpd.repartition_by_query(frame, npartitions=2, client=None)
        row = int(data.group_ptr[30]) + 1
        with pytest.raises(ValueError, match=f"row {row} of column 'label' \\(partition 1, .*has label nan"):
            bpd.train_lightgbm(None, parts, "mpboost", n_estimators=2)


# --------------------------------------------------------------------------- pickling


def test_metric_callables_pickle_and_still_work(data):
    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr).construct()
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    sizes = np.diff(data.group_ptr)
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    made = [bpl.metric("ndcg@5", display_name="bp"), bpl.sklearn_metric("map@10"), bpx.metric("err@10")]
    calls = [lambda f: f(scores, ds), lambda f: f(data.y, scores, None, sizes), lambda f: f(scores, dm)]
    for fn, call in zip(made, calls):
        clone = pickle.loads(pickle.dumps(fn))
        assert clone.__name__ == fn.__name__
        assert call(clone) == call(fn)
    lgb_metric, sk_metric, xgb_metric = (pickle.loads(pickle.dumps(f)) for f in made)
    rec: dict = {}
    fresh = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    lgb.train({**LGB_PARAMS, "objective": bpl.objective("mpboost")}, fresh, 2, valid_sets=[fresh], valid_names=["t"],
              feval=lgb_metric, callbacks=[lgb.record_evaluation(rec)])
    assert len(rec["t"]["bp"]) == 2
    ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective("mpboost"), n_estimators=2, verbose=-1, n_jobs=1)
    ranker.fit(data.X, data.y, group=sizes, **lgbm_eval_kwargs(data.X, data.y), eval_group=[sizes],
               eval_metric=sk_metric)
    (curves,) = ranker.evals_result_.values()
    assert len(curves["map@10"]) == 2
    hist: dict = {}
    xgb.train(bpx.params(nthread=1), dm, 2, obj=bpx.objective("mpboost"), evals=[(dm, "t")],
              custom_metric=xgb_metric, evals_result=hist, verbose_eval=False)
    assert len(hist["t"]["err@10"]) == 2
    res = bpl.cv({**LGB_PARAMS, "objective": bpl.objective("mpboost")}, bpl.dataset(data.X, data.y,
                 group_ptr=data.group_ptr), 2, nfold=3, feval=lgb_metric)
    assert len(res["valid bp-mean"]) == 2
    res = xgb.cv(bpx.params(nthread=1), dm, 2, nfold=3, obj=bpx.objective("mpboost"), custom_metric=xgb_metric)
    assert len(res["test-err@10-mean"]) == 2
