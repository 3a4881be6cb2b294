"""QBRank objective: against a pure-Python pair loop, finite differences, invariances,
degenerate/extreme inputs, validation, the exact line search, and LightGBM. What every objective
follows (at the registry's settings) is checked in test_contract_suite.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN, floor_hessian, get, qbrank
from boostplug.objectives._contract import NonFiniteError
from boostplug.testing import assert_bound_majorises, fd_gradient, fd_jacobian
from tests._helpers import linear_graded_problem, random_ranking

QBRANK = get("qbrank")  # the registry entry: loss, grad_hess and prepare of the labels

# -- a slow, obviously-correct reference ---------------------------------------------------


def _labeled_mask(labels, group_ptr, labeled):
    mask = np.zeros(len(labels), dtype=bool)
    for q in range(len(group_ptr) - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        single = len(set(labels[a:b].tolist())) == 1
        mask[a:b] = labeled == "all" or (labeled == "single" and single)
    return mask


def _brute_terms(scores, labels, group_ptr, *, weights=None, w=0.5, tau="grade", pairs=None,
                 pair_tau=1.0, label_pairs=True, labeled="single", hessian="bound"):
    """Pair list [(x, y, omega, margin)] and labeled list [(z, omega, residual h - l)]."""
    nq = len(group_ptr) - 1
    W = np.ones(nq) if weights is None else np.asarray(weights, float)
    qof = np.repeat(np.arange(nq), np.diff(group_ptr))
    plist = []
    if label_pairs:
        for q in range(nq):
            # the documented definition: scores relative to the query's lowest one
            lo = min(scores[group_ptr[q]:group_ptr[q + 1]], default=0.0)
            for i in range(group_ptr[q], group_ptr[q + 1]):
                for j in range(group_ptr[q], group_ptr[q + 1]):
                    if labels[i] > labels[j]:
                        if tau == "grade":
                            m = ((scores[j] - lo) - labels[j]) - ((scores[i] - lo) - labels[i])
                        else:
                            m = ((scores[j] - lo) + tau) - (scores[i] - lo)
                        plist.append((i, j, w * W[q], m))
    if pairs is not None:
        for x, y in np.asarray(pairs):
            plist.append((int(x), int(y), w * W[qof[x]], (scores[y] - scores[x]) + pair_tau))
    mask = _labeled_mask(labels, group_ptr, labeled)
    llist = [(z, (1 - w) * W[qof[z]], scores[z] - labels[z]) for z in np.flatnonzero(mask)]
    return plist, llist


def brute(scores, labels, group_ptr, **params):
    """(loss, exact grad, bound hess, mean grad, mean hess, dense Hessian, entry counts)."""
    n = len(scores)
    plist, llist = _brute_terms(scores, labels, group_ptr, **params)
    loss = 0.0
    g = np.zeros(n)
    hb = np.zeros(n)
    H = np.zeros((n, n))
    count = np.zeros(n)
    wsum = np.zeros(n)
    for x, y, om, m in plist:
        count[x] += 1
        count[y] += 1
        wsum[x] += om
        wsum[y] += om
        if m > 0:
            loss += 0.5 * om * m * m
            g[x] -= om * m
            g[y] += om * m
            hb[x] += 2 * om
            hb[y] += 2 * om
            H[x, x] += om
            H[y, y] += om
            H[x, y] -= om
            H[y, x] -= om
    for z, om, r in llist:
        loss += 0.5 * om * r * r
        g[z] += om * r
        hb[z] += om
        H[z, z] += om
        count[z] += 1
        wsum[z] += om
    safe = np.maximum(count, 1)
    g_mean = np.where(count > 0, g / safe, 0.0)
    h_mean = np.where(count > 0, wsum / safe, 0.0)
    return loss, g, floor_hessian(g, hb), g_mean, floor_hessian(g_mean, h_mean), H, count


def brute_line_search(scores, labels, group_ptr, direction, **params):
    """Exact minimiser by enumerating breakpoints; returns (s, R) with the smallest |s|."""
    plist, llist = _brute_terms(scores, labels, group_ptr, **params)
    terms = [(om, m, direction[y] - direction[x]) for x, y, om, m in plist]
    lterms = [(om, r, direction[z]) for z, om, r in llist]

    def R(s):
        return (sum(0.5 * om * max(0.0, m + s * dl) ** 2 for om, m, dl in terms)
                + sum(0.5 * om * (r + s * d) ** 2 for om, r, d in lterms))

    def dR_affine(s_mid):  # R'(s) = A + B s on the piece containing s_mid
        A = B = 0.0
        for om, m, dl in terms:
            if m + s_mid * dl > 0:
                A += om * m * dl
                B += om * dl * dl
        for om, r, d in lterms:
            A += om * r * d
            B += om * d * d
        return A, B

    bps = sorted({-m / dl for om, m, dl in terms if dl != 0})
    edges = [-math.inf] + bps + [math.inf]
    candidates = [0.0] + bps
    for lo, hi in zip(edges[:-1], edges[1:]):
        mid = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (
            lo + 1.0 if math.isfinite(lo) else (hi - 1.0 if math.isfinite(hi) else 0.0))
        A, B = dR_affine(mid)
        if B > 0:
            root = -A / B
            if lo <= root <= hi:
                candidates.append(root)
    best = min(R(s) for s in candidates)
    tol = 1e-12 * max(1.0, abs(best))
    s_best = min((s for s in candidates if R(s) <= best + tol), key=abs)
    return s_best, R


# -- data and parameter variants --------------------------------------------------------------

VARIANTS = {
    "default": {},
    "tau-const": {"tau": 0.7},
    "labeled-all-w03": {"labeled": "all", "w": 0.3},
    "labeled-none": {"labeled": "none"},
    "mean": {"hessian": "mean"},
    "mean-all-tau": {"hessian": "mean", "labeled": "all", "tau": 1.5},
    "explicit+labels": {"explicit": True, "pair_tau": 0.5},
    "explicit-only": {"explicit": True, "label_pairs": False, "labeled": "none"},
    "explicit-mean-all": {"explicit": True, "hessian": "mean", "labeled": "all"},
    "w1": {"w": 1.0, "labeled": "all"},
}


#: Settings the contract suite (test_contract_suite.py) already checks on every objective.
SUITE_VARIANTS = ("default", "tau-const", "labeled-none")


def _params(variant, rng, n):
    p = dict(VARIANTS[variant])
    if p.pop("explicit", False):
        P = rng.integers(0, n, size=(max(3, n // 2), 2))
        P = P[P[:, 0] != P[:, 1]]
        p["pairs"] = P
    return p


def _data(seed, n_queries=6, max_docs=9, weights=False):
    rng = np.random.default_rng(seed)
    s, y, gp = random_ranking(rng, n_queries=n_queries, max_docs=max_docs)
    wq = rng.uniform(0.2, 3.0, size=len(gp) - 1) if weights else None
    return rng, s, y, gp, wq


def _fast(scores, labels, gp, wq, p):
    prep = QBRANK.prepare(labels, gp, weights=wq, **p)
    g, h = prep.grad_hess(scores)
    return prep.loss(scores), g, h


# -- against the pure-Python pair loop ------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_brute_force_with_ties(variant, seed):
    rng, s, y, gp, wq = _data(seed, weights=seed % 2 == 1)
    p = _params(variant, rng, len(s))
    loss, g, h = _fast(s, y, gp, wq, p)
    bl, bg, bhb, bgm, bhm, _, _ = brute(s, y, gp, weights=wq, **p)
    mean = p.get("hessian") == "mean"
    assert loss == pytest.approx(bl, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(g, bgm if mean else bg, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(h, bhm if mean else bhb, rtol=1e-12, atol=1e-12)


def test_many_levels_and_large_queries():
    """Real-valued labels (many levels, deep Fenwick trees) and larger queries."""
    rng = np.random.default_rng(7)
    sizes = np.array([60, 1, 45, 30])
    gp = np.concatenate(([0], np.cumsum(sizes)))
    y = np.round(rng.uniform(0, 6, size=gp[-1]), 1)
    s = np.round(rng.normal(size=gp[-1]), 1)
    for p in ({}, {"tau": 0.3}, {"hessian": "mean", "labeled": "all"}):
        loss, g, h = _fast(s, y, gp, None, p)
        bl, bg, bhb, bgm, bhm, _, _ = brute(s, y, gp, **p)
        mean = p.get("hessian") == "mean"
        assert loss == pytest.approx(bl, rel=1e-12)
        np.testing.assert_allclose(g, bgm if mean else bg, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(h, bhm if mean else bhb, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_round_starts_its_sort_from_the_last_and_gives_the_brute_force(variant):
    """The kernel sorts each query starting from the previous call's order: nearly sorted after a
    small step, a reversal past the insertion sort's budget (a full sort then), new ties; every
    call equals the brute force of its own scores, whatever came before."""
    rng = np.random.default_rng(11)
    sizes = np.array([70, 3, 1, 40, 200])
    gp = np.concatenate(([0], np.cumsum(sizes)))
    y = rng.integers(0, 5, size=gp[-1]).astype(float)
    p = _params(variant, rng, gp[-1])
    prep = QBRANK.prepare(y, gp, **p)
    s = rng.normal(size=gp[-1])
    steps = [s, s + 0.01 * rng.normal(size=s.size), -s, np.round(s, 1), s]
    for scores in steps:
        g, h = prep.grad_hess(scores)
        _, bg, bhb, bgm, bhm, _, _ = brute(scores, y, gp, **p)
        mean = p.get("hessian") == "mean"
        np.testing.assert_allclose(g, bgm if mean else bg, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(h, bhm if mean else bhb, rtol=1e-12, atol=1e-12)
        assert prep.loss(scores) == pytest.approx(brute(scores, y, gp, **p)[0], rel=1e-12, abs=1e-12)


def test_registry_entry():
    _, s, y, gp, _ = _data(3)
    assert QBRANK.loss(s, y, gp) == QBRANK.prepare(y, gp).loss(s)
    assert set(QBRANK.hessians) == {"bound", "mean"}


def test_docstring_example():
    assert QBRANK.loss(np.zeros(3), [2.0, 0.0, 1.0], [0, 3]) == pytest.approx(1.5)


# -- finite differences ------------------------------------------------------------------------


def _smooth_case(seed, p_variant):
    """Continuous random scores whose margins are all far from the hinge kink."""
    for trial in range(200):
        rng, _, y, gp, wq = _data(1000 * seed + trial, weights=True)
        s = rng.normal(scale=1.5, size=len(y))
        p = _params(p_variant, rng, len(y))
        plist, _ = _brute_terms(s, y, gp, weights=wq, **p)
        if not plist or min(abs(m) for *_, m in plist) > 1e-2:
            return s, y, gp, wq, p
    raise RuntimeError("no smooth case found")  # pragma: no cover


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v not in SUITE_VARIANTS])
def test_gradient_is_five_point_derivative_of_loss(variant):
    """Explicit pairs across queries, combined settings and the "mean" mode's entry counts."""
    s, y, gp, wq, p = _smooth_case(11, variant)
    prep = QBRANK.prepare(y, gp, weights=wq, **p)
    g, _ = prep.grad_hess(s)
    fd = fd_gradient(prep.loss, s)
    if p.get("hessian") == "mean":
        # "mean" mode returns dR/dh divided by each document's entry count.
        count = brute(s, y, gp, weights=wq, **p)[6]
        fd = np.where(count > 0, fd / np.maximum(count, 1), 0.0)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("variant", [v for v in VARIANTS if "mean" not in v])
