"""RankNet (``ranknet``) and LambdaLoss's NDCG-Loss1 (``ndcg_loss1``), NDCG-Loss2 (``ndcg_loss2``)
and NDCG-Loss2++ (``ndcg_loss2pp``): each loss against a slow per-query Python loop written from the papers'
equations, the gradient against finite differences of that loop (for the LambdaLoss ones with the
pair weights held at the current scores), the exact Hessian against finite differences of the
gradient, degenerate queries, bad parameters, and training on both frameworks. The contract checks
of every registered objective (tests/objectives/test_contract_suite.py) cover them too."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import objectives
from boostplug.compare import get_method, method_names
from boostplug.data import make_ranking
from boostplug.testing import fd_gradient, fd_jacobian
from tests.objectives.test_pairwise_base import _data   # six queries: ties, one document, one label, ...

NAMES = ["ranknet", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp"]


def _brute_loss(name: str, scores, labels, group_ptr, weights, at=None, *, sigma=1.0, mu=5.0, k=None) -> float:
    """The papers' sums, one query and one pair at a time. The LambdaLoss weights come from the
    order of ``at`` (default ``scores``): 1-based positions by descending score, ties in input order,
    ``D(r) = log2(1 + r)``, gains ``(2^y - 1) / maxDCG`` over the whole query. ``k``: only the pairs
    with a document among the first ``k`` positions of that order (the ``truncation_level``)."""
    at = scores if at is None else at
    total = 0.0
    for q in range(len(group_ptr) - 1):
        a, b = int(group_ptr[q]), int(group_ptr[q + 1])
        order = sorted(range(a, b), key=lambda r: -at[r])          # stable: ties keep input order
        rank = {r: p + 1 for p, r in enumerate(order)}
        ideal = sorted((2.0 ** labels[r] - 1.0 for r in range(a, b)), reverse=True)
        max_dcg = sum(g / math.log2(1 + p) for p, g in enumerate(ideal, start=1))
        G = {r: (2.0 ** labels[r] - 1.0) / max_dcg if max_dcg > 0 else 0.0 for r in range(a, b)}
        for i in range(a, b):
            for j in range(a, b):
                if k is not None and min(rank[i], rank[j]) > k:
                    continue
                if name == "ndcg_loss1" and i != j:   # every ordered pair, weighted by G_i / D(r_i)
                    total += weights[q] * G[i] / math.log2(1 + rank[i]) * math.log(
                        1.0 + math.exp(-sigma * (scores[i] - scores[j])))
                if name == "ndcg_loss1" or labels[i] <= labels[j]:
                    continue
                gap = abs(rank[i] - rank[j])
                delta = abs(1 / math.log2(1 + gap) - 1 / math.log2(2 + gap)) * abs(G[i] - G[j])
                rho = abs(1 / math.log2(1 + rank[i]) - 1 / math.log2(1 + rank[j])) * abs(G[i] - G[j])
                weight = {"ranknet": 1.0, "ndcg_loss2": delta, "ndcg_loss2pp": rho + mu * delta}[name]
                total += weights[q] * weight * math.log(1.0 + math.exp(-sigma * (scores[i] - scores[j])))
    return total


def _params(name: str, sigma: float, mu: float, k: int | None = None) -> dict:
    out = {"sigma": sigma} if name != "ndcg_loss2pp" else {"sigma": sigma, "mu": mu}
    return out if k is None else {**out, "truncation_level": k}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed, sigma, mu", [(0, 1.0, 5.0), (1, 2.5, 0.3)])
def test_loss_against_the_papers_sums(name, seed, sigma, mu) -> None:
    s, y, gp, w = _data(seed)
    obj = objectives.get(name).prepare(y, gp, weights=w, **_params(name, sigma, mu))
    np.testing.assert_allclose(obj.loss(s), _brute_loss(name, s, y, gp, w, sigma=sigma, mu=mu), rtol=1e-12)
    other = s[::-1].copy()   # another order for the weights
    held = obj.loss(s, weights_at=other) if name != "ranknet" else obj.loss(s)
    want = _brute_loss(name, s, y, gp, w, other if name != "ranknet" else None, sigma=sigma, mu=mu)
    np.testing.assert_allclose(held, want, rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_and_hessian_against_finite_differences(name) -> None:
    """The gradient is the derivative of the paper's sum with the pair weights held at the current
    scores (for RankNet there are none to hold), the "exact" Hessian the diagonal of its Hessian; the
    scores have no ties, so that a step of 1e-4 does not reorder them."""
    rng = np.random.default_rng(7)
    gp = np.array([0, 6, 13, 14], dtype=np.int64)
    y = rng.integers(0, 4, 14).astype(np.float64)
    s = rng.normal(size=14)
    w = np.array([1.0, 2.0, 1.0])
    params = _params(name, 1.5, 2.0)
    obj = objectives.get(name).prepare(y, gp, weights=w, **params)
    g, h = obj.grad_hess(s)
    fd = fd_gradient(lambda x: _brute_loss(name, x, y, gp, w, s, **params), s)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
    held = (lambda x: obj.grad_hess(x, weights_at=s)[0]) if name != "ranknet" else (lambda x: obj.grad_hess(x)[0])
    J = fd_jacobian(held, s)
    live = h[:13]   # the one-document query's Hessian is the floor, not a curvature
    np.testing.assert_allclose(live, np.diag(J)[:13], rtol=1e-6, atol=1e-9)


def test_ndcg_loss2pp_is_lambdaranks_weight_plus_mu_times_ndcg_loss2s() -> None:
    """NDCG-Loss2++ at mu is NDCG-Loss2++ at 0 (LambdaRank's |Delta NDCG| weight) plus mu times
    NDCG-Loss2, term by term: the loss, the gradient and the Hessian."""
    s, y, gp, w = _data(3)
    pp = objectives.get("ndcg_loss2pp")
    two = objectives.get("ndcg_loss2").prepare(y, gp, weights=w, sigma=1.3, hessian_floor=False)
    zero = pp.prepare(y, gp, weights=w, sigma=1.3, mu=0.0, hessian_floor=False)
    mixed = pp.prepare(y, gp, weights=w, sigma=1.3, mu=4.0, hessian_floor=False)
    np.testing.assert_allclose(mixed.loss(s), zero.loss(s) + 4.0 * two.loss(s), rtol=1e-12)
    for a, b, c in zip(mixed.grad_hess(s), zero.grad_hess(s), two.grad_hess(s)):
        np.testing.assert_allclose(a, b + 4.0 * c, rtol=1e-12, atol=1e-15)
    assert np.abs(two.grad_hess(s)[0]).max() > 0 and np.abs(zero.grad_hess(s)[0]).max() > 0


def test_lambdaranks_weight_at_mu_zero() -> None:
    """With mu = 0 the weight is LambdaRank's |Delta NDCG| of swapping the two documents."""
    y = np.array([0.0, 2.0, 1.0, 3.0])
    s = np.array([0.4, 0.3, 0.2, 0.1])       # the order 0, 1, 2, 3: the worst is on top
    obj = objectives.get("ndcg_loss2pp").prepare(y, [0, 4], mu=0.0, hessian_floor=False)

    def ndcg(order):
        dcg = sum((2.0 ** y[r] - 1) / math.log2(2 + p) for p, r in enumerate(order))
        return dcg / sum((2.0 ** v - 1) / math.log2(2 + p) for p, v in enumerate(sorted(y, reverse=True)))

    # at equal scores each pair's logistic slope is -sigma / 2; document 0 (label 0) is the lower
    # one of each of its three pairs, so its gradient is half the sum of their weights
    g = obj.grad_hess(np.zeros(4), weights_at=s)[0]
    swaps = []
    for other in (1, 2, 3):
        order = [0, 1, 2, 3]
        order[0], order[other] = order[other], order[0]
        swaps.append(abs(ndcg(order) - ndcg([0, 1, 2, 3])))
    np.testing.assert_allclose(g[0], 0.5 * sum(swaps), rtol=1e-12)
    assert min(swaps) > 0


@pytest.mark.parametrize("name", NAMES)
def test_degenerate_queries(name) -> None:
    """One-document queries, queries of one label, a query of weight 0: gradient 0 and the Hessian
    the floor for documents without pairs; all-equal and tied scores: finite, and ties ranked in
    input order (the brute force's stable sort)."""
    s, y, gp, w = _data(4)
    obj = objectives.get(name).prepare(y, gp, weights=w)
    g, h = obj.grad_hess(s)
    assert np.isfinite(g).all() and np.isfinite(h).all()
    for q in (1, 2, 5) if name != "ndcg_loss1" else (1, 5):   # one document, one label, weight 0
        np.testing.assert_array_equal(g[gp[q]:gp[q + 1]], 0.0)
        np.testing.assert_array_equal(h[gp[q]:gp[q + 1]], objectives.NO_INFO_HESSIAN)
    if name == "ndcg_loss1":  # one label: each document is still pulled above the others by its G / D
        assert np.abs(g[gp[2]:gp[3]]).max() > 0
    flat = np.zeros_like(s)
    np.testing.assert_allclose(obj.loss(flat), _brute_loss(name, flat, y, gp, w), rtol=1e-12)
    assert np.abs(obj.grad_hess(flat)[0][gp[3]:gp[4]]).max() > 0
    one = objectives.get(name).prepare(np.array([1.0]), [0, 1])
    assert one.loss(np.array([3.0])) == 0.0 and one.grad_hess(np.array([3.0]))[0][0] == 0.0
    same = objectives.get(name).prepare(np.full(4, 0.0 if name == "ndcg_loss1" else 2.0), [0, 4])
    assert same.loss(np.arange(4.0)) == 0.0 and not same.grad_hess(np.arange(4.0))[0].any()


def test_ties_are_ranked_in_input_order() -> None:
    """Two tied documents take their positions in input order: swapping the rows of a tie moves the
    position-dependent weights, as the brute force's stable sort says."""
    y = np.array([1.0, 0.0, 2.0, 0.0])
    s = np.array([0.5, 0.5, 0.5, -1.0])
    for name in ("ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp"):
        obj = objectives.get(name).prepare(y, [0, 4])
        g = obj.grad_hess(s)[0]
        fd = fd_gradient(lambda x: _brute_loss(name, x, y, [0, 4], [1.0], s), s)
        np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name, bad, shown", [
    ("ranknet", {"sigma": 0.0}, "sigma.*got 0.0"), ("ranknet", {"sigma": -1.0}, "sigma.*got -1.0"),
    ("ranknet", {"sigma": float("nan")}, "sigma.*got nan"), ("ranknet", {"sigma": 1e200}, r"sigma.*got 1e\+200"),
    ("ndcg_loss1", {"sigma": 0.0}, "sigma.*got 0.0"), ("ndcg_loss1", {"mu": 5.0}, "unknown parameter.*mu"),
    ("ndcg_loss2", {"sigma": -0.5}, "sigma.*got -0.5"), ("ndcg_loss2", {"mu": 1.0}, "unknown parameter.*mu"),
    ("ndcg_loss2pp", {"mu": -1.0}, "mu.*got -1.0"), ("ndcg_loss2pp", {"mu": float("inf")}, "mu.*got inf"),
    ("ndcg_loss2pp", {"sigma": 0.0}, "sigma.*got 0.0"), ("ndcg_loss2pp", {"mu": "5"}, "mu.*'5'"),
])
def test_bad_parameters_are_named(name, bad, shown) -> None:
    from boostplug import lightgbm as bpl

    with pytest.raises((ValueError, TypeError), match=shown) as e:
        objectives.get(name).prepare(np.array([1.0, 0.0]), [0, 2], **bad)
    assert name in str(e.value)
    with pytest.raises((ValueError, TypeError), match=shown):
        bpl.objective(name, **bad)


