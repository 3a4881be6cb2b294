"""MPBoost: the exponential pairwise loss with directed distance functions.

Zhu, Chen, Wang, Li, Zheng, "MPBoost: A Magnitude-Preserving Boosting Algorithm
for Ranking" (the MPBoost paper), CIKM 2009: the directed distances Eq. 2 and 6-8,
the loss Eq. 10, its GentleBoost fit Eq. 11-13 and the appendix's stump (Eq. 17-19).
With ``ddf="binary"`` it is RankBoost's exponential loss (Freund et al. 2003), which
the registry also offers as ``"rankboost"``.

Example:
    >>> import numpy as np
    >>> from boostplug import objectives
    >>> labels = np.array([1.0, 0.0]); group_ptr = np.array([0, 2])
    >>> objectives.get("mpboost").loss(np.zeros(2), labels, group_ptr, ddf="binary")  # one pair, exp(0)
    1.0

Definition (Eq. 10, each critical pair counted once; weights per query)::

    J(F) = sum_q W_q sum_{i, j in q: r_i > r_j} exp(-d_ij (F_i - F_j)),   d_ij = dist(r_i, r_j) > 0

with the directed distance ``dist`` of :mod:`.ddf` (``binary`` Eq. 2, ``ldd`` Eq. 6,
``logdd`` Eq. 7, ``logitdd`` Eq. 8). The paper's J, over ordered pairs, is exactly
twice this one.

Gradient and Hessian (``hessian="newton"`` or the paper's ``"gentle"``): on
:class:`MPBoostObjective`. Above :data:`EXP_LIMIT` the loss is formed relative to
the largest pair exponent, and gradients whose sums exceed :data:`GRAD_SUM_CAP` are
all scaled by one constant. The derivations (the gentle mode against the
appendix's stump, why one global constant leaves the trees unchanged, the
O(n_q L_q) factorisation by label level), the parameters' ranges: docs/objectives/mpboost.md;
the measured quality: docs/studies/objectives.md.

Why not on the pair base (:class:`~.pairwise.PairwiseLoss`): the distance multiplies the score gap
inside the exponent, ``exp(-d_ij (F_i - F_j))``, and a pair base's ``pair_loss(d, ...)`` sees the
gap alone, so it is a weight times a loss of the gap only with ``ddf="binary"``. And the kernels sum
by label level (a document's partners on one level factorise): a query costs ``O(n_q L_q)``
exponentials (``O(n_q)`` with one distance), where the pair loop calls the loss's derivatives on each
of its ``O(n_q^2)`` pairs: on queries of 100 documents and 5 grades, some 3,500 pairs against at most
400 exponentials, far beyond 5% a round. Nor has the pair loop a place for the shift beyond
:data:`EXP_LIMIT` (one exponent for the whole data set, from a pass over the scores before the sums).
Nor the listwise base (:class:`~.listwise.ListwiseLoss`): its functions get fixed arguments and a
query's rows of fixed-width inputs, where each query here reads that round's shift and a table of
``L_q^2`` distances.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import dispatch
from ..groups import label_levels
from . import _mpboost_kernels as K
from ._contract import Hessian, Loss, Search
from .ddf import DDF_PARAM_OF, DDF_PARAMS, ddf_values
from .ddf import search_space as ddf_search_space

__all__ = ["EXP_LIMIT", "GRAD_SUM_CAP", "MPBoostObjective"]

#: Dispatch work (:mod:`boostplug._core.dispatch`) of one document in MPBoost's kernels: as much as 50
#: pair visits, so they go parallel from 100,000 documents.
DOC_WORK = 50

#: Largest pair exponent d (F_j - F_i) up to which sums are formed without a shift.
EXP_LIMIT = 600.0

#: Largest ``sum |grad|`` or ``sum hess`` returned; above it all are scaled by one constant,
#: so that a leaf's squared gradient sum stays far inside float32 (XGBoost's split gains).
GRAD_SUM_CAP = 1e15

_NAME = "mpboost"


class MPBoostObjective(Loss):
    """MPBoost's loss J (Eq. 10) bound to one data set.

    Gradient, with the pair weights of Eq. 12, ``w_ij = exp(-d_ij (F_i - F_j))``::

        dJ/dF_i = W_q ( -sum_{j: r_j < r_i} d_ij w_ij  +  sum_{j: r_j > r_i} d_ji w_ji )

    Hessian (``hessian``): the modes ``hessians`` declares, ``"newton"`` (default, exact) and the paper's
    ``"gentle"`` (GentleBoost's fitting weights); why gentle steps the appendix's stump: docs/objectives/mpboost.md.

    ``grad_hess`` is exact while ``sum |grad|`` and ``sum hess`` are at most
    :data:`GRAD_SUM_CAP`; above, all values are multiplied by one positive
    constant (the same Newton leaves and split ranking).
    :meth:`log_loss` is finite where J overflows float64.
    """

    returns_new_arrays = True
    name = _NAME
    summary = "MPBoost: exponential pairwise loss with directed distance functions (Zhu et al. 2009)"
    params = dict(DDF_PARAMS)
    hessians = {
        "newton": Hessian("exact", "exact: the diagonal of J's Hessian, W_q sum_j d_ij^2 w_ij"),
        "gentle": Hessian("fitting", "the paper's fitting weights (GentleBoost, Eq. 11-12): 2 W_q sum_j w_ij, so "
                          "that a split separating the grades gets exactly the appendix's stump step; dominates "
                          "Eq. 11's Hessian"),
    }

    ddf: str
    alpha: float
    lam: float
    beta: float

    @classmethod
    def search_space(cls, params: Mapping[str, Any]) -> dict[str, Search]:
        """The chosen DDF's own parameter (nothing for ``binary``)."""
        return ddf_search_space(params.get("ddf", DDF_PARAMS["ddf"].default))

    def setup(self) -> None:
        # the parameters are already checked by their declarations: pick the chosen DDF's one
        pname = DDF_PARAM_OF.get(self.ddf)
        self.ddf_param = 0.0 if pname is None else float(getattr(self, pname))
        self._gentle = self.hessian == "gentle"  # the kernel's switch, resolved once
        self._prepare_static()

    # -- label-only precomputation -------------------------------------------------
    def _prepare_static(self) -> None:
        nq = self.n_queries
        level, _, n_levels = label_levels(self.labels, self.group_ptr)
        lvl_ptr = np.concatenate(([0], np.cumsum(n_levels)))
        qid = np.repeat(np.arange(nq, dtype=np.int64), np.diff(self.group_ptr))
        level_values = np.empty(lvl_ptr[-1])  # the label of each (query, level)
        level_values[lvl_ptr[qid] + level] = self.labels
        # dist tables: query q's L_q x L_q block, dist[a, b] = dist(r_a, r_b) (Eq. 2, 6-8)
        sq2 = n_levels * n_levels
        d_ptr = np.concatenate(([0], np.cumsum(sq2)))
        tq = np.repeat(np.arange(nq, dtype=np.int64), sq2)
        k = np.arange(d_ptr[-1], dtype=np.int64) - d_ptr[tq]
        nl = n_levels[tq]
        delta = level_values[lvl_ptr[tq] + k // nl] - level_values[lvl_ptr[tq] + k % nl]
        try:
            dist = np.ascontiguousarray(ddf_values(delta, self.ddf, self.ddf_param))
        except ValueError as e:
            raise ValueError(f"{_NAME}: {e}") from None
        self._levels = K.Levels(self.group_ptr, self.query_weights, level, lvl_ptr, dist, d_ptr,
                                *K.distance_range(dist, d_ptr, lvl_ptr))
        self.n_levels: NDArray[np.int64] = n_levels

    # -- per-round work ------------------------------------------------------------
    def _extremes(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """Per-level max/min scores and the largest pair exponent M (``-inf``: no pairs)."""
        n_lv = self._levels.lvl_ptr[-1]
        hi = np.empty(n_lv)
        lo = np.empty(n_lv)
        mq = np.empty(self.n_queries)
        run = dispatch.kernel_for(K.level_extremes, self.n_docs * DOC_WORK)
        run(scores, self._levels, hi, lo, mq)
        m = float(mq.max()) if mq.shape[0] else -math.inf
        if m == math.inf:
            q = int(np.argmax(mq))
            sl = scores[self.group_ptr[q]:self.group_ptr[q + 1]]
            raise ValueError(
                f"{_NAME}: the pair exponent d (F_j - F_i) overflows float64 in query {q} "
                f"(its scores span {float(sl.min())!r} .. {float(sl.max())!r}); keep |scores| below ~1e307"
            )
        return hi, lo, m

    def _scaled_loss(self, scores: NDArray[np.float64], shift: float | None) -> tuple[float, float]:
        """``(exp(-shift) J, shift)``; ``shift=None``: 0, or ``M - EXP_LIMIT`` when M > EXP_LIMIT."""
        hi, lo, m = self._extremes(scores)
        if shift is None:
            shift = m - EXP_LIMIT if m > EXP_LIMIT else 0.0
        out = np.empty(self.n_queries)
        run = dispatch.kernel_for(K.pair_loss, self.n_docs * DOC_WORK)
        run(scores, self._levels, hi, lo, shift, out)
        return float(out.sum()), shift

    def _loss(self, scores: NDArray[np.float64]) -> float:
        s, shift = self._scaled_loss(scores, None)
        if shift == 0.0:
            return s
        if s == 0.0:
            return 0.0
        try:
            return math.exp(shift + math.log(s))
        except OverflowError:  # J itself exceeds the float64 range: see log_loss
            return math.inf

    def log_loss(self, scores: ArrayLike) -> float:
        """``log J`` (Eq. 10), finite even when J overflows float64 (``-inf`` when J = 0)."""
        s = self._check(scores)
        _, _, m = self._extremes(s)
        if m == -math.inf:
            return -math.inf
        total, _ = self._scaled_loss(s, m)
        return m + math.log(total) if total > 0.0 else -math.inf

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        hi, lo, m = self._extremes(scores)
        shift = m - EXP_LIMIT if m > EXP_LIMIT else 0.0
        grad = np.empty(self.n_docs)
        hess = np.empty(self.n_docs)
        gentle = self._gentle
        run = dispatch.kernel_for(K.pair_grad_hess, self.n_docs * DOC_WORK)
        run(scores, self._levels, hi, lo, shift, gentle, grad, hess)
        if gentle:
            hess *= 2.0
        total = max(float(np.abs(grad).sum()), float(hess.sum())) if self.n_docs else 0.0
        if total > 0.0 and (shift > 0.0 or total > GRAD_SUM_CAP):
            # one global positive constant (Newton leaves -G/H unchanged): the larger sum
            # becomes GRAD_SUM_CAP, unless the exact values (exp(shift) * these) fit under it
            exact = math.log(total) + shift <= math.log(GRAD_SUM_CAP)
            c = math.exp(shift) if exact else GRAD_SUM_CAP / total
            grad *= c
            hess *= c
        return grad, hess