def test_bound_hessian_dominates_finite_difference_hessian(variant):
    s, y, gp, wq, p = _smooth_case(12, variant)
    prep = QBRANK.prepare(y, gp, weights=wq, **p)
    _, hb = prep.grad_hess(s)
    J = fd_jacobian(lambda v: prep.grad_hess(v)[0], s)
    np.testing.assert_allclose(J, brute(s, y, gp, weights=wq, **p)[5], atol=1e-8)
    assert_bound_majorises(hb, J, tol=1e-8)  # the diagonal bounds the whole (block) Hessian


# -- invariances --------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["labeled-none", "tau-const", "explicit+labels"])
def test_adding_a_constant_to_one_query_changes_nothing(variant):
    rng, s, y, gp, wq = _data(5, weights=True)
    p = _params(variant, rng, len(s))
    if "pairs" in p:  # explicit pairs may cross queries: keep those inside query 3
        a, b = gp[3], gp[4]
        p["pairs"] = np.array([[a, b - 1], [b - 1, a + 1]]) if b - a > 2 else np.array([[a, b - 1]])
    mask = _labeled_mask(y, gp, p.get("labeled", "single"))
    q = next(q for q in range(len(gp) - 1) if not mask[gp[q]:gp[q + 1]].any())
    # dyadic scores and shift: every shifted score is exact, so pairs at a kink stay at it
    s = np.round(s * 8) / 8
    t = s.copy()
    t[gp[q]:gp[q + 1]] += 12.375
    l1, g1, h1 = _fast(s, y, gp, wq, p)
    l2, g2, h2 = _fast(t, y, gp, wq, p)
    assert l2 == pytest.approx(l1, rel=1e-12)
    np.testing.assert_allclose(g2, g1, atol=1e-11)
    np.testing.assert_allclose(h2, h1, atol=1e-12)


