"""The Hessian floor's pass (``_finish.floor_in_place``) against a row-by-row reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug.objectives._finish import floor_in_place

SPECIAL = [0.0, -0.0, 1e-300, 5e-324, 1e-7, 0.5, -2.0, math.inf, -math.inf, math.nan]


def _reference(grad, hess, floor, no_info):
    out = hess.copy()
    bad = [i for i in range(grad.size) if not (math.isfinite(grad[i]) and math.isfinite(hess[i]))]
    for i in range(grad.size):
        if i in bad:
            continue
        if hess[i] == 0.0 and grad[i] == 0.0:
            out[i] = no_info
        elif hess[i] < floor:
            out[i] = floor
    return out, (bad[0] if bad else -1), len(bad)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("floor, no_info", [(1e-6, 1.0), (0.0, 0.5), (1e-3, 1e-3)])
def test_floor_matches_the_row_by_row_rule(seed: int, floor: float, no_info: float) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    grad = rng.choice(SPECIAL, n) if seed % 2 else rng.standard_normal(n) * (rng.random(n) < 0.7)
    hess = rng.choice(SPECIAL, n) if seed % 3 == 0 else np.abs(rng.standard_normal(n)) * 1e-3 * (rng.random(n) < 0.6)
    if seed == 5:                        # all finite: no bad row to find
        grad, hess = np.nan_to_num(grad, posinf=1.0, neginf=-1.0), np.nan_to_num(hess, posinf=1.0, neginf=-1.0)
    want, first, n_bad = _reference(grad, hess, floor, no_info)
    h = hess.copy()
    assert floor_in_place(grad, h, floor, no_info) == (first, n_bad)
    np.testing.assert_array_equal(h.view(np.int64), want.view(np.int64))   # bit for bit, -0.0 and NaN kept
