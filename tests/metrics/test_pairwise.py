"""rank_loss and misordered_pairs over the critical pairs count tied and reversed pairs per
query (sorting and a Fenwick tree), and pair_precision_at counts the pairs above a score gap
(a two-pointer sweep, the cut gap found by bisection), never listing a pair: checked here
against the pair-list implementations they replaced (kept below as the plain reference) and
the explicit-pairs path, on random queries with tied scores, gaps and labels, degenerate
queries, and one query of 100,000 (200,000 for the precision) documents."""

from __future__ import annotations

import math
import time
import tracemalloc

import numpy as np
import pytest

import boostplug.pairs as bp
from boostplug import metrics as M
from boostplug.metrics import _pairwise
from boostplug.metrics._pair_counts import CriticalGaps, critical_pair_counts
from tests._helpers import parallel_then_serial

TOL = 1e-12


# ------------------------------------------------------------------ the pair-list reference


def ref_pairs(labels, group_ptr) -> np.ndarray:
    """Every critical pair (i, j), labels[i] > labels[j], of every query, preferred row first."""
    out = []
    for q in range(len(group_ptr) - 1):
        rows = range(int(group_ptr[q]), int(group_ptr[q + 1]))
        out += [(i, j) for i in rows for j in rows if labels[i] > labels[j]]
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def ref_outcomes(scores, pairs) -> np.ndarray:
    """Per pair: 1 reversed, 0.5 tied, 0 ordered correctly (no subtraction: +-1.7e308 stays exact)."""
    a, b = scores[pairs[:, 0]], scores[pairs[:, 1]]
    return np.where(a < b, 1.0, np.where(a == b, 0.5, 0.0))


def ref_rank_loss(scores, labels, group_ptr, kind="r2", per_query=False):
    p = ref_pairs(labels, group_ptr)
    out = ref_outcomes(np.asarray(scores, dtype=np.float64), p)
    if kind == "r1":
        out = np.where(out > 0.0, 1.0, 0.0)
    if not per_query:
        return float(out.mean()) if out.size else math.nan
    q = np.searchsorted(group_ptr, p[:, 0], side="right") - 1
    nq = len(group_ptr) - 1
    total = np.bincount(q, weights=out, minlength=nq)
    count = np.bincount(q, minlength=nq)
    return np.array([total[k] / count[k] if count[k] else math.nan for k in range(nq)])


def ref_misordered(scores, labels, group_ptr) -> int:
    p = ref_pairs(labels, group_ptr)
    return int(np.count_nonzero(ref_outcomes(np.asarray(scores, dtype=np.float64), p) == 1.0))


def ref_precision(scores, labels, group_ptr, percent) -> float:
    """Precision at K% from the listed pairs: the c-th largest float64 gap is the cut, the
    pairs at it count at their average correctness (scores halved when a difference overflows)."""
    p = ref_pairs(labels, group_ptr)
    m = p.shape[0]
    if not m:
        return math.nan
    s = np.asarray(scores, dtype=np.float64)
    if np.abs(s).max() > np.finfo(np.float64).max / 2:
        s = s / 2
    diff = s[p[:, 0]] - s[p[:, 1]]
    gap = np.abs(diff)
    c = min(m, max(1, math.ceil(m * percent / 100 - 1e-9)))
    edge = np.sort(gap)[::-1][c - 1]
    above, at = gap > edge, gap == edge
    n_above = int(above.sum())
    return (int((diff[above] > 0).sum()) + (c - n_above) * int((diff[at] > 0).sum()) / int(at.sum())) / c


def assert_close(got, want):
    got, want = np.atleast_1d(np.asarray(got, dtype=np.float64)), np.atleast_1d(np.asarray(want, dtype=np.float64))
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.all(np.abs(got[ok] - want[ok]) <= TOL), (got, want)


# ------------------------------------------------------------------ random data


def random_queries(seed: int):
    """Small queries with tied scores and labels, single-document and single-label queries,
    fractional labels, signed zeros and scores at the ends of float64."""
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 7))
    sizes = rng.integers(1, 13, size=nq)
    g = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(g[-1])
    levels = ([0.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 0.5, 2.5, 31.0])[seed % 3]
    y = rng.choice(levels, size=n)
    if nq > 1:
        y[g[1]:g[2]] = y[g[1]]  # a single-label query
    s = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # few decimals: many ties
    s[rng.random(n) < 0.2] = 0.0
    s[rng.random(n) < 0.1] = -0.0
    if seed % 5 == 0:
        s[rng.random(n) < 0.3] = rng.choice([1.7e308, -1.7e308, 5e-324])
    return s, y, g


