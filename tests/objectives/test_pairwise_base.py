"""objectives.PairwiseLoss, the one pair base: a pair loss, its derivatives, and optionally a weight
that sees the query's current order (LambdaRank's, LambdaLoss's, the metric weights). Its loss,
gradient and Hessians against a pure-Python loop over each query's order (ties, one-document
queries, queries of one label, all-equal scores, truncation, a per-query
prefix), against finite differences (with the weights held), serial against parallel kernels, the
contract checks, training, and the errors a bad class gets."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numba
import numpy as np
import pytest

from boostplug import objectives
from boostplug._core import dispatch as kernel_dispatch  # not `dispatch`: check_objective would see a module of kernels
from boostplug.data import make_ranking
from boostplug.objectives import NonFiniteError, PairwiseLoss, Param, Search
from boostplug.objectives.pairwise import (BOUND, EXACT, LAMBDA_BOUND, LAMBDA_EXACT, LOGISTIC, NO_TRUNCATION, Pair,
                                           PairFunctionError)
from boostplug.testing import CHECKS, check_objective, fd_gradient, fd_jacobian


class Logistic(PairwiseLoss):
    """``log(1 + exp(-sigma d))`` on every pair of different labels, weight 1: nothing follows the order."""

    name = "test_pair_logistic"
    summary = "pairwise logistic loss (test objective)"
    params = {"sigma": Param(1.0, "real", "slope", low=0.0, low_open=True, search=Search(0.5, 4.0, log=True))}
    hessians = {"exact": EXACT, "bound": BOUND}

    @staticmethod
    def pair_loss(d, sigma):
        z = sigma * d
        return math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z))

    @staticmethod
    def pair_grad(d, sigma):
        e = math.exp(-abs(sigma * d))
        return -sigma / (1.0 + e) if d < 0.0 else -sigma * e / (1.0 + e)

    @staticmethod
    def pair_hess(d, sigma):
        e = math.exp(-abs(sigma * d))
        return sigma * sigma * e / (1.0 + e) ** 2


class Cubic(PairwiseLoss):
    """``(margin - d)^3 / 3`` while ``d < margin``; ``pair_args`` overridden (a derived constant)."""

    name = "test_pair_cubic"
    summary = "cubic hinge (test objective)"
    params = {"margin": Param(1.0, "real", "margin", low=0.0, low_open=True)}
    hessians = {"exact": EXACT, "bound": BOUND}

    def pair_args(self):
        return (self.margin, 1.0 / 3.0)

    @staticmethod
    def pair_loss(d, margin, third):
        return third * max(0.0, margin - d) ** 3

    @staticmethod
    def pair_grad(d, margin, third):
        return -max(0.0, margin - d) ** 2

    @staticmethod
    def pair_hess(d, margin, third):
        return 2.0 * max(0.0, margin - d)


class NDCGLoss2PP(PairwiseLoss):
    """LambdaLoss's NDCG-Loss2++ (Wang et al. 2018): LambdaRank's weight plus mu times the position-gap
    weight, on the logistic pair loss."""

    name = "test_ndcg_loss2pp"
    summary = "NDCG-Loss2++ (test objective)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True),
              "mu": Param(5.0, "real", "weight of the position-gap term", low=0.0)}
    hessians = {"exact": LAMBDA_EXACT, "bound": LAMBDA_BOUND}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    @staticmethod
    def pair_weight(p, sigma, mu):
        gap = abs(p.rank_i - p.rank_j)
        delta = abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap))
        return abs(p.gain_i - p.gain_j) * p.inv_max_dcg * (abs(p.discount_i - p.discount_j) + mu * delta)


class TruncatedLambdaRank(PairwiseLoss):
    """LambdaRank's |Delta NDCG| weight with LightGBM's truncation, in float64."""

    name = "test_truncated_lambdarank"
    summary = "LambdaRank, truncated (test objective)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True),
              "top": Param(3, "int", "truncation level", low=1)}
    hessians = {"exact": LAMBDA_EXACT}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    @staticmethod
    def pair_weight(p, sigma, top):
        return (p.gain_i - p.gain_j) * abs(p.discount_i - p.discount_j) * p.inv_max_dcg

    def truncation(self):
        return self.top


class AboveWeighted(PairwiseLoss):
    """A weight that reads the per-query prefix: 1 + the number of relevant documents above the
    pair's upper position (label >= 2), written by ``query_prefix`` from the labels in order."""

    name = "test_above_weighted"
    summary = "a prefix-reading weight (test objective)"
    params = {"sigma": Param(1.0, "real", "slope", low=0.0, low_open=True)}
    hessians = {"exact": LAMBDA_EXACT}
    pair_loss, pair_grad, pair_hess = LOGISTIC
    prefix_width = 1

    @staticmethod
    def query_prefix(labels, gains, out, sigma):
        count = 0.0
        for m in range(labels.shape[0]):
            out[m, 0] = count          # relevant documents strictly above position m
            count += 1.0 if labels[m] >= 2.0 else 0.0

    @staticmethod
    def pair_weight(p, prefix, sigma):
        return 1.0 + prefix[min(p.rank_i, p.rank_j), 0]


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


