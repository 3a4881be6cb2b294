"""The LightGBM and XGBoost adapters: whatever works with a built-in objective works with ours."""

from __future__ import annotations

import re

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import metrics, objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.objectives.xendcg import objective_seed_from_seed
from tests._helpers import lgbm_eval_kwargs

#: Every registered objective: one registered later is trained through both frameworks with no edit.
OBJECTIVES = objectives.names()
LGB_PARAMS = {"verbose": -1, "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5,
              "num_threads": 1, "deterministic": True, "seed": 1}
XGB_PARAMS = bpx.params(eta=0.1, max_leaves=7, grow_policy="lossguide", max_depth=0, min_child_weight=1e-3,
                        nthread=1, seed=1)


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=40, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                        noise=0.5, seed=3)


def _ndcg(scores, d):
    return metrics.ndcg(scores, d.y, d.group_ptr, k=10)


@pytest.mark.parametrize("name", OBJECTIVES)
def test_lgb_train_learns_and_matches_pure_gradients(name, data):
    seen = []
    obj = bpl.objective(name)

    def spy(preds, train_data):
        g, h = obj(preds, train_data)
        seen.append((np.array(preds), g, h))
        return g, h

    booster = lgb.train({**LGB_PARAMS, "objective": spy}, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 15)
    assert _ndcg(booster.predict(data.X), data) > _ndcg(np.zeros(data.n_docs), data) + 0.05
    # the copy of LightGBM's rank_xendcg reads LightGBM's seed, as the built-in derives its objective_seed
    read = {"objective_seed": objective_seed_from_seed(LGB_PARAMS["seed"])} if name == "xendcg" else {}
    ref = objectives.get(name).prepare(data.y, data.group_ptr, **read)
    for preds, g, h in seen[:4]:  # round by round: an objective drawing at random draws the same
        g_ref, h_ref = ref.grad_hess(preds)
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-15)


# RankCosine is scale-free: at scores of 1e4 its gradients and Hessians are 1e-4 times those at 1, and a leaf's sum of
# Hessians falls below LightGBM's min_sum_hessian_in_leaf: no tree splits (the cosine of such scores is the same)
@pytest.mark.parametrize("name", [n for n in OBJECTIVES if n != "rank_cosine"])
def test_both_frameworks_learn_from_extreme_initial_scores(name, data):
    """Initial scores of +-1e4 (continued training, a wild base margin): the exponential losses'
    gradients are rescaled (mpboost.GRAD_SUM_CAP) so that XGBoost's float32 split gains do not
    overflow; with per-value gradients of 1e30 XGBoost grew root-only trees and did not move. A
    loss of lambda gradients is compared with its weights held at the initial scores: its weights
    follow the order, and those of LambdaLoss's losses grow as a relevant document climbs."""
    init = 1e4 * np.random.default_rng(0).choice([-1.0, 1.0], size=data.n_docs)
    prep = objectives.get(name).prepare(data.y, data.group_ptr)
    lb = lgb.train({**LGB_PARAMS, "objective": bpl.objective(name)},
                   bpl.dataset(data.X, data.y, group_ptr=data.group_ptr, init_score=init), 10)
    xb = xgb.train(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr, base_margin=init), 10,
                   obj=bpx.objective(name))
    for moved in (lb.predict(data.X, raw_score=True), xb.predict(xgb.DMatrix(data.X), output_margin=True)):
        assert np.isfinite(moved).all() and np.abs(moved).max() > 0.1
        after = init + moved
        if hasattr(prep, "log_loss"):
            assert prep.log_loss(after) < prep.log_loss(init)
        elif "lambda" in prep.gradient_kinds().values():  # pair weights of init's order, held
            assert prep.loss(after, weights_at=init) < prep.loss(init)
        else:
            assert prep.loss(after) < prep.loss(init)
        assert _ndcg(after, data) > _ndcg(init, data)


@pytest.mark.parametrize("name", OBJECTIVES)
def test_xgb_train_learns_and_matches_lightgbm_gradients(name, data):
    booster = xgb.train(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 15,
                        obj=bpx.objective(name))
    scores = booster.predict(xgb.DMatrix(data.X), output_margin=True)
    assert _ndcg(scores, data) > _ndcg(np.zeros(data.n_docs), data) + 0.05
    # Both adapters hand the same numbers to the trees.
    d = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr).construct()
    g1, h1 = bpl.objective(name)(scores, d)
    g2, h2 = bpx.objective(name)(scores, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr))
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(h1, h2)


