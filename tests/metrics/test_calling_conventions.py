"""The calling conventions of boostplug.metrics: ``qid=`` or ``group_ptr``, group sizes passed by
mistake, flags, huge cut-offs, plain numbers in messages, ERR's fixed grade scale, and the
pairwise metrics' memory limit."""

from __future__ import annotations

import time

import numpy as np
import pytest

from boostplug import metrics as M
from boostplug.groups import group_ptr_from_qid
from boostplug.pairs import count_critical_pairs, critical_pairs

S = np.array([0.3, 0.9, 0.1, 0.5, 0.2, 0.8, 0.7, 0.4, 0.6, 0.0])
Y = np.array([1.0, 2.0, 0.0, 1.0, 0.0, 3.0, 0.0, 1.0, 2.0, 0.0])
QID = np.array([7, 7, 7, 2, 2, 2, 2, 5, 5, 5])  # contiguous, not sorted
GP = np.array([0, 3, 7, 10])

# every public metric, called with the queries given as **groups (group_ptr=... or qid=...)
CALLS = {
    "ndcg": lambda s, y, pq=False, **g: M.ndcg(s, y, k=3, per_query=pq, **g),
    "dcg": lambda s, y, pq=False, **g: M.dcg(s, y, k=3, per_query=pq, **g),
    "average_precision": lambda s, y, pq=False, **g: M.average_precision(s, y, per_query=pq, **g),
    "precision": lambda s, y, pq=False, **g: M.precision(s, y, k=2, per_query=pq, **g),
    "reciprocal_rank": lambda s, y, pq=False, **g: M.reciprocal_rank(s, y, per_query=pq, **g),
    "err": lambda s, y, pq=False, **g: M.err(s, y, k=3, per_query=pq, **g),
    "rank_loss": lambda s, y, pq=False, **g: M.rank_loss(s, y, per_query=pq, **g),
    "misordered_pairs": lambda s, y, pq=False, **g: M.misordered_pairs(s, y, **g),
    "pair_precision_at": lambda s, y, pq=False, **g: M.pair_precision_at(s, y, percent=50, **g),
}
NAMES = ["ndcg@3", "dcg", "map", "map@2", "p@2", "mrr", "err@3", "r1", "r2"]
WITH_PER_QUERY = [n for n in CALLS if n not in ("misordered_pairs", "pair_precision_at")]


# ------------------------------------------------------------------ qid= as well as group_ptr


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_metric_accepts_qid_like_group_ptr(name):
    call = CALLS[name]
    assert call(S, Y, qid=QID) == call(S, Y, group_ptr=GP)
    assert call(S, Y, qid=QID.astype(str)) == call(S, Y, group_ptr=GP)  # any id type, as groups does
    if name in WITH_PER_QUERY:
        np.testing.assert_array_equal(call(S, Y, True, qid=QID), call(S, Y, True, group_ptr=GP))


@pytest.mark.parametrize("name", NAMES)
def test_by_name_callables_accept_qid(name):
    fn = M.by_name(name)
    assert fn(S, Y, qid=QID) == fn(S, Y, GP)
    np.testing.assert_array_equal(fn(S, Y, qid=QID, per_query=True), fn(S, Y, GP, per_query=True))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_exactly_one_of_group_ptr_and_qid(name):
    call = CALLS[name]
    with pytest.raises(ValueError, match="either group_ptr or qid, not both"):
        call(S, Y, group_ptr=GP, qid=QID)
    with pytest.raises(ValueError, match=r"group_ptr=\.\.\. \(offsets\) or qid=\.\.\."):
        call(S, Y)


def test_qid_must_be_contiguous_and_as_long_as_the_scores():
    with pytest.raises(ValueError, match="qid 7 is not contiguous"):
        M.ndcg(S, Y, qid=[7, 7, 7, 2, 2, 7, 2, 5, 5, 5])
    with pytest.raises(ValueError, match="qid has length 3 but there are 10 documents"):
        M.ndcg(S, Y, qid=[1, 1, 2])


@pytest.mark.parametrize("name", sorted(CALLS))
def test_group_sizes_passed_as_group_ptr_name_the_converter(name):
    with pytest.raises(ValueError, match=r"looks like group sizes.*boostplug\.groups\.group_ptr_from_sizes"):
        CALLS[name](S, Y, group_ptr=[3, 4, 3])
    with pytest.raises(ValueError, match=r"group_ptr_from_sizes"):
        M.by_name("ndcg@10")(S, Y, [10])


