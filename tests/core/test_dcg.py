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