SEEDS = range(300)


@pytest.mark.parametrize("kind", ["r1", "r2"])
def test_rank_loss_equals_the_pair_list_reference(kind):
    for seed in SEEDS:
        s, y, g = random_queries(seed)
        assert_close(M.rank_loss(s, y, g, kind=kind), ref_rank_loss(s, y, g, kind))
        assert_close(M.rank_loss(s, y, g, kind=kind, per_query=True), ref_rank_loss(s, y, g, kind, per_query=True))
        assert_close(M.by_name(kind)(s, y, g), ref_rank_loss(s, y, g, kind))


def test_misordered_pairs_equals_the_pair_list_reference():
    for seed in SEEDS:
        s, y, g = random_queries(seed)
        got = M.misordered_pairs(s, y, g)
        assert isinstance(got, int) and got == ref_misordered(s, y, g)


def test_the_counts_partition_the_critical_pairs():
    for seed in SEEDS:
        s, y, g = random_queries(seed)
        counts = critical_pair_counts(s, y, g)
        for q in range(len(g) - 1):
            a, b = g[q], g[q + 1]
            p = ref_pairs(y[a:b], [0, b - a])
            out = ref_outcomes(s[a:b], p)
            assert counts[q].tolist() == [p.shape[0], int((out == 0.5).sum()), int((out == 1.0).sum())]


def test_rows_within_queries_are_grouped_by_query_and_sorted_there():
    from boostplug.metrics._pair_counts import _within_queries

    rng = np.random.default_rng(7)
    g = np.array([0, 5, 5, 6, 20, 20, 31])          # empty queries and a single-row one among them
    v = np.round(rng.normal(size=31), 1)             # ties within queries
    order = _within_queries(v, g)
    assert sorted(order.tolist()) == list(range(31))
    for q in range(len(g) - 1):
        rows = order[g[q]:g[q + 1]]
        assert set(rows.tolist()) == set(range(g[q], g[q + 1]))
        assert np.all(np.diff(v[rows]) >= 0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("parallel", [True, False])
def test_step_counts_after_stump_steps_are_the_counts_from_scratch(seed, parallel, monkeypatch):
    """StepCounts, step after step (one constant on some rows; steps that create ties, and a first
    call without a previous order): the tied and reversed counts of critical_pair_counts and of the
    pair list, with no sort after the first call; forced parallel and forced serial."""
    from boostplug._core import dispatch
    from boostplug.metrics import _pair_counts as pc

    rng = np.random.default_rng(seed)
    g = np.array([0, 5, 5, 6, 40, 40, 71, 80])      # empty queries, a single-row one, a one-label one
    y = rng.integers(0, 4, size=80).astype(np.float64)
    y[71:80] = 2.0
    v = np.round(rng.normal(size=80), 1)
    monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0 if parallel else 10**18)
    steps = pc.StepCounts(y, g)
    full = pc._within_queries
    pairs = ref_pairs(y, g)
    moved = None
    for t in range(10):
        if t:
            moved = rng.random(80) < 0.4
            v = v + np.where(moved, rng.choice([0.1, -0.3, 2.0, 1e-17]), 0.0)
            monkeypatch.setattr(pc, "_within_queries", lambda *a: pytest.fail("sorted afresh"))
        got = steps.counts(v, moved)
        monkeypatch.setattr(pc, "_within_queries", full)
        np.testing.assert_array_equal(got, critical_pair_counts(v, y, g)[:, 1:])
        out = ref_outcomes(v, pairs)
        assert got.sum(axis=0).tolist() == [int((out == 0.5).sum()), int((out == 1.0).sum())]


