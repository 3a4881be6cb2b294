"""What the property-based tests (hypothesis) share: their settings and random rankings."""

from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

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
