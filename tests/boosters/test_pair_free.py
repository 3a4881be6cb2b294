"""Pair-free training (``pairwise="levels"``) equals the pair-list path (``pairwise="pairs"``).

Rb-d and Rb-c (and stump MPBoost, a later section) on label-derived pairs keep per-document sums
per label level instead of the critical pairs (:mod:`boostplug.boosters._level_sums`); RankBoost+
keeps pairs of signature groups (:mod:`boostplug.boosters._group_pairs`, last section). Both paths
must choose the same stumps (feature, threshold, orientation) in the same rounds, stop for the same reason, and
give the same weights and history values to ``1e-9`` (relative; absolute ``1e-12`` near 0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.boosters._helpers import assert_same_history, dependent_data, graded_data, letor_like

import boostplug.boosters._fit_data as fit_data
import boostplug.pairs as pairs_mod
from boostplug._core import dispatch
from boostplug.boosters import MPBoost, RankBoost

RTOL = 1e-9
ATOL = 1e-12


def assert_same_fit(a: RankBoost, b: RankBoost) -> None:
    assert a.stop_reason_ == b.stop_reason_
    assert len(a.rankers_) == len(b.rankers_) == len(a.history_) == len(b.history_)
    assert a.rankers_ == b.rankers_                      # feature, threshold, orientation
    ua, ub = getattr(a, "undefined_round_", None), getattr(b, "undefined_round_", None)   # RankBoost only
    assert ua == ub or ua["ranker"] == ub["ranker"]
    for wa, wb in zip(a.weights_, b.weights_):
        assert math.isclose(wa, wb, rel_tol=RTOL, abs_tol=ATOL)
    assert_same_history(a, b, lambda key, value: isinstance(value, float), rel_tol=RTOL, abs_tol=ATOL)


def fit_both(X, y, qid, sample_weight=None, booster=RankBoost, **params):
    """``booster`` fitted on the pair list and pair-free, in that order (RankBoost with the ``E2``
    record, which the two paths keep in different ways)."""
    kw = {} if sample_weight is None else {"sample_weight": sample_weight}
    if booster is RankBoost:
        params.setdefault("record_e2", True)
    a = booster(pairwise="pairs", **params).fit(X, y, qid=qid, **kw)
    b = booster(pairwise="levels", **params).fit(X, y, qid=qid, **kw)
    return a, b


def mq2008_part(mq2008_dir):
    """``(X, y, qid)`` of MQ2008 fold 1's first 61 queries."""
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    keep = qid <= np.unique(qid)[60]
    return X.toarray()[keep], y[keep], qid[keep]


