"""QBRank's Algorithm 2 on LightGBM with the exact line search (train_line_search)."""

from __future__ import annotations

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from boostplug.frameworks.lightgbm.line_search import train_line_search  # noqa: E402
from boostplug.groups import group_ptr_from_qid  # noqa: E402
from boostplug import objectives  # noqa: E402
from boostplug.objectives import qbrank  # noqa: E402
from tests._helpers import linear_graded_problem  # noqa: E402

TREE = {"num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1}


def _problem(seed=0, n_queries=30):
    return linear_graded_problem(seed, n_queries, one_grade_first=True)  # a single-label query (the labeled term)


def _mse_feval(preds, data):
    return "mse", float(np.mean((preds - data.get_label()) ** 2)), False


@pytest.mark.parametrize("objective_params", [{}, {"hessian": "mean"}, {"tau": 1.0, "labeled": "all"}],
                         ids=["default", "mean", "tau1-all"])
def test_risk_never_increases_and_saved_model_is_the_true_model(objective_params, tmp_path):
    X, y, sizes, gp = _problem()
    init = np.random.default_rng(1).normal(scale=0.5, size=len(y))
    ds = lgb.Dataset(X, y, group=sizes, init_score=init, free_raw_data=False)
    bst, rec = train_line_search(TREE, ds, 15, objective_params=objective_params, eta=0.3)
    assert len(rec.steps) == 15 and bst.current_iteration() == 15
    risk = np.array(rec.risk)
    assert np.all(np.diff(risk) <= 1e-12 * risk[:-1])
    assert risk[-1] < 0.8 * risk[0]
    prep = objectives.get("qbrank").prepare(y, gp, **objective_params)
    assert rec.risk[0] == pytest.approx(prep.loss(init), rel=1e-12)  # init_score is h_0
    assert rec.risk[-1] == pytest.approx(prep.loss(rec.train_scores), rel=1e-12)
    np.testing.assert_allclose(bst.predict(X, raw_score=True) + init, rec.train_scores, rtol=0, atol=1e-10)
    path = tmp_path / "model.txt"
    bst.save_model(path)
    for loaded in (lgb.Booster(model_file=str(path)), lgb.Booster(model_str=bst.model_to_string())):
        np.testing.assert_allclose(loaded.predict(X, raw_score=True) + init, rec.train_scores, rtol=0, atol=1e-10)


def test_each_tree_is_scaled_by_eta_times_the_exact_minimiser():
    X, y, sizes, gp = _problem(seed=2)
    ds = lgb.Dataset(X, y, group=sizes, free_raw_data=False)
    bst, rec = train_line_search(TREE, ds, 4, eta=0.5)
    prep = objectives.get("qbrank").prepare(y, gp)
    h = np.zeros(len(y))
    for m, s in enumerate(rec.steps):
        tree = bst.predict(X, raw_score=True, start_iteration=m, num_iteration=1)
        raw = tree / (0.5 * s)  # the unscaled tree g_m
        assert qbrank.line_search(prep, h, raw) == pytest.approx(s, rel=1e-9)
        # Without shrinkage R along g_m would be minimal at s: R(h + t g) >= R(h + s g).
        for t in (0.5 * s, 0.9 * s, 1.1 * s, 2 * s):
            assert prep.loss(h + t * raw) >= prep.loss(h + s * raw) - 1e-12
        h = h + tree


def test_validation_sets_feval_and_early_stopping():
    X, y, sizes, gp = _problem(seed=3, n_queries=40)
    Xv, yv, sv, gpv = _problem(seed=4, n_queries=15)
    init_v = np.full(len(yv), 0.25)
    ds = lgb.Dataset(X, y, group=sizes, free_raw_data=False)
    dv = lgb.Dataset(Xv, yv, group=sv, init_score=init_v, reference=ds, free_raw_data=False)
    evals: dict = {}
    bst, rec = train_line_search(
        {**TREE, "learning_rate": 0.5}, ds, 60, valid_sets=[ds, dv], valid_names=["train", "vali"],
        feval=_mse_feval, callbacks=[lgb.record_evaluation(evals), lgb.early_stopping(3, verbose=False)],
    )
    assert rec.eta == 0.5  # taken from learning_rate
    assert set(evals) == {"train", "vali"} and set(evals["vali"]) == {"qbrank_risk", "mse"}
    np.testing.assert_allclose(evals["train"]["qbrank_risk"], rec.risk[1:], rtol=1e-12)
    n_rounds = len(rec.steps)
    np.testing.assert_allclose(bst.predict(Xv, raw_score=True, num_iteration=n_rounds) + init_v,
                               rec.valid_scores["vali"], atol=1e-10)
    vali_risk = objectives.get("qbrank").prepare(yv, gpv).loss(rec.valid_scores["vali"])
    assert evals["vali"]["qbrank_risk"][-1] == pytest.approx(vali_risk, rel=1e-12)
    # Early stopping (any metric, patience 3) fired on the vali mse, computed from the true scores.
    assert n_rounds < 60 and bst.best_iteration == n_rounds - 3
    best = bst.best_iteration
    assert evals["vali"]["mse"][best - 1] == min(evals["vali"]["mse"])
    assert bst.best_score["vali"]["mse"] == evals["vali"]["mse"][best - 1]
    assert lgb.Booster(model_str=bst.model_to_string()).predict(Xv, raw_score=True).shape == (len(yv),)


def test_the_public_function_returns_booster_and_record():
    """``boostplug.lightgbm.train_line_search`` is this function; it returns ``(booster, record)``,
    and the result is no booster: the booster's attributes are read from the booster."""
    from boostplug import lightgbm as bpl

    assert bpl.train_line_search is train_line_search
    X, y, sizes, _ = _problem(seed=5)
    result = bpl.train_line_search(TREE, lgb.Dataset(X, y, group=sizes, free_raw_data=False), 3, eta=0.5)
    bst, rec = result
    assert isinstance(bst, lgb.Booster) and result.booster is bst and result.record is rec
    assert not hasattr(bst, "qbrank_record")
    for name in ("qbrank_record", "predict", "__array__", "_repr_html_", "_handle"):
        assert not hasattr(result, name)


@pytest.mark.parametrize("params,kwargs,exc,match", [
    ({"metric": "ndcg"}, {}, ValueError, "built-in metrics"),
    ({"learning_rate": 0.1}, {"eta": 0.2}, ValueError, "give the shrinkage once"),
    ({}, {"eta": 0.0}, ValueError, "eta"),
    ({"boosting": "dart"}, {}, ValueError, "boosting='gbdt'"),
    ({"objective": "lambdarank"}, {}, ValueError, "always trains QBRank"),
    ({"linear_tree": True}, {}, ValueError, "linear_tree"),
    ({}, {"objective_params": {"w": 2.0}}, ValueError, r"w must be a finite number in \[0, 1\]"),
    ({}, {"objective_params": {"gamma": 1}}, ValueError, "gamma"),
])
def test_bad_arguments_raise(params, kwargs, exc, match):
    X, y, sizes, _ = _problem()
    with pytest.raises(exc, match=match):
        train_line_search({**TREE, **params}, lgb.Dataset(X, y, group=sizes), 2, **kwargs)


def test_dataset_without_groups_or_with_mixed_weights_raises():
    X, y, sizes, _ = _problem()
    with pytest.raises(ValueError, match="no query information"):
        train_line_search(TREE, lgb.Dataset(X, y), 2)
    w = np.ones(len(y))
    w[1] = 2.0
    with pytest.raises(ValueError, match="different row weights"):
        train_line_search(TREE, lgb.Dataset(X, y, group=sizes, weight=w), 2)
    with pytest.raises(TypeError, match="lightgbm.Dataset"):
        train_line_search(TREE, (X, y), 2)


@pytest.mark.realdata
def test_mq2008_fold_ndcg_rises(mq2008_dir):
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    gp = group_ptr_from_qid(qid)
    ds = lgb.Dataset(X.toarray(), y, group=np.diff(gp), free_raw_data=False)
    _, rec = train_line_search({"num_leaves": 20, "min_data_in_leaf": 20, "verbose": -1}, ds, 30, eta=0.1)
    risk = np.array(rec.risk)
    assert np.all(np.diff(risk) <= 1e-12 * risk[:-1]) and risk[-1] < risk[0]
    s = rec.train_scores

    def ndcg10(scores):
        vals = []
        for a, b in zip(gp[:-1], gp[1:]):
            lab = y[a:b]
            ideal = np.sort(lab)[::-1][:10]
            disc = 1 / np.log2(np.arange(2, 12))
            z = np.sum((2 ** ideal - 1) * disc[:len(ideal)])
            if z > 0:
                order = np.argsort(-scores[a:b], kind="stable")[:10]
                vals.append(np.sum((2 ** lab[order] - 1) * disc[:len(order)]) / z)
        return float(np.mean(vals))

    assert ndcg10(s) > ndcg10(np.zeros(len(y))) + 0.05
