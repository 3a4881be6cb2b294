"""Property-based tests (hypothesis): invariances that must hold for every input, not only
for the seeds the other test files draw.

* group_ptr conversions round-trip;
* ranking metrics lie in [0, 1], depend only on the order within each query (a per-query
  shift or positive scaling of the scores changes nothing), and concatenating queries equals
  computing them apart;
* every registered objective, in each Hessian mode, at each configuration the registry lists:
  adding a constant to the scores of a query with at least two grades changes neither loss nor
  gradient, so a gradient that is d loss / d score (not a "fitting" mode's) sums to zero over such
  a query, and gradients stay finite at extreme scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostplug import metrics as M
from boostplug.groups import group_ptr_from_qid, group_ptr_from_sizes, qid_from_group_ptr, sizes_from_group_ptr
from boostplug.testing import cases, multi_label_queries

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def rankings(draw, max_queries: int = 5, max_docs: int = 8, max_label: int = 4):
    """(scores, labels, group_ptr) with ties (scores on a coarse grid), single-document and
    all-zero queries among the draws."""
    sizes = draw(st.lists(st.integers(1, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    labels = draw(st.lists(st.integers(0, max_label), min_size=n, max_size=n))
    scores = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return np.asarray(scores, dtype=np.float64) / 2.0, np.asarray(labels, dtype=np.float64), ptr


@SETTINGS
@given(st.lists(st.integers(1, 20), min_size=0, max_size=30))
def test_group_conversions_round_trip(sizes):
    ptr = group_ptr_from_sizes(np.asarray(sizes, dtype=np.int64))
    assert ptr.dtype == np.int64 and ptr[0] == 0 and ptr[-1] == sum(sizes)
    np.testing.assert_array_equal(sizes_from_group_ptr(ptr), sizes)
    np.testing.assert_array_equal(group_ptr_from_qid(qid_from_group_ptr(ptr)), ptr)


METRICS = {
    "ndcg@3": lambda s, y, g, **kw: M.ndcg(s, y, g, 3, **kw),
    "ndcg": lambda s, y, g, **kw: M.ndcg(s, y, g, **kw),
    "ndcg-letor-avg": lambda s, y, g, **kw: M.ndcg(s, y, g, 5, discount="letor", ties="average", **kw),
    "map": lambda s, y, g, **kw: M.average_precision(s, y, g, **kw),
    "p@2": lambda s, y, g, **kw: M.precision(s, y, g, 2, **kw),
    "mrr": lambda s, y, g, **kw: M.reciprocal_rank(s, y, g, **kw),
    "err@5": lambda s, y, g, **kw: M.err(s, y, g, 5, max_grade=4, **kw),
}


@pytest.mark.parametrize("name", list(METRICS))
@SETTINGS
@given(data=rankings(), shift=st.floats(-50, 50), scale=st.floats(0.25, 8.0), qshift=st.integers(0, 4))
def test_metrics_bounded_order_only_and_separable(name, data, shift, scale, qshift):
    fn = METRICS[name]
    s, y, g = data
    per_q = fn(s, y, g, per_query=True)
    assert per_q.shape == (g.shape[0] - 1,)
    assert np.all((per_q >= 0.0) & (per_q <= 1.0))
    # Exactly representable transforms keep every order and every tie: s * 2^j + per-query integer.
    offsets = np.repeat((np.arange(g.shape[0] - 1) * qshift) % 5, np.diff(g)).astype(np.float64)
    moved = s * 2.0 ** np.round(np.log2(scale)) + np.round(shift) + offsets
    np.testing.assert_array_equal(fn(moved, y, g, per_query=True), per_q)
    # Concatenating queries = computing them apart.
    apart = [fn(s[a:b], y[a:b], np.array([0, b - a]), per_query=True)[0] for a, b in zip(g[:-1], g[1:])]
    np.testing.assert_allclose(per_q, apart, rtol=0, atol=1e-15)


#: Every registered objective in each Hessian mode at each configuration the registry lists.
OBJECTIVES = [c for c in cases() if c.registered]
IDS = [c.id for c in OBJECTIVES]


@pytest.mark.parametrize("case", OBJECTIVES, ids=IDS)
@SETTINGS
@given(data=rankings(max_docs=6), qshift=st.integers(-3, 3))
def test_objectives_shift_invariant_and_sum_to_zero(case, data, qshift):
    s, y, g = data
    prep = case.prepare(y, g)
    grad, hess = prep.grad_hess(s)
    assert np.all(np.isfinite(grad)) and np.all(hess > 0)
    ranked = multi_label_queries(y, g)  # a query with one grade has nothing to rank: it may anchor scores
    per_query = np.zeros(g.shape[0] - 1)
    per_query[ranked] = qshift * np.asarray(ranked, dtype=np.float64)
    offsets = np.repeat(per_query, np.diff(g))
    g2, h2 = prep.grad_hess(s + offsets)
    np.testing.assert_allclose(g2, grad, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h2, hess, rtol=1e-9, atol=1e-12)
    assert prep.loss(s + offsets) == pytest.approx(prep.loss(s), rel=1e-9, abs=1e-12)
    if case.kind != "fitting":  # d/dc loss(s + c on query q) = the sum of q's gradients
        sums = np.add.reduceat(grad, g[:-1])[ranked] if ranked else np.zeros(0)
        np.testing.assert_allclose(sums, 0.0, atol=1e-9 * max(1.0, float(np.abs(grad).max(initial=0.0))))


@pytest.mark.parametrize("case", OBJECTIVES, ids=IDS)
@SETTINGS
@given(data=rankings(max_docs=6), magnitude=st.sampled_from([1e2, 1e4, 1e8]))
def test_objectives_finite_at_extreme_scores(case, data, magnitude):
    s, y, g = data
    prep = case.prepare(y, g)
    grad, hess = prep.grad_hess(s * magnitude)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess > 0)
