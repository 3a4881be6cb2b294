"""LambdaLoss's metric-driven losses NDCG-Loss1, NDCG-Loss2 and NDCG-Loss2++ (Wang, Li, Golbandi,
Bendersky, Najork, CIKM 2018, Section 4), on the pair base (:mod:`.pairwise`) and, for NDCG-Loss1, the listwise one (:mod:`.listwise`).

With the documents of a query in the order of the current scores (descending; ties in input
order), ``r_i`` the 1-based position of document ``i``, ``D(r) = log2(1 + r)``, gains ``G_i =
(2^y_i - 1) / maxDCG`` (the ideal DCG of the whole query), the position-gap weight and LambdaRank's
weight of a pair ``(i, j)`` with ``y_i > y_j`` are::

    delta_ij = |1 / D(|r_i - r_j|) - 1 / D(|r_i - r_j| + 1)| |G_i - G_j|
    rho_ij   = |1 / D(r_i) - 1 / D(r_j)| |G_i - G_j|

and the losses of query ``k`` (weight ``W_k``), summed over its pairs of different labels::

    NDCG-Loss2:    W_k sum delta_ij log(1 + exp(-sigma (s_i - s_j)))
    NDCG-Loss2++:  W_k sum (rho_ij + mu delta_ij) log(1 + exp(-sigma (s_i - s_j)))

The weights depend on the order, so the gradient is the loss's derivative with them held
(gradient kind ``"lambda"``, :mod:`.pairwise`). The natural logarithm for the paper's ``-log2``, no
scaling by the list size, and ``truncation_level`` (default: every pair, the paper's losses):
docs/objectives/lambdaloss.md, "Pitfalls" and "Truncation".

NDCG-Loss1 weighs each document's logistic terms against *every* other document, equal labels
included, by the document's own share of the DCG, ``G_i / D(r_i)``::

    NDCG-Loss1:    W_k sum_i (G_i / D(r_i)) sum_{j != i} log(1 + exp(-sigma (s_i - s_j)))

Its weight belongs to a document, not to a pair of different labels, so it is a listwise loss
(:mod:`.listwise`) whose sum runs over the ordered pairs of each query, with the logistic pair
functions and the weights held as the pair base holds them (the paper's ``j = i`` term, a
constant, is left out).
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np
from numpy.typing import NDArray

from ._contract import Param, Search
from .listwise import ListwiseLoss
from .._core.dcg import delta_ndcg, gains_of, inverse_ideal_dcgs, position_discounts
from .._core.sorting import stable_argsort_descending
from .logistic import LOGISTIC
from .pairwise import LAMBDA_EXACT, NO_TRUNCATION, PairwiseLoss
from .ranknet import SIGMA, TRUNCATION_LEVEL, Truncatable

__all__ = ["NDCGLoss1", "NDCGLoss2", "NDCGLoss2PP", "position_gap_discount", "GAP_DISCOUNTS"]

_logistic_loss, _logistic_grad, _logistic_hess = (f.__func__ for f in LOGISTIC)


@nb.njit(cache=True)
def _gap_discount(gap: int) -> float:
    """``|1 / D(g) - 1 / D(g + 1)|``, ``D(r) = log2(1 + r)``, for a gap ``g >= 1``."""
    return abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap))


#: :func:`_gap_discount` of the gaps 0 (0) to 4,095, built once: a pair's ``delta_ij`` is a look-up,
#: no logarithm (MSLR's longest query has 1,251 documents). A module constant, which numba compiles
#: into the weight: an array among ``pair_args()`` would be passed to every pair function's call,
#: and that costs more than the two logarithms it saves.
GAP_DISCOUNTS = np.array([0.0] + [_gap_discount.py_func(g) for g in range(1, 4096)])
GAP_DISCOUNTS.setflags(write=False)


@nb.njit(cache=True)
def position_gap_discount(rank_i: int, rank_j: int) -> float:
    """``|1 / D(g) - 1 / D(g + 1)|`` of the positions' gap ``g = |r_i - r_j|``, ``D(r) = log2(1 + r)``
    (0 for ``g = 0``): LambdaLoss's ``delta_ij`` before the gain difference. Looked up in
    :data:`GAP_DISCOUNTS` (computed beyond it)."""
    gap = abs(rank_i - rank_j)
    if gap < GAP_DISCOUNTS.shape[0]:
        return GAP_DISCOUNTS[np.uint64(gap)]  # unsigned: no wraparound code
    return _gap_discount(gap)


class _LambdaLoss(Truncatable, PairwiseLoss):
    """What NDCG-Loss2 and NDCG-Loss2++ share: the logistic pair loss, the optional
    ``truncation_level`` (:class:`.ranknet.Truncatable`) and the paper's gains, normalised by the
    whole query's ideal DCG whatever the truncation."""

    hessians = {"exact": LAMBDA_EXACT}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    def inverse_max_dcgs(self, gains: NDArray[np.float64]) -> NDArray[np.float64]:
        """``1 / maxDCG`` of each whole query (the paper's ``G_i``), even with a truncation: a kept pair
        weighs what it weighs in the paper's loss (LightGBM's lambdarank takes it at its truncation level)."""
        return inverse_ideal_dcgs(gains, self.group_ptr, self._discounts)


