"""YetiRank / YetiLoss (boostplug/objectives/yetirank.py): equal to a slow transcription of CatBoost's
loops fed the same random draws, the gradient of the held-weights loss, deterministic by seed and
round, degenerate inputs, bad parameters, and one round of draws per boosting round on both frameworks."""

from __future__ import annotations

import math

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import metrics, objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug._core import dispatch
from boostplug.objectives import NO_INFO_HESSIAN
from boostplug.objectives import _yetirank_kernels as K
from boostplug.objectives import yetirank
from boostplug.objectives.pairwise import LOGISTIC
from boostplug.objectives.yetirank import YetiRank
from boostplug.testing import check_objective


def _data(seed: int = 0, n_queries: int = 8, longest: int = 9):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, longest + 1, size=n_queries)
    sizes[1] = 1
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 4, size=gp[-1]).astype(np.float64)
    y[gp[2]:gp[3]] = 2.0                                    # one query of one grade
    s = np.round(rng.normal(size=gp[-1]), 1)                # ties
    w = rng.choice([0.0, 0.5, 1.0, 2.5], size=n_queries)
    w[0] = 1.0
    return s, y, gp, w


def reference(prep: YetiRank, scores: np.ndarray, at: np.ndarray | None = None):
    """CatBoost's GenerateYetiRankPairsForQuery / TYetiRankPairWeightsCalcer / TPairLogitError, in
    plain Python: each pair's weight summed over the round's orders, then the logistic terms."""
    at = scores if at is None else at
    noises = list(prep.round_noise(prep.current_round))
    labels, gp, perms = prep.labels, prep.group_ptr, prep.permutations
    grad, hess, loss = np.zeros(len(scores)), np.zeros(len(scores)), 0.0
    for q in range(len(gp) - 1):
        a, b = int(gp[q]), int(gp[q + 1])
        size = b - a
        if size < 2 or prep.query_weights[q] == 0.0:
            continue
        top = size if prep.top is None else min(prep.top, size)
        limit = size if prep.top is None else prep.top

        def dcg_value(label: float, position: int) -> float:   # CatBoost's CalcDcgValue, Base numerator
            return label / math.log2(position + 2) if position < limit else 0.0

        coef = 1.0
        if prep.mode == "ndcg":
            best = sorted(labels[a:b], reverse=True)
            idcg = sum(dcg_value(best[k], k) for k in range(size))
            coef = 1.0 / idcg if idcg > 0 else 0.0
        weights: dict[tuple[int, int], float] = {}

        def add(x: int, y: int, w: float) -> None:
            if labels[x] > labels[y]:
                weights[(x, y)] = weights.get((x, y), 0.0) + w
            elif labels[x] < labels[y]:
                weights[(y, x)] = weights.get((y, x), 0.0) + w

        for noise in noises:
            top_score = max(at[a:b])
            keys = [(at[a + k] - top_score) + noise[a + k] for k in range(size)]
            order = [a + k for k in sorted(range(size), key=lambda k: -keys[k])]   # stable
            if prep.mode == "classic":
                decay = 1.0
                for k in range(1, size):
                    x, y = order[k - 1], order[k]
                    add(x, y, 0.15 * decay * abs(labels[x] - labels[y]))
                    decay *= prep.decay
                continue
            for i in range(top):
                bound = size if prep.num_neighbors == -1 else min(size, i + 1 + prep.num_neighbors)
                for j in range(i + 1, bound):
                    x, y = order[i], order[j]
                    w = coef * (dcg_value(labels[x], i) + dcg_value(labels[y], j)
                                - dcg_value(labels[x], j) - dcg_value(labels[y], i))
                    add(x, y, abs(w))
        for (x, y), w in weights.items():
            w = prep.query_weights[q] * w / perms
            d = scores[x] - scores[y]
            p = 1.0 / (1.0 + math.exp(d))          # exp(s_y) / (exp(s_x) + exp(s_y))
            loss += w * math.log1p(math.exp(-d))
            grad[x] -= w * p
            grad[y] += w * p
            hess[x] += w * p * (1.0 - p)
            hess[y] += w * p * (1.0 - p)
    return grad, hess, loss


