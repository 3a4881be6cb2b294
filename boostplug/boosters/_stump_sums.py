"""Sums over every candidate stump at once, from binned features (numba).

With ``codes`` from :func:`boostplug.boosters.stumps.bin_features`, the stump
``(k, j)`` is ``h(x) = [codes[x, k] > j]``. For a weighted set of preference
pairs ``(a, b)`` (``a`` preferred) with values ``v``, a stump orders the pair

* correctly when ``h(a) = 1, h(b) = 0``, i.e. ``codes[b, k] <= j < codes[a, k]``;
* reversely when ``h(a) = 0, h(b) = 1``, i.e. ``codes[a, k] <= j < codes[b, k]``;
* ties it otherwise.

:func:`pair_split_sums` returns, for every feature ``k`` and threshold index
``j``, the value sums of correctly and reversely ordered pairs, by difference
arrays over the bins: ``O(P)`` per feature, ``O(P * F)`` in all, never a dense
pairs x stumps matrix. The tied sum is ``total - correct - reversed``.

:func:`doc_sums_above` returns ``sum_x pot[x] * [codes[x, k] > j]`` for every
stump in ``O(n * F)``: the per-document potentials make ``correct - reversed``
(RankBoost's ``r``) a document-level sum, with
``pot[x] = sum_{pairs (x, .)} v - sum_{pairs (., x)} v``.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import NDArray

__all__ = ["pair_split_sums", "doc_sums_above", "doc_potentials"]


@nb.njit(cache=True, parallel=True)
def _pair_split_sums(codes, pairs, values, n_bins):
    n_feat = codes.shape[1]
    width = n_bins.max() + 1
    correct = np.zeros((n_feat, width))
    reverse = np.zeros((n_feat, width))
    for k in nb.prange(n_feat):
        c = correct[k]
        r = reverse[k]
        for p in range(pairs.shape[0]):
            ca = codes[pairs[p, 0], k]
            cb = codes[pairs[p, 1], k]
            v = values[p]
            if ca > cb:
                c[cb] += v
                c[ca] -= v
            elif cb > ca:
                r[ca] += v
                r[cb] -= v
        acc_c = 0.0
        acc_r = 0.0
        for j in range(width):
            acc_c += c[j]
            acc_r += r[j]
            c[j] = acc_c
            r[j] = acc_r
    return correct, reverse


def pair_split_sums(
    codes: NDArray[np.int32], pairs: NDArray[np.int64], values: NDArray[np.float64], n_thresholds: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(correct, reverse)``, each ``(n_features, max_thresholds + 1)``.

    ``correct[k, j]`` = sum of ``values`` over pairs the stump ``(k, j)`` orders
    correctly; ``reverse[k, j]`` over pairs it orders reversely. Entries with
    ``j >= n_thresholds[k]`` are meaningless (no such stump).
    """
    return _pair_split_sums(codes, pairs, np.ascontiguousarray(values, dtype=np.float64),
                            np.asarray(n_thresholds, dtype=np.int64))


@nb.njit(cache=True)
def _doc_potentials(pairs, values, n_docs):
    pot = np.zeros(n_docs)
    for p in range(pairs.shape[0]):
        pot[pairs[p, 0]] += values[p]
        pot[pairs[p, 1]] -= values[p]
    return pot


def doc_potentials(pairs: NDArray[np.int64], values: NDArray[np.float64], n_docs: int) -> NDArray[np.float64]:
    """``pot[x] = sum_{pairs (x, .)} v - sum_{pairs (., x)} v``."""
    return _doc_potentials(pairs, np.ascontiguousarray(values, dtype=np.float64), n_docs)


@nb.njit(cache=True, parallel=True)
def _doc_sums_above(codes, pot, n_bins):
    n, n_feat = codes.shape
    width = n_bins.max() + 1
    out = np.zeros((n_feat, width))
    for k in nb.prange(n_feat):
        hist = np.zeros(width + 1)
        for i in range(n):
            hist[codes[i, k]] += pot[i]
        # out[k, j] = sum over codes > j
        acc = 0.0
        for j in range(width - 1, -1, -1):
            acc += hist[j + 1]
            out[k, j] = acc
    return out


def doc_sums_above(codes: NDArray[np.int32], pot: NDArray[np.float64], n_thresholds: NDArray[np.int64]) -> NDArray[np.float64]:
    """``out[k, j] = sum_x pot[x] * [codes[x, k] > j]``, shape ``(n_features, max_thresholds + 1)``."""
    return _doc_sums_above(codes, np.ascontiguousarray(pot, dtype=np.float64), np.asarray(n_thresholds, dtype=np.int64))