def _brute(obj: PairwiseLoss, scores, at=None, *, bound: bool = False):
    """Loss, gradient and Hessian by a double loop over each query's order, everything recomputed
    from the definitions: gains 2^y - 1, discounts 1/log2(2 + position), 1 / ideal DCG at the
    truncation level, the class's prefix, pair weight and pair functions."""
    cls, at = type(obj), scores if at is None else at
    n = len(scores)
    grad, hess, loss = np.zeros(n), np.zeros(n), 0.0
    k = obj.truncation()
    args = obj.pair_args()
    fn = {f: getattr(cls, f) for f in ("pair_loss", "pair_grad", "pair_hess")}
    for q in range(len(obj.group_ptr) - 1):
        a, b = int(obj.group_ptr[q]), int(obj.group_ptr[q + 1])
        if b - a < 2 or obj.query_weights[q] == 0.0:
            continue
        order = sorted(range(a, b), key=lambda r: -at[r])   # Python's sort is stable: ties keep input order
        gain = {r: 2.0 ** obj.labels[r] - 1.0 for r in range(a, b)}
        ideal = sorted(gain.values(), reverse=True)[:min(k, b - a)]
        idcg = sum(g / math.log2(2.0 + i) for i, g in enumerate(ideal))
        inv = 1.0 / idcg if idcg > 0 else 0.0
        prefix = np.zeros((b - a, cls.prefix_width))
        if cls.query_prefix is not None:
            cls.query_prefix(obj.labels[order], np.array([gain[r] for r in order]), prefix, *args)
        g_q, h_q = {r: 0.0 for r in range(a, b)}, {r: 0.0 for r in range(a, b)}
        acc = 0.0
        for i in range(min(b - a - 1, k)):
            for j in range(i + 1, b - a):
                ri, rj = order[i], order[j]
                if obj.labels[ri] == obj.labels[rj]:
                    continue
                (hi, phi), (lo, plo) = sorted([(ri, i), (rj, j)], key=lambda t: -obj.labels[t[0]])
                view = Pair(at[hi] - at[lo], phi, plo, obj.labels[hi], obj.labels[lo], gain[hi], gain[lo],
                            1 / math.log2(2 + phi), 1 / math.log2(2 + plo), inv)
                w = 1.0 if cls.pair_weight is None else cls.pair_weight(view, prefix, *args) \
                    if cls.query_prefix is not None else cls.pair_weight(view, *args)
                d = scores[hi] - scores[lo]
                gt, ht = w * fn["pair_grad"](d, *args), w * fn["pair_hess"](d, *args)
                if w != 0:
                    acc += w * fn["pair_loss"](d, *args)
                ht = 2 * abs(ht) if bound else ht
                g_q[hi], g_q[lo] = g_q[hi] + gt, g_q[lo] - gt
                h_q[hi], h_q[lo] = h_q[hi] + ht, h_q[lo] + ht
        loss += obj.query_weights[q] * acc
        for r in range(a, b):
            grad[r] = g_q[r] * obj.query_weights[q]
            hess[r] = h_q[r] * obj.query_weights[q]
    return loss, grad, hess