def test_step_counts_sort_afresh_when_the_rows_said_to_move_are_not_the_ones_that_did():
    from boostplug.metrics import _pair_counts as pc

    rng = np.random.default_rng(4)
    g = np.array([0, 30, 60])
    y = rng.integers(0, 3, size=60).astype(np.float64)
    v = rng.normal(size=60)
    steps = pc.StepCounts(y, g)
    steps.counts(v)
    moved = np.zeros(60, dtype=bool)
    moved[::2] = True
    w = v + np.where(~moved, 1.5, 0.0) * rng.random(60)   # not one constant: the premise is false
    np.testing.assert_array_equal(steps.counts(w, moved), critical_pair_counts(w, y, g)[:, 1:])
    np.testing.assert_array_equal(steps.counts(w + moved, moved), critical_pair_counts(w + moved, y, g)[:, 1:])


def test_serial_and_parallel_counts_agree(monkeypatch):
    """The count kernel goes through the one dispatch: forced parallel (two threads) and forced
    serial give the same counts."""
    s, y, g = random_queries(3)
    outs = parallel_then_serial(monkeypatch, lambda: critical_pair_counts(s, y, g))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0][:, 0].sum() > 0


def test_explicit_pairs_still_use_the_pair_list_and_agree():
    for seed in range(60):
        s, y, g = random_queries(seed)
        p = ref_pairs(y, g)
        if not p.shape[0]:
            continue
        shuffled = p[np.random.default_rng(seed).permutation(p.shape[0])]
        for kind in ("r1", "r2"):
            assert_close(M.rank_loss(s, y, g, kind=kind, pairs=shuffled), M.rank_loss(s, y, g, kind=kind))
            assert_close(M.rank_loss(s, y, g, kind=kind, pairs=shuffled, per_query=True),
                         M.rank_loss(s, y, g, kind=kind, per_query=True))
        assert M.misordered_pairs(s, y, g, pairs=shuffled) == M.misordered_pairs(s, y, g)


def test_qid_gives_the_same_counts_as_group_ptr():
    s, y, g = random_queries(7)
    qid = np.repeat(np.arange(len(g) - 1)[::-1] * 10, np.diff(g))
    assert_close(M.rank_loss(s, y, qid=qid, per_query=True), ref_rank_loss(s, y, g, per_query=True))
    assert M.misordered_pairs(s, y, qid=qid) == ref_misordered(s, y, g)


# ------------------------------------------------------------------ degenerate inputs


@pytest.mark.parametrize("s, y, g, r1, r2, wrong", [
    ([0.3], [2.0], [0, 1], math.nan, math.nan, 0),                          # one document
    ([0.3, 0.1, 0.2], [1.0, 1.0, 1.0], [0, 3], math.nan, math.nan, 0),      # one label
    ([0.0, 0.0, 0.0, 0.0], [3.0, 2.0, 1.0, 0.0], [0, 4], 1.0, 0.5, 0),      # every score tied
    ([-0.0, 0.0], [1.0, 0.0], [0, 2], 1.0, 0.5, 0),                          # signed zeros tie
    ([0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0], [0, 4], 1.0, 1.0, 6),      # reversed
    ([3.0, 2.0, 1.0, 0.0], [3.0, 2.0, 1.0, 0.0], [0, 4], 0.0, 0.0, 0),      # perfect
    ([-1.7e308, 1.7e308], [1.0, 0.0], [0, 2], 1.0, 1.0, 1),                  # beyond float64 differences
    ([], [], [0], math.nan, math.nan, 0),                                    # no query
])
def test_degenerate_queries(s, y, g, r1, r2, wrong):
    assert_close(M.rank_loss(s, y, g, kind="r1"), r1)
    assert_close(M.rank_loss(s, y, g, kind="r2"), r2)
    assert M.misordered_pairs(s, y, g) == wrong
    per_query = M.rank_loss(s, y, g, kind="r1", per_query=True)
    assert per_query.shape == (len(g) - 1,)
    assert_close(per_query, [r1] * (len(g) - 1))


def test_a_query_without_pairs_is_nan_and_left_out_of_the_pooled_loss():
    s = np.array([0.3, 0.1, 0.2, 0.9, 0.5])
    y = np.array([2.0, 0.0, 0.0, 1.0, 1.0])
    g = [0, 1, 3, 5]  # one document, one label, one label
    assert np.isnan(M.rank_loss(s, y, g, per_query=True)).all() and math.isnan(M.rank_loss(s, y, g))
    y2 = np.array([2.0, 1.0, 0.0, 1.0, 1.0])
    assert_close(M.rank_loss(s, y2, g, per_query=True), [math.nan, 1.0, math.nan])
    assert M.rank_loss(s, y2, g) == 1.0