def test_compare_lists_them_with_their_parameters() -> None:
    names = method_names()
    assert {*NAMES, *(f"xgb-{n}" for n in NAMES)} <= set(names)
    m = get_method("ndcg_loss2pp")
    assert (m.framework, m.loss) == ("lightgbm", "boostplug:ndcg_loss2pp")
    assert m.parameters()["mu"] == 5.0 and m.parameters()["sigma"] == 1.0
    assert get_method("xgb-ranknet:sigma=2").loss_params == {"sigma": 2}


# ---- the frameworks ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, docs_per_query=(4, 9), n_features=5, n_informative=3, seed=2)


LGB = {"verbose": -1, "num_threads": 1, "deterministic": True, "min_data_in_leaf": 3, "learning_rate": 0.3}


@pytest.mark.parametrize("name", NAMES)
def test_lightgbm_train_cv_and_ranker(name, data) -> None:
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    obj = objectives.get(name).prepare(data.y, data.group_ptr)
    start = obj.loss(np.zeros(data.n_docs))
    booster = lgb.train({**LGB, "objective": bpl.objective(name)},
                        bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 8)
    assert obj.loss(booster.predict(data.X, raw_score=True)) < 0.8 * start
    res = bpl.cv({**LGB, "objective": bpl.objective(name), "metric": "None"},
                 bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 3, nfold=3, feval=bpl.metric("ndcg@5"))
    assert len(res["valid ndcg@5-mean"]) == 3 and all(0.0 < v <= 1.0 for v in res["valid ndcg@5-mean"])
    ranker = bpl.LGBMRanker(objective=name, sigma=2.0, n_estimators=6, learning_rate=0.3, min_child_samples=3,
                            verbose=-1, n_jobs=1).fit(data.X, data.y, group=np.diff(data.group_ptr))
    assert ranker.get_params()["sigma"] == 2.0 and obj.loss(ranker.predict(data.X)) < start


