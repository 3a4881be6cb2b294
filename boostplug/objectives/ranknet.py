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

``truncation_level = k`` (default ``None``: every pair, RankNet's loss) keeps only the pairs with
a document among the first ``k`` positions of the current order (by descending score, ties in
input order), as LightGBM's ``lambdarank_truncation_level``. The pairs then depend on the order,
so ``RankNet(..., truncation_level=k)`` is a :class:`TruncatedRankNet` (:meth:`RankNet.class_for`):
the lambda-weighted loss of weight 1, whose gradient (kind ``"lambda"``) is the derivative of the
loss with the kept pairs held, and whose ``loss`` and ``grad_hess`` take ``weights_at=`` (the
scores whose order picks the pairs). Where the order does not change, that is the loss's own
derivative (the loss jumps where two scores cross the ``k``-th position).
"""

from __future__ import annotations

from typing import Any, Mapping

from . import lambda_weighted as LW
from ._contract import Loss, Param, Search
from .lambda_weighted import LOGISTIC, NO_TRUNCATION, LambdaWeightedLoss
from .lambdarank import SIGMOID_MAX, SIGMOID_MIN
from .pairwise import BOUND, EXACT, PairwiseLoss

__all__ = ["RankNet", "TruncatedRankNet", "SIGMA", "TRUNCATION_LEVEL", "Truncatable"]

#: RankNet's slope of the logistic, searched over 0.5..4 (log) by ``compare --tune``; shared with
#: the lambda-weighted losses of :mod:`.lambdaloss`. In lambdarank's range [1e-10, 1e10]: far beyond
#: any useful slope, and inside it ``sigma^2`` and the Hessian's sums stay finite.
SIGMA = Param(1.0, "real", "slope of the logistic: P_ij = 1 / (1 + exp(-sigma (s_i - s_j)))", low=SIGMOID_MIN,
              high=SIGMOID_MAX, search=Search(0.5, 4.0, log=True))


#: The all-pairs losses' optional truncation (RankNet's and LambdaLoss's): a fixed choice, not tuned.
TRUNCATION_LEVEL = Param(None, "int", "keep only the pairs with a document among this many first positions of the "
                         "current order (None: every pair, the paper's loss)", low=1)


class Truncatable:
    """A pairwise loss's part that takes ``truncation_level`` (:data:`TRUNCATION_LEVEL`, declared in
    its ``params``): not among the pair functions' arguments, and the lambda-weighted base's
    :meth:`~.lambda_weighted.LambdaWeightedLoss.truncation` hook."""

    params: dict[str, Param]
    settings: dict[str, Any]
    truncation_level: int | None

    def pair_args(self) -> tuple[Any, ...]:
        return tuple(self.settings[k] for k in self.params if k != "truncation_level")

    def truncation(self) -> int:
        return NO_TRUNCATION if self.truncation_level is None else self.truncation_level


class RankNet(Truncatable, PairwiseLoss):
    """RankNet: ``W_k sum log(1 + exp(-sigma (s_i - s_j)))`` over the pairs of different labels
    (module docstring); ``sigma`` in [1e-10, 1e10]. With ``truncation_level``, only those with a
    document among the first ``truncation_level`` positions of the current order: an instance of
    :class:`TruncatedRankNet` (:meth:`class_for`)."""

    name = "ranknet"
    summary = "RankNet's pairwise logistic loss on every pair of different labels (Burges et al. 2005)"
    params = {"sigma": SIGMA, "truncation_level": TRUNCATION_LEVEL}
    hessians = {"exact": EXACT, "bound": BOUND}
    pair_loss, pair_grad, pair_hess = LOGISTIC

    @classmethod
    def class_for(cls, params: Mapping[str, Any]) -> type[Loss]:
        """:class:`TruncatedRankNet` when ``params`` set a ``truncation_level`` (its pairs follow the
        order), else RankNet (its pairs listed once from the labels). A subclass of RankNet that
        takes a truncation level says which class computes it by overriding this."""
        if params.get("truncation_level") is None or issubclass(cls, LambdaWeightedLoss):
            return cls
        if cls is RankNet:
            return TruncatedRankNet
        raise TypeError(f"{cls.name or cls.__name__}: truncation_level makes the pairs follow the order (RankNet's "
                        f"is a TruncatedRankNet, a lambda-weighted loss); {cls.__name__} takes it by overriding "
                        "class_for to return such a subclass of it")


class TruncatedRankNet(RankNet, LambdaWeightedLoss):
    """RankNet's loss over the pairs with a document among the first ``truncation_level``
    positions of the current order: the lambda-weighted loss of weight 1, what
    ``RankNet(..., truncation_level=k)`` is. Its Hessian modes are the lambda-weighted ones (the
    gradient kind ``"lambda"``: the pairs held at ``weights_at=``); the parameters, pair
    functions and messages are RankNet's."""

    hessians = {"exact": LW.EXACT, "bound": LW.BOUND}
    # the lambda-weighted sums call pair_terms(d, w, ...) when a class defines it: not one RankNet's
    # listed-pairs path may define for itself
    pair_terms = None

    @staticmethod
    def pair_weight(p, sigma):  # type: ignore[no-untyped-def]
        return 1.0