def refuse_pair_listing(monkeypatch) -> None:
    """Make any listing of critical pairs fail the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("critical_pairs called")

    monkeypatch.setattr(fit_data, "critical_pairs", refuse)
    monkeypatch.setattr(pairs_mod, "critical_pairs", refuse)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("variant", ["rb-c", "rb-d"])
@pytest.mark.parametrize("thresholds, complements", [("all", None), ("all", False), ("ranklib", None),
                                                     ("sample", None)])
def test_levels_equal_pairs_random(seed: int, variant: str, thresholds: str, complements) -> None:
    X, y, qid = graded_data(np.random.default_rng(seed))
    a, b = fit_both(X, y, qid, variant=variant, n_rounds=25, thresholds=thresholds, complements=complements,
                    max_thresholds=8, random_state=seed)
    assert len(a.rankers_) >= 1
    assert_same_fit(a, b)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("variant", ["rb-c", "rb-d"])
def test_levels_equal_pairs_query_weights(seed: int, variant: str) -> None:
    rng = np.random.default_rng(100 + seed)
    X, y, qid = graded_data(rng, n_queries=7)
    qw = rng.choice([0.0, 0.5, 1.0, 3.0], size=7)
    qw[2] = 2.5                                          # not all equal, not all zero
    a, b = fit_both(X, y, qid, sample_weight=qw, variant=variant, n_rounds=20, thresholds="all")
    assert_same_fit(a, b)


@pytest.mark.parametrize("seed", range(3))
def test_levels_equal_pairs_letor_like(seed: int) -> None:
    X, y, qid = letor_like(np.random.default_rng(200 + seed))
    for variant in ("rb-c", "rb-d"):
        a, b = fit_both(X, y, qid, variant=variant, n_rounds=40, random_state=seed)
        assert_same_fit(a, b)
    a, b = fit_both(X, y, qid, variant="rb-c", thresholds="ranklib", n_rounds=40)
    assert_same_fit(a, b)


def test_levels_equal_pairs_mq2008_part(mq2008_dir) -> None:
    a, b = fit_both(*mq2008_part(mq2008_dir), variant="rb-c", n_rounds=30, random_state=0)
    assert_same_fit(a, b)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", ["rb-c", "rb-d"])
def test_levels_equal_pairs_dependent_steps(seed: int, variant: str) -> None:
    X, y, qid = dependent_data(np.random.default_rng(seed))
    qw = np.random.default_rng(seed).choice([0.5, 1.0, 2.0], size=6)
    for sw in (None, qw):
        a, b = fit_both(X, y, qid, sample_weight=sw, variant=variant, n_rounds=40, thresholds="all")
        assert sw is not None or any(h["step"] == "dependent" for h in a.history_)
        assert_same_fit(a, b)


def test_levels_equal_pairs_perfect_first_ranker() -> None:
    """Round 1's stump orders every pair: kept with weight 1, the same record on both paths."""
    X = np.array([[0.0], [1.0], [2.0], [0.5], [3.0]])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    a, b = fit_both(X, y, np.array([0, 0, 0, 1, 1]), variant="rb-c", thresholds="all")
    assert a.history_[0]["alpha"] == math.inf
    assert_same_fit(a, b)


def test_auto_trains_on_the_path_the_cost_rule_names(monkeypatch) -> None:
    """pairwise='auto' on labels: the levels (no pair listed) or the pair list, as
    _pairwise_choice.choose_pairwise says (tests/boosters/test_pairwise_auto.py tests the rule)."""
    import boostplug.boosters.rankboost as rankboost

    X, y, qid = graded_data(np.random.default_rng(7))
    refuse_pair_listing(monkeypatch)
    monkeypatch.setattr(rankboost, "choose_pairwise", lambda *args: "levels")
    for variant in ("rb-c", "rb-d", "rankboost+"):
        RankBoost(variant=variant, n_rounds=5).fit(X, y, qid=qid)
    RankBoost(variant="rankboost+", efficient=False, n_rounds=5).fit(X, y, qid=qid)
    monkeypatch.setattr(rankboost, "choose_pairwise", lambda *args: "pairs")
    for variant in ("rb-c", "rankboost+"):
        with pytest.raises(AssertionError, match="critical_pairs called"):
            RankBoost(variant=variant, n_rounds=2).fit(X, y, qid=qid)
        with pytest.raises(AssertionError, match="critical_pairs called"):
            RankBoost(variant=variant, n_rounds=2, pairwise="pairs").fit(X, y, qid=qid)


def test_pairwise_parameter_errors() -> None:
    X, y, qid = graded_data(np.random.default_rng(8))
    with pytest.raises(ValueError, match="explicit pairs"):
        RankBoost(variant="rankboost+", pairwise="levels", n_rounds=2).fit(X, y, qid=qid, pairs=[[1, 2]])
    with pytest.raises(ValueError, match="explicit pairs"):
        RankBoost(pairwise="levels", n_rounds=2).fit(X, y, qid=qid, pairs=[[1, 2]])
    with pytest.raises(ValueError, match="pairwise"):
        RankBoost(pairwise="nope", n_rounds=2).fit(X, y, qid=qid)
    # explicit pairs under "auto" train on the pair list
    m = RankBoost(n_rounds=2, thresholds="all").fit(X, y, qid=qid, pairs=[[2, 3], [4, 2]])
    assert len(m.rankers_) >= 1


