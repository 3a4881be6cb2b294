"""The registered ``xendcg``: LightGBM's rank_xendcg through the plugin path grows the built-in's
trees (split features and thresholds equal, leaf values to 1e-12 relative) over 100 rounds, at
LightGBM's defaults and with another ``objective_seed``, on one and two threads, with query
weights, in each ``lgb.cv`` fold; its lambdas against a transcription of LightGBM's loop (random
generator included) and against the Neumann series they are; its loss against a per-query loop
and its finite differences; bad settings and labels refused naming the value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import objectives
from boostplug.data import load_example
from boostplug.objectives import xendcg as K
from boostplug.objectives.xendcg import XENDCG, objective_seed_from_seed
from boostplug.testing import ContractError, check_objective, fd_gradient
from tests.objectives._same_trees import assert_same_trees
from tests.objectives.test_lambdarank import BASE, _train_both

lgb = pytest.importorskip("lightgbm")
from boostplug import lightgbm as bpl  # noqa: E402  (needs lightgbm)

f32 = np.float32


@pytest.fixture(scope="module")
def example():
    return load_example()[0]


def _both(example, params: dict, rounds: int, **kw):
    return _train_both(example, params, rounds, builtin="rank_xendcg", plugin="xendcg", **kw)


@pytest.fixture(scope="module")
def at_defaults(example):
    return _both(example, {}, 100)


def test_default_settings_grow_lightgbms_trees(at_defaults) -> None:
    builtin, plugin = at_defaults
    assert_same_trees(builtin, plugin)
    assert builtin.num_trees() == 100


def test_another_objective_seed_grows_lightgbms_trees(example) -> None:
    assert_same_trees(*_both(example, {"objective_seed": -123456}, 100))


def test_two_threads_grow_the_same_trees(example) -> None:
    """Each query draws from its own generator, so LightGBM's trees do not depend on its thread
    count (10 rounds: two OpenMP threads wait long for each other on a busy machine)."""
    builtin, plugin = _both(example, {"objective_seed": 9}, 10, tree={"num_threads": 2})
    assert_same_trees(builtin, plugin)
    assert_same_trees(_both(example, {"objective_seed": 9}, 10)[0], plugin)


def test_the_draws_matter(example, at_defaults) -> None:
    """What the copy must match, shown to matter: another seed, or the library's Hessian floor,
    grows other trees within 100 rounds."""
    builtin, _ = at_defaults
    for params in ({"objective_seed": 6}, {"hessian_floor": True}):
        other = lgb.train({**BASE, "objective": bpl.objective("xendcg", **params)},
                          bpl.dataset(example.X, example.y, group_ptr=example.group_ptr), 100)
        with pytest.raises(AssertionError):
            assert_same_trees(builtin, other)


def test_lightgbms_seed_gives_its_objective_seed(example) -> None:
    """LightGBM derives objective_seed from ``seed``; objective_seed_from_seed does the same."""
    def fit(objective):
        return lgb.train({**BASE, "seed": 7, "objective": objective},
                         bpl.dataset(example.X, example.y, group_ptr=example.group_ptr), 20)

    assert_same_trees(fit("rank_xendcg"), fit(bpl.objective("xendcg", objective_seed=objective_seed_from_seed(7))))
    with pytest.raises(ValueError, match=r"seed must be a 32-bit integer, got 4294967296"):
        objective_seed_from_seed(2**32)


def test_query_weights_grow_lightgbms_trees(example) -> None:
    per_query = np.random.default_rng(0).choice([0.5, 1.0, 1.7, 3.0], size=example.n_queries)
    assert_same_trees(*_both(example, {}, 30, weight=np.repeat(per_query, np.diff(example.group_ptr))))


def test_each_cv_fold_draws_as_lightgbms(example) -> None:
    """lgb.cv: each fold's set binds its own instance, whose generators start at the fold's
    query numbers, as each fold's built-in objective does."""
    def cv(objective):
        ds = bpl.dataset(example.X, example.y, group_ptr=example.group_ptr)
        out = lgb.cv({**BASE, "objective": objective, "metric": "ndcg", "eval_at": [10]}, ds, 15,
                     folds=bpl.query_folds(ds, nfold=3, seed=1), return_cvbooster=True)
        return out["cvbooster"].boosters

    for a, b in zip(cv("rank_xendcg"), cv(bpl.objective("xendcg")), strict=True):
        assert_same_trees(a, b)