@pytest.fixture(params=["serial", "parallel"])
def kernels(request, monkeypatch):
    monkeypatch.setattr(kernel_dispatch, "PARALLEL_MIN_WORK", 10**18 if request.param == "serial" else 0)
    return request.param


CLASSES = [(Logistic, {}), (Logistic, {"sigma": 2.5, "hessian": "bound"}), (Cubic, {"margin": 0.7}),
           (Cubic, {"hessian": "bound"}), (NDCGLoss2PP, {}), (NDCGLoss2PP, {"mu": 0.5, "sigma": 2.0}),
           (NDCGLoss2PP, {"hessian": "bound"}), (TruncatedLambdaRank, {}), (TruncatedLambdaRank, {"top": 1}),
           (TruncatedLambdaRank, {"top": 100}), (AboveWeighted, {})]


@pytest.mark.parametrize("cls, params", CLASSES)
@pytest.mark.parametrize("seed", [0, 1])
def test_against_a_loop_over_each_querys_order(cls, params, seed, kernels) -> None:
    """The kernel's loss, gradient and Hessian are the brute force's (to a few ulps: the sums of a
    loss whose pairs do not follow the order run in another order), serial and parallel."""
    s, y, gp, w = _data(seed)
    obj = cls(y, gp, weights=w, **params)
    loss, g, h = _brute(obj, s, bound=params.get("hessian") == "bound")
    g_k, h_k = obj._grad_hess(s)
    np.testing.assert_allclose(g_k, g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h_k, h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(obj.loss(s), loss, rtol=1e-12)
    assert np.abs(g_k).max() > 0


def test_pairs_that_do_not_follow_the_order_are_visited_by_label_and_others_by_score() -> None:
    s, y, gp, w = _data(1)
    assert Logistic(y, gp)._by_label and Cubic(y, gp)._by_label
    assert not NDCGLoss2PP(y, gp)._by_label and not TruncatedLambdaRank(y, gp, top=100)._by_label
    from boostplug.objectives.ranknet import RankNet

    assert RankNet(y, gp)._by_label and not RankNet(y, gp, truncation_level=2)._by_label


def test_serial_and_parallel_kernels_agree_exactly(monkeypatch) -> None:
    s, y, gp, w = _data(4)
    for obj in (Logistic(y, gp, weights=w, hessian="bound"), AboveWeighted(y, gp, weights=w)):
        kernel_for, chosen = kernel_dispatch.kernel_for, []

        def spy(kernel, work):
            run = kernel_for(kernel, work)
            chosen.append(bool(run.targetoptions.get("parallel")))
            return run

        monkeypatch.setattr(kernel_dispatch, "kernel_for", spy)
        monkeypatch.setattr(kernel_dispatch, "PARALLEL_MIN_WORK", 10**18)
        serial = obj.loss(s), *obj.grad_hess(s)
        monkeypatch.setattr(kernel_dispatch, "PARALLEL_MIN_WORK", 0)
        parallel = obj.loss(s), *obj.grad_hess(s)
        assert (True in chosen and False in chosen) or numba.get_num_threads() < 2
        assert serial[0] == parallel[0]
        for a, b in zip(serial[1:], parallel[1:]):
            assert np.array_equal(a, b)
        monkeypatch.undo()


def test_degenerate_queries_give_zeros_never_nan() -> None:
    """A one-document query, a query of one label, a query of weight 0 and queries whose scores are
    all equal give finite values; no pair: exactly 0."""
    s, y, gp, w = _data()
    for cls in (NDCGLoss2PP, TruncatedLambdaRank, Logistic):
        obj = cls(y, gp, weights=w, hessian_floor=False)
        g, h = obj.grad_hess(s)
        assert np.isfinite(g).all() and np.isfinite(h).all() and np.isfinite(obj.loss(s))
        for q in (1, 2, 5):  # one document, one label, weight 0
            np.testing.assert_array_equal(g[gp[q]:gp[q + 1]], 0.0)
            np.testing.assert_array_equal(h[gp[q]:gp[q + 1]], 0.0)
        g0, _ = obj._grad_hess(np.zeros_like(s))
        assert np.isfinite(g0).all() and np.abs(g0[gp[3]:gp[4]]).max() > 0


@pytest.mark.parametrize("cls", [Logistic, Cubic])
def test_finite_differences_of_the_loss(cls) -> None:
    s, y, gp, w = _data(3)
    obj = cls(y, gp, weights=w, hessian_floor=False)
    g, h = obj.grad_hess(s)
    np.testing.assert_allclose(g, fd_gradient(obj.loss, s), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h, np.diag(fd_jacobian(lambda x: obj.grad_hess(x)[0], s)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls, params", [(NDCGLoss2PP, {"mu": 2.0}), (TruncatedLambdaRank, {}),
                                         (AboveWeighted, {})])
def test_finite_differences_with_the_weights_held(cls, params) -> None:
    """The gradient is the derivative of the loss with its pair weights held at the current scores,
    the exact Hessian the diagonal of that loss's Hessian."""
    rng = np.random.default_rng(4)
    gp = np.array([0, 6, 13], dtype=np.int64)
    y = rng.integers(0, 4, 13).astype(np.float64)
    s = rng.normal(size=13)
    obj = cls(y, gp, weights=[1.0, 2.0], **params)
    g, h = obj.grad_hess(s)
    np.testing.assert_allclose(g, fd_gradient(lambda x: obj.loss(x, weights_at=s), s), rtol=1e-7, atol=1e-9)
    J = fd_jacobian(lambda x: obj.grad_hess(x, weights_at=s)[0], s)
    np.testing.assert_allclose(J, J.T, atol=1e-8)
    np.testing.assert_allclose(obj._grad_hess(s)[1], np.diag(J), rtol=1e-6, atol=1e-8)


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


@pytest.mark.parametrize("cls", [Logistic, Cubic, NDCGLoss2PP, AboveWeighted])
def test_they_pass_the_contract_checks(cls) -> None:
    checks = [c for c in CHECKS if cls in (Logistic, AboveWeighted) or c != "serial_parallel"]
    assert check_objective(cls, checks=checks)


def test_no_truncation_and_the_inverse_ideal_dcg() -> None:
    y = np.array([3.0, 0.0, 1.0, 2.0])
    obj = NDCGLoss2PP(y, [0, 4])
    assert obj.truncation() == NO_TRUNCATION
    ideal = 7 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4)
    np.testing.assert_allclose(obj._inv_max_dcg, [1 / ideal], rtol=1e-15)
    np.testing.assert_allclose(TruncatedLambdaRank(y, [0, 4], top=1)._inv_max_dcg, [1 / 7.0], rtol=1e-15)