def _first_scores_seen(obj):
    """``(spy, first)``: ``spy`` calls the objective ``obj`` and keeps, in ``first``, a copy of the
    scores it is given the first time."""
    first = []

    def spy(preds, data):
        if not first:
            first.append(np.array(preds))
        return obj(preds, data)

    return spy, first


def test_lgb_init_score_is_what_the_objective_sees(data):
    init = np.random.default_rng(0).normal(size=data.n_docs)
    spy, first = _first_scores_seen(bpl.objective("mpboost"))
    lgb.train({**LGB_PARAMS, "objective": spy},
              bpl.dataset(data.X, data.y, group_ptr=data.group_ptr, init_score=init), 2)
    np.testing.assert_allclose(first[0], init)


def test_xgb_base_margin_is_what_the_objective_sees(data):
    init = np.random.default_rng(0).normal(size=data.n_docs)
    spy, first = _first_scores_seen(bpx.objective("mpboost"))
    xgb.train(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr, base_margin=init), 2, obj=spy)
    np.testing.assert_allclose(first[0], init, rtol=1e-6)


def test_lgb_cv_binds_each_fold_separately(data):
    """On query folds (lgb.cv's own row folds cut queries and are refused): one objective, one
    binding per fold set, each to that fold's rows."""
    obj = bpl.objective("mpboost")
    seen: list = []  # strong references: the bindings are weak

    def spy(preds, train_data):
        if not any(s is train_data for s in seen):
            seen.append(train_data)
        return obj(preds, train_data)

    train = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    folds = bpl.query_folds(train, nfold=3, seed=0)
    res = lgb.cv({**LGB_PARAMS, "objective": spy, "metric": "None"}, train, num_boost_round=5, folds=folds,
                 feval=bpl.metric("ndcg@5"))
    assert len(res["valid ndcg@5-mean"]) == 5
    assert np.all(np.isfinite(res["valid ndcg@5-mean"]))
    assert len(seen) == 3 and len(obj._by_set) == 3
    for fold_set, (train_idx, _) in zip(seen, folds):
        np.testing.assert_array_equal(obj._by_set[fold_set][0].labels, data.y[train_idx])


def test_xgb_cv_binds_each_fold_separately(data):
    res = xgb.cv(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), num_boost_round=5, nfold=3,
                 obj=bpx.objective("mpboost"), custom_metric=bpx.metric("ndcg@5"), seed=0)
    assert len(res) == 5
    assert np.all(np.isfinite(res["test-ndcg@5-mean"]))


@pytest.fixture(scope="module")
def vali():
    return make_ranking(n_queries=30, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4,
                        noise=0.5, seed=4)


def test_early_stopping_and_model_save_load(data, vali, tmp_path):
    """Early stopping keeps the best validation round and stops `patience` rounds after it;
    the saved model predicts what the trained one does."""
    train = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    valid = bpl.dataset(vali.X, vali.y, group_ptr=vali.group_ptr, reference=train)
    hist: dict = {}
    booster = lgb.train({**LGB_PARAMS, "objective": bpl.objective("ndcg_boost"), "metric": "None"}, train, 200,
                        valid_sets=[valid], feval=bpl.metric("ndcg@10"),
                        callbacks=[lgb.early_stopping(5, verbose=False), lgb.record_evaluation(hist)])
    curve = hist["valid_0"]["ndcg@10"]
    assert len(curve) < 200
    assert booster.best_iteration == int(np.argmax(curve)) + 1
    assert len(curve) == booster.best_iteration + 5
    path = tmp_path / "model.txt"
    booster.save_model(str(path))
    loaded = lgb.Booster(model_file=str(path))
    np.testing.assert_allclose(loaded.predict(data.X, num_iteration=booster.best_iteration),
                               booster.predict(data.X, num_iteration=booster.best_iteration))

    dtrain = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    dvali = bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr)
    hist = {}
    xb = xgb.train(XGB_PARAMS, dtrain, 200, obj=bpx.objective("ndcg_boost"), evals=[(dvali, "vali")],
                   custom_metric=bpx.metric("ndcg@10"), early_stopping_rounds=5, verbose_eval=False,
                   evals_result=hist)
    curve = hist["vali"]["ndcg@10"]
    assert len(curve) < 200
    assert xb.best_iteration == int(np.argmax(curve))
    assert len(curve) == xb.best_iteration + 1 + 5
    xpath = tmp_path / "model.json"
    xb.save_model(str(xpath))
    xl = xgb.Booster(model_file=str(xpath))
    dm = xgb.DMatrix(data.X)
    np.testing.assert_allclose(xl.predict(dm, output_margin=True), xb.predict(dm, output_margin=True))