@pytest.mark.parametrize("tau", ["grade", 0.5])
def test_pair_gradients_sum_to_zero_per_query(tau):
    _, s, y, gp, wq = _data(9, n_queries=8, weights=True)
    g, _ = QBRANK.grad_hess(s, y, gp, weights=wq, tau=tau, labeled="none")
    assert np.abs(g).max() > 0
    np.testing.assert_allclose(np.add.reduceat(g, gp[:-1]), 0.0, atol=1e-12)


# -- degenerate and extreme inputs ---------------------------------------------------------------


def test_degenerate_queries():
    y = np.array([2.0, 1.0, 1.0, 1.0, 0.0, 3.0])
    gp = np.array([0, 1, 4, 6])  # a single doc, an all-equal query, a normal one
    s = np.array([0.3, -1.0, 2.0, 0.5, 0.1, 0.2])
    g, h = QBRANK.grad_hess(s, y, gp, labeled="none")
    np.testing.assert_array_equal(g[:4], 0.0)
    np.testing.assert_array_equal(h[:4], NO_INFO_HESSIAN)
    assert np.all(g[4:] != 0)
    # Under the default (labeled="single") they are the paper's L1 data: squared error.
    g, h = QBRANK.grad_hess(s, y, gp)
    np.testing.assert_allclose(g[:4], 0.5 * (s[:4] - y[:4]))
    np.testing.assert_allclose(h[:4], 0.5)
    # All labels zero everywhere: only squared error towards 0.
    z = np.zeros(6)
    g, h = QBRANK.grad_hess(s, z, gp, labeled="none", pairs=[[0, 1]])
    assert np.isfinite(g).all() and g[2:].tolist() == [0.0] * 4


