"""Pair-listing boosters estimate their per-pair memory before allocating anything
(boostplug.pairs.PAIR_MEMORY_LIMIT): one huge query is a ValueError naming the query, its size,
the pair count and the estimate, raised fast, not a MemoryError after minutes of swapping."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

from boostplug import pairs as bp
from boostplug.boosters import MPBoost, RankBoost
from boostplug.pairs import count_critical_pairs, critical_pairs

N = 100_000


@pytest.fixture(scope="module")
def one_huge_query():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 2))
    y = rng.integers(0, 5, N).astype(np.float64)
    return X, y, np.zeros(N, dtype=np.int64), int(count_critical_pairs(y, [0, N])[0])


@pytest.mark.parametrize("make", [
    lambda: RankBoost(variant="rb-d", n_rounds=2, pairwise="pairs"),
    lambda: RankBoost(variant="rb-c", n_rounds=2, pairwise="pairs"),
    lambda: RankBoost(variant="rankboost+", n_rounds=2, pairwise="pairs"),
    lambda: MPBoost(n_rounds=2, pairwise="pairs"),
], ids=["rb-d", "rb-c", "rankboost+", "mpboost"])
def test_a_100000_document_query_is_refused_fast_without_allocating(make, one_huge_query):
    X, y, qid, n_pairs = one_huge_query
    model = make()
    make().fit(X[:20], y[:20], qid=qid[:20])  # compile outside the timed call
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(ValueError, match=rf"{n_pairs:,} preference pairs would need ~\d+\.\d GiB .*"
                                             rf"query 0 with 100,000 documents and {n_pairs:,} pairs"):
            model.fit(X, y, qid=qid)
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20  # X and y are 2.4 MB; the pairs alone would be 60 GiB
    assert elapsed < 30.0      # the O(n^2) count took minutes


def test_the_estimate_counts_every_per_pair_array_and_the_limit_is_overridable(monkeypatch):
    y = np.array([2.0, 1.0, 0.0, 1.0])
    X = np.column_stack([y, np.arange(4.0)])  # feature 0 orders every pair
    monkeypatch.setattr(bp, "PAIR_MEMORY_LIMIT", 5 * 96 - 1)  # 5 pairs: MPBoost needs 5 * 96 bytes
    with pytest.raises(ValueError, match=r"MPBoost: 5 preference pairs would need .*\(96 bytes per pair\)"):
        MPBoost(n_rounds=1, pairwise="pairs").fit(X, y, qid=np.zeros(4))
    # MPBoost's label-level path lists no pairs either
    assert len(MPBoost(n_rounds=1).fit(X, y, qid=np.zeros(4)).rankers_) == 1
    with pytest.raises(ValueError, match=r"RankBoost\(variant='rb-c'\): 5 preference pairs .*\(112 bytes per pair\)"):
        RankBoost(n_rounds=1, pairwise="pairs").fit(X, y, qid=np.zeros(4))
    # the label-level path of Rb-c lists no pairs: the guard does not apply
    assert len(RankBoost(n_rounds=1).fit(X, y, qid=np.zeros(4)).rankers_) == 1
    with pytest.raises(ValueError, match=r"5 preference pairs would need ~480 bytes .* they are the explicit pairs"):
        MPBoost(n_rounds=1).fit(X, y, qid=np.zeros(4), pairs=np.array([[0, 1]] * 5))
    monkeypatch.setattr(bp, "PAIR_MEMORY_LIMIT", 5 * 112)
    assert len(RankBoost(n_rounds=1, pairwise="pairs").fit(X, y, qid=np.zeros(4)).rankers_) == 1
    assert critical_pairs(y, [0, 4]).shape == (5, 2)
    with pytest.raises(ValueError, match="5 preference pairs"):
        critical_pairs(y, [0, 4], memory_limit=79)
    with pytest.raises(TypeError, match="memory_limit must be an integer"):
        critical_pairs(y, [0, 4], memory_limit=1.5)


def test_fast_count_equals_the_pair_loop():
    rng = np.random.default_rng(3)
    for _ in range(100):
        sizes = rng.integers(1, 12, size=rng.integers(1, 4))
        gp = np.concatenate(([0], np.cumsum(sizes)))
        y = rng.integers(0, 4, gp[-1]).astype(np.float64)
        brute = [sum(y[i] > y[j] for i in range(a, b) for j in range(a, b)) for a, b in zip(gp[:-1], gp[1:])]
        assert count_critical_pairs(y, gp).tolist() == brute
        assert critical_pairs(y, gp).shape[0] == sum(brute)
