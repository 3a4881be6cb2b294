"""Tests of the MPBoost / RankBoost objective (Zhu et al., CIKM 2009, Eq. 10-13 and appendix). What every
objective follows (derivatives, the gradient in both Hessian modes, the exact Newton Hessian, invariances,
weights, serial = parallel) is checked at each DDF in test_contract_suite.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import objectives
from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN, floor_hessian
from boostplug.objectives._contract import NonFiniteError
from boostplug.objectives.mpboost import EXP_LIMIT, GRAD_SUM_CAP
from boostplug.testing import fd_jacobian
from tests._helpers import random_ranking

MPBOOST = objectives.get("mpboost")  # the registry entry: loss, grad_hess and prepare of the labels

DDFS = ("binary", "ldd", "logdd", "logitdd")
MODES = ("newton", "gentle")
PARAM_VARIANTS = [
    ("binary", {}),
    ("ldd", {}),
    ("ldd", {"alpha": 0.7}),
    ("logdd", {}),
    ("logdd", {"lam": 0.5}),
    ("logitdd", {}),
    ("logitdd", {"beta": 2.0}),
]


# -- slow, obviously-correct references -------------------------------------------------------
def _dist(delta: float, ddf: str, alpha: float = 0.2, lam: float = 3.0, beta: float = 0.5) -> float:
    """The paper's Eq. 2, 6, 7, 8, written out independently of boostplug.objectives.ddf."""
    delta = float(delta)
    sg = int(delta > 0) - int(delta < 0)
    if ddf == "binary":
        return float(sg)
    if ddf == "ldd":
        return alpha * delta
    if ddf == "logdd":
        return sg * math.log(1.0 + lam * abs(delta))
    if ddf == "logitdd":
        return sg / (1.0 + math.exp(-beta * abs(delta)))
    raise AssertionError(ddf)


def _pairs(labels, group_ptr):
    """Every critical pair once, preferred document first."""
    for q in range(len(group_ptr) - 1):
        for i in range(group_ptr[q], group_ptr[q + 1]):
            for j in range(group_ptr[q], group_ptr[q + 1]):
                if labels[i] > labels[j]:
                    yield q, i, j


def brute(scores, labels, group_ptr, ddf="logdd", weights=None, hessian="newton", shift=0.0, **p):
    """O(n^2) pair loop: (J * e^-shift, grad * e^-shift, hess * e^-shift), unfloored."""
    n = len(scores)
    J = 0.0
    g = np.zeros(n)
    h = np.zeros(n)
    for q, i, j in _pairs(labels, group_ptr):
        W = 1.0 if weights is None else weights[q]
        d = _dist(labels[i] - labels[j], ddf, **p)
        w = W * math.exp(-d * (scores[i] - scores[j]) - shift)
        J += w
        g[i] -= d * w
        g[j] += d * w
        c = 2.0 * w if hessian == "gentle" else d * d * w
        h[i] += c
        h[j] += c
    return J, g, h


def max_exponent(scores, labels, group_ptr, ddf="logdd", **p):
    return max(
        (-_dist(labels[i] - labels[j], ddf, **p) * (scores[i] - scores[j]) for _, i, j in _pairs(labels, group_ptr)),
        default=-math.inf,
    )


def _floored(g, h):
    return floor_hessian(np.asarray(g, dtype=float), np.asarray(h, dtype=float))


