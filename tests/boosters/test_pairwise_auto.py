"""``pairwise="auto"``: one rule (:mod:`boostplug.boosters._pairwise_choice`) picks the pair list or
the pair-free sums by their estimated cost; a fit under ``"auto"`` is the fit of the path it picks."""

from __future__ import annotations

import numpy as np
import pytest
from tests.boosters._helpers import assert_identical_fit, graded_data, letor_like

import boostplug.pairs as pairs_mod
from boostplug.boosters import MPBoost, RankBoost
from boostplug.boosters._fit_data import FitData
from boostplug.boosters import _pairwise_choice
from boostplug.boosters._pairwise_choice import QUICK_FIT_NS, _rbplus_groups, choose_pairwise, round_costs


def fit_data(X, y, qid, pairs=None) -> FitData:
    return FitData.prepare(X, y, qid=qid, group=None, pairs=pairs, sample_weight=None, random_state=0)


def one_query(n: int, seed: int = 0, n_features: int = 6):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, size=n).astype(np.float64)
    X = rng.normal(size=(n, n_features))
    X[:, 0] += y
    return X, y, np.zeros(n, dtype=np.int64)


@pytest.mark.parametrize("make", [lambda **k: RankBoost(variant="rb-c", **k), lambda **k: RankBoost(variant="rb-d", **k),
                                  lambda **k: RankBoost(variant="rankboost+", **k),
                                  lambda **k: MPBoost(ddf="logdd", **k)], ids=["rb-c", "rb-d", "rankboost+", "mpboost"])
@pytest.mark.parametrize("data", ["letor_like", "one_query"])
def test_auto_is_the_path_it_chooses_bit_for_bit(make, data: str) -> None:
    X, y, qid = letor_like(np.random.default_rng(1), n_queries=20) if data == "letor_like" else one_query(120)
    auto = make(n_rounds=30, random_state=0).fit(X, y, qid=qid)
    path = make(n_rounds=30)._choose_pairwise(fit_data(X, y, qid))
    chosen = make(n_rounds=30, random_state=0, pairwise=path).fit(X, y, qid=qid)
    assert_identical_fit(auto, chosen, X)


def test_explicit_pairs_take_the_pair_list_and_a_list_over_the_limit_the_levels(monkeypatch) -> None:
    X, y, qid = graded_data(np.random.default_rng(2))
    d = fit_data(X, y, qid)
    for booster in ("rb", "rankboost+", "mpboost"):
        assert choose_pairwise(booster, fit_data(X, y, qid, pairs=[[2, 3]]), 100, 112) == "pairs"
    monkeypatch.setattr(pairs_mod, "PAIR_MEMORY_LIMIT", 100)     # fewer bytes than the pairs need
    for booster in ("rb", "rankboost+", "mpboost"):
        assert choose_pairwise(booster, d, 100, 112) == "levels"


def test_rankboost_plus_takes_the_levels_only_for_queries_far_larger_than_its_groups() -> None:
    """RankBoost+'s groups number at most min(n_q, 2^t): few rounds on a large query keep them far
    below the documents (the levels), many rounds on small queries reach one group per document
    (the pair list, a pass per feature over P pairs instead of n_q per document)."""
    big = fit_data(*one_query(4000, n_features=46))
    assert choose_pairwise("rankboost+", big, 5, 112) == "levels"
    assert choose_pairwise("rankboost+", big, 300, 112) == "pairs"
    small = fit_data(*one_query(300, n_features=46))
    assert choose_pairwise("rankboost+", small, 100, 112) == "pairs"


def queries(n_queries: int, size: int, seed: int = 0):
    """``n_queries`` queries of ``size`` documents, grades 0-2, 45 features."""
    rng = np.random.default_rng(seed)
    n = n_queries * size
    return rng.normal(size=(n, 45)), rng.integers(0, 3, size=n).astype(np.float64), np.repeat(np.arange(n_queries), size)


def test_rb_takes_the_levels_on_large_queries_and_the_pairs_on_small_ones() -> None:
    """Rb-d/Rb-c's levels cost per document (level sums, a sort for R1/R2), the pair list per pair:
    the levels win where queries are large (OHSUMED: 146 documents a query), the pair list where
    they are small (MQ2008: 20)."""
    for booster in ("rb", "rb_e2"):          # without and with the E2 record
        assert choose_pairwise(booster, fit_data(*queries(4, 400)), 300, 112) == "levels"
        assert choose_pairwise(booster, fit_data(*queries(200, 10)), 300, 112) == "pairs"


def test_the_e2_record_adds_to_both_paths() -> None:
    shape = {"sizes": np.array([146] * 63), "n_pairs": 367_663, "n_levels": 3, "n_features": 45, "n_rounds": 300}
    light, full = round_costs("rb", **shape), round_costs("rb_e2", **shape)
    assert full["pairs"] > light["pairs"] and full["levels"] > light["levels"]


def test_mpboost_takes_the_levels_unless_queries_are_tiny() -> None:
    for shape in ((4, 400), (100, 40)):
        assert choose_pairwise("mpboost", fit_data(*queries(*shape)), 300, 96) == "levels"
    assert choose_pairwise("mpboost", fit_data(*queries(400, 3)), 300, 96) == "pairs"


@pytest.mark.parametrize("seed", range(5))
def test_group_count_bound_averages(seed: int) -> None:
    """The closed form past saturation equals summing every round."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 3000, size=int(rng.integers(1, 6)))
    for T in (1, 3, 11, 12, 40, 300):
        g = [np.minimum(sizes, 2.0 ** t) for t in range(1, T + 1)]
        visits = sum(float(sizes @ gt) for gt in g) / T
        blocks = sum(float(gt @ gt) * t for t, gt in enumerate(g, 1)) / T
        got = _rbplus_groups(sizes, T)
        assert np.allclose(got, (visits, blocks), rtol=1e-12)


def test_round_costs_names_the_boosters() -> None:
    with pytest.raises(ValueError, match="'adarank'"):
        round_costs("adarank", sizes=np.array([3]), n_pairs=2, n_levels=2, n_features=1, n_rounds=1)


def test_a_quick_fit_takes_the_pair_list_whatever_the_levels_cost(monkeypatch) -> None:
    """Three rounds on small queries: the levels are estimated cheaper per round, but the whole fit
    on the pair list is far under QUICK_FIT_NS, so "auto" takes the pair list (fewer kernels to compile)."""
    X, y, qid = queries(30, 12)
    d = fit_data(X, y, qid)
    shape = dict(sizes=np.diff(d.group_ptr), n_pairs=int(pairs_mod.count_critical_pairs(y, d.group_ptr).sum()),
                 n_levels=3, n_features=45, n_rounds=3)
    cost = round_costs("rankboost+", **shape)
    assert cost["levels"] < cost["pairs"] and cost["pairs"] * 3 < QUICK_FIT_NS
    assert choose_pairwise("rankboost+", d, 3, 112) == "pairs"
    monkeypatch.setattr(_pairwise_choice, "QUICK_FIT_NS", 0.0)    # the same fit estimated slow: the cheaper path
    assert choose_pairwise("rankboost+", d, 3, 112) == "levels"