@pytest.mark.parametrize("bad, message", [
    (dict(scores=[math.nan, 1.0]), "scores must be finite; row 0 has nan"),
    (dict(scores=[1.0, math.inf]), "scores must be finite; row 1 has inf"),
    (dict(labels=[math.inf, 0.0]), "labels must be finite; row 0 has inf"),
    (dict(labels=[-1.0, 0.0]), "row 0 has -1.0"),
    (dict(kind="r3"), "'r3'"),
])
def test_bad_values_are_refused_as_before(bad, message):
    kw = dict(scores=[1.0, 0.0], labels=[1.0, 0.0], group_ptr=[0, 2]) | bad
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        M.rank_loss(**kw)
    if "kind" not in bad:
        with pytest.raises(ValueError, match=message):
            M.misordered_pairs(**kw)


@pytest.mark.parametrize("value", ["1GB", -1, np.int64(-3), True, 1.5])
def test_max_memory_is_still_validated_without_pairs(value):
    with pytest.raises(TypeError, match="max_memory must be an integer number of bytes >= 0"):
        M.rank_loss([1.0, 0.0], [1.0, 0.0], [0, 2], max_memory=value)
    with pytest.raises(TypeError, match="max_memory"):
        M.misordered_pairs([1.0, 0.0], [1.0, 0.0], [0, 2], max_memory=value)


# ------------------------------------------------------------------ no pair list, no guard


def _big_query(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=n), 3)  # ties in scores as well as labels
    return s, rng.integers(0, 5, size=n).astype(np.float64), np.array([0, n])


def _counts_by_level(s, y) -> tuple[int, int, int]:
    """(critical, tied, reversed) of one query by binary search per pair of label levels:
    an independent O(n L^2 log n) count for a query too large to list."""
    levels = np.unique(y)
    by_level = {v: np.sort(s[y == v]) for v in levels}
    critical = tied = reversed_ = 0
    for hi in levels:
        for lo in levels[levels < hi]:
            others = by_level[lo]
            at_or_below = np.searchsorted(others, by_level[hi], side="right")
            below = np.searchsorted(others, by_level[hi], side="left")
            critical += by_level[hi].size * others.size
            tied += int((at_or_below - below).sum())
            reversed_ += int((others.size - at_or_below).sum())
    return critical, tied, reversed_


def _refuse_pair_lists(monkeypatch) -> None:
    """Every way to list pairs or to guard a pair list raises."""
    def refuse(*args, **kwargs):
        raise AssertionError("the pair path was taken")

    for name in ("check_pair_memory", "_precision_of_pairs"):
        monkeypatch.setattr(_pairwise, name, refuse)
    for name in ("check_pair_memory", "critical_pairs"):
        monkeypatch.setattr(bp, name, refuse)


def test_a_100000_document_query_is_counted_fast_without_listing_or_guarding(monkeypatch):
    _refuse_pair_lists(monkeypatch)
    s, y, g = _big_query(100_000)
    M.rank_loss(s[:50], y[:50], [0, 50])  # compile or load the cache outside the timed call
    critical, tied, reversed_ = _counts_by_level(s, y)
    assert critical > 3.9e9  # the pair list would take 120 GiB
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        r1 = M.rank_loss(s, y, g, kind="r1", max_memory=0)
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a complexity guard, not a speed limit: counting is O(n log n), hundreds of times below this
    # bound; listing the 3.9e9 pairs would take minutes
    assert elapsed < 10.0
    assert peak < 20 * 2**20  # a few arrays of n int64, not n^2
    assert r1 == (reversed_ + tied) / critical
    assert M.rank_loss(s, y, g) == (2 * reversed_ + tied) / (2 * critical)
    assert_close(M.rank_loss(s, y, g, per_query=True), [(2 * reversed_ + tied) / (2 * critical)])
    assert M.misordered_pairs(s, y, g) == reversed_