def test_lgbm_ranker_accepts_sklearn_objective(data):
    sizes = np.diff(data.group_ptr)
    ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective("qbrank"), n_estimators=15, num_leaves=7,
                            min_child_samples=5, learning_rate=0.1, verbose=-1, n_jobs=1)
    ranker.fit(data.X, data.y, group=sizes, **lgbm_eval_kwargs(data.X, data.y), eval_group=[sizes],
               eval_metric=bpl.sklearn_metric("ndcg@5", display_name="bp_ndcg@5"))
    (curves,) = ranker.evals_result_.values()
    assert len(curves["bp_ndcg@5"]) == 15
    # LGBMRanker's default metric is its own ndcg@1..5: same conventions, same numbers.
    np.testing.assert_allclose(curves["bp_ndcg@5"], curves["ndcg@5"], rtol=1e-12)
    assert _ndcg(ranker.predict(data.X), data) > _ndcg(np.zeros(data.n_docs), data) + 0.05
    # A second fit on other data re-binds (no stale labels).
    ranker.fit(data.X, data.y[::-1].copy(), group=sizes[::-1].copy())


def test_xgbranker_refuses_custom_objectives_as_documented():
    with pytest.raises(ValueError, match="custom objective"):
        xgb.XGBRanker(objective=bpx.objective("mpboost"))
    assert "XGBRanker" in bpx.__doc__


def test_per_query_weights(data):
    nq = data.n_queries
    qw = np.linspace(0.5, 2.0, nq)
    rows = np.repeat(qw, np.diff(data.group_ptr))
    scores = np.random.default_rng(1).normal(size=data.n_docs)
    g_ref, h_ref = objectives.get("mpboost").grad_hess(scores, data.y, data.group_ptr, weights=qw)
    g, h = bpl.objective("mpboost")(scores, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr,
                                                        weight=rows).construct())
    np.testing.assert_allclose(g, g_ref)
    g, h = bpx.objective("mpboost")(scores, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr, weight=qw))
    np.testing.assert_allclose(g, g_ref, rtol=1e-6)  # XGBoost stores weights as float32
    bad = rows.copy()
    bad[data.group_ptr[2]] += 1.0
    with pytest.raises(ValueError, match="query 2"):
        bpl.objective("mpboost")(scores, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr,
                                                     weight=bad).construct())


