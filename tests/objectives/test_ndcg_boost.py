"""NDCG_Boost objective (Valizadegan et al. 2009, Eq. 10-16): finite differences, a slow pure-Python pair loop,
invariances, degenerate and extreme inputs, validation, and a LightGBM sanity run. What every objective follows
(derivatives, each Hessian mode's kind, shift invariance, weights, serial = parallel) is checked at the registry's
settings in test_contract_suite.py; here what it cannot reach (label_gain) and the paper's own claims."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from boostplug import objectives
from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN, floor_hessian
from boostplug.objectives import ndcg_boost as nb
from boostplug.testing import assert_bound_majorises, fd_gradient, fd_jacobian
from tests._helpers import random_ranking

NDCG_BOOST = objectives.get("ndcg_boost")  # the registry entry: loss, grad_hess and prepare of the labels

LABEL_GAIN = [0.0, 1.0, 3.0, 10.0]
VARIANTS = [
    pytest.param({}, id="default"),
    pytest.param({"sigma": 0.7}, id="sigma0.7"),
    pytest.param({"label_gain": LABEL_GAIN, "sigma": 1.3}, id="label_gain"),
    # two grades with one gain: their pairs carry c_i = c_j (the kernels skip them as equal pairs)
    pytest.param({"label_gain": [0.0, 2.0, 2.0, 5.0]}, id="shared_gain"),
]
MODES = ["bound", "exact"]


# ---- a slow, obviously-correct reference (Eq. 10, 11, 14, 16 and the second derivative) ----------------------------
def slow_sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def slow_gamma(x: float) -> float:
    return slow_sigmoid(x) * slow_sigmoid(-x)  # = exp(x) / (1 + exp(x))^2, Eq. 14


def slow_gain(r: float, label_gain) -> float:
    return 2.0 ** r - 1.0 if label_gain is None else float(label_gain[int(r)])


def slow_z(gains) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(sorted(gains, reverse=True), start=1))


def slow_all(scores, labels, group_ptr, weights=None, sigma=2.0, label_gain=None):
    """(loss, grad, hess_bound, hess_exact, w, Z) by double loops over every document pair."""
    n = len(scores)
    F = [sigma * s for s in scores]
    G = [slow_gain(r, label_gain) for r in labels]
    loss, grad, hb, he, w, zs = 0.0, [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n, []
    for q in range(len(group_ptr) - 1):
        a, b = int(group_ptr[q]), int(group_ptr[q + 1])
        z = slow_z(G[a:b])
        zs.append(z)
        if z == 0:
            continue
        wq = 1.0 if weights is None else float(weights[q])
        for i in range(a, b):
            A = sum(1.0 / (1.0 + math.exp(F[i] - F[j])) for j in range(a, b) if j != i)  # Eq. 10
            loss += wq * G[i] * A / z  # Eq. 11
            for j in range(a, b):
                if j == i:
                    continue
                x = F[i] - F[j]
                c = wq * (G[i] - G[j]) / z
                w[i] += c * slow_gamma(x)  # Eq. 16
                hb[i] += 2.0 * sigma ** 2 * abs(c) * slow_gamma(x)   # twice the diagonal's bound: majorises H
                he[i] += -sigma ** 2 * c * slow_gamma(x) * (1.0 - 2.0 * slow_sigmoid(x))
            grad[i] = -sigma * w[i]
    return loss, np.array(grad), np.array(hb), np.array(he), np.array(w), np.array(zs)


def smooth_data(seed: int, n_queries: int = 5, max_docs: int = 7):
    """Random labels with ties (incl. a single-document and an all-zero query), distinct random scores."""
    rng = np.random.default_rng(seed)
    _, labels, gp = random_ranking(rng, n_queries=n_queries, max_docs=max_docs)
    return rng.normal(size=labels.shape[0]), labels, gp


# ---- finite differences -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_derivatives_with_label_gain(seed) -> None:
    """The contract suite's checks with a label_gain, which it cannot make up: the gradient is the
    derivative of the loss in both modes, the exact Hessian that of the gradient, the bound dominates."""
    s, y, gp = smooth_data(seed)
    wts = np.random.default_rng(seed).uniform(0.5, 2.0, size=len(gp) - 1)
    params = {"label_gain": LABEL_GAIN, "sigma": 1.3}
    for hessian in MODES:
        prep = NDCG_BOOST.prepare(y, gp, weights=wts, hessian=hessian, **params)
        g, _ = prep.grad_hess(s)
        np.testing.assert_allclose(g, fd_gradient(prep.loss, s), rtol=1e-7, atol=1e-9)
    J = fd_jacobian(lambda v: prep.grad_hess(v)[0], s)
    _, raw = NDCG_BOOST.prepare(y, gp, weights=wts, hessian="exact", **params)._grad_hess(s)  # before the floor
    np.testing.assert_allclose(raw, np.diag(J), rtol=1e-6, atol=1e-9)
    _, hb = NDCG_BOOST.prepare(y, gp, weights=wts, hessian="bound", **params).grad_hess(s)
    assert_bound_majorises(hb, J, tol=1e-8)


@pytest.mark.parametrize("params", VARIANTS)
@pytest.mark.parametrize("seed", [2, 3])
def test_m_is_not_convex_and_the_exact_hessian_is_floored(params, seed) -> None:
    s, y, gp = smooth_data(seed)
    prep = NDCG_BOOST.prepare(y, gp, hessian="exact", **params)
    g_raw, raw = prep._grad_hess(s)  # before the floor
    assert (raw < -1e-3).any(), "M is not convex: some document should have negative curvature"
    _, h = prep.grad_hess(s)
    np.testing.assert_array_equal(h, floor_hessian(g_raw, raw))
    assert np.all(h >= HESSIAN_FLOOR)


@pytest.mark.parametrize("params", VARIANTS)
@pytest.mark.parametrize("seed", [4, 5])
def test_bound_hessian_dominates_the_exact_one(params, seed) -> None:
    s, y, gp = smooth_data(seed)
    _, hb = NDCG_BOOST.prepare(y, gp, hessian="bound", **params).grad_hess(s)
    _, exact = NDCG_BOOST.prepare(y, gp, hessian="exact", **params)._grad_hess(s)
    assert np.all(hb >= np.abs(exact) - 1e-15)
    # half the bound is tight for a pair far apart: exact -> +bound/2 ordered correctly, -bound/2 reversed
    for sign in (1.0, -1.0):
        two = np.array([sign * 6.0, 0.0])
        _, b2 = NDCG_BOOST.prepare([2, 0], [0, 2], hessian="bound")._grad_hess(two)
        _, e2 = NDCG_BOOST.prepare([2, 0], [0, 2], hessian="exact")._grad_hess(two)
        np.testing.assert_allclose(e2, sign * b2 / 2.0 * math.tanh(6.0), rtol=1e-13)


def full_hessian(scores, labels, group_ptr, weights=None, sigma=2.0, label_gain=None) -> np.ndarray:
    """The full Hessian of M in score units, written out: each pair term of M is
    (c_i - c_j) sigmoid(F_j - F_i) + c_j, whose Hessian is d_ij (e_i - e_j)(e_i - e_j)^T with
    d_ij = -sigma^2 (c_i - c_j) gamma_ij (1 - 2 sigmoid(F_i - F_j))."""
    n = len(scores)
    H = np.zeros((n, n))
    G = [slow_gain(r, label_gain) for r in labels]
    for q in range(len(group_ptr) - 1):
        a, b = int(group_ptr[q]), int(group_ptr[q + 1])
        z = slow_z(G[a:b])
        if z == 0:
            continue
        wq = 1.0 if weights is None else float(weights[q])
        for i in range(a, b):
            for j in range(i + 1, b):
                x = sigma * (scores[i] - scores[j])
                d = -sigma ** 2 * wq * (G[i] - G[j]) / z * slow_gamma(x) * (1.0 - 2.0 * slow_sigmoid(x))
                H[i, i] += d
                H[j, j] += d
                H[i, j] -= d
                H[j, i] -= d
    return H


@pytest.mark.parametrize("params", VARIANTS)
@pytest.mark.parametrize("seed", range(6))
def test_bound_hessian_majorises_the_full_hessian(params, seed) -> None:
    """diag(bound) - H is positive semi-definite (the docstring's proof), so a Newton step on any
    leaf partition, e.g. a two-leaf tree, never leaves the quadratic model's upper bound; the
    full Hessian written out agrees with finite differences of the gradient."""
    rng = np.random.default_rng(seed)
    s, y, gp = smooth_data(seed, n_queries=4, max_docs=9)
    s = s * rng.choice([0.3, 3.0])                       # settled pairs too, where |1 - 2 sigmoid| -> 1
    wts = rng.uniform(0.5, 2.0, size=len(gp) - 1)
    H = full_hessian(s, y, gp, wts, **params)
    prep = NDCG_BOOST.prepare(y, gp, weights=wts, hessian="bound", **params)
    np.testing.assert_allclose(H, fd_jacobian(lambda v: prep.grad_hess(v)[0], s), rtol=1e-6, atol=1e-8)
    _, hb = prep._grad_hess(s)
    for a, b in zip(gp[:-1], gp[1:]):
        assert_bound_majorises(hb[a:b], H[a:b, a:b], tol=1e-12 * max(1.0, np.abs(H[a:b, a:b]).max()))


def test_bound_hessian_majorises_a_settled_pair() -> None:
    """Two documents far apart and ordered correctly: H = d [[1, -1], [-1, 1]] with d -> the pair's
    |c| gamma, whose largest eigenvalue 2d is what the bound must reach on each diagonal entry."""
    s = np.array([6.0, 0.0])
    H = full_hessian(s, [2, 0], [0, 2])
    _, hb = NDCG_BOOST.prepare([2, 0], [0, 2], hessian="bound")._grad_hess(s)
    assert np.linalg.eigvalsh(np.diag(hb) - H).min() >= 0.0
    assert np.linalg.eigvalsh(np.diag(hb / 2) - H).min() < 0.0   # the entrywise bound of the diagonal is not enough


# ---- against the slow pair loop ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("params", VARIANTS)
def test_kernel_matches_slow_pair_loop(seed, params) -> None:
    rng = np.random.default_rng(100 + seed)
    s, y, gp = random_ranking(rng, n_queries=7, max_docs=10)  # tied scores too
    wts = rng.uniform(0.0, 3.0, size=len(gp) - 1)
    for weights in (None, wts):
        ref_loss, ref_g, ref_hb, ref_he, ref_w, ref_z = slow_all(s, y, gp, weights, **params)
        pb = NDCG_BOOST.prepare(y, gp, weights=weights, hessian="bound", **params)
        pe = NDCG_BOOST.prepare(y, gp, weights=weights, hessian="exact", **params)
        assert pb.loss(s) == pytest.approx(ref_loss, rel=1e-12, abs=1e-14)
        g, hb = pb.grad_hess(s)
        np.testing.assert_allclose(g, ref_g, rtol=1e-11, atol=1e-14)
        np.testing.assert_allclose(hb, floor_hessian(np.asarray(ref_g), np.asarray(ref_hb)), rtol=1e-11, atol=1e-14)
        g2, he = pe.grad_hess(s)
        # bound and exact run different pair loops, which fastmath's reassoc vectorises (so sums) differently
        np.testing.assert_allclose(g2, g, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(pe._grad_hess(s)[1], ref_he, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(he, floor_hessian(np.asarray(ref_g), np.asarray(ref_he)), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(pb.descent_weights(s), ref_w, rtol=1e-11, atol=1e-14)
        w_both, m_both = pb.descent_weights_and_loss(s)   # one pass for the booster's rounds
        np.testing.assert_allclose(w_both, ref_w, rtol=1e-11, atol=1e-14)
        assert m_both == pytest.approx(ref_loss, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(pb.ideal_dcg(), ref_z, rtol=1e-13)


@pytest.mark.parametrize("hessian", MODES)
def test_on_the_listwise_base_a_query_weight_multiplies_its_query_exactly(hessian) -> None:
    """NDCG_Boost stands on the listwise base, which sums each query with the coefficients G_i / Z_k
    and multiplies the query's sums by its weight: a weighted query's values are its unweighted ones
    times W_k, to the bit (with W_k inside the coefficients they were not)."""
    from boostplug.objectives.listwise import ListwiseLoss

    rng = np.random.default_rng(3)
    s, y, gp = random_ranking(rng, n_queries=9, max_docs=12)
    wts = rng.uniform(0.1, 3.0, size=len(gp) - 1)
    assert issubclass(nb.NDCGBoostObjective, ListwiseLoss)
    plain = nb.NDCGBoostObjective(y, gp, hessian=hessian, hessian_floor=False)
    weighted = nb.NDCGBoostObjective(y, gp, weights=wts, hessian=hessian, hessian_floor=False)
    w_doc = np.repeat(wts, np.diff(gp))
    for got, one in zip(weighted.grad_hess(s), plain.grad_hess(s)):
        np.testing.assert_array_equal(got, one * w_doc)


def test_registry_and_pure_functions_agree() -> None:
    s, y, gp = smooth_data(7)
    obj = objectives.get("ndcg_boost")
    assert obj.defaults == {"sigma": 2.0, "label_gain": None, "hessian": "bound", "hessian_floor": True}
    assert set(obj.hessians) == {"bound", "exact"}
    ref_loss, ref_g, ref_hb, *_ = slow_all(s, y, gp)
    assert obj.loss(s, y, gp) == pytest.approx(ref_loss, rel=1e-12)
    assert NDCG_BOOST.loss(s, y, gp) == pytest.approx(ref_loss, rel=1e-12)
    for g, h in (obj.grad_hess(s, y, gp), NDCG_BOOST.grad_hess(s, y, gp)):
        np.testing.assert_allclose(g, ref_g, rtol=1e-11, atol=1e-15)
        np.testing.assert_allclose(h, floor_hessian(np.asarray(ref_g), np.asarray(ref_hb)), rtol=1e-11, atol=1e-15)
    s0 = s.copy()
    y0 = y.copy()
    NDCG_BOOST.grad_hess(s, y, gp)
    np.testing.assert_array_equal(s, s0)  # inputs never mutated
    np.testing.assert_array_equal(y, y0)


def test_two_documents_closed_form() -> None:
    """One pair: G = (3, 0), Z = 3, M = sigmoid(F_2 - F_1), w_1 = gamma_12 = -w_2."""
    s = np.array([0.4, -0.1])
    prep = NDCG_BOOST.prepare([2, 0], [0, 2], sigma=2.0)
    x = 2.0 * 0.5
    assert prep.ideal_dcg()[0] == 3.0
    assert prep.loss(s) == pytest.approx(1.0 / (1.0 + math.exp(x)), rel=1e-14)
    gam = math.exp(x) / (1.0 + math.exp(x)) ** 2
    np.testing.assert_allclose(prep.descent_weights(s), [gam, -gam], rtol=1e-14)
    g, h = prep.grad_hess(s)
    np.testing.assert_allclose(g, [-2.0 * gam, 2.0 * gam], rtol=1e-14)
    np.testing.assert_allclose(h, [8.0 * gam, 8.0 * gam], rtol=1e-14)   # 2 sigma^2 gamma: the majorising bound


def test_separated_scores_give_the_sum_of_gain_times_rank() -> None:
    """Scores far apart: A_i -> (rank of i) - 1 exactly, so M = sum_i G_i (rank_i - 1) / Z (Eq. 10-11)."""
    rng = np.random.default_rng(11)
    _, y, gp = random_ranking(rng, n_queries=6, max_docs=9)
    s = 1e4 * rng.permutation(len(y)).astype(np.float64)  # distinct, gaps >= 1e4
    expected = 0.0
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        g = 2.0 ** y[a:b] - 1.0
        z = slow_z(g)
        if z > 0:
            rank = np.argsort(np.argsort(-s[a:b]))  # 0 = top
            expected += float(np.sum(g * rank)) / z
    prep = NDCG_BOOST.prepare(y, gp)
    assert prep.loss(s) == pytest.approx(expected, rel=1e-14)
    g, h = prep.grad_hess(s)
    np.testing.assert_array_equal(g, 0.0)  # gamma = exp(-2e4) underflows: every pair settled
    np.testing.assert_array_equal(h, NO_INFO_HESSIAN)


# ---- invariances ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hessian", MODES)
def test_permuting_a_query_permutes_the_outputs(hessian) -> None:
    s, y, gp = smooth_data(21, n_queries=6)
    prep = NDCG_BOOST.prepare(y, gp, hessian=hessian)
    loss0, (g0, h0) = prep.loss(s), prep.grad_hess(s)
    q = int(np.argmax(np.diff(gp)))
    perm = np.arange(len(s))
    a, b = gp[q], gp[q + 1]
    perm[a:b] = perm[a:b][::-1]
    pp = NDCG_BOOST.prepare(y[perm], gp, hessian=hessian)
    assert pp.loss(s[perm]) == pytest.approx(loss0, rel=1e-13)
    gp_, hp_ = pp.grad_hess(s[perm])
    np.testing.assert_allclose(gp_, g0[perm], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hp_, h0[perm], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("params", VARIANTS)
def test_gradients_sum_to_zero_per_query(params) -> None:
    s, y, gp = smooth_data(31, n_queries=8)
    g, _ = NDCG_BOOST.grad_hess(s, y, gp, **params)
    sums = np.add.reduceat(g, gp[:-1])
    scale = np.add.reduceat(np.abs(g), gp[:-1])
    assert np.all(np.abs(sums) <= 1e-14 + 1e-13 * scale)
    assert scale.max() > 0


# ---- degenerate and extreme inputs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("hessian", MODES)
def test_degenerate_queries(hessian) -> None:
    # single document; all labels equal (non-zero); all labels zero; then a normal query
    y = np.array([3.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    gp = np.array([0, 1, 4, 7, 9])
    s = np.array([0.3, 1.0, -2.0, 0.5, 4.0, -1.0, 0.0, 0.2, 0.9])
    prep = NDCG_BOOST.prepare(y, gp, hessian=hessian)
    g, h = prep.grad_hess(s)
    np.testing.assert_array_equal(g[:7], 0.0)
    np.testing.assert_array_equal(h[:7], NO_INFO_HESSIAN)
    assert np.all(g[7:] != 0)
    if hessian == "bound":
        assert np.all(h[7:] > HESSIAN_FLOOR)
    else:  # the pair is reversed (0.2 < 0.9): negative curvature, floored
        np.testing.assert_array_equal(h[7:], HESSIAN_FLOOR)
    np.testing.assert_array_equal(prep.descent_weights(s)[:7], 0.0)
    z = prep.ideal_dcg()
    assert z[2] == 0.0 and z[0] == 7.0
    # all-equal gains: every A sums to n(n-1)/2, a constant, whatever the scores
    only_equal = NDCG_BOOST.prepare(y[1:4], [0, 3], hessian=hessian)
    assert only_equal.loss(s[1:4]) == pytest.approx(3.0 * 3.0 / only_equal.ideal_dcg()[0], rel=1e-14)
    assert only_equal.loss(s[1:4] * 100) == pytest.approx(only_equal.loss(s[1:4]), rel=1e-14)
    # all-zero and single-document queries contribute nothing
    assert NDCG_BOOST.loss(s[4:7], y[4:7], [0, 3]) == 0.0
    assert NDCG_BOOST.loss(s[:1], y[:1], [0, 1]) == 0.0
    # label_gain making a labelled query all-zero gain: Z = 0, nothing
    lg = NDCG_BOOST.prepare([1, 1, 0], [0, 3], label_gain=[0.0, 0.0])
    assert lg.ideal_dcg()[0] == 0.0 and lg.loss([1.0, 2.0, 3.0]) == 0.0
    np.testing.assert_array_equal(lg.grad_hess([1.0, 2.0, 3.0])[0], 0.0)


@pytest.mark.parametrize("hessian", MODES)
@pytest.mark.parametrize("scale", [1e4, 1e150, 1e307, 1.5e308])
def test_extreme_scores_stay_finite(hessian, scale) -> None:
    rng = np.random.default_rng(51)
    _, y, gp = random_ranking(rng, n_queries=6, max_docs=9)
    s = scale * rng.choice([-1.0, 1.0, 0.5, 0.0], size=len(y))
    prep = NDCG_BOOST.prepare(y, gp, hessian=hessian)
    g, h = prep.grad_hess(s)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)) and np.all(h >= HESSIAN_FLOOR)
    assert math.isfinite(prep.loss(s))
    assert np.all(np.isfinite(prep.descent_weights(s)))
    # ties between huge scores still give the x = 0 pair terms
    s_tie = np.full(len(y), scale)
    ref_loss, ref_g, *_ = slow_all(np.zeros(len(y)), y, gp)
    assert prep.loss(s_tie) == pytest.approx(ref_loss, rel=1e-13)
    np.testing.assert_allclose(prep.grad_hess(s_tie)[0], ref_g, rtol=1e-12, atol=1e-15)


def test_huge_label_gains_stay_bounded() -> None:
    y = np.array([0.0, 500.0, 1000.0, 3.0])
    g, h = NDCG_BOOST.grad_hess(np.array([0.1, 0.2, -0.3, 0.0]), y, [0, 4])
    assert np.all(np.isfinite(g)) and np.all(np.abs(g) <= 2.0 * 4)  # G/Z <= 1


def test_inlined_exp_matches_libm() -> None:
    from boostplug.objectives._ndcg_boost_kernels import exp_nonpos

    rng = np.random.default_rng(71)
    y = -np.concatenate([rng.uniform(0, 1, 2000), rng.uniform(0, 50, 2000), rng.uniform(0, 707.9, 2000),
                         [0.0, 1e-300, 0.5 * math.log(2.0), math.log(2.0), 707.9]])
    out = np.array([exp_nonpos(v) for v in y])
    ref = np.exp(y)
    assert np.all(np.abs(out - ref) <= np.spacing(ref))  # within 1 ulp
    edge = np.array([-708.0, -708.5, -1e300, -np.inf])
    np.testing.assert_array_equal([exp_nonpos(v) for v in edge], 0.0)


# ---- validation ------------------------------------------------------------------------------------------------
def test_bad_parameters_raise_naming_them() -> None:
    y, gp = np.array([1.0, 0.0, 2.0]), np.array([0, 3])
    with pytest.raises(ValueError, match="unknown parameter.*'gamma'"):
        NDCG_BOOST.prepare(y, gp, gamma=1.0)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="sigma"):
            NDCG_BOOST.prepare(y, gp, sigma=bad)
    for bad in ("2", True, None):
        with pytest.raises(TypeError, match="sigma"):
            NDCG_BOOST.prepare(y, gp, sigma=bad)
    for bad in ("newton", None, 1):
        with pytest.raises(ValueError, match="hessian"):
            NDCG_BOOST.prepare(y, gp, hessian=bad)
    for bad in ([0.0, -1.0, 2.0], [0.0, math.nan, 1.0, 2.0], [[0.0, 1.0, 2.0]], [], "012", 3.0):
        with pytest.raises(ValueError, match="label_gain"):
            NDCG_BOOST.prepare(y, gp, label_gain=bad)
    with pytest.raises(TypeError, match="label_gain"):
        NDCG_BOOST.prepare(y, gp, label_gain=np.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match=r"label_gain of length 2.*label 2\.0"):
        NDCG_BOOST.prepare(y, gp, label_gain=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"label_gain.*label 0\.5"):
        NDCG_BOOST.prepare([0.5, 1.0], [0, 2], label_gain=[0.0, 1.0])
    with pytest.raises(ValueError, match="overflows"):
        NDCG_BOOST.prepare([2000.0, 1.0], [0, 2])


def test_descent_weights_refuse_bad_scores_naming_them() -> None:
    prep = NDCG_BOOST.prepare(np.array([1.0, 0.0, 2.0]), np.array([0, 3]))
    with pytest.raises(ValueError, match="scores must be finite; row 1 has nan"):
        prep.descent_weights([0.0, math.nan, 1.0])
    with pytest.raises(ValueError, match="2 scores for a data set of 3"):
        prep.descent_weights([0.0, 1.0])


# ---- learning sanity: LightGBM with the objective as a callable --------------------------------------------------
def test_lightgbm_training_lowers_the_loss() -> None:
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(61)
    sizes = rng.integers(5, 30, size=40)
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(gp[-1])
    X = rng.normal(size=(n, 5))
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) + 1.0), 0, 4)
    prep = NDCG_BOOST.prepare(y, gp)

    def fobj(preds, train_data):
        assert np.array_equal(np.diff(gp), train_data.get_group())
        return prep.grad_hess(preds)

    train = lgb.Dataset(X, y, group=sizes)
    params = {"objective": fobj, "verbose": -1, "num_leaves": 7, "learning_rate": 0.1,
              "min_data_in_leaf": 5, "num_threads": 1}
    booster = lgb.train(params, train, num_boost_round=20)
    before = prep.loss(np.zeros(n))
    after = prep.loss(booster.predict(X))
    assert after < 0.8 * before


def test_mq2008_lightgbm_raises_training_ndcg(mq2008_dir) -> None:
    """Real data (MQ2008 S1: unsorted but contiguous qids): the objective trains LightGBM and NDCG@10 rises."""
    lgb = pytest.importorskip("lightgbm")
    from sklearn.datasets import load_svmlight_file

    from boostplug.groups import group_ptr_from_qid
    from boostplug.metrics import ndcg

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    X = X.toarray()
    gp = group_ptr_from_qid(qid)
    prep = NDCG_BOOST.prepare(y, gp)
    g, h = prep.grad_hess(np.zeros(len(y)))
    assert np.all(np.isfinite(g)) and np.all(h >= HESSIAN_FLOOR)
    params = {"objective": lambda preds, data: prep.grad_hess(preds), "verbose": -1, "num_leaves": 15,
              "learning_rate": 0.1, "num_threads": 2, "seed": 1}
    booster = lgb.train(params, lgb.Dataset(X, y, group=np.diff(gp)), num_boost_round=30)
    first = booster.predict(X, num_iteration=1)
    last = booster.predict(X)
    assert prep.loss(last) < prep.loss(first)
    assert ndcg(last, y, gp, 10) > ndcg(first, y, gp, 10) + 0.02


# -- parameters that would make the gradients non-finite -------------------------------------------


@pytest.mark.parametrize("sigma", [1e155, np.float64(1e151), 1e-151, 0.0, -2.0, float("inf")])
def test_sigma_outside_its_finite_range_is_refused_before_any_data(sigma):
    """sigma = 1e155 gave NaN Hessians (sigma^2 = inf times 0); LightGBM then trained zeros."""
    shown = repr(float(sigma))
    with pytest.raises(ValueError, match=rf"ndcg_boost: sigma must be .*\[1e-150, 1e\+150\], got {re.escape(shown)}$"):
        objectives.get("ndcg_boost").check({"sigma": sigma})
    with pytest.raises(ValueError, match="sigma must be"):
        NDCG_BOOST.prepare([1.0, 0.0, 2.0], [0, 3], sigma=sigma)


@pytest.mark.parametrize("sigma", [1e-150, 1e150])
def test_sigma_at_the_ends_of_its_range_gives_finite_values(sigma):
    g, h = NDCG_BOOST.grad_hess(np.arange(4.0), [1.0, 0.0, 2.0, 1.0], [0, 4], sigma=sigma)
    assert np.isfinite(g).all() and np.isfinite(h).all() and (h > 0).all()


def test_ideal_dcg_that_overflows_is_refused_naming_the_query():
    with pytest.raises(ValueError, match=r"ideal DCG of query 1 overflows float64 \(its largest gain is 1e\+308\)"):
        NDCG_BOOST.prepare([0.0, 0.0, 1.0, 1.0, 1.0], [0, 2, 5], label_gain=[0.0, 1e308])