# ---- training -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, docs_per_query=(4, 9), n_features=5, n_informative=3, seed=2)


@pytest.fixture
def registered():
    entries = [objectives.register(Logistic), objectives.register(Cubic)]
    yield entries
    for e in entries:
        objectives.unregister(e.name)


def test_it_trains_through_lgb_train_and_xgb_train(registered, data) -> None:
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx

    for entry in registered:
        bound = entry.prepare(data.y, data.group_ptr)
        start = bound.loss(np.zeros(data.y.shape[0]))
        params = {"objective": bpl.objective(entry.name), "verbose": -1, "num_threads": 1, "min_data_in_leaf": 3,
                  "learning_rate": 0.3, "deterministic": True}
        booster = lgb.train(params, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 10)
        assert bound.loss(booster.predict(data.X, raw_score=True)) < 0.8 * start
        xbooster = xgb.train({**bpx.params(), "max_depth": 3, "eta": 0.3, "nthread": 1},
                             bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 10,
                             obj=bpx.objective(entry.name))
        assert bound.loss(xbooster.predict(xgb.DMatrix(data.X), output_margin=True)) < 0.8 * start


def test_a_registered_one_runs_in_compare(registered, letor_file: Path, tmp_path: Path, capsys) -> None:
    from boostplug.cli import main

    out = tmp_path / "out"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods",
                 "test_pair_logistic,xgb-test_pair_cubic,test_pair_logistic:sigma=2.5", "--rounds", "3",
                 "--no-progress", "--no-plots", "--out", str(out)]) == 0
    assert "test_pair_logistic[sigma=2.5]" in capsys.readouterr().out
    payload = json.loads((out / "results.json").read_text())
    assert [r["method"] for r in payload["results"]] == ["test_pair_logistic", "xgb-test_pair_cubic",
                                                         "test_pair_logistic[sigma=2.5]"]
    assert not payload["failures"]


