"""Numba kernels behind :mod:`boostplug.objectives.ndcg_boost` (private).

Every kernel works on the per-document coefficients ``c_i = G_i / Z_k`` (gain over the
query's ideal DCG, built once by the prepared objective; the listwise base multiplies a query's
sums by its weight ``W_k``, the booster's :func:`pair_grad_loss` takes ``W_k G_i / Z_k``) and on
the raw scores with ``F = sigma * score`` (Eq. 8).
Each unordered pair ``i < j`` of a query is visited once, with
``x = F_i - F_j = sigma (s_i - s_j)`` (computed from the score difference, so it
is never NaN: an overflowing difference becomes ``+-inf`` and behaves as the
limit) and the single exponential ``t = exp(-|x|)`` in ``(0, 1]``. Everything
the pair needs follows from ``t`` without overflow:

* ``sigmoid(|x|) = 1 / (1 + t)``, ``sigmoid(-|x|) = t / (1 + t)``  (the logistic of Eq. 10);
* ``gamma_ij = exp(x) / (1 + exp(x))^2 = t / (1 + t)^2``          (Eq. 14, even in x);
* ``1 - 2 sigmoid(x) = -sign(x) (1 - t) / (1 + t)``               (for the exact Hessian).

The exponential is :func:`exp_nonpos`, an inlined exp for arguments <= 0
(Cody-Waite reduction and a degree-13 Taylor polynomial, within 1 ulp of libm's
``exp``, exactly 0 below -708) instead of the libm call, so that LLVM can
vectorise the pair loop (the libm call is several times slower per pair). The pair loops are compiled with ``fastmath={"reassoc", "contract"}``
(sums may be reordered and fused; no assumption about NaN or infinities, which
the +-inf score differences rely on) and ``error_model="numpy"`` (no
ZeroDivisionError branch: ``1 + t >= 1``), and index row slices from 0 (no
negative-index wraparound test); either branch alone stops the vectoriser.
Vectorised, a pair costs a fraction of the scalar loop's time (docs/results/objectives_notes/README.md).

Inputs are validated contiguous float64/int64 arrays (the public API checks them).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["exp_nonpos", "logistic_pair", "list_loss", "list_grad_hess", "pair_grad_loss",
           "cross_gamma_sums"]

#: Hessian modes understood by :func:`list_grad_hess`.
MODE_BOUND = 1  # sum_j |c_i - c_j| gamma_ij
MODE_EXACT = 2  # -sum_j (c_i - c_j) gamma_ij (1 - 2 sigmoid(F_i - F_j))

_FAST = {"reassoc", "contract"}
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm's Cody-Waite constants)
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_EXP_MIN = -708.0  # below: 0 (2^k must stay a normal number)


@nb.njit(inline="always")
def exp_nonpos(y: float) -> float:
    """``exp(y)`` for ``y <= 0`` (``-inf`` allowed), within 1 ulp; 0 for ``y <= -708``.

    ``y = k ln2 + r`` with ``|r| <= ln2 / 2`` and ``exp(r)`` by Horner's rule on its
    Taylor series to degree 13 (truncation error < 1e-17), times ``2^k`` built
    from the exponent bits. Branch-free, so loops calling it vectorise.
    """
    yc = max(y, _EXP_MIN)
    ki = nb.int32(yc * _INV_LN2 - 0.5)  # round to nearest (yc <= 0, truncation towards 0)
    k = nb.float64(ki)
    r = (yc - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = np.int64(nb.int64(ki + 1023) << 52).view(np.float64)  # 2^k
    return p * scale if y > _EXP_MIN else 0.0


@nb.njit(inline="always")
def logistic_pair(x: float) -> tuple[float, float, float]:
    """``(t, lo, hi)`` of a pair's margin ``x``: ``t = exp(-|x|)`` in ``(0, 1]``, ``lo = sigmoid(-|x|)``
    and ``hi = sigmoid(|x|)``, so ``gamma = lo * hi`` (Eq. 14); from the one exponential, finite for
    any ``x`` (+-inf included): the stable sigmoid every pair loop here shares."""
    t = exp_nonpos(-abs(x))
    hi = 1.0 / (1.0 + t)
    return t, t * hi, hi


@nb.njit(inline="always")
def _in_order(s: np.ndarray, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One query's scores and coefficients in coefficient order, and where each one's run of equal
    coefficients ends, from its rows of the inputs (:func:`list_loss`)."""
    n = s.shape[0]
    sp = np.empty(n)
    cq = np.empty(n)
    run_end = np.empty(n, dtype=np.int64)
    for k in range(n):
        cq[k] = doc[k, 0]
        sp[k] = s[np.int64(doc[k, 1])]
        run_end[k] = np.int64(doc[k, 2])
    return sp, cq, run_end


