"""The registered LambdaMART objectives for MAP, ERR, MRR and RBP against brute force: each pair's
weight recomputed by swapping the two documents' scores and re-evaluating the metric with
boostplug.metrics, times RankNet's logistic derivatives, summed by a Python loop over pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import metrics, objectives

GROUPS = np.array([0, 7, 8, 20, 31])  # a one-document query, ties in labels


def _data(seed: int):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 5, GROUPS[-1]).astype(float)
    scores = rng.normal(size=GROUPS[-1]) * 2.0
    return labels, scores


CASES = {  # objective, its settings, the metric as boostplug.metrics computes it
    "lambdamart_map": ({"threshold": 2.0}, lambda s, y, g: metrics.average_precision(s, y, g, threshold=2.0,
                                                                                    per_query=True)),
    "lambdamart_map@3": ({"k": 3}, lambda s, y, g: metrics.average_precision(s, y, g, k=3, per_query=True)),
    "lambdamart_err": ({}, lambda s, y, g: metrics.err(s, y, g, per_query=True)),
    "lambdamart_err@4": ({"k": 4, "max_grade": 6.0}, lambda s, y, g: metrics.err(s, y, g, k=4, max_grade=6.0,
                                                                                 per_query=True)),
    "lambdamart_mrr": ({"threshold": 3.0}, lambda s, y, g: metrics.reciprocal_rank(s, y, g, threshold=3.0,
                                                                                  per_query=True)),
    "lambdamart_mrr@2": ({"k": 2}, lambda s, y, g: metrics.reciprocal_rank(s, y, g, k=2, per_query=True)),
    "lambdamart_rbp": ({"persistence": 0.7}, lambda s, y, g: metrics.rbp(s, y, g, persistence=0.7, per_query=True)),
    "lambdamart_rbp-graded@5": ({"k": 5, "persistence": 0.9, "max_grade": 4.0},
                                lambda s, y, g: metrics.rbp(s, y, g, k=5, persistence=0.9, max_grade=4.0,
                                                            per_query=True)),
    # truncated: only the pairs with a document among the first 3 (2) positions of the current order
    "lambdamart_map-truncated": ({"truncation_level": 3}, lambda s, y, g: metrics.average_precision(s, y, g,
                                                                                                 per_query=True)),
    "lambdamart_err-truncated@5": ({"k": 5, "truncation_level": 2}, lambda s, y, g: metrics.err(s, y, g, k=5,
                                                                                                per_query=True)),
    "lambdamart_rbp-truncated@2": ({"k": 2, "truncation_level": 4}, lambda s, y, g: metrics.rbp(s, y, g, k=2,
                                                                                                per_query=True)),
}


def _brute(metric, labels, scores, weights, sigma, truncation):
    """Loss, gradient and Hessian: sum over pairs (i the higher label) with a document among the
    first ``truncation`` positions of the scores' order, of |Delta metric| times
    log(1 + exp(-sigma (s_i - s_j))) and its derivatives, each query times its weight."""
    n = len(labels)
    loss, grad, hess = 0.0, np.zeros(n), np.zeros(n)
    for q, (a, b) in enumerate(zip(GROUPS[:-1], GROUPS[1:])):
        y, s = labels[a:b], scores[a:b]
        ptr = np.array([0, b - a])
        base = metric(s, y, ptr)[0]
        position = np.argsort(np.argsort(-s))  # the scores have no ties
        for i in range(b - a):
            for j in range(b - a):
                if y[i] <= y[j] or min(position[i], position[j]) >= truncation:
                    continue
                swapped = s.copy()
                swapped[i], swapped[j] = s[j], s[i]
                w = weights[q] * abs(metric(swapped, y, ptr)[0] - base)
                d = s[i] - s[j]
                p = 1.0 / (1.0 + math.exp(sigma * d))   # sigmoid(-sigma d)
                loss += w * math.log1p(math.exp(-sigma * d))
                grad[a + i] -= w * sigma * p
                grad[a + j] += w * sigma * p
                hess[a + i] += w * sigma * sigma * p * (1.0 - p)
                hess[a + j] += w * sigma * sigma * p * (1.0 - p)
    return loss, grad, hess


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_and_hessian_are_the_brute_force_lambdas(case, seed):
    name = case.split("@")[0].split("-")[0]
    settings, metric = CASES[case]
    labels, scores = _data(seed)
    weights = np.array([1.0, 3.0, 0.5, 2.0])
    obj = objectives.get(name).prepare(labels, GROUPS, weights=weights, hessian_floor=False, sigma=1.5, **settings)
    truncation = min(v for v in (settings.get("k"), settings.get("truncation_level", 30), math.inf) if v is not None)
    loss, grad, hess = _brute(metric, labels, scores, weights, 1.5, truncation)
    g, h = obj.grad_hess(scores)
    scale = np.abs(grad).max()
    assert scale > 0
    np.testing.assert_allclose(g, grad, rtol=1e-12, atol=1e-13 * scale)
    np.testing.assert_allclose(h, hess, rtol=1e-12, atol=1e-13 * np.abs(hess).max())
    np.testing.assert_allclose(obj.loss(scores), loss, rtol=1e-12)


def test_labels_above_max_grade_are_refused_naming_the_label():
    labels = np.array([0.0, 5.0, 1.0])
    with pytest.raises(ValueError, match=r"lambdamart_err: a label \(5\) is above max_grade=4"):
        objectives.get("lambdamart_err").prepare(labels, [0, 3])
    with pytest.raises(ValueError, match=r"lambdamart_rbp: a label \(5\) is above max_grade=2"):
        objectives.get("lambdamart_rbp").prepare(labels, [0, 3], max_grade=2.0)
    objectives.get("lambdamart_rbp").prepare(labels, [0, 3])  # binary RBP: any label


def test_a_query_without_a_relevant_document_has_no_gradient():
    labels = np.array([0.0, 0.0, 0.0, 2.0, 1.0])
    obj = objectives.get("lambdamart_map").prepare(labels, [0, 3, 5], threshold=3.0, hessian_floor=False)
    g, h = obj.grad_hess(np.array([0.3, -1.0, 2.0, 0.5, 0.1]))
    np.testing.assert_array_equal(g, 0.0)  # no label reaches the threshold: MAP does not move
    np.testing.assert_array_equal(h, 0.0)


def test_the_default_truncation_is_lightgbms_30_and_none_keeps_every_pair():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 60).astype(float)
    scores = rng.normal(size=60)
    group = np.array([0, 60])
    full = objectives.get("lambdamart_map").prepare(labels, group, hessian_floor=False, truncation_level=None)
    default = objectives.get("lambdamart_map").prepare(labels, group, hessian_floor=False)
    at30 = objectives.get("lambdamart_map").prepare(labels, group, hessian_floor=False, truncation_level=30)
    np.testing.assert_array_equal(default.grad_hess(scores)[0], at30.grad_hess(scores)[0])
    tail = np.argsort(-scores)[30:]  # pairs of two documents below position 30 count only without truncation
    assert np.abs(full.grad_hess(scores)[0][tail] - default.grad_hess(scores)[0][tail]).max() > 1e-6


def test_a_persistence_of_one_is_refused_every_gradient_would_be_zero():
    """RBP's (1 - persistence) factor: at 1 every pair weight is 0, so the model would never move."""
    with pytest.raises(ValueError, match=r"lambdamart_rbp: persistence must be below 1, got 1\.0 .*every gradient"):
        objectives.get("lambdamart_rbp").check({"persistence": 1.0})
    from boostplug import lightgbm as bpl
    with pytest.raises(ValueError, match=r"persistence must be below 1, got 1"):
        bpl.objective("lambdamart_rbp", persistence=1)
    objectives.get("lambdamart_rbp").check({"persistence": 0.999})
