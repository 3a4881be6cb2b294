"""The reference boosters as scikit-learn estimators: ``score`` (mean NDCG@10),
``feature_importances_``, per-query ``sample_weight`` (an integer weight w trains as if the
query were repeated w times, for every booster and variant), ``clone``/``get_params`` and
``cross_validate`` with metadata routing."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GroupKFold, cross_validate

from boostplug import metrics
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost, RankingBooster, load
from boostplug.groups import group_ptr_from_qid


def data(seed: int, n_queries: int = 3, max_docs: int = 12, n_feat: int = 4, nan_prob: float = 0.1):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, max_docs + 1, size=n_queries)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, n_feat)), 1)
    X[:, 1] *= 1 / 3   # values that show a changed summation order in the last bit
    X[rng.random((n, n_feat)) < nan_prob] = np.nan
    y = rng.integers(0, 3, size=n).astype(np.float64)
    return X, y, np.repeat(np.arange(n_queries), sizes)


def repeat_queries(X, y, qid, times, pairs=None):
    """The data with query ``q`` repeated ``times[q]`` times (each copy its own query id), and
    the explicit ``pairs`` copied along with their query."""
    rows, new_qid, new_pairs, start = [], [], [], 0
    for q, w in enumerate(times):
        idx = np.flatnonzero(qid == q)
        for _ in range(w):
            if pairs is not None:
                inq = np.isin(pairs[:, 0], idx)
                new_pairs.append(pairs[inq] - idx[0] + start)
            rows.append(idx)
            new_qid.append(np.full(idx.size, len(new_qid)))
            start += idx.size
    rows = np.concatenate(rows)
    out = (X[rows], y[rows], np.concatenate(new_qid))
    return out + (np.concatenate(new_pairs),) if pairs is not None else out


VARIANTS: dict[str, Callable[[], RankingBooster]] = {
    "rb-d": lambda: RankBoost(variant="rb-d", n_rounds=12),
    "rb-c": lambda: RankBoost(variant="rb-c", n_rounds=12),
    "rb-c-ranklib": lambda: RankBoost(variant="rb-c", thresholds="ranklib", n_rounds=12),
    "rankboost+": lambda: RankBoost(variant="rankboost+", n_rounds=12, random_state=0),
    "rankboost+exact": lambda: RankBoost(variant="rankboost+", efficient=False, n_rounds=12),
    "adarank-paper": lambda: AdaRank(measure="ndcg@5", n_rounds=12, tolerance=None),
    "adarank-multiplicative": lambda: AdaRank(measure="map", n_rounds=12, tolerance=None, update="multiplicative"),
    "adarank-enqueue": lambda: AdaRank(measure="ndcg@5", n_rounds=12, enqueue=True, max_consecutive=2),
    "mpboost-binary": lambda: MPBoost(ddf="binary", n_rounds=12),
    "mpboost-ldd": lambda: MPBoost(ddf="ldd", n_rounds=12),
    "mpboost-logdd": lambda: MPBoost(ddf="logdd", n_rounds=12),
    "mpboost-logitdd": lambda: MPBoost(ddf="logitdd", n_rounds=12),
    "ndcgboost": lambda: NDCGBoost(n_rounds=12),
}
PAIRWISE = ["rb-d", "rb-c", "rankboost+", "rankboost+exact", "mpboost-ldd"]


def assert_same_model(a: RankingBooster, b: RankingBooster, X: np.ndarray, tol: float = 1e-9) -> None:
    assert a.rankers_ == b.rankers_
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=tol, atol=tol)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=tol, atol=tol)
    assert a.stop_reason_ == b.stop_reason_


# ---- sample_weight: integer weight = repeated query ---------------------------------------------
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_integer_query_weights_equal_repeated_queries(name: str) -> None:
    X, y, qid = data(12)
    weighted = VARIANTS[name]().fit(X, y, qid=qid, sample_weight=[2, 1, 3])
    Xr, yr, qr = repeat_queries(X, y, qid, [2, 1, 3])
    repeated = VARIANTS[name]().fit(Xr, yr, qid=qr)
    assert len(weighted.rankers_) >= 2, weighted.stop_reason_
    assert_same_model(weighted, repeated, X)
    # the training quantities in history_ are those of the repeated data too
    for hw, hr in zip(weighted.history_, repeated.history_):
        for key, v in hw.items():
            if key != "seconds" and isinstance(v, float) and np.isfinite(v):
                assert v == pytest.approx(hr[key], rel=1e-9, abs=1e-12), key
    # and the unweighted fit is a different model (the weights did something)
    plain = VARIANTS[name]().fit(X, y, qid=qid)
    assert plain.rankers_ != weighted.rankers_ or not np.allclose(plain.weights_, weighted.weights_)


def test_adarank_skipped_queries_drop_their_weights() -> None:
    X, y, qid = data(12)
    y[qid == 1] = 0.0   # no relevant document: empty="skip" leaves the query out
    make = lambda: AdaRank(measure="map", empty="skip", n_rounds=12, tolerance=None)  # noqa: E731
    weighted = make().fit(X, y, qid=qid, sample_weight=[2, 5, 3])
    Xr, yr, qr = repeat_queries(X, y, qid, [2, 1, 3])
    assert_same_model(weighted, make().fit(Xr, yr, qid=qr), X)
    for hw, hr in zip(weighted.history_, make().fit(Xr, yr, qid=qr).history_):
        assert hw["train_measure"] == pytest.approx(hr["train_measure"], rel=1e-12)


@pytest.mark.parametrize("name", PAIRWISE)
def test_weighted_explicit_pairs_equal_repeated_queries_and_pairs(name: str) -> None:
    X, y, qid = data(5)
    gp = group_ptr_from_qid(qid)
    rng = np.random.default_rng(0)
    pairs = []
    for q in range(3):  # random within-query preferences, some against the labels
        a, b = gp[q], gp[q + 1]
        for _ in range(8):
            i, j = rng.choice(np.arange(a, b), size=2, replace=False)
            pairs.append((i, j))
    pairs = np.array(pairs)
    weighted = VARIANTS[name]().fit(X, y, qid=qid, pairs=pairs, sample_weight=[2, 1, 3])
    Xr, yr, qr, pr = repeat_queries(X, y, qid, [2, 1, 3], pairs)
    repeated = VARIANTS[name]().fit(Xr, yr, qid=qr, pairs=pr)
    assert len(weighted.rankers_) >= 2, weighted.stop_reason_
    assert_same_model(weighted, repeated, X)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_equal_weights_are_no_weights_and_row_weights_are_query_weights(name: str) -> None:
    X, y, qid = data(3)
    plain = VARIANTS[name]().fit(X, y, qid=qid)
    equal = VARIANTS[name]().fit(X, y, qid=qid, sample_weight=[0.7, 0.7, 0.7])
    assert equal.rankers_ == plain.rankers_ and equal.weights_ == plain.weights_
    by_query = VARIANTS[name]().fit(X, y, qid=qid, sample_weight=[2.0, 1.0, 3.0])
    by_row = VARIANTS[name]().fit(X, y, qid=qid, sample_weight=np.array([2.0, 1.0, 3.0])[qid])
    assert by_row.rankers_ == by_query.rankers_ and by_row.weights_ == by_query.weights_


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_zero_weight_removes_the_query(name: str) -> None:
    X, y, qid = data(4)
    weighted = VARIANTS[name]().fit(X, y, qid=qid, sample_weight=[1.0, 0.0, 2.0])
    keep = qid != 1
    removed = VARIANTS[name]().fit(X[keep], y[keep], qid=qid[keep], sample_weight=[1.0, 2.0])
    assert_same_model(weighted, removed, X)


def test_zero_weight_removes_the_query_with_explicit_pairs() -> None:
    X, y, qid = data(4)
    gp = group_ptr_from_qid(qid)
    pairs = np.array([(gp[q], gp[q] + 1) for q in range(3)] + [(gp[q] + 2, gp[q] + 3) for q in range(3)])
    weighted = RankBoost(n_rounds=5).fit(X, y, qid=qid, pairs=pairs, sample_weight=[1.0, 0.0, 1.0])
    keep = qid != 1
    new_index = np.cumsum(keep) - 1
    kept_pairs = new_index[pairs[keep[pairs[:, 0]]]]
    removed = RankBoost(n_rounds=5).fit(X[keep], y[keep], qid=qid[keep], pairs=kept_pairs)
    assert_same_model(weighted, removed, X)


@pytest.mark.parametrize("weights, message", [
    ([1.0, -1.0, 2.0], "sample_weight[1] = -1.0"),
    ([1.0, np.nan, 2.0], "sample_weight[1] = nan"),
    ([1.0, np.inf, 2.0], "sample_weight[1] = inf"),
    ([1.0, 2.0], "got 2 weights for"),
    ([], "sample_weight is empty"),
    ([0.0, 0.0, 0.0], "zero for every query"),
    ([["a"], ["b"], ["c"]], "1-d array of numbers"),
])
def test_bad_weights_are_refused_naming_the_value(weights: Any, message: str) -> None:
    X, y, qid = data(3)
    for est in (RankBoost(n_rounds=2), AdaRank(n_rounds=2), MPBoost(n_rounds=2), NDCGBoost(n_rounds=2)):
        with pytest.raises(ValueError, match=re.escape(message)):
            est.fit(X, y, qid=qid, sample_weight=weights)


def test_row_weights_that_differ_within_a_query_are_refused() -> None:
    X, y, qid = data(3)
    w = np.ones(len(y))
    w[np.flatnonzero(qid == 2)[1]] = 5.0
    with pytest.raises(ValueError, match="query 2 .* different row weights"):
        MPBoost(n_rounds=2).fit(X, y, qid=qid, sample_weight=w)


def test_weighted_pairs_across_queries_are_refused() -> None:
    X, y, qid = data(3)
    a, b = int(np.flatnonzero(qid == 0)[0]), int(np.flatnonzero(qid == 2)[0])
    pairs = np.array([[a, a + 1], [a, b]])
    for est in (RankBoost(n_rounds=2), MPBoost(n_rounds=2)):
        est.fit(X, y, qid=qid, pairs=pairs)  # unweighted: a pair may join any two rows
        with pytest.raises(ValueError, match=rf"pairs\[1\] = \({a}, {b}\) joins rows of queries 0 and 2"):
            est.fit(X, y, qid=qid, pairs=pairs, sample_weight=[1, 2, 1])


def test_weighted_model_round_trips_through_its_file(tmp_path) -> None:
    X, y, qid = data(3)
    model = MPBoost(n_rounds=6).fit(X, y, qid=qid, sample_weight=[2, 1, 3])
    model.save(tmp_path / "m.json")
    again = load(tmp_path / "m.json")
    assert np.array_equal(again.predict(X), model.predict(X))
    assert again.history_ == model.history_


# ---- score ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["rb-c", "adarank-paper", "mpboost-logdd", "ndcgboost"])
def test_score_is_mean_ndcg_at_10_with_library_conventions(name: str) -> None:
    X, y, qid = data(3)
    Xt, yt, qt = data(7, n_queries=4)
    yt[qt == 3] = 0.0   # a query without relevant documents counts 1
    model = VARIANTS[name]().fit(X, y, qid=qid)
    gp = group_ptr_from_qid(qt)
    per_q = metrics.ndcg(model.predict(Xt), yt, gp, k=10, per_query=True)
    assert per_q[3] == 1.0
    assert model.score(Xt, yt, qid=qt) == pytest.approx(float(np.mean(per_q)), abs=1e-15)
    assert model.score(Xt, yt, group_ptr=gp) == model.score(Xt, yt, qid=qt)
    w = np.array([1.0, 0.0, 2.0, 3.0])
    assert model.score(Xt, yt, qid=qt, sample_weight=w) == pytest.approx(float(w @ per_q / w.sum()), abs=1e-15)
    assert model.score(Xt, yt, qid=qt, sample_weight=w[qt]) == model.score(Xt, yt, qid=qt, sample_weight=w)
    # not the training eval_metric: a model search compares the same number across settings
    other = clone(model).set_params(eval_metric="map@5").fit(X, y, qid=qid)
    assert other.score(Xt, yt, qid=qt) == model.score(Xt, yt, qid=qt)


def test_score_refuses_bad_input() -> None:
    X, y, qid = data(3)
    model = RankBoost(n_rounds=3).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="query groups"):
        model.score(X, y)
    with pytest.raises(ValueError, match="sample_weight\\[0\\] = -2.0"):
        model.score(X, y, qid=qid, sample_weight=[-2.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="y has length 3"):
        model.score(X, y[:3], qid=qid)
    with pytest.raises(NotFittedError):
        RankBoost().score(X, y, qid=qid)


# ---- feature_importances_ -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["rb-c", "rankboost+", "adarank-multiplicative", "mpboost-logdd", "ndcgboost"])
def test_feature_importances_are_normalised_abs_weights_per_feature(name: str) -> None:
    X, y, qid = data(3, n_feat=5)
    model = VARIANTS[name]().fit(X, y, qid=qid)
    hand = [0.0] * 5
    for r, w in zip(model.rankers_, model.weights_):
        hand[r["feature"]] += abs(w)
    hand = np.array(hand) / sum(hand)
    assert model.feature_importances_.shape == (5,)
    np.testing.assert_allclose(model.feature_importances_, hand, rtol=1e-12)
    assert model.feature_importances_.sum() == pytest.approx(1.0)


def test_feature_importances_by_hand_on_a_stored_model() -> None:
    model = MPBoost()
    model.n_features_in_ = 3
    model.rankers_ = [{"kind": "stump", "feature": 2, "threshold": 0.5},
                      {"kind": "stump", "feature": 0, "threshold": 1.0},
                      {"kind": "stump", "feature": 2, "threshold": -1.0}]
    model.weights_ = [0.5, -1.0, -0.5]
    np.testing.assert_allclose(model.feature_importances_, [0.5, 0.0, 0.5])


def test_feature_importances_without_rankers_are_zeros_and_need_a_fit() -> None:
    X, y, qid = data(3)
    y[:] = 1.0  # no preference pair: no ranker
    model = RankBoost(n_rounds=5).fit(X, y, qid=qid)
    assert model.rankers_ == []
    assert np.array_equal(model.feature_importances_, np.zeros(4))
    assert not hasattr(RankBoost(), "feature_importances_")
    with pytest.raises(NotFittedError, match="not fitted yet"):
        RankBoost().feature_importances_


# ---- scikit-learn machinery -----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_clone_and_get_params(name: str) -> None:
    X, y, qid = data(3)
    est = VARIANTS[name]()
    params = est.get_params()
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    fitted = clone(est).fit(X, y, qid=qid)
    assert not hasattr(clone(fitted), "rankers_")
    assert clone(fitted).get_params() == params


def test_qid_is_requested_by_default_for_fit_and_score() -> None:
    with sklearn.config_context(enable_metadata_routing=True):
        routing = RankBoost().get_metadata_routing()
        assert routing.fit.requests["qid"] is True
        assert routing.score.requests["qid"] is True
        assert routing.fit.requests["sample_weight"] is None  # opt-in, as in scikit-learn


def test_cross_validate_with_metadata_routing_and_group_folds() -> None:
    X, y, qid = data(11, n_queries=6)
    est = MPBoost(n_rounds=5)
    with sklearn.config_context(enable_metadata_routing=True):
        res = cross_validate(est, X, y, params={"qid": qid, "groups": qid}, cv=GroupKFold(3))
        # weights are opt-in (scikit-learn's rule): requested, they reach fit (per row, split
        # with the rows); here the test score stays unweighted
        w = np.array([1.0, 2.0, 1.0, 3.0, 1.0, 2.0])[qid]
        est_w = MPBoost(n_rounds=5).set_fit_request(sample_weight=True).set_score_request(sample_weight=False)
        res_w = cross_validate(est_w, X, y,
                               params={"qid": qid, "groups": qid, "sample_weight": w}, cv=GroupKFold(3))
    for i, (train, test) in enumerate(GroupKFold(3).split(X, y, qid)):
        model = MPBoost(n_rounds=5).fit(X[train], y[train], qid=qid[train])
        assert res["test_score"][i] == model.score(X[test], y[test], qid=qid[test])
        model_w = MPBoost(n_rounds=5).fit(X[train], y[train], qid=qid[train], sample_weight=w[train])
        assert res_w["test_score"][i] == model_w.score(X[test], y[test], qid=qid[test])
    assert not np.array_equal(res["test_score"], res_w["test_score"])


def test_weighted_pair_metric_equals_repeated_pairs() -> None:
    from boostplug.boosters._rankboost_kernels import PairSpan, laplacian

    rng = np.random.default_rng(1)
    pairs = np.array([[0, 1], [2, 1], [3, 0], [2, 3]])
    w = np.array([2.0, 1.0, 3.0, 1.0])
    rep = np.repeat(pairs, w.astype(int), axis=0)
    h = rng.normal(size=4)
    np.testing.assert_allclose(laplacian(pairs, h, 4, w), laplacian(rep, h, 4), rtol=1e-14)
    codes = np.asfortranarray(rng.integers(0, 3, size=(4, 2)).astype(np.int32))
    c_w, u_w, r2_w, n2_w = PairSpan(codes, pairs, w).residual(h)
    c_r, u_r, r2_r, n2_r = PairSpan(codes, rep).residual(h)
    assert (r2_w, n2_w) == pytest.approx((r2_r, n2_r), rel=1e-14)


def test_grid_search_with_metadata_routing() -> None:
    from sklearn.model_selection import GridSearchCV

    X, y, qid = data(11, n_queries=6)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(MPBoost(n_rounds=4), {"ddf": ["binary", "ldd"]}, cv=GroupKFold(2))
        search.fit(X, y, qid=qid, groups=qid)
    assert search.best_params_["ddf"] in ("binary", "ldd")
    assert search.best_estimator_.rankers_ == MPBoost(n_rounds=4, **search.best_params_).fit(X, y, qid=qid).rankers_
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def _brute_stop(curve: list[float], rounds: int) -> tuple[int, int]:
    """(best round, rounds trained), 1-based, of early stopping on one curve (maximised, a round
    better only if strictly so)."""
    best = 0
    for i, v in enumerate(curve):
        if v > curve[best]:
            best = i
        if i - best >= rounds:
            return best + 1, i + 1
    return best + 1, len(curve)


def test_the_rounds_running_out_before_the_patience_still_serve_the_best_round() -> None:
    """As CatBoost's loop and the workers do (docs/objectives/index.md, "Which round a model serves")."""
    X, y, qid = data(0, n_queries=12)
    Xv, yv, qv = data(1, n_queries=12)
    m = RankBoost(n_rounds=30, early_stopping_rounds=1000).fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    best, trained = _brute_stop([h["valid_0_ndcg@10"] for h in m.history_], 1000)
    assert trained == 30 > best and (m.best_iteration_, len(m.rankers_), m.stop_reason_) == (best, best,
                                                                                           "n_rounds reached")