@pytest.mark.parametrize("name", NAMES)
def test_xgboost_train_and_ranker(name, data) -> None:
    import xgboost as xgb

    from boostplug import xgboost as bpx

    obj = objectives.get(name).prepare(data.y, data.group_ptr)
    start = obj.loss(np.zeros(data.n_docs))
    booster = xgb.train(bpx.params(max_depth=3, eta=0.3, nthread=1),
                        bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 6, obj=bpx.objective(name))
    assert obj.loss(booster.predict(xgb.DMatrix(data.X), output_margin=True)) < 0.8 * start
    ranker = bpx.XGBRanker(objective=name, n_estimators=6, max_depth=3, n_jobs=1).fit(data.X, data.y, qid=data.qid)
    assert obj.loss(ranker.predict(data.X)) < start


# ---- the position-gap table ---------------------------------------------------------------------------------
def test_the_position_gap_table_is_the_formula_to_the_bit() -> None:
    """``position_gap_discount`` looks ``delta_ij``'s discount up in a table built once: for every gap
    up to 2,000 (and beyond the table, where it computes it) the same float64 as the formula's two
    logarithms compiled by numba, as the weights computed it per pair."""
    import numba as nb

    from boostplug.objectives.lambdaloss import GAP_DISCOUNTS, position_gap_discount

    @nb.njit
    def formula(rank_i, rank_j):
        gap = abs(rank_i - rank_j)
        return 0.0 if gap == 0 else abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap))

    gaps = [*range(2001), len(GAP_DISCOUNTS) - 1, len(GAP_DISCOUNTS), 10_000]
    got = np.array([position_gap_discount(7, 7 + g) for g in gaps] + [position_gap_discount(7 + g, 7) for g in gaps])
    want = np.array([formula(7, 7 + g) for g in gaps] + [formula(7 + g, 7) for g in gaps])
    np.testing.assert_array_equal(got, want)
    assert got[0] == 0.0 and (got[1:len(gaps)] > 0).all()


