"""The weak rankers of the reference boosters and their outputs: a booster's model is
``F(x) = sum_t weight_t * h_t(x)``, each ``h_t`` a small dict (a stump ``{"kind": "stump", ...}``,
possibly its complement or on float32 values, or a feature ``{"kind": "feature", ...}``) whose
output docs/boosters.md, "Weak rankers and stump candidates", defines. The JSON model file stores
these dicts as they are (:mod:`boostplug.boosters._model_file`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["evaluate_rankers"]


def evaluate_rankers(X: NDArray[np.float64], rankers: Sequence[dict[str, Any]]) -> NDArray[np.float64]:
    """Matrix ``(n_docs, n_rankers)`` of weak-ranker outputs ``h_t(X)``."""
    out = np.empty((X.shape[0], len(rankers)), dtype=np.float64)
    for t, r in enumerate(rankers):
        col = X[:, int(r["feature"])]
        if r.get("float32"):  # RankLib holds feature values as 32-bit floats
            col = col.astype(np.float32).astype(np.float64)
        if r["kind"] == "stump":
            out[:, t] = col > float(r["threshold"])  # NaN > theta is False: missing ranks lowest
            if r.get("complement"):
                out[:, t] = 1.0 - out[:, t]
        elif r["kind"] == "feature":
            out[:, t] = np.nan_to_num(col, nan=0.0)
        else:
            raise ValueError(f"unknown weak ranker kind {r['kind']!r}")
    return out