@pytest.mark.parametrize("magnitude", [1e4, 1e8, 1e15])
@pytest.mark.parametrize("variant", ["default", "tau-const", "explicit-mean-all"])
def test_extreme_scores_are_finite(magnitude, variant):
    rng, _, y, gp, wq = _data(13, weights=True)
    s = magnitude * rng.choice([-1.0, 1.0], size=len(y)) * rng.uniform(0.5, 1.0, size=len(y))
    p = _params(variant, rng, len(y))
    loss, g, h = _fast(s, y, gp, wq, p)
    assert math.isfinite(loss) and np.isfinite(g).all() and np.isfinite(h).all()
    assert np.all(h >= HESSIAN_FLOOR)
    if magnitude == 1e4:
        bl, bg, bhb, bgm, bhm, _, _ = brute(s, y, gp, weights=wq, **p)
        mean = p.get("hessian") == "mean"
        assert loss == pytest.approx(bl, rel=1e-9)
        np.testing.assert_allclose(g, bgm if mean else bg, rtol=1e-9, atol=1e-7)
        np.testing.assert_allclose(h, bhm if mean else bhb, rtol=1e-12)


def test_loss_beyond_float64_is_refused_never_nan():
    """Scores of 1e300 on labeled rows: the risk overflows to inf (refused, naming the query);
    unlabeled rows with such scores (a correctly ordered pair, weight 0 in the squared-error
    term) leave it finite."""
    y, gp = np.array([1.0, 0.0, 1.0]), np.array([0, 2, 3])
    s = np.array([1e300, -1e300, 3.0])
    assert QBRANK.loss(s, y, gp) == pytest.approx(0.5 * 0.5 * (3.0 - 1.0) ** 2)  # only the single-doc query
    with pytest.raises(NonFiniteError, match=r"qbrank: the loss overflows float64 \(inf\) in query 0 \(rows 0\.\.1\)"):
        QBRANK.loss(s, y, gp, labeled="all")
    g, h = QBRANK.grad_hess(s, y, gp)
    assert np.isfinite(g).all() and np.isfinite(h).all()


# -- validation -----------------------------------------------------------------------------------

