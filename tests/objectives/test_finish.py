"""The last pass of every grad_hess (``_finish.finish_in_place``) against a row-by-row reference: the
floor when it is on, nothing when it is off, and the rows beyond float32 or not finite counted."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug._validation import FLOAT32_MAX
from boostplug.objectives._finish import finish_in_place

SPECIAL = [0.0, -0.0, 1e-300, 5e-324, 1e-7, 0.5, -2.0, 3.5e38, -1e300, math.inf, -math.inf, math.nan]


def _reference(grad, hess, floor_on, floor, no_info):
    out = hess.copy()
    bad = [i for i in range(grad.size) if not (abs(grad[i]) <= FLOAT32_MAX and abs(hess[i]) <= FLOAT32_MAX)]
    raised = 0
    for i in range(grad.size):
        if i in bad or not floor_on:
            continue
        if hess[i] == 0.0 and grad[i] == 0.0:
            out[i] = no_info
        elif hess[i] < floor:
            out[i] = floor
            raised += 1
    return out, len(bad), raised


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("floor_on, floor, no_info", [(True, 1e-6, 1.0), (True, 0.0, 0.5), (True, 1e-3, 1e-3),
                                                      (False, 1e-6, 1e-5)])
def test_the_pass_matches_the_row_by_row_rule(seed: int, floor_on: bool, floor: float, no_info: float) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    grad = rng.choice(SPECIAL, n) if seed % 2 else rng.standard_normal(n) * (rng.random(n) < 0.7)
    hess = rng.choice(SPECIAL, n) if seed % 3 == 0 else rng.standard_normal(n) * 1e-3 * (rng.random(n) < 0.6)
    if seed == 5:                        # all finite and small: no bad row to find
        grad, hess = np.nan_to_num(grad, posinf=1.0, neginf=-1.0), np.nan_to_num(hess, posinf=1.0, neginf=-1.0)
    want, n_bad, raised = _reference(grad, hess, floor_on, floor, no_info)
    h = hess.copy()
    assert finish_in_place(grad, h, floor_on, floor, no_info) == (n_bad, raised)
    np.testing.assert_array_equal(h.view(np.int64), want.view(np.int64))   # bit for bit, -0.0 and NaN kept


def test_off_it_leaves_every_hessian_as_it_is() -> None:
    hess = np.array([-3.0, 0.0, 1e-12, 2.0])
    h = hess.copy()
    assert finish_in_place(np.array([1.0, 0.0, 0.5, -1.0]), h, False, 1e-6, 1e-5) == (0, 0)
    np.testing.assert_array_equal(h, hess)