def test_early_stopping_watches_one_eval_set_the_first_or_the_one_named() -> None:
    """The boosters' one rule: eval_set[0], or fit(early_stopping_set=i); the other sets are only
    recorded. A set whose score stalls at once (reversed labels) tells the sets apart."""
    X, y, qid = data(0, n_queries=12)
    Xv, yv, qv = data(1, n_queries=12)
    sets = [(Xv, yv, qv), (Xv, 3 - yv, qv)]
    full = RankBoost(n_rounds=80).fit(X, y, qid=qid, eval_set=sets)
    curves = [[h[f"valid_{i}_ndcg@10"] for h in full.history_] for i in range(2)]
    stops = [_brute_stop(c, 4) for c in curves]
    assert stops[0] != stops[1]
    for order in ([0, 1], [1, 0]):
        listed = [sets[i] for i in order]
        for named, watched in ((None, order[0]), (0, order[0]), (1, order[1]), (-1, order[1])):
            kw = {} if named is None else {"early_stopping_set": named}
            m = RankBoost(n_rounds=80, early_stopping_rounds=4).fit(X, y, qid=qid, eval_set=listed, **kw)
            best, trained = stops[watched]
            assert (m.best_iteration_, len(m.history_), len(m.rankers_)) == (best, trained, best), (order, named)
            assert m.stop_reason_ == ("n_rounds reached" if trained == 80 else
                                      f"early stopping: no ndcg@10 gain on eval_set[{order.index(watched)}] for 4 rounds")
    with pytest.raises(ValueError, match=r"^early_stopping_set=2, but eval_set has 2 sets$"):
        RankBoost(n_rounds=3).fit(X, y, qid=qid, eval_set=sets, early_stopping_set=2)
    with pytest.raises(ValueError, match=r"^early_stopping_set=1 needs an eval_set$"):
        RankBoost(n_rounds=3).fit(X, y, qid=qid, early_stopping_set=1)
    with pytest.raises(TypeError, match=r"^early_stopping_set must be an int \(an index into eval_set\), got '1'$"):
        RankBoost(n_rounds=3).fit(X, y, qid=qid, eval_set=sets, early_stopping_set="1")