# ---- one round against LightGBM's loop ------------------------------------------------------------------
class _Random:
    """LightGBM's utils/random.h ``Random(seed)``: ``NextFloat``."""

    def __init__(self, seed: int) -> None:
        self.x = seed & 0xFFFFFFFF

    def next_float(self) -> float:
        self.x = (214013 * self.x + 2531011) & 0xFFFFFFFF
        return float(f32((self.x >> 16) & 0x7FFF) / f32(32768.0))


def _lightgbm_round(scores, labels, group_ptr, weights, rands):
    """RankXENDCG::GetGradientsForOneQuery and the weighting of GetGradients, transcribed."""
    g, h = np.zeros(len(scores), dtype=f32), np.zeros(len(scores), dtype=f32)
    for q in range(len(group_ptr) - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        n = b - a
        if n <= 1:
            continue
        s = scores[a:b]
        top = max(s)
        rho = [math.exp(x - top) for x in s]
        total = 0.0
        for v in rho:
            total += v
        rho = [v / total for v in rho]
        params = [float(2 ** int(labels[a + i])) - rands[q].next_float() for i in range(n)]
        inv = 0.0
        for v in params:
            inv += v
        inv = 1.0 / max(float(f32(1e-15)), inv)
        lam = [f32(0)] * n
        s1 = 0.0
        for i in range(n):
            t = -params[i] * inv + rho[i]
            lam[i] = f32(t)
            params[i] = t / (1.0 - rho[i])
            s1 += params[i]
        s2 = 0.0
        for i in range(n):
            t = rho[i] * (s1 - params[i])
            lam[i] = f32(lam[i] + f32(t))
            params[i] = t / (1.0 - rho[i])
            s2 += params[i]
        for i in range(n):
            lam[i] = f32(lam[i] + f32(rho[i] * (s2 - params[i])))
            g[a + i] = f32(lam[i] * f32(weights[q]))
            h[a + i] = f32(f32(rho[i] * (1.0 - rho[i])) * f32(weights[q]))
    return g, h


def _data():
    rng = np.random.default_rng(4)
    sizes = [5, 1, 4, 7, 3]
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 5, size=gp[-1]).astype(float)
    y[6:10] = 2.0                                  # one grade: gammas still move it
    w = np.array([1.0, 2.0, 0.5, 1.75, 3.0])       # float32 holds them exactly
    return rng.normal(size=gp[-1]) * 2, y, gp, w


def test_rounds_against_lightgbms_loop() -> None:
    """Three rounds: the float32 lambdas and Hessians of LightGBM's loop, to the bit, each round's
    gammas from each query's generator (a query of one document draws none)."""
    scores, y, gp, w = _data()
    obj = XENDCG(y, gp, weights=w, objective_seed=77)
    rands = [_Random(77 + q) for q in range(len(gp) - 1)]
    for r in range(3):
        s = scores + r * 0.25
        g, h = obj.grad_hess(s)
        eg, eh = _lightgbm_round(s, y, gp, w, rands)
        # the plugin hands float64 products of float32 lambdas and weights; LightGBM rounds them
        np.testing.assert_array_equal(g.astype(f32), eg, err_msg=f"round {r}")
        np.testing.assert_array_equal(h.astype(f32), eh, err_msg=f"round {r}")
        assert obj.rounds == r + 1
    assert np.all(g[5] == 0.0) and np.all(h[5] == 0.0)


def test_lcg_draws_wrap_as_unsigned() -> None:
    """Seeds near the 32-bit ends: the generator's state is an unsigned 32-bit int."""
    for seed in (-(2**31), -1, 0, 2**31 - 1):
        states = ((seed + np.arange(2)) & 0xFFFFFFFF).astype(np.uint64)
        out = np.empty(6)
        K.lcg_draws(states, np.array([0, 3, 6]), out)
        expect = [r.next_float() for r in (_Random(seed), _Random(seed + 1)) for _ in range(3)]
        np.testing.assert_array_equal(out, expect)