def test_weighted_metrics_average_queries_like_the_frameworks(data):
    """With weights, the eval hooks give sum_q w_q m_q / sum_q w_q: LightGBM's weighted map@k
    exactly (it weights by the mean row weight of a query), and LightGBM's and XGBoost's
    weighted ndcg@k on data where every query has a relevant document. (Both frameworks add
    1, not w_q, for a query without one: there the values differ, see docs/metrics.md.)"""
    rng = np.random.default_rng(4)
    y = data.y.copy()
    y[data.group_ptr[:-1]] = np.maximum(y[data.group_ptr[:-1]], 1.0)  # no all-zero query
    qw = rng.uniform(0.1, 5.0, size=data.n_queries)
    rows = np.repeat(qw, np.diff(data.group_ptr))
    scores = rng.normal(size=data.n_docs)
    ds = bpl.dataset(data.X, y, group_ptr=data.group_ptr, weight=rows, init_score=scores)
    rec: dict = {}
    lgb.train({"objective": "regression", "metric": ["ndcg", "map"], "eval_at": [5], "learning_rate": 1e-12,
               "min_data_in_leaf": data.n_docs + 1, "verbose": -1, "num_threads": 1}, ds, 1, valid_sets=[ds],
              valid_names=["t"], feval=[bpl.metric("ndcg@5", display_name="bp_ndcg"),
                                        bpl.metric("map@5", display_name="bp_map")],
              callbacks=[lgb.record_evaluation(rec)])
    t = rec["t"]  # LightGBM keeps weights (and its query weights) in float32: agreement to ~1e-8
    assert t["bp_ndcg"][-1] == pytest.approx(t["ndcg@5"][-1], rel=1e-7)
    assert t["bp_map"][-1] == pytest.approx(t["map@5"][-1], rel=1e-7)
    unweighted = metrics.ndcg(scores, y, data.group_ptr, 5)
    assert abs(t["bp_ndcg"][-1] - unweighted) > 1e-4  # the weights do matter here
    dm = bpx.dmatrix(data.X, y, group_ptr=data.group_ptr, weight=qw, base_margin=scores)
    bst = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@5"}, dm, num_boost_round=0)
    ref = float(bst.eval(dm, name="t").split(":")[-1])
    _, mine = bpx.metric("ndcg@5")(scores, dm)
    assert mine == pytest.approx(ref, rel=1e-6)
    # LGBMRanker's eval_metric receives the row weights too.
    _, val, _ = bpl.sklearn_metric("ndcg@5")(y, scores, rows, np.diff(data.group_ptr))
    per_q = metrics.ndcg(scores, y, data.group_ptr, 5, per_query=True)
    assert val == pytest.approx(np.dot(qw, per_q) / qw.sum(), rel=1e-12)


def test_unsorted_contiguous_qid_works_for_xgboost(data):
    qid = np.repeat(np.arange(data.n_queries)[::-1] * 7 + 3, np.diff(data.group_ptr))  # contiguous, descending
    with pytest.raises(Exception, match="sorted"):
        xgb.DMatrix(data.X, label=data.y, qid=qid)
    d = bpx.dmatrix(data.X, data.y, qid=qid)
    np.testing.assert_array_equal(d.get_uint_info("group_ptr"), data.group_ptr)
    ds = bpl.dataset(data.X, data.y, qid=qid).construct()
    np.testing.assert_array_equal(ds.get_group(), np.diff(data.group_ptr))


def test_clear_errors(data):
    with pytest.raises(ValueError, match="unknown parameter"):
        bpl.objective("mpboost", dff="logdd")
    with pytest.raises(ValueError, match="unknown objective"):
        bpx.objective("lambdamart")
    no_group = lgb.Dataset(data.X, label=data.y).construct()
    with pytest.raises(ValueError, match="no query information"):
        bpl.objective("qbrank")(np.zeros(data.n_docs), no_group)
    with pytest.raises(ValueError, match="no query information"):
        bpx.objective("qbrank")(np.zeros(data.n_docs), xgb.DMatrix(data.X, label=data.y))
    obj = bpl.objective("mpboost")
    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr).construct()
    obj(np.zeros(data.n_docs), ds)
    ds.set_label(data.y[::-1].copy())
    with pytest.raises(ValueError, match="changed between"):
        obj(np.zeros(data.n_docs), ds)
    with pytest.raises(ValueError, match="finite"):
        bpx.objective("mpboost")(np.full(data.n_docs, np.nan), bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr))
    # Weights that change between rounds are noticed like labels.
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    obj = bpx.objective("qbrank")
    obj(np.zeros(data.n_docs), dm)
    dm.set_weight(np.full(data.n_queries, 3.0))
    with pytest.raises(ValueError, match="weights of this training set changed"):
        obj(np.zeros(data.n_docs), dm)


#: Values that some parameter kinds refuse; each is used for a parameter only where its declaration does.
FOREIGN = [float("nan"), float("inf"), -1.0, 0.5, True, "zzz_nope", None, [0.0, -1.0], [[-1, 0]], [[0.5, 1.5]],
           object()]


def _beyond(p: objectives.Param) -> list:
    """Numbers just outside a numeric parameter's declared range."""
    if p.kind not in ("real", "int"):
        return []
    step = (lambda end: 1) if p.kind == "int" else (lambda end: max(1.0, abs(end)))
    out = []
    if p.low is not None:
        out += [p.low - step(p.low)] + ([p.low] if p.low_open else [])
    if p.high is not None:
        out.append(p.high + step(p.high))
    return out


