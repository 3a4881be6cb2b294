"""RankBoost+'s per-round stump sums on the pair list, each pair visited once per feature.

A stump ``(k, j)`` (``h(x) = [codes[x, k] > j]``) splits a pair when exactly one of its
documents is above ``j``. With per-document sums of the pair values ``v``,
``pot[x] = sum_{(x, .)} v - sum_{(., x)} v`` and ``side[x] = sum_{(x, .)} v + sum_{(., x)} v``:

* ``signed = correct - reverse = sum_x pot[x] [c_x > j]``;
* ``split = correct + reverse = sum_x side[x] [c_x > j] - 2 sum_pairs v [min(c_a, c_b) > j]``,
  since ``[max > j] + [min > j] = [c_a > j] + [c_b > j]``.

The document sums cost ``O(n F)``; the last sum is one weighted histogram per feature of the
pairs' lower codes, which are fixed for a fit and kept (one byte per pair and feature when the
codes fit in a byte), so a round reads each pair once per feature, in sequence, and scatters
into one small histogram, instead of adding each pair twice to the difference arrays of
:func:`~boostplug.boosters._stump_sums.pair_split_sums` (docs/studies/boosters.md). Entries are accurate to
about ``1e-16`` times the total value, absolutely, like that kernel's.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from ._stump_sums import DOC_VISITS_PER_WORK, _width, doc_sides, doc_sums_above

__all__ = ["PairMinCodes", "LOWER_CODES_BUDGET_BYTES"]

#: Memory for the kept lower codes (bytes). Past it they are made again each round, block by block
#: of features, which costs about one more pass over the pairs per round.
LOWER_CODES_BUDGET_BYTES = 256 * 2**20

#: Sub-histograms a feature's pairs are spread over (pair ``p`` into ``p % LANES``): pairs with the
#: same lower code (most of them share a few) then no longer wait on each other's additions.
LANES = 8


@nb.njit(cache=True, parallel=True)
def _lower_codes(codes, pairs, k0, out):
    """``out[i, p] = min(codes[a, k0 + i], codes[b, k0 + i])`` for pair ``p = (a, b)``."""
    for i in nb.prange(out.shape[0]):
        k = k0 + i
        row = out[i]
        for p in range(pairs.shape[0]):
            ca = codes[pairs[p, 0], k]
            cb = codes[pairs[p, 1], k]
            row[p] = ca if ca < cb else cb
    return out


@nb.njit(cache=True, parallel=True)
def _sums_above_lower(lower, splits, values, out, k0, rows):
    """``out[k0 + i, j] = sum_p values[p] [lower[i, p] > j]`` for the rows ``i`` in ``rows`` (0 where
    ``splits[i]`` is false: every lower code is 0)."""
    width = out.shape[1]
    P = values.shape[0]
    full = P // LANES * LANES
    for r in nb.prange(rows.shape[0]):
        i = rows[r]
        if not splits[i]:
            out[k0 + i, :] = 0.0
            continue
        row = lower[i]
        hist = np.zeros((LANES, width))
        for p in range(0, full, LANES):
            for lane in range(LANES):
                hist[lane, row[p + lane]] += values[p + lane]
        for p in range(full, P):
            hist[0, row[p]] += values[p]
        acc = 0.0
        for j in range(width - 1, -1, -1):
            out[k0 + i, j] = acc
            for lane in range(LANES):
                acc += hist[lane, j]


class PairMinCodes:
    """The fixed part of a pair list's stump sums: per feature, each pair's lower code.

    Built once per fit from the stump ``codes`` (``(n, F)``), the ``pairs`` (``(P, 2)``, preferred
    document first) and the features' threshold counts; :meth:`sums` then gives every stump's
    ``signed`` and ``split`` sums of one round's pair values."""

    def __init__(self, codes: NDArray[np.int32], pairs: NDArray[np.int64], n_thresholds: NDArray[np.int64],
                 budget: int = LOWER_CODES_BUDGET_BYTES) -> None:
        self.codes = codes
        self.pairs = pairs
        self.n_thresholds = n_thresholds
        self.width = _width(n_thresholds)
        self.dtype = np.uint8 if self.width <= 2**8 else np.uint16 if self.width <= 2**16 else np.int32
        n_features, n_pairs = codes.shape[1], pairs.shape[0]
        per_feature = max(1, n_pairs * np.dtype(self.dtype).itemsize)
        self.block = int(min(max(1, n_features), max(1, budget // per_feature)))
        self.kept = self._lower(0, n_features) if self.block >= n_features else None
        self.kept_splits = None if self.kept is None else self.kept.any(axis=1)

    def _lower(self, k0: int, k1: int) -> NDArray[np.integer]:
        out = np.empty((k1 - k0, self.pairs.shape[0]), dtype=self.dtype)
        kernel = dispatch.kernel_for(_lower_codes, out.size)
        return kernel(self.codes, self.pairs, k0, out)

    def sums(self, values: NDArray[np.float64], features: NDArray[np.integer] | None = None
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(signed, split)``, each ``(n_features, max_thresholds + 1)``: ``correct - reverse`` and
        ``correct + reverse`` of every stump for the pair values ``values``. Entries with
        ``j >= n_thresholds[k]`` are meaningless (no such stump). ``features``: the features whose
        ``split`` is wanted (``None``: all); the others' rows of ``split`` are NaN, and their pairs
        are not visited (the histogram is the cost of this call: ``O(P)`` per feature)."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        n_docs, n_features = self.codes.shape
        wanted = np.ones(n_features, dtype=bool)
        if features is not None:
            wanted[:] = False
            wanted[np.asarray(features, dtype=np.int64)] = True
        first, second = doc_sides(self.pairs, values, n_docs)
        pot, side = first - second, first + second
        lower_above = np.full((n_features, self.width), np.nan)
        for k0 in range(0, n_features, self.block):
            k1 = min(k0 + self.block, n_features)
            rows = np.flatnonzero(wanted[k0:k1])
            if not rows.size:
                continue
            lower = self.kept if self.kept is not None else self._lower(k0, k1)
            splits = self.kept_splits if self.kept is not None else lower.any(axis=1)
            kernel = dispatch.kernel_for(_sums_above_lower, rows.size * values.shape[0] // DOC_VISITS_PER_WORK)
            kernel(lower, splits, values, lower_above, k0, rows)
        signed = doc_sums_above(self.codes, pot, self.n_thresholds)
        split = doc_sums_above(self.codes, side, self.n_thresholds)
        split -= 2.0 * lower_above
        return signed, split