# ---- stump MPBoost ---------------------------------------------------------------------------

DDFS = [("binary", {}), ("ldd", {"alpha": 0.2}), ("logdd", {"lam": 3.0}), ("logitdd", {"beta": 0.5})]


def fit_both_mp(X, y, qid, sample_weight=None, **params):
    return fit_both(X, y, qid, sample_weight, booster=MPBoost, **params)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ddf, ddf_params", DDFS, ids=[d for d, _ in DDFS])
@pytest.mark.parametrize("thresholds", ["all", "sample", "ranklib"])
def test_mpboost_levels_equal_pairs_random(seed: int, ddf: str, ddf_params: dict, thresholds: str) -> None:
    # graded_data: grades 0-4, tied values, NaN, a one-document and a one-grade query
    X, y, qid = graded_data(np.random.default_rng(300 + seed))
    a, b = fit_both_mp(X, y, qid, ddf=ddf, **ddf_params, n_rounds=40, thresholds=thresholds, max_thresholds=8,
                       random_state=seed)
    assert len(a.rankers_) >= 1
    assert_same_fit(a, b)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ddf, ddf_params", DDFS, ids=[d for d, _ in DDFS])
def test_mpboost_levels_equal_pairs_query_weights(seed: int, ddf: str, ddf_params: dict) -> None:
    rng = np.random.default_rng(400 + seed)
    X, y, qid = graded_data(rng, n_queries=7)
    qw = rng.choice([0.0, 0.5, 1.0, 3.0], size=7)
    qw[2] = 2.5                                          # not all equal, not all zero
    a, b = fit_both_mp(X, y, qid, sample_weight=qw, ddf=ddf, **ddf_params, n_rounds=60, thresholds="all")
    assert_same_fit(a, b)


@pytest.mark.parametrize("ddf, ddf_params", DDFS, ids=[d for d, _ in DDFS])
def test_mpboost_levels_equal_pairs_many_rounds(ddf: str, ddf_params: dict) -> None:
    """300 rounds on LETOR-shaped data: the weights spread over many orders of magnitude."""
    X, y, qid = letor_like(np.random.default_rng(500))
    a, b = fit_both_mp(X, y, qid, ddf=ddf, **ddf_params, n_rounds=300, random_state=0)
    assert_same_fit(a, b)


def test_mpboost_levels_equal_pairs_one_large_query() -> None:
    """One query of 3,000 documents (3.6 million pairs), grades 0-4."""
    rng = np.random.default_rng(11)
    n = 3000
    y = rng.integers(0, 5, size=n).astype(np.float64)
    X = np.column_stack([y + rng.normal(scale=2.0, size=n), np.round(rng.normal(size=n), 1)])
    a, b = fit_both_mp(X, y, np.zeros(n), ddf="ldd", n_rounds=8, random_state=0)
    assert_same_fit(a, b)


def test_mpboost_levels_equal_pairs_mq2008_part(mq2008_dir) -> None:
    a, b = fit_both_mp(*mq2008_part(mq2008_dir), ddf="logdd", n_rounds=30, random_state=0)
    assert_same_fit(a, b)


