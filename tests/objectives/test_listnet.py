"""The registered ``listnet``: ListNet's top-one softmax cross-entropy (Cao et al. 2007) against a
per-query loop for each target distribution, its gradient and Hessian against finite
differences, the queries that add nothing, the Hessian floor it keeps on, and training on both
frameworks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import metrics, objectives
from boostplug.data import load_example
from boostplug.objectives.softmax_ce import TARGETS, ListNet
from boostplug.testing import fd_gradient, fd_jacobian


def _data():
    rng = np.random.default_rng(8)
    sizes = [6, 1, 4, 5, 3]
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 4, size=gp[-1]).astype(float)
    y[7:11] = 0.0                                   # no relevant document
    w = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
    return rng.normal(size=gp[-1]), y, gp, w


def _target(kind: str, labels: list[float]) -> list[float]:
    if kind == "exp":
        return [math.exp(v) for v in labels]
    return [2.0 ** v - 1.0 for v in labels] if kind == "gain" else list(labels)


def _loop_loss(scores, y, gp, w, kind: str) -> float:
    """sum_q w_q * -sum_i P_y(i) log P_s(i), the top-one probabilities of Cao et al. (Eq. 2-3)."""
    total = 0.0
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        phi = _target(kind, list(y[a:b]))
        if b - a <= 1 or sum(phi) == 0.0:
            continue
        z = sum(math.exp(scores[i]) for i in range(a, b))
        total += w[q] * -sum(phi[i - a] / sum(phi) * math.log(math.exp(scores[i]) / z) for i in range(a, b))
    return total


@pytest.mark.parametrize("kind", TARGETS)
def test_loss_gradient_hessian_against_loops_and_differences(kind) -> None:
    scores, y, gp, w = _data()
    obj = ListNet(y, gp, weights=w, targets=kind)
    np.testing.assert_allclose(obj.loss(scores), _loop_loss(scores, y, gp, w, kind), rtol=1e-12)
    g, h = obj.grad_hess(scores)
    np.testing.assert_allclose(g, fd_gradient(obj.loss, scores), rtol=1e-7, atol=1e-9)
    J = fd_jacobian(lambda s: obj.grad_hess(s)[0], scores)
    quiet = (g == 0.0) & (np.diag(J) == 0.0)   # one-document queries and those without a target
    np.testing.assert_allclose(h[~quiet], np.diag(J)[~quiet], rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(h[quiet], 1e-5)   # NO_INFO_HESSIAN: the floor is on
    if kind != "exp":
        assert np.all(g[7:11] == 0.0)           # no relevant document: nothing to fit


def test_exp_targets_of_one_grade_pull_the_scores_together() -> None:
    """Cao et al.'s exp targets of a query of one grade are uniform: the gradient pulls the scores
    towards their mean (gain and label targets with every label 0 leave such a query alone)."""
    s = np.array([1.0, 0.0, -1.0])
    g, _ = ListNet(np.zeros(3), np.array([0, 3])).grad_hess(s)
    assert g[0] > 0 > g[2] and abs(g.sum()) < 1e-15


def test_the_floor_keeps_underflowed_hessians_positive() -> None:
    """Why the floor is on: at a score gap beyond exp's range the exact Hessian rho (1 - rho)
    underflows to 0 while the gradient -p stays, so a leaf of such documents would get -G / 0;
    floored, it gets HESSIAN_FLOOR."""
    y, gp, s = np.array([0.0, 2.0]), np.array([0, 2]), np.array([800.0, 0.0])
    g, h = ListNet(y, gp, hessian_floor=False).grad_hess(s)
    assert g[1] < -0.5 and h[1] == 0.0
    g, h = ListNet(y, gp).grad_hess(s)
    assert g[1] < -0.5 and h[1] == objectives.HESSIAN_FLOOR


def test_bad_targets_name_the_value() -> None:
    with pytest.raises(ValueError, match=r"listnet: targets must be one of .*'softmax'"):
        objectives.get("listnet").check({"targets": "softmax"})


def test_registered_with_the_floor_on() -> None:
    entry = objectives.get("listnet")
    assert entry.defaults == {"targets": "exp", "hessian_floor": True}
    assert entry.hessian_kinds == {"exact": "exact"} and list(entry.methods) == ["listnet"]


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_trains_on_both_frameworks(framework) -> None:
    """30 rounds on the embedded example: the test NDCG@10 rises above the first round's."""
    train, test = load_example()
    if framework == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        from boostplug import lightgbm as bpl

        booster = lgb.train({"objective": bpl.objective("listnet"), "verbose": -1, "num_threads": 1},
                            bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), 30)
        first, last = booster.predict(test.X, num_iteration=1), booster.predict(test.X)
    else:
        xgb = pytest.importorskip("xgboost")
        from boostplug import xgboost as bpx

        booster = xgb.train(bpx.params(max_depth=4, eta=0.1, nthread=1),
                            bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr), 30, obj=bpx.objective("listnet"))
        dt = xgb.DMatrix(test.X)
        first, last = booster.predict(dt, iteration_range=(0, 1)), booster.predict(dt)
    ndcg = [metrics.ndcg(p, test.y, test.group_ptr, k=10) for p in (first, last)]
    assert ndcg[1] > ndcg[0] and ndcg[1] > 0.6
