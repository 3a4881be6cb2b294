"""The kernels' own sorts give numba's results: the values of ``np.sort`` in decreasing order,
``np.argsort``'s very order (its quicksort's order of equal keys; NaN last), and the stable sort's
permutation in decreasing order."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from boostplug._core.sorting import sorted_descending, stable_argsort_descending
from boostplug.objectives._qbrank_kernels import quick_argsort


@nb.njit
def _numba_argsort(keys: np.ndarray) -> np.ndarray:
    return np.argsort(keys)


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    cases = []
    for n in [0, 1, 2, 3, 15, 16, 17, 31, 64, 100, 257, 1000]:
        cases += [rng.normal(size=n), rng.integers(0, 3, n).astype(float), np.zeros(n),
                  np.arange(n, dtype=float), np.arange(n, dtype=float)[::-1].copy(),
                  np.sort(rng.integers(0, 5, n)).astype(float)]
    return cases


@pytest.mark.parametrize("v", _cases(), ids=lambda v: f"n{v.shape[0]}")
def test_quick_argsort_is_numbas_argsort_order_for_order(v: np.ndarray) -> None:
    assert np.array_equal(quick_argsort(v), _numba_argsort(v))


def test_quick_argsort_puts_nan_last_as_numba() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 40, 300):
        v = rng.integers(0, 4, n).astype(float)
        v[rng.random(n) < 0.25] = np.nan
        assert np.array_equal(quick_argsort(v), _numba_argsort(v))
        assert np.isnan(v[quick_argsort(v)][-1])


@pytest.mark.parametrize("v", _cases(), ids=lambda v: f"n{v.shape[0]}")
def test_sorted_descending_is_the_reversed_sort_and_leaves_its_input(v: np.ndarray) -> None:
    before = v.copy()
    assert np.array_equal(sorted_descending(v), np.sort(v)[::-1])
    assert np.array_equal(v, before)


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