@pytest.mark.parametrize("name", ["ndcg_loss2", "ndcg_loss2pp"])
def test_the_table_leaves_the_gradients_as_the_per_pair_logarithms_gave_them(name) -> None:
    """The losses' gradients and Hessians with the table equal those of the same loss whose weight
    takes the two logarithms per pair (the former definition), on random queries up to 300 long."""
    import numba as nb

    cls = objectives.get(name).loss_class

    @nb.njit
    def delta(p):
        gap = abs(p.rank_i - p.rank_j)
        return abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap)) if gap else 0.0

    class PerPair(cls):
        name = f"{cls.name}_per_pair"
        if name == "ndcg_loss2_per_pair":
            @staticmethod
            def pair_weight(p, sigma):
                return abs(p.gain_i - p.gain_j) * p.inv_max_dcg * delta(p)
        else:
            @staticmethod
            def pair_weight(p, sigma, mu):
                return abs(p.gain_i - p.gain_j) * p.inv_max_dcg * (abs(p.discount_i - p.discount_j) + mu * delta(p))

    rng = np.random.default_rng(11)
    sizes = np.array([300, 2, 57, 1, 180])
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 5, gp[-1]).astype(np.float64)
    s = rng.normal(size=gp[-1])
    params = _params(name, 1.3, 2.5)
    new, old = cls(y, gp, **params), PerPair(y, gp, **params)
    for a, b in zip(new.grad_hess(s), old.grad_hess(s)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(new.loss(s), old.loss(s), rtol=1e-12)


# ---- truncation_level ---------------------------------------------------------------------------------------
def _long_queries(seed: int, tie: bool = True):
    """Queries longer than the truncation levels tried, several relevant documents below them."""
    rng = np.random.default_rng(seed)
    gp = np.array([0, 11, 17, 18, 30, 32], dtype=np.int64)
    y = rng.integers(0, 4, gp[-1]).astype(np.float64)
    s = rng.normal(size=gp[-1])
    if tie:
        s[3] = s[5]
    return s, y, gp, np.array([1.0, 2.0, 1.0, 0.5, 1.5])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [1, 3, 7])
