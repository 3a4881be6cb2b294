"""NDCG_Boost: the relaxed expected-NDCG objective of Valizadegan et al.

Valizadegan, Jin, Zhang, Mao, "Learning to Rank by Optimizing NDCG Measure",
NIPS 2009 (the NDCG_Boost paper): the scores Eq. 8, the expected rank Eq. 10, the
objective Eq. 11 and its gradient Eq. 14-16.

Example:
    >>> import numpy as np
    >>> from boostplug import objectives
    >>> labels = np.array([1.0, 0.0]); group_ptr = np.array([0, 2])
    >>> objectives.get("ndcg_boost").loss(np.zeros(2), labels, group_ptr)  # G = (1, 0), Z = 1, A_1 = 1/2
    0.5

Definition (``F_i = sigma * score_i``; the paper's ``F_i = 2 F(d_i)`` of Eq. 8 is
``sigma = 2``; query k has weight ``W_k``, gains ``G_i`` and ideal DCG ``Z_k``)::

    A_i   = sum_{j != i} 1 / (1 + exp(F_i - F_j))                    (Eq. 10, expected rank - 1)
    M(F)  = sum_k W_k / Z_k sum_{i in k} G_i A_i                      (Eq. 11, minimised)

``M`` is Eq. 11 *summed* over queries, without the paper's ``1/n`` (the
library's convention, see :mod:`._loss`). Gains are ``G = 2^r - 1`` (the paper) or
``label_gain[r]``; ``Z_k = sum_r G_(r) / log2(r + 1)`` over the gains sorted in
decreasing order, and a query with ``Z_k = 0`` contributes nothing.

Gradient (Eq. 14-16) and Hessian (``hessian="bound"`` or ``"exact"``; M is not
convex): on :class:`NDCGBoostObjective`, which also offers the paper's ``w_i``
(:meth:`NDCGBoostObjective.descent_weights`) and ``Z_k``
(:meth:`NDCGBoostObjective.ideal_dcg`). The derivations (the exact diagonal, the
proof that ``"bound"`` majorises the full Hessian, what sigma does to a tree's
Newton leaves, the stable pair terms), the parameters: docs/objectives/ndcg_boost.md; the
measured quality: docs/studies/objectives.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import dcg, dispatch
from .._core.dcg import check_label_gain, gains_of
from . import _ndcg_boost_kernels as K
from ._contract import Hessian, Param, Search
from .listwise import ListwiseLoss
from ._non_finite import loss_error

__all__ = ["SIGMA_MIN", "SIGMA_MAX", "NDCGBoostObjective"]

_NAME = "ndcg_boost"
#: Hessian mode -> (kernel mode, factor on the kernel's sum): "bound" doubles sum |c_i - c_j| gamma_ij
#: so that it majorises the full Hessian (docs/objectives/ndcg_boost.md).
_MODES = {"bound": (K.MODE_BOUND, 2.0), "exact": (K.MODE_EXACT, 1.0)}


#: Range of ``sigma``: ``hess = sigma^2 h_F`` with ``h_F <= W_k n_k / 4`` (each ``gamma <= 1/4``,
#: ``G_i / Z_k <= 1``), so sigma^2 <= 1e300 keeps it finite for ``W_k n_k`` up to ~1e8, and
#: sigma^2 >= 1e-300 keeps a non-zero Hessian from underflowing to 0 under a non-zero gradient.
SIGMA_MIN = 1e-150
SIGMA_MAX = 1e150


class NDCGBoostObjective(ListwiseLoss):
    """NDCG_Boost's relaxed objective M (Eq. 11) bound to one data set.

    Gradient (Eq. 14-16; ``dM/dscore_i = -sigma w_i``)::

        gamma_ij = exp(F_i - F_j) / (1 + exp(F_i - F_j))^2               (Eq. 14)
        w_i   = W_k sum_{j in k} (G_i - G_j) / Z_k gamma_ij = -dM/dF_i    (Eq. 16)

    The exact diagonal of the Hessian, which can be negative::

        d2M/dF_i^2 = -W_k sum_j (G_i - G_j) / Z_k gamma_ij (1 - 2 sigmoid(F_i - F_j))

    Hessian (``hessian``): the modes ``hessians`` declares, ``"bound"`` (default, majorises M's full Hessian)
    and ``"exact"`` (``sigma^2`` times the diagonal above, floored); the proof: docs/objectives/ndcg_boost.md.
    """

    compile_at_bind = False
    name = _NAME
    summary = "NDCG_Boost: expected-NDCG bound (Valizadegan et al. 2009)"
    params = {
        "sigma": Param(2.0, "real", "F = sigma * score (2.0: the paper's Eq. 8)", low=SIGMA_MIN, high=SIGMA_MAX,
                       search=Search(0.5, 8.0, log=True)),
        "label_gain": Param(None, "custom", "gains indexed by the integer label (None: 2^r - 1)",
                            convert=check_label_gain),
    }
    hessians = {
        "bound": Hessian("bound", "a diagonal that majorises M's full Hessian: 2 sigma^2 W_k sum_j |G_i - G_j| / "
                         "Z_k gamma_ij"),
        "exact": Hessian("exact", "exact: the diagonal of M's Hessian, -sigma^2 W_k sum_j (G_i - G_j) / Z_k "
                         "gamma_ij (1 - 2 sigmoid(F_i - F_j)), floored at HESSIAN_FLOOR where it is smaller "
                         "(M is not convex)"),
    }

    sigma: float
    label_gain: NDArray[np.float64] | None

    list_loss = K.list_loss
    list_grad_hess = K.list_grad_hess

    # -- label-only precomputation -------------------------------------------------
    def setup(self) -> None:
        g = gains_of(self.labels, "exp2" if self.label_gain is None else self.label_gain, _NAME)  # the metrics' G_i
        z = dcg.ideal_dcg(g, self.group_ptr)
        bad = np.flatnonzero(~np.isfinite(z))
        if bad.size:
            q = int(bad[0])
            raise ValueError(
                f"{_NAME}: the ideal DCG of query {q} overflows float64 (its largest gain is "
                f"{float(g[self.group_ptr[q]:self.group_ptr[q + 1]].max())}); use smaller label_gain values (another "
                "loss: the grades' gains are what it weighs)"
            )
        sizes = np.diff(self.group_ptr)
        self.gains: NDArray[np.float64] = g
        self._z = z
        self._live = np.flatnonzero((self.query_weights != 0.0) & (sizes > 1)).astype(np.int64)
        cross = self._coefficient_runs(g, z, sizes)
        self._pairs = int(cross[self._live].sum())  # pairs the gradient visits: its dispatch work
        mode, factor = _MODES[self.hessian]
        # d2/dscore2 = sigma^2 d2/dF2
        self._list_args = (self.sigma, mode, -self.sigma, factor * self.sigma * self.sigma)
        super().setup()

    def _coefficient_runs(self, g: NDArray[np.float64], z: NDArray[np.float64],
                          sizes: NDArray[np.int64]) -> NDArray[np.int64]:
        """Order each query's documents by coefficient ``G_i / Z_k`` for the pair loops, which visit
        only the pairs of different coefficients (the others add nothing to the gradient and ``c`` each
        to the loss: most pairs, where most documents share the lowest grade). Sets ``_inputs`` (per
        position: its coefficient, its row in its query and where its run ends; per query: its pairs of
        equal coefficients' loss) and ``_weighted`` (the same of ``W_k G_i / Z_k``: the booster's pass);
        returns the number of pairs of different coefficients per query."""
        qid = np.repeat(np.arange(self.n_queries, dtype=np.int64), sizes)
        coef, weighted = (g * np.repeat(np.divide(w, z, out=np.zeros_like(z), where=z > 0.0), sizes)
                          for w in (1.0, self.query_weights))
        perm = np.lexsort((coef, qid)).astype(np.int64)
        c = coef[perm]
        n = c.shape[0]
        new_run = np.ones(n, dtype=bool)
        new_run[1:] = (c[1:] != c[:-1]) | (qid[1:] != qid[:-1])
        starts = np.flatnonzero(new_run)
        ends = np.append(starts[1:], n).astype(np.int64)
        run_of = np.cumsum(new_run) - 1
        m = (ends - starts).astype(np.float64)
        first = self.group_ptr[qid]  # each position's query's first row
        self._inputs, self._weighted = ((np.column_stack([cs, perm - first, ends[run_of] - first]).astype(np.float64),
                                         np.bincount(qid[starts], weights=cs[starts] * (m * (m - 1.0) / 2.0),
                                                     minlength=self.n_queries)[:, None])
                                        for cs in (c, weighted[perm]))
        equal_pairs = np.bincount(qid[starts], weights=m * (m - 1.0) / 2.0, minlength=self.n_queries)
        return (sizes * (sizes - 1) // 2 - equal_pairs.astype(np.int64)).astype(np.int64)

    # -- the listwise base's hooks ---------------------------------------------------
    def list_inputs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per position in coefficient order (rows of the query's own): the coefficient, the row,
        where its run of equal coefficients ends; per query: its pairs of equal coefficients' loss."""
        return self._inputs

    def list_args(self) -> tuple[Any, ...]:
        """``sigma``, the Hessian mode, ``-sigma`` and the Hessian's factor."""
        return self._list_args

    def list_work(self) -> int:
        """The pairs of different coefficients of the queries that count."""
        return self._pairs

    # -- public extras ---------------------------------------------------------------
    def ideal_dcg(self) -> NDArray[np.float64]:
        """``Z_k`` per query (shape ``(n_queries,)``; 0 for a query whose gains are all 0)."""
        return self._z.copy()

    def descent_weights(self, scores: ArrayLike) -> NDArray[np.float64]:
        """The paper's ``w_i`` (Eq. 16) at ``F = sigma * scores``: ``-dM/dF_i``.

        Includes ``1/Z_k`` and the query weight ``W_k`` (1 by default), no ``1/n``;
        zero for the documents of queries that contribute nothing.
        """
        return self.descent_weights_and_loss(scores)[0]

    def descent_weights_and_loss(self, scores: ArrayLike) -> tuple[NDArray[np.float64], float]:
        """``(descent_weights(scores), loss(scores))`` from one pass over the pairs (a booster needs
        both of every round's scores)."""
        s = self._check(scores)
        w = np.zeros(self.n_docs)
        out = np.zeros(self.n_queries)
        run = dispatch.kernel_for(K.pair_grad_loss, self._pairs)
        run(s, self.sigma, *self._weighted, self.group_ptr, self._live, w, out)
        value = float(out.sum())
        if not math.isfinite(value):
            raise self._explain(loss_error(self, s, value), s)
        return w, value
