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

:func:`pair_fit_sums` makes the same pass (the same kernel) for stump MPBoost's least-squares fit and
returns ``signed = correct - reverse`` of one value array and ``split = correct + reverse``
of another (``N`` and ``D`` of the appendix), both from pair-level difference arrays.

:func:`doc_sums_above` returns ``sum_x pot[x] * [codes[x, k] > j]`` for every
stump in ``O(n * F)``: the per-document potentials make ``correct - reversed``
(RankBoost's ``r``) a document-level sum, with
``pot[x] = sum_{pairs (x, .)} v - sum_{pairs (., x)} v``.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core import dispatch

__all__ = ["pair_split_sums", "pair_fit_sums", "best_fit_stump", "doc_sums_above", "doc_sides", "cumsum_both"]

#: Dispatch work (:mod:`boostplug._core.dispatch`) of the kernels, parallel over features: one
#: unit per pair visit (``P * F``), one per this many document visits (``n * F``), so they go
#: parallel from 5 million pair or 20 million document visits (docs/results/README.md).
DOC_VISITS_PER_WORK = 4

#: Features the pair kernels handle in one pass over the pairs (their columns of codes stay in
#: cache, and the pairs and their values are read once per block instead of once per feature).
FEATURE_BLOCK = 8


def _width(n_thresholds: NDArray[np.int64]) -> int:
    n_thr = np.asarray(n_thresholds, dtype=np.int64)
    return int(n_thr.max()) + 1 if n_thr.size else 1


@nb.njit(cache=True)
def cumsum_both(a, b):
    """In-place prefix sums of two difference arrays of the same length."""
    acc_a = 0.0
    acc_b = 0.0
    for j in range(a.shape[0]):
        acc_a += a[j]
        acc_b += b[j]
        a[j] = acc_a
        b[j] = acc_b


@nb.njit(cache=True)
def _pair_block(codes, pairs, weights, values, k0, k1, sg, sp, sides):
    """Features ``k0 .. k1 - 1``: ``sg`` = signed (correct - reverse) sums of ``values``, ``sp`` = split
    (correct + reverse) sums of ``weights``; with ``sides``, ``sg`` = correct and ``sp`` = reverse sums
    of ``values``. Difference arrays then prefix sums (one pass over the pairs for the block; each
    feature adds its pairs in order).

    A pair whose documents share a bin adds nothing (it is tied by every stump of ``k``).
    For either orientation the signed difference array gets ``+v`` at the lower document's
    bin ``cb`` and ``-v`` at the preferred one's ``ca``.
    """
    for p in range(pairs.shape[0]):
        a = pairs[p, 0]
        b = pairs[p, 1]
        v = values[p]
        w = weights[p]
        for k in range(k0, k1):
            ca = codes[a, k]
            cb = codes[b, k]
            if ca == cb:
                continue
            lo, hi = min(ca, cb), max(ca, cb)
            if not sides:
                sg[k, cb] += v
                sg[k, ca] -= v
                sp[k, lo] += w
                sp[k, hi] -= w
            elif ca > cb:
                sg[k, lo] += v
                sg[k, hi] -= v
            else:
                sp[k, lo] += v
                sp[k, hi] -= v
    for k in range(k0, k1):
        cumsum_both(sg[k], sp[k])


@nb.njit(cache=True, parallel=True)
def _pair_sums(codes, pairs, weights, values, width, sides):
    nf = codes.shape[1]
    sg = np.zeros((nf, width))
    sp = np.zeros((nf, width))
    for blk in nb.prange((nf + FEATURE_BLOCK - 1) // FEATURE_BLOCK):
        k0 = blk * FEATURE_BLOCK
        _pair_block(codes, pairs, weights, values, k0, min(k0 + FEATURE_BLOCK, nf), sg, sp, sides)
    return sg, sp


def pair_split_sums(
    codes: NDArray[np.int32], pairs: NDArray[np.int64], values: NDArray[np.float64], n_thresholds: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(correct, reverse)``, each ``(n_features, max_thresholds + 1)``.

    ``correct[k, j]`` = sum of ``values`` over pairs the stump ``(k, j)`` orders
    correctly; ``reverse[k, j]`` over pairs it orders reversely. Entries with
    ``j >= n_thresholds[k]`` are meaningless (no such stump).
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    kernel = dispatch.kernel_for(_pair_sums, pairs.shape[0] * codes.shape[1])
    return kernel(codes, pairs, values, values, _width(n_thresholds), True)


def pair_fit_sums(
    codes: NDArray[np.int32], pairs: NDArray[np.int64], weights: NDArray[np.float64],
    values: NDArray[np.float64], n_thresholds: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(signed, split)``, each ``(n_features, max_thresholds + 1)``, in one pass over the pairs.

    ``signed[k, j]`` = ``values`` summed over the pairs the stump ``(k, j)`` orders correctly
    minus those it reverses; ``split[k, j]`` = ``weights`` summed over the pairs it splits
    (correct or reversed): ``c - r`` and ``c + r`` of :func:`pair_split_sums` of ``values``
    and of ``weights``, up to rounding. Entries with ``j >= n_thresholds[k]`` are meaningless.

    Rounding: an entry is accurate to about ``1e-16`` times the summed magnitude of the
    values, absolutely, not relatively: the prefix sum at bin ``j`` still holds the ``+v``
    and ``-v`` of pairs whose two bins are both ``<= j``, which cancel only up to rounding.
    Entries far below that scale are noise (see ``MPBoost``, which skips such stumps).
    """
    kernel = dispatch.kernel_for(_pair_sums, pairs.shape[0] * codes.shape[1])
    return kernel(codes, pairs, np.ascontiguousarray(weights, dtype=np.float64),
                  np.ascontiguousarray(values, dtype=np.float64), _width(n_thresholds), False)


@nb.njit(cache=True)
def best_fit_stump(signed, split, n_thresholds, scale, floor, tol, gain):
    """The flat index ``k * width + j`` of the stump of the largest ``gain = N^2 / D`` (the
    least-squares fit's reduction of the squared error), ``N = signed / scale`` and
    ``D = split / scale`` of :func:`pair_fit_sums` (``scale`` 1.0 there), among the existing stumps
    (``j < n_thresholds[k]``) with ``D > floor`` (the others count 0); the first, in ``(k, j)``
    order, within ``tol`` of the largest; ``gain`` (``(F, width)``, written) gets every stump's. Each
    entry's operations are those of the numpy expressions ``N * N / D`` it replaces, so the same
    bits, without their temporaries. ``-1`` when a gain is NaN."""
    nf, width = signed.shape
    best = 0.0
    for k in range(nf):
        for j in range(width):
            g = 0.0
            if j < n_thresholds[k]:
                d = split[k, j] / scale
                if d > floor:
                    n = signed[k, j] / scale
                    g = n * n / d
                    if g != g:
                        return -1
            gain[k, j] = g
            best = max(best, g)
    for k in range(nf):
        for j in range(width):
            if gain[k, j] >= best - tol:
                return k * width + j
    return -1


@nb.njit(cache=True)
def _doc_sides(pairs, values, n_docs):
    first = np.zeros(n_docs)
    second = np.zeros(n_docs)
    for p in range(pairs.shape[0]):
        first[pairs[p, 0]] += values[p]
        second[pairs[p, 1]] += values[p]
    return first, second


def doc_sides(pairs: NDArray[np.int64], values: NDArray[np.float64],
              n_docs: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per document, the values of its pairs as the preferred one (``sum_{pairs (x, .)} v``) and as
    the other (``sum_{pairs (., x)} v``)."""
    return _doc_sides(pairs, np.ascontiguousarray(values, dtype=np.float64), n_docs)


@nb.njit(cache=True, parallel=True)
def _doc_sums_above(codes, pot, width):
    """``out[k, j] = sum over codes > j`` from a histogram of the potentials per feature, four
    features at a time: one histogram alone makes each add wait for the one before when the
    documents fall in the same bin (a feature with few values), four in step overlap; each bin
    still adds its documents in row order, so the sums are those of one feature at a time bit for
    bit, and each feature's codes are read in sequence (a column)."""
    n, n_feat = codes.shape
    hist = np.zeros((n_feat, width + 1))
    for b in nb.prange((n_feat + 3) // 4):
        k = 4 * b
        if k + 4 <= n_feat:
            c0, c1, c2, c3 = codes[:, k], codes[:, k + 1], codes[:, k + 2], codes[:, k + 3]
            h0, h1, h2, h3 = hist[k], hist[k + 1], hist[k + 2], hist[k + 3]
            for i in range(n):
                p = pot[i]
                h0[c0[i]] += p
                h1[c1[i]] += p
                h2[c2[i]] += p
                h3[c3[i]] += p
        else:
            for f in range(k, n_feat):
                c0 = codes[:, f]
                h0 = hist[f]
                for i in range(n):
                    h0[c0[i]] += pot[i]
    out = np.zeros((n_feat, width))
    for k in range(n_feat):
        acc = 0.0
        for j in range(width - 1, -1, -1):
            acc += hist[k, j + 1]
            out[k, j] = acc
    return out


def doc_sums_above(codes: NDArray[np.int32], pot: NDArray[np.float64], n_thresholds: NDArray[np.int64]) -> NDArray[np.float64]:
    """``out[k, j] = sum_x pot[x] * [codes[x, k] > j]``, shape ``(n_features, max_thresholds + 1)``."""
    width = _width(n_thresholds)
    kernel = dispatch.kernel_for(_doc_sums_above, codes.shape[0] * codes.shape[1] // DOC_VISITS_PER_WORK)
    return kernel(codes, np.ascontiguousarray(pot, dtype=np.float64), width)
