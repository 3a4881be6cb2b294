"""The one gain / discount / (ideal) DCG computation (boostplug._core.dcg) and its users."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests._helpers import random_ranking

from boostplug import metrics, objectives
from boostplug._core import dcg, dispatch


def slow_ideal_dcg(gains, discount, k):
    ranked = sorted(gains, reverse=True)
    kk = len(ranked) if k is None else min(k, len(ranked))
    disc = (lambda r: 1.0 / math.log2(r + 1)) if discount == "log2" else (lambda r: 1.0 if r <= 2 else 1.0 / math.log2(r))
    return sum(g * disc(r) for r, g in enumerate(ranked[:kk], start=1))


def test_discounts_and_gains() -> None:
    np.testing.assert_allclose(dcg.discounts("log2", 4), [1.0, 1 / math.log2(3), 0.5, 1 / math.log2(5)], rtol=1e-15)
    np.testing.assert_allclose(dcg.discounts("letor", 4), [1.0, 1.0, 1 / math.log2(3), 0.5], rtol=1e-15)
    assert dcg.discounts("log2", 0).shape == (1,)
    y = np.array([0.0, 1.0, 3.0])
    np.testing.assert_array_equal(dcg.gains_of(y, "exp2"), [0.0, 1.0, 7.0])
    np.testing.assert_array_equal(dcg.gains_of(y, "linear"), y)
    np.testing.assert_array_equal(dcg.gains_of(y, [0, 2, 5, 9]), [0.0, 2.0, 9.0])
    with pytest.raises(ValueError, match="'cubic'"):
        dcg.gains_of(y, "cubic")
    with pytest.raises(ValueError, match="'ln'"):
        dcg.discounts("ln", 3)
    with pytest.raises(ValueError, match="row 2 has label 3.0"):
        dcg.gains_of(y, [0, 1, 2])
    with pytest.raises(TypeError, match="numeric"):
        dcg.check_label_gain(["a", "b"])


@pytest.mark.parametrize("discount", ["log2", "letor"])
@pytest.mark.parametrize("k", [None, 1, 3])
def test_ideal_dcg_matches_a_loop_and_the_metrics(discount, k) -> None:
    s, y, gp = random_ranking(np.random.default_rng(5), n_queries=12, max_docs=9)
    g = dcg.gains_of(y, "exp2")
    z = dcg.ideal_dcg(g, gp, discount, k)
    ref = [slow_ideal_dcg(list(g[a:b]), discount, k) for a, b in zip(gp[:-1], gp[1:])]
    np.testing.assert_allclose(z, ref, rtol=1e-14)
    # the metrics' ideal DCG is the same computation: DCG of the ideal ranking, bit for bit
    ideal_scores = np.empty_like(s)
    for a, b in zip(gp[:-1], gp[1:]):
        order = np.argsort(-g[a:b], kind="mergesort")
        ideal_scores[a + order] = -np.arange(b - a, dtype=float)
    np.testing.assert_array_equal(metrics.dcg(ideal_scores, y, gp, k, discount=discount, per_query=True), z)


def test_serial_and_parallel_ideal_dcg_are_identical(monkeypatch) -> None:
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread: the parallel kernels never run")
    _, y, gp = random_ranking(np.random.default_rng(8), n_queries=30, max_docs=14)
    g = dcg.gains_of(y, "exp2")
    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 10**15)
        serial = dcg.ideal_dcg(g, gp, "letor", 4)
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0)
        parallel = dcg.ideal_dcg(g, gp, "letor", 4)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(serial, parallel)
    assert np.any(serial > 0)


def test_ndcg_boost_objective_uses_the_same_ideal_dcg() -> None:
    _, y, gp = random_ranking(np.random.default_rng(9), n_queries=10, max_docs=8)
    lg = [0.0, 1.5, 4.0, 10.0, 30.0]
    prep = objectives.get("ndcg_boost").prepare(y, gp, label_gain=lg)
    np.testing.assert_array_equal(prep.ideal_dcg(), dcg.ideal_dcg(dcg.gains_of(y, lg), gp))
    assert dcg.ideal_dcg(np.zeros(0), np.array([0])).shape == (0,)


def test_delta_ndcg_in_each_convention_is_the_swap_recomputed() -> None:
    """One |Delta NDCG| per convention: LightGBM's form (the gain gap times the discount gap) and
    XGBoost's (the two places' DCG before the swap minus after) are the change of NDCG recomputed
    from the swapped order, with any gain table, a truncation (discount 0 past it) and without the
    ideal DCG (1: DCG); LightGBM's gap keeps the gains' sign (a label_gain that falls), and the
    pair base's |Delta NDCG| (metric_weights) is its absolute value."""
    from boostplug.objectives import metric_weights
    from boostplug.objectives.pairwise import Pair

    rng = np.random.default_rng(3)
    n = 11
    for gains in (2.0 ** rng.integers(0, 5, n) - 1.0, rng.uniform(0.0, 3.0, n)):
        for top in (n, 4):
            discounts = np.where(np.arange(n) < top, 1.0 / np.log2(2.0 + np.arange(n)), 0.0)
            for inv in (1.0, 1.0 / float(np.sort(gains)[::-1] @ discounts)):
                for a in range(n):
                    for b in range(n):
                        if a == b:
                            continue
                        swapped = np.arange(n)
                        swapped[[a, b]] = [b, a]
                        change = float(gains[swapped] @ discounts - gains @ discounts) * inv
                        args = (gains[a], gains[b], discounts[a], discounts[b], inv)
                        lgb, xgb = dcg.delta_ndcg(*args), dcg.delta_ndcg_by_swap(*args)
                        assert xgb == pytest.approx(-change, rel=1e-12, abs=1e-15)
                        assert abs(lgb) == pytest.approx(abs(change), rel=1e-12, abs=1e-15)
                        assert lgb * (gains[a] - gains[b]) >= 0.0
                        view = Pair(0.0, a, b, 1.0, 0.0, *args)
                        assert metric_weights.delta_ndcg(view) == abs(lgb)


def test_ideal_dcg_in_the_labels_order() -> None:
    """LightGBM's ideal DCG sums the gains in the labels' decreasing order (``order_by``), which a
    label_gain falling with the label makes differ from the gains' own order."""
    labels, gp, disc = np.array([0.0, 2.0, 1.0]), np.array([0, 3]), 1.0 / np.log2(2.0 + np.arange(3))
    gains = np.array([0.0, 5.0, 1.0])[labels.astype(int)]  # label 2 gains less than label 1
    by_labels = dcg.inverse_ideal_dcgs(gains, gp, disc, 2, order_by=labels)
    assert by_labels[0] == pytest.approx(1.0 / (1.0 * disc[0] + 5.0 * disc[1]), rel=1e-15)  # labels 2, 1: gains 1, 5
    assert by_labels[0] != pytest.approx(dcg.inverse_ideal_dcgs(gains, gp, disc, 2)[0])