BAD = [
    ({"gamma": 1}, ValueError, "gamma"),
    ({"w": -0.1}, ValueError, r"w must be a finite number in \[0, 1\], got -0.1"),
    ({"w": 1.5}, ValueError, r"w must be a finite number in \[0, 1\]"),
    ({"w": np.float64("nan")}, ValueError, r"w must be a finite number in \[0, 1\], got nan"),
    ({"tau": 1e151}, ValueError, r"tau must be a positive finite number in \(0, 1e\+150\], got 1e\+151"),
    ({"pair_tau": np.float64(1e308)}, ValueError, r"pair_tau must be .* got 1e\+308$"),
    ({"tau": [1.0]}, TypeError, r"tau must be a number"),
    ({"w": "half"}, TypeError, "w must be a number"),
    ({"w": True}, TypeError, "w must be a number"),
    ({"tau": "rank"}, ValueError, "tau must be one of"),
    ({"tau": 0.0}, ValueError, "tau must be a positive"),
    ({"tau": float("nan")}, ValueError, "tau must be a positive"),
    ({"pair_tau": -1}, ValueError, "pair_tau must be a positive"),
    ({"labeled": "some"}, ValueError, "labeled must be one of"),
    ({"hessian": "exact"}, ValueError, "hessian must be one of"),
    ({"label_pairs": "yes"}, TypeError, "label_pairs must be True or False"),
    ({"pairs": [[0, 1, 2]]}, ValueError, "pairs must have shape"),
    ({"pairs": [[0, 99]]}, ValueError, r"pairs\[0\] = \[0, 99\] is outside"),
    ({"pairs": [[2, 2]]}, ValueError, "pairs a row with itself"),
    ({"pairs": [[0.0, 1.0]]}, TypeError, "integer row indices"),
    ({"label_pairs": False, "labeled": "none"}, ValueError, "nothing to fit"),
]


