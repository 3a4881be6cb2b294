"""boostplug.metrics against plain-Python brute force, scikit-learn, LightGBM and XGBoost."""

from __future__ import annotations

import itertools
import math
from typing import Callable, Sequence

import numpy as np
import pytest

from boostplug import metrics as M
from boostplug.pairs import critical_pairs
from tests._helpers import random_ranking

SEEDS = range(12)

# ---------------------------------------------------------------------------------------------
# Brute force: one query at a time, plain Python lists, sorted(), loops.
# ---------------------------------------------------------------------------------------------


def bf_queries(scores, labels, group_ptr):
    for q in range(len(group_ptr) - 1):
        a, b = int(group_ptr[q]), int(group_ptr[q + 1])
        yield [float(x) for x in scores[a:b]], [float(x) for x in labels[a:b]]


def bf_orders(s: list[float], y: list[float], ties: str) -> list[list[int]]:
    """Every ranking the tie convention averages over (one for 'order' and 'worst')."""
    n = len(s)
    if ties == "order":
        return [sorted(range(n), key=lambda i: (-s[i], i))]
    if ties == "worst":
        return [sorted(range(n), key=lambda i: (-s[i], y[i], i))]
    groups: list[list[int]] = []
    for i in sorted(range(n), key=lambda i: -s[i]):
        if groups and s[groups[-1][0]] == s[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    out = []
    for perms in itertools.product(*[itertools.permutations(g) for g in groups]):
        out.append([i for p in perms for i in p])
    return out


def bf_expect(s, y, ties, fn: Callable[[list[float]], float]) -> float:
    """Mean of fn(labels in ranked order) over the rankings of the tie convention."""
    orders = bf_orders(s, y, ties)
    return sum(fn([y[i] for i in o]) for o in orders) / len(orders)


def bf_gain(r: float, gain) -> float:
    if isinstance(gain, str):
        return 2.0 ** r - 1.0 if gain == "exp2" else r
    return float(gain[int(r)])


def bf_disc(rank: int, discount: str) -> float:
    if discount == "log2":
        return 1.0 / math.log2(rank + 1)
    return 1.0 if rank <= 2 else 1.0 / math.log2(rank)


def bf_dcg_list(ranked: list[float], k, gain, discount) -> float:
    cut = len(ranked) if k is None else min(k, len(ranked))
    return sum(bf_gain(ranked[i], gain) * bf_disc(i + 1, discount) for i in range(cut))


def bf_ndcg_q(s, y, k, gain, discount, empty, ties) -> float:
    ideal_gains = sorted((bf_gain(r, gain) for r in y), reverse=True)
    cut = len(y) if k is None else min(k, len(y))
    idcg = sum(ideal_gains[i] * bf_disc(i + 1, discount) for i in range(cut))
    if idcg == 0:
        return math.nan if empty == "skip" else float(empty)
    return bf_expect(s, y, ties, lambda r: bf_dcg_list(r, k, gain, discount)) / idcg


def bf_ap_q(s, y, k, threshold, empty, ties) -> float:
    n_rel = sum(1 for r in y if r >= threshold)
    if n_rel == 0:
        return math.nan if empty == "skip" else float(empty)
    cut = len(y) if k is None else min(k, len(y))
    norm = n_rel if k is None else min(k, n_rel)

    def ap(ranked):
        hits, total = 0, 0.0
        for i in range(cut):
            if ranked[i] >= threshold:
                hits += 1
                total += hits / (i + 1)
        return total / norm

    return bf_expect(s, y, ties, ap)


def bf_precision_q(s, y, k, threshold, ties, divisor="k") -> float:
    d = k if divisor == "k" else min(k, len(y))
    return bf_expect(s, y, ties, lambda r: sum(1 for x in r[:k] if x >= threshold) / d)


def bf_rr_q(s, y, k, threshold, empty, ties) -> float:
    if not any(r >= threshold for r in y):
        return math.nan if empty == "skip" else float(empty)
    cut = len(y) if k is None else min(k, len(y))

    def rr(ranked):
        for i in range(cut):
            if ranked[i] >= threshold:
                return 1.0 / (i + 1)
        return 0.0

    return bf_expect(s, y, ties, rr)


def bf_err_q(s, y, k, max_grade, ties) -> float:
    cut = len(y) if k is None else min(k, len(y))

    def e(ranked):
        p, total = 1.0, 0.0
        for i in range(cut):
            R = (2.0 ** ranked[i] - 1.0) / 2.0 ** max_grade
            total += p * R / (i + 1)
            p *= 1.0 - R
        return total

    return bf_expect(s, y, ties, e)


def bf_pairs(labels, group_ptr) -> list[tuple[int, int]]:
    out = []
    for q in range(len(group_ptr) - 1):
        rows = range(int(group_ptr[q]), int(group_ptr[q + 1]))
        for i in rows:
            for j in rows:
                if labels[i] > labels[j]:
                    out.append((i, j))
    return out


def bf_mean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def assert_per_query(got: np.ndarray, want: list[float]) -> None:
    np.testing.assert_allclose(got, np.array(want, dtype=np.float64), rtol=1e-12, atol=1e-12, equal_nan=True)


def small(seed: int, **kw):
    kw.setdefault("max_docs", 7)  # keeps the brute-force tie enumeration small (<= 7! orders)
    return random_ranking(np.random.default_rng(seed), **kw)


# ---------------------------------------------------------------------------------------------
# Brute-force agreement over every convention combination
# ---------------------------------------------------------------------------------------------

GAINS = ["exp2", "linear", "label_gain"]
LABEL_GAIN = [0.0, 1.0, 5.0, 20.0]


@pytest.mark.parametrize("ties", ["order", "average", "worst"])
@pytest.mark.parametrize("discount", ["log2", "letor"])
@pytest.mark.parametrize("gain", GAINS)
@pytest.mark.parametrize("k", [None, 1, 3, 10])
def test_ndcg_dcg_match_brute_force(k, gain, discount, ties):
    g = LABEL_GAIN if gain == "label_gain" else gain
    for seed in SEEDS:
        s, y, gp = small(seed)
        for empty in (1.0, 0.0, "skip"):
            want = [bf_ndcg_q(qs, qy, k, g, discount, empty, ties) for qs, qy in bf_queries(s, y, gp)]
            got = M.ndcg(s, y, gp, k, gain=g, discount=discount, empty=empty, ties=ties, per_query=True)
            assert_per_query(got, want)
            assert M.ndcg(s, y, gp, k, gain=g, discount=discount, empty=empty, ties=ties) == \
                pytest.approx(bf_mean(want), rel=1e-12)
        want_dcg = [bf_expect(qs, qy, ties, lambda r: bf_dcg_list(r, k, g, discount))
                    for qs, qy in bf_queries(s, y, gp)]
        assert_per_query(M.dcg(s, y, gp, k, gain=g, discount=discount, ties=ties, per_query=True), want_dcg)


@pytest.mark.parametrize("ties", ["order", "average", "worst"])
@pytest.mark.parametrize("k", [None, 1, 2, 5])
def test_binary_metrics_match_brute_force(k, ties):
    for seed in SEEDS:
        s, y, gp = small(seed)
        for threshold in (1.0, 2.0):
            for empty in (1.0, 0.0, "skip"):
                want = [bf_ap_q(qs, qy, k, threshold, empty, ties) for qs, qy in bf_queries(s, y, gp)]
                got = M.average_precision(s, y, gp, k, threshold=threshold, empty=empty, ties=ties, per_query=True)
                assert_per_query(got, want)
                want = [bf_rr_q(qs, qy, k, threshold, empty, ties) for qs, qy in bf_queries(s, y, gp)]
                got = M.reciprocal_rank(s, y, gp, k, threshold=threshold, empty=empty, ties=ties, per_query=True)
                assert_per_query(got, want)
            if k is not None:
                want = [bf_precision_q(qs, qy, k, threshold, ties) for qs, qy in bf_queries(s, y, gp)]
                got = M.precision(s, y, gp, k, threshold=threshold, ties=ties, per_query=True)
                assert_per_query(got, want)
                assert M.precision(s, y, gp, k, threshold=threshold, ties=ties) == pytest.approx(bf_mean(want))
                want = [bf_precision_q(qs, qy, k, threshold, ties, "min") for qs, qy in bf_queries(s, y, gp)]
                got = M.precision(s, y, gp, k, threshold=threshold, divisor="min", ties=ties, per_query=True)
                assert_per_query(got, want)


@pytest.mark.parametrize("ties", ["order", "worst"])
@pytest.mark.parametrize("k", [None, 1, 3])
def test_err_matches_brute_force(k, ties):
    for seed in SEEDS:
        s, y, gp = small(seed)
        for max_grade in (None, 3.0, 5.5):
            top = 4.0 if max_grade is None else max_grade  # None: the default, M.ERR_MAX_GRADE
            kw = {} if max_grade is None else {"max_grade": max_grade}
            want = [bf_err_q(qs, qy, k, top, ties) for qs, qy in bf_queries(s, y, gp)]
            got = M.err(s, y, gp, k, ties=ties, per_query=True, **kw)
            assert_per_query(got, want)


def test_err_known_value():
    # grades 2, 1 with max grade 2: R = 3/4, 1/4; ERR = 3/4 + (1/4)(1/4)/2
    assert M.err([1.0, 0.0], [2, 1], [0, 2], max_grade=2) == pytest.approx(0.75 + 1 / 32)


@pytest.mark.parametrize("kind", ["r1", "r2"])
def test_rank_loss_and_misordered_match_brute_force(kind):
    for seed in SEEDS:
        s, y, gp = small(seed, max_docs=9)
        pairs = bf_pairs(y, gp)
        bad = [1.0 if s[i] < s[j] else ((1.0 if kind == "r1" else 0.5) if s[i] == s[j] else 0.0) for i, j in pairs]
        assert M.rank_loss(s, y, gp, kind=kind) == pytest.approx(sum(bad) / len(bad), rel=1e-12)
        assert M.misordered_pairs(s, y, gp) == sum(1 for i, j in pairs if s[i] < s[j])
        per_q = []
        for q in range(len(gp) - 1):
            mine = [b for (i, _), b in zip(pairs, bad) if gp[q] <= i < gp[q + 1]]
            per_q.append(sum(mine) / len(mine) if mine else math.nan)
        assert_per_query(M.rank_loss(s, y, gp, kind=kind, per_query=True), per_q)
        # Explicit pairs (the same ones, shuffled) give the same loss.
        shuffled = np.array(pairs)[np.random.default_rng(seed).permutation(len(pairs))]
        assert M.rank_loss(s, y, gp, kind=kind, pairs=shuffled) == pytest.approx(sum(bad) / len(bad))


def test_rank_loss_uses_the_shared_critical_pairs(rng):
    s, y, gp = random_ranking(rng, n_queries=8)
    p = critical_pairs(y, gp)
    assert M.rank_loss(s, y, gp, kind="r1", pairs=p) == M.rank_loss(s, y, gp, kind="r1")


def bf_pair_precision(s, pairs, percent) -> float:
    """Fraction of strictly correct pairs among the top ceil(K% m) by |gap| (distinct gaps only)."""
    ranked = sorted(pairs, key=lambda p: -abs(s[p[0]] - s[p[1]]))
    c = math.ceil(len(pairs) * percent / 100 - 1e-9)
    return sum(1 for i, j in ranked[:c] if s[i] > s[j]) / c


@pytest.mark.parametrize("percent", [1, 10, 33.3, 50, 100])
def test_pair_precision_matches_brute_force_on_distinct_gaps(percent):
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        _, y, gp = small(seed, max_docs=9)
        s = rng.normal(size=y.shape[0])  # continuous: all gaps distinct
        pairs = bf_pairs(y, gp)
        assert M.pair_precision_at(s, y, gp, percent) == pytest.approx(bf_pair_precision(s, pairs, percent))


def test_pair_precision_at_100_is_one_minus_r1_and_ignores_pair_order():
    for seed in SEEDS:
        s, y, gp = small(seed, max_docs=9)  # many tied scores: equal gaps across the cut
        assert M.pair_precision_at(s, y, gp, 100) == pytest.approx(1.0 - M.rank_loss(s, y, gp, kind="r1"))
        p = critical_pairs(y, gp)
        perm = np.random.default_rng(seed).permutation(p.shape[0])
        for percent in (5, 20, 50):
            assert M.pair_precision_at(s, y, gp, percent, pairs=p[perm]) == \
                pytest.approx(M.pair_precision_at(s, y, gp, percent, pairs=p), abs=1e-12)


def test_pair_precision_splits_an_equal_gap_group_at_the_cut():
    # Two pairs with the same gap 1.0, one right, one wrong; the top 50% holds half of each.
    s = np.array([1.0, 0.0, 0.0, 1.0])
    y = np.array([1.0, 0.0, 1.0, 0.0])
    assert M.pair_precision_at(s, y, [0, 2, 4], 50) == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------
# Invariances and degenerate inputs
# ---------------------------------------------------------------------------------------------


def test_concatenating_queries_equals_computing_them_apart(rng):
    s, y, gp = random_ranking(rng, n_queries=10)
    whole = M.ndcg(s, y, gp, 5, ties="average", per_query=True)
    for q in range(len(gp) - 1):
        a, b = gp[q], gp[q + 1]
        assert M.ndcg(s[a:b], y[a:b], [0, b - a], 5, ties="average") == pytest.approx(whole[q])


def test_shift_and_positive_scale_change_nothing(rng):
    s, y, gp = random_ranking(rng, n_queries=10)
    for name in ("ndcg@3", "map", "mrr", "err@5", "p@2", "r1", "r2"):
        fn = M.by_name(name)
        assert fn(s * 4.0 + 2.5, y, gp, per_query=True) == pytest.approx(fn(s, y, gp, per_query=True), nan_ok=True)


def test_perfect_and_reversed_rankings():
    y = np.array([3.0, 2.0, 1.0, 0.0])
    gp = [0, 4]
    assert M.ndcg(y, y, gp) == 1.0 and M.average_precision(y, y, gp) == 1.0
    assert M.rank_loss(y, y, gp, kind="r1") == 0.0 and M.rank_loss(-y, y, gp) == 1.0
    assert M.misordered_pairs(-y, y, gp) == 6
    # All scores tied: R1 counts every pair, R2 half of each.
    z = np.zeros(4)
    assert M.rank_loss(z, y, gp, kind="r1") == 1.0 and M.rank_loss(z, y, gp, kind="r2") == 0.5
    assert M.misordered_pairs(z, y, gp) == 0


def test_single_document_and_all_zero_queries():
    s = np.array([0.3, 0.1, 0.2, 0.9])
    y = np.array([2.0, 0.0, 0.0, 1.0])
    gp = [0, 1, 3, 4]  # single doc (relevant), all-zero pair, single doc (relevant)
    np.testing.assert_array_equal(M.ndcg(s, y, gp, per_query=True), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(M.ndcg(s, y, gp, empty=0.0, per_query=True), [1.0, 0.0, 1.0])
    skipped = M.ndcg(s, y, gp, empty="skip", per_query=True)
    assert np.isnan(skipped[1]) and M.ndcg(s, y, gp, empty="skip") == 1.0
    assert math.isnan(M.ndcg([0.0], [0.0], [0, 1], empty="skip"))
    assert math.isnan(M.rank_loss([0.0, 1.0], [1.0, 1.0], [0, 2]))  # no critical pair
    assert np.isnan(M.rank_loss(s, y, gp, per_query=True)).all()


@pytest.mark.parametrize("ties", ["order", "average", "worst"])
def test_labels_up_to_60_with_exp2_gain_stay_finite_and_exact(ties):
    for seed in range(30):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 61, size=40).astype(np.float64)
        y[:3] = 60.0
        s = np.round(rng.normal(size=40), 1)
        gp = [0, 7, 20, 40]
        for discount in ("log2", "letor"):
            for k in (10, None):
                got = M.ndcg(s, y, gp, k, discount=discount, ties=ties, per_query=True)
                assert np.all(np.isfinite(got)) and np.all((got >= 0) & (got <= 1))
    # gains 2^60 beside 2^12: the DCG and ideal DCG add the same terms in different orders
    # (this ranking once came out at 1 + 2.2e-16); never above 1.
    assert M.ndcg([4, 2, 8, 2, 9, 2, 8], [30, 14, 56, 12, 60, 13, 51], [0, 7]) <= 1.0
    rng = np.random.default_rng(5)
    y = rng.integers(0, 61, size=40).astype(np.float64)
    y[:3] = 60.0
    s = np.round(rng.normal(size=40), 1)
    gp = [0, 7, 20, 40]
    got = M.ndcg(s, y, gp, 10, ties=ties, per_query=True)
    assert_per_query(got, [bf_ndcg_q(qs, qy, 10, "exp2", "log2", 1.0, ties) for qs, qy in bf_queries(s, y, gp)])
    d = M.dcg(s, y, gp, per_query=True)
    assert np.all(np.isfinite(d)) and d.max() > 2.0 ** 59
    assert np.all(np.isfinite(M.err(s, y, gp, max_grade=60, per_query=True)))


@pytest.mark.parametrize("ties", ["order", "average", "worst"])
def test_parallel_drivers_equal_serial_drivers(ties, monkeypatch):
    import numba

    from boostplug._core import dispatch

    s, y, gp = random_ranking(np.random.default_rng(3), n_queries=40, max_docs=15)
    calls = {
        "ndcg@5": lambda: M.ndcg(s, y, gp, 5, ties=ties, per_query=True),
        "map@5": lambda: M.average_precision(s, y, gp, 5, ties=ties, per_query=True),
        "p@3": lambda: M.precision(s, y, gp, 3, ties=ties, per_query=True),
        "mrr": lambda: M.reciprocal_rank(s, y, gp, ties=ties, per_query=True),
    }
    if ties != "average":
        calls["err"] = lambda: M.err(s, y, gp, ties=ties, per_query=True)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread: the parallel kernels never run")
    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 10**15)
        serial = {name: call() for name, call in calls.items()}
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0)
        parallel = {name: call() for name, call in calls.items()}
    finally:
        numba.set_num_threads(previous)
    for name in calls:
        np.testing.assert_array_equal(parallel[name], serial[name], err_msg=name)


