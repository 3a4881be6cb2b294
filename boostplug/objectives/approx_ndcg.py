"""ApproxNDCG (Qin, Liu and Li, "A general approximation framework for direct optimization of
information retrieval measures", Information Retrieval 13(4), 2010): NDCG with each document's
position replaced by a smooth function of the scores, maximised directly. A listwise loss
(:mod:`.listwise`).

Per query (weight ``W``), with gains ``G = 2^label - 1``, ``Z`` the ideal DCG of the whole list and
``alpha`` the smoothing's sharpness (allRank's ``alpha``; TF-Ranking's temperature is ``1 / alpha``)::

    pi_x = 1 + sum_{y != x} sigmoid(alpha (s_y - s_x))         the approximate position of x (eq. 11)
    loss = W (1 - (1 / Z) sum_x G_x / log2(1 + pi_x))           1 - ApproxNDCG (eq. 12)

A query whose ideal DCG is 0 (no relevant document) has loss 0. The gradient is exact::

    d loss / d s_k = W (alpha / Z) sum_{x != k} sigma'_kx (c_k - c_x),   c_x = G_x D'(pi_x)

with ``sigma'_kx = sigma (1 - sigma)`` of the pair and ``D(p) = 1 / log2(1 + p)``. The loss is not
convex: its exact Hessian diagonal (mode ``"exact"``) is negative for many documents, so the
default mode is a positive surrogate (``"surrogate"``, kind ``"fitting"``): ``W (alpha^2 / Z)
sum_{x != k} sigma'_kx |c_k - c_x|``, ``alpha`` times the sum of the absolute pairwise terms of the
gradient (which bounds the part of the exact diagonal that is not the concave ``D''`` terms).

Cost: two passes over each query's pairs (``n^2 / 2`` divisions: ``sigmoid(alpha (s_y - s_x)) =
E_y / (E_x + E_y)`` with ``E = exp(alpha (s - centre))``, one exponential per document; where
``alpha`` times the query's score range exceeds :data:`DIRECT_RANGE` the exponentials would leave
float64 and each pair takes its own).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core.dcg import gains_of, inverse_ideal_dcgs, position_discounts
from ._contract import Hessian, Param
from .listwise import ListwiseLoss

__all__ = ["ApproxNDCG", "ApproxMRR", "discount", "DIRECT_RANGE"]

#: ``alpha`` times a query's score range beyond which each pair's sigmoid is computed on its own
#: (below it the per-document exponentials ``exp(alpha (s - centre))`` stay within float64).
DIRECT_RANGE = 600.0
_LN2 = math.log(2.0)


@nb.njit(cache=True, error_model="numpy")
def smoothed_positions(s, alpha, pi, sp, sig):  # type: ignore[no-untyped-def]
    """``pi``: each document's approximate position (its entries are overwritten); ``sp[x, y]`` (``x < y``): the
    pair's ``sigmoid'``; ``sig[x, y]`` (when it has rows): ``sigmoid(alpha (s_y - s_x))``."""
    n = s.shape[0]
    top = low = s[0]
    for x in range(n):   # pi's ones, s.max() and s.min(), without np.ones' and their compiles (finite scores)
        pi[x] = 1.0
        if s[x] > top:
            top = s[x]
        if s[x] < low:
            low = s[x]
    if alpha * (top - low) <= DIRECT_RANGE:
        e = np.exp(alpha * (s - 0.5 * (top + low)))
        for x in range(n):
            ex = e[x]
            acc = 0.0
            for y in range(x + 1, n):
                inv = 1.0 / (ex + e[y])
                up = e[y] * inv               # sigmoid(alpha (s_y - s_x)): y above x
                down = ex * inv
                acc += up
                pi[y] += down
                sp[x, y] = up * down
                if sig.shape[0]:
                    sig[x, y] = up
            pi[x] += acc
        return
    for x in range(n):
        for y in range(x + 1, n):
            z = alpha * (s[y] - s[x])
            t = math.exp(-abs(z))
            up = 1.0 / (1.0 + t) if z >= 0.0 else t / (1.0 + t)
            pi[x] += up
            pi[y] += 1.0 - up
            sp[x, y] = t / ((1.0 + t) * (1.0 + t))
            if sig.shape[0]:
                sig[x, y] = up


@nb.njit(cache=True, error_model="numpy")
def discount(p, reciprocal):  # type: ignore[no-untyped-def]
    """``(D(p), D'(p), D''(p))`` at a smoothed position ``p``: NDCG's ``1 / log2(1 + p)``, or the
    reciprocal rank's ``1 / p`` (``reciprocal``)."""
    if reciprocal:
        return 1.0 / p, -1.0 / (p * p), 2.0 / (p * p * p)
    log = math.log(1.0 + p)
    return (_LN2 / log, -_LN2 / ((1.0 + p) * log * log),
            _LN2 * (log + 2.0) / ((1.0 + p) * (1.0 + p) * log * log * log))


@nb.njit(error_model="numpy")
def _loss(s, doc, query, alpha, exact, reciprocal):  # type: ignore[no-untyped-def]
    inv_z = query[0]
    if inv_z == 0.0:
        return 0.0
    n = s.shape[0]
    pi = np.empty(n)
    smoothed_positions(s, alpha, pi, np.empty((n, n)), np.empty((0, 0)))
    dcg = 0.0
    for x in range(n):
        dcg += doc[x, 0] * discount(pi[x], reciprocal)[0]
    return 1.0 - dcg * inv_z


@nb.njit(error_model="numpy")
def _grad_hess(s, doc, query, grad, hess, alpha, exact, reciprocal):  # type: ignore[no-untyped-def]
    inv_z = query[0]
    if inv_z == 0.0:
        return
    n = s.shape[0]
    pi = np.empty(n)
    sp = np.empty((n, n))
    sig = np.empty((n, n)) if exact else np.empty((0, 0))
    smoothed_positions(s, alpha, pi, sp, sig)
    c = np.empty(n)    # G D'(pi)
    e = np.empty(n)    # G D''(pi)
    for x in range(n):
        _, d1, d2 = discount(pi[x], reciprocal)
        c[x] = doc[x, 0] * d1
        e[x] = doc[x, 0] * d2
    scale = alpha * inv_z
    total = np.zeros(n) if exact else np.empty(0)   # sum_y sigma'_xy, for the exact Hessian
    for x in range(n):
        cx = c[x]
        gx = 0.0
        hx = 0.0
        for y in range(x + 1, n):
            term = sp[x, y] * (cx - c[y])
            gx += term
            grad[y] -= term
            if not exact:
                a = abs(term)
                hx += a
                hess[y] += a
        grad[x] += gx
        hess[x] += hx
    for x in range(n):
        grad[x] *= scale
    if not exact:
        for x in range(n):
            hess[x] *= alpha * scale
        return
    # exact: (alpha^2 / Z) sum_y sigma'_xy [-(1 - 2 sigma_yx)(c_x - c_y) - e_x S_x - e_y sigma'_xy]
    for x in range(n):
        for y in range(x + 1, n):
            total[x] += sp[x, y]
            total[y] += sp[x, y]
    for x in range(n):
        hx = -e[x] * total[x] * total[x]
        for y in range(n):
            if y == x:
                continue
            a, b = (x, y) if x < y else (y, x)
            above = sig[a, b] if x < y else 1.0 - sig[a, b]   # sigmoid(alpha (s_y - s_x)): y above x
            hx += sp[a, b] * (-(1.0 - 2.0 * above) * (c[x] - c[y]) - e[y] * sp[a, b])
        hess[x] = alpha * scale * hx


class ApproxNDCG(ListwiseLoss):
    """ApproxNDCG: 1 - NDCG with sigmoid-smoothed positions (module docstring); ``alpha`` in
    [1e-3, 1e3] (allRank's default 1)."""

    compile_at_bind = False
    name = "approx_ndcg"
    summary = "ApproxNDCG: NDCG with sigmoid-smoothed positions, maximised directly (Qin, Liu and Li 2010)"
    # not searched by --tune: alpha scales the gradient by alpha and the Hessian by alpha^2 at scores alpha s, so
    # under Newton leaves alpha with L2 lambda grows alpha = 1's trees with lambda / alpha^2, its predictions
    # divided by alpha (docs/objectives/neural.md): the L2 term --tune searches is the same dimension
    params = {"alpha": Param(1.0, "real", "sharpness of the smoothed positions, 1 / temperature (allRank's alpha; "
                             "TF-Ranking's temperature is 1 / alpha)", low=1e-3, high=1e3)}
    hessians = {
        "surrogate": Hessian("fitting", "alpha^2 / Z sum_x sigma'_kx |c_k - c_x|: alpha times the absolute pairwise "
                             "terms of the gradient, positive (the loss is not convex)"),
        "exact": Hessian("exact", "the exact diagonal of the loss's Hessian, negative for many documents (the "
                         "loss is not convex): a Newton leaf steps uphill there"),
    }
    list_loss = staticmethod(_loss)
    list_grad_hess = staticmethod(_grad_hess)

    alpha: float

    def setup(self) -> None:
        gains = gains_of(self.labels, "exp2", self.name)
        discounts = position_discounts(self.group_ptr)
        self._inputs = gains[:, None], inverse_ideal_dcgs(gains, self.group_ptr, discounts)[:, None]
        super().setup()

    def list_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self._inputs

    def list_args(self) -> tuple[float, bool, bool]:
        return float(self.alpha), self.hessian == "exact", False

    def list_work(self) -> int:
        sizes = np.diff(self.group_ptr)
        return int(np.sum(sizes * sizes))

    def query_bytes(self, n: int) -> int:
        return 8 * n * n * (2 if self.hessian == "exact" else 1)  # the smoothed positions' n x n (and sigma's)


class ApproxMRR(ApproxNDCG):
    """ApproxMRR: 1 - sum_x y_x / pi_x / sum_x y_x per query, the labels as weights (TF-Ranking's
    ApproxMRRLoss, plus 1); a query whose labels sum to 0 has loss 0."""

    name = "approx_mrr"
    summary = "ApproxMRR: the label-weighted mean reciprocal of the sigmoid-smoothed positions (TF-Ranking's)"

    def setup(self) -> None:
        sums = np.bincount(np.repeat(np.arange(self.n_queries), np.diff(self.group_ptr)), weights=self.labels,
                           minlength=self.n_queries)
        inv = np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0.0)
        self._inputs = self.labels[:, None], inv[:, None]
        ListwiseLoss.setup(self)

    def list_args(self) -> tuple[float, bool, bool]:
        return float(self.alpha), self.hessian == "exact", True
