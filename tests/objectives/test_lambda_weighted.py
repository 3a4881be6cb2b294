"""objectives.LambdaWeightedLoss: a pair loss plus a pair weight that sees the current order. Its
loss, gradient and Hessians against a slow pure-Python loop over each query's order (ties, one-document
queries, queries of one label, all-equal scores, truncation, LightGBM's normalisation, float32 sums),
against finite differences with the weights held, the contract checks, and the errors a bad class gets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug.objectives import LambdaWeightedLoss, Param
from boostplug.objectives.lambda_weighted import BOUND, EXACT, LOGISTIC, NO_TRUNCATION, Pair
from boostplug.objectives.pairwise import EXACT as PAIRWISE_EXACT
from boostplug.testing import CHECKS, check_objective, fd_gradient, fd_jacobian


class NDCGLoss2PP(LambdaWeightedLoss):
    """LambdaLoss's NDCG-Loss2++ (Wang et al. 2018, Section 4): LambdaRank's weight plus mu times the
    position-gap weight, on the logistic pair loss."""

    name = "test_ndcg_loss2pp"
    summary = "NDCG-Loss2++ (test objective)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True),
              "mu": Param(5.0, "real", "weight of the position-gap term", low=0.0)}
    hessians = {"exact": EXACT, "bound": BOUND}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    @staticmethod
    def pair_weight(p, sigma, mu):
        gap = abs(p.rank_i - p.rank_j)
        delta = abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap))
        return abs(p.gain_i - p.gain_j) * p.inv_max_dcg * (abs(p.discount_i - p.discount_j) + mu * delta)


class TruncatedLambdaRank(LambdaWeightedLoss):
    """LambdaRank's |Delta NDCG| weight with LightGBM's truncation and normalisation, in float64."""

    name = "test_truncated_lambdarank"
    summary = "LambdaRank, truncated and normalised (test objective)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True),
              "top": Param(3, "int", "truncation level", low=1),
              "norm": Param(True, "bool", "LightGBM's normalisation")}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    @staticmethod
    def pair_weight(p, sigma, top, norm):
        return (p.gain_i - p.gain_j) * abs(p.discount_i - p.discount_j) * p.inv_max_dcg

    def truncation(self):
        return self.top

    def normalize(self):
        return self.norm


class SingleLambdaRank(TruncatedLambdaRank):
    """The same, summed in float32 as LightGBM sums its gradients."""

    name = "test_single_lambdarank"
    float32_sums = True


def _data(seed: int = 0):
    """Six queries: ordinary ones with tied scores, one document, one label for all, all-equal
    scores; per-query weights (one of them 0)."""
    rng = np.random.default_rng(seed)
    sizes = [7, 1, 5, 6, 9, 4]
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 4, gp[-1]).astype(np.float64)
    y[gp[2]:gp[3]] = 2.0                        # one label: no pair
    s = np.round(rng.normal(size=gp[-1]), 1)     # ties
    s[gp[3]:gp[4]] = 0.25                        # all scores equal
    w = np.array([1.0, 2.0, 1.5, 0.5, 3.0, 0.0])
    return s, y, gp, w


def _brute(obj: LambdaWeightedLoss, scores, at=None, *, single: bool = False, bound: bool = False):
    """Loss, gradient and Hessian by a double loop over each query's order, everything recomputed
    from the definitions: gains 2^y - 1, discounts 1/log2(2 + position), 1 / ideal DCG at the
    truncation level, the class's pair weight and pair functions; float32 sums emulated with numpy."""
    at = scores if at is None else at
    f = np.float32 if single else float
    n = len(scores)
    grad, hess, loss = np.zeros(n), np.zeros(n), 0.0
    k = obj.truncation()
    args = obj.pair_args()
    for q in range(len(obj.group_ptr) - 1):
        a, b = int(obj.group_ptr[q]), int(obj.group_ptr[q + 1])
        if b - a < 2 or obj.query_weights[q] == 0.0:
            continue
        order = sorted(range(a, b), key=lambda r: -at[r])   # Python's sort is stable: ties keep input order
        gain = {r: 2.0 ** obj.labels[r] - 1.0 for r in range(a, b)}
        ideal = sorted(gain.values(), reverse=True)[:min(k, b - a)]
        idcg = sum(g / math.log2(2.0 + i) for i, g in enumerate(ideal))
        inv = 1.0 / idcg if idcg > 0 else 0.0
        varied = at[order[0]] != at[order[-1]]
        g_q, h_q = {r: f(0.0) for r in range(a, b)}, {r: f(0.0) for r in range(a, b)}
        total, acc = 0.0, 0.0
        for i in range(min(b - a - 1, k)):
            for j in range(i + 1, b - a):
                ri, rj = order[i], order[j]
                if obj.labels[ri] == obj.labels[rj]:
                    continue
                (hi, phi), (lo, plo) = sorted([(ri, i), (rj, j)], key=lambda t: -obj.labels[t[0]])
                w = type(obj).pair_weight(Pair(at[hi] - at[lo], phi, plo, gain[hi], gain[lo],
                                               1 / math.log2(2 + phi), 1 / math.log2(2 + plo), inv), *args)
                if obj.normalize() and varied:
                    w /= 0.009999999776482582 + abs(at[hi] - at[lo])   # LightGBM's 0.01f
                d = scores[hi] - scores[lo]
                gt, ht = w * type(obj).pair_grad(d, *args), w * type(obj).pair_hess(d, *args)
                total -= 2 * w * type(obj).pair_grad(at[hi] - at[lo], *args)
                if w != 0:
                    acc += w * type(obj).pair_loss(d, *args)
                ht = 2 * abs(ht) if bound else ht
                g_q[hi], g_q[lo] = g_q[hi] + f(gt), g_q[lo] - f(gt)
                h_q[hi], h_q[lo] = h_q[hi] + f(ht), h_q[lo] + f(ht)
        c = math.log2(1 + total) / total if obj.normalize() and total > 0 else 1.0
        loss += obj.query_weights[q] * c * acc
        for r in range(a, b):
            grad[r] = float(f(float(g_q[r]) * c)) * obj.query_weights[q]
            hess[r] = float(f(float(h_q[r]) * c)) * obj.query_weights[q]
    return loss, grad, hess