def test_average_ties_is_between_worst_and_best(rng):
    for _ in range(5):
        s, y, gp = random_ranking(rng, n_queries=8, tie_prob=0.6)
        worst = M.ndcg(s, y, gp, 3, ties="worst", per_query=True)
        avg = M.ndcg(s, y, gp, 3, ties="average", per_query=True)
        best = M.ndcg(s + 1e-9 * y, y, gp, 3, per_query=True)  # ties broken best label first
        assert np.all(worst <= avg + 1e-12) and np.all(avg <= best + 1e-12)


# ---------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, parsed", [
    ("ndcg", ("ndcg", None)), ("NDCG@10", ("ndcg", 10)), (" map@5 ", ("map", 5)), ("map", ("map", None)),
    ("precision@5", ("precision", 5)), ("p@5", ("precision", 5)), ("mrr", ("mrr", None)),
    ("err@10", ("err", 10)), ("r1", ("r1", None)), ("r2", ("r2", None)), ("dcg@3", ("dcg", 3)),
])
def test_parse_name(name, parsed):
    assert M.parse_name(name) == parsed


def test_by_name_uses_the_default_conventions(rng):
    s, y, gp = random_ranking(rng, n_queries=10)
    pairs = [
        ("ndcg@10", M.ndcg(s, y, gp, 10)), ("ndcg", M.ndcg(s, y, gp)), ("map", M.average_precision(s, y, gp)),
        ("map@3", M.average_precision(s, y, gp, 3)), ("p@2", M.precision(s, y, gp, 2)),
        ("mrr", M.reciprocal_rank(s, y, gp)), ("err@5", M.err(s, y, gp, 5)),
        ("r1", M.rank_loss(s, y, gp, kind="r1")), ("r2", M.rank_loss(s, y, gp, kind="r2")),
    ]
    for name, want in pairs:
        fn = M.by_name(name)
        assert fn(s, y, gp) == want
        assert fn.__name__ == name
        per_q = fn(s, y, gp, per_query=True)
        assert per_q.shape == (len(gp) - 1,)
    assert not M.higher_is_better("r1") and M.higher_is_better("ndcg@10")