@pytest.mark.parametrize("params,exc,match", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_parameters_raise_naming_them(params, exc, match):
    with pytest.raises(exc, match=match):
        QBRANK.prepare([1.0, 0.0, 2.0, 0.0], [0, 2, 4], **params)


# -- the exact line search (Algorithm 2, step 2) ----------------------------------------------------

LS_VARIANTS = ["default", "tau-const", "labeled-all-w03", "labeled-none", "explicit+labels", "explicit-only"]


@pytest.mark.parametrize("variant", LS_VARIANTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_line_search_is_the_exact_minimiser(variant, seed):
    rng, s, y, gp, wq = _data(100 + seed, weights=True)
    p = _params(variant, rng, len(s))
    prep = QBRANK.prepare(y, gp, weights=wq, **p)
    g, _ = prep.grad_hess(s)
    # A tree-like direction: the negative gradient, coarsened to a few values (ties!).
    d = -np.round(g / (np.abs(g).max() + 1e-12) * 3) if seed != 2 else rng.normal(size=len(s))
    s_fast = qbrank.line_search(prep, s, d)
    s_ref, R = brute_line_search(s, y, gp, d, weights=wq, **p)
    assert R(s_fast) == pytest.approx(prep.loss(s + s_fast * d), rel=1e-12, abs=1e-12)
    assert R(s_fast) <= R(s_ref) * (1 + 1e-12) + 1e-12
    assert s_fast == pytest.approx(s_ref, rel=1e-8, abs=1e-10)
    ms = minimize_scalar(R, bracket=(s_ref - 1.0, s_ref + 1.0), tol=1e-12)
    assert R(s_fast) <= ms.fun + 1e-12
    grid = np.linspace(s_ref - 2.0, s_ref + 2.0, 401)
    assert R(s_fast) <= min(R(t) for t in grid) + 1e-12


def test_line_search_signs_and_flat_cases():
    rng, s, y, gp, _ = _data(21)
    prep = QBRANK.prepare(y, gp)
    g, _ = prep.grad_hess(s)
    assert qbrank.line_search(prep, s, -g) > 0
    assert qbrank.line_search(prep, s, g) < 0
    assert qbrank.line_search(prep, s, -g) == pytest.approx(-qbrank.line_search(prep, s, g), rel=1e-10)
    assert qbrank.line_search(prep, s, np.zeros_like(s)) == 0.0
    # Preference-only risk and a direction that orders every pair: R reaches 0 at
    # s* = max over pairs of (tau - (h_x - h_y)) / (d_x - d_y) and stays flat after.
    y2 = np.array([2.0, 1.0, 0.0])
    prep2 = QBRANK.prepare(y2, [0, 3], labeled="none")
    h = np.zeros(3)
    d = np.array([2.0, 1.0, 0.0])
    assert qbrank.line_search(prep2, h, d) == pytest.approx(1.0, rel=1e-12)
    assert prep2.loss(h + d) == 0.0


def test_line_search_validates():
    prep = QBRANK.prepare([1.0, 0.0], [0, 2])
    with pytest.raises(TypeError, match="prepared QBRank objective"):
        qbrank.line_search(object(), [0.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="direction must be finite"):
        qbrank.line_search(prep, [0.0, 0.0], [np.inf, 0.0])
    with pytest.raises(ValueError, match="direction has 3 values"):
        qbrank.line_search(prep, [0.0, 0.0], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="got 3 scores"):
        qbrank.line_search(prep, [0.0, 0.0, 0.0], [1.0, 0.0])


# -- LightGBM: a learning sanity check and the "mean" mode = the paper's regression fit -------------


def test_lightgbm_training_loss_drops():
    lgb = pytest.importorskip("lightgbm")
    X, y, sizes, gp = linear_graded_problem(n_queries=40, max_docs=14)
    prep = QBRANK.prepare(y, gp)

    def fobj(preds, data):
        assert np.array_equal(data.get_group(), sizes)
        return prep.grad_hess(preds)

    ds = lgb.Dataset(X, y, group=sizes)
    params = {"objective": fobj, "verbose": -1, "num_leaves": 7, "learning_rate": 0.1, "min_data_in_leaf": 5}
    bst = lgb.train(params, ds, num_boost_round=20)
    before = prep.loss(np.zeros(len(y)))
    after = prep.loss(bst.predict(X, raw_score=True))
    assert after < 0.7 * before


def test_mean_mode_one_round_equals_least_squares_tree_on_averaged_targets():
    lgb = pytest.importorskip("lightgbm")
    X, y, sizes, gp = linear_graded_problem(seed=1, n_queries=40, max_docs=14)
    rng = np.random.default_rng(3)
    wq = rng.uniform(0.5, 2.0, size=len(sizes))
    p = {"hessian": "mean", "labeled": "all", "w": 0.6, "pairs": np.array([[0, 30], [5, 6], [40, 2]])}
    h0 = rng.normal(scale=0.3, size=len(y))
    prep = QBRANK.prepare(y, gp, weights=wq, **p)
    g, h = prep.grad_hess(h0)
    ds = lgb.Dataset(X, y, group=sizes, init_score=h0)
    params = {"objective": lambda preds, data: (g, h), "verbose": -1, "num_leaves": 6, "learning_rate": 1.0,
              "lambda_l2": 0.0, "lambda_l1": 0.0, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 1e-12,
              "max_delta_step": 0.0, "path_smooth": 0.0, "boost_from_average": False}
    bst = lgb.train(params, ds, num_boost_round=1)
    leaf = bst.predict(X, pred_leaf=True).ravel()
    tree = bst.dump_model()["tree_info"][0]["tree_structure"]
    outputs = {}

    def walk(node):
        if "leaf_index" in node:
            outputs[node["leaf_index"]] = node["leaf_value"]
        else:
            walk(node["left_child"])
            walk(node["right_child"])

    walk(tree)
    assert len(outputs) > 2
    # The paper's training set (Algorithm 2 step 1), averaged per document (REMARK).
    plist, llist = _brute_terms(h0, y, gp, weights=wq, **{k: v for k, v in p.items() if k != "hessian"})
    entries = [[] for _ in range(len(y))]  # (weight, target)
    for x, yy, om, m in plist:
        entries[x].append((om, max(0.0, m)))
        entries[yy].append((om, -max(0.0, m)))
    for z, om, r in llist:
        entries[z].append((om, -r))
    target = np.array([sum(a * t for a, t in e) / sum(a for a, _ in e) for e in entries])
    weight = np.array([np.mean([a for a, _ in e]) for e in entries])
    for k, value in outputs.items():
        rows = leaf == k
        ls_leaf = np.sum(weight[rows] * target[rows]) / np.sum(weight[rows])
        # LightGBM stores gradients/Hessians as float32: compare at that precision.
        assert value == pytest.approx(ls_leaf, rel=2e-6, abs=1e-9)
        g32, h32 = g[rows].astype(np.float32).astype(float), h[rows].astype(np.float32).astype(float)
        assert value == pytest.approx(-g32.sum() / h32.sum(), rel=1e-9)


# -- margins from score differences (scores far from zero) ----------------------------------------


@pytest.mark.parametrize("c", [0.0, 1e15, 1e16, 1e17, 1e300, 9e307, -9e307])
@pytest.mark.parametrize("tau", ["grade", 1.0])
def test_equal_large_scores_keep_the_grades(c, tau):
    """``h - l`` at ``|h| >= 1e16`` rounded the grades away (every pair 'satisfied', or NaN)."""
    g, h = QBRANK.grad_hess(np.full(3, c), [2.0, 1.0, 0.0], [0, 3], tau=tau)
    expected = [-1.5, 0.0, 1.5] if tau == "grade" else [-1.0, 0.0, 1.0]
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(h, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("variant", ["default", "tau-const", "mean-all-tau"])
def test_a_large_offset_changes_nothing_when_scores_stay_exact(variant):
    """Scores 1e17 + 64 k are exact in float64: the result must equal that at 64 k."""
    rng, _, y, gp, _ = _data(21)
    s = 64.0 * rng.integers(-50, 50, size=len(y))
    p = _params(variant, rng, len(y))
    p["labeled"] = "none"  # the squared-error term is not shift invariant
    g1, h1 = QBRANK.grad_hess(s, y, gp, **p)
    g2, h2 = QBRANK.grad_hess(s + 1e17, y, gp, **p)
    np.testing.assert_array_equal(g2, g1)
    np.testing.assert_array_equal(h2, h1)


def test_explicit_pair_margin_keeps_its_tau_at_large_scores():
    g, _ = QBRANK.grad_hess([1e17, 1e17], [0.0, 0.0], [0, 2], pairs=[[0, 1]], label_pairs=False,
                            labeled="none", pair_tau=2.0)
    np.testing.assert_array_equal(g, [-1.0, 1.0])  # w * m with m = tau = 2


def test_overflowing_score_differences_are_refused_naming_the_query():
    with pytest.raises(ValueError, match=r"query 1 overflow float64 \(its scores span -9e\+307 \.\. 9e\+307\)"):
        QBRANK.grad_hess([0.0, 1.0, 9e307, -9e307], [1.0, 0.0, 1.0, 0.0], [0, 2, 4])
    with pytest.raises(ValueError, match=r"pairs\[0\] = \[0, 1\] overflows"):
        QBRANK.grad_hess([1e308, -1e308], [0.0, 0.0], [0, 1, 2], pairs=[[0, 1]], label_pairs=False,
                         labeled="none")


def test_huge_scores_give_finite_gradients_or_a_clear_error():
    """2,000 documents at +-1e305: the summed margins exceed float64 (824 were inf/NaN)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 2000).astype(float)
    s = rng.choice([-1e305, 1e305], 2000)
    with pytest.raises(ValueError, match=r"qbrank: the gradient or Hessian overflows float64 at row \d+ \(query 0"):
        QBRANK.grad_hess(s, y, [0, 2000])
    with pytest.raises(ValueError, match=r"qbrank: the gradient or Hessian at row \d+ .* beyond float32's largest"):
        QBRANK.grad_hess(s, y, np.arange(0, 2001, 20))  # queries of 20: float64 holds them, float32 does not
    g, h = QBRANK.grad_hess(s * 1e-270, y, np.arange(0, 2001, 20))  # +-1e35: float32 holds them
    assert np.isfinite(g).all() and np.isfinite(h).all() and (h > 0).all() and np.abs(g).max() > 1e34


# ---- per-pair weights of the explicit pairs ---------------------------------------------------
def _weighted_pairs_case(seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 30).astype(float)
    gp = np.array([0, 7, 15, 30])
    pairs = rng.integers(0, 30, size=(25, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return y, gp, pairs, rng.uniform(0.0, 3.0, pairs.shape[0]), rng.normal(size=30), rng.uniform(0.5, 2, 3)


@pytest.mark.parametrize("hessian", ["bound", "mean"])
def test_pair_weights_match_the_weighted_risk_by_brute_force(hessian):
    y, gp, pairs, v, h, qw = _weighted_pairs_case()
    obj = get("qbrank").prepare(y, gp, weights=qw, pairs=pairs, pair_weights=v, hessian=hessian)
    qid = np.repeat(np.arange(3), np.diff(gp))
    plain = get("qbrank").prepare(y, gp, weights=qw, hessian=hessian)  # label pairs + labeled part

    def explicit(s):
        m = np.maximum(0.0, s[pairs[:, 1]] - s[pairs[:, 0]] + 1.0)
        return 0.5 * 0.5 * float(np.sum(v * qw[qid[pairs[:, 0]]] * m * m))

    assert obj.loss(h) == pytest.approx(plain.loss(h) + explicit(h), rel=1e-12)
    if hessian == "bound":
        g = obj.grad_hess(h)[0]
        want = fd_gradient(lambda s: plain.loss(s) + explicit(s), h)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)


def test_an_integer_pair_weight_equals_repeating_the_pair():
    y, gp, pairs, _, h, qw = _weighted_pairs_case(1)
    counts = np.arange(pairs.shape[0]) % 3  # 0, 1, 2 copies
    weighted = get("qbrank").prepare(y, gp, weights=qw, pairs=pairs, pair_weights=counts.astype(float))
    repeated = get("qbrank").prepare(y, gp, weights=qw, pairs=np.repeat(pairs, counts, axis=0))
    assert weighted.loss(h) == pytest.approx(repeated.loss(h), rel=1e-12)
    gw, hw = weighted.grad_hess(h)
    gr, hr = repeated.grad_hess(h)
    np.testing.assert_allclose(gw, gr, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hw, hr, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("params, exc, match", [
    ({"pair_weights": [1.0, 2.0]}, ValueError, "pair_weights given without pairs"),
    ({"pairs": [[0, 1], [1, 2]], "pair_weights": [1.0]}, ValueError, "1 entries for 2 pairs"),
    ({"pairs": [[0, 1], [1, 2]], "pair_weights": [1.0, -2.0]}, ValueError, r"pair_weights\[1\] is -2.0"),
    ({"pairs": [[0, 1], [1, 2]], "pair_weights": [np.inf, 1.0]}, ValueError, r"pair_weights\[0\] is inf"),
    ({"pairs": [[0, 1], [1, 2]], "pair_weights": [[1.0, 2.0]]}, TypeError, "1-d array"),
])
def test_bad_pair_weights_are_refused_naming_them(params, exc, match):
    with pytest.raises(exc, match=match):
        get("qbrank").prepare(np.array([0.0, 1.0, 2.0]), np.array([0, 3]), **params)


def test_pair_weights_pass_the_parameter_check_without_data():
    get("qbrank").check({"pairs": np.array([[0, 1], [2, 3], [1, 4]]), "pair_weights": np.array([0.5, 2.0, 1.0])})


# ---- labeled_rows: the squared-error term on given rows ------------------------------------------
def test_labeled_rows_put_exactly_those_rows_in_the_squared_error_term():
    y, gp, pairs, v, h, qw = _weighted_pairs_case(2)
    rows = np.array([3, 9, 10, 20, 29])
    qid = np.repeat(np.arange(3), np.diff(gp))
    obj = get("qbrank").prepare(y, gp, weights=qw, pairs=pairs, pair_weights=v, label_pairs=False, labeled_rows=rows)
    m = np.maximum(0.0, h[pairs[:, 1]] - h[pairs[:, 0]] + 1.0)
    want = 0.25 * float(np.sum(v * qw[qid[pairs[:, 0]]] * m * m)) \
        + 0.25 * float(np.sum(qw[qid[rows]] * (y[rows] - h[rows]) ** 2))
    assert obj.loss(h) == pytest.approx(want, rel=1e-12)
    g = obj.grad_hess(h)[0]
    np.testing.assert_allclose(g, fd_gradient(obj.loss, h), rtol=1e-6, atol=1e-7)
    # the same rows chosen by labeled="all" on the rows' own data: the same squared-error part
    plain = get("qbrank").prepare(y, gp, weights=qw, label_pairs=False, labeled_rows=np.arange(30))
    every = get("qbrank").prepare(y, gp, weights=qw, label_pairs=False, labeled="all")
    assert plain.loss(h) == every.loss(h)


@pytest.mark.parametrize("rows, exc, match", [
    (np.array([0, 3, 3]), ValueError, r"labeled_rows\[2\] = 3 repeats a row"),
    (np.array([0, 3, 30]), ValueError, r"labeled_rows\[2\] = 30 is outside rows \[0, 30\)"),
    (np.array([0.0, 1.0]), TypeError, "integer row indices"),
    (np.array([[0, 1]]), ValueError, "1-d array"),
])
def test_bad_labeled_rows_are_refused_naming_them(rows, exc, match):
    y, gp, *_ = _weighted_pairs_case()
    with pytest.raises(exc, match=match):
        get("qbrank").prepare(y, gp, labeled_rows=rows)


def test_labeled_rows_are_row_parameters_refused_by_cv_folds():
    assert get("qbrank").row_params == ("pairs", "labeled_rows")
    get("qbrank").check({"labeled_rows": np.array([0, 5, 7])})


def test_label_levels_are_dense_label_ranks_per_query_with_their_sizes():
    """Per document: its label's rank among the query's distinct labels (0 = lowest) and how many
    of the query's documents share its label; per query: the number of distinct labels."""
    from boostplug.groups import label_levels

    rng = np.random.default_rng(5)
    sizes = [1, 2, 7, 16, 40, 300]
    gp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    labels = rng.integers(0, 4, gp[-1]).astype(float) * 0.5
    labels[gp[2]:gp[3]] = 1.0                                   # one level only
    level, same, n_levels = label_levels(labels, gp)
    for q, (a, b) in enumerate(zip(gp[:-1], gp[1:])):
        distinct, dense, counts = np.unique(labels[a:b], return_inverse=True, return_counts=True)
        assert n_levels[q] == distinct.shape[0]
        np.testing.assert_array_equal(level[a:b], dense)
        np.testing.assert_array_equal(same[a:b], counts[dense])
