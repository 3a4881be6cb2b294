"""Numba kernels behind :mod:`boostplug.objectives.qbrank` (private).

Every label-derived pair ``(x, y)`` of a query (``label_x > label_y``) has the
margin ``m = b[y] - a[x]`` and is active when ``m > 0`` (strictly: the hinge at
its kink contributes nothing), with per-document keys

* ``tau = "grade"``: ``a = b = h - label`` (then ``m = h_y - h_x + (l_x - l_y)``),
* constant ``tau``:  ``a = h``, ``b = h + tau``.

So the pair sums of a document are dominance sums over (key, label level): a
sweep in key order feeding a Fenwick tree indexed by label level gives them in
O(n log n) per query instead of O(n^2). In both cases ``b`` orders as ``a`` (floating
addition of a constant is monotone), so one sort of ``a`` serves both keys. The kernels form
the keys from the scores query by query (:func:`_query_keys`). All inputs are validated float64 /
int64 arrays (the public functions check them); nothing here can see NaN but an overflowing score
span, which the caller refuses from the returned spans. ``a`` is sorted by
:func:`~boostplug._core.sorting.stable_argsort_descending`, read backwards: the sweeps compare key
values, so the order of equal keys does not change a sum's terms.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._core.sorting import stable_argsort_descending

__all__ = ["pair_grad", "sweep_high", "explicit_terms", "add_row_terms"]


@nb.njit(inline="always")
def _copy_into(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[:] = src`` for equal lengths, as a loop: numba's slice assignment compiles a
    shape-mismatch message (string formatting) that costs seconds on first use."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@nb.njit(inline="always")
def _fenwick_add(tree: np.ndarray, pos: int, values: tuple) -> None:
    """Add ``values`` (one per column) to the Fenwick tree ``tree`` (rows ``1..n``) at 1-based ``pos``."""
    n = tree.shape[0] - 1
    while pos <= n:
        for t in range(len(values)):
            tree[pos, t] += values[t]
        pos += pos & (-pos)


@nb.njit(inline="always")
def _fenwick_prefix(tree: np.ndarray, pos: int, acc: np.ndarray) -> None:
    """``acc`` (one per column) = the sums of ``tree``'s positions ``1..pos`` (``pos = 0``: zeros)."""
    acc[:] = 0.0
    while pos > 0:
        for t in range(acc.shape[0]):
            acc[t] += tree[pos, t]
        pos -= pos & (-pos)


@nb.njit(inline="always")
def _query_keys(h: np.ndarray, labels: np.ndarray, grade: bool, s: int, e: int) -> tuple[np.ndarray, float, float]:
    """One query's keys ``a`` (its scores less the query's lowest one, less the grades when
    ``grade``), their mean and the span of its scores (``max - min``).

    Keys are taken relative to the lowest score, so a margin is formed from score differences
    (``h - l`` at ``|h| = 1e17`` would lose the grades); ``b = a + tau`` (``tau`` 0 when
    ``grade``) is formed where it is compared. Activity is decided on these raw keys; margins
    depend on ``b - a`` only, so the accumulated values are centred on the mean to limit
    cancellation.
    """
    lo = h[s]
    hi = h[s]
    for i in range(s + 1, e):
        lo = min(lo, h[i])
        hi = max(hi, h[i])
    a = np.empty(e - s)
    c = 0.0
    for k in range(e - s):
        v = h[s + k] - lo
        if grade:
            v = v - labels[s + k]
        a[k] = v
        c += v
    return a, c / (e - s), hi - lo