def _refused_values(name: str, param: str) -> list:
    """What objective ``name`` must refuse for ``param``, from its declaration: values its check
    refuses, and for a parameter the entry fixes, the declared alternatives to the fixed value."""
    entry = objectives.get(name)
    p = entry.loss_class.declared_params()[param]
    out = []
    for value in _beyond(p) + FOREIGN:
        try:
            p.check(value, param, objective=entry.loss_class.name)
        except (ValueError, TypeError):
            out.append(value)
    if param in entry.fixed:
        others = list(p.choices) + [p.default] + list(p.search.choices if p.search else ())
        out += [v for v in dict.fromkeys(others) if v != entry.fixed[param]]
    return out


BAD_PARAMETERS = [(name, param) for name in OBJECTIVES for param in objectives.get(name).defaults]


@pytest.mark.parametrize("make", [bpl.objective, bpl.sklearn_objective, bpx.objective])
@pytest.mark.parametrize("name,param", BAD_PARAMETERS, ids=[f"{n}-{p}" for n, p in BAD_PARAMETERS])
def test_invalid_parameter_values_fail_when_the_objective_is_built(make, name, param):
    """Not at the first boosting round, deep inside lgb.train/xgb.train; the message names the
    objective and the parameter."""
    entry = objectives.get(name)
    values = _refused_values(name, param)
    assert values
    for value in values:
        with pytest.raises((ValueError, TypeError)) as refused:
            make(name, **{param: value})
        msg = str(refused.value)
        assert param in msg and (name in msg or entry.loss_class.name in msg), (value, msg)


def test_explicit_pairs_are_refused_on_cv_folds_and_other_sets(data):
    """Pairs are row indices of one training set: a cv fold (a subset) would read other rows."""
    pairs = np.stack([data.group_ptr[:-1], data.group_ptr[:-1] + 1], axis=1)  # within queries, every row range
    with pytest.raises(ValueError, match="subset"):
        lgb.cv({**LGB_PARAMS, "objective": bpl.objective("qbrank", pairs=pairs)},
               bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 2, nfold=3, stratified=False)
    with pytest.raises(ValueError, match="explicit pairs index row .* fold|second one"):
        xgb.cv(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 2, nfold=3,
               obj=bpx.objective("qbrank", pairs=pairs))
    few = np.array([[0, 1]])  # indices valid in every fold: still refused at the second fold
    with pytest.raises(ValueError, match="second one"):
        xgb.cv(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 2, nfold=3,
               obj=bpx.objective("qbrank", pairs=few))
    obj = bpx.objective("qbrank", pairs=few)
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    xgb.train(XGB_PARAMS, dm, 2, obj=obj)
    xgb.train(XGB_PARAMS, dm, 2, obj=obj)  # the same set again: fine
    with pytest.raises(ValueError, match="second one"):
        xgb.train(XGB_PARAMS, bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 2, obj=obj)


def test_row_index_parameters_come_from_the_objective_declaration():
    """The adapters special-case no parameter name: the registry says which parameters hold rows."""
    from types import SimpleNamespace

    from boostplug.keyed_pairs import given_row_params

    assert objectives.get("qbrank").row_params == ("pairs", "labeled_rows")
    assert [n for n in objectives.names() if objectives.get(n).row_params] == ["qbrank"]
    assert given_row_params(objectives.get("qbrank"), {"pairs": [[0, 1]], "w": 0.5}) == {"pairs": [[0, 1]]}
    stub = SimpleNamespace(row_params=("anchors",))
    assert given_row_params(stub, {"anchors": [[0, 1]], "w": 2.0}) == {"anchors": [[0, 1]]}
    assert given_row_params(stub, {"anchors": None, "pairs": [[0, 1]]}) == {}


def test_explicit_pairs_alone_are_a_valid_objective(data):
    pairs = np.array([[0, 1], [5, 4]])
    obj = bpl.objective("qbrank", pairs=pairs, label_pairs=False, labeled="none")
    g, _ = obj(np.zeros(data.n_docs), bpl.dataset(data.X, data.y, group_ptr=data.group_ptr).construct())
    assert g[0] < 0 < g[1] and g[5] < 0 < g[4] and np.count_nonzero(g) == 4


