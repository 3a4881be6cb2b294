"""RankNet's pairwise logistic loss (Burges et al., ICML 2005), as a registered objective.

The objective of query ``k`` (weight ``W_k``) is::

    W_k sum_{(i, j): y_i > y_j} log(1 + exp(-sigma (s_i - s_j)))

over every pair of its documents with different labels, ``i`` the preferred one, each pair with
weight 1: RankNet's cross-entropy with target probability 1 (``P_ij = 1 / (1 + exp(-sigma (s_i -
s_j)))``, eq. (1)-(3) of the paper), on the pair base (:mod:`.pairwise`) with its logistic pair
functions. Hessian modes: ``"exact"`` (``sigma^2 sum p (1 - p)``) and ``"bound"`` (twice the
absolute values, which majorises the Hessian).

``truncation_level = k`` (default ``None``: every pair, RankNet's loss) keeps only the pairs with a
document among the first ``k`` positions of the current order (by descending score, ties in input
order), as LightGBM's ``lambdarank_truncation_level``. The kept pairs then depend on the order, so
the gradient is declared of kind ``"lambda"``: the derivative of the loss with the kept pairs held
(``loss(s, weights_at=t)`` keeps those of the order of ``t``). Without truncation nothing depends on
the order and that is the loss's own derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._contract import Param, Search
from .lambdarank import SIGMOID_MAX, SIGMOID_MIN
from .logistic import LOGISTIC
from .pairwise import LAMBDA_BOUND, LAMBDA_EXACT, NO_TRUNCATION, PairwiseLoss

__all__ = ["RankNet", "SIGMA", "TRUNCATION_LEVEL", "TRUNCATION_CHOICES", "Truncatable"]

#: RankNet's slope of the logistic, searched over 0.5..4 (log) by ``compare --tune``; shared with
#: LambdaLoss's losses. In lambdarank's range [1e-10, 1e10]: far beyond any useful slope, and inside
#: it ``sigma^2`` and the Hessian's sums stay finite.
SIGMA = Param(1.0, "real", "slope of the logistic: P_ij = 1 / (1 + exp(-sigma (s_i - s_j)))", low=SIGMOID_MIN,
              high=SIGMOID_MAX, search=Search(0.5, 4.0, log=True))

#: The all-pairs losses' optional truncation (RankNet's, LambdaLoss's), searched as lambdarank's (None: every pair).
TRUNCATION_CHOICES = Search(choices=(10, 30, 100, None))
TRUNCATION_LEVEL = Param(None, "int", "keep only the pairs with a document among this many first positions of the "
                         "current order (None: every pair, the paper's loss)", low=1, search=TRUNCATION_CHOICES)


class Truncatable:
    """The part of a loss that takes ``truncation_level`` (:data:`TRUNCATION_LEVEL`, declared in its
    ``params``): not among the functions' arguments, and the pair base's ``truncation`` hook."""

    params: dict[str, Param]
    settings: dict[str, Any]
    truncation_level: int | None

    def pair_args(self) -> tuple[Any, ...]:
        return tuple(self.settings[k] for k in self.params if k != "truncation_level")

    def truncation(self) -> int:
        return NO_TRUNCATION if self.truncation_level is None else self.truncation_level


class RankNet(Truncatable, PairwiseLoss):
    """RankNet: ``W_k sum log(1 + exp(-sigma (s_i - s_j)))`` over the pairs of different labels
    (module docstring); ``sigma`` in [1e-10, 1e10]; ``truncation_level`` keeps the pairs with a
    document among that many first positions of the current order."""

    name = "ranknet"
    summary = "RankNet's pairwise logistic loss on every pair of different labels (Burges et al. 2005)"
    params = {"sigma": SIGMA, "truncation_level": TRUNCATION_LEVEL}
    hessians = {"exact": LAMBDA_EXACT, "bound": LAMBDA_BOUND}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    def split_weights(self) -> NDArray[np.float64]:
        """Each row's summed weight of all its pairs (every pair, whatever ``truncation_level``): its
        weight in CatBoost's split scores, as PairLogit's; computed once, from the labels and queries."""
        if not hasattr(self, "_split_weights"):
            sizes = np.diff(self.group_ptr)
            q = np.repeat(np.arange(sizes.shape[0]), sizes)
            _, at, same = np.unique(np.stack([q, self.labels]), axis=1, return_inverse=True, return_counts=True)
            self._split_weights = (sizes[q] - same[at.reshape(-1)]) * self.query_weights[q]
        return self._split_weights