# -- against the pair loop ---------------------------------------------------------------------
@pytest.mark.parametrize("hessian", MODES)
@pytest.mark.parametrize("ddf,p", PARAM_VARIANTS, ids=[f"{d}-{p}" for d, p in PARAM_VARIANTS])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_matches_pair_loop(ddf, p, hessian, seed):
    rng = np.random.default_rng(seed)
    s, y, gp = random_ranking(rng, n_queries=7, max_docs=12, n_labels=5)
    w = rng.uniform(0.2, 2.0, size=len(gp) - 1)
    w[3] = 0.0  # a zero-weight query
    prep = MPBOOST.prepare(y, gp, weights=w, ddf=ddf, hessian=hessian, **p)
    J, g, h = brute(s, y, gp, ddf, weights=w, hessian=hessian, **p)
    g2, h2 = prep.grad_hess(s)
    assert prep.loss(s) == pytest.approx(J, rel=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(h2, _floored(g, h), rtol=1e-11, atol=1e-12)
    assert prep.log_loss(s) == pytest.approx(math.log(J), rel=1e-12, abs=1e-12)


def test_continuous_labels_and_many_levels(rng):
    """Web-1 style grades (continuous in [0, 4]) and long queries with many levels."""
    sizes = np.array([30, 25, 2, 40])
    gp = np.concatenate(([0], np.cumsum(sizes)))
    y = np.round(rng.uniform(0, 4, size=gp[-1]), 1)
    s = rng.normal(scale=2.0, size=gp[-1])
    for ddf in DDFS:
        J, g, h = brute(s, y, gp, ddf)
        g2, h2 = MPBOOST.grad_hess(s, y, gp, ddf=ddf)
        assert MPBOOST.loss(s, y, gp, ddf=ddf) == pytest.approx(J, rel=1e-12)
        np.testing.assert_allclose(g2, g, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(h2, _floored(g, h), rtol=1e-10, atol=1e-12)


def test_paper_sum_over_ordered_pairs_is_twice_j(rng):
    s, y, gp = random_ranking(rng, n_queries=5, max_docs=8)
    for ddf in DDFS:
        ordered = sum(
            math.exp(-_dist(y[i] - y[j], ddf) * (s[i] - s[j]))
            for q in range(len(gp) - 1)
            for i in range(gp[q], gp[q + 1])
            for j in range(gp[q], gp[q + 1])
            if y[i] != y[j]
        )
        assert ordered == pytest.approx(2.0 * MPBOOST.loss(s, y, gp, ddf=ddf), rel=1e-12)


# -- finite differences ------------------------------------------------------------------------
@pytest.mark.parametrize("ddf", DDFS)
def test_gentle_hessian_dominates_eq11_hessian(ddf, rng):
    """2 diag(sum_j w_ij) - Laplacian(w) is positive semi-definite (Eq. 11's Hessian is the Laplacian)."""
    s, y, gp = random_ranking(rng, n_queries=4, max_docs=9)
    n = len(s)
    lap = np.zeros((n, n))
    for _, i, j in _pairs(y, gp):
        w = math.exp(-_dist(y[i] - y[j], ddf) * (s[i] - s[j]))
        lap[i, i] += w
        lap[j, j] += w
        lap[i, j] -= w
        lap[j, i] -= w
    g, h = MPBOOST.grad_hess(s, y, gp, ddf=ddf, hessian="gentle")
    np.testing.assert_allclose(h, _floored(g, 2.0 * np.diag(lap)), rtol=1e-12)
    assert np.linalg.eigvalsh(np.diag(h) - lap).min() > -1e-10


def test_binary_gentle_hessian_bounds_the_second_derivative(rng):
    """With |d| = 1 (BINARY) the gentle Hessian is twice the exact diagonal, so >= |d2J/dF_i^2|."""
    s, y, gp = random_ranking(rng, n_queries=5, max_docs=8)
    prep = MPBOOST.prepare(y, gp, ddf="binary", hessian="gentle")
    g, h = prep.grad_hess(s)
    second = np.diag(fd_jacobian(lambda t: prep.grad_hess(t)[0], s))
    assert np.all(h >= np.abs(second) - 1e-8)


# -- GentleBoost's stump (appendix, Eq. 17-19) ------------------------------------------------
def _paper_stump(s, y, gp, R, ddf):
    """a = (sum_A1 w d - sum_B2 w d) / (sum_A1 w + sum_B2 w) over the paper's ordered pairs I."""
    num = den = 0.0
    for q in range(len(gp) - 1):
        for i in range(gp[q], gp[q + 1]):
            for j in range(gp[q], gp[q + 1]):
                if y[i] == y[j] or R[i] == R[j]:
                    continue  # A2/B1 pairs do not depend on a
                d = _dist(y[i] - y[j], ddf)
                w = math.exp(-d * (s[i] - s[j]))
                num += w * d if R[i] else -w * d  # A1: i above theta; B2: j above theta
                den += w
    return num / den


def _tree_step(g, h, R):
    return -g[R].sum() / h[R].sum() + g[~R].sum() / h[~R].sum()


@pytest.mark.parametrize("ddf", DDFS)
def test_gentle_tree_step_is_the_paper_stump_on_separating_splits(ddf, rng):
    sizes = rng.integers(2, 9, size=6)
    gp = np.concatenate(([0], np.cumsum(sizes)))
    y = np.zeros(gp[-1])
    for q in range(6):  # both grades in every query, so no query is degenerate
        y[gp[q]:gp[q + 1]] = rng.permutation(np.r_[1.0, 0.0, rng.integers(0, 2, sizes[q] - 2)])
    y *= 3.0 if ddf != "binary" else 1.0  # a grade gap where the DDFs differ
    s = rng.normal(size=gp[-1])
    R = y > 0  # a feature that separates the grades: no critical pair within a side
    g, h = MPBOOST.grad_hess(s, y, gp, ddf=ddf, hessian="gentle")
    assert _tree_step(g, h, R) == pytest.approx(_paper_stump(s, y, gp, R, ddf), rel=1e-12)
    # the exact-diagonal Newton step moves both ends: for BINARY it is twice the stump
    if ddf == "binary":
        g, h = MPBOOST.grad_hess(s, y, gp, ddf=ddf, hessian="newton")
        assert _tree_step(g, h, R) == pytest.approx(2 * _paper_stump(s, y, gp, R, ddf), rel=1e-12)


@pytest.mark.parametrize("ddf", DDFS)
def test_gentle_tree_step_on_general_splits(ddf, rng):
    """v_R - v_L = a * (C/2) (1/(C + 2 W_RR) + 1/(C + 2 W_LL)) (module docstring)."""
    sizes = rng.integers(3, 10, size=5)
    gp = np.concatenate(([0], np.cumsum(sizes)))
    y = rng.integers(0, 4, size=gp[-1]).astype(float)
    y[gp[:-1]] = 3.0
    y[gp[:-1] + 1] = 0.0
    s = rng.normal(size=gp[-1])
    R = rng.random(gp[-1]) < 0.5
    R[0], R[1] = True, False
    C = W_RR = W_LL = 0.0
    for _, i, j in _pairs(y, gp):
        w = math.exp(-_dist(y[i] - y[j], ddf) * (s[i] - s[j]))
        if R[i] != R[j]:
            C += w
        elif R[i]:
            W_RR += w
        else:
            W_LL += w
    g, h = MPBOOST.grad_hess(s, y, gp, ddf=ddf, hessian="gentle")
    a = _paper_stump(s, y, gp, R, ddf)
    expected = a * C / 2 * (1 / (C + 2 * W_RR) + 1 / (C + 2 * W_LL))
    assert _tree_step(g, h, R) == pytest.approx(expected, rel=1e-12)


# -- the registry entries ----------------------------------------------------------------------
def test_rankboost_is_mpboost_binary(rng):
    s, y, gp = random_ranking(rng)
    rb = objectives.get("rankboost")
    g1, h1 = rb.grad_hess(s, y, gp)
    g2, h2 = MPBOOST.grad_hess(s, y, gp, ddf="binary")
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(h1, h2)
    assert rb.loss(s, y, gp) == MPBOOST.loss(s, y, gp, ddf="binary")
    with pytest.raises(ValueError, match="ddf"):
        rb.loss(s, y, gp, ddf="logdd")


def test_defaults_and_registry():
    assert objectives.get("mpboost").defaults == {"ddf": "logdd", "alpha": 0.2, "lam": 3.0, "beta": 0.5,
                                                  "hessian": "newton", "hessian_floor": True}
    assert set(objectives.get("mpboost").hessians) == {"newton", "gentle"}
    assert objectives.get("mpboost").defaults["ddf"] == "logdd"
    assert objectives.get("rankboost").defaults["ddf"] == "binary"


# -- degenerate and extreme inputs -------------------------------------------------------------
def test_degenerate_queries_zero_gradient_and_floor():
    y = np.array([2.0, 1.0, 1.0, 1.0, 0.0, 0.0, 3.0, 0.0])
    gp = np.array([0, 1, 4, 6, 8])  # single doc, all equal, all zero, one real pair
    s = np.array([5.0, -1.0, 2.0, 0.5, 0.0, 9.0, 0.0, 0.0])
    for hessian in MODES:
        g, h = MPBOOST.grad_hess(s, y, gp, hessian=hessian)
        np.testing.assert_array_equal(g[:6], 0.0)
        np.testing.assert_array_equal(h[:6], NO_INFO_HESSIAN)  # in no pair: no information
        assert g[6] < 0 < g[7] and h[6] > HESSIAN_FLOOR
    prep = MPBOOST.prepare(y[:6], gp[:4])
    assert prep.loss(s[:6]) == 0.0
    assert prep.log_loss(s[:6]) == -math.inf
    g, h = prep.grad_hess(s[:6])
    assert not np.isnan(g).any() and (h == NO_INFO_HESSIAN).all()


def _wild_scores(rng, y, scale):
    return rng.choice([-scale, scale], size=len(y)) + rng.normal(size=len(y)) * scale * 0.01


@pytest.mark.parametrize("hessian", MODES)
@pytest.mark.parametrize("ddf", DDFS)
@pytest.mark.parametrize("scale", [1e4, 1e6, 1e300])
def test_extreme_scores_finite_and_proportional(ddf, hessian, scale, rng):
    """One global positive constant times the exact values (computed in the test with a log shift)."""
    s0, y, gp = random_ranking(rng, n_queries=6, max_docs=12, n_labels=5)
    s = _wild_scores(rng, y, scale)
    prep = MPBOOST.prepare(y, gp, ddf=ddf, hessian=hessian)
    g, h = prep.grad_hess(s)
    assert np.isfinite(g).all() and np.isfinite(h).all()
    assert max(np.abs(g).sum(), h.sum()) == pytest.approx(GRAD_SUM_CAP, rel=1e-12)
    m = max_exponent(s, y, gp, ddf)
    J, gb, hb = brute(s, y, gp, ddf, hessian=hessian, shift=m)
    c = GRAD_SUM_CAP / max(np.abs(gb).sum(), hb.sum())
    tol = 1e-9 if scale < 1e100 else 1e-6  # products d * (F_j - F_i) of 1e300 round at 1e284
    np.testing.assert_allclose(g, c * gb, rtol=tol, atol=1e-200)
    np.testing.assert_allclose(h, _floored(c * gb, c * hb), rtol=tol, atol=1e-200)
    with pytest.raises(NonFiniteError, match=r"mpboost: the loss overflows float64 \(inf\)"):  # refused, not returned
        prep.loss(s)
    lj = prep.log_loss(s)
    assert math.isfinite(lj) and lj == pytest.approx(m + math.log(J), rel=1e-12)


@pytest.mark.parametrize("hessian", MODES)
@pytest.mark.parametrize("ddf", DDFS)
@pytest.mark.parametrize("with_huge", [False, True], ids=["no-shift", "beside-a-shifted-query"])
def test_every_factorisation_matches_the_pair_loop(ddf, hessian, with_huge, rng):
    """The kernel's three paths, each on its own query: one distance for every pair (two levels,
    or BINARY), several distances with pair exponents about the query's mid-range just under
    CENTRED_EXP_MAX (centred factors), and just over it (level extremes); beside a query whose
    largest exponent exceeds EXP_LIMIT too, which shifts every value by one global constant."""
    from boostplug.objectives._mpboost_kernels import CENTRED_EXP_MAX

    y = np.concatenate([np.repeat([0.0, 2.0], 5), np.tile(np.arange(5.0), 4), np.tile(np.arange(5.0), 4),
                        np.tile(np.arange(5.0), 4)])
    gp = np.array([0, 10, 30, 50, 70])
    s = rng.normal(size=y.size)
    for q, side in ((2, 0.98), (3, 1.02)):  # mid-range exponent just under / over the bound
        a, b = gp[q], gp[q + 1]
        dmax = max(_dist(y[i] - y[j], ddf) for i in range(a, b) for j in range(a, b) if y[i] > y[j])
        s[a:b] *= side * CENTRED_EXP_MAX / (dmax * 0.5 * (s[a:b].max() - s[a:b].min()))
    if with_huge:  # one pair mis-ordered by an exponent of 610: the global shift is 10
        gap = 610.0 / _dist(1.0, ddf)
        y = np.concatenate([y, [1.0, 0.0]])
        s = np.concatenate([s, [-gap / 2, gap / 2]])
        gp = np.append(gp, y.size)
    # each query alone (its own scale: nothing floored), then all together (one global constant)
    parts = [(s[a:b], y[a:b], np.array([0, b - a])) for a, b in zip(gp[:-1], gp[1:])] + [(s, y, gp)]
    for sq, yq, gq in parts:
        g, h = MPBOOST.grad_hess(sq, yq, gq, ddf=ddf, hessian=hessian)
        m = max_exponent(sq, yq, gq, ddf)
        _, gb, hb = brute(sq, yq, gq, ddf, hessian=hessian, shift=m)
        total = max(np.abs(gb).sum(), hb.sum())
        c = GRAD_SUM_CAP / total if m + math.log(total) > math.log(GRAD_SUM_CAP) else math.exp(m)
        np.testing.assert_allclose(g, c * gb, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(h, _floored(c * gb, c * hb), rtol=1e-9, atol=1e-300)
        assert np.abs(g).min() > 1e-280  # nothing underflowed: every value was compared


@pytest.mark.parametrize("ddf", DDFS)
def test_wide_spread_within_a_query(ddf, rng):
    """Levels whose scores span +-1e4 on both sides: each factor of the factorisation stays finite."""
    y = np.repeat([0.0, 1.0, 2.0, 3.0, 4.0], 6)
    s = rng.uniform(-1e4, 1e4, size=y.size)
    s[::7] = rng.normal(size=s[::7].size)  # some documents near zero too
    gp = np.array([0, y.size])
    g, h = MPBOOST.grad_hess(s, y, gp, ddf=ddf)
    m = max_exponent(s, y, gp, ddf)
    _, gb, hb = brute(s, y, gp, ddf, shift=m)
    c = GRAD_SUM_CAP / max(np.abs(gb).sum(), hb.sum())
    np.testing.assert_allclose(g, c * gb, rtol=1e-9, atol=1e-200)
    np.testing.assert_allclose(h, _floored(c * gb, c * hb), rtol=1e-9, atol=1e-200)


def test_exact_below_the_cap_and_loss_exact_above_exp_limit(rng):
    s, y, gp = random_ranking(rng, n_queries=5, max_docs=8)
    s = s * (25.0 / max_exponent(s, y, gp))  # largest pair exponent 25: grads up to ~1e11, no rescaling
    J, g, h = brute(s, y, gp)
    g2, h2 = MPBOOST.grad_hess(s, y, gp)
    assert np.abs(g).max() > 1e8 and max(np.abs(g).sum(), h.sum()) < GRAD_SUM_CAP
    np.testing.assert_allclose(g2, g, rtol=1e-11)
    np.testing.assert_allclose(h2, _floored(g, h), rtol=1e-11)
    # an exponent of ~650 (> EXP_LIMIT, J ~ 1e282): the loss is still exact
    t = s * (650.0 / max_exponent(s, y, gp))
    J, _, _ = brute(t, y, gp)
    assert J > 1e200
    assert MPBOOST.loss(t, y, gp) == pytest.approx(J, rel=1e-11)


def test_far_below_queries_underflow_to_zero_gradient():
    """The documented consequence of one global constant: a query far below the max stops counting."""
    y = np.array([1.0, 0.0, 1.0, 0.0])
    gp = np.array([0, 2, 4])
    s = np.array([-1e4, 1e4, 0.3, -0.2])  # q0 mis-ordered by 2e4, q1 ordinary
    g, h = MPBOOST.grad_hess(s, y, gp, ddf="binary")
    assert g[0] == -GRAD_SUM_CAP / 2 and g[1] == GRAD_SUM_CAP / 2
    np.testing.assert_array_equal(g[2:], 0.0)
    np.testing.assert_array_equal(h[2:], NO_INFO_HESSIAN)  # underflowed to no information


def test_zero_weight_query_does_not_force_rescaling():
    y = np.array([1.0, 0.0, 1.0, 0.0])
    gp = np.array([0, 2, 4])
    s = np.array([-1e4, 1e4, 0.3, -0.2])
    g, _ = MPBOOST.grad_hess(s, y, gp, weights=[0.0, 1.0], ddf="binary")
    _, gb, _ = brute(s[2:], y[2:], [0, 2], "binary")
    np.testing.assert_array_equal(g[:2], 0.0)
    np.testing.assert_allclose(g[2:], gb, rtol=1e-13)


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params,exc,match",
    [
        ({"foo": 1}, ValueError, "foo"),
        ({"ddf": "cosh"}, ValueError, "cosh"),
        ({"ddf": 3}, ValueError, "ddf"),
        ({"hessian": "exact"}, ValueError, "hessian"),
        ({"hessian": None}, ValueError, "hessian"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": -1.0, "ddf": "binary"}, ValueError, "alpha"),
        ({"lam": float("nan")}, ValueError, "lam"),
        ({"beta": float("inf")}, ValueError, "beta"),
        ({"lam": "3"}, TypeError, "lam"),
        ({"beta": True}, TypeError, "beta"),
    ],
    ids=lambda v: repr(v) if not isinstance(v, type) else v.__name__,
)
def test_bad_parameters(params, exc, match):
    with pytest.raises(exc, match=match):
        MPBOOST.prepare([1.0, 0.0], [0, 2], **params)


def test_an_overflowing_pair_exponent_is_refused():
    prep = MPBOOST.prepare([1.0, 0.0, 2.0], [0, 3])
    with pytest.raises(ValueError, match="overflow"):
        prep.grad_hess([-1.7e308, 0.0, 1.7e308])  # pair exponent d (F_j - F_i) = inf


# -- learning with LightGBM ------------------------------------------------------------------
def _lgb_fobj(prep):
    def fobj(preds, train_data):
        return prep.grad_hess(preds)
    return fobj


def test_lightgbm_gentle_stump_is_the_paper_stump(rng):
    lgb = pytest.importorskip("lightgbm")
    sizes = rng.integers(3, 8, size=8)
    gp = np.concatenate(([0], np.cumsum(sizes)))
    y = np.zeros(gp[-1])
    for q in range(len(sizes)):
        y[gp[q]:gp[q + 1]] = rng.permutation(np.r_[1.0, 0.0, rng.integers(0, 2, sizes[q] - 2)])
    F0 = rng.normal(size=gp[-1])
    X = y[:, None].copy()  # one feature that separates the grades
    prep = MPBOOST.prepare(y, gp, ddf="logdd", hessian="gentle")
    ds = lgb.Dataset(X, y, group=sizes, init_score=F0, params={"min_data_in_bin": 1, "verbose": -1})
    params = {"objective": _lgb_fobj(prep), "verbose": -1, "num_leaves": 2, "learning_rate": 1.0,
              "lambda_l2": 0.0, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "num_threads": 1}
    bst = lgb.train(params, ds, num_boost_round=1)
    out = bst.predict(X)
    step = out[y > 0][0] - out[y == 0][0]
    a = _paper_stump(F0, y, gp, y > 0, "logdd")
    assert step == pytest.approx(a, rel=1e-5)  # LightGBM casts gradients to float32


@pytest.mark.parametrize("hessian", MODES)
def test_lightgbm_training_lowers_the_loss(hessian, rng):
    lgb = pytest.importorskip("lightgbm")
    sizes = rng.integers(5, 30, size=40)
    gp = np.concatenate(([0], np.cumsum(sizes)))
    X = rng.normal(size=(gp[-1], 5))
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=gp[-1]) + 1.5), 0, 4)
    prep = MPBOOST.prepare(y, gp, hessian=hessian)
    ds = lgb.Dataset(X, y, group=sizes)
    params = {"objective": _lgb_fobj(prep), "verbose": -1, "num_leaves": 7, "learning_rate": 0.1,
              "min_data_in_leaf": 5, "num_threads": 1}
    bst = lgb.train(params, ds, num_boost_round=20)
    losses = [prep.loss(bst.predict(X, num_iteration=k)) for k in (1, 5, 20)]
    assert losses[0] > losses[1] > losses[2]
    assert losses[2] < 0.75 * prep.loss(np.zeros(gp[-1]))