def test_truncated_loss_and_gradient_are_the_sums_over_the_kept_pairs(name, k) -> None:
    """With ``truncation_level = k`` the loss is the paper's sum over exactly the pairs with a document
    among the first ``k`` positions, each weighted as in the paper (gains over the whole query's
    ideal DCG, not the ideal DCG at ``k``); its gradient the derivative of that sum with the weights
    (and so the kept pairs: RankNet's too) held, the exact Hessian the diagonal of the held
    gradient's Jacobian."""
    s, y, gp, w = _long_queries(k)
    params = _params(name, 1.4, 2.0, k)
    obj = objectives.get(name).prepare(y, gp, weights=w, hessian_floor=False, **params)
    brute = {k_: v for k_, v in params.items() if k_ in ("sigma", "mu")}
    want = _brute_loss(name, s, y, gp, w, **brute, k=k)
    np.testing.assert_allclose(obj.loss(s), want, rtol=1e-12)
    assert want < _brute_loss(name, s, y, gp, w, **brute)          # some pairs were left out
    other = s[::-1].copy()
    np.testing.assert_allclose(obj.loss(s, weights_at=other),
                               _brute_loss(name, s, y, gp, w, other, **brute, k=k), rtol=1e-12)
    g, h = obj.grad_hess(s)
    fd = fd_gradient(lambda x: _brute_loss(name, x, y, gp, w, s, **brute, k=k), s)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
    J = fd_jacobian(lambda x: obj.grad_hess(x, weights_at=s)[0], s)
    np.testing.assert_allclose(h, np.diag(J), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_a_truncation_at_the_longest_query_is_no_truncation(name) -> None:
    s, y, gp, w = _long_queries(5)
    full = objectives.get(name).prepare(y, gp, weights=w)
    for k in (12, 1000):
        cut = objectives.get(name).prepare(y, gp, weights=w, truncation_level=k)
        np.testing.assert_allclose(cut.loss(s), full.loss(s), rtol=1e-12)
        for a, b in zip(cut.grad_hess(s), full.grad_hess(s)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0.0)
    assert objectives.get(name).loss_class.defaults()["truncation_level"] is None


def test_ranknet_truncated_with_the_bound_hessian() -> None:
    """RankNet's "bound" mode with a truncation: twice the exact Hessian, the same gradient."""
    s, y, gp, w = _long_queries(2, tie=False)
    exact = objectives.get("ranknet").prepare(y, gp, weights=w, truncation_level=3, hessian_floor=False)
    bound = objectives.get("ranknet").prepare(y, gp, weights=w, truncation_level=3, hessian_floor=False,
                                              hessian="bound")
    (g, h), (g2, h2) = exact.grad_hess(s), bound.grad_hess(s)
    np.testing.assert_array_equal(g, g2)
    np.testing.assert_allclose(h2, 2.0 * h, rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, error", [(0, ValueError), (-2, ValueError), (2.5, TypeError), (3.0, TypeError),
                                        (True, TypeError), ("3", TypeError)])
def test_bad_truncation_levels_are_named(name, bad, error) -> None:
    with pytest.raises(error, match=f"{name}: truncation_level must be an integer >= 1, got {bad!r}"):
        objectives.get(name).prepare(np.array([1.0, 0.0]), [0, 2], truncation_level=bad)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, shown", [(np.float64(2.5), "2.5"), (np.float32(3.0), "3.0"), (np.bool_(True), "True"),
                                        (float("nan"), "nan"), (1e300, r"1e\+300"), ([3], r"\[3\]")])