def _close(actual, expected) -> None:
    scale = max(1e-300, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12 * scale)


SETTINGS = [{}, {"decay": 0.5, "permutations": 3}, {"noise": "gauss", "noise_power": 0.3}, {"noise": "none"},
            {"mode": "dcg"}, {"mode": "ndcg", "top": 3}, {"mode": "dcg", "num_neighbors": -1, "permutations": 4},
            {"mode": "ndcg", "num_neighbors": 2, "top": 4, "noise": "gauss"}, {"seed": 12345, "first_round": 7}]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_equals_catboosts_loops_fed_the_same_draws(settings) -> None:
    s, y, gp, w = _data()
    prep = objectives.get("yetirank").prepare(y, gp, weights=w, hessian_floor=False, **settings)
    for r in range(3):                                   # three rounds, each with its own draws
        g, h = prep.grad_hess(s + 0.1 * r)
        assert prep.current_round == prep.first_round + r
        g_ref, h_ref, loss_ref = reference(prep, s + 0.1 * r)
        _close(g, g_ref)
        _close(h, h_ref)
        _close(prep.loss(s + 0.1 * r), loss_ref)
        assert np.abs(g).max() > 0
    other = np.random.default_rng(9).normal(size=s.shape[0])      # weights held at s, terms at other
    g, h = prep.grad_hess(other, weights_at=s)
    g_ref, h_ref, loss_ref = reference(prep, other, at=s)
    _close(g, g_ref)
    _close(h, h_ref)
    _close(prep.loss(other, weights_at=s), loss_ref)