@nb.njit(inline="always")
def _partners(sp: np.ndarray, cq: np.ndarray, run_end: np.ndarray, i: int
              ) -> tuple[float, float, np.ndarray, np.ndarray, int]:
    """Position ``i`` of a query in coefficient order (:func:`_in_order`): its score and coefficient,
    and the scores and coefficients of its partners of another coefficient after it (views indexed
    from 0, from position ``j0``)."""
    j0 = run_end[i]
    return sp[i], cq[i], sp[j0:], cq[j0:], j0


@nb.njit(fastmath=_FAST, error_model="numpy")
def list_loss(s: np.ndarray, doc: np.ndarray, query: np.ndarray, sigma: float, mode: int, neg_sigma: float,
              hess_scale: float) -> float:
    """One query's ``sum_i c_i A_i`` (Eq. 10-11; the listwise base's ``list_loss``). Its rows of ``doc``
    are its positions in coefficient order: (the coefficient, the position's row in the query, where
    its run of equal coefficients ends); ``query[0]`` is the loss of its pairs of equal coefficients.

    A pair of different coefficients ``i < j`` (in coefficient order) contributes
    ``c_i sigmoid(F_j - F_i) + c_j sigmoid(F_i - F_j)`` (document i's share of A_i and j's share
    of A_j); the pairs of equal coefficients add ``c`` each whatever the scores.
    """
    n = s.shape[0]
    if doc[0, 2] >= n:  # one coefficient: nothing follows the scores
        return query[0]
    sp, cq, run_end = _in_order(s, doc)
    acc = 0.0
    for i in range(n - 1):
        si, ci, sr, cr, j0 = _partners(sp, cq, run_end, i)
        for j in range(sr.shape[0]):
            x = sigma * (si - sr[j])
            _, lo, hi = logistic_pair(x)
            cj = cr[j]
            # x >= 0: sigmoid(F_j - F_i) = lo, sigmoid(F_i - F_j) = hi
            acc += (ci * lo + cj * hi) if x >= 0.0 else (ci * hi + cj * lo)
    return acc + query[0]


@nb.njit(fastmath=_FAST, error_model="numpy")
def list_grad_hess(s: np.ndarray, doc: np.ndarray, query: np.ndarray, grad: np.ndarray, hess: np.ndarray,
                   sigma: float, mode: int, neg_sigma: float, hess_scale: float) -> None:
    """One query's gradient and Hessian (the listwise base's ``list_grad_hess``; ``query`` as in
    :func:`list_loss`; ``grad`` and ``hess`` arrive zeroed): ``-sigma w_i`` with
    ``w[i] = sum_j (c_i - c_j) gamma_ij`` (Eq. 16, = -dM/dF_i), and ``hess_scale`` times, by ``mode``,
    ``MODE_BOUND`` ``sum_j |c_i - c_j| gamma_ij`` or ``MODE_EXACT``
    ``d2M/dF_i^2 = -sum_j (c_i - c_j) gamma_ij (1 - 2 sigmoid(F_i - F_j))``.

    Every term carries ``c_i - c_j``, so only the pairs of different coefficients are visited: a
    position's partners start where its run of equal coefficients ends. The pair term of the
    exact Hessian is the same for i and j: swapping i and j flips the signs of both ``c_i - c_j`` and
    ``1 - 2 sigmoid(x)``. The mode is tested outside the pair loop so that each loop stays
    branch-free.
    """
    n = s.shape[0]
    if doc[0, 2] >= n:  # one coefficient: every term is 0
        return
    sp, cq, run_end = _in_order(s, doc)
    wp = np.zeros(n)
    hp = np.zeros(n)
    for i in range(n - 1):
        si, ci, sr, cr, j0 = _partners(sp, cq, run_end, i)
        wr = wp[j0:]
        hr = hp[j0:]
        wi = 0.0
        hi = 0.0
        if mode == MODE_BOUND:
            for j in range(sr.shape[0]):
                _, lo, u = logistic_pair(sigma * (si - sr[j]))
                gd = (ci - cr[j]) * (lo * u)  # (c_i - c_j) gamma_ij, Eq. 14/16
                wi += gd
                wr[j] -= gd
                hi += abs(gd)
                hr[j] += abs(gd)
        else:
            for j in range(sr.shape[0]):
                x = sigma * (si - sr[j])
                t, lo, u = logistic_pair(x)
                gd = (ci - cr[j]) * (lo * u)
                wi += gd
                wr[j] -= gd
                # -(c_i - c_j) gamma_ij (1 - 2 sigmoid(x)) = (c_i - c_j) gamma_ij sign(x) tanh(|x| / 2)
                he = gd * (1.0 - t) * u
                he = he if x >= 0.0 else -he
                hi += he
                hr[j] += he
        wp[i] += wi
        hp[i] += hi
    for k in range(n):  # dM/dscore = sigma dM/dF = -sigma w (Eq. 16)
        r = np.int64(doc[k, 1])
        grad[r] = wp[k] * neg_sigma
        hess[r] = hp[k] * hess_scale