def test_mpboost_levels_overflow_moves_auto_to_the_pair_list() -> None:
    """ldd with alpha = 6.6 (d up to 26.4): d (F_i - F_j) passes 700 within the query and the level factors
    overflow. pairwise="levels" says so; "auto" continues on the renormalised pair list from that
    round and trains every round. (auto starts on the levels here: the two paths agree to rounding,
    not bit for bit, so a near-tie between stumps can fall the other way late in the fit.)"""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 40).astype(np.float64)
    X = np.column_stack([y + 0.3 * rng.normal(size=40), rng.normal(size=40)])
    with pytest.raises(FloatingPointError, match="pairwise='pairs'"):
        MPBoost(ddf="ldd", alpha=6.6, n_rounds=50, thresholds="all", pairwise="levels").fit(X, y, group=[40])
    for weights in (None, np.array([3.0])):
        auto = MPBoost(ddf="ldd", alpha=6.6, n_rounds=50, thresholds="all").fit(
            X, y, group=[40], sample_weight=None if weights is None else np.full(40, 3.0))
        pairs = MPBoost(ddf="ldd", alpha=6.6, n_rounds=50, thresholds="all", pairwise="pairs").fit(
            X, y, group=[40], sample_weight=None if weights is None else np.full(40, 3.0))
        assert len(pairs.rankers_) == len(auto.rankers_) == 50
        assert np.all(np.isfinite(auto.weights_)) and np.all(np.isfinite(auto.predict(X)))
        assert auto.rankers_[:30] == pairs.rankers_[:30]
        np.testing.assert_allclose(auto.weights_[:30], pairs.weights_[:30], rtol=1e-9)


def test_mpboost_levels_parallel_kernel_equals_pairs(monkeypatch) -> None:
    """The parallel twin of the level kernel (forced) gives the same fit."""
    monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0)
    X, y, qid = graded_data(np.random.default_rng(9), n_feat=6)
    a, b = fit_both_mp(X, y, qid, ddf="logdd", n_rounds=30, thresholds="all")
    assert_same_fit(a, b)


