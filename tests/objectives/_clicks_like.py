"""Small clicks-like data for the position-bias tests of the built-ins' copies."""

from __future__ import annotations

import numpy as np


def clicks_like(n_queries: int = 60, per_query: int = 12, seed: int = 0):
    """``(features, clicks, group_ptr, position)``: each query's rows in shown order; a click where
    the document is relevant and examined (probability ``1 / (1 + position)``): the position bias
    the objectives estimate."""
    rng = np.random.default_rng(seed)
    n = n_queries * per_query
    features = rng.normal(size=(n, 5))
    relevant = features[:, 0] + 0.5 * rng.normal(size=n) > 0.5
    position = np.tile(np.arange(per_query), n_queries)
    clicked = relevant & (rng.random(n) < 1.0 / (1.0 + position))
    return features, clicked.astype(np.float64), np.arange(0, n + 1, per_query), position