# ---- mistakes --------------------------------------------------------------------------------------------
def _class(base=PairwiseLoss, **body):
    attrs = {"name": "bad_pairs", "summary": "a bad pairwise loss", "params": {"sigma": Param(1.0, "real", "slope")},
             "pair_loss": staticmethod(lambda d, sigma: 0.0), "pair_grad": staticmethod(lambda d, sigma: 0.0),
             "pair_hess": staticmethod(lambda d, sigma: 0.0)}
    attrs.update(body)
    return type("Bad", (base,), attrs)


def _weighted(**body):
    attrs = {"hessians": {"exact": LAMBDA_EXACT}, "pair_loss": LOGISTIC[0], "pair_grad": LOGISTIC[1],
             "pair_hess": LOGISTIC[2], "pair_weight": staticmethod(lambda p, sigma: 1.0)}
    return _class(**{**attrs, **body})


TWO = (np.array([1.0, 0.0]), np.array([0, 2]))


def test_mistakes_are_named_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError, match=r"Bad\.pair_grad\(d\) must take \(d, sigma\)"):
        _class(pair_grad=staticmethod(lambda d: 0.0))
    with pytest.raises(TypeError, match=r"Bad must define pair_hess\(d, \.\.\.\) as a @staticmethod"):
        _class(pair_hess=lambda self, d, sigma: 0.0)
    with pytest.raises(TypeError, match=r"Bad must define pair_loss\(d, \.\.\.\)"):
        type("Bad", (PairwiseLoss,), {"name": "bad_pairs", "pair_grad": staticmethod(lambda d: 0.0),
                                      "pair_hess": staticmethod(lambda d: 0.0)})
    with pytest.raises(TypeError, match=r"hessians\['fit'\].*LAMBDA_EXACT"):
        _class(hessians={"fit": objectives.Hessian("fitting", "weights")})
    with pytest.raises(TypeError, match=r"hessians\['exact'\].*follow the order"):  # a weight needs lambda modes
        _weighted(hessians={"exact": EXACT})
    with pytest.raises(TypeError, match=r"Bad\.pair_weight\(p\) must take \(pair, sigma\)"):
        _weighted(pair_weight=staticmethod(lambda p: 1.0))
    with pytest.raises(TypeError, match=r"Bad\.pair_weight\(p, sigma\) must take \(pair, prefix, sigma\)"):
        _weighted(prefix_width=1, query_prefix=staticmethod(lambda labels, gains, out, sigma: None))
    with pytest.raises(TypeError, match=r"defines query_prefix: it needs prefix_width"):
        _weighted(query_prefix=staticmethod(lambda labels, gains, out, sigma: None),
                  pair_weight=staticmethod(lambda p, prefix, sigma: 1.0))


