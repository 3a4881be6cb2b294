"""XGBoost's unbiased LambdaMART (``lambdarank_unbiased``) through the ``rank_*`` copies: they grow
the built-ins' trees on clicks-like data (several ``lambdarank_bias_norm`` values, truncation
levels, both pair methods, rank:ndcg, rank:map and rank:pairwise), their position biases are the
ones XGBoost saves in its model, and the biases are carried from round to round in the bound
objective (held calls and the loss use the current round's)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boostplug.objectives.xgb_lambdarank import RankNDCG
from tests.objectives._clicks_like import clicks_like
from tests.objectives._same_trees import assert_same_xgb_trees, xgb_trees

xgb = pytest.importorskip("xgboost")
from boostplug import xgboost as bpx  # noqa: E402  (needs xgboost)

ROUNDS = 20


@pytest.fixture(scope="module")
def clicks():
    return clicks_like()[:3]


def _train(clicks, builtin: str, params: dict, plugin: bool):
    features, labels, group_ptr = clicks
    dm = bpx.dmatrix(features, labels, group_ptr=group_ptr)
    if plugin:
        return xgb.train(bpx.params(nthread=1), dm, ROUNDS, obj=bpx.objective(builtin.replace(":", "_"), **params))
    return xgb.train(bpx.params(nthread=1, objective=builtin, **params), dm, ROUNDS)


@pytest.mark.parametrize("builtin, params", [
    ("rank:ndcg", {}),
    ("rank:ndcg", {"lambdarank_bias_norm": 0.5, "lambdarank_num_pair_per_sample": 4}),
    ("rank:ndcg", {"lambdarank_bias_norm": 0.0, "lambdarank_num_pair_per_sample": 20, "ndcg_exp_gain": False}),
    ("rank:ndcg", {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 3}),
    ("rank:map", {"lambdarank_bias_norm": 2.0}),
    ("rank:map", {"lambdarank_num_pair_per_sample": 2, "lambdarank_normalization": False}),
    ("rank:pairwise", {"lambdarank_pair_method": "mean", "lambdarank_score_normalization": False}),
], ids=["ndcg-defaults", "ndcg-k4-norm0.5", "ndcg-k20-norm0-linear", "ndcg-mean3", "map-norm2", "map-k2-no-norm",
        "pairwise-mean-no-score-norm"])
def test_unbiased_copies_grow_xgboosts_trees(clicks, builtin, params) -> None:
    params = {"lambdarank_unbiased": True, **params}
    reference = _train(clicks, builtin, params, plugin=False)
    assert_same_xgb_trees(reference, _train(clicks, builtin, params, plugin=True))
    # the debiasing changes the trees: the assertion above is not the plain objective's
    plain = _train(clicks, builtin, {**params, "lambdarank_unbiased": False}, plugin=False)
    assert xgb_trees(plain) != xgb_trees(reference)


def test_position_biases_are_xgboosts(clicks) -> None:
    features, labels, group_ptr = clicks
    params = {"lambdarank_unbiased": True, "lambdarank_num_pair_per_sample": 6, "lambdarank_bias_norm": 0.5}
    bound = RankNDCG(labels, group_ptr, **params)   # the objective as the adapter binds it, called each round
    xgb.train(bpx.params(nthread=1), bpx.dmatrix(features, labels, group_ptr=group_ptr), ROUNDS,
              obj=lambda predt, _: bound.grad_hess(predt))
    config = json.loads(_train(clicks, "rank:ndcg", params, plugin=False).save_config())["learner"]["objective"]
    t_plus, t_minus = bound.position_biases()
    assert t_plus.shape == (6,) and t_plus[0] == 1.0 and t_plus[1] < 1.0   # examination falls with the position
    # XGBoost saves them as float32
    np.testing.assert_array_equal(t_plus.astype(np.float32), np.array(config["ti+"], dtype=np.float32))
    np.testing.assert_array_equal(t_minus.astype(np.float32), np.array(config["tj-"], dtype=np.float32))


def _one_query():
    labels = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    return RankNDCG(labels, [0, 6], lambdarank_unbiased=True), np.array([0.3, 0.9, -0.2, 0.1, 0.5, -0.4])


def test_biases_change_each_round_and_held_calls_use_the_current_ones() -> None:
    obj, s = _one_query()
    first = obj.grad_hess(s)
    np.testing.assert_array_equal(first, RankNDCG(obj.labels, [0, 6]).grad_hess(s))   # round 0: biases 1
    t_plus, _ = obj.position_biases()
    # the top-k level (XGBoost tracks 32) capped by the longest query: no pair reaches a position past it
    assert obj.n_positions == 6 and t_plus.shape == (6,) and not np.all(t_plus == 1.0)
    second = obj.grad_hess(s)                        # round 1 divides by the biases round 0 estimated
    assert not np.array_equal(second[0], first[0])
    # a held call (weights at s) and the loss use round 1's biases and estimate nothing
    np.testing.assert_array_equal(obj.grad_hess(s, weights_at=s), second)
    before = obj.position_biases()
    obj.loss(s)
    np.testing.assert_array_equal(obj.position_biases()[0], before[0])
    # the lambdas are the gradient of the loss with the weights held (up to the float32 terms)
    eps = 1e-6
    numeric = [(obj.loss(s + eps * e, weights_at=s) - obj.loss(s - eps * e, weights_at=s)) / (2 * eps)
               for e in np.eye(6)]
    np.testing.assert_allclose(second[0], numeric, atol=1e-5)


def test_biases_held_are_the_latest_rounds_only() -> None:
    obj, s = _one_query()
    for _ in range(12):
        obj.grad_hess(s)
        obj.grad_hess(s, weights_at=s)
    assert len(obj._biases) <= 3   # the round before the latest, the latest's and the next's: no growth


@pytest.mark.parametrize("method", ["topk", "mean"])
def test_a_huge_pair_count_tracks_the_querys_positions_only(method) -> None:
    labels = np.array([1.0, 0.0, 2.0, 0.0, 1.0])
    s = np.array([0.3, 0.9, -0.2, 0.1, 0.5])
    big = 2**24 if method == "topk" else 2**20   # "topk": 2 x 128 MiB of biases per round before the cap
    huge = RankNDCG(labels, [0, 5], lambdarank_unbiased=True, lambdarank_pair_method=method,
                    lambdarank_num_pair_per_sample=big)
    assert huge.n_positions == 5 and huge.position_biases()[0].shape == (5,)
    if method == "topk":   # every pair of a 5-document query either way: the same gradients as k = 5
        at_five = RankNDCG(labels, [0, 5], lambdarank_unbiased=True, lambdarank_num_pair_per_sample=5)
        for _ in range(3):
            np.testing.assert_array_equal(huge.grad_hess(s), at_five.grad_hess(s))


def test_position_biases_need_unbiased() -> None:
    with pytest.raises(ValueError, match=r"rank_ndcg: position biases are estimated only with lambdarank_unbiased"):
        RankNDCG(np.array([1.0, 0.0]), [0, 2]).position_biases()
    with pytest.raises(TypeError, match=r"lambdarank_unbiased must be True or False; got 'yes'"):
        bpx.objective("rank_ndcg", lambdarank_unbiased="yes")
