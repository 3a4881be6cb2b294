"""The kernels' own sort gives numpy's stable sort's permutation in decreasing order."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug._core.sorting import stable_argsort_descending


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    cases = []
    for n in [0, 1, 2, 3, 15, 16, 17, 19, 20, 21, 31, 39, 40, 41, 64, 100, 257, 1000]:
        cases += [rng.normal(size=n), rng.integers(0, 3, n).astype(float), np.zeros(n),
                  np.arange(n, dtype=float), np.arange(n, dtype=float)[::-1].copy(),
                  np.sort(rng.integers(0, 5, n)).astype(float)]
    return cases


@pytest.mark.parametrize("v", _cases(), ids=lambda v: f"n{v.shape[0]}")
def test_stable_argsort_descending_is_the_stable_argsort_of_the_negated_keys(v: np.ndarray) -> None:
    before = v.copy()
    assert np.array_equal(stable_argsort_descending(v), np.argsort(-v, kind="stable"))
    assert np.array_equal(v, before)


def test_stable_argsort_descending_keeps_input_order_in_long_runs_of_ties() -> None:
    """Runs of equal keys longer than the insertion sort's 20 items cross the merges."""
    rng = np.random.default_rng(11)
    for n in (21, 40, 41, 333, 4000):
        for levels in (1, 2, 3, 50):
            v = rng.integers(0, levels, n).astype(float) * 0.5 - 1.0
            v[rng.random(n) < 0.1] = -0.0           # equal to 0.0 where that is a level: one tie group
            assert np.array_equal(stable_argsort_descending(v), np.argsort(-v, kind="stable"))