def test_explicit_pairs_keep_the_guard():
    s, y, g = _big_query(100_000)
    pairs = np.zeros((1000, 2), dtype=np.int64)
    pairs[:, 1] = 1
    with pytest.raises(M.PairMemoryError, match="1,000 preference pairs"):
        M.rank_loss(s, y, g, pairs=pairs, max_memory=1000)
    with pytest.raises(M.PairMemoryError, match="1,000 preference pairs"):
        M.misordered_pairs(s, y, g, pairs=pairs, max_memory=1000)
    with pytest.raises(M.PairMemoryError, match="1,000 preference pairs"):
        M.pair_precision_at(s, y, g, 10, pairs=pairs, max_memory=1000)


# ------------------------------------------------------------------ precision at K%: counted by gap

PERCENTS = [1e-6, 0.5, 1, 5, 10, 12.5, 25, 100 / 3, 50, 66.6, 75, 90, 99.9, 100]


def integer_queries(seed: int):
    """Small integer scores: many pairs share a gap, and the cut falls inside them."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 16, size=int(rng.integers(1, 5)))
    g = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, int(rng.integers(2, 5)), size=int(g[-1])).astype(np.float64)
    s = rng.integers(-3, 4, size=int(g[-1])).astype(np.float64)
    return s, y, g


def rounding_queries(seed: int):
    """Scores whose float64 differences round: distinct exact gaps that become equal (1e16 + k,
    0.1 k), so comparing ``s_i >= s_j + g`` instead of ``s_i - s_j >= g`` would miscount."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    base = rng.choice([1e16, 0.0, 2.0**53, -1e16])
    s = base + rng.choice([0.0, 0.1, 0.2, 0.3, 0.7, 1.0, 2.0, 3.0, 4.0, 6.0], size=n)
    s[rng.random(n) < 0.3] = rng.choice([0.1, 0.2, 0.3])
    return s, rng.integers(0, 3, size=n).astype(np.float64), np.array([0, n])


GENERATORS = {"random": random_queries, "integer": integer_queries, "rounding": rounding_queries}


@pytest.mark.parametrize("generator", GENERATORS)
def test_pair_precision_equals_the_pair_list_reference(generator):
    for seed in range(120):
        s, y, g = GENERATORS[generator](seed)
        p = ref_pairs(y, g)
        shuffled = p[np.random.default_rng(seed).permutation(p.shape[0])]
        for percent in PERCENTS:
            want = ref_precision(s, y, g, percent)
            assert_close(M.pair_precision_at(s, y, g, percent), want)
            if p.shape[0]:
                assert_close(M.pair_precision_at(s, y, g, percent, pairs=shuffled), want)


def brute_gap_counts(s, y, gap) -> tuple[int, int]:
    """(critical pairs with |s_i - s_j| >= gap, those with s_preferred > s_other), pair by pair."""
    p = ref_pairs(y, [0, len(y)])
    diff = s[p[:, 0]] - s[p[:, 1]]
    keep = np.abs(diff) >= gap
    return int(keep.sum()), int((keep & (diff > 0)).sum())


@pytest.mark.parametrize("generator", GENERATORS)
def test_the_gap_counts_at_every_gap_and_next_to_it(generator):
    """At each gap a pair has, and the floats on either side of it: the ``>=`` boundary is exact."""
    for seed in range(40):
        s, y, _ = GENERATORS[generator](seed)
        if np.abs(s).max() > np.finfo(np.float64).max / 2:
            s = s / 2
        gaps = CriticalGaps(s, y, np.array([0, len(s)]))
        assert gaps.n_pairs == ref_pairs(y, [0, len(y)]).shape[0]
        values = np.unique(np.abs(s[:, None] - s[None, :]))
        for x in np.concatenate((values, np.nextafter(values, 0), np.nextafter(values, np.inf))):
            if x > 0:
                assert gaps.at_least(x) == brute_gap_counts(s, y, x), (seed, x)


def test_serial_and_parallel_gap_counts_agree(monkeypatch):
    s, y, g = integer_queries(5)
    gaps = CriticalGaps(s, y, g)
    outs = parallel_then_serial(monkeypatch, lambda: [gaps.at_least(x) for x in (0.5, 1.0, 2.0, 6.0)])
    assert outs[0] == outs[1] and outs[0][0][0] > 0