@pytest.mark.parametrize("cls, params", [(NDCGLoss2PP, {}), (NDCGLoss2PP, {"mu": 0.5, "sigma": 2.0}),
                                         (TruncatedLambdaRank, {}), (TruncatedLambdaRank, {"norm": False, "top": 1}),
                                         (TruncatedLambdaRank, {"top": 100})])
@pytest.mark.parametrize("seed", [0, 1])
def test_against_a_loop_over_each_querys_order(cls, params, seed) -> None:
    """The kernel's loss, gradient and Hessian are the brute force's (the same operations in the same
    order for the gradients, so to a few ulps; the loss sums its queries in another order: 1e-12)."""
    s, y, gp, w = _data(seed)
    obj = cls(y, gp, weights=w, **params)
    loss, g, h = _brute(obj, s)
    g_k, h_k = obj._grad_hess(s)
    np.testing.assert_allclose(g_k, g, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(h_k, h, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(obj.loss(s), loss, rtol=1e-12)
    assert np.abs(g_k).max() > 0


def test_bound_mode_against_the_loop() -> None:
    s, y, gp, w = _data(2)
    obj = NDCGLoss2PP(y, gp, weights=w, hessian="bound")
    _, g, h = _brute(obj, s, bound=True)
    np.testing.assert_allclose(obj._grad_hess(s)[1], h, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("seed", [0, 3])
def test_float32_sums_follow_lightgbms_rounding(seed) -> None:
    """With float32_sums every term and running sum is a float32, so the values match the
    float32 emulation of the loop bit for bit, and each query's unweighted values are float32s."""
    s, y, gp, w = _data(seed)
    obj = SingleLambdaRank(y, gp, top=4)
    _, g, h = _brute(obj, s, single=True)
    g_k, h_k = obj._grad_hess(s)
    np.testing.assert_array_equal(g_k, g)
    np.testing.assert_array_equal(h_k, h)
    np.testing.assert_array_equal(g_k, g_k.astype(np.float32))
    # not what float64 sums give: the rounding is there
    g64 = TruncatedLambdaRank(y, gp, top=4)._grad_hess(s)[0]
    assert np.any(g64 != g_k) and np.allclose(g64, g_k, rtol=1e-6, atol=1e-7)


def test_degenerate_queries_give_zeros_never_nan() -> None:
    """A one-document query, a query of one label, a query of weight 0 and queries whose scores are
    all equal (the weights' normalisation is then off) give finite values; no pair: exactly 0."""
    s, y, gp, w = _data()
    for cls in (NDCGLoss2PP, TruncatedLambdaRank):
        obj = cls(y, gp, weights=w)
        g, h = obj._grad_hess(s)
        assert np.isfinite(g).all() and np.isfinite(h).all() and np.isfinite(obj.loss(s))
        for q in (1, 2, 5):  # one document, one label, weight 0
            np.testing.assert_array_equal(g[gp[q]:gp[q + 1]], 0.0)
            np.testing.assert_array_equal(h[gp[q]:gp[q + 1]], 0.0)
        equal = np.zeros_like(s)
        g0, _ = obj._grad_hess(equal)
        assert np.isfinite(g0).all() and np.abs(g0[gp[3]:gp[4]]).max() > 0


@pytest.mark.parametrize("cls, params", [(NDCGLoss2PP, {"mu": 2.0}), (TruncatedLambdaRank, {}),
                                         (TruncatedLambdaRank, {"norm": False})])
def test_finite_differences_with_the_weights_held(cls, params) -> None:
    """The gradient is the derivative of the loss with its pair weights held at the current scores,
    the exact Hessian the diagonal of that loss's Hessian; letting the weights move changes the
    derivative (the weights do depend on the scores)."""
    rng = np.random.default_rng(4)
    gp = np.array([0, 6, 13], dtype=np.int64)
    y = rng.integers(0, 4, 13).astype(np.float64)
    s = rng.normal(size=13)
    obj = cls(y, gp, weights=[1.0, 2.0], **params)
    g, h = obj.grad_hess(s)
    fd = fd_gradient(lambda x: obj.loss(x, weights_at=s), s)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
    J = fd_jacobian(lambda x: obj.grad_hess(x, weights_at=s)[0], s)
    np.testing.assert_allclose(J, J.T, atol=1e-8)
    np.testing.assert_allclose(obj._grad_hess(s)[1], np.diag(J), rtol=1e-6, atol=1e-8)
    if params.get("norm", True) and cls is TruncatedLambdaRank:
        moving = fd_gradient(obj.loss, s)  # the weights 1 / (0.01 + |s_i - s_j|) move with the scores
        assert not np.allclose(moving, g, rtol=1e-3)


def test_held_weights_equal_the_current_ones_at_the_current_scores() -> None:
    s, y, gp, w = _data(5)
    obj = TruncatedLambdaRank(y, gp, weights=w)
    np.testing.assert_array_equal(obj.grad_hess(s, weights_at=s)[0], obj.grad_hess(s)[0])
    assert obj.loss(s, weights_at=s) == obj.loss(s)
    other = s[::-1].copy()
    loss, g, _ = _brute(obj, s, other)
    np.testing.assert_allclose(obj.grad_hess(s, weights_at=other)[0], g, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(obj.loss(s, weights_at=other), loss, rtol=1e-12)
    with pytest.raises(ValueError, match="got 3 scores for a data set of 32 documents"):
        obj.loss(s, weights_at=np.zeros(3))


@pytest.mark.parametrize("cls", [NDCGLoss2PP, TruncatedLambdaRank])
def test_contract(cls) -> None:
    """The checks every objective passes: the gradient against the held-weights loss, and the rest
    (serial against parallel kernels once: numba compiles a parallel kernel per objective, ~10 s)."""
    checks = [c for c in CHECKS if cls is NDCGLoss2PP or c != "serial_parallel"]
    results = check_objective(cls, checks=checks)
    assert {r.check for r in results if r.skipped is None} >= {"gradient", "hessian", "query_weights",
                                                               "sum_over_queries", "extreme_inputs", "bad_data"}


def test_no_truncation_and_the_inverse_ideal_dcg() -> None:
    y = np.array([3.0, 0.0, 1.0, 2.0])
    obj = NDCGLoss2PP(y, [0, 4])
    assert obj.truncation() == NO_TRUNCATION
    ideal = 7 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4)
    np.testing.assert_allclose(obj._inv_max_dcg, [1 / ideal], rtol=1e-15)
    np.testing.assert_allclose(TruncatedLambdaRank(y, [0, 4], top=1)._inv_max_dcg, [1 / 7.0], rtol=1e-15)


def _class(**attrs):
    body = {"name": "test_bad_lambda", "summary": "bad", "params": {"sigma": Param(1.0, "real", "s", low=0.0)},
            "pair_loss": LOGISTIC[0], "pair_grad": LOGISTIC[1], "pair_hess": LOGISTIC[2],
            "pair_weight": staticmethod(lambda p, sigma: 1.0)}
    body.update(attrs)
    return type("Bad", (LambdaWeightedLoss,), body)


def test_mistakes_are_named() -> None:
    with pytest.raises(TypeError, match=r"Bad does not define pair_weight\(pair, \.\.\.\)"):
        _class(pair_weight=None).__dict__  # noqa: B018 - the class statement raises
    with pytest.raises(TypeError, match=r"Bad\.pair_weight must be a @staticmethod of \(pair, \.\.\.\)"):
        _class(pair_weight=lambda self, p, sigma: 1.0)
    with pytest.raises(TypeError, match=r"Bad\.pair_weight\(p\) must take \(pair, sigma\)"):
        _class(pair_weight=staticmethod(lambda p: 1.0))
    with pytest.raises(TypeError, match=r"gradient='lambda'.*got Hessian\(kind='exact'"):
        _class(hessians={"exact": PAIRWISE_EXACT})
    with pytest.raises(TypeError, match=r"Bad\.pair_weight must return one number per pair"):
        _class(pair_weight=staticmethod(lambda p, sigma: (1.0, 2.0)))(np.array([1.0, 0.0]), [0, 2])
    with pytest.raises(TypeError, match=r"numba cannot compile Bad\.pair_weight.*Write the functions"):
        _class(pair_weight=staticmethod(lambda p, sigma: np.asarray(object())))(np.array([1.0, 0.0]), [0, 2])
    with pytest.raises(ValueError, match=r"truncation level must be an integer >= 1, got 0"):
        _class(truncation=lambda self: 0)(np.array([1.0, 0.0]), [0, 2])


@pytest.mark.parametrize("parallel", [False, True])
def test_a_pair_weight_that_raises_names_itself_the_pairs_view_and_the_pair(parallel, monkeypatch) -> None:
    from boostplug._core import dispatch
    from boostplug.objectives.pairwise import PairFunctionError

    # numba's parallel loops lose an exception raised on a worker thread: the kernel must still tell
    monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0 if parallel else 10**18)

    bad = _class(pair_weight=staticmethod(lambda p, sigma: 1.0 / (p.rank_i - 1)))
    # query 1: rows 3 (label 0) above row 4 (label 1): the preferred row 4 is at position 1
    obj = bad(np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 3, 5]))
    scores = np.array([0.0, 0.5, 1.0, 2.0, 1.0])
    for method in (obj.loss, obj.grad_hess):
        with pytest.raises(PairFunctionError, match=r"test_bad_lambda: Bad\.pair_weight\(Pair\(d=-1\.0, rank_i=1, "
                                                    r"rank_j=0, .*\), 1\.0\) raises ZeroDivisionError: .*on the pair "
                                                    r"of rows 4 \(preferred\) and 3 of query 1") as info:
            method(scores)
        assert info.value.query == 1 and info.value.rows == (4, 3)


def test_a_pair_loss_that_raises_in_the_lambda_kernel_is_named() -> None:
    from boostplug.objectives.pairwise import PairFunctionError

    def loss(d, sigma):
        if d < 0.0:
            raise ValueError("a negative difference")
        return d

    obj = _class(pair_loss=staticmethod(loss))(np.array([1.0, 0.0, 2.0]), np.array([0, 3]))
    with pytest.raises(PairFunctionError, match=r"Bad\.pair_loss\(-1\.0, 1\.0\) raises ValueError: a negative "
                                                r"difference, on the pair of rows 0 \(preferred\) and 1 of query 0"):
        obj.loss(np.array([0.0, 1.0, 5.0]))


def test_a_pair_weight_that_always_raises_shows_its_exception() -> None:
    from boostplug.objectives.pairwise import PairFunctionError

    def weight(p, sigma):
        raise ValueError("sigma is " + str(sigma))

    with pytest.raises(PairFunctionError, match=r"Bad\.pair_weight\(Pair\(d=1\.0, .*\), 1\.0\) raises ValueError"):
        _class(pair_weight=staticmethod(weight))(np.array([1.0, 0.0]), [0, 2])