def documented_order(prep: YetiRank, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gradient and Hessian summed in the documented order, in plain Python: the draws of
    ``default_rng([seed, round])`` (noise for every document, one order after the other, by numpy's
    own ``logistic`` / ``normal``), each order's weighted pairs added in turn (the kernel's pair
    functions, run as Python), each query scaled once by its weight over the number of orders."""
    rng = np.random.default_rng([prep.seed, prep.current_round])
    n, gp, labels = len(scores), prep.group_ptr, prep.labels
    grad, hess = np.zeros(n), np.zeros(n)
    pair_grad, pair_hess = (f.__func__.py_func for f in LOGISTIC[1:])
    discounts = 1.0 / np.log2(2.0 + np.arange(max(int(np.diff(gp).max()), 1), dtype=np.float64))
    for _ in range(prep.permutations):
        noise = {"logistic": lambda: rng.logistic(0.0, 1.0, size=n), "none": lambda: np.zeros(n),
                 "gauss": lambda: rng.normal(0.0, prep.noise_power, size=n)}[prep.noise]()
        for q in range(len(gp) - 1):
            a, b = int(gp[q]), int(gp[q + 1])
            size = b - a
            if size < 2 or prep.query_weights[q] <= 0.0:
                continue
            order = a + np.argsort(-((scores[a:b] - scores[a:b].max()) + noise[a:b]), kind="stable")
            top = len(discounts) if prep.top is None else prep.top
            factor = 0.15
            for i in range(size - 1 if prep.mode == "classic" else min(size, top)):
                stop = i + 2 if prep.mode == "classic" else (
                    size if prep.num_neighbors < 0 else min(size, i + 1 + prep.num_neighbors))
                for j in range(i + 1, stop):
                    x, y = int(order[i]), int(order[j])
                    if labels[x] == labels[y]:
                        continue
                    if prep.mode == "classic":
                        w = factor * abs(labels[x] - labels[y])
                    else:
                        w = abs((labels[x] - labels[y]) * abs(discounts[i] - (discounts[j] if j < top else 0.0))
                                * prep._coef[q])  # |Delta NDCG|'s order of operations (_core.dcg.delta_ndcg)
                    if w == 0.0:
                        continue
                    if labels[x] < labels[y]:
                        x, y = y, x
                    d = float(scores[x] - scores[y])
                    g, h = w * pair_grad(d, 1.0), w * pair_hess(d, 1.0)
                    grad[x] += g
                    grad[y] -= g
                    hess[x] += h
                    hess[y] += h
                factor *= prep.decay
    for values in (grad, hess):
        for q in range(len(gp) - 1):
            values[gp[q]:gp[q + 1]] = values[gp[q]:gp[q + 1]] * prep.query_weights[q] / prep.permutations
    return grad, hess


@pytest.mark.parametrize("settings", SETTINGS[:5] + [{"mode": "ndcg"}, {"mode": "dcg", "num_neighbors": -1,
                                                                          "permutations": 4, "noise": "gauss"}],
                         ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_same_bits_as_the_documented_draws_and_order(settings) -> None:
    """Bit for bit the sums of :func:`documented_order` (the draws and the order of the additions
    the module docstring fixes: one seed gives the same gradients whatever the kernel's layout), on
    both the serial and the parallel kernels, over a few rounds."""
    s, y, gp, w = _data(3, n_queries=12, longest=70)     # queries longer than a sort's first runs
    for parallel_from in (0, 10 ** 18):
        prep = objectives.get("yetirank").prepare(y, gp, weights=w, hessian_floor=False, seed=7, **settings)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(dispatch, "PARALLEL_MIN_WORK", parallel_from)
            for r in range(3):
                g, h = prep.grad_hess(s + 0.3 * r)
                g_ref, h_ref = documented_order(prep, s + 0.3 * r)
                np.testing.assert_array_equal(g, g_ref)
                np.testing.assert_array_equal(h, h_ref)
                assert np.abs(g).max() > 0


@pytest.mark.parametrize("layout", ["blocks of 2 orders", "a 0 in an active query", "a 0 in a one-document query"])
@pytest.mark.parametrize("settings", [{"permutations": 5}, {"mode": "ndcg", "permutations": 3}],
                         ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_same_bits_in_blocks_and_after_a_zero_uniform(settings, layout, monkeypatch) -> None:
    """The same bits when the round's orders run in blocks (a large set), and when a uniform is 0
    (numpy's ``logistic`` draws again after one: the kernel counts the zeros, and the round is
    summed again on numpy's own logistic noise; here a 0 written into the uniforms the kernel
    transforms, which the documented draws do not have)."""
    s, y, gp, w = _data(4, n_queries=10, longest=40)
    prep = objectives.get("yetirank").prepare(y, gp, weights=w, hessian_floor=False, seed=11, **settings)
    assert not prep._active[1]
    row = {"a 0 in an active query": gp[np.argmax(prep._active)] + 1, "a 0 in a one-document query": gp[1]}
    again = []
    if layout == "blocks of 2 orders":
        monkeypatch.setattr(yetirank, "_BLOCK_DRAWS", 2 * len(y) + 1)
    else:
        def with_a_zero(rng, shape):
            u = rng.random(size=shape)
            u[-1, row[layout]] = 0.0
            return u

        def spy(self, *args):
            again.append(not args[2])
            return run_orders(self, *args)

        run_orders = YetiRank._run_orders
        monkeypatch.setattr(yetirank, "_uniforms", with_a_zero)
        monkeypatch.setattr(YetiRank, "_run_orders", spy)
    for r in range(2):
        g, h = prep.grad_hess(s - 0.2 * r)
        g_ref, h_ref = documented_order(prep, s - 0.2 * r)
        np.testing.assert_array_equal(g, g_ref)
        np.testing.assert_array_equal(h, h_ref)
    _close(prep.loss(s), reference(prep, s)[2])
    assert again == ([] if layout == "blocks of 2 orders" else [False, True] * 3)


def test_the_kernels_sort_is_numpys_stable_descending_sort() -> None:
    """The kernel's order of a query (bucket sort, insertion in small buckets, a merge sort in
    large ones and without a finite spread) is ``np.argsort(-key, kind="stable")`` on keys that
    test each path: spread, rounded (ties), a few units in the last place apart, one far outlier
    (every other key in one bucket), extremes beyond a finite spread, signed tiny values."""
    rng = np.random.default_rng(0)
    tiny = [1e-300, -1e-300, 0.0, 5e-324, -5e-324]
    makers = [lambda n: rng.logistic(size=n), lambda n: np.round(rng.normal(size=n), 1),
              lambda n: 1.0 + rng.integers(0, 5, size=n) * np.finfo(float).eps,
              lambda n: np.where(np.arange(n) == n // 2, 50.0, rng.normal(size=n)),
              lambda n: np.where(rng.random(n) < 0.1, 1.7e308, -1.7e308) * rng.random(n),
              lambda n: rng.choice(tiny, size=n), lambda n: np.full(n, -2.5)]
    for trial in range(400):
        n = int(rng.integers(2, 200))
        key = makers[trial % len(makers)](n) + 0.0
        work = [np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                np.empty(K._BUCKETS_PER_KEY * n + 1, dtype=np.int64),
                np.empty(n)]
        with np.errstate(over="ignore"):             # the spread of the extremes: inf
            K._order_descending.py_func(key, n, key.min(), key.max(), *work) if trial < 14 else \
                K._order_descending(key, n, key.min(), key.max(), *work)
        np.testing.assert_array_equal(work[0], np.argsort(-key, kind="stable"), err_msg=f"keys {key}")


def test_reference_sees_the_orders() -> None:
    """The slow version is not blind to the order: other scores give other weights."""
    s, y, gp, w = _data()
    prep = objectives.get("yetirank").prepare(y, gp, weights=w, noise="none")
    assert not np.allclose(reference(prep, s)[0], reference(prep, s, at=-s)[0])


def test_hand_computed_classic_weights() -> None:
    """Equal scores, no noise: the input order; neighbours (0, 1) and (1, 2) weigh 0.15 and 0.15 decay."""
    prep = objectives.get("yetirank").prepare([0.0, 1.0, 2.0], [0, 3], noise="none", permutations=1, decay=0.5)
    g, h = prep.grad_hess(np.zeros(3))
    np.testing.assert_allclose(g, [0.15 * 0.5, -0.15 * 0.5 + 0.075 * 0.5, -0.075 * 0.5], rtol=1e-15)
    np.testing.assert_allclose(h, [0.15 * 0.25, 0.225 * 0.25, 0.075 * 0.25], rtol=1e-15)


@pytest.mark.parametrize("mode", ["classic", "dcg"])
def test_ties_keep_the_input_order(mode) -> None:
    """Tied perturbed scores keep their input order (CatBoost's StableSort), in a query long enough
    for an unstable sort to reorder them."""
    y = np.random.default_rng(5).integers(0, 4, size=80).astype(np.float64)
    s = np.repeat([0.5, -1.0], 40)
    prep = objectives.get("yetirank").prepare(y, [0, 80], noise="none", permutations=1, mode=mode,
                                              hessian_floor=False)
    g, h = prep.grad_hess(s)
    g_ref, h_ref, _ = reference(prep, s)
    _close(g, g_ref)
    _close(h, h_ref)


@pytest.mark.parametrize("settings", [{"decay": 0.3, "permutations": 2}, {"mode": "ndcg", "top": 2},
                                      {"mode": "dcg", "num_neighbors": -1}, {"noise": "gauss", "noise_power": 2.0}])
def test_held_weights_derivatives(settings) -> None:
    """Gradient = five-point derivative of the loss with its weights (and draws) held, Hessian =
    derivative of the gradient, on settings the registry does not list."""
    check_objective("yetirank", params=settings, checks=["gradient", "hessian", "query_weights", "sum_over_queries"])


# ---- randomness -----------------------------------------------------------------------------------------
def _rounds(prep, s, n=3):
    return [prep.grad_hess(s) for _ in range(n)]


def test_deterministic_by_seed_and_round() -> None:
    s, y, gp, w = _data(1)
    yeti = objectives.get("yetirank")
    first, again = _rounds(yeti.prepare(y, gp, weights=w, seed=3), s), _rounds(yeti.prepare(y, gp, weights=w, seed=3), s)
    for (g1, h1), (g2, h2) in zip(first, again):
        np.testing.assert_array_equal(g1, g2)
        np.testing.assert_array_equal(h1, h2)
    assert not np.array_equal(first[0][0], first[1][0])                     # each round draws anew
    other = yeti.prepare(y, gp, weights=w, seed=4).grad_hess(s)[0]
    assert not np.array_equal(other, first[0][0])                           # another seed, other draws
    later = yeti.prepare(y, gp, weights=w, seed=3, first_round=2).grad_hess(s)[0]
    np.testing.assert_array_equal(later, first[2][0])                       # a continued run's rounds


def test_only_grad_hess_of_scores_starts_a_round() -> None:
    s, y, gp, w = _data(2)
    prep = objectives.get("yetirank").prepare(y, gp, weights=w, first_round=5)
    assert prep.current_round == 5
    before = prep.loss(s)
    g, _ = prep.grad_hess(s)                               # round 5: the draws loss used already
    assert prep.current_round == 5 and prep.loss(s) == before
    prep.grad_hess(s, weights_at=-s)
    prep.loss(s, weights_at=-s)
    assert prep.current_round == 5
    bad = s.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="row 0 has nan"):
        prep.grad_hess(bad)
    assert prep.current_round == 5                         # a refused call starts no round
    np.testing.assert_array_equal(prep.grad_hess(s)[0],
                                  objectives.get("yetirank").prepare(y, gp, weights=w, first_round=6).grad_hess(s)[0])
    assert not np.array_equal(prep.grad_hess(s)[0], g)


def test_draws_are_catboosts_distributions() -> None:
    prep = objectives.get("yetirank").prepare(np.zeros(20000), [0, 20000], permutations=2)
    logistic = np.concatenate(list(prep.round_noise(0)))
    assert abs(logistic.mean()) < 0.05 and abs(logistic.var() - math.pi ** 2 / 3) < 0.1
    gauss = np.concatenate(list(objectives.get("yetirank").prepare(np.zeros(20000), [0, 20000], noise="gauss",
                                                                   noise_power=0.5).round_noise(0)))
    assert abs(gauss.std() - 0.5) < 0.01
    assert not np.any(np.concatenate(list(objectives.get("yetirank").prepare(
        np.zeros(4), [0, 4], noise="none").round_noise(0))))


# ---- degenerate inputs and bad parameters ---------------------------------------------------------------
@pytest.mark.parametrize("mode", ["classic", "ndcg"])
def test_degenerate_queries(mode) -> None:
    n = 6
    ones = objectives.get("yetirank").prepare(np.arange(n, dtype=float) % 3, np.arange(n + 1), mode=mode)
    g, h = ones.grad_hess(np.arange(n, dtype=float))
    assert not g.any() and np.all(h == NO_INFO_HESSIAN) and ones.loss(np.zeros(n)) == 0.0
    same = objectives.get("yetirank").prepare(np.full(n, 2.0), [0, 3, n], mode=mode)
    g, h = same.grad_hess(np.arange(n, dtype=float))
    assert not g.any() and np.all(h == NO_INFO_HESSIAN) and same.loss(np.zeros(n)) == 0.0
    tied = objectives.get("yetirank").prepare([0.0, 1.0, 1.0, 3.0], [0, 4], mode=mode)
    g, h = tied.grad_hess(np.zeros(4))
    assert np.all(np.isfinite(g)) and abs(g.sum()) < 1e-15 and g[3] < 0 < g[0]


@pytest.mark.parametrize("params, message", [
    ({"permutations": 0}, r"permutations.*got 0"),
    ({"decay": 1.5}, r"decay.*1\.5"),
    ({"noise": "gumbel"}, r"noise.*'gumbel'"),
    ({"mode": "mrr"}, r"mode.*'mrr'"),
    ({"top": 0}, r"top.*got 0"),
    ({"mode": "dcg", "num_neighbors": 0}, r"num_neighbors must be >= 1 or -1.*got 0"),
    ({"num_neighbors": -2}, r"num_neighbors.*-2"),
    ({"mode": "ndcg", "decay": 0.5}, r"decay=0\.5 has no effect with mode='ndcg'"),
    ({"top": 3}, r"top=3 has no effect with mode='classic'"),
    ({"num_neighbors": 2}, r"num_neighbors=2 has no effect with mode='classic'"),
    ({"noise_power": 2.0}, r"noise_power=2\.0 has no effect with noise='logistic'"),
    ({"noise_power": 0.0, "noise": "gauss"}, r"noise_power.*0"),
    ({"seed": -1}, r"seed.*-1"),
    ({"first_round": 1.5}, r"first_round.*1\.5"),
])
def test_bad_parameters_name_the_value(params, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        objectives.get("yetirank").check(params)


# ---- on the frameworks ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, docs_per_query=(5, 12), n_features=5, seed=4)


@pytest.fixture
def calls(monkeypatch):
    """Each YetiRank instance's grad_hess calls that start a round."""
    seen: dict[int, list[int]] = {}
    original = YetiRank.grad_hess

    def spy(self, scores, *, weights_at=None):
        out = original(self, scores, weights_at=weights_at)
        if weights_at is None:
            seen.setdefault(id(self), []).append(self.current_round)
        return out

    monkeypatch.setattr(YetiRank, "grad_hess", spy)
    return seen


ROUNDS = 6


def test_one_round_of_draws_per_boosting_round(data, calls) -> None:
    """lgb.train, xgb.train, lgb.cv (each fold its own binding), bpl.cv, bpx.cv and the rankers call
    grad_hess once per boosting round: rounds 0, 1, ..., ROUNDS - 1 on each binding."""
    expected = list(range(ROUNDS))
    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr)
    lgb.train({"objective": bpl.objective("yetirank"), "verbose": -1, "num_threads": 1}, ds, ROUNDS)
    assert list(calls.values()) == [expected]
    calls.clear()
    xgb.train(bpx.params(max_depth=3, nthread=1), bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), ROUNDS,
              obj=bpx.objective("yetirank"))
    assert list(calls.values()) == [expected]
    calls.clear()
    lgb.cv({"objective": bpl.objective("yetirank", mode="ndcg"), "verbose": -1, "num_threads": 1},
           bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), ROUNDS, folds=bpl.query_folds(
               bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 3))
    assert list(calls.values()) == [expected] * 3
    calls.clear()
    bpl.cv({"objective": bpl.objective("yetirank"), "verbose": -1, "num_threads": 1},
           bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), ROUNDS, nfold=3)
    assert list(calls.values()) == [expected] * 3
    calls.clear()
    bpx.cv(bpx.params(max_depth=3, nthread=1), bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), ROUNDS,
           nfold=3, obj=bpx.objective("yetirank"))
    assert list(calls.values()) == [expected] * 3
    for ranker in (bpl.LGBMRanker(objective="yetirank", n_estimators=ROUNDS, n_jobs=1, verbose=-1),
                   bpx.XGBRanker(objective="yetirank", mode="ndcg", n_estimators=ROUNDS, n_jobs=1)):
        calls.clear()
        ranker.fit(data.X, data.y, qid=np.repeat(np.arange(data.n_queries), data.sizes))
        assert list(calls.values()) == [expected]


def test_training_learns_on_both_frameworks(data) -> None:
    start = metrics.ndcg(np.zeros(data.y.shape[0]), data.y, data.group_ptr, k=5)
    for mode in ("classic", "ndcg"):
        booster = lgb.train({"objective": bpl.objective("yetirank", mode=mode), "verbose": -1, "num_threads": 1,
                             "learning_rate": 0.3}, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 20)
        assert metrics.ndcg(booster.predict(data.X), data.y, data.group_ptr, k=5) > start + 0.1
        dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
        # min_child_weight=0: YetiLoss's Hessians (|Delta NDCG| p (1 - p)) sum to less than XGBoost's default 1
        booster = xgb.train(bpx.params(max_depth=3, nthread=1, eta=0.3, min_child_weight=0.0), dm, 20,
                            obj=bpx.objective("yetirank", mode=mode))
        assert metrics.ndcg(booster.predict(dm, output_margin=True), data.y, data.group_ptr, k=5) > start + 0.1
