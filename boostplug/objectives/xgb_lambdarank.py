"""XGBoost's ``rank:ndcg``, ``rank:pairwise`` and ``rank:map``, reproduced: the same trees through
the plugin path as the built-ins.

XGBoost's ``LambdaRankObj`` (src/objective/lambdarank_obj.cc, .h; src/common/ranking_utils.*),
operation for operation. Per query, with the documents sorted by score (descending, a stable sort),
for each pair of different labels (``h`` the higher label) among the pairs ``MakePairs`` makes
(``"topk"``: every pair with one document among the first ``lambdarank_num_pair_per_sample``
positions; ``"mean"``: that many pairs drawn per document with XGBoost's generator)::

    delta  = |Delta NDCG|, 1 (rank:pairwise) or |Delta MAP|   (the swap's change of the metric)
    delta /= |s_h - s_l| + 0.01                (lambdarank_score_normalization, unless the query's scores are all equal)
    p      = sigmoid(s_h - s_l)                (float32, with expf)
    lambda = (p - 1) delta                     (rounded to float32; added to h, subtracted from l)
    hess   = max(p (1 - p), 1e-16) delta 2     (rounded to float32; added to both)

summed in float32 in XGBoost's order; with ``lambdarank_normalization`` each query's values are then
multiplied by ``log2(1 + S) / S`` (``"topk"``, ``S = -2 sum lambda``) or ``1 / num_pair_per_sample``
(``"mean"``), and finally by the query's weight (in float64; XGBoost's built-in rescales its weights
to mean 1 and multiplies in float32, so with weights the trees are close, not the same). No
Hessian floor (``hessian_floor=False``), as in XGBoost.

The loss this reports (it does not steer training) is ``sum delta log(1 + exp(-(s_h - s_l)))``
over the same pairs, normalised and weighted as the lambdas; the lambdas are its gradient with the
pair weights held (gradient kind ``"lambda"``), up to the float32 arithmetic; XGBoost's Hessian is
twice the held-weights diagonal (a bound).

The ``"mean"`` pairs are drawn from the round's number: the objective's ``current_round`` (the
rounds :class:`~._rounds.RandomRounds` counts, from 0: XGBoost's ``iter``), so they are XGBoost's
(up to 3.3; later versions seed from the booster's generator: the same distribution there) when
training starts from round 0 with one call per round.

``lambdarank_unbiased`` (XGBoost's unbiased LambdaMART, Hu et al., WWW 2019, as ``LambdaRankObj``
implements it): the terms of a pair whose documents are both among the first positions tracked are
divided by their position biases ``t+(high) t-(low)``, which each round's own call estimates for the next
(:func:`~._xgb_lambdarank_kernels.position_bias_update`); the bound objective carries them, the latest
rounds' only (docs/objectives/lambda.md, "Unbiased LambdaMART: position bias from clicks").
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from .._core.dcg import RANK_DOC_WORK, inverse_ideal_dcgs, position_discounts
from .._validation import check_choice, check_flag, show
from . import _xgb_lambdarank_kernels as X
from ._contract import Hessian, Param, Search
from ._loss import RunLoss
from ._pair_kernels import query_orders
from ._rounds import RandomRounds
from .lambdarank import EVERY_PAIR
from .pairwise import NO_TRUNCATION

__all__ = ["XGBoostLambdaRank", "RankNDCG", "RankPairwise", "RankMAP", "DEFAULT_NUM_PAIR"]

#: XGBoost's default ``lambdarank_num_pair_per_sample`` by pair method.
DEFAULT_NUM_PAIR = {"topk": 32, "mean": 1}

#: The most "mean" pairs one query may draw (the kernel holds a query's draws: 16 bytes each).
MAX_MEAN_PAIRS = 10**7

#: XGBoost's largest relevance degree with the exponential gain (``MaxRel()``).
MAX_REL = 31


def _num_pair(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"lambdarank_num_pair_per_sample must be an integer >= 1 or None, got {show(value)}")
    if value < 1 or value > np.iinfo(np.uint32).max:
        raise ValueError(f"lambdarank_num_pair_per_sample must be an integer in [1, 2^32 - 1] or None, got "
                         f"{show(value)}")
    return int(value)


_PAIR_PARAMS = {
    # "custom", not "choice": the contract checks' cases run every choice, and a query's "mean" pairs depend
    # on its index and the query count (XGBoost's seed), which the sum-over-queries check cannot allow
    "lambdarank_pair_method": Param("topk", "custom", "how pairs are made: 'topk' (every pair with a document among "
                                    "the first lambdarank_num_pair_per_sample positions) or 'mean' (that many "
                                    "pairs drawn per document)",
                                    convert=lambda v: check_choice("lambdarank_pair_method", v, ("topk", "mean"))),
    "lambdarank_num_pair_per_sample": Param(None, "custom", "the top-k level ('topk') or the pairs per document "
                                            "('mean'); None: XGBoost's default, 32 for 'topk', 1 for 'mean'",
                                            convert=_num_pair, search=Search(choices=(10, 32, 100, EVERY_PAIR))),
    "lambdarank_normalization": Param(True, "bool", "scale each query by log2(1 + S) / S ('topk') or by "
                                      "1 / lambdarank_num_pair_per_sample ('mean')"),
    "lambdarank_score_normalization": Param(True, "bool", "divide each pair's delta by |s_h - s_l| + 0.01"),
    # "custom", not "bool": the position biases are estimated over every query and carried from round to round, which
    # the contract checks' cases (the sum over queries, rounds called out of order) cannot allow
    "lambdarank_unbiased": Param(False, "custom", "XGBoost's unbiased LambdaMART (Hu et al., WWW 2019): each pair's "
                                 "terms divided by the position biases t+(high) t-(low), estimated each round; a "
                                 "document's position is its row's order in its query",
                                 convert=lambda v: check_flag(v, "lambdarank_unbiased")),
    "lambdarank_bias_norm": Param(1.0, "real", "the Lp regularisation of the biases lambdarank_unbiased estimates: "
                                  "each is (the position's cost / position 0's) ** (1 / (1 + lambdarank_bias_norm))",
                                  low=0.0, needs="lambdarank_unbiased"),
}


class XGBoostLambdaRank(RandomRounds, RunLoss):
    """The base of XGBoost's three LambdaMART objectives (no name: not an objective itself);
    ``metric`` is the kernel's pair weight (:data:`~._xgb_lambdarank_kernels.NDCG`, ...).
    Parameters are XGBoost's, with its names and defaults. Its ``"mean"`` pairs are drawn each
    round (:class:`~._rounds.RandomRounds`)."""

    metric: ClassVar[int] = X.PAIRWISE
    params = _PAIR_PARAMS
    hessians = {"xgboost": Hessian(
        # twice the held-weights Hessian's diagonal, which majorises it; declared "fitting" because the float32
        # sums make finite differences of the gradient (the checks of a bound) too coarse to check it by
        "fitting", "XGBoost's 2 delta max(p (1 - p), 1e-16) summed over the document's pairs in float32: twice the "
        "diagonal of the held-weights loss's Hessian", gradient="lambda",
        # float32 differences, sigmoid and sums: the lambdas are off by a few float32 ulps of the largest
        tolerance=1e-5)}
    hessian_floor = False
    #: What XGBoost's built-in reads from the training's parameters, taken from them when not given
    #: to the objective (the adapters: ``xgb.train``, ``xgb.cv``, ``XGBRanker``).
    framework_params = {"xgboost": {k: k for k in _PAIR_PARAMS}}

    lambdarank_pair_method: str
    lambdarank_num_pair_per_sample: int | None
    lambdarank_normalization: bool
    lambdarank_score_normalization: bool
    lambdarank_unbiased: bool
    lambdarank_bias_norm: float

    @classmethod
    def search_space(cls, params: Mapping[str, Any]) -> dict[str, Search]:
        """The top-k level's choices with ``"topk"`` pairs (not every pair with ``lambdarank_unbiased``: XGBoost
        sizes its position biases by the level); none with ``"mean"`` (a count per document)."""
        space = super().search_space(params)
        if params["lambdarank_pair_method"] != "topk":
            del space["lambdarank_num_pair_per_sample"]
        elif params["lambdarank_unbiased"]:
            space["lambdarank_num_pair_per_sample"] = Search(choices=(10, 32, 100))
        return space

    @property
    def num_pair(self) -> int:
        """XGBoost's ``NumPair()``: the given count, else the pair method's default."""
        given = self.lambdarank_num_pair_per_sample
        return DEFAULT_NUM_PAIR[self.lambdarank_pair_method] if given is None else given

    def truncation(self) -> int:
        """XGBoost's ``TopK()``: the pairs' and the ideal DCG's depth, every position for ``"mean"``."""
        return self.num_pair if self.lambdarank_pair_method == "topk" else NO_TRUNCATION

    def xgb_labels(self, labels32: NDArray[np.float32]) -> NDArray[np.float64]:
        """The labels as the kernel takes them, from XGBoost's float32 ones (refusing those the
        objective cannot take): as they are for ``rank:pairwise``."""
        return labels32.astype(np.float64)

    def gains(self) -> NDArray[np.float64]:
        """No gains (only ``rank:ndcg``'s weight has them)."""
        return np.zeros(self.n_docs)

    def setup(self) -> None:
        self._labels32 = self.xgb_labels(self.labels.astype(np.float32))
        sizes = np.diff(self.group_ptr)
        longest = int(sizes.max(initial=0))
        self._top_k = self.truncation()
        self._discounts = position_discounts(self.group_ptr)
        self._gains = np.ascontiguousarray(self.gains(), dtype=np.float64)
        self._inv_max_dcg = inverse_ideal_dcgs(self._gains, self.group_ptr, self._discounts, self._top_k)
        self._work = int(np.sum(sizes * np.minimum(sizes, self._top_k)))
        #: XGBoost's ``MaxPositionSize()`` capped by the longest query (no pair reaches a position past it):
        #: the positions whose biases are estimated
        self.n_positions = min(self.num_pair if self.lambdarank_pair_method == "topk" else 32, longest)
        #: the position biases ``(t+, t-)`` by round, only those a call may read (unbiased only): the round
        #: before the latest (read when the latest raised), the latest's and the next round's
        self._biases: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]] = {
            0: (np.ones(self.n_positions), np.ones(self.n_positions))} if self.lambdarank_unbiased else {}
        if self.lambdarank_pair_method == "mean" and longest * self.num_pair > MAX_MEAN_PAIRS:
            raise ValueError(f"{self.name}: lambdarank_num_pair_per_sample={self.num_pair} draws {longest} * "
                             f"{self.num_pair} pairs in the longest query, more than {MAX_MEAN_PAIRS:.0e} (each "
                             "query's draws are held in memory)")

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        at = self.weights_from(scores)
        n = 0 if want_loss else self.n_docs
        grad, hess, loss = np.zeros(n), np.zeros(n), np.zeros(self.n_queries if want_loss else 0)
        order = np.empty(self.n_docs, dtype=np.int64)
        dispatch.kernel_for(query_orders, self.n_docs * RANK_DOC_WORK)(at, self.group_ptr, order)
        mean = self.lambdarank_pair_method == "mean"
        t_plus = t_minus = li = lj = None  # the plain copy: numba compiles it without the unbiased branches
        estimate = False
        if self.lambdarank_unbiased:
            r = min(max(self.rounds - 1, 0), max(self._biases))
            t_plus, t_minus = self._biases[r]
            # a round's own call (not a held one, not the loss) estimates the next round's biases
            estimate = not want_loss and not self.weights_held
            if estimate:
                li, lj = np.zeros(self.n_docs), np.zeros(self.n_docs)
        run = dispatch.kernel_for(X.xgb_lambda_sums, self.n_docs * self.num_pair if mean else self._work)
        run(scores, at, order, self.weights_held, self._labels32, self._gains, self.group_ptr, self._inv_max_dcg,
            self.query_weights, self._discounts, self.metric, self.num_pair, self.current_round if mean else None,
            self.lambdarank_score_normalization, self.lambdarank_normalization, want_loss, grad, hess, loss,
            t_plus, t_minus, li, lj)
        if estimate:
            nxt_plus, nxt_minus = t_plus.copy(), t_minus.copy()
            X.position_bias_update(li, lj, self.group_ptr, nxt_plus, nxt_minus, 1.0 / (1.0 + self.lambdarank_bias_norm))
            self._biases = {k: v for k, v in self._biases.items() if r - 1 <= k <= r}
            self._biases[r + 1] = (nxt_plus, nxt_minus)
        return grad, hess, loss

    def position_biases(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``lambdarank_unbiased``'s estimates ``(t+, t-)`` for the next round, one per tracked position
        (:attr:`n_positions`; XGBoost's ``ti+`` and ``tj-``, saved in its model's objective config,
        where the positions past the longest query follow); ``ValueError`` without ``lambdarank_unbiased``."""
        if not self.lambdarank_unbiased:
            raise ValueError(f"{self.name}: position biases are estimated only with lambdarank_unbiased=True")
        t_plus, t_minus = self._biases[max(self._biases)]
        return t_plus.copy(), t_minus.copy()


class RankNDCG(XGBoostLambdaRank):
    """XGBoost's ``rank:ndcg`` (LambdaMART, ``|Delta NDCG|`` pair weights) through the plugin path."""

    name = "rank_ndcg"
    summary = "XGBoost's rank:ndcg gradients, reproduced (on XGBoost: the built-in's trees)"
    metric = X.NDCG
    params = {**_PAIR_PARAMS, "ndcg_exp_gain": Param(True, "bool", "gain 2^label - 1 (labels integers in 0..31); "
                                                     "False: the label itself")}
    framework_params = {"xgboost": {**XGBoostLambdaRank.framework_params["xgboost"], "ndcg_exp_gain": "ndcg_exp_gain"}}
    ndcg_exp_gain: bool

    def xgb_labels(self, labels32: NDArray[np.float32]) -> NDArray[np.float64]:
        if not self.ndcg_exp_gain:
            return labels32.astype(np.float64)
        bad = (np.abs(np.floor(labels32) - labels32) > 1e-6) | (labels32 < 0) | (labels32 >= MAX_REL + 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self.name}: with ndcg_exp_gain=True (gain 2^label - 1) labels must be integers in "
                             f"0..{MAX_REL}; row {i} has label {float(self.labels[i])!r} (set ndcg_exp_gain=False "
                             "for the label itself as gain)")
        return labels32.astype(np.float64)

    def gains(self) -> NDArray[np.float64]:
        if self.ndcg_exp_gain:  # CalcDCGGain: (1 << uint32(label)) - 1
            return np.ldexp(1.0, self._labels32.astype(np.int64)) - 1.0
        return self._labels32.copy()


