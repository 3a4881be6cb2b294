"""ListMLE (Xia, Liu, Wang, Zhang and Li, "Listwise approach to learning to rank: theory and
algorithm", ICML 2008): the negative log-likelihood of the labels' order under the Plackett-Luce
model of the scores. A listwise loss (:mod:`.listwise`).

Per query (weight ``W``), with ``pi`` the documents by descending label (the target order) and
``Z_r = sum_{t >= r} exp(s_pi(t))`` the sum over the documents from position ``r`` on::

    loss = W sum_r (log Z_r - s_pi(r))
    d loss / d s_pi(k) = W (sum_{r <= k} p_kr - 1),      p_kr = exp(s_pi(k)) / Z_r
    d^2 loss / d s_pi(k)^2 = W sum_{r <= k} p_kr (1 - p_kr)    (the exact diagonal, >= 0)

Ties between labels (``ties``): ``"random"`` orders each tie at random, anew each round (round
``r``'s order from ``numpy.random.default_rng([seed, r])``), as TF-Ranking and allRank do;
``"scores"`` orders it by the current scores, highest first (the most likely of the tied orders;
no randomness, and the loss stays continuous where tied scores swap). The sums run from the end of
the list with a running maximum, on the scores less the query's largest (so that no ``exp`` leaves
float64, and shifting every score changes nothing even at ``2^40``). Cost: a sort and two passes per
query.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core.sorting import stable_argsort_descending
from ._contract import Hessian, Param
from ._rounds import RandomRounds
from .listwise import ListwiseLoss

__all__ = ["ListMLE", "TIES"]

#: How tied labels are ordered (module docstring).
TIES = ("random", "scores")


@nb.njit(cache=True, error_model="numpy")
def target_order(scores, doc, by_scores):  # type: ignore[no-untyped-def]
    """``(order, log Z, s)``: the query's rows by descending label, ties by the scores (``by_scores``)
    or by the round's random keys ``doc[:, 1]``; ``log Z_r`` for each position ``r``; both of the
    scores less their largest, ``s``."""
    s = scores - scores.max()
    order = stable_argsort_descending(s if by_scores else doc[:, 1])
    order = order[stable_argsort_descending(doc[order, 0])]
    n = s.shape[0]
    log_z = np.empty(n)
    top, z = -math.inf, 0.0
    for r in range(n - 1, -1, -1):  # z = sum_{t >= r} exp(s_t - top), top the running maximum
        v = s[order[r]]
        if v > top:
            z = z * math.exp(top - v) + 1.0
            top = v
        else:
            z += math.exp(v - top)
        log_z[r] = top + math.log(z)
    return order, log_z, s


class ListMLE(RandomRounds, ListwiseLoss):
    """ListMLE (module docstring)."""

    compile_at_bind = False
    name = "listmle"
    summary = "ListMLE (Xia et al. 2008): Plackett-Luce likelihood of the labels' order; ties at random or by score"
    params = {
        "ties": Param("random", "choice", "order of documents with equal labels: random each round (seed), or by "
                      "the current scores", choices=TIES),
        "seed": Param(0, "int", "seed of the random order of ties (round r draws from default_rng([seed, r]))",
                      low=0),
    }
    hessians = {"exact": Hessian("exact", "sum over the positions r up to the document's of p (1 - p), p its "
                                 "Plackett-Luce probability from r on")}

    def list_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        keys = np.zeros(self.n_docs) if self.ties == "scores" else \
            np.random.default_rng([self.seed, self.current_round]).random(self.n_docs)
        return np.column_stack([self.labels, keys]), np.zeros((self.n_queries, 0))

    def list_args(self) -> tuple[bool]:
        return (self.ties == "scores",)

    @staticmethod
    @nb.njit(error_model="numpy")
    def list_loss(s, doc, query, by_scores):  # type: ignore[no-untyped-def]
        order, log_z, s = target_order(s, doc, by_scores)
        return np.sum(log_z - s[order])

    @staticmethod
    @nb.njit(error_model="numpy")
    def list_grad_hess(s, doc, query, grad, hess, by_scores):  # type: ignore[no-untyped-def]
        order, log_z, s = target_order(s, doc, by_scores)
        b, c = 0.0, 0.0  # sum_{r <= k} exp(log Z_k - log Z_r) and of its squares (terms <= 1)
        for k in range(s.shape[0]):
            step = math.exp(log_z[k] - log_z[k - 1]) if k else 0.0
            b, c = 1.0 + b * step, 1.0 + c * step * step
            p = math.exp(s[order[k]] - log_z[k])  # p_kk
            grad[order[k]] = p * b - 1.0
            hess[order[k]] = max(p * b - p * p * c, 0.0)  # sum of p (1 - p) >= 0: no rounding below