def test_a_truncation_level_of_the_wrong_type_is_named_on_every_route(name, bad, shown) -> None:
    """A value that is no integer (a numpy float or bool too) is a ``TypeError`` naming the objective,
    the parameter and the value, as every ``int`` parameter's (the contract's convention: a wrong
    type is a TypeError, a wrong integer a ValueError), through prepare, the adapters, the rankers
    and compare's method specifications alike."""
    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx
    from boostplug.compare import get_method

    message = f"{name}: truncation_level must be an integer >= 1, got {shown}$"
    routes = [lambda: objectives.get(name).prepare(np.array([1.0, 0.0]), [0, 2], truncation_level=bad),
              lambda: bpl.objective(name, truncation_level=bad), lambda: bpx.objective(name, truncation_level=bad),
              lambda: bpl.LGBMRanker(objective=name, truncation_level=bad, verbose=-1).fit(
                  np.zeros((2, 1)), np.array([1.0, 0.0]), group=[2])]
    if isinstance(bad, (float, np.floating)):   # as written in a method specification
        routes.append(lambda: get_method(f"{name}:truncation_level={float(bad)!r}").parameters())
    for route in routes:
        with pytest.raises(TypeError, match=message):
            route()


@pytest.mark.parametrize("name", NAMES)
def test_the_contract_checks_pass_with_a_truncation(name) -> None:
    from boostplug.testing import check_objective

    check_objective(name, params={"truncation_level": 2})


@pytest.mark.parametrize("name", ["ranknet", "ndcg_loss1"])
def test_training_with_a_truncation_level(name, data) -> None:
    """The parameter reaches the objective through both frameworks' adapters and rankers."""
    import lightgbm as lgb

    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx

    obj = objectives.get(name).prepare(data.y, data.group_ptr, truncation_level=3)
    start = obj.loss(np.zeros(data.n_docs))
    booster = lgb.train({**LGB, "objective": bpl.objective(name, truncation_level=3)},
                        bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 8)
    assert obj.loss(booster.predict(data.X, raw_score=True)) < 0.8 * start
    ranker = bpx.XGBRanker(objective=name, truncation_level=3, n_estimators=6, max_depth=3, n_jobs=1)
    ranker.fit(data.X, data.y, qid=data.qid)
    assert ranker.get_params()["truncation_level"] == 3 and obj.loss(ranker.predict(data.X)) < start
    with pytest.raises(ValueError, match="truncation_level.*got 0"):
        bpl.objective(name, truncation_level=0)