class NDCGLoss2(_LambdaLoss):
    """LambdaLoss's NDCG-Loss2: the logistic pair loss weighted by ``delta_ij`` (module docstring)."""

    name = "ndcg_loss2"
    summary = "LambdaLoss's NDCG-Loss2: logistic pair loss weighted by the position-gap bound (Wang et al. 2018)"
    params = {"sigma": SIGMA, "truncation_level": TRUNCATION_LEVEL}

    @staticmethod
    def pair_weight(p, sigma):  # type: ignore[no-untyped-def]
        return abs(p.gain_i - p.gain_j) * p.inv_max_dcg * position_gap_discount(p.rank_i, p.rank_j)


class NDCGLoss2PP(_LambdaLoss):
    """LambdaLoss's NDCG-Loss2++: the logistic pair loss weighted by ``rho_ij + mu delta_ij``
    (module docstring); ``mu = 0`` is LambdaRank's weight (without LightGBM's normalisation)."""

    name = "ndcg_loss2pp"
    summary = "LambdaLoss's NDCG-Loss2++: LambdaRank's weight plus mu times NDCG-Loss2's (Wang et al. 2018)"
    params = {"sigma": SIGMA,
              # at most 1e6: the weights reach 1 + mu, and LightGBM's float32 gradients and split gains
              # (squares of their sums) stay finite far beyond the paper's values (mu = 5)
              "mu": Param(5.0, "real", "weight of NDCG-Loss2's position-gap term beside LambdaRank's", low=0.0,
                          high=1e6, search=Search(1.0, 20.0, log=True)),
              "truncation_level": TRUNCATION_LEVEL}

    @staticmethod
    def pair_weight(p, sigma, mu):  # type: ignore[no-untyped-def]
        rho = abs(delta_ndcg(p.gain_i, p.gain_j, p.discount_i, p.discount_j, p.inv_max_dcg))  # LambdaRank's weight
        return rho + mu * abs(p.gain_i - p.gain_j) * p.inv_max_dcg * position_gap_discount(p.rank_i, p.rank_j)


class NDCGLoss1(ListwiseLoss):
    """LambdaLoss's NDCG-Loss1: the logistic loss of every ordered pair ``(i, j)`` of a query, equal
    labels included, weighted by ``G_i / D(r_i)`` (module docstring): a listwise loss whose
    weights follow the order (gradient kind ``"lambda"``); with ``truncation_level = k`` only the
    pairs with a document among the first ``k`` positions count."""

    compile_at_bind = False
    name = "ndcg_loss1"
    summary = "LambdaLoss's NDCG-Loss1: each document's logistic terms against all others, weighted by its " \
              "G / D (Wang et al. 2018)"
    params = {"sigma": SIGMA, "truncation_level": TRUNCATION_LEVEL}
    hessians = {"exact": LAMBDA_EXACT}

    sigma: float
    truncation_level: int | None

    def setup(self) -> None:
        self._discounts = position_discounts(self.group_ptr)
        gains = gains_of(self.labels, "exp2", self.name)
        self._inputs = (gains[:, None], inverse_ideal_dcgs(gains, self.group_ptr, self._discounts)[:, None])
        super().setup()

    def list_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self._inputs

    def list_args(self) -> tuple[Any, ...]:
        top_k = NO_TRUNCATION if self.truncation_level is None else self.truncation_level
        return float(self.sigma), int(top_k), self._discounts

    def list_work(self) -> int:
        sizes = np.diff(self.group_ptr)
        return int(np.sum(sizes * np.minimum(sizes, self.list_args()[1])))

    @staticmethod
    def list_loss(s, at, doc, query, sigma, top_k, discounts):  # type: ignore[no-untyped-def]
        n = s.shape[0]
        order = stable_argsort_descending(at)
        acc = 0.0
        for i in range(n):
            ra = order[i]
            w = doc[ra, 0] * query[0] * discounts[i]
            if w == 0.0:
                continue
            for j in range(n if i < top_k else min(n, top_k)):
                if j != i:
                    acc += w * _logistic_loss(s[ra] - s[order[j]], sigma)
        return acc

    @staticmethod
    def list_grad_hess(s, at, doc, query, grad, hess, sigma, top_k, discounts):  # type: ignore[no-untyped-def]
        n = s.shape[0]
        order = stable_argsort_descending(at)
        for i in range(n):
            ra = np.uint64(order[np.uint64(i)])  # unsigned: no wraparound of negative indices to emit
            w = doc[ra, 0] * query[0] * discounts[np.uint64(i)]
            if w == 0.0:
                continue
            s_a = s[ra]
            g_a = grad[ra]  # document a's sums in registers over its pairs (no other pair writes them)
            h_a = hess[ra]
            for j in range(n if i < top_k else min(n, top_k)):
                if j == i:
                    continue
                rb = np.uint64(order[np.uint64(j)])
                d = s_a - s[rb]
                g = w * _logistic_grad(d, sigma)
                h = w * _logistic_hess(d, sigma)
                g_a += g
                grad[rb] -= g
                h_a += h
                hess[rb] += h
            grad[ra] = g_a
            hess[ra] = h_a