@pytest.mark.parametrize("name", ["ndcg@0", "ndcg@", "foo", "precision", "r1@5", "ndcg@-1", "ndcg@10@3", ""],
                         ids=lambda n: repr(n))
def test_by_name_rejects_bad_names_listing_the_valid_ones(name):
    with pytest.raises(ValueError, match="valid names: ndcg") as e:
        M.by_name(name)
    assert repr(name) in str(e.value)


# ---------------------------------------------------------------------------------------------
# Bad input: ValueError naming the offending value
# ---------------------------------------------------------------------------------------------

S = np.array([0.5, 0.1, 0.9])
Y = np.array([1.0, 0.0, 2.0])
G = np.array([0, 3])

BAD_CALLS = [
    ("nan score", lambda: M.ndcg([0.5, np.nan, 0.9], Y, G), "nan"),
    ("inf score", lambda: M.average_precision([0.5, np.inf, 0.9], Y, G), "inf"),
    ("negative label", lambda: M.ndcg(S, [1.0, -2.0, 0.0], G), "-2.0"),
    ("length mismatch", lambda: M.ndcg(S, [1.0, 0.0], G), "3 and 2"),
    ("group_ptr end", lambda: M.ndcg(S, Y, [0, 2]), "ends at 2"),
    ("k zero", lambda: M.ndcg(S, Y, G, 0), "got 0"),
    ("k negative precision", lambda: M.precision(S, Y, G, -1), "got -1"),
    ("k none precision", lambda: M.precision(S, Y, G, None), "None"),
    ("negative label_gain", lambda: M.ndcg(S, Y, G, gain=[0.0, -1.0, 3.0]), "label_gain[1] = -1"),
    ("bad divisor", lambda: M.precision(S, Y, G, 2, divisor="n"), "'n'"),
    ("unknown gain", lambda: M.ndcg(S, Y, G, gain="cubic"), "'cubic'"),
    ("unknown discount", lambda: M.dcg(S, Y, G, discount="ln"), "'ln'"),
    ("unknown ties", lambda: M.ndcg(S, Y, G, ties="random"), "'random'"),
    ("unknown empty", lambda: M.ndcg(S, Y, G, empty="zero"), "'zero'"),
    ("empty out of range", lambda: M.average_precision(S, Y, G, empty=2.0), "2.0"),
    ("label beyond label_gain", lambda: M.ndcg(S, Y, G, gain=[0.0, 1.0]), "label 2"),
    ("non-integer label with label_gain", lambda: M.ndcg(S, [0.5, 0.0, 1.0], G, gain=[0.0, 1.0, 3.0]), "0.5"),
    ("exp2 overflow", lambda: M.ndcg(S, [2000.0, 0.0, 1.0], G), "2000.0"),
    ("err label above max_grade", lambda: M.err(S, Y, G, max_grade=1), "label 2"),
    ("err average ties", lambda: M.err(S, Y, G, ties="average"), "'average'"),
    ("rank_loss kind", lambda: M.rank_loss(S, Y, G, kind="r3"), "'r3'"),
    ("pair out of range", lambda: M.rank_loss(S, Y, G, pairs=[[0, 7]]), "[0, 7]"),
    ("cross-query pair per query", lambda: M.rank_loss(S, Y, [0, 1, 3], pairs=[[0, 2]], per_query=True),
     "[0, 2]"),
    ("percent zero", lambda: M.pair_precision_at(S, Y, G, 0), "got 0"),
    ("percent above 100", lambda: M.pair_precision_at(S, Y, G, 150), "150"),
    ("threshold nan", lambda: M.precision(S, Y, G, 2, threshold=float("nan")), "nan"),
]


