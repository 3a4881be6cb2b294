"""ListMLE against a direct computation of the Plackett-Luce likelihood (a Python loop over each
query's target order), with both ways of ordering tied labels; its n = 2 case is RankNet's logistic
loss; extreme scores stay finite."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import objectives

GROUPS = np.array([0, 6, 7, 19, 30])


def _data(seed: int):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, GROUPS[-1]).astype(float), rng.normal(size=GROUPS[-1]) * 2.0


def _order(labels, tiebreak):
    """Rows by descending label, ties by descending ``tiebreak`` (then input order)."""
    return sorted(range(len(labels)), key=lambda r: (-labels[r], -tiebreak[r], r))


def _direct(labels, scores, weights, tiebreak):
    """Loss, gradient and Hessian diagonal of sum_r (log sum_{t >= r} exp(s_t) - s_r) per query,
    the gradient and Hessian as the sums over r of the softmax from position r on."""
    n = len(labels)
    loss, grad, hess = 0.0, np.zeros(n), np.zeros(n)
    for q, (a, b) in enumerate(zip(GROUPS[:-1], GROUPS[1:])):
        if b - a < 2:
            continue
        order = [a + r for r in _order(labels[a:b], tiebreak[a:b])]
        for r in range(len(order)):
            rest = order[r:]
            z = sum(math.exp(scores[t]) for t in rest)
            loss += weights[q] * (math.log(z) - scores[order[r]])
            for t in rest:
                p = math.exp(scores[t]) / z
                grad[t] += weights[q] * p
                hess[t] += weights[q] * p * (1.0 - p)
            grad[order[r]] -= weights[q]
    return loss, grad, hess


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ties_by_scores_match_the_direct_likelihood(seed):
    labels, scores = _data(seed)
    weights = np.array([1.0, 2.0, 0.5, 3.0])
    obj = objectives.get("listmle").prepare(labels, GROUPS, weights=weights, ties="scores", hessian_floor=False)
    loss, grad, hess = _direct(labels, scores, weights, scores)
    g, h = obj.grad_hess(scores)
    np.testing.assert_allclose(obj.loss(scores), loss, rtol=1e-12)
    np.testing.assert_allclose(g, grad, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(h, hess, rtol=1e-11, atol=1e-13)


def test_random_ties_follow_the_rounds_draws():
    labels, scores = _data(3)
    obj = objectives.get("listmle").prepare(labels, GROUPS, seed=7, hessian_floor=False)
    for round_ in range(3):
        g, h = obj.grad_hess(scores)
        keys = np.random.default_rng([7, round_]).random(len(labels))
        loss, grad, hess = _direct(labels, scores, np.ones(4), keys)
        np.testing.assert_allclose(g, grad, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(h, hess, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(obj.loss(scores), loss, rtol=1e-12)  # the loss of the round just started


def test_two_documents_are_ranknets_logistic_loss():
    obj = objectives.get("listmle").prepare([1.0, 0.0], [0, 2], hessian_floor=False)
    for d in (-3.0, 0.0, 2.5):
        s = np.array([d, 0.0])
        assert obj.loss(s) == pytest.approx(math.log1p(math.exp(-d)), rel=1e-14)
        g, _ = obj.grad_hess(s)
        assert g[0] == pytest.approx(-1.0 / (1.0 + math.exp(d)), rel=1e-13)


def test_extreme_scores_stay_finite():
    labels = np.array([2.0, 1.0, 0.0, 0.0])
    obj = objectives.get("listmle").prepare(labels, [0, 4], ties="scores", hessian_floor=False)
    s = np.array([-800.0, 700.0, 0.0, -1500.0])  # exp of any of them alone leaves float64
    g, h = obj.grad_hess(s)
    assert np.isfinite(obj.loss(s)) and np.isfinite(g).all() and np.isfinite(h).all()
    # the top label scored far below the others: its gradient is -1 (its share of each softmax is 0)
    assert g[0] == pytest.approx(-1.0)
