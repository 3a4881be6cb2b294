"""The registered ``rank_ndcg``, ``rank_pairwise`` and ``rank_map``: XGBoost's rank:ndcg,
rank:pairwise and rank:map through the plugin path grow the built-ins' trees (split features,
conditions and default directions equal, leaf values to 1e-12 relative) over 100 rounds, at
XGBoost's defaults and with its parameters set, the "mean" pairs drawn as XGBoost draws them;
their pair weights against brute force; XGBoost's generator against the C++ standard's check
value; they train on LightGBM; bad settings are refused naming the value."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pytest

from boostplug import objectives
from boostplug.data import load_example
from boostplug.objectives import _xgb_lambdarank_kernels as X
from boostplug.objectives.xgb_lambdarank import RankMAP, RankNDCG, RankPairwise
from tests.objectives._same_trees import assert_same_xgb_trees

xgb = pytest.importorskip("xgboost")
from boostplug import xgboost as bpx  # noqa: E402  (needs xgboost)

#: XGBoost's built-in of each copy
BUILTIN = {"rank_ndcg": "rank:ndcg", "rank_pairwise": "rank:pairwise", "rank_map": "rank:map"}


def _train_both(train, name: str, params: dict, rounds: int, **booster):
    """XGBoost's built-in and the plugin with the objective's ``params``, one thread (the sums'
    order is XGBoost's either way: queries are independent), both from ``base_score=0``."""
    def fit(**kwargs):
        dm = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
        return xgb.train(bpx.params(nthread=1, **booster, **kwargs.pop("own", {})), dm, rounds, **kwargs)

    return fit(own={**params, "objective": BUILTIN[name]}), fit(obj=bpx.objective(name, **params))


@pytest.fixture(scope="module")
def example():
    return load_example()[0]


@pytest.fixture(scope="module")
def binary(example):
    """The example with relevant = grade >= 1: rank:map takes binary labels only."""
    return dataclasses.replace(example, y=(example.y >= 1).astype(np.float64))


def _data(name, example, binary):
    return binary if name == "rank_map" else example


@pytest.mark.parametrize("name", list(BUILTIN))
def test_default_settings_grow_xgboosts_trees(name, example, binary) -> None:
    builtin, plugin = _train_both(_data(name, example, binary), name, {}, 100)
    assert builtin.num_boosted_rounds() == 100
    assert_same_xgb_trees(builtin, plugin)


@pytest.mark.parametrize("name, params", [
    ("rank_ndcg", {"lambdarank_num_pair_per_sample": 8, "ndcg_exp_gain": False, "lambdarank_normalization": False}),
    ("rank_pairwise", {"lambdarank_num_pair_per_sample": 5, "lambdarank_normalization": False,
                       "lambdarank_score_normalization": False}),
    ("rank_map", {"lambdarank_num_pair_per_sample": 3, "lambdarank_normalization": False}),
], ids=["ndcg-k8-linear-gain-no-norm", "pairwise-k5-no-norms", "map-k3-no-norm"])
def test_xgboosts_parameters_grow_its_trees(name, params, example, binary) -> None:
    assert_same_xgb_trees(*_train_both(_data(name, example, binary), name, params, 100))


#: XGBoost seeds its "mean" pairs by round and query up to 3.3, from the booster's own generator from 3.4
SEEDED_BY_ROUND = tuple(int(v) for v in xgb.__version__.split(".")[:2]) < (3, 4)


@pytest.mark.skipif(not SEEDED_BY_ROUND, reason=f"XGBoost {xgb.__version__} seeds its 'mean' pairs from the "
                    "booster's generator (test_mean_pairs_are_uniform_outside_the_bucket checks their distribution)")
@pytest.mark.parametrize("name, params", [
    ("rank_ndcg", {"lambdarank_pair_method": "mean"}),
    ("rank_ndcg", {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 3}),
    ("rank_map", {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 2}),
], ids=["ndcg-mean", "ndcg-mean-3", "map-mean-2"])
def test_mean_pairs_are_drawn_as_xgboost_draws_them(name, params, example, binary) -> None:
    """'mean' pairs come from XGBoost's generator, seeded by round and query: the same trees
    (a draw out of step by one round, or another generator, moves the first split)."""
    assert_same_xgb_trees(*_train_both(_data(name, example, binary), name, params, 30, max_depth=4))


def test_the_builtins_own_base_score_given_to_the_plugin(example) -> None:
    """XGBoost estimates the built-in's base_score (about 0 here, from its gradients at 0) and starts
    a custom objective at its base_score parameter: given the built-in's, the trees are the same."""
    dm = bpx.dmatrix(example.X, example.y, group_ptr=example.group_ptr)
    builtin = xgb.train({"objective": "rank:ndcg", "nthread": 1}, dm, 20)
    estimated = float(json.loads(builtin.save_config())["learner"]["learner_model_param"]["base_score"].strip("[]"))
    assert estimated != 0.0
    plugin = xgb.train(bpx.params(nthread=1, base_score=estimated), dm, 20, obj=bpx.objective("rank_ndcg"))
    assert_same_xgb_trees(builtin, plugin)


def test_mean_pairs_are_uniform_outside_the_bucket() -> None:
    """Each document's partner is uniform among the documents of other labels (a chi-square test
    over 3000 seeds spread over 32 bits, as XGBoost 3.4 draws them, which fails at p < 1e-4),
    num_pair of them per document, and every pair has two labels. (With small consecutive seeds,
    as XGBoost 3.2's (round + 1) * n_queries + query, minstd_rand's first value is 48271 * seed,
    and the first draw nearly always picks the first document outside the bucket.)"""
    from scipy import stats

    labels = np.array([2.0, 0.0, 1.0, 0.0, 2.0, 1.0, 0.0, 3.0])
    counts = np.zeros((8, 8))
    for seed in np.random.default_rng(0).integers(0, 2**32, 3000):
        first, second = X.mean_pairs(labels, 2, int(seed))
        assert first.shape == (16,) and np.all(labels[first] != labels[second])
        np.add.at(counts, (first, second), 1)
    for doc in range(8):
        others = labels != labels[doc]
        assert counts[doc, ~others].sum() == 0 and counts[doc].sum() == 6000
        assert stats.chisquare(counts[doc, others]).pvalue > 1e-4, (doc, counts[doc, others])


def test_minstd_rand_is_the_standards() -> None:
    """[rand.predef]: the 10000th value of a default-constructed minstd_rand is 399268537 (a draw of
    uniform_int_distribution(0, 0) takes one value, as libstdc++'s downscaling does)."""
    state = np.array([1], dtype=np.int64)
    for _ in range(10000):
        assert X.minstd_uniform(state, 1) == 0
    assert state[0] == 399268537


def test_uniform_draws_cover_their_range_evenly() -> None:
    """libstdc++'s rejection keeps the draws uniform: 60000 draws in 0..5, each value about 10000 times."""
    state = np.array([12345], dtype=np.int64)
    counts = np.bincount([X.minstd_uniform(state, 6) for _ in range(60000)], minlength=6)
    assert counts.shape == (6,) and np.all(np.abs(counts - 10000) < 500)


def _dcg(gains_in_order: np.ndarray) -> float:
    return float(sum(g / math.log2(2.0 + r) for r, g in enumerate(gains_in_order)))


def _ap(relevant_in_order: np.ndarray) -> float:
    hits = np.cumsum(relevant_in_order)
    return float(np.sum(relevant_in_order * hits / np.arange(1, len(hits) + 1)) / hits[-1])


@pytest.mark.parametrize("seed", range(4))
def test_pair_weights_are_the_swaps_change_of_the_metric(seed) -> None:
    """|Delta NDCG| and |Delta MAP| of every pair of different labels against the metric computed
    before and after swapping the two documents."""
    rng = np.random.default_rng(seed)
    n = 9
    graded = rng.integers(0, 4, n).astype(np.float64)
    relevant = rng.integers(0, 2, n).astype(np.float64)
    relevant[0] = 1.0
    discounts = np.array([1.0 / math.log2(2.0 + i) for i in range(n)])
    gains = 2.0 ** graded - 1.0
    inv = 1.0 / _dcg(np.sort(gains)[::-1])
    n_rel, acc = np.cumsum(relevant), np.cumsum(relevant / np.arange(1, n + 1))
    for i, j in itertools.combinations(range(n), 2):
        for labels, metric in ((graded, X.NDCG), (relevant, X.MAP)):
            if labels[i] == labels[j]:
                continue
            hi, lo = (i, j) if labels[i] > labels[j] else (j, i)
            swapped = np.arange(n)
            swapped[[i, j]] = [j, i]
            if metric == X.NDCG:
                expect = abs(_dcg(gains[swapped]) - _dcg(gains)) * inv
            else:
                expect = abs(_ap(relevant[swapped]) - _ap(relevant))
            got = abs(X._delta(metric, hi, lo, labels[hi], labels[lo], gains[hi], gains[lo], discounts, inv,
                               n_rel, acc))
            assert got == pytest.approx(expect, rel=1e-12, abs=1e-15), (metric, i, j)


def test_a_query_alone_and_weights() -> None:
    """Each query's values come from its own pairs, scaled by its weight (in float64, after
    XGBoost's float32 sums); a query of one label has none."""
    y = np.array([0.0, 1.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0])
    gp = np.array([0, 4, 6, 8])
    s = np.array([0.3, -0.2, 0.1, 0.9, 0.5, 0.5, 1.5, -1.0])
    g1, h1 = RankNDCG(y, gp).grad_hess(s)
    gw, hw = RankNDCG(y, gp, weights=[2.0, 1.0, 0.5]).grad_hess(s)
    np.testing.assert_array_equal(gw, g1 * np.repeat([2.0, 1.0, 0.5], np.diff(gp)))
    np.testing.assert_array_equal(hw, h1 * np.repeat([2.0, 1.0, 0.5], np.diff(gp)))
    assert np.all(g1[4:6] == 0.0) and np.all(h1[4:6] == 0.0)
    assert np.array_equal(g1, g1.astype(np.float32))   # XGBoost's float32 values, unweighted


@pytest.mark.parametrize("name", list(BUILTIN))
def test_trains_on_lightgbm(name, example, binary) -> None:
    """The same objectives through LightGBM: they train (the test NDCG rises above the first round's)."""
    lgb = pytest.importorskip("lightgbm")
    from boostplug import lightgbm as bpl
    from boostplug import metrics

    train = _data(name, example, binary)
    test = load_example()[1]
    ds = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr)
    booster = lgb.train({"objective": bpl.objective(name), "verbose": -1, "num_threads": 1,
                         "learning_rate": 0.1}, ds, 20)
    first = metrics.ndcg(booster.predict(test.X, num_iteration=1), test.y, test.group_ptr, k=10)
    last = metrics.ndcg(booster.predict(test.X), test.y, test.group_ptr, k=10)
    assert last > first and last > 0.6