@pytest.mark.parametrize("call, needle", [(c, n) for _, c, n in BAD_CALLS], ids=[i for i, _, _ in BAD_CALLS])
def test_bad_input_raises_value_error_naming_the_value(call, needle):
    with pytest.raises(ValueError) as e:
        call()
    assert needle in str(e.value)


def test_non_integer_k_is_a_type_error():
    with pytest.raises(TypeError, match="2.5"):
        M.ndcg(S, Y, G, 2.5)


# ---------------------------------------------------------------------------------------------
# References: scikit-learn, LightGBM, XGBoost
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [None, 1, 3, 5])
def test_ndcg_matches_sklearn_linear_gain_averaged_ties(k):
    """scikit-learn's ndcg_score (linear gain, log2 discount, ties averaged), per query.

    Compared only where sklearn defines it the same way: it raises for single-document
    queries, and scores 0 an all-zero query (that is boostplug's ``empty=0.0``).
    """
    from sklearn.metrics import ndcg_score

    compared = 0
    for seed in SEEDS:
        s, y, gp = small(seed, n_queries=8, max_docs=12)
        ours = M.ndcg(s, y, gp, k, gain="linear", ties="average", empty=0.0, per_query=True)
        for q in range(len(gp) - 1):
            a, b = gp[q], gp[q + 1]
            if b - a < 2:
                continue
            ref = ndcg_score(y[None, a:b], s[None, a:b], k=k)
            assert ours[q] == pytest.approx(ref, abs=1e-12)
            compared += 1
    assert compared > 50