def test_mq2008_fold1_lightgbm(mq2008_dir):
    """Real data: with LightGBM trees MPBoost.LOGDD raises training NDCG@10 and lowers J."""
    lgb = pytest.importorskip("lightgbm")
    from sklearn.datasets import load_svmlight_file

    Xs, ys, sizes = [], [], []
    for part in ("S1.txt", "S2.txt", "S3.txt"):
        X, y, qid = load_svmlight_file(str(mq2008_dir / part), query_id=True)
        Xs.append(X.toarray())
        ys.append(y)
        starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])  # contiguous, unsorted qids
        sizes.append(np.diff(np.r_[starts, qid.size]))
    X, y, sizes = np.vstack(Xs), np.concatenate(ys), np.concatenate(sizes)
    gp = np.r_[0, np.cumsum(sizes)]
    prep = MPBOOST.prepare(y, gp)
    params = {"objective": _lgb_fobj(prep), "verbose": -1, "num_leaves": 15, "learning_rate": 0.1,
              "min_data_in_leaf": 20, "num_threads": 1, "seed": 0, "metric": "ndcg", "eval_at": [10]}
    ds = lgb.Dataset(X, y, group=sizes)
    record: dict = {}
    bst = lgb.train(params, ds, num_boost_round=30, valid_sets=[ds], valid_names=["train"],
                    callbacks=[lgb.record_evaluation(record)])
    curve = record["train"]["ndcg@10"]  # LightGBM's own NDCG@10 on the training set
    assert curve[-1] > curve[0] + 0.01
    assert prep.loss(bst.predict(X)) < prep.loss(bst.predict(X, num_iteration=1))