def test_a_bad_group_ptr_that_is_not_sizes_gets_no_sizes_hint():
    with pytest.raises(ValueError, match="group_ptr must start at 0") as info:
        M.ndcg(S, Y, [1, 3, 10])  # sums to 14, not 10: not sizes either
    assert "group sizes" not in str(info.value)


# ------------------------------------------------------------------ flags, huge k, plain numbers


@pytest.mark.parametrize("name", WITH_PER_QUERY)
@pytest.mark.parametrize("flag", ["yes", 1, None, np.float64(1.0)])
def test_per_query_must_be_a_bool(name, flag):
    with pytest.raises(TypeError, match="per_query must be True or False"):
        CALLS[name](S, Y, flag, group_ptr=GP)


@pytest.mark.parametrize("name", NAMES)
def test_by_name_per_query_must_be_a_bool(name):
    with pytest.raises(TypeError, match="per_query must be True or False; got 'yes'"):
        M.by_name(name)(S, Y, GP, per_query="yes")
    assert isinstance(M.by_name(name)(S, Y, GP, per_query=np.bool_(False)), float)


@pytest.mark.parametrize("fn", [M.ndcg, M.dcg, M.average_precision, M.precision, M.reciprocal_rank, M.err])
def test_a_cut_off_beyond_int64_is_a_value_error(fn):
    with pytest.raises(ValueError, match=r"k = 10{30} does not fit in int64"):
        fn(S, Y, GP, 10**30)
    # a cut-off larger than every query but representable is the whole list
    big = int(np.iinfo(np.int64).max)
    kw = {"divisor": "min"} if fn is M.precision else {}  # P@k's default divides by k itself
    assert fn(S, Y, GP, big, **kw) == fn(S, Y, GP, 10, **kw)


def test_a_metric_name_with_a_huge_cut_off_is_a_value_error():
    with pytest.raises(ValueError, match="does not fit in int64"):
        M.by_name("ndcg@" + "9" * 30)
    with pytest.raises(ValueError, match="does not fit in int64"):
        M.parse_name("map@" + "9" * 5000)  # beyond Python's int-from-str digit limit
    assert M.parse_name("ndcg@0009") == ("ndcg", 9)


@pytest.mark.parametrize("name", ["ndcg@\u0665", "map@\uff15", "p@1\u0665"])  # Arabic-Indic, full-width digits
def test_a_metric_name_takes_ascii_digits_only(name):
    with pytest.raises(ValueError, match=repr(name)):
        M.parse_name(name)


@pytest.mark.parametrize("call, shown", [
    (lambda: M.ndcg(np.array([0.1, -np.inf]), [0, 1], [0, 2]), "row 1 has -inf"),
    (lambda: M.ndcg([0.1, 0.2], np.array([0.0, -1.0]), [0, 2]), "row 1 has -1.0"),
    (lambda: M.ndcg([0.1, 0.2], [0, 1], [0, 2], empty=np.float64(2.0)), "got 2.0"),
    (lambda: M.average_precision([0.1, 0.2], [0, 1], [0, 2], threshold=np.float64(np.nan)), "got nan"),
    (lambda: M.ndcg([0.1, 0.2], [0, 1], [0, 2], k=np.int64(0)), "got 0"),
    (lambda: M.ndcg([0.1, 0.2], [0, 1], [0, 2], k=np.float64(3.0)), "got 3.0"),
    (lambda: M.err([0.1, 0.2], [0, 1], [0, 2], max_grade=np.float64(-1.0)), "got -1.0"),
    (lambda: M.pair_precision_at([0.1, 0.2], [0, 1], [0, 2], np.float64(101.0)), "got 101.0"),
])
def test_messages_show_plain_numbers(call, shown):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert shown in str(info.value) and "np." not in str(info.value)


def test_bad_option_types_are_type_errors_not_crashes():
    with pytest.raises(TypeError, match="percent"):
        M.pair_precision_at(S, Y, GP, "50")
    with pytest.raises(TypeError, match="percent"):
        M.pair_precision_at(S, Y, GP)  # percent is required
    with pytest.raises(ValueError, match="percent"):
        M.pair_precision_at(S, Y, GP, 10**400)
    with pytest.raises(ValueError, match="empty"):
        M.ndcg(S, Y, GP, empty=10**400)
    with pytest.raises(ValueError, match="threshold"):
        M.average_precision(S, Y, GP, threshold=10**400)
    with pytest.raises(ValueError, match="max_grade"):
        M.err(S, Y, GP, max_grade=10**400)


