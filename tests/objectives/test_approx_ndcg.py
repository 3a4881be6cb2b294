"""The registered ``approx_ndcg`` (Qin, Liu and Li 2010) and ``approx_mrr``: the loss against the paper's formula
computed directly, its gradient and exact Hessian against finite differences, the surrogate
Hessian positive and as defined, the contract checks, extreme scores, and training."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import metrics, objectives
from boostplug.testing import check_objective, fd_gradient, fd_jacobian


def _data(seed: int = 0, sizes=(6, 1, 9, 4, 12)):
    rng = np.random.default_rng(seed)
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 4, gp[-1]).astype(float)
    y[gp[3]:gp[4]] = 0.0                      # no relevant document: nothing to gain
    return rng.normal(size=gp[-1]), y, gp, rng.uniform(0.5, 2.0, len(sizes))


def _direct(s, y, gp, w, alpha):
    """1 - ApproxNDCG per query (eq. 11-12), with the ideal DCG of boostplug.metrics."""
    total = 0.0
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        ideal = metrics.dcg(y[a:b], y[a:b], [0, b - a])  # sorted by label: the ideal DCG
        if ideal == 0 or b - a < 2:
            continue
        pi = [1 + sum(1 / (1 + math.exp(-alpha * (s[j] - s[i]))) for j in range(a, b) if j != i) for i in range(a, b)]
        dcg = sum((2 ** y[i] - 1) / math.log2(1 + p) for i, p in zip(range(a, b), pi))
        total += w[q] * (1 - dcg / ideal)
    return total


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_the_loss_is_the_papers_formula(alpha) -> None:
    s, y, gp, w = _data(1)
    obj = objectives.get("approx_ndcg").prepare(y, gp, weights=w, alpha=alpha)
    assert obj.loss(s) == pytest.approx(_direct(s, y, gp, w, alpha), rel=1e-12)
    assert np.isfinite(obj.loss(s * 50))  # finite at any scale
    # a query ranked perfectly with a sharp smoothing approaches NDCG 1
    y1, gp1 = np.array([3.0, 2.0, 1.0, 0.0]), np.array([0, 4])
    assert objectives.get("approx_ndcg").prepare(y1, gp1, alpha=100.0).loss(np.array([3.0, 2.0, 1.0, 0.0])) < 1e-12


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_the_gradient_and_the_exact_hessian_against_finite_differences(alpha) -> None:
    s, y, gp, w = _data(2)
    exact = objectives.get("approx_ndcg").prepare(y, gp, weights=w, alpha=alpha, hessian="exact",
                                                  hessian_floor=False)
    g, h = exact.grad_hess(s)
    np.testing.assert_allclose(g, fd_gradient(exact.loss, s), rtol=1e-7, atol=1e-10)
    J = fd_jacobian(lambda x: exact.grad_hess(x)[0], s)
    np.testing.assert_allclose(h, np.diag(J), rtol=1e-6, atol=1e-9)
    assert (h < 0).sum() > 0                    # not convex: why the default is a surrogate


def test_the_surrogate_is_positive_and_alpha_times_the_absolute_pair_terms() -> None:
    s, y, gp, w = _data(3)
    alpha = 1.5
    obj = objectives.get("approx_ndcg").prepare(y, gp, weights=w, alpha=alpha, hessian_floor=False)
    g, h = obj.grad_hess(s)
    assert obj.hessian == "surrogate" and np.all(h >= 0) and np.all(h[g != 0] > 0)
    # the definition, pair by pair
    want = np.zeros_like(s)
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        ideal = metrics.dcg(y[a:b], y[a:b], [0, b - a])
        if ideal == 0 or b - a < 2:
            continue
        sig = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
        pi = {i: 1 + sum(sig(alpha * (s[j] - s[i])) for j in range(a, b) if j != i) for i in range(a, b)}
        c = {i: -(2 ** y[i] - 1) / ((1 + pi[i]) * math.log(2) * math.log2(1 + pi[i]) ** 2) for i in range(a, b)}
        for k in range(a, b):
            want[k] = w[q] * alpha ** 2 / ideal * sum(sig(alpha * (s[x] - s[k])) * (1 - sig(alpha * (s[x] - s[k])))
                                                     * abs(c[k] - c[x]) for x in range(a, b) if x != k)
    np.testing.assert_allclose(h, want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("span", [1e3, 1e8])
def test_scores_far_apart_take_each_pairs_own_sigmoid(span) -> None:
    """Beyond alpha * range = 600 the per-document exponentials would leave float64: each pair's
    sigmoid is computed on its own, with the same values where both ways work."""
    s, y, gp, w = _data(4)
    obj = objectives.get("approx_ndcg").prepare(y, gp, weights=w)
    wide = s.copy()
    wide[0] += span
    g, h = obj.grad_hess(wide)
    assert np.isfinite(g).all() and np.isfinite(h).all() and np.isfinite(obj.loss(wide))
    near = s * 599 / (s.max() - s.min())  # just inside: the exponentials' path
    far = objectives.get("approx_ndcg").prepare(y, gp, weights=w, alpha=1.0)
    np.testing.assert_allclose(far.loss(near), _direct(near, y, gp, w, 1.0), rtol=1e-10)


def test_the_contract_checks() -> None:
    assert check_objective("approx_ndcg")


def test_a_default_exact_mode_would_be_refused_by_the_contract() -> None:
    """The contract check reports the negative exact diagonal when it is the default mode."""
    from boostplug.objectives.approx_ndcg import ApproxNDCG
    from boostplug.testing import ContractError

    class ExactFirst(ApproxNDCG):
        name = "test_approx_ndcg_exact_first"
        default_hessian = "exact"

    with pytest.raises(ContractError, match=r"default Hessian mode 'exact' declares the 'exact' diagonal, which is "
                                            r"negative at rows .*Declare a positive surrogate"):
        check_objective(ExactFirst, checks=["hessian"])


def test_it_trains_on_both_frameworks() -> None:
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx
    from boostplug.data import load_example

    train, test = load_example()
    zero = metrics.ndcg(np.zeros(test.y.shape[0]), test.y, test.group_ptr, k=10)
    booster = lgb.train({"objective": bpl.objective("approx_ndcg"), "verbose": -1, "num_threads": 1},
                        bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), 30)
    assert metrics.ndcg(booster.predict(test.X), test.y, test.group_ptr, k=10) > zero + 0.05
    xb = xgb.train({**bpx.params(), "nthread": 1}, bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr), 30,
                   obj=bpx.objective("approx_ndcg"))
    assert metrics.ndcg(xb.predict(xgb.DMatrix(test.X)), test.y, test.group_ptr, k=10) > zero + 0.05


# ---- approx_mrr ------------------------------------------------------------------------------------
def _direct_mrr(s, y, gp, w, alpha):
    """1 - sum_x y_x / pi_x / sum_x y_x per query (TF-Ranking's ApproxMRRLoss plus 1)."""
    total = 0.0
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        if y[a:b].sum() == 0 or b - a < 2:
            continue
        pi = [1 + sum(1 / (1 + math.exp(-alpha * (s[j] - s[i]))) for j in range(a, b) if j != i) for i in range(a, b)]
        total += w[q] * (1 - sum(y[i] / p for i, p in zip(range(a, b), pi)) / y[a:b].sum())
    return total


@pytest.mark.parametrize("alpha", [0.5, 3.0])
def test_approx_mrr_is_its_formula_and_tf_rankings_values(alpha) -> None:
    s, y, gp, w = _data(3)
    obj = objectives.get("approx_mrr").prepare(y, gp, weights=w, alpha=alpha)
    assert obj.loss(s) == pytest.approx(_direct_mrr(s, y, gp, w, alpha), rel=1e-12)
    # TF-Ranking's documented ApproxMRRLoss examples (temperature 0.1): -0.53168947 and, for two lists, a
    # mean of -0.73514676; here each query's loss is 1 + theirs, summed
    two = objectives.get("approx_mrr").prepare([1.0, 0.0, 0.0, 1.0, 0.0], [0, 2, 5], alpha=10.0)
    assert two.loss(np.array([0.6, 0.8, 0.5, 0.8, 0.4])) == pytest.approx(2 - 2 * 0.73514676, abs=1e-6)  # theirs in float32
    one = objectives.get("approx_mrr").prepare([1.0, 0.0], [0, 2], alpha=10.0)
    assert one.loss(np.array([0.6, 0.8])) == pytest.approx(1 - 0.53168947, abs=1e-6)


def test_approx_mrr_gradient_and_exact_hessian_against_finite_differences() -> None:
    s, y, gp, w = _data(4)
    exact = objectives.get("approx_mrr").prepare(y, gp, weights=w, alpha=1.5, hessian="exact", hessian_floor=False)
    g, h = exact.grad_hess(s)
    np.testing.assert_allclose(g, fd_gradient(exact.loss, s), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(h, np.diag(fd_jacobian(lambda x: exact.grad_hess(x)[0], s)), rtol=1e-6, atol=1e-9)
    surrogate = objectives.get("approx_mrr").prepare(y, gp, weights=w, alpha=1.5, hessian_floor=False)
    assert (surrogate.grad_hess(s)[1] >= 0).all()


@pytest.mark.parametrize("name", ["approx_ndcg", "approx_mrr"])
@pytest.mark.parametrize("hessian", ["surrogate", "exact"])
def test_alpha_only_rescales_so_tune_does_not_search_it(name, hessian) -> None:
    """The gradient at (alpha, s) is alpha times alpha 1's at alpha s, the Hessian alpha^2 times: under Newton
    leaves alpha with L2 lambda is alpha 1 with lambda / alpha^2, predictions / alpha (docs/objectives/neural.md),
    so --tune, which searches the L2 term, does not search alpha."""
    s, y, gp, w = _data(2)
    for alpha in (0.3, 7.0):
        g, h = objectives.get(name).prepare(y, gp, weights=w, alpha=alpha, hessian=hessian,
                                            hessian_floor=False).grad_hess(s)
        g1, h1 = objectives.get(name).prepare(y, gp, weights=w, alpha=1.0, hessian=hessian,
                                              hessian_floor=False).grad_hess(alpha * s)
        np.testing.assert_allclose(g, alpha * g1, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(h, alpha**2 * h1, rtol=1e-10, atol=1e-14)
    assert "alpha" not in objectives.get(name).search_space()
