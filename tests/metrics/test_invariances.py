"""Property-based tests (hypothesis): invariances that must hold for every input, not only
for the seeds the other test files draw. Ranking metrics lie in [0, 1], depend only on the order
within each query (a per-query shift or positive scaling of the scores changes nothing), and
concatenating queries equals computing them apart.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests._hypothesis import SETTINGS, rankings

from boostplug import metrics as M


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