def test_mpboost_degenerate_queries() -> None:
    """Only one-document and one-grade queries: no pair on either path, the same stop."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, 2.0, 2.0, 0.0])
    a, b = fit_both_mp(X, y, np.array([0, 1, 1, 2]), n_rounds=3, thresholds="all")
    assert a.rankers_ == b.rankers_ == []
    assert a.stop_reason_ == b.stop_reason_ == "no preference pairs in the training data"


def test_mpboost_auto_follows_the_cost_rule_and_pairs_when_explicit(monkeypatch) -> None:
    import boostplug.boosters.mpboost as mpboost

    X, y, qid = graded_data(np.random.default_rng(7))
    refuse_pair_listing(monkeypatch)
    monkeypatch.setattr(mpboost, "choose_pairwise", lambda *args: "levels")
    assert len(MPBoost(n_rounds=5, thresholds="all").fit(X, y, qid=qid).rankers_) == 5
    with pytest.raises(AssertionError, match="critical_pairs called"):
        MPBoost(n_rounds=2, pairwise="pairs").fit(X, y, qid=qid)
    monkeypatch.setattr(mpboost, "choose_pairwise", lambda *args: "pairs")
    with pytest.raises(AssertionError, match="critical_pairs called"):
        MPBoost(n_rounds=2).fit(X, y, qid=qid)
    monkeypatch.undo()
    # explicit pairs under "auto" train on the pair list (no critical_pairs needed)
    refuse_pair_listing(monkeypatch)
    m = MPBoost(n_rounds=2, thresholds="all").fit(X, y, qid=qid, pairs=[[2, 3], [4, 2]])
    assert len(m.rankers_) >= 1
    with pytest.raises(ValueError, match="explicit pairs"):
        MPBoost(pairwise="levels", n_rounds=2).fit(X, y, qid=qid, pairs=[[1, 2]])
    with pytest.raises(ValueError, match="pairwise"):
        MPBoost(pairwise="nope", n_rounds=2).fit(X, y, qid=qid)


@pytest.mark.parametrize("make", [
    lambda: RankBoost(variant="rb-c", n_rounds=2, random_state=0),
    lambda: RankBoost(variant="rb-d", n_rounds=2, random_state=0),
    lambda: MPBoost(ddf="binary", n_rounds=2, random_state=0),
    lambda: MPBoost(ddf="logdd", n_rounds=2, random_state=0),
], ids=["rb-c", "rb-d", "mpboost-binary", "mpboost-logdd"])
def test_one_query_of_100000_documents_trains_without_pairs(make, monkeypatch) -> None:
    """5 grades in one query of 100,000 documents: 4e9 critical pairs, never listed (listing them
    would need some 400 GB; the patched lister fails the test if called)."""
    refuse_pair_listing(monkeypatch)
    rng = np.random.default_rng(3)
    n = 100_000
    y = rng.integers(0, 5, size=n).astype(np.float64)
    X = np.column_stack([y + rng.normal(scale=2.0, size=n), rng.normal(size=n), np.round(rng.normal(size=n), 1)])
    m = make().fit(X, y, group=[n])
    assert len(m.rankers_) == 2 and m.rankers_[0]["feature"] == 0
    if isinstance(m, RankBoost):
        assert m.history_[1]["E1"] < m.history_[0]["E1"] < 1.0
    else:
        if m.ddf == "binary":   # logdd's steps of up to d = 2.6 may overshoot (Z_t > 1; mpboost docstring)
            assert m.history_[1]["bound"] < m.history_[0]["bound"] < 1.0
        assert 0.0 < m.history_[1]["misorder"] < 1.0   # ties count as mis-ordered: most pairs after 2 stumps


# ---- RankBoost+: pairs of signature groups ------------------------------------------------------

def brute_pair_weights(y, group_ptr, qw, codes, members, eta):
    """Every critical pair listed: ``D_t = coef_q exp(ell) / W`` with ``ell`` of Eq. 23 per pair,
    and ``E2 = W / |I|``."""
    from boostplug.pairs import critical_pairs

    pairs = critical_pairs(y, group_ptr)
    q = np.searchsorted(group_ptr, pairs[:, 0], side="right") - 1
    coef = np.ones(pairs.shape[0]) if qw is None else qw[q]
    ell = np.zeros(pairs.shape[0])
    for (k, j), e in zip(members, eta):
        o = (codes[pairs[:, 0], k] > j).astype(int) - (codes[pairs[:, 1], k] > j)
        ell += np.where(o != 0, -e * o, np.log(np.cosh(e)))
    w = coef * np.exp(ell)
    return pairs, w / w.sum(), w.sum() / coef.sum()


@pytest.mark.parametrize("seed", range(4))
def test_group_pairs_equal_the_listed_pairs(seed: int) -> None:
    """GroupPairs' stump sums, one ranker's eps, E2 and the line-search pairs equal sums over every pair."""
    from boostplug.boosters._group_pairs import GroupPairs
    from boostplug.boosters._level_sums import LevelPairs
    from boostplug.boosters._rankboost_kernels import outcomes_eps
    from boostplug.boosters._stump_sums import pair_split_sums
    from boostplug.boosters.stumps import make_candidates
    from boostplug.groups import group_ptr_from_qid

    rng = np.random.default_rng(600 + seed)
    X, y, qid = graded_data(rng, n_queries=5, max_docs=25)
    gp_ptr = group_ptr_from_qid(qid)
    qw = None if seed % 2 else rng.choice([0.5, 1.0, 3.0], size=5)
    cands = make_candidates(X, "all")
    stumps = np.argwhere(cands.exists)
    members = [tuple(int(v) for v in stumps[i]) for i in rng.choice(stumps.shape[0], size=4 + seed, replace=False)]
    eta = rng.normal(scale=1.5, size=len(members))
    gp = GroupPairs(LevelPairs(y, gp_ptr, qw), cands.codes)
    gp.sync(members[:2], eta[:2])             # two syncs: groups split in steps as S_t grows
    gp.sync(members, eta)
    pairs, w, e2 = brute_pair_weights(y, gp_ptr, qw, cands.codes, members, eta)
    assert gp.gq.shape[0] < X.shape[0]        # groups, not documents
    assert math.isclose(math.exp(gp.log_e2), e2, rel_tol=1e-12)
    cor, rev, total = gp.split_sums(cands.width)
    ref_cor, ref_rev = pair_split_sums(cands.codes, pairs, w, cands.n_thr)
    ex = cands.exists
    assert math.isclose(total, 1.0, rel_tol=1e-12)
    np.testing.assert_allclose(cor[ex], ref_cor[ex], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(rev[ex], ref_rev[ex], rtol=1e-10, atol=1e-14)
    for k, j in stumps[:: max(1, stumps.shape[0] // 15)]:
        got = gp.eps(cands.codes[:, k] > j)
        ref = outcomes_eps(cands.codes, int(k), int(j), pairs, w)[1]
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
    sup = np.array([0, 2, 3])
    gw, O = gp.pair_outcomes(sup)
    O_ref = np.stack([outcomes_eps(cands.codes, *members[b], pairs, w)[0] for b in sup], axis=1)
    v = rng.normal(size=sup.size)
    assert math.isclose(gw @ np.exp(O @ v), w @ np.exp(O_ref @ v), rel_tol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("efficient", [True, False])
def test_rbplus_levels_equal_pairs_small_queries(seed: int, efficient: bool) -> None:
    """Small queries (the efficient variant prunes R, the exact one takes dependent steps: checked below)."""
    X, y, qid = graded_data(np.random.default_rng(seed), n_queries=4, max_docs=7, n_feat=3, n_labels=4)
    a, b = fit_both(X, y, qid, variant="rankboost+", efficient=efficient, n_rounds=20, thresholds="all",
                    random_state=seed)
    assert len(a.rankers_) == 20
    assert a.pruned_round_ == b.pruned_round_
    assert_same_fit(a, b)


def test_rbplus_small_queries_prune_and_take_dependent_steps() -> None:
    """The seeds above reach the efficient variant's pruning and the exact variant's line search."""
    pruned = dependent = 0
    for seed in range(6):
        X, y, qid = graded_data(np.random.default_rng(seed), n_queries=4, max_docs=7, n_feat=3, n_labels=4)
        m = RankBoost(variant="rankboost+", n_rounds=20, thresholds="all", random_state=seed).fit(X, y, qid=qid)
        pruned += m.pruned_round_ is not None
        m = RankBoost(variant="rankboost+", efficient=False, n_rounds=20, thresholds="all").fit(X, y, qid=qid)
        dependent += sum(h["step"] == "dependent" for h in m.history_)
    assert pruned == 6 and dependent >= 5


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_labels", [2, 3, 5])
@pytest.mark.parametrize("efficient", [True, False])
def test_rbplus_levels_equal_pairs_random(seed: int, n_labels: int, efficient: bool) -> None:
    # graded_data: tied values, NaN, a one-document and a one-grade query
    X, y, qid = graded_data(np.random.default_rng(20 + seed), n_labels=n_labels)
    a, b = fit_both(X, y, qid, variant="rankboost+", efficient=efficient, n_rounds=25, thresholds="sample",
                    max_thresholds=8, random_state=seed)
    assert len(a.rankers_) >= 10
    assert_same_fit(a, b)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("efficient", [True, False])
def test_rbplus_levels_equal_pairs_query_weights(seed: int, efficient: bool) -> None:
    rng = np.random.default_rng(100 + seed)
    X, y, qid = graded_data(rng, n_queries=7)
    qw = rng.choice([0.0, 0.5, 1.0, 3.0], size=7)
    qw[2] = 2.5                                          # not all equal, not all zero
    a, b = fit_both(X, y, qid, sample_weight=qw, variant="rankboost+", efficient=efficient, n_rounds=20,
                    thresholds="all", random_state=seed)
    assert_same_fit(a, b)


@pytest.mark.parametrize("seed", range(3))
def test_rbplus_levels_equal_pairs_dependent_steps_weighted(seed: int) -> None:
    X, y, qid = dependent_data(np.random.default_rng(seed))
    qw = np.random.default_rng(seed).choice([0.5, 1.0, 2.0], size=6)
    for sw in (None, qw):
        for efficient in (True, False):
            a, b = fit_both(X, y, qid, sample_weight=sw, variant="rankboost+", efficient=efficient, n_rounds=40,
                            thresholds="all", random_state=seed)
            assert efficient or sw is None or any(h["step"] == "dependent" for h in a.history_)
            assert_same_fit(a, b)


def test_rbplus_levels_equal_pairs_letor_like() -> None:
    X, y, qid = letor_like(np.random.default_rng(201))
    for efficient in (True, False):
        a, b = fit_both(X, y, qid, variant="rankboost+", efficient=efficient, n_rounds=40, random_state=0)
        assert_same_fit(a, b)


@pytest.mark.parametrize("reverse", [False, True])
def test_rbplus_levels_equal_pairs_perfect_first_ranker(reverse: bool) -> None:
    X = np.array([[0.0], [1.0], [2.0], [0.5], [3.0]])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    a, b = fit_both(-X if reverse else X, y, np.array([0, 0, 0, 1, 1]), variant="rankboost+", thresholds="all")
    assert a.history_[0]["alpha"] == (-math.inf if reverse else math.inf)
    assert_same_fit(a, b)


def test_rbplus_levels_parallel_kernel_equals_pairs(monkeypatch) -> None:
    """The parallel twin of the group sweep (forced) gives the same fit."""
    monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0)
    X, y, qid = graded_data(np.random.default_rng(9), n_feat=6)
    for efficient in (True, False):
        a, b = fit_both(X, y, qid, variant="rankboost+", efficient=efficient, n_rounds=20, thresholds="all",
                        random_state=0)
        assert_same_fit(a, b)


def test_rbplus_levels_equal_pairs_mq2008_fold1_train(mq2008_dir) -> None:
    """MQ2008 Fold1's training set (S1-S3), 20 rounds."""
    from boostplug.data import load_letor_folds

    train = load_letor_folds(mq2008_dir, "letor4")[0][0]
    for efficient in (True, False):
        a = RankBoost(variant="rankboost+", efficient=efficient, n_rounds=20, random_state=0, pairwise="pairs")
        b = RankBoost(variant="rankboost+", efficient=efficient, n_rounds=20, random_state=0)
        a.fit(train.X, train.y, group=np.diff(train.group_ptr))
        b.fit(train.X, train.y, group=np.diff(train.group_ptr))
        assert_same_fit(a, b)