class RankPairwise(XGBoostLambdaRank):
    """XGBoost's ``rank:pairwise`` (RankNet's logistic loss, pair weight 1) through the plugin path."""

    name = "rank_pairwise"
    summary = "XGBoost's rank:pairwise gradients, reproduced (on XGBoost: the built-in's trees)"
    metric = X.PAIRWISE


class RankMAP(XGBoostLambdaRank):
    """XGBoost's ``rank:map`` (LambdaMART, ``|Delta MAP|`` pair weights, binary labels) through the
    plugin path; integer grades are taken too, relevant from 1 up."""

    name = "rank_map"
    summary = "XGBoost's rank:map gradients, reproduced (on XGBoost: the built-in's trees)"
    metric = X.MAP

    def xgb_labels(self, labels32: NDArray[np.float32]) -> NDArray[np.float64]:
        """Relevant (1) or not (0): XGBoost's binary labels as they are; graded ones (integers, which
        XGBoost's ``rank:map`` refuses) relevant from 1 up, as :func:`boostplug.metrics.average_precision`
        counts them."""
        bad = (np.floor(labels32) != labels32) | (labels32 < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self.name}: MAP takes relevance labels, 0 or 1 (or integer grades, relevant from 1 "
                             f"up); row {i} has label {float(self.labels[i])!r}")
        return (labels32 >= 1).astype(np.float64)