@nb.njit(cache=True, parallel=True)
def sweep_high(
    h: np.ndarray,
    labels: np.ndarray,
    grade: bool,
    tau: float,
    d: np.ndarray,
    level: np.ndarray,
    n_levels: np.ndarray,
    group_ptr: np.ndarray,
    qsums: np.ndarray,
    span: np.ndarray,
) -> None:
    """Sums over the active pairs of each query at the scores ``h``, for the line search.

    Writes per query ``qsums[q] = (sum m^2, sum m*delta, sum delta^2)`` over all its active
    pairs ``(x, y)``, with ``delta = d[y] - d[x]`` (a direction), and ``span[q]`` its score span
    (0 where it forms no pairs: the caller refuses an overflow). Keys: :func:`_query_keys`,
    ``b = a + tau``, which orders as ``a``.
    """
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        s, e, n_lev = group_ptr[q], group_ptr[q + 1], n_levels[q]
        span[q] = 0.0
        n = e - s
        qsums[q, :] = 0.0
        if n_lev < 2:
            continue
        ar, c, span[q] = _query_keys(h, labels, grade, s, e)
        oa = stable_argsort_descending(ar)[::-1]
        tree = np.zeros((n_lev + 1, 6))
        acc = np.zeros(6)
        p = n - 1
        sq = 0.0
        md = 0.0
        dd = 0.0
        for k in range(n - 1, -1, -1):  # x by decreasing a
            ix = oa[k]
            ax = ar[ix] - c
            while p >= 0 and ar[oa[p]] + tau > ar[ix]:  # every y with b_y > a_x joins
                iy = oa[p]
                by = (ar[iy] + tau) - c
                dy = d[s + iy]
                _fenwick_add(tree, level[s + iy] + 1, (1.0, by, by * by, dy, dy * dy, by * dy))
                p -= 1
            _fenwick_prefix(tree, level[s + ix], acc)  # levels strictly below x's
            cnt_x = acc[0]
            sb = acc[1]
            sd = acc[3]
            dx = d[s + ix]
            sq += max(0.0, acc[2] - 2.0 * ax * sb + cnt_x * ax * ax)
            md += acc[5] - dx * sb - ax * sd + cnt_x * ax * dx
            dd += max(0.0, cnt_x * dx * dx - 2.0 * dx * sd + acc[4])
        qsums[q, 0] = sq
        qsums[q, 1] = md
        qsums[q, 2] = dd


@nb.njit(cache=True)
def _sort_from(keys: np.ndarray, idx: np.ndarray) -> bool:
    """Insertion-sort ``idx`` (a permutation of ``0..n-1``) by ``keys[idx]``: O(n + inversions),
    so a nearly sorted start (the previous boosting round's order) costs little. False, with
    ``idx`` still a permutation, once the moves pass ~n log n (then a full sort is cheaper)."""
    n = idx.shape[0]
    budget = 4 * n * (1 + int(math.log2(n + 1)))
    moves = 0
    for i in range(1, n):
        j = idx[i]
        k = keys[j]
        p = i - 1
        while p >= 0 and keys[idx[p]] > k:
            idx[p + 1] = idx[p]
            p -= 1
        idx[p + 1] = j
        moves += i - 1 - p
        if moves > budget:
            return False
    return True


@nb.njit(cache=True, parallel=True)
def pair_grad(
    h: np.ndarray,
    labels: np.ndarray,
    grade: bool,
    tau: float,
    level: np.ndarray,
    n_levels: np.ndarray,
    group_ptr: np.ndarray,
    hint: np.ndarray,
    order: np.ndarray,
    gsum: np.ndarray,
    cnt: np.ndarray,
    qloss: np.ndarray,
    span: np.ndarray,
) -> None:
    """Unweighted pair parts of the gradient, the active-pair counts and the loss at the scores ``h``.

    Per document ``i``: ``gsum[i]`` = (sum of margins of active pairs where ``i``
    is the less preferred one) - (sum where it is the preferred one), i.e.
    ``dR/dh_i / (w W)``; ``cnt[i]`` = number of its active pairs. Per query:
    ``qloss[q]`` = sum of squared margins of its active pairs and ``span[q]`` its score span (0
    where it forms no pairs: the caller refuses an overflow). Two sweeps after one sort per query
    (keys: :func:`_query_keys`, ``b = a + tau``, which orders as ``a``). ``order[s:e]`` receives
    each query's documents by ``a`` (local indices); ``hint``, when it holds one per document (an
    earlier call's ``order``), is where that sort starts.
    """
    nq = group_ptr.shape[0] - 1
    for q in nb.prange(nq):
        s, e, n_lev = group_ptr[q], group_ptr[q + 1], n_levels[q]
        span[q] = 0.0
        n = e - s
        qloss[q] = 0.0
        if n_lev < 2:  # no pair: its rows' sums are 0
            for i in range(s, e):
                gsum[i] = 0.0
                cnt[i] = 0.0
            continue
        ar, c, span[q] = _query_keys(h, labels, grade, s, e)
        oa = order[s:e]
        if hint.shape[0] == order.shape[0]:
            _copy_into(oa, hint[s:e])
            if not _sort_from(ar, oa):
                _copy_into(oa, stable_argsort_descending(ar)[::-1])
        else:
            _copy_into(oa, stable_argsort_descending(ar)[::-1])
        # x as the preferred document: y of a lower level with b_y > a_x.
        hi = np.zeros((n_lev + 1, 3))
        acc = np.empty(3)       # _fenwick_prefix zeroes it first
        p = n - 1
        sq = 0.0
        for k in range(n - 1, -1, -1):
            ix = oa[k]
            while p >= 0 and ar[oa[p]] + tau > ar[ix]:
                iy = oa[p]
                by = (ar[iy] + tau) - c
                _fenwick_add(hi, level[s + iy] + 1, (1.0, by, by * by))
                p -= 1
            _fenwick_prefix(hi, level[s + ix], acc)
            c0, c1, c2 = acc[0], acc[1], acc[2]
            ax = ar[ix] - c
            gsum[s + ix] = -(c1 - c0 * ax)
            cnt[s + ix] = c0
            sq += max(0.0, c2 - 2.0 * ax * c1 + c0 * ax * ax)
        qloss[q] = sq
        # y as the less preferred document: x of a higher level with a_x < b_y.
        lo = np.zeros((n_lev + 1, 2))
        p = 0
        for k in range(n):
            iy = oa[k]
            by = ar[iy] + tau
            while p < n and ar[oa[p]] < by:
                ix = oa[p]
                _fenwick_add(lo, n_lev - level[s + ix], (1.0, ar[ix] - c))  # reversed level, 1-based
                p += 1
            _fenwick_prefix(lo, n_lev - 1 - level[s + iy], acc[:2])  # reversed levels strictly above y's
            gsum[s + iy] += acc[0] * (by - c) - acc[1]
            cnt[s + iy] += acc[0]