def test_mistakes_are_named_when_the_class_is_bound() -> None:
    with pytest.raises(TypeError, match=r"Bad\.pair_loss\(d, sigma\) must take \(d and 2 more"):
        _class(pair_args=lambda self: (self.sigma, 2.0))(*TWO)
    with pytest.raises(TypeError, match=r"Bad\.pair_hess must return one number; numba finds that it returns"):
        _class(pair_hess=staticmethod(lambda d, sigma: (d, sigma)))(*TWO)
    with pytest.raises(TypeError, match=r"Bad\.pair_weight must return one number"):
        _weighted(pair_weight=staticmethod(lambda p, sigma: (1.0, 2.0)))(*TWO)
    with pytest.raises(TypeError, match=r"Bad\.pair_grad: numba cannot compile it .*Write the pair functions for "
                                        r"numba"):
        _class(pair_grad=staticmethod(lambda d, sigma: np.asarray(object())))(*TWO)
    with pytest.raises(ValueError, match=r"truncation level must be an integer >= 1, got 0"):
        _weighted(truncation=lambda self: 0)(*TWO)
    with pytest.raises(ValueError, match=r"the pairs follow the order.*mode 'exact' declares an exact gradient"):
        _class(truncation=lambda self: 1)(*TWO)


def _importing_loss(d, sigma):
    import math as m  # numba: UnsupportedBytecodeError (IMPORT_NAME), which is no NumbaError

    return m.log1p(d)


def test_a_function_numba_cannot_compile_for_any_reason_is_named() -> None:
    with pytest.raises(TypeError, match=r"Bad\.pair_loss: numba cannot compile it"):
        _class(pair_loss=staticmethod(_importing_loss))(*TWO)


def test_a_pair_function_that_always_raises_shows_its_exception() -> None:
    def failing(d, sigma):
        raise RuntimeError("not written yet")

    with pytest.raises(TypeError, match=r"Bad\.pair_hess raises RuntimeError: not written yet whatever its "
                                        r"arguments"):
        _class(pair_hess=staticmethod(failing))(*TWO)


def test_a_nan_from_a_pair_function_names_the_function_and_the_difference() -> None:
    bad = _class(pair_grad=staticmethod(lambda d, sigma: math.sqrt(d) if d >= 0.0 else math.nan))
    obj = bad(np.array([1.0, 0.0, 2.0]), np.array([0, 3]))
    with pytest.raises(NonFiniteError, match=r"a bug in bad_pairs's _grad_hess.*Bad\.pair_grad\(-0\.5, 1\.0\), "
                                             r"which returns nan") as info:
        obj.grad_hess(np.array([0.0, 0.5, 1.0]))
    assert info.value.cause == "objective" and info.value.row == 0
    with pytest.raises(NonFiniteError, match=r"Bad\.pair_loss\(0\.0, 1\.0\), which returns nan"):
        _class(pair_loss=staticmethod(lambda d, sigma: math.nan))(*TWO).loss(np.zeros(2))


def test_a_compiled_pair_function_that_raises_names_itself_its_arguments_and_the_pair(kernels) -> None:
    bad = _class(pair_grad=staticmethod(lambda d, sigma: sigma / d))
    obj = bad(np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 3, 5]))
    scores = np.array([0.0, 0.5, 1.0, 2.0, 2.0])  # query 1's rows 4 (label 1) and 3 (label 0) are tied: d = 0
    with pytest.raises(PairFunctionError, match=r"bad_pairs: Bad\.pair_grad\(0\.0, 1\.0\) raises ZeroDivisionError: "
                                                r".*on the pair of rows 4 \(preferred\) and 3 of query 1") as info:
        obj.grad_hess(scores)
    e = info.value
    assert (e.function, e.arguments, e.query, e.rows) == ("Bad.pair_grad", (0.0, 1.0), 1, (4, 3))
    assert isinstance(e.__cause__, ZeroDivisionError)
    assert obj.loss(scores) == 0.0  # pair_loss does not divide
    moved = scores + np.arange(5.0) / 10  # no tie left: the kernel's result
    d = moved[4] - moved[3]
    np.testing.assert_allclose(obj.grad_hess(moved)[0][3:], [-1 / d, 1 / d], rtol=1e-12)


