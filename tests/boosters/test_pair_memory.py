"""Pair-listing boosters estimate their per-pair memory before allocating anything
(boostplug.pairs.PAIR_MEMORY_LIMIT): one huge query is a ValueError naming the query, its size,
the pair count and the estimate, raised fast, not a MemoryError after minutes of swapping."""

from __future__ import annotations

import re
import time
from pathlib import Path
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
def test_a_100000_document_query_is_refused_fast_without_allocating(make, one_huge_query, monkeypatch):
    X, y, qid, n_pairs = one_huge_query
    monkeypatch.setattr(bp, "PAIR_MEMORY_LIMIT", 8 * 2**30)  # refused on any machine, however much it has
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
    # a complexity guard, not a speed limit: the refusal counts the pairs in O(n log n), far below this
    # bound on a busy machine; the O(n^2) count it replaced took minutes
    assert elapsed < 30.0


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


# ---- where the limit comes from: the memory available, or an override -------------------------
from boostplug import _memory  # noqa: E402

_Y4 = np.array([2.0, 1.0, 0.0, 1.0])  # 5 critical pairs
_X4 = np.column_stack([_Y4, np.arange(4.0)])


def _mpboost_pairs_fit():
    return MPBoost(n_rounds=1, pairwise="pairs").fit(_X4, _Y4, qid=np.zeros(4))


def test_the_default_limit_is_the_memory_available_now(monkeypatch):
    """A machine with one byte less than the pairs need refuses what a fixed 8 GiB limit let through."""
    monkeypatch.delenv(bp.PAIR_MEMORY_ENV, raising=False)
    y = np.arange(20, dtype=np.float64) % 5
    X = np.column_stack([y, np.arange(20.0)])
    need = int(count_critical_pairs(y, [0, 20])[0]) * 96  # MPBoost's bytes per pair
    monkeypatch.setattr(_memory, "available_memory", lambda: need - 1)
    assert bp.pair_memory_limit() == need - 1
    with pytest.raises(bp.PairMemoryError, match=rf"would need ~{need:,} bytes .*above the limit of {need - 1:,} "
                                                 r"bytes \(the memory available now\).*BOOSTPLUG_PAIR_MEMORY_LIMIT"):
        MPBoost(n_rounds=1, pairwise="pairs").fit(X, y, qid=np.zeros(20))
    monkeypatch.setattr(_memory, "available_memory", lambda: need)
    assert len(MPBoost(n_rounds=1, pairwise="pairs").fit(X, y, qid=np.zeros(20)).rankers_) == 1
    # the metrics' guard follows it too
    with pytest.raises(bp.PairMemoryError, match=rf"the limit of {need:,} bytes \(the memory available now\)"):
        critical_pairs(y, [0, 20], bytes_per_pair=97)


def test_without_a_figure_from_the_system_the_limit_is_8_gib(monkeypatch):
    monkeypatch.delenv(bp.PAIR_MEMORY_ENV, raising=False)
    monkeypatch.setattr(_memory, "available_memory", lambda: None)
    assert bp.pair_memory_limit() == bp.FALLBACK_PAIR_MEMORY_LIMIT == 8 * 2**30


@pytest.mark.parametrize("text, expected", [
    ("479", 479), (" 2048 ", 2048), ("1K", 1024), ("1kib", 1024), ("1.5M", 3 * 2**19), ("16G", 16 * 2**30),
    ("16 GiB", 16 * 2**30), ("2GB", 2 * 2**30), ("1T", 2**40), ("0", 0),
])
def test_the_environment_variable_overrides_the_memory_available(monkeypatch, text, expected):
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**50)
    monkeypatch.setenv(bp.PAIR_MEMORY_ENV, text)
    assert bp.pair_memory_limit() == expected


def test_the_override_refuses_with_its_name_and_the_assignment_wins(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**50)
    monkeypatch.setenv(bp.PAIR_MEMORY_ENV, "479")
    with pytest.raises(bp.PairMemoryError, match=r"above the limit of 479 bytes \(set by BOOSTPLUG_PAIR_MEMORY_LIMIT\)"):
        _mpboost_pairs_fit()
    monkeypatch.setattr(bp, "PAIR_MEMORY_LIMIT", 5 * 96)  # the assignment in code beats the environment
    assert bp.pair_memory_limit() == 480
    assert len(_mpboost_pairs_fit().rankers_) == 1
    monkeypatch.setattr(bp, "PAIR_MEMORY_LIMIT", 100)
    with pytest.raises(bp.PairMemoryError, match=r"\(set by boostplug.pairs.PAIR_MEMORY_LIMIT\)"):
        _mpboost_pairs_fit()
    monkeypatch.setattr(bp, "PAIR_MEMORY_LIMIT", 1.5)
    with pytest.raises(TypeError, match=r"boostplug.pairs.PAIR_MEMORY_LIMIT must be an integer number of bytes "
                                        r">= 0, got 1.5"):
        _mpboost_pairs_fit()


@pytest.mark.parametrize("text", ["lots", "-5", "1e9", "16X", "G"])
def test_a_bad_environment_value_is_refused_naming_it(monkeypatch, text):
    monkeypatch.setenv(bp.PAIR_MEMORY_ENV, text)
    with pytest.raises(ValueError, match=rf"BOOSTPLUG_PAIR_MEMORY_LIMIT='{re.escape(text)}' is not a memory size"):
        bp.pair_memory_limit()


def test_an_empty_environment_variable_is_unset(monkeypatch):
    monkeypatch.setenv(bp.PAIR_MEMORY_ENV, "")
    monkeypatch.setattr(_memory, "available_memory", lambda: 12345)
    assert bp.pair_memory_limit() == 12345


def test_available_memory_is_at_most_what_proc_meminfo_reports():
    info = Path("/proc/meminfo")
    if not info.exists():
        pytest.skip("no /proc/meminfo")
    def mem_available():
        fields = dict(line.split(":", 1) for line in info.read_text().splitlines())
        return int(fields["MemAvailable"].split()[0]) * 1024

    before = mem_available()
    got = _memory.available_memory()
    # other processes free memory between the reads: the bound is the larger of the two around the call
    assert got is not None and 0 < got <= max(before, mem_available())