def _lgb_eval(s, y, gp, rng):
    lgb = pytest.importorskip("lightgbm")
    n = y.shape[0]
    X = rng.normal(size=(n, 2))
    ds = lgb.Dataset(X, y, group=np.diff(gp), init_score=s, params={"verbose": -1})
    rec: dict = {}
    params = {"objective": "regression", "metric": ["ndcg", "map"], "eval_at": [1, 3, 5, 10],
              "learning_rate": 1e-12, "min_data_in_leaf": n + 1, "verbose": -1, "num_threads": 1}
    bst = lgb.train(params, ds, num_boost_round=1, valid_sets=[ds], valid_names=["t"],
                    callbacks=[lgb.record_evaluation(rec)])
    # The one tree is a single leaf: LightGBM evaluates s + c with the same ranking and ties.
    c = bst.predict(X, raw_score=True)
    assert np.ptp(c) == 0.0
    shifted = s + c
    assert np.array_equal(np.argsort(-shifted, kind="stable"), np.argsort(-s, kind="stable"))
    assert np.array_equal(shifted[:, None] == shifted[None, :], s[:, None] == s[None, :])
    return {name: vals[-1] for name, vals in rec["t"].items()}


@pytest.mark.parametrize("tie_prob", [0.0, 0.4], ids=["no-ties", "ties"])
def test_ndcg_and_map_match_lightgbm(tie_prob):
    """LightGBM's ndcg@k and map@k (exp2 gain, input-order ties, empty query = 1, map@k
    divides by min(k, n_relevant), relevant = label > 0.5) on the same predictions. Queries
    of up to 40 documents so that ties are not all inside small insertion-sorted lists."""
    rng = np.random.default_rng(7)
    s, y, gp = random_ranking(rng, n_queries=30, max_docs=40, tie_prob=tie_prob)
    if tie_prob == 0.0:
        s = rng.normal(size=s.shape[0])
    ref = _lgb_eval(s, y, gp, rng)
    for k in (1, 3, 5, 10):
        assert M.ndcg(s, y, gp, k) == pytest.approx(ref[f"ndcg@{k}"], rel=1e-9)
        assert M.average_precision(s, y, gp, k) == pytest.approx(ref[f"map@{k}"], rel=1e-9)


