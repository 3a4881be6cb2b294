"""Bounded fuzzing of every public metric (hypothesis, derandomized, a few seconds): random
scores, labels and groups with ties and extreme values give a correct value (checked against a
plain reference where cheap), and bad values for any argument give ``ValueError`` or
``TypeError``, never another exception, never NaN where a number is documented."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from boostplug import metrics as M
from boostplug.pairs import count_critical_pairs

FUZZ = settings(derandomize=True, max_examples=60, deadline=None, database=None)

SCORE_VALUES = [0.0, 0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 1e300, -1e300, 1.7e308, -1.7e308, 3.0]


@st.composite
def rankings(draw):
    """(scores, labels, group_ptr): 1-6 queries of 1-7 documents, many ties, extreme scores."""
    sizes = draw(st.lists(st.integers(1, 7), min_size=1, max_size=6))
    n = sum(sizes)
    scores = np.array(draw(st.lists(st.sampled_from(SCORE_VALUES) | st.floats(-10, 10, allow_nan=False),
                                    min_size=n, max_size=n)))
    labels = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.float64)
    return scores, labels, np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def _queries(s, y, g):
    for a, b in zip(g[:-1], g[1:]):
        yield s[a:b], y[a:b]


def _ranked(s, y):
    return y[np.argsort(-s, kind="stable")]


def ref_ndcg(s, y, k):
    out = []
    for qs, qy in _queries(s, y, np.asarray(GP_CACHE[0])):
        r = _ranked(qs, qy)[:k]
        ideal = np.sort(qy)[::-1][:k]
        disc = 1.0 / np.log2(np.arange(2, len(r) + 2))
        best = float(((2.0 ** ideal - 1) * disc).sum())
        out.append(float(((2.0 ** r - 1) * disc).sum()) / best if best > 0 else 1.0)
    return out


GP_CACHE: list = [None]

LISTWISE = {
    "ndcg": lambda s, y, g, **kw: M.ndcg(s, y, g, 3, **kw),
    "dcg": lambda s, y, g, **kw: M.dcg(s, y, g, 3, **kw),
    "average_precision": lambda s, y, g, **kw: M.average_precision(s, y, g, **kw),
    "precision": lambda s, y, g, **kw: M.precision(s, y, g, 2, **kw),
    "reciprocal_rank": lambda s, y, g, **kw: M.reciprocal_rank(s, y, g, **kw),
    "err": lambda s, y, g, **kw: M.err(s, y, g, 3, **kw),
}


@FUZZ
@given(rankings())
def test_listwise_metrics_are_numbers_in_range_and_match_references(data):
    s, y, g = data
    GP_CACHE[0] = g
    for name, fn in LISTWISE.items():
        for ties in ("order", "worst") + (("average",) if name != "err" else ()):
            per_query = fn(s, y, g, ties=ties, per_query=True)
            assert per_query.shape == (g.shape[0] - 1,) and not np.isnan(per_query).any(), name
            assert np.all(per_query >= 0.0), name
            if name != "dcg":
                assert np.all(per_query <= 1.0), name
            assert fn(s, y, g, ties=ties) == pytest.approx(per_query.mean(), abs=1e-12)
    np.testing.assert_allclose(M.ndcg(s, y, g, 3, per_query=True), ref_ndcg(s, y, 3), atol=1e-12)
    want_p = [float((_ranked(qs, qy)[:2] >= 1).sum()) / 2 for qs, qy in _queries(s, y, g)]
    np.testing.assert_allclose(M.precision(s, y, g, 2, per_query=True), want_p, atol=1e-12)
    want_rr = []
    for qs, qy in _queries(s, y, g):
        hits = np.flatnonzero(_ranked(qs, qy) >= 1)
        want_rr.append(1.0 / (hits[0] + 1) if hits.size else 1.0)
    np.testing.assert_allclose(M.reciprocal_rank(s, y, g, per_query=True), want_rr, atol=1e-12)


@FUZZ
@given(rankings())
def test_pairwise_metrics_match_a_brute_force_count(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # +-1.7e308 scores: no overflow to inf gaps
        _check_pairwise(*data)


def _check_pairwise(s, y, g):
    wrong = ties = total = 0
    for qs, qy in _queries(s, y, g):
        for i in range(len(qs)):
            for j in range(len(qs)):
                if qy[i] > qy[j]:
                    total += 1
                    wrong += qs[i] < qs[j]
                    ties += qs[i] == qs[j]
    r1, r2 = M.rank_loss(s, y, g, kind="r1"), M.rank_loss(s, y, g)
    if total == 0:  # documented: NaN when there is no pair
        assert math.isnan(r1) and math.isnan(r2) and math.isnan(M.pair_precision_at(s, y, g, 50))
    else:
        assert r1 == pytest.approx((wrong + ties) / total) and r2 == pytest.approx((wrong + 0.5 * ties) / total)
        assert M.pair_precision_at(s, y, g, 100) == pytest.approx(1.0 - r1)
        assert 0.0 <= M.pair_precision_at(s, y, g, 37.5) <= 1.0
    assert M.misordered_pairs(s, y, g) == wrong
    assert int(count_critical_pairs(y, g).sum()) == total


BAD = [None, "x", "", -1, 0, 1, 2.5, -0.5, math.nan, math.inf, -math.inf, 10**30, -(10**30), 10**400, True, False,
       np.float64(-1.0), np.int64(-3), np.bool_(True), [1, 2], (0.5,), {"a": 1}, object(), b"1", 1 + 2j]

ARGUMENTS = {
    # metric -> argument -> call with that argument set to the value
    "ndcg": ["k", "gain", "discount", "empty", "ties", "per_query"],
    "dcg": ["k", "gain", "discount", "ties", "per_query"],
    "average_precision": ["k", "threshold", "empty", "ties", "per_query"],
    "precision": ["k", "threshold", "divisor", "ties", "per_query"],
    "reciprocal_rank": ["k", "threshold", "empty", "ties", "per_query"],
    "err": ["k", "max_grade", "ties", "per_query"],
    "rank_loss": ["kind", "pairs", "per_query", "max_memory"],
    "misordered_pairs": ["pairs", "max_memory"],
    "pair_precision_at": ["percent", "pairs", "max_memory"],
}
DATA_ARGS = ["scores", "labels", "group_ptr", "qid"]
CASES = [(fn, arg) for fn, args in ARGUMENTS.items() for arg in args + DATA_ARGS]

S = np.array([0.5, 0.1, 0.1, 2.0, -1.0])
Y = np.array([1.0, 0.0, 2.0, 0.0, 1.0])
G = np.array([0, 3, 5])


def _call(fn: str, **override):
    kw = {"scores": S, "labels": Y, "group_ptr": G}
    if fn == "precision":
        kw["k"] = 2
    if fn == "pair_precision_at":
        kw["percent"] = 50
    if "qid" in override and "group_ptr" not in override:
        kw.pop("group_ptr")
    kw.update(override)
    return getattr(M, fn)(**kw)


@pytest.mark.parametrize("fn, arg", CASES, ids=[f"{f}-{a}" for f, a in CASES])
def test_any_value_of_any_argument_is_a_result_or_a_value_or_type_error(fn, arg):
    values = BAD + [np.array([1.0, 2.0]), np.zeros((2, 2)), np.array(["a"] * 5), np.full(5, np.nan),
                    np.array([0, 5]), np.array([0, 2, 2, 5]), np.array([3, 2]), np.array([2, 3]), np.arange(5)]
    for value in values:
        try:
            out = _call(fn, **{arg: value})
        except (ValueError, TypeError) as exc:
            assert "np.float64(" not in str(exc) and "np.int64(" not in str(exc), str(exc)
            continue
        # accepted: a number (NaN only where documented: no pair, or a skipped query)
        out = np.asarray(out, dtype=np.float64)
        if fn in ("rank_loss", "pair_precision_at") and arg in ("pairs", "labels", "group_ptr", "qid"):
            continue  # these can leave no pair at all: NaN documented
        assert not np.isnan(out).any(), (fn, arg, value, out)


@FUZZ
@given(st.lists(st.integers(0, 9), min_size=0, max_size=12), st.integers(1, 4))
def test_random_group_pointers_and_qids_are_accepted_or_refused_cleanly(ptr, n_labels):
    n = 8
    s = np.linspace(-1, 1, n)
    y = np.arange(n, dtype=np.float64) % n_labels
    for name in ("ndcg@3", "map", "p@2", "mrr", "err", "r2"):
        fn = M.by_name(name)
        for kw in ({"group_ptr": ptr}, {"qid": ptr}):
            try:
                out = fn(s, y, **kw)
            except (ValueError, TypeError):
                continue
            assert isinstance(out, float)