def test_lambdas_are_a_neumann_newton_step() -> None:
    """One round's lambdas are ``(I + A + A^2) g``, ``g = rho - p`` the loss's gradient (at that
    round's gammas) and ``A = O D^-1`` (``D = diag(rho (1 - rho))``, ``O`` the Hessian's
    off-diagonal ``rho_i rho_j`` part): ``D`` times the first terms of ``H^-1 g``'s Neumann series."""
    scores, y, gp, w = _data()
    obj = XENDCG(y, gp)
    g, h = obj.grad_hess(scores)
    u = obj.gammas()
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        if b - a <= 1:
            continue
        e = np.exp(scores[a:b] - scores[a:b].max())
        rho = e / e.sum()
        phi = 2.0 ** y[a:b] - u[a:b]
        first = rho - phi / phi.sum()
        O = np.outer(rho, rho)
        np.fill_diagonal(O, 0.0)
        A = O / (rho * (1 - rho))
        expect = first + A @ first + A @ (A @ first)
        np.testing.assert_allclose(g[a:b], expect, rtol=0, atol=1e-6 * np.abs(expect).max())
        np.testing.assert_allclose(h[a:b], rho * (1 - rho), rtol=1e-6)


def _loop_loss(scores, y, gp, w, gammas) -> float:
    """-sum_q w_q sum_i p_i log softmax(s)_i, p = (2^y - gamma) / sum, one query at a time."""
    total = 0.0
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        if b - a <= 1:
            continue
        phi = [2.0 ** y[i] - gammas[i] for i in range(a, b)]
        z = math.log(sum(math.exp(scores[i]) for i in range(a, b)))
        total -= w[q] * sum(phi[i - a] / sum(phi) * (scores[i] - z) for i in range(a, b))
    return total


def test_loss_against_a_loop_and_its_derivative() -> None:
    """The loss (the last round's gammas) against a per-query loop; its five-point derivative is
    the first-order term ``w (rho - p)``, which the lambdas extend."""
    scores, y, gp, w = _data()
    obj = XENDCG(y, gp, weights=w, objective_seed=3)
    first_round = obj.gammas()                      # before any round: the first round's, not drawn
    assert obj.rounds == 0
    np.testing.assert_allclose(obj.loss(scores), _loop_loss(scores, y, gp, w, first_round), rtol=1e-12)
    obj.grad_hess(scores)
    np.testing.assert_array_equal(obj.gammas(), first_round)
    obj.grad_hess(scores)
    second = obj.gammas()
    assert not np.array_equal(second, first_round) and obj.rounds == 2
    np.testing.assert_allclose(obj.loss(scores), _loop_loss(scores, y, gp, w, second), rtol=1e-12)
    fd = fd_gradient(obj.loss, scores)
    rho_minus_p = np.zeros_like(scores)
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        if b - a > 1:
            e = np.exp(scores[a:b] - scores[a:b].max())
            phi = 2.0 ** y[a:b] - second[a:b]
            rho_minus_p[a:b] = w[q] * (e / e.sum() - phi / phi.sum())
    np.testing.assert_allclose(fd, rho_minus_p, rtol=1e-7, atol=1e-9)


def test_a_dominant_document_has_finite_lambdas() -> None:
    """Where one document holds the whole softmax (rho = 1 in float64) LightGBM's t / (1 - rho)
    is inf; the plugin leaves that term out (the other terms then nearly cancel on that document)."""
    obj = XENDCG(np.array([2.0, 0.0, 1.0]), np.array([0, 3]))
    g, h = obj.grad_hess(np.array([100.0, 0.0, 1.0]))
    assert np.isfinite(g).all() and abs(g[0]) < 1e-30 and g[1] < 0 and g[2] < 0
    assert h[0] == 0.0