@pytest.mark.parametrize("tie_prob", [0.0, 0.4], ids=["no-ties", "ties"])
def test_ndcg_matches_xgboost(tie_prob):
    """XGBoost's ndcg@k (empty query = 1) and ndcg@k- (empty query = 0), exp2 gain; XGBoost
    3.x breaks ties by input order. Its bare "ndcg" truncates at 32, so the whole list is
    compared as ndcg@1000."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(11)
    s, y, gp = random_ranking(rng, n_queries=30, max_docs=40, tie_prob=tie_prob)
    if tie_prob == 0.0:
        s = rng.normal(size=s.shape[0])
    d = xgb.DMatrix(np.zeros((y.shape[0], 1)), label=y, base_margin=s, group=np.diff(gp))
    names = [f"ndcg@{k}{m}" for k in (1, 3, 5, 10, 1000) for m in ("", "-")]
    bst = xgb.train({"objective": "rank:ndcg", "eval_metric": names}, d, num_boost_round=0)
    text = bst.eval(d, name="t")
    ref = dict((kv.split(":")[0][2:], float(kv.split(":")[1])) for kv in text.split("\t")[1:])
    for k in (1, 3, 5, 10, 1000):
        kk = None if k == 1000 else k
        assert M.ndcg(s, y, gp, kk) == pytest.approx(ref[f"ndcg@{k}"], rel=1e-6)
        assert M.ndcg(s, y, gp, kk, empty=0.0) == pytest.approx(ref[f"ndcg@{k}-"], rel=1e-6)


def test_precision_and_map_match_xgboost_on_binary_labels():
    """XGBoost's pre@k divides by min(k, n_q) (boostplug's divisor="min") and its map@k
    equals boostplug's AP@k, on binary labels (XGBoost's relevance is label > 0)."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(13)
    s, y, gp = random_ranking(rng, n_queries=40, max_docs=12, n_labels=2, tie_prob=0.0)
    s = rng.normal(size=s.shape[0])
    assert np.diff(gp).min() < 5  # some queries are shorter than the cut-off
    d = xgb.DMatrix(np.zeros((y.shape[0], 1)), label=y, base_margin=s, group=np.diff(gp))
    names = [f"{m}@{k}" for m in ("pre", "map") for k in (1, 3, 5, 10)]
    bst = xgb.train({"objective": "rank:pairwise", "eval_metric": names}, d, num_boost_round=0)
    ref = dict((kv.split(":")[0][2:], float(kv.split(":")[1])) for kv in bst.eval(d, name="t").split("\t")[1:])
    for k in (1, 3, 5, 10):
        assert M.precision(s, y, gp, k, divisor="min") == pytest.approx(ref[f"pre@{k}"], rel=1e-6)
        assert M.average_precision(s, y, gp, k) == pytest.approx(ref[f"map@{k}"], rel=1e-6)
    assert M.precision(s, y, gp, 10) < ref["pre@10"]  # trec_eval's divisor k differs on short queries