def test_rbplus_group_memory_is_guarded(monkeypatch) -> None:
    """The group blocks count against boostplug.pairs.PAIR_MEMORY_LIMIT like the pair list."""
    X, y, qid = graded_data(np.random.default_rng(5))
    monkeypatch.setattr(pairs_mod, "PAIR_MEMORY_LIMIT", 2000)
    with pytest.raises(pairs_mod.PairMemoryError, match="signature-group pairs would need .*PAIR_MEMORY_LIMIT"):
        RankBoost(variant="rankboost+", n_rounds=20, thresholds="all").fit(X, y, qid=qid)


@pytest.mark.parametrize("efficient", [True, False])
def test_rbplus_query_of_30000_documents_trains_without_pairs(efficient: bool, monkeypatch) -> None:
    """One query of 30,000 documents (3.6e8 critical pairs, ~40 GB as a pair list): the patched
    lister fails the test if called. E2 = prod Z_t (Eq. 29) and decreases."""
    refuse_pair_listing(monkeypatch)
    rng = np.random.default_rng(4)
    n = 30_000
    y = rng.integers(0, 5, size=n).astype(np.float64)
    X = np.column_stack([y + rng.normal(scale=2.0, size=n), rng.normal(size=n), np.round(rng.normal(size=n), 1)])
    m = RankBoost(variant="rankboost+", efficient=efficient, n_rounds=4, random_state=0).fit(X, y, group=[n])
    assert len(m.rankers_) == 4 and m.rankers_[0]["feature"] == 0
    e2 = [h["E2"] for h in m.history_]
    assert all(b < a for a, b in zip([1.0] + e2, e2))
    for h in m.history_:
        assert math.isclose(h["E2"], h["prod_Z"], rel_tol=1e-9)
