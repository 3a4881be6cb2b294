"""Softmax cross-entropy over each query's documents: ListNet's top-one loss (Cao et al., ICML
2007, Section 4), and the base of XE-NDCG (:mod:`.xendcg`), which is the same loss with
gain-based targets and random gammas.

Per query ``q`` (weight ``W_q``), with ``rho = softmax(s)`` of the scores and a target
distribution ``p = phi / sum phi`` from the labels::

    L_q = -W_q sum_i p_i log rho_i,     d L_q / d s_i = W_q (rho_i - p_i),
    d^2 L_q / d s_i^2 = W_q rho_i (1 - rho_i)

ListNet's ``phi`` is ``exp(label)`` (the top-one probabilities of the labels, Cao et al.'s
``phi = exp``: ``targets="exp"``); ``targets="gain"`` takes ``2^label - 1`` (XE-NDCG without its
gammas), ``targets="label"`` the label itself (TF-Ranking's softmax loss). A query of one
document contributes nothing, nor does one whose targets sum to 0 (every label 0 with ``gain`` or
``label``: no relevant document). The kernels: :mod:`._softmax_kernels`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from .._core.dcg import gains_of
from . import _softmax_kernels as K
from ._contract import Hessian, Loss, Param, module_functions

__all__ = ["SoftmaxCrossEntropy", "ListNet", "TARGETS", "prepare", "loss", "grad_hess"]

#: ListNet's target distributions: the softmax of the labels (Cao et al.), gains, labels.
TARGETS = ("exp", "gain", "label")

#: Dispatch work of one document (a few passes over the query, one exponential).
_DOC_WORK = 10


class SoftmaxCrossEntropy(Loss):
    """The softmax cross-entropy of each query's scores against targets from its labels (module
    docstring). Subclasses define :meth:`round_targets`; ``lightgbm_terms`` hands on LightGBM's
    ``rank_xendcg`` gradient instead of the loss's (:mod:`._softmax_kernels`)."""

    fresh_output = True
    #: the gradient is LightGBM's RankXENDCG lambdas (float32, with the Newton terms)
    lightgbm_terms: ClassVar[bool] = False

    def round_targets(self) -> NDArray[np.float64]:  # pragma: no cover - abstract
        """Each document's ``phi`` (non-negative), of the current round (``current_round``) for
        targets drawn at random."""
        raise NotImplementedError

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        phi = np.ascontiguousarray(self.round_targets(), dtype=np.float64)
        n = 0 if want_loss else self.n_docs
        grad, hess, loss = np.zeros(n), np.zeros(n), np.zeros(self.n_queries if want_loss else 0)
        run = dispatch.kernel_for(K.softmax_ce, self.n_docs * _DOC_WORK)
        run(scores, self.group_ptr, phi, self.query_weights, self.lightgbm_terms, want_loss, grad, hess, loss)
        return grad, hess, loss

    def _loss(self, scores: NDArray[np.float64]) -> float:
        return float(self._run(scores, True)[2].sum())

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        grad, hess, _ = self._run(scores, False)
        return grad, hess


class ListNet(SoftmaxCrossEntropy):
    """ListNet's top-one loss: the softmax cross-entropy of the scores against the softmax of the
    labels (``targets="exp"``), or against the normalised gains or labels (module docstring)."""

    name = "listnet"
    summary = "ListNet's top-one softmax cross-entropy (Cao et al. 2007); targets exp(label), gains or labels"
    params = {
        "targets": Param("exp", "choice", "target distribution of a query: softmax of the labels (exp), 2^label - 1 "
                         "(gain) or the labels (label), normalised", choices=TARGETS),
    }
    hessians = {"exact": Hessian("exact", "rho_i (1 - rho_i): the diagonal of the softmax cross-entropy's Hessian")}

    targets: str

    def setup(self) -> None:
        kind = self.targets
        if kind == "exp":
            # exp(label - the query's largest label): the same distribution, without overflow
            sizes = np.diff(self.group_ptr)
            top = np.zeros(self.n_queries)
            some = sizes > 0
            top[some] = np.maximum.reduceat(self.labels, self.group_ptr[:-1][some])
            phi = np.exp(self.labels - np.repeat(top, sizes))
        elif kind == "gain":
            try:
                phi = gains_of(self.labels, "exp2")
            except ValueError as e:
                raise ValueError(f"{self.name}: {e}") from None
        else:
            phi = self.labels.copy()
        phi.setflags(write=False)
        self._phi = phi

    def round_targets(self) -> NDArray[np.float64]:
        return self._phi


prepare, loss, grad_hess = module_functions(ListNet)
