"""RankNet's pairwise logistic loss (Burges et al., ICML 2005), as a registered objective.

The objective of query ``k`` (weight ``W_k``) is::

    W_k sum_{(i, j): y_i > y_j} log(1 + exp(-sigma (s_i - s_j)))

over every pair of its documents with different labels, ``i`` the preferred one, each pair with
weight 1: RankNet's cross-entropy with target probability 1 (``P_ij = 1 / (1 + exp(-sigma (s_i -
s_j)))``, eq. (1)-(3) of the paper). No lambda weight: the pairs and their weights depend on the
labels only, so it is a :class:`~.pairwise.PairwiseLoss` (pairs listed once per data set, the
pairwise kernels each round) with the logistic pair functions that the lambda-weighted losses use
(:data:`.lambda_weighted.LOGISTIC`). Hessian modes: ``"exact"`` (``sigma^2 sum p (1 - p)``) and
``"bound"`` (twice the absolute values, which majorises the Hessian).
"""

from __future__ import annotations

from ._contract import Param, Search
from .lambda_weighted import LOGISTIC
from .lambdarank import SIGMOID_MAX, SIGMOID_MIN
from .pairwise import BOUND, EXACT, PairwiseLoss

__all__ = ["RankNet", "SIGMA"]

#: RankNet's slope of the logistic, searched over 0.5..4 (log) by ``compare --tune``; shared with
#: the lambda-weighted losses of :mod:`.lambdaloss`. In lambdarank's range [1e-10, 1e10]: far beyond
#: any useful slope, and inside it ``sigma^2`` and the Hessian's sums stay finite.
SIGMA = Param(1.0, "real", "slope of the logistic: P_ij = 1 / (1 + exp(-sigma (s_i - s_j)))", low=SIGMOID_MIN,
              high=SIGMOID_MAX, search=Search(0.5, 4.0, log=True))


class RankNet(PairwiseLoss):
    """RankNet: ``W_k sum log(1 + exp(-sigma (s_i - s_j)))`` over the pairs of different labels
    (module docstring); ``sigma`` in [1e-10, 1e10]."""

    name = "ranknet"
    summary = "RankNet's pairwise logistic loss on every pair of different labels (Burges et al. 2005)"
    params = {"sigma": SIGMA}
    hessians = {"exact": EXACT, "bound": BOUND}
    pair_loss, pair_grad, pair_hess = LOGISTIC
