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
``label``: no relevant document). Both are listwise losses (:mod:`.listwise`); ``p_i`` divides by
``max(EPSILON, sum phi)``, LightGBM's ``kEpsilon``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core.dcg import gains_of
from ._contract import Hessian, Param
from .listwise import ListwiseLoss

__all__ = ["SoftmaxCrossEntropy", "ListNet", "TARGETS", "EPSILON", "softmax"]

#: ListNet's target distributions: the softmax of the labels (Cao et al.), gains, labels.
TARGETS = ("exp", "gain", "label")

#: LightGBM's ``kEpsilon`` (``1e-15f``, a float32): the smallest denominator of the targets' sum.
EPSILON = float(np.float32(1e-15))


@nb.njit(cache=True, error_model="numpy")
def softmax(s: np.ndarray) -> tuple[np.ndarray, float, float]:
    """``(exp(s - max s), max s, their sum)``, LightGBM's ``Common::Softmax`` order: the largest
    score first, then the exponentials and their sum in order."""
    top = s[0]
    for i in range(1, s.shape[0]):
        top = max(s[i], top)
    rho = np.empty(s.shape[0])
    norm = 0.0
    for k in range(s.shape[0]):
        rho[k] = math.exp(s[k] - top)
        norm += rho[k]
    return rho, top, norm


@nb.njit(cache=True, error_model="numpy")
def _targets_sum(doc: np.ndarray) -> float:
    """The sum of the targets ``doc[:, 0]`` (read in place: a column view would be a strided array,
    whose loops numba does not vectorise)."""
    total = 0.0
    for i in range(doc.shape[0]):
        total += doc[i, 0]
    return total


@nb.njit(error_model="numpy")
def _cross_entropy(s, doc, query):  # type: ignore[no-untyped-def]
    """``-sum_i p_i log rho_i`` of one query (0 when its targets sum to 0)."""
    total = _targets_sum(doc)
    if not total > 0.0:
        return 0.0
    inv = 1.0 / max(EPSILON, total)
    rho, top, norm = softmax(s)
    log_norm = math.log(norm)
    value = 0.0
    for k in range(s.shape[0]):
        if doc[k, 0] != 0.0:
            value -= doc[k, 0] * inv * ((s[k] - top) - log_norm)
    return value


class SoftmaxCrossEntropy(ListwiseLoss):
    """The softmax cross-entropy of each query's scores against targets from its labels (module
    docstring): ``rho_i - p_i`` and ``rho_i (1 - rho_i)``. Subclasses define :meth:`round_targets`."""

    compile_at_bind = False
    list_loss = staticmethod(_cross_entropy)

    def round_targets(self) -> NDArray[np.float64]:  # pragma: no cover - abstract
        """Each document's ``phi`` (non-negative), of the current round for targets drawn at random."""
        raise NotImplementedError

    def list_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.round_targets()[:, None], np.zeros((self.n_queries, 0))

    def list_args(self) -> tuple[()]:
        """None: the functions take the scores and the targets only."""
        return ()

    @staticmethod
    @nb.njit(error_model="numpy")
    def list_grad_hess(s, doc, query, grad, hess):  # type: ignore[no-untyped-def]
        total = _targets_sum(doc)
        if not total > 0.0:
            return
        inv = 1.0 / max(EPSILON, total)
        rho, _, norm = softmax(s)
        for k in range(s.shape[0]):
            rho[k] /= norm
            grad[k] = rho[k] - doc[k, 0] * inv
            hess[k] = rho[k] * (1.0 - rho[k])


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
            phi = gains_of(self.labels, "exp2", self.name)
        else:
            phi = self.labels.copy()
        phi.setflags(write=False)
        self._phi = phi
        super().setup()

    def round_targets(self) -> NDArray[np.float64]:
        return self._phi