# ---- a truncated RankNet: its pairs follow the order --------------------------------------------------------
def test_ranknet_declares_the_lambda_gradient_and_holds_its_pairs_only_when_truncated() -> None:
    """RankNet is one class (no subclass chosen by its settings): its modes declare the ``"lambda"``
    gradient, which without a truncation level is the loss's own (its pairs do not follow the order:
    held or not, the same values)."""
    import pickle

    from boostplug.objectives.ranknet import RankNet
    from boostplug.testing._cases import cases

    s, y, gp, w = _long_queries(0)
    t = np.random.default_rng(1).normal(size=s.shape[0])
    entry = objectives.get("ranknet")
    cut, full = entry.prepare(y, gp, weights=w, truncation_level=3), entry.prepare(y, gp, weights=w)
    assert type(cut) is RankNet and type(full) is RankNet
    assert entry.gradient_kinds == {"exact": "lambda", "bound": "lambda"}
    np.testing.assert_array_equal(full.grad_hess(s, weights_at=t)[0], full.grad_hess(s)[0])
    assert full.loss(s, weights_at=t) == full.loss(s)
    assert cut.loss(s, weights_at=t) != cut.loss(s)
    np.testing.assert_allclose(full.grad_hess(s)[0], fd_gradient(full.loss, s), rtol=1e-7, atol=1e-9)
    assert objectives.resolve(cut) is entry and objectives.resolve(full) is entry
    again = pickle.loads(pickle.dumps(cut))
    assert type(again) is RankNet and again.loss(s) == cut.loss(s)
    assert {c.gradient for c in cases("ranknet", params={"truncation_level": 2})} == {"lambda"}


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("hessian", ["exact", "bound"])
def test_truncated_ranknet_holds_its_pairs_at_weights_at(k, hessian) -> None:
    """``loss(s, weights_at=t)`` is the sum over the pairs the order of ``t`` keeps (the brute force
    with ``at=t``), ``grad_hess(s, weights_at=t)`` its gradient (five-point differences of that sum
    and of the held loss itself) and Hessian (the diagonal of the held gradient's Jacobian; twice
    its absolute value in the bound mode), though ``s``'s own order keeps other pairs and has a tie."""
    s, y, gp, w = _long_queries(10 + k)
    t = np.random.default_rng(k).normal(size=s.shape[0])
    obj = objectives.get("ranknet").prepare(y, gp, weights=w, sigma=1.3, truncation_level=k, hessian=hessian,
                                           hessian_floor=False)
    want = _brute_loss("ranknet", s, y, gp, w, t, sigma=1.3, k=k)
    np.testing.assert_allclose(obj.loss(s, weights_at=t), want, rtol=1e-12)
    assert abs(want - _brute_loss("ranknet", s, y, gp, w, sigma=1.3, k=k)) > 1e-3   # t keeps other pairs
    g, h = obj.grad_hess(s, weights_at=t)
    np.testing.assert_allclose(g, fd_gradient(lambda x: _brute_loss("ranknet", x, y, gp, w, t, sigma=1.3, k=k), s),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(g, fd_gradient(lambda x: obj.loss(x, weights_at=t), s), rtol=1e-7, atol=1e-9)
    J = np.diag(fd_jacobian(lambda x: obj.grad_hess(x, weights_at=t)[0], s))
    np.testing.assert_allclose(h, J if hessian == "exact" else 2.0 * np.abs(J), rtol=1e-6, atol=1e-9)


def test_the_truncated_ranknet_trains_from_an_instance_as_from_its_name(data) -> None:
    """lgb.train with a truncated RankNet given as an instance (its settings carried, its entry the
    registry's) grows the same trees as with the name and the setting."""
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    obj = objectives.get("ranknet").prepare(data.y, data.group_ptr, truncation_level=3, sigma=1.5)
    models = [lgb.train({**LGB, "objective": bpl.objective(o, **p)}, bpl.dataset(data.X, data.y,
                        group_ptr=data.group_ptr), 6).model_to_string()
              for o, p in ((obj, {}), ("ranknet", {"truncation_level": 3, "sigma": 1.5}))]
    assert models[0] == models[1]
    start = obj.loss(np.zeros(data.n_docs))
    assert obj.loss(lgb.Booster(model_str=models[0]).predict(data.X, raw_score=True)) < 0.8 * start


def test_a_subclass_of_ranknet_takes_a_truncation_level_as_ranknet_does() -> None:
    """One pair base: a subclass of RankNet follows the order with a truncation level as RankNet
    does, with no class of its own to declare for it."""
    from boostplug.objectives.ranknet import RankNet

    class Halved(RankNet):
        name = "ranknet_halved"

    s, y, gp, w = _long_queries(3)
    for level in (None, 2):
        mine, theirs = Halved(y, gp, truncation_level=level), RankNet(y, gp, truncation_level=level)
        assert type(mine) is Halved and mine.loss(s) == theirs.loss(s)
        np.testing.assert_array_equal(mine.grad_hess(s)[0], theirs.grad_hess(s)[0])


def test_ndcg_loss2pps_lambdarank_term_is_the_cores_delta_ndcg_to_the_bit() -> None:
    """NDCG-Loss2++'s rho_ij is ``_core.dcg``'s |Delta NDCG| of the swap (the one every LambdaRank weight takes), not a
    product of its own: at mu = 0 its gradients and Hessians equal, bit for bit, those of the same loss weighted by
    ``metric_weights.delta_ndcg`` (on main, |G_i - G_j| / Z |D_i - D_j| multiplied in another order, they differ)."""
    from boostplug.objectives import metric_weights

    class CoreWeight(objectives.get("ndcg_loss2pp").loss_class):
        name = "ndcg_loss2pp_core_weight"

        @staticmethod
        def pair_weight(p, sigma, mu):
            return metric_weights.delta_ndcg(p)

    rng = np.random.default_rng(5)
    gp = np.array([0, 40, 97, 180])
    y, s = rng.integers(0, 5, gp[-1]).astype(np.float64), rng.normal(size=gp[-1])
    for a, b in zip(objectives.get("ndcg_loss2pp").prepare(y, gp, mu=0.0).grad_hess(s), CoreWeight(y, gp, mu=0.0).grad_hess(s)):
        np.testing.assert_array_equal(a, b)