# -- parameters that would make the gradients non-finite -------------------------------------------


@pytest.mark.parametrize("params,match", [
    ({"ddf": "ldd", "alpha": 1e308}, r"alpha must be a positive finite number in \(0, 1e\+15\], got 1e\+308$"),
    ({"ddf": "ldd", "alpha": np.float64(2e15)}, r"alpha .* got 2000000000000000.0$"),
    ({"ddf": "logdd", "lam": float("inf")}, r"lam must be a positive finite number"),
    ({"ddf": "logitdd", "beta": -1.0}, r"beta must be a positive finite number"),
    ({"ddf": "binary", "alpha": float("nan")}, r"alpha must be a positive finite number"),  # checked whatever the ddf
])
def test_ddf_parameter_outside_its_range_is_refused_before_any_data(params, match):
    """alpha = 1e308 was accepted and the first round blamed the scores."""
    with pytest.raises(ValueError, match=match):
        objectives.get("mpboost").check(params)
    with pytest.raises(ValueError, match=match):
        MPBOOST.prepare([1.0, 0.0, 2.0], [0, 3], **params)


def test_dist_beyond_its_range_for_these_grades_is_refused_naming_the_parameter():
    with pytest.raises(ValueError, match=r"mpboost: ddf='ldd' with alpha=10000000000.0 gives \|dist\| = 1e\+16 for "
                                         r"the grade difference 1000000.0"):
        MPBOOST.prepare([1e6, 0.0], [0, 2], ddf="ldd", alpha=1e10)
    with pytest.raises(ValueError, match=r"lam=5e-324 gives \|dist\| = 0.0 for the grade difference 0.5"):
        MPBOOST.prepare([0.5, 0.0], [0, 2], ddf="logdd", lam=5e-324)  # the pair would be dropped


@pytest.mark.parametrize("lam", [1e300, 1.7e308])
def test_huge_logdd_lambda_stays_finite(lam):
    g, h = MPBOOST.grad_hess([0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [0, 3], ddf="logdd", lam=lam)
    assert np.isfinite(g).all() and np.isfinite(h).all() and g[0] < 0 < g[2]
