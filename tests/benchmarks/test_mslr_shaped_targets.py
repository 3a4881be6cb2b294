"""benchmarks/mslr_shaped.py's two targets: the same query sizes and grade shares; the ``trees``
target's count columns, query type and labels a linear model cannot fit as well as on ``linear``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def mslr_shaped():
    sys.path.insert(0, str(BENCH))
    try:
        import mslr_shaped
    finally:
        sys.path.remove(str(BENCH))
    return mslr_shaped


def test_targets_share_the_shape_and_trees_adds_counts_and_a_query_type(mslr_shaped) -> None:
    lin, trees = (mslr_shaped.generate(0.002, target=t) for t in ("linear", "trees"))
    np.testing.assert_array_equal(lin.group_ptr, trees.group_ptr)
    for d in (lin, trees):
        shares = np.bincount(d.y.astype(int), minlength=5) / d.n_docs
        np.testing.assert_allclose(shares, mslr_shaped.GRADE_SHARES, atol=0.01)
    counts = trees.X[:, :mslr_shaped.N_COUNTS]
    assert (counts >= 0).all() and (counts == np.floor(counts)).all() and counts.max() > 50 * np.median(counts)
    qtype = trees.X[:, mslr_shaped.N_COUNTS + mslr_shaped.N_SMOOTH]
    for a, b in zip(trees.group_ptr[:-1], trees.group_ptr[1:]):
        assert np.unique(qtype[a:b]).size == 1
    assert set(np.unique(qtype)) <= {0.0, 1.0, 2.0}
    with pytest.raises(ValueError, match="target 'tree'"):
        mslr_shaped.generate(0.002, target="tree")


@pytest.mark.slow
def test_a_linear_fit_explains_the_linear_target_better(mslr_shaped) -> None:
    """In-sample R^2 of least squares on all columns: the linear target's grades are better fitted (0.35 against 0.21 at this size)."""
    def r2(d) -> float:
        X = np.column_stack([np.ones(d.n_docs), d.X])
        resid = d.y - X @ np.linalg.lstsq(X, d.y, rcond=None)[0]
        return 1 - resid.var() / d.y.var()

    assert r2(mslr_shaped.generate(0.002, target="linear")) > 1.4 * r2(mslr_shaped.generate(0.002, target="trees"))
