"""A base for lambda-weighted pairwise losses: a pair loss, and pair weights that see the current order.

LambdaRank's and LambdaLoss's weights (the NDCG a pair's swap would change, ``|Delta NDCG|``)
depend on where the two documents stand in the query's current order, so they change every
round. Here the weight is a function of one pair's view of that order, compiled by numba into
the kernel that computes each round's gradients; the pair loss is :class:`~.pairwise.PairwiseLoss`'s
three functions of ``d = s_i - s_j``. LambdaLoss's NDCG-Loss2++ (Wang et al., CIKM 2018, Section 4)::

    class NDCGLoss2PP(LambdaWeightedLoss):
        name = "ndcg_loss2pp"
        summary = "LambdaLoss's NDCG-Loss2++ (Wang et al. 2018)"
        params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True),
                  "mu": Param(5.0, "real", "weight of the position-gap term", low=0.0)}
        pair_loss, pair_grad, pair_hess = LOGISTIC          # log(1 + exp(-sigma d)) and its derivatives

        @staticmethod
        def pair_weight(p, sigma, mu):
            gap = abs(p.rank_i - p.rank_j)                  # delta_ij: the position-gap weight
            delta = abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap))
            return abs(p.gain_i - p.gain_j) * p.inv_max_dcg * (abs(p.discount_i - p.discount_j) + mu * delta)

The objective of query ``k`` (weight ``W_k``) at scores ``s`` is
``W_k c_k sum_{(i, j)} w_ij(s) pair_loss(s_i - s_j)`` over its pairs of documents with different
labels (``i`` the preferred one), of which at least one is among the first :meth:`truncation`
positions; ``w_ij(s) = pair_weight(Pair(...), *pair_args())`` (:class:`Pair`: ranks, gains,
discounts and the inverse ideal DCG), divided by ``0.01 + |s_i - s_j|`` when :meth:`normalize`
is on (and the query's scores are not all equal), and ``c_k`` is 1, or with :meth:`normalize`
LightGBM's ``log2(1 + S) / S`` (``S``: twice the sum of the query's ``|lambda_ij|``). The
gradient is that of the loss with ``w_ij`` and ``c_k`` held at their values at ``s`` (gradient
kind ``"lambda"``): ``W_k c_k sum w_ij
pair_grad(d)``, added to ``i`` and subtracted from ``j``; the ``"exact"`` Hessian mode
(:data:`EXACT`) is the diagonal of the same held-weights loss's Hessian, ``W_k c_k sum w_ij
pair_hess(d)``, :data:`BOUND` twice the sum of its absolute values, and a mode of kind
``"fitting"`` (a ``pair_hess`` that is not the second derivative) the plain sum. ``loss(s,
weights_at=t)`` and ``grad_hess(s, weights_at=t)`` take the weights from other scores ``t``:
what the held-weights derivatives are derivatives of.

Every function (the pair loss's three, ``pair_weight`` and the optional ``pair_terms``) is
compiled by numba; a function it cannot compile is a ``TypeError`` naming it, one that raises a
:class:`~.pairwise.PairFunctionError` naming it, its arguments and the pair.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Mapping

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from .._core.dcg import RANK_DOC_WORK, gains_of
from . import _pairwise_kernels as K
from ._contract import Hessian
from .pairwise import PAIR_FUNCTIONS, PairwiseLoss, abstract_function

__all__ = ["LambdaWeightedLoss", "Pair", "EXACT", "BOUND", "LOGISTIC", "NO_TRUNCATION"]

Pair = K.Pair

#: The Hessian mode every lambda-weighted loss has: the exact diagonal, the weights held.
EXACT = Hessian("exact", "the sum of w_ij pair_hess(s_i - s_j) over the document's pairs: the diagonal of the "
                "Hessian of the loss with the pair weights held", gradient="lambda")
#: A Hessian mode a lambda-weighted loss may add (``hessians = {"exact": EXACT, "bound": BOUND}``).
BOUND = Hessian("bound", "twice the sum of |w_ij pair_hess(s_i - s_j)| over the document's pairs: majorises the "
                "Hessian of the loss with the pair weights held", gradient="lambda")

#: A truncation level that keeps every pair.
NO_TRUNCATION = np.iinfo(np.int64).max


def _logistic_loss(d: float, sigma: float, *rest: Any) -> float:
    """``log(1 + exp(-sigma d))``, without overflow."""
    z = sigma * d
    return math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z))


def _logistic_grad(d: float, sigma: float, *rest: Any) -> float:
    """``-sigma / (1 + exp(sigma d))``."""
    e = math.exp(-abs(sigma * d))
    return -sigma / (1.0 + e) if d < 0.0 else -sigma * e / (1.0 + e)


def _logistic_hess(d: float, sigma: float, *rest: Any) -> float:
    """``sigma^2 p (1 - p)``, ``p = 1 / (1 + exp(-sigma d))``."""
    e = math.exp(-abs(sigma * d))
    return sigma * sigma * e / (1.0 + e) ** 2


#: RankNet's pair loss ``log(1 + exp(-sigma d))`` and its two derivatives, for
#: ``pair_loss, pair_grad, pair_hess = LOGISTIC``: the first parameter is ``sigma``, any others
#: (the weight's) are ignored.
LOGISTIC = tuple(staticmethod(nb.njit(cache=True)(f)) for f in (_logistic_loss, _logistic_grad, _logistic_hess))


class LambdaWeightedLoss(PairwiseLoss):
    """A pairwise loss whose pair weights depend on the current order: subclass it, declare
    ``name``, ``summary`` and ``params``, and define the static methods ``pair_loss``,
    ``pair_grad`` and ``pair_hess`` of ``d`` (as for :class:`~.pairwise.PairwiseLoss`, or
    ``= LOGISTIC``) and ``pair_weight(pair, ...)``, a non-negative weight from a :class:`Pair`.
    The module docstring says what the objective, its gradient (kind ``"lambda"``) and its
    Hessian modes are. Hooks with defaults: :meth:`gains`, :meth:`truncation`, :meth:`normalize`,
    :meth:`inverse_max_dcgs`, and the static method ``pair_terms(d, w, ...)``.

    Class attributes:
        float32_sums: round each pair's terms and each running sum to float32, as LightGBM's
            gradients are summed (``False``: float64), for an objective that reproduces it.
    """

    hessians: ClassVar[Mapping[str, Hessian]] = {"exact": EXACT}
    pair_functions: ClassVar[Mapping[str, tuple[str, ...]]] = {
        **{name: ("d",) for name in PAIR_FUNCTIONS}, "pair_weight": ("pair",), "pair_terms": ("d", "w")}
    optional_functions: ClassVar[tuple[str, ...]] = ("pair_terms",)
    lead_types: ClassVar[Mapping[str, Any]] = {**PairwiseLoss.lead_types,
                                               "pair": nb.typeof(Pair(0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0))}
    _hessian_kinds = ("exact", "bound", "fitting")
    _gradient = "lambda"
    _numpy_fallback = False
    float32_sums: ClassVar[bool] = False

    # -- to define ---------------------------------------------------------------------------------
    @abstract_function
    def pair_weight(pair: Pair, *args: Any) -> float:  # pragma: no cover - abstract
        """The weight of one pair from its view of the current order (non-negative)."""
        raise NotImplementedError

    # ``pair_terms(d, w, *args) -> (gradient term, Hessian term)``: by default ``(w pair_grad(d),
    # w pair_hess(d))``; define it only to follow a built-in's order of operations to the bit.

    def gains(self) -> NDArray[np.float64]:
        """Each document's gain, once per data set: ``2^label - 1`` by default."""
        try:
            return gains_of(self.labels, "exp2")
        except ValueError as e:
            raise ValueError(f"{self.name}: {e}") from None

    def truncation(self) -> int:
        """Only pairs with a document among this many first positions count (default: every pair)."""
        return NO_TRUNCATION

    def normalize(self) -> bool:
        """LightGBM's ``lambdarank_norm``: divide each pair's weight by ``0.01 + |s_i - s_j|``
        (unless the query's scores are all equal) and scale each query by ``log2(1 + S) / S``
        (default: off)."""
        return False

    def inverse_max_dcgs(self, gains: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each query's ``1 / ideal DCG`` at the truncation level (0 where it is 0): the gains in
        decreasing order, summed by position with ``1 / log2(2 + position)``."""
        out = np.zeros(self.n_queries)
        k = self._top_k
        for q in range(self.n_queries):
            top = np.sort(gains[self.group_ptr[q]:self.group_ptr[q + 1]])[::-1][:k]
            out[q] = _inverse(top, self._discounts)
        return out

    # -- the objective -----------------------------------------------------------------------------
    def setup(self) -> None:
        self._bind_functions()
        top_k = self.truncation()
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"{self.name}: the truncation level must be an integer >= 1, got {top_k!r}")
        self._top_k = int(top_k)
        sizes = np.diff(self.group_ptr)
        longest = int(sizes.max(initial=0))
        # 1 / log2(2 + position) for every position of the longest query (LightGBM's table of them)
        self._discounts = np.array([1.0 / math.log2(2.0 + i) for i in range(longest)])
        self._gains = np.ascontiguousarray(self.gains(), dtype=np.float64)
        if self._gains.shape != (self.n_docs,) or not np.isfinite(self._gains).all():
            raise ValueError(f"{self.name}: gains() must return one finite gain per document")
        self._inv_max_dcg = np.ascontiguousarray(self.inverse_max_dcgs(self._gains), dtype=np.float64)
        self._normalize = bool(self.normalize())
        self._bound = self.hessians[self.hessian].kind == "bound"
        self._work = int(np.sum(sizes * np.minimum(sizes, self._top_k)))

    def _ordered(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        """What a kernel call needs besides the scores: the scores the weights come from, each
        query's rows in their order, zeroed outputs (gradient, Hessian; or the queries' losses) and
        the queries' ``done`` flags (:meth:`_check_done`)."""
        at = self.weights_from(scores)
        n = self.n_docs if not want_loss else 0
        grad, hess, loss = np.zeros(n), np.zeros(n), np.zeros(self.n_queries if want_loss else 0)
        done = np.zeros(self.n_queries, dtype=np.bool_)
        order = np.empty(self.n_docs, dtype=np.int64)
        dispatch.kernel_for(K.query_orders, self.n_docs * RANK_DOC_WORK)(at, self.group_ptr, order)
        return at, order, grad, hess, loss, done

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        at, order, grad, hess, loss, done = self._ordered(scores, want_loss)
        run = dispatch.kernel_for(self._loops().lambda_sums, self._work)
        # the running sums: float32 arrays when they are float32 sums (no conversion per addition)
        single = self.float32_sums and not want_loss
        sums_g, sums_h = (np.zeros(grad.shape[0], np.float32), np.zeros(hess.shape[0], np.float32)) if single else \
            (grad, hess)
        run(scores, at, order, self._at is not None, self.labels, self._gains, self.group_ptr, self._inv_max_dcg,
            self.query_weights, self._discounts, self._top_k, self._normalize, want_loss, self._args, sums_g, sums_h, grad, hess, loss, done)
        self._check_done(done)
        return grad, hess, loss

    def _loss_sums(self, scores: NDArray[np.float64]) -> float:
        return float(self._run(scores, True)[2].sum())

    def _grad_hess_sums(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        grad, hess, _ = self._run(scores, False)
        return grad, hess

    def _find_the_raise(self, scores: NDArray[np.float64], names: tuple[str, ...]) -> None:
        """The pairs the kernel visits, in its order of calls: each pair's weight from its view of
        the order, then ``pair_loss`` (``names``) or the gradient and Hessian terms."""
        at = self.weights_from(scores)
        n, ptr = self.n_docs, self.group_ptr
        order = np.empty(n, dtype=np.int64)
        K.query_orders(at, ptr, order)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - np.repeat(ptr[:-1], np.diff(ptr))
        above, below = self._listed_pairs(None)
        for q in range(self.n_queries):
            a, b = ptr[q], ptr[q + 1]
            varied = self._normalize and at[order[a]] != at[order[b - 1]]
            for i, j in zip(above[(above >= a) & (above < b)], below[(above >= a) & (above < b)]):
                i, j = int(i), int(j)
                if min(rank[i], rank[j]) >= self._top_k:
                    continue
                view = Pair(float(at[i] - at[j]), int(rank[i]), int(rank[j]), float(self._gains[i]),
                            float(self._gains[j]), float(self._discounts[rank[i]]), float(self._discounts[rank[j]]),
                            float(self._inv_max_dcg[q]))
                w = self._call_on_pair("pair_weight", (view,), q, i, j)
                w = w / (K.NORM_OFFSET + abs(view.d)) if varied else w
                d = float(scores[i] - scores[j])
                if "pair_loss" in names:
                    self._call_on_pair("pair_loss", (d,), q, i, j)
                elif self._fns.terms is not None:
                    self._call_on_pair("pair_terms", (d, w), q, i, j)
                else:
                    self._call_on_pair("pair_grad", (d,), q, i, j)
                    self._call_on_pair("pair_hess", (d,), q, i, j)

    def _listed_pairs(self, query: int | None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Every pair of documents with different labels of ``query`` (``None``: of every query)."""
        queries = range(self.n_queries) if query is None else (query,)
        above, below = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for q in queries:
            a, b = self.group_ptr[q], self.group_ptr[q + 1]
            i, j = np.nonzero(self.labels[a:b, None] > self.labels[None, a:b])
            above.append(a + i)
            below.append(a + j)
        return np.concatenate(above), np.concatenate(below)


def _inverse(gains_in_order: NDArray[np.float64], discounts: NDArray[np.float64]) -> float:
    """``1 / sum_r gains[r] discounts[r]`` summed by position (0 when the sum is 0), as LightGBM
    computes its inverse ideal DCG."""
    total = 0.0
    for r, g in enumerate(gains_in_order):
        total += float(discounts[r]) * float(g)
    return 1.0 / total if total > 0.0 else 0.0
