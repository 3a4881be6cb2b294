"""boostplug.xgboost.XGBRanker takes XGBoost's own convention of the query ids as a pandas column
named ``qid`` (fit, eval_set, predict, score), as xgboost.XGBRanker does on the same frame."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb

from boostplug import xgboost as bpx
from boostplug.data import make_ranking

pd = pytest.importorskip("pandas")

KW = dict(n_estimators=6, n_jobs=1, tree_method="hist", max_depth=3)


def _frame(seed, n_queries=10):
    d = make_ranking(n_queries=n_queries, docs_per_query=(5, 9), n_features=3, n_informative=2, seed=seed)
    X = pd.DataFrame(d.X, columns=["f0", "f1", "f2"])
    X.insert(1, "qid", np.repeat(np.arange(d.n_queries), d.sizes))  # not the first column: found by name
    return X, d.y


@pytest.fixture(scope="module")
def frames():
    return _frame(1), _frame(2)


def test_fit_with_a_qid_column_trains_as_xgboost_ranker(frames):
    (X, y), _ = frames
    ours = bpx.XGBRanker(objective="rank:ndcg", **KW).fit(X, y)
    theirs = xgb.XGBRanker(objective="rank:ndcg", **KW).fit(X, y)
    # the column is the query ids, not a feature, in both
    assert ours.get_booster().feature_names == theirs.get_booster().feature_names == ["f0", "f1", "f2"]
    assert ours.n_features_in_ == theirs.n_features_in_ == 3
    # same data and parameters, same booster code: the same trees (float32 predictions)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-6, atol=1e-6)
    explicit = bpx.XGBRanker(objective="rank:ndcg", **KW).fit(X.drop(columns="qid"), y, qid=X["qid"].to_numpy())
    np.testing.assert_array_equal(ours.predict(X), explicit.predict(X.drop(columns="qid")))


def test_boostplug_objective_with_a_qid_column(frames):
    (X, y), (Xv, yv) = frames
    ranker = bpx.XGBRanker(objective="rankboost", **KW)
    ranker.fit(X, y, eval_set=[(Xv, yv)])
    explicit = bpx.XGBRanker(objective="rankboost", **KW).fit(
        X.drop(columns="qid"), y, qid=X["qid"].to_numpy(),
        eval_set=[(Xv.drop(columns="qid"), yv)], eval_qid=[Xv["qid"].to_numpy()])
    np.testing.assert_array_equal(ranker.predict(Xv), explicit.predict(Xv.drop(columns="qid")))
    assert ranker.evals_result_ == explicit.evals_result_
    # score reads the column as xgboost.XGBRanker.score does
    assert ranker.score(Xv, yv) == explicit.score(Xv.drop(columns="qid"), yv, qid=Xv["qid"].to_numpy())


def test_eval_sets_mix_qid_columns_and_eval_qid(frames):
    (X, y), (Xv, yv) = frames
    plain = Xv.drop(columns="qid")
    ranker = bpx.XGBRanker(objective="rank:ndcg", **KW).fit(
        X, y, eval_set=[(Xv, yv), (plain, yv)], eval_qid=[None, Xv["qid"].to_numpy()])
    res = ranker.evals_result_
    assert res["validation_0"]["ndcg@10"] == res["validation_1"]["ndcg@10"]


def test_qid_column_next_to_qid_or_group_is_refused_as_by_xgboost(frames):
    (X, y), (Xv, yv) = frames
    qid = X["qid"].to_numpy()
    sizes = np.bincount(qid)
    for kw in ({"qid": qid}, {"group": sizes}):
        with pytest.raises(ValueError):
            xgb.XGBRanker(**KW).fit(X, y, **kw)
        key = next(iter(kw))
        with pytest.raises(ValueError, match=rf"X has a column named 'qid' .* and {key}= is given too"):
            bpx.XGBRanker(**KW).fit(X, y, **kw)
    with pytest.raises(ValueError):
        xgb.XGBRanker(**KW).fit(X, y, eval_set=[(Xv, yv)], eval_qid=[Xv["qid"].to_numpy()])
    with pytest.raises(ValueError, match=r"eval_set\[0\]\[0\] has a column named 'qid' .* eval_qid= is given too"):
        bpx.XGBRanker(**KW).fit(X, y, eval_set=[(Xv, yv)], eval_qid=[Xv["qid"].to_numpy()])
    fitted = bpx.XGBRanker(**KW).fit(X, y)
    with pytest.raises(ValueError, match=r"X has a column named 'qid' .* qid= is given too"):
        fitted.score(Xv, yv, qid=Xv["qid"].to_numpy())


def test_unsorted_contiguous_qid_column(frames):
    # xgboost.XGBRanker requires sorted ids; this ranker takes contiguous ones in any order, from a column too
    (X, y), _ = frames
    ids = np.random.default_rng(0).permutation(100)[X["qid"].to_numpy()]
    Xu = X.assign(qid=ids)
    with pytest.raises(xgb.core.XGBoostError):
        xgb.XGBRanker(objective="rank:ndcg", **KW).fit(Xu, y)
    ours = bpx.XGBRanker(objective="rank:ndcg", **KW).fit(Xu, y)
    np.testing.assert_array_equal(ours.predict(Xu), bpx.XGBRanker(objective="rank:ndcg", **KW).fit(X, y).predict(X))


def test_without_any_query_ids_the_error_stands(frames):
    (X, y), _ = frames
    with pytest.raises(ValueError, match="pass exactly one of qid="):
        bpx.XGBRanker(**KW).fit(X.drop(columns="qid"), y)