def test_ndcg_on_real_mq2008_part(mq2008_dir):
    """One real-data check: LightGBM's ndcg@10/map@10 on MQ2008 S1 with random scores."""
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    from boostplug.groups import group_ptr_from_qid

    gp = group_ptr_from_qid(qid)
    rng = np.random.default_rng(3)
    s = rng.normal(size=y.shape[0])
    ref = _lgb_eval(s, y, gp, rng)
    assert M.ndcg(s, y, gp, 10) == pytest.approx(ref["ndcg@10"], rel=1e-9)
    assert M.average_precision(s, y, gp, 10) == pytest.approx(ref["map@10"], rel=1e-9)


def test_each_ties_and_metric_pair_has_its_own_kernel_made_once():
    """The kernels are specialised on their codes (numba compiles only the branches a pair uses):
    one kernel per pair, the same one on every call."""
    from boostplug.metrics import _kernels as K

    pairs = [(t, m) for t in (K.TIES_ORDER, K.TIES_AVERAGE, K.TIES_WORST)
             for m in (K.PRECISION, K.AVERAGE_PRECISION, K.RECIPROCAL_RANK)]
    binary = {p: K._binary_queries_for(*p) for p in pairs}
    assert len({id(k) for k in binary.values()}) == len(pairs)
    assert all(K._binary_queries_for(*p) is binary[p] for p in pairs)
    dcg = {t: K._dcg_queries_for(t) for t in (K.TIES_ORDER, K.TIES_AVERAGE, K.TIES_WORST)}
    assert len({id(k) for k in dcg.values()}) == 3 and K._dcg_queries_for(K.TIES_WORST) is dcg[K.TIES_WORST]
    assert K._err_queries_for(K.TIES_ORDER) is not K._err_queries_for(K.TIES_WORST)