def test_objectives_pickle_without_their_bindings(data):
    import pickle

    obj = bpl.objective("mpboost", ddf="ldd", alpha=0.3)
    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr).construct()
    scores = np.random.default_rng(2).normal(size=data.n_docs)
    g, h = obj(scores, ds)
    clone = pickle.loads(pickle.dumps(obj))
    assert clone.params == {"ddf": "ldd", "alpha": 0.3}
    g2, h2 = clone(scores, ds)
    np.testing.assert_array_equal(g, g2)
    np.testing.assert_array_equal(h, h2)


def test_lgb_feval_misused_in_lgbm_ranker_says_what_to_use(data):
    sizes = np.diff(data.group_ptr)
    ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective("mpboost"), n_estimators=2, verbose=-1, n_jobs=1)
    with pytest.raises(TypeError, match="sklearn_metric"):
        ranker.fit(data.X, data.y, group=sizes, **lgbm_eval_kwargs(data.X, data.y), eval_group=[sizes],
                   eval_metric=bpl.metric("ndcg@5"))


def test_loss_metrics_stop_in_the_right_direction(data, vali):
    """r2 is a loss: LightGBM is told lower is better, XGBoost's callback minimises it, and
    err@5 (a score whose name XGBoost would minimise by default) is maximised."""
    assert bpl.metric("r2")(np.zeros(data.n_docs), bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
                            .construct())[2] is False
    assert bpl.metric("err@5")(np.zeros(data.n_docs), bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
                               .construct())[2] is True
    assert bpx.early_stopping(3, "r2").maximize is False
    assert bpx.early_stopping(3, "err@5").maximize is True
    with pytest.raises(ValueError, match="maximize"):
        bpx.early_stopping(3, "my_name")
    dtrain = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    dvali = bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr)
    hist: dict = {}
    xb = xgb.train(XGB_PARAMS, dtrain, 60, obj=bpx.objective("mpboost"), evals=[(dvali, "vali")],
                   custom_metric=bpx.metric("r2"), callbacks=[bpx.early_stopping(5, "r2")],
                   evals_result=hist, verbose_eval=False)
    r2 = hist["vali"]["r2"]
    assert r2[xb.best_iteration] == min(r2)


# ---- the builders refuse weights and initial scores that the frameworks would mangle ------------
_BUILDERS = {"lightgbm": ("boostplug.lightgbm", "dataset", "init_score"),
             "xgboost": ("boostplug.xgboost", "dmatrix", "base_margin")}


def _builder(framework):
    import importlib

    module, fn, start = _BUILDERS[framework]
    return getattr(importlib.import_module(module), fn), start


@pytest.mark.parametrize("framework", sorted(_BUILDERS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1.0])
@pytest.mark.parametrize("per", ["query", "row"])
def test_builders_refuse_bad_weights_naming_the_query(framework, bad, per) -> None:
    build, _ = _builder(framework)
    X, y, qid = np.zeros((7, 2)), np.array([0, 1, 2, 0, 1, 1, 2.0]), np.array([5, 5, 5, 9, 9, 9, 9])
    w = np.array([1.0, bad]) if per == "query" else np.array([1, 1, 1, bad, bad, bad, bad])
    where = "" if per == "query" else " at row 3"
    with pytest.raises(ValueError, match=rf"query 1 \(rows 3..6\) has weight {re.escape(repr(float(bad)))}{where}"):
        build(X, y, qid=qid, weight=w)


@pytest.mark.parametrize("framework", sorted(_BUILDERS))
def test_builders_refuse_nonfinite_initial_scores(framework) -> None:
    build, start = _builder(framework)
    X, y, qid = np.zeros((4, 2)), np.array([0, 1, 2, 0.0]), np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=rf"{start} must be finite; entry 2 is nan"):
        build(X, y, qid=qid, **{start: np.array([0.0, 1.0, np.nan, 2.0])})


def test_lightgbm_dataset_keeps_valid_weights_per_row() -> None:
    from boostplug import lightgbm as bpl

    X, y, qid = np.zeros((5, 2)), np.array([0, 1, 2, 0, 1.0]), np.array([0, 0, 0, 1, 1])
    ds = bpl.dataset(X, y, qid=qid, weight=[0.5, 2.0]).construct()
    np.testing.assert_array_equal(ds.get_weight(), [0.5, 0.5, 0.5, 2.0, 2.0])


