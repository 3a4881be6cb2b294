"""LambdaMART for other metrics than NDCG (Burges 2010, "From RankNet to LambdaRank to LambdaMART",
Section 7; Donmez, Svore and Burges, SIGIR 2009): RankNet's logistic pair loss ``log(1 + exp(-sigma
(s_i - s_j)))`` over the pairs of different labels, each weighed by how much the metric changes when
the two swap places in the current order (:mod:`.metric_weights`, each checked against recomputing
the metric). One objective per metric: ``lambdamart_map``, ``lambdamart_err``, ``lambdamart_mrr``,
``lambdamart_rbp`` (NDCG's is ``lambdarank``). The metrics are :mod:`boostplug.metrics`' (same
parameters, same conventions); ``k`` (``None``: the whole list) is the metric's cutoff.
``truncation_level`` (30, LightGBM's ``lambdarank_truncation_level`` default) keeps only the pairs
with a document among that many first positions of the current order, as LightGBM's lambdarank
does for NDCG (``None``: every pair); the pairs visited are those with a document among the first
``min(k, truncation_level)`` positions (below ``k`` a swap changes nothing).
"""

from __future__ import annotations

from typing import Any

from .._validation import check_int, show
from ..metrics._binary import ERR_MAX_GRADE
from . import metric_weights as mw
from ._contract import Param, Search
from .lambdarank import SIGMOID_MAX, SIGMOID_MIN
from .pairwise import LAMBDA_EXACT, LOGISTIC, NO_TRUNCATION, PairwiseLoss
from .ranknet import TRUNCATION_CHOICES

__all__ = ["LambdaMAP", "LambdaERR", "LambdaMRR", "LambdaRBP", "LambdaMetric"]

SIGMA = Param(1.0, "real", "slope of the logistic pair loss", low=SIGMOID_MIN, high=SIGMOID_MAX,
              search=Search(0.25, 4.0, log=True))  # lambdarank's range: sigma^2 and the sums stay finite
K = Param(None, "int", "the metric's cutoff: only the first k positions count (None: the whole list)", low=1)
TRUNCATION_LEVEL = Param(30, "custom", "keep only the pairs with a document among this many first positions of the "
                         "current order, as lambdarank_truncation_level (None: every pair)",
                         convert=lambda v: None if v is None else check_int("truncation_level", v, 1, None),
                         search=TRUNCATION_CHOICES)
THRESHOLD = Param(1.0, "real", "a document is relevant when its label is at least this")


class LambdaMetric(PairwiseLoss):
    """What the four share: the logistic pair loss with weights held at the current scores, the
    truncation at ``min(k, truncation_level)``, and :meth:`pair_args`: the weight's arguments."""

    hessians = {"exact": LAMBDA_EXACT}
    pair_loss, pair_grad, pair_hess = LOGISTIC
    k: int | None
    truncation_level: int | None

    def truncation(self) -> int:
        return min(NO_TRUNCATION if v is None else v for v in (self.k, self.truncation_level))

    def pair_args(self) -> tuple[Any, ...]:
        return (self.sigma, *(self.settings[p] for p in self.params if p not in ("sigma", "k", "truncation_level")),
                mw.NO_CUTOFF if self.k is None else self.k)


def _relevance_hooks(prefix_fn: Any, weight_fn: Any) -> tuple[staticmethod, staticmethod]:
    """``query_prefix`` and ``pair_weight`` of a metric of binary relevance (``label >= threshold``,
    arguments ``(sigma, threshold, cutoff)``): its :mod:`.metric_weights` prefix and weight."""

    def query_prefix(labels, gains, out, sigma, threshold, cutoff):  # type: ignore[no-untyped-def]
        prefix_fn(labels, out, threshold, cutoff)

    def pair_weight(p, prefix, sigma, threshold, cutoff):  # type: ignore[no-untyped-def]
        return weight_fn(p, prefix, threshold, cutoff)

    return staticmethod(query_prefix), staticmethod(pair_weight)


class LambdaMAP(LambdaMetric):
    name = "lambdamart_map"
    summary = "LambdaMART with |Delta MAP| pair weights (Burges 2010; Donmez et al. 2009)"
    params = {"sigma": SIGMA, "k": K, "truncation_level": TRUNCATION_LEVEL, "threshold": THRESHOLD}
    prefix_width = mw.MAP_WIDTH
    query_prefix, pair_weight = _relevance_hooks(mw.map_prefix, mw.delta_map)


class LambdaERR(LambdaMetric):
    name = "lambdamart_err"
    summary = "LambdaMART with |Delta ERR| pair weights (ERR: Chapelle et al. 2009)"
    params = {"sigma": SIGMA, "k": K, "truncation_level": TRUNCATION_LEVEL,
              "max_grade": Param(float(ERR_MAX_GRADE), "real", "the largest grade: a label g stops the user with "
                                 "probability (2^g - 1) / 2^max_grade", low=0.0, low_open=True, high=1000.0)}
    prefix_width = mw.ERR_WIDTH

    def setup(self) -> None:
        if self.labels.size and self.labels.max() > self.max_grade:
            raise ValueError(f"{self.name}: a label ({self.labels.max():g}) is above max_grade={self.max_grade:g}: "
                             "its stop probability would exceed 1; set max_grade to the largest grade")
        super().setup()

    def gains(self):  # type: ignore[no-untyped-def]
        return mw.err_stops(self.labels, self.max_grade)  # once per data set, not per pair and round

    @staticmethod
    def query_prefix(labels, gains, out, sigma, max_grade, cutoff):  # type: ignore[no-untyped-def]
        mw.err_prefix(gains, out, cutoff)

    @staticmethod
    def pair_weight(p, prefix, sigma, max_grade, cutoff):  # type: ignore[no-untyped-def]
        return mw.delta_err(p, prefix, cutoff)


class LambdaMRR(LambdaMetric):
    name = "lambdamart_mrr"
    summary = "LambdaMART with |Delta reciprocal rank| pair weights"
    params = {"sigma": SIGMA, "k": K, "truncation_level": TRUNCATION_LEVEL, "threshold": THRESHOLD}
    prefix_width = mw.MRR_WIDTH
    query_prefix, pair_weight = _relevance_hooks(mw.mrr_prefix, mw.delta_mrr)


class LambdaRBP(LambdaMetric):
    name = "lambdamart_rbp"
    summary = "LambdaMART with |Delta RBP| pair weights (RBP: Moffat and Zobel 2008)"
    params = {"sigma": SIGMA, "k": K, "truncation_level": TRUNCATION_LEVEL,
              "persistence": Param(0.8, "real", "the probability of reading on (RBP's p), below 1 (RBP's (1 - p) "
                                   "factor makes every weight 0 at 1)", low=0.0, high=1.0, low_open=True),
              "max_grade": Param(0.0, "real", "graded relevance label / max_grade; 0: binary, label >= threshold",
                                 low=0.0),
              "threshold": THRESHOLD}

    def setup(self) -> None:
        if self.persistence == 1.0:
            raise ValueError(f"{self.name}: persistence must be below 1, got {show(self.persistence)} (RBP's factor "
                             "1 - persistence would make every pair weight, so every gradient, 0)")
        if self.max_grade > 0.0 and self.labels.size and self.labels.max() > self.max_grade:
            raise ValueError(f"{self.name}: a label ({self.labels.max():g}) is above max_grade={self.max_grade:g}")
        super().setup()

    @staticmethod
    def pair_weight(p, sigma, persistence, max_grade, threshold, cutoff):  # type: ignore[no-untyped-def]
        return mw.delta_rbp(p, persistence, max_grade, threshold, cutoff)