@pytest.mark.parametrize("s, y, g, p50, p100", [
    ([0.3], [2.0], [0, 1], math.nan, math.nan),                              # one document
    ([0.3, 0.1, 0.2], [1.0, 1.0, 1.0], [0, 3], math.nan, math.nan),          # one label
    ([0.0, 0.0, 0.0, 0.0], [3.0, 2.0, 1.0, 0.0], [0, 4], 0.0, 0.0),          # every score tied
    ([-0.0, 0.0], [1.0, 0.0], [0, 2], 0.0, 0.0),                              # signed zeros tie
    ([3.0, 2.0, 1.0, 0.0], [3.0, 2.0, 1.0, 0.0], [0, 4], 1.0, 1.0),          # perfect
    ([0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0], [0, 4], 0.0, 0.0),          # reversed
    ([-1.7e308, 1.7e308], [1.0, 0.0], [0, 2], 0.0, 0.0),                      # beyond float64 differences
    ([2.0, 0.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0], [0, 2, 4], 1.0, 0.5),       # gap 2 right, gap 1 wrong
    ([], [], [0], math.nan, math.nan),                                        # no query
])
def test_pair_precision_of_degenerate_queries(s, y, g, p50, p100):
    assert_close(M.pair_precision_at(s, y, g, 50), p50)
    assert_close(M.pair_precision_at(s, y, g, 100), p100)


@pytest.mark.parametrize("bad, message", [
    (dict(scores=[math.nan, 1.0]), "scores must be finite; row 0 has nan"),
    (dict(scores=[1.0, math.inf]), "scores must be finite; row 1 has inf"),
    (dict(labels=[math.inf, 0.0]), "labels must be finite; row 0 has inf"),
    (dict(labels=[-1.0, 0.0]), "row 0 has -1.0"),
    (dict(percent=0), "got 0"),
])
def test_pair_precision_refuses_bad_values(bad, message):
    kw = dict(scores=[1.0, 0.0], labels=[1.0, 0.0], group_ptr=[0, 2], percent=50) | bad
    with pytest.raises(ValueError, match=message):
        M.pair_precision_at(**kw)
    with pytest.raises(TypeError, match="max_memory"):
        M.pair_precision_at([1.0, 0.0], [1.0, 0.0], [0, 2], 50, max_memory="1GB")


def _precision_by_histogram(s, y, percent) -> float:
    """Precision at K% of one query with integer scores from the histogram of the signed score
    differences (one correlation per pair of labels): an exact count for a query too large to list."""
    lo = int(s.min())
    width = int(s.max()) - lo + 1
    hist = {v: np.bincount((s[y == v] - lo).astype(np.int64), minlength=width) for v in np.unique(y)}
    signed = np.zeros(2 * width - 1, dtype=np.int64)  # index d + width - 1: s_preferred - s_other = d
    for hi in hist:
        for other in hist:
            if other < hi:
                signed += np.correlate(hist[hi], hist[other], "full")
    d = np.arange(-(width - 1), width)
    m = int(signed.sum())
    c = min(m, max(1, math.ceil(m * percent / 100 - 1e-9)))
    above = correct_above = 0
    for gap in range(width - 1, -1, -1):
        at = int(signed[np.abs(d) == gap].sum())
        correct_at = int(signed[d == gap].sum()) if gap else 0
        if above + at >= c:
            return (correct_above + (c - above) * correct_at / at) / c
        above, correct_above = above + at, correct_above + correct_at
    raise AssertionError("the cut lies within the pairs")


def test_a_200000_document_query_gets_its_precision_without_listing(monkeypatch):
    _refuse_pair_lists(monkeypatch)
    rng = np.random.default_rng(4)
    n = 200_000
    y = rng.integers(0, 5, size=n).astype(np.float64)
    s = np.round(200 * y + rng.normal(scale=300.0, size=n))  # integers: a few thousand distinct gaps
    g = np.array([0, n])
    M.pair_precision_at(s[:50], y[:50], [0, 50], 10)  # compile or load the cache outside the timed call
    for percent in (0.01, 10, 50, 100):
        t0 = time.perf_counter()
        got = M.pair_precision_at(s, y, g, percent, max_memory=0)
        elapsed = time.perf_counter() - t0
        # a complexity guard, not a speed limit: a sweep over the score gaps, tens of times below
        # this bound; listing the 2e10 pairs would take hours
        assert elapsed < 10.0
        assert_close(got, _precision_by_histogram(s, y, percent))
    assert_close(M.pair_precision_at(s, y, g, 100), 1.0 - M.rank_loss(s, y, g, kind="r1"))
