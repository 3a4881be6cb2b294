"""Property-based tests (hypothesis): invariances that must hold for every input, not only
for the seeds the other test files draw. Every registered objective, in each Hessian mode, at each
configuration the registry lists: adding a constant to the scores of a query with at least two
grades changes neither loss nor gradient, so a gradient that is d loss / d score (not a "fitting"
mode's) sums to zero over such a query, and gradients stay finite at extreme scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests._hypothesis import SETTINGS, rankings

from boostplug.testing import cases, multi_label_queries


#: Every registered objective in each Hessian mode at each configuration the registry lists (that declares itself
#: shift-invariant: RankCosine does not).
OBJECTIVES = [c for c in cases() if c.registered and c.entry.loss_class.shift_invariant]
IDS = [c.id for c in OBJECTIVES]


@pytest.mark.parametrize("case", OBJECTIVES, ids=IDS)
@SETTINGS
@given(data=rankings(max_docs=6), qshift=st.integers(-3, 3))
def test_objectives_shift_invariant_and_sum_to_zero(case, data, qshift):
    s, y, g = data
    prep = case.prepare(y, g)
    grad, hess = prep.grad_hess(s)
    assert np.all(np.isfinite(grad)) and np.all((hess > 0) if prep.hessian_floor else (hess >= 0))
    ranked = multi_label_queries(y, g)  # a query with one grade has nothing to rank: it may anchor scores
    per_query = np.zeros(g.shape[0] - 1)
    per_query[ranked] = qshift * np.asarray(ranked, dtype=np.float64)
    offsets = np.repeat(per_query, np.diff(g))
    g2, h2 = (case.prepare(y, g) if prep.random_draws else prep).grad_hess(s + offsets)  # a new round draws anew
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
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    assert np.all((hess > 0) if prep.hessian_floor else (hess >= 0))  # 0 without the floor: a document in no pair