def test_a_pair_weight_that_raises_names_itself_the_pairs_view_and_the_pair(kernels) -> None:
    bad = _weighted(pair_weight=staticmethod(lambda p, sigma: 1.0 / (p.rank_i - 1) ** 2))  # >= 0 where defined
    # query 1: rows 3 (label 0) above row 4 (label 1): the preferred row 4 is at position 1
    obj = bad(np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 3, 5]))
    scores = np.array([0.0, 0.5, 1.0, 2.0, 1.0])
    for method in (obj.loss, obj.grad_hess):
        with pytest.raises(PairFunctionError, match=r"bad_pairs: Bad\.pair_weight\(Pair\(d=-1\.0, rank_i=1, rank_j=0, "
                                                    r".*\), 1\.0\) raises ZeroDivisionError: .*on the pair of rows 4 "
                                                    r"\(preferred\) and 3 of query 1") as info:
            method(scores)
        assert info.value.query == 1 and info.value.rows == (4, 3)


def test_a_normalize_hook_is_refused_not_ignored() -> None:
    with pytest.raises(TypeError, match=r"Bad\.normalize: the pair base has no score-gap normalisation"):
        _weighted(normalize=lambda self: True)


def test_a_negative_pair_weight_is_refused_naming_the_pair_and_the_weight(kernels) -> None:
    neg = _weighted(pair_weight=staticmethod(lambda p, sigma: 1.0 if p.rank_i == 0 else -0.5))
    obj = neg(np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 3, 5]))
    scores = np.array([0.0, 0.5, 1.0, 2.0, 1.0])   # query 1: row 4 (label 1) below row 3: rank_i 1
    for method in (obj.loss, obj.grad_hess):
        with pytest.raises(PairFunctionError, match=r"Bad\.pair_weight\(Pair\(.*\), 1\.0\) returns -0\.5, a negative "
                                                    r"weight, on the pair of rows \d \(preferred\) and \d of query \d") as info:
            method(scores)
        assert info.value.rows is not None and info.value.query is not None


def test_a_query_prefix_that_raises_is_named() -> None:
    def prefix(labels, gains, out, sigma):
        if labels.shape[0] > 2:
            raise ValueError("too long")

    bad = _weighted(prefix_width=1, query_prefix=staticmethod(prefix),
                    pair_weight=staticmethod(lambda p, prefix, sigma: 1.0))
    obj = bad(np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 2, 5]))
    with pytest.raises(PairFunctionError, match=r"Bad\.query_prefix\(.*\) raises ValueError: too long, on query 1"):
        obj.grad_hess(np.zeros(5))


def test_an_error_that_is_no_pair_functions_passes_unchanged(monkeypatch) -> None:
    """Running out of memory, a damaged cache file, or a failure of the search itself: the kernel's
    own exception propagates as it was, never replaced by another."""
    import pickle

    from boostplug.objectives import _naming

    obj = _class(pair_loss=staticmethod(lambda d, sigma: sigma / d))(*TWO)
    for error in (MemoryError("the sums' arrays"), pickle.UnpicklingError("a damaged cache file")):
        def fail(*args, error=error):
            raise error

        monkeypatch.setattr(obj, "_call", fail)
        with pytest.raises(type(error), match=str(error)):
            obj.loss(np.zeros(2))
    monkeypatch.undo()

    def broken_search(*args, **kwargs):
        raise TypeError("float() argument must be a string or a real number, not 'tuple'")

    monkeypatch.setattr(_naming, "_scan", broken_search)
    with pytest.raises(ZeroDivisionError):  # the kernel's own error, not the search's TypeError
        obj.loss(np.zeros(2))