def test_the_newton_check_can_fail() -> None:
    """The contract's check of a "newton" gradient refuses one that ascends."""
    class Uphill(XENDCG):
        name = "xendcg_uphill"

        def _grad_hess(self, scores):
            g, h = super()._grad_hess(scores)
            return -g, h

    with pytest.raises(ContractError, match=r"-grad / hess does not descend the loss"):
        check_objective(Uphill, checks=["gradient"])


def test_trains_on_xgboost_and_continues_its_draws(example) -> None:
    """Through XGBoost it trains (test NDCG@10 rises); xgb.train does not copy ``obj``, so a
    continuation with the same objective and DMatrix continues the draws (10 + 10 rounds = 20)."""
    xgb = pytest.importorskip("xgboost")
    from boostplug import metrics
    from boostplug import xgboost as bpx

    test = load_example()[1]
    params = bpx.params(max_depth=4, eta=0.1, nthread=1)
    dm = bpx.dmatrix(example.X, example.y, group_ptr=example.group_ptr)
    booster = xgb.train(params, dm, 20, obj=bpx.objective("xendcg"))
    dt = xgb.DMatrix(test.X)
    first = metrics.ndcg(booster.predict(dt, iteration_range=(0, 1)), test.y, test.group_ptr, k=10)
    last = metrics.ndcg(booster.predict(dt), test.y, test.group_ptr, k=10)
    assert last > first and last > 0.6
    obj = bpx.objective("xendcg")
    half = xgb.train(params, dm, 10, obj=obj)
    resumed = xgb.train(params, dm, 10, obj=obj, xgb_model=half)
    np.testing.assert_array_equal(resumed.predict(dt), booster.predict(dt))


@pytest.mark.parametrize("params, error, message", [
    ({"objective_seed": 2**31}, ValueError, r"objective_seed must be an integer in \[-2147483648, 2147483647\], "
                                            r"got 2147483648"),
    ({"objective_seed": 1.5}, TypeError, r"objective_seed must be an integer .*got 1\.5"),
    ({"hessian": "exact"}, ValueError, r"unknown parameter.*'hessian'"),
])
def test_bad_settings_name_the_value(params, error, message) -> None:
    with pytest.raises(error, match=message):
        bpl.objective("xendcg", **params)


def test_labels_lightgbm_cannot_take_are_refused() -> None:
    for label, row in ((1.5, 1), (31.0, 0)):
        y = np.array([0.0, label]) if row == 1 else np.array([label, 0.0])
        with pytest.raises(ValueError, match=rf"xendcg: labels must be integers in 0\.\.30 .*row {row} has label "
                                             rf"{label}"):
            XENDCG(y, np.array([0, 2]))


def test_registered_beside_lightgbms_built_in() -> None:
    entry = objectives.get("xendcg")
    assert entry.loss_class is XENDCG and entry.defaults == {"objective_seed": 5, "hessian_floor": False}
    assert list(entry.methods) == ["xendcg-plugin"]   # compare's "rank_xendcg" is LightGBM's built-in
    assert entry.gradient_kinds == {"lightgbm": "newton"}


def test_restarting_draws_as_lightgbms(example) -> None:
    """init_model: the built-in starts its draws again for the new lgb.train call, and so does the
    plugin (lgb.train copies its params, the objective included): the same continued trees."""
    def fit(objective):
        def part(init):
            return lgb.train({**BASE, "objective": objective},
                             bpl.dataset(example.X, example.y, group_ptr=example.group_ptr), 10, init_model=init)

        return part(part(None))

    assert_same_trees(fit("rank_xendcg"), fit(bpl.objective("xendcg")))


def test_compares_beside_the_built_in(example) -> None:
    """``boostplug compare``'s xendcg-plugin takes the objective_seed LightGBM derives from the
    run's seed for rank_xendcg: the same scores every round."""
    from boostplug.compare.methods import TREE_PARAMS, get_method

    train, test = load_example()
    runs = [get_method(name).train(train, test, test, rounds=10, tree_params=TREE_PARAMS, seed=11, threads=1)
            for name in ("rank_xendcg", "xendcg-plugin")]
    for a, b in zip(runs[0].vali_scores, runs[1].vali_scores, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=0)
    assert get_method("xendcg-plugin").loss == "boostplug:xendcg"
