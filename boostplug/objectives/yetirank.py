"""YetiRank (Gulin, Kuralenok, Pavlov, Yahoo! LTR Challenge 2011), CatBoost's default ranking
loss, and YetiLoss (Lyzhin, Ustimenko, Gulin, Prokhorenkova, ICML 2023), its metric-driven weights.

Each round, every query's scores are perturbed at random ``permutations`` times; in each perturbed
order, pairs of neighbours get a weight by how much their positions matter, the weights are
averaged over the orders, and the loss is the pairwise logistic loss with those weights. As
CatBoost computes it (catboost/private/libs/algo/yetirank_helpers.cpp,
``GenerateYetiRankPairsForQuery`` and ``TYetiRankPairWeightsCalcer``; the gradient is
``TPairLogitError::CalcDersForQueries``, catboost/private/libs/algo_helpers/error_functions.h).
For query ``k`` (weight ``W_k``), order ``p`` = the query's documents by ``s + eps_p``
(descending, ties in input order; computed as ``(s - max s) + eps_p``, so that a shift of the
query's scores keeps the orders), ``eps_p`` the round's ``p``-th draw of noise::

    noise "logistic":  eps = log(U / (1 - U)), U uniform (CatBoost's noise=Gumbel:
                       expApprox *= u / (1.000001 - u))
    noise "gauss":     eps ~ N(0, noise_power^2)   (CatBoost: expApprox *= exp(N(0, noise_power)))
    noise "none":      eps = 0                     (every order is the scores' own)

    classic  (YetiRank):  w^p_xy += 0.15 decay^(k-1) |l_x - l_y|  for the neighbours at positions k-1, k
    dcg      (YetiLoss):  w^p_xy += |l_x - l_y| |D(i) - D(j)|     for i < top, i < j <= i + num_neighbors
    ndcg     (YetiLoss):  the dcg weight / ideal DCG@top of the query   (D(r) = 1/log2(2 + r), 0 from top)

    w_xy = W_k / permutations sum_p w^p_xy     (x the higher label of the pair)
    loss = sum_(x, y) w_xy log(1 + exp(-(s_x - s_y)))

The gradient is that of the loss with the weights ``w_xy`` held (gradient kind ``"lambda"``), the
Hessian the exact diagonal of the same held-weights loss (CatBoost's ``Der2``).

Randomness. The draws of round ``r`` come from ``numpy.random.default_rng([seed, r])``: noise for
every document, one order after the other, in the rounds :class:`~._rounds.RandomRounds` counts
(docs/objectives/yetirank.md, "Randomness: seeds and rounds").

Why not on the pair base (:class:`~.pairwise.PairwiseLoss`): its weight of a pair is an average over
``permutations`` random orders drawn each round, not a function of the one current order a pair
weight sees, and only the neighbours of each perturbed order get one. On the pair base that would be a
table of ``n_q^2`` weights per query (``query_prefix`` writes a fixed number of columns per position),
filled by the same walk over the sampled orders the kernel makes now; the pair loop would then add a
visit of each of the query's ``O(n_q^2)`` pairs to it, where the kernel sums the weighted neighbours as
it walks each order: a second pass, and on queries of 100 documents some 5,000 pair visits more a
round, far beyond 5%. Nor the listwise base (:class:`~.listwise.ListwiseLoss`), which hands its
functions one set of inputs for the whole call: the round's draws (``permutations`` per document) come
in blocks bounded in memory, and a uniform 0 among them sums the round again on numpy's own logistic
draws.
"""

from __future__ import annotations

from typing import Iterator

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from .._core.dcg import RANK_DOC_WORK, inverse_ideal_dcgs
from . import _yetirank_kernels as K
from ._contract import Param
from ._loss import RunLoss
from ._rounds import RandomRounds
from .pairwise import LAMBDA_EXACT

__all__ = ["YetiRank", "MODES", "NOISES"]

