"""LightGBM's ``lambdarank``, reproduced: the same trees through the plugin path as the built-in.

LightGBM's ``LambdarankNDCG`` (src/objective/rank_objective.hpp, with DCGCalculator's
label gains, discounts and ideal DCG), operation for operation. Per query, with the documents
sorted by score (descending, a stable sort), for each pair of different labels with one of
them among the first ``lambdarank_truncation_level`` positions (``i`` the higher label)::

    Delta  = (G_i - G_j) |1/log2(2 + r_i) - 1/log2(2 + r_j)| / maxDCG@truncation   (gains label_gain[y])
    Delta /= 0.01f + |s_i - s_j|                 (lambdarank_norm, unless the query's scores are all equal)
    p      = sigmoid_table(s_i - s_j)            (1 / (1 + exp(sigmoid x)) from a 2^20-bin table)
    lambda = p (-sigmoid Delta)                  (added to i's gradient, subtracted from j's)
    hess   = p (1 - p) (sigmoid^2 Delta)         (added to both)

summed in float32 (LightGBM's ``score_t``) in LightGBM's order; with ``lambdarank_norm`` each
query's values are then multiplied by ``log2(1 + S) / S``, ``S = -2 sum lambda``, and by the
query's weight. No Hessian floor (``hessian_floor=False``): a document in no pair gets gradient
and Hessian 0, as in LightGBM, and any floor moves split thresholds.

The loss this reports (it does not steer training) is ``W_k c_k sum Delta log(1 + exp(-sigmoid
(s_i - s_j)))`` over the same pairs, ``c_k`` the normalisation; the lambdas are its gradient with
the pair weights held (gradient kind ``"lambda"``), up to the sigmoid table's resolution and the
float32 sums (the mode's ``tolerance``).

Not reproduced: the position-bias options (``lambdarank_position_bias_regularization``,
positions in the Dataset).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core.dcg import check_label_gain, gains_of
from ._contract import Hessian, Param
from .lambda_weighted import LambdaWeightedLoss, _inverse

__all__ = ["LambdaRank", "DEFAULT_LABEL_GAIN", "SIGMOID_BINS", "SIGMOID_MIN", "SIGMOID_MAX", "sigmoid_table"]

#: LightGBM's default ``label_gain``: ``2^i - 1`` for labels 0..30.
DEFAULT_LABEL_GAIN = tuple(float((1 << i) - 1) for i in range(31))

#: Bins of LightGBM's sigmoid lookup table (``_sigmoid_bins = 1024 * 1024``).
SIGMOID_BINS = 1024 * 1024

#: Range of ``sigmoid``: far beyond any useful slope, and inside it the table's bounds
#: (``+-25 / sigmoid``) and the float32 sums of ``sigmoid^2 |Delta NDCG|`` stay finite.
SIGMOID_MIN, SIGMOID_MAX = 1e-10, 1e10


@functools.lru_cache(maxsize=8)
def sigmoid_table(sigmoid: float) -> tuple[NDArray[np.float64], float, float, float]:
    """LightGBM's ``ConstructSigmoidTable``: ``(table, min input, max input, bins per unit)`` with
    ``table[i] = 1 / (1 + exp(sigmoid x_i))`` at ``x_i = i / factor + min``, the inputs within
    ``+-50 / sigmoid / 2``. Computed with Python's ``math.exp`` (the C library's ``exp``, as
    LightGBM's ``std::exp``), not numpy's vectorised one, whose last bits may differ."""
    low = -50.0 / sigmoid / 2.0
    high = -low
    factor = SIGMOID_BINS / (high - low)
    table = np.array([1.0 / (1.0 + math.exp((i / factor + low) * sigmoid)) for i in range(SIGMOID_BINS)])
    table.setflags(write=False)
    return table, low, high, factor


@nb.njit(cache=True)
def _lookup(d: float, table: np.ndarray, low: float, high: float, factor: float) -> float:
    """LightGBM's ``GetSigmoid(d)``: the table's bin of ``d``, its ends beyond them."""
    if d <= low:
        return table[0]
    if d >= high:
        return table[table.shape[0] - 1]
    return table[np.uint64(min(int((d - low) * factor), table.shape[0] - 1))]  # unsigned: no wraparound code


class LambdaRank(LambdaWeightedLoss):
    """LightGBM's ``lambdarank`` through the plugin path: its trees, bit for bit (module docstring).

    Parameters are LightGBM's, with its names and defaults; bad values are refused as LightGBM
    refuses them (a ``ValueError`` naming the value): a truncation level below 1, a sigmoid that
    is not positive (here: outside [1e-10, 1e10]), a label that is not an integer index into
    ``label_gain``.
    """

    name = "lambdarank"
    summary = "LightGBM's lambdarank gradients, reproduced (on LightGBM: the built-in's trees)"
    params = {
        "sigmoid": Param(1.0, "real", "slope of the logistic (LightGBM's sigmoid)", low=SIGMOID_MIN,
                         high=SIGMOID_MAX),
        "lambdarank_truncation_level": Param(30, "int", "pairs with a document among this many first positions",
                                             low=1),
        "lambdarank_norm": Param(True, "bool", "divide each pair's |Delta NDCG| by 0.01 + |s_i - s_j| and scale "
                                 "each query by log2(1 + S) / S"),
        "label_gain": Param(None, "custom", "gain of each integer label (None: LightGBM's 2^i - 1, i < 31)",
                            convert=check_label_gain),
    }
    hessians = {"lightgbm": Hessian(
        "fitting", "LightGBM's sigmoid^2 |Delta NDCG| p (1 - p) summed over the document's pairs: the diagonal of "
        "the held-weights loss's Hessian, with p from LightGBM's sigmoid table", gradient="lambda",
        # the table's bins are 50 / sigmoid / 2^20 wide, so p is off by up to 1.2e-5: on the contract
        # checks' data the lambdas are then off by up to 1e-5 of the largest
        tolerance=1e-3)}
    hessian_floor = False
    float32_sums = True

    sigmoid: float
    lambdarank_truncation_level: int
    lambdarank_norm: bool
    label_gain: NDArray[np.float64] | None

    def pair_args(self) -> tuple[Any, ...]:
        return (float(self.sigmoid), *sigmoid_table(float(self.sigmoid)))

    @staticmethod
    def pair_weight(p, sigmoid, table, low, high, factor):  # type: ignore[no-untyped-def]
        return (p.gain_i - p.gain_j) * abs(p.discount_i - p.discount_j) * p.inv_max_dcg

    @staticmethod
    def pair_loss(d, sigmoid, table, low, high, factor):  # type: ignore[no-untyped-def]
        z = sigmoid * d
        return math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z))

    @staticmethod
    def pair_grad(d, sigmoid, table, low, high, factor):  # type: ignore[no-untyped-def]
        return -sigmoid * _lookup(d, table, low, high, factor)

    @staticmethod
    def pair_hess(d, sigmoid, table, low, high, factor):  # type: ignore[no-untyped-def]
        p = _lookup(d, table, low, high, factor)
        return sigmoid * sigmoid * (p * (1.0 - p))

    @staticmethod
    def pair_terms(d, w, sigmoid, table, low, high, factor):  # type: ignore[no-untyped-def]
        # LightGBM's own products: p_lambda *= -sigmoid_ * delta; p_hessian *= sigmoid_ * sigmoid_ * delta
        p = _lookup(d, table, low, high, factor)
        return p * (-sigmoid * w), (p * (1.0 - p)) * (sigmoid * sigmoid * w)

    def gains(self) -> NDArray[np.float64]:
        table = np.array(DEFAULT_LABEL_GAIN) if self.label_gain is None else self.label_gain
        try:
            return gains_of(self.labels, table)
        except ValueError as e:
            default = "" if self.label_gain is not None else ", by default 2^i - 1 for i < 31,"
            raise ValueError(f"{self.name}: {e} (LightGBM's label_gain{default} gives each integer label its "
                             "gain)") from None

    def truncation(self) -> int:
        return self.lambdarank_truncation_level

    def normalize(self) -> bool:
        return self.lambdarank_norm

    def inverse_max_dcgs(self, gains: NDArray[np.float64]) -> NDArray[np.float64]:
        """LightGBM's ``CalMaxDCGAtK``: the labels in decreasing order (which with a ``label_gain``
        that does not grow with the label is not the gains' order), their gains summed by position
        up to the truncation level."""
        out = np.zeros(self.n_queries)
        for q in range(self.n_queries):
            a, b = self.group_ptr[q], self.group_ptr[q + 1]
            top = np.argsort(-self.labels[a:b], kind="stable")[:self.lambdarank_truncation_level]
            out[q] = _inverse(gains[a + top], self._discounts)
        return out