# ------------------------------------------------------------------ ERR's grade scale


def test_err_of_a_query_does_not_depend_on_the_other_queries():
    one = M.err([2.0, 1.0, 0.0], [1, 0, 0], [0, 3])
    with_others = M.err([2.0, 1.0, 0.0, 1.0, 0.0], [1, 0, 0, 4, 0], [0, 3, 5], per_query=True)
    assert one == with_others[0] == pytest.approx(1 / 16)  # R_1 = (2^1 - 1) / 2^4
    assert M.ERR_MAX_GRADE == 4.0


def test_err_label_above_the_grade_scale_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"label 5 \(row 1\) exceeds max_grade=4.*pass max_grade="):
        M.err([1.0, 0.0], [0, 5], [0, 2])
    assert M.err([1.0, 0.0], [5, 0], [0, 2], max_grade=5) == pytest.approx(31 / 32)
    with pytest.raises(TypeError, match="max_grade must be a finite number >= 0; got None"):
        M.err([1.0, 0.0], [0, 1], [0, 2], max_grade=None)


# ------------------------------------------------------------------ pairwise memory limit


def _big_query(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.integers(0, 5, size=n).astype(np.float64), np.array([0, n])


# The pairwise metrics count the critical pairs per query (tests/metrics/test_pairwise.py checks
# 100,000- and 200,000-document queries); listing them is refused before allocating.
def test_one_huge_query_is_counted_and_its_pair_list_refused_quickly(monkeypatch):
    from boostplug import pairs

    monkeypatch.setattr(pairs, "PAIR_MEMORY_LIMIT", 8 * 2**30)  # refused on any machine, however much it has
    s, y, g = _big_query(100_000)
    assert 0.0 < M.pair_precision_at(s, y, g, 10) < 1.0
    start = time.perf_counter()
    with pytest.raises(M.PairMemoryError) as info:
        critical_pairs(y, g)
    # a complexity guard, not a speed limit: the refusal counts the pairs in O(n log n), far below this
    # bound on a busy machine; the O(n^2) pair listing it replaced took minutes and 60 GiB
    assert time.perf_counter() - start < 30.0
    msg = str(info.value)
    assert "query 0 with 100,000 documents" in msg and "pairs" in msg
    assert "GiB" in msg and "limit of 8.0 GiB" in msg
    assert isinstance(info.value, ValueError) and isinstance(info.value, MemoryError)


def test_the_pair_count_estimate_is_exact():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, size=60).astype(np.float64)
    g = np.array([0, 1, 20, 21, 60])
    brute = [sum(y[i] > y[j] for i in range(g[q], g[q + 1]) for j in range(g[q], g[q + 1]))
             for q in range(len(g) - 1)]
    np.testing.assert_array_equal(count_critical_pairs(y, g), brute)


def test_the_memory_limit_is_a_keyword_and_normal_sizes_work():
    s, y, g = _big_query(2_000)
    n_pairs = int(count_critical_pairs(y, g).sum())
    assert 1_000_000 < n_pairs < 2_000_000
    assert 0.0 < M.pair_precision_at(s, y, g, 50) < 1.0  # ~110 MB: under the default limit
    # counted, not listed: no refusal; explicit pairs are listed and keep the guard
    assert M.pair_precision_at(s, y, g, 50, max_memory=10_000_000) == M.pair_precision_at(s, y, g, 50)
    pairs = critical_pairs(y, g)
    with pytest.raises(M.PairMemoryError, match=f"{n_pairs:,} preference pairs"):
        M.pair_precision_at(s, y, g, 50, pairs=pairs, max_memory=10_000_000)
    assert M.pair_precision_at(s, y, g, 50, pairs=pairs, max_memory=n_pairs * 74) == pytest.approx(
        M.pair_precision_at(s, y, g, 50), abs=1e-12)
    assert 0.0 < M.rank_loss(s, y, g, max_memory=10_000_000) < 1.0  # counted, not listed: no refusal
    with pytest.raises(TypeError, match="max_memory"):
        M.rank_loss(s, y, g, max_memory="1GB")
    # explicit pairs are counted too
    pairs = np.zeros((1000, 2), dtype=np.int64)
    pairs[:, 1] = 1
    with pytest.raises(M.PairMemoryError, match="1,000 preference pairs"):
        M.rank_loss(s, y, g, pairs=pairs, max_memory=1000)