#: The weight modes: CatBoost's ``mode`` Classic (YetiRank) and DCG, NDCG (YetiLoss).
MODES = ("classic", "dcg", "ndcg")
#: The noise distributions (CatBoost's Gumbel, Gauss and No).
NOISES = ("logistic", "gauss", "none")

_DEFAULT_DECAY = 0.99
_DEFAULT_POWER = 1.0
#: The most draws (8 bytes each) a block of a round's orders holds: the orders run in blocks of
#: ``_BLOCK_DRAWS // n_docs`` (at least one).
_BLOCK_DRAWS = 1 << 23


class YetiRank(RandomRounds, RunLoss):
    """YetiRank and YetiLoss: the pairwise logistic loss on neighbours of randomly perturbed orders
    (module docstring: the definition, CatBoost's source, the random draws).

    Parameters are CatBoost's, with its defaults, plus ``seed`` and ``first_round`` (docs/objectives/yetirank.md);
    one the chosen mode or noise does not use, set to another value than its default, is a ``ValueError``
    (CatBoost ignores it silently).
    """

    name = "yetirank"
    summary = "YetiRank/YetiLoss (CatBoost's): pairwise logistic loss on neighbours of randomly perturbed orders"
    params = {
        "mode": Param("classic", "choice", "pair weights: classic (YetiRank: 0.15 decay^k |l_x - l_y|), dcg or ndcg "
                      "(YetiLoss: the (N)DCG a swap of the pair changes)", choices=MODES),
        "permutations": Param(10, "int", "perturbed orders per round", low=1, high=10_000),
        "decay": Param(_DEFAULT_DECAY, "real", "classic mode: the weight's decay per position", low=0.0, high=1.0),
        "noise": Param("logistic", "choice", "the perturbation: logistic (CatBoost's Gumbel), gauss or none",
                       choices=NOISES),
        "noise_power": Param(_DEFAULT_POWER, "real", "noise='gauss': the standard deviation", low=0.0,
                             low_open=True, high=1e6),
        "top": Param(None, "int", "dcg/ndcg modes: pairs with their first document among this many positions "
                     "(None: every position)", low=1),
        "num_neighbors": Param(1, "int", "dcg/ndcg modes: the documents after each one it is paired with "
                           "(-1: every later one)", low=-1),
        "seed": Param(0, "int", "seed of the random draws", low=0),
        "first_round": Param(0, "int", "the round whose draws the first grad_hess uses (a continued training "
                             "passes the rounds done)", low=0),
    }
    hessians = {"exact": LAMBDA_EXACT}

    mode: str
    permutations: int
    decay: float
    noise: str
    noise_power: float
    top: int | None
    num_neighbors: int
    seed: int
    first_round: int

    def setup(self) -> None:
        classic = self.mode == "classic"
        unused = [("decay", self.decay, _DEFAULT_DECAY, not classic),
                  ("top", self.top, None, classic), ("num_neighbors", self.num_neighbors, 1, classic),
                  ("noise_power", self.noise_power, _DEFAULT_POWER, self.noise != "gauss")]
        for pname, value, default, ignored in unused:
            if ignored and value != default:
                why = f"mode={self.mode!r}" if pname != "noise_power" else f"noise={self.noise!r}"
                raise ValueError(f"{self.name}: {pname}={value!r} has no effect with {why}; leave it at its "
                                 f"default {default!r}")
        if self.num_neighbors == 0:
            raise ValueError(f"{self.name}: num_neighbors must be >= 1 or -1 (every later document), got 0")
        self._classic = classic
        sizes = np.diff(self.group_ptr)
        longest = int(sizes.max(initial=0))
        self._top = longest if self.top is None else int(self.top)
        self._discounts = 1.0 / np.log2(2.0 + np.arange(max(longest, 1), dtype=np.float64))
        self._active = (sizes >= 2) & (self.query_weights > 0.0)
        self._coef = inverse_ideal_dcgs(self.labels, self.group_ptr, self._discounts, self._top) \
            if self.mode == "ndcg" else np.ones(self.n_queries)
        pairs_per_doc = 1 if classic else (longest if self.num_neighbors < 0 else self.num_neighbors)
        self._work = self.n_docs * (RANK_DOC_WORK + pairs_per_doc)

    # -- the random draws (from round first_round: RandomRounds.round_offset) ---------------------------
    def round_noise(self, round: int) -> Iterator[NDArray[np.float64]]:
        """The noise of each perturbed order of round ``round``, one array of ``n_docs`` after the other."""
        rng = np.random.default_rng([self.seed, int(round)])
        for _ in range(self.permutations):
            if self.noise == "logistic":
                yield rng.logistic(0.0, 1.0, size=self.n_docs)
            elif self.noise == "gauss":
                yield rng.normal(0.0, self.noise_power, size=self.n_docs)
            else:
                yield np.zeros(self.n_docs)

    # -- the objective ---------------------------------------------------------------------------------
    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        """The current round's sums over its perturbed orders: of the gradient and Hessian (each
        query's scaled by its weight over the number of orders), or of each query's loss (the pair
        weights from the orders of :meth:`weights_from`)."""
        at = self.weights_from(scores)
        n = 0 if want_loss else self.n_docs
        grad, hess = np.empty(n), np.empty(n)
        loss = np.empty(self.n_queries if want_loss else 0)
        # the kernel's log(U / (1 - U)) is numpy's logistic draw only with the C library's log (not SVML's)
        fast = self.noise == "logistic" and not nb.config.USING_SVML
        if not (fast and self._run_orders(scores, at, True, want_loss, grad, hess, loss)):
            self._run_orders(scores, at, False, want_loss, grad, hess, loss)
        return grad, hess, loss

    def _run_orders(self, scores: NDArray[np.float64], at: NDArray[np.float64], from_uniforms: bool,
                    want_loss: bool, grad: NDArray[np.float64], hess: NDArray[np.float64],
                    loss: NDArray[np.float64]) -> bool:
        """Run the round's orders through the kernel, in blocks of orders. ``from_uniforms``
        (logistic noise): draw the uniforms numpy's ``logistic`` would transform and let the kernel
        transform them (the same numbers, in parallel), unless a uniform is 0 (numpy's logistic
        would draw again; the kernel counts them): then ``False``, and the sums are not complete."""
        rng = np.random.default_rng([self.seed, int(self.current_round)])
        per_block = max(1, min(self.permutations, _BLOCK_DRAWS // max(self.n_docs, 1)))
        run = dispatch.kernel_for(K.orders_sums, self._work * per_block)
        done = 0
        while done < self.permutations:
            m = min(per_block, self.permutations - done)
            shape = (m, self.n_docs)
            if self.noise == "none":
                draws, kind = np.empty((m, 0)), K.NOISE_NONE
            elif self.noise == "gauss":
                draws, kind = rng.normal(0.0, self.noise_power, size=shape), K.NOISE_GIVEN
            elif from_uniforms:
                draws, kind = _uniforms(rng, shape), K.NOISE_LOGISTIC
            else:
                draws, kind = rng.logistic(0.0, 1.0, size=shape), K.NOISE_GIVEN
            zeros = run(scores, at, draws, kind, m, self.labels, self.labels, self.group_ptr, self._active,
                        self._coef, self._discounts, self._classic, float(self.decay), self._top,
                        int(self.num_neighbors), want_loss, done == 0, done + m == self.permutations,
                        self.query_weights, float(self.permutations), grad, hess, loss)
            if zeros:
                return False
            done += m
        return True

    def _loss(self, scores: NDArray[np.float64]) -> float:
        loss = self._run(scores, True)[2]
        return float(np.sum(loss * self.query_weights / self.permutations))


def _uniforms(rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.float64]:
    """The next uniforms of ``rng`` in [0, 1): those ``rng.logistic(size=shape)`` transforms when none
    is 0 (after a 0, ``logistic`` draws again; the kernel counts the zeros)."""
    return rng.random(size=shape)