@nb.njit(cache=True, parallel=True, fastmath=_FAST, error_model="numpy")
def pair_grad_loss(scores: np.ndarray, sigma: float, doc: np.ndarray, same: np.ndarray, group_ptr: np.ndarray,
                   queries: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """:func:`list_grad_hess`'s ``w`` (before ``-sigma``) and each query's :func:`list_loss` in one pass over
    the pairs of different coefficients of the queries in ``queries`` (``doc`` and ``same``: their
    inputs; their documents' ``w`` is overwritten; a query whose coefficients are all equal gets
    ``w = 0`` exactly)."""
    for m in nb.prange(queries.shape[0]):
        q = queries[m]
        a, b = group_ptr[q], group_ptr[q + 1]
        sp, cq, run_end = _in_order(scores[a:b], doc[a:b])
        wp = np.zeros(b - a)
        acc = 0.0
        for i in range(b - a - 1):
            si, ci, sr, cr, j0 = _partners(sp, cq, run_end, i)
            wr = wp[j0:]
            wi = 0.0
            for j in range(sr.shape[0]):
                x = sigma * (si - sr[j])
                _, lo, u = logistic_pair(x)
                cj = cr[j]
                gd = (ci - cj) * (lo * u)
                wi += gd
                wr[j] -= gd
                acc += (ci * lo + cj * u) if x >= 0.0 else (ci * u + cj * lo)
            wp[i] += wi
        for k in range(b - a):
            w[a + np.int64(doc[a + k, 1])] = wp[k]
        out[q] = acc + same[q, 0]


@nb.njit(cache=True, parallel=True, fastmath=_FAST, error_model="numpy")
def cross_gamma_sums(F: np.ndarray, f: np.ndarray, coef: np.ndarray, group_ptr: np.ndarray,
                     num: np.ndarray, den: np.ndarray) -> None:
    """Per query ``q``: ``num[q] = sum_{f_i = 1, f_j = 0} c_i gamma_ij`` and ``den[q]`` the same with
    ``c_j`` (Eq. 15's sums; ``gamma`` is even, so each pair across the split is visited once, from
    the query's two sides gathered into contiguous arrays)."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n1 = 0
        for i in range(a, b):
            if f[i] != 0.0:
                n1 += 1
        n0 = (b - a) - n1
        if n1 == 0 or n0 == 0:
            num[q] = 0.0
            den[q] = 0.0
            continue
        F1 = np.empty(n1)
        c1 = np.empty(n1)
        F0 = np.empty(n0)
        c0 = np.empty(n0)
        p1 = 0
        p0 = 0
        for i in range(a, b):
            if f[i] != 0.0:
                F1[p1] = F[i]
                c1[p1] = coef[i]
                p1 += 1
            else:
                F0[p0] = F[i]
                c0[p0] = coef[i]
                p0 += 1
        sn = 0.0
        sd = 0.0
        for i in range(n1):
            fi = F1[i]
            gi = 0.0
            for j in range(n0):
                _, lo, hi = logistic_pair(fi - F0[j])
                g = lo * hi            # gamma (Eq. 14)
                gi += g
                sd += c0[j] * g
            sn += c1[i] * gi
        num[q] = sn
        den[q] = sd