@nb.njit(cache=True)
def explicit_terms(
    h: np.ndarray,
    d: np.ndarray,
    px: np.ndarray,
    py: np.ndarray,
    tau: float,
    omega: np.ndarray,
    grad: np.ndarray,
    active_w: np.ndarray,
) -> tuple[float, float, float]:
    """Explicit pairs ``(px[p] preferred over py[p])`` with margin ``(h_y - h_x) + tau``
    (the difference first: ``h_y + tau`` would drop ``tau`` at large ``|h|``).

    Adds ``d/dh`` of ``omega/2 * max(0, m)^2`` into ``grad`` and ``omega`` of each
    active pair into ``active_w`` of both rows; returns ``(sum omega m^2,
    sum omega m delta, sum omega delta^2)`` over the active pairs. Serial: pairs
    may cross queries, so rows are shared.
    """
    sq = 0.0
    md = 0.0
    dd = 0.0
    for p in range(px.shape[0]):
        x = px[p]
        y = py[p]
        m = (h[y] - h[x]) + tau
        w = omega[p]
        if m > 0.0 and w > 0.0:  # a zero-weight pair adds nothing (0 * inf would be NaN)
            sq += w * m * m
            grad[x] -= w * m
            grad[y] += w * m
            active_w[x] += w
            active_w[y] += w
            delta = d[y] - d[x]
            md += w * m * delta
            dd += w * delta * delta
    return sq, md, dd


@nb.njit(cache=True)
def add_row_terms(grad: np.ndarray, hess: np.ndarray, gsum: np.ndarray, cnt: np.ndarray, pair_w: np.ndarray,
                  lab_w: np.ndarray, scores: np.ndarray, labels: np.ndarray, pairs: bool, with_hess: bool) -> None:
    """Add, in one pass, the label pairs' part (``pair_w * gsum``, Hessian ``2 pair_w cnt``; where
    ``pairs``) and the squared-error part (``lab_w (s - l)``, Hessian ``lab_w``) to ``grad`` and
    ``hess`` (the explicit pairs' terms). A row whose weight is 0 adds nothing, even where its
    other factor overflowed."""
    for i in range(grad.shape[0]):
        g = grad[i]
        h = 0.0
        if pairs and pair_w[i] > 0.0:
            g += pair_w[i] * gsum[i]
            h += 2.0 * pair_w[i] * cnt[i]
        if lab_w[i] > 0.0:
            g += lab_w[i] * (scores[i] - labels[i])
            h += lab_w[i]
        grad[i] = g
        if with_hess:
            hess[i] += h