@pytest.mark.parametrize("name, params, message", [
    ("rank_ndcg", {"lambdarank_pair_method": "top"},
     r"lambdarank_pair_method must be one of \['topk', 'mean'\], got 'top'"),
    ("rank_map", {"lambdarank_num_pair_per_sample": 0}, r"lambdarank_num_pair_per_sample must be .*got 0"),
    ("rank_ndcg", {"lambdarank_bias_norm": -1.0}, r"lambdarank_bias_norm must be a finite number in \[0, .*got -1\.0"),
])
def test_bad_settings_name_the_value(name, params, message) -> None:
    with pytest.raises(ValueError, match=message):
        bpx.objective(name, **params)


def test_too_many_mean_pairs_are_refused() -> None:
    with pytest.raises(ValueError, match=r"rank_pairwise: lambdarank_num_pair_per_sample=5000000 draws 3 \* 5000000"):
        RankPairwise(np.array([0.0, 1.0, 2.0]), [0, 3], lambdarank_pair_method="mean",
                     lambdarank_num_pair_per_sample=5_000_000)
    RankPairwise(np.array([0.0, 1.0, 2.0]), [0, 3], lambdarank_num_pair_per_sample=5_000_000)   # top-k: fine


def test_labels_xgboost_refuses_are_refused() -> None:
    with pytest.raises(ValueError, match=r"rank_ndcg: .*integers in 0\.\.31; row 1 has label 32\.0"):
        RankNDCG(np.array([0.0, 32.0]), [0, 2])
    with pytest.raises(ValueError, match=r"rank_ndcg: .*row 0 has label 1\.5"):
        RankNDCG(np.array([1.5, 0.0]), [0, 2])
    RankNDCG(np.array([1.5, 40.0]), [0, 2], ndcg_exp_gain=False)   # the label itself as gain: any
    with pytest.raises(ValueError, match=r"rank_map: .*row 1 has label 0\.5"):
        RankMAP(np.array([1.0, 0.5]), [0, 2])


def test_graded_labels_for_map_are_relevant_from_one() -> None:
    s = np.array([0.2, 0.4, -0.1, 0.0])
    graded = RankMAP(np.array([0.0, 3.0, 1.0, 0.0]), [0, 4]).grad_hess(s)
    binary = RankMAP(np.array([0.0, 1.0, 1.0, 0.0]), [0, 4]).grad_hess(s)
    np.testing.assert_array_equal(graded, binary)


def test_registered_without_a_hessian_floor() -> None:
    for name, cls in (("rank_ndcg", RankNDCG), ("rank_pairwise", RankPairwise), ("rank_map", RankMAP)):
        entry = objectives.get(name)
        assert entry.loss_class is cls and entry.defaults["hessian_floor"] is False
        assert entry.defaults["lambdarank_pair_method"] == "topk"
        assert entry.defaults["lambdarank_num_pair_per_sample"] is None
        assert list(entry.methods) == [f"{name}-plugin".replace("pairwise", "pair")]
    assert objectives.get("rank_ndcg").defaults["ndcg_exp_gain"] is True