def test_framework_weighting_reproduces_the_frameworks_weighted_ndcg_with_irrelevant_queries(data):
    """Queries without a relevant document: LightGBM's and XGBoost's weighted ndcg@k add 1 for
    them but w_q to the denominator; weighting="framework" gives their number, the default the
    weighted mean (which differs there)."""
    rng = np.random.default_rng(5)
    y = data.y.copy()
    gp = data.group_ptr
    for q in range(0, data.n_queries, 3):
        y[gp[q]:gp[q + 1]] = 0.0
    qw = rng.uniform(0.5, 2.0, size=data.n_queries)
    rows = np.repeat(qw, np.diff(gp))
    scores = rng.normal(size=data.n_docs)
    ds = bpl.dataset(data.X, y, group_ptr=gp, weight=rows, init_score=scores)
    rec: dict = {}
    lgb.train({"objective": "regression", "metric": "ndcg", "eval_at": [5], "learning_rate": 1e-12,
               "min_data_in_leaf": data.n_docs + 1, "verbose": -1, "num_threads": 1}, ds, 1, valid_sets=[ds],
              valid_names=["t"], feval=[bpl.metric("ndcg@5", display_name="mean"),
                                        bpl.metric("ndcg@5", display_name="fw", weighting="framework")],
              callbacks=[lgb.record_evaluation(rec)])
    t = rec["t"]
    assert t["fw"][-1] == pytest.approx(t["ndcg@5"][-1], rel=1e-7)
    per_q = metrics.ndcg(scores, y, gp, 5, per_query=True)
    assert t["mean"][-1] == pytest.approx(np.dot(qw, per_q) / qw.sum(), rel=1e-6)
    assert abs(t["mean"][-1] - t["ndcg@5"][-1]) > 1e-3
    dm = bpx.dmatrix(data.X, y, group_ptr=gp, weight=qw, base_margin=scores)
    bst = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@5"}, dm, num_boost_round=0)
    ref = float(bst.eval(dm, name="t").split(":")[-1])
    assert bpx.metric("ndcg@5", weighting="framework")(scores, dm)[1] == pytest.approx(ref, rel=1e-6)
    _, val, _ = bpl.sklearn_metric("ndcg@5", weighting="framework")(y, scores, rows, np.diff(gp))
    assert val == pytest.approx(t["ndcg@5"][-1], rel=1e-6)
    with pytest.raises(ValueError, match="'map@5' is not an NDCG"):
        bpl.metric("map@5", weighting="framework")
    with pytest.raises(ValueError, match="weighting must be one of"):
        bpx.metric("ndcg@5", weighting="lightgbm")
    import pickle

    again = pickle.loads(pickle.dumps(bpl.metric("ndcg@5", weighting="framework")))
    assert again.spec.weighting == "framework"


def test_csr_absent_entries_are_zero_for_lightgbm_and_missing_for_xgboost(data):
    """What README and docs/data.md say of dense=False: LightGBM's model from CSR is the dense one;
    XGBoost's is the dense one with missing=0.0, and differs from the dense one with zeros."""
    import scipy.sparse as sp

    X = np.where(np.random.default_rng(6).random(data.X.shape) < 0.4, 0.0, data.X)
    csr, sizes = sp.csr_matrix(X), np.diff(data.group_ptr)
    lp = {"objective": "lambdarank", "verbose": -1, "num_threads": 1, "deterministic": True, "min_data_in_leaf": 3}
    lgb_pred = [lgb.train(lp, lgb.Dataset(m, data.y, group=sizes), 5).predict(X) for m in (X, csr)]
    np.testing.assert_array_equal(lgb_pred[0], lgb_pred[1])
    xp = {"objective": "rank:ndcg", "nthread": 1, "max_depth": 3}
    fit = {name: xgb.train(xp, xgb.DMatrix(m, data.y, qid=data.qid, **kw), 5)
           for name, m, kw in (("csr", csr, {}), ("zero_missing", X, {"missing": 0.0}), ("dense", X, {}))}
    dtest = xgb.DMatrix(X)
    np.testing.assert_array_equal(fit["csr"].predict(dtest), fit["zero_missing"].predict(dtest))
    assert not np.array_equal(fit["csr"].predict(dtest), fit["dense"].predict(dtest))
