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

With ``position`` (LightGBM's Dataset ``position``; ``learning_rate`` from the training's parameters),
LightGBM's position-bias factors: each score plus its position's float32 factor before the lambdas, and
after each round's own call one Newton step of each factor (:func:`position_bias_step`;
docs/objectives/lambda.md, "Position bias: positions in the Dataset").

What the copy keeps apart from the pair base (:mod:`.pairwise`), and why: its sums. LightGBM adds
each pair's lambda and Hessian as float32 (``score_t``) into float32 sums, and scales each query's
float32 sums by ``log2(1 + S) / S`` (``lambdarank_norm``, with the score-gap factor ``0.01f + |s_i -
s_j|`` per pair); the pair base sums in float64 and has no such factors, and rounding its float64
sums to float32 afterwards does not give LightGBM's bits. So its loop (:func:`lightgbm_lambdas`)
is its own; the order it visits (:func:`~._pair_kernels.query_orders`, LightGBM's stable sort), the
label gains, discounts, ideal DCG and |Delta NDCG| are :mod:`boostplug._core.dcg`'s, as the base's.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._core import dispatch
from .._validation import INT32_MAX, show
from .._core.dcg import RANK_DOC_WORK, check_label_gain, delta_ndcg, gains_of, inverse_ideal_dcgs, position_discounts
from ._contract import Hessian, Param, Search
from ._loss import RunLoss
from ._pair_kernels import query_orders

__all__ = ["LambdaRank", "position_bias_step", "DEFAULT_LABEL_GAIN", "EVERY_PAIR", "SIGMOID_BINS", "SIGMOID_MIN",
           "SIGMOID_MAX", "sigmoid_table"]

#: LightGBM's default ``label_gain``: ``2^i - 1`` for labels 0..30.
DEFAULT_LABEL_GAIN = tuple(float((1 << i) - 1) for i in range(31))

#: Bins of LightGBM's sigmoid lookup table (``_sigmoid_bins = 1024 * 1024``).
SIGMOID_BINS = 1024 * 1024

#: Range of ``sigmoid``: far beyond any useful slope, and inside it the table's bounds
#: (``+-25 / sigmoid``) and the float32 sums of ``sigmoid^2 |Delta NDCG|`` stay finite.
SIGMOID_MIN, SIGMOID_MAX = 1e-10, 1e10
#: A truncation level at or beyond any query's length (LightGBM's data_size_t, a 32-bit int): every pair.
EVERY_PAIR = INT32_MAX


#: LightGBM's ``0.01f``: with ``lambdarank_norm`` a pair's weight is divided by this plus |s_i - s_j|.
NORM_OFFSET = float(np.float32(0.01))


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


@nb.njit(parallel=True, cache=True)
def lightgbm_lambdas(scores, at, order, frozen, labels, gains, group_ptr, inv_max_dcg, query_weights,  # type: ignore[no-untyped-def]
                     discounts, top_k, normalize, want_loss, sigmoid, table, low, high, factor, sums_g, sums_h,
                     grad, hess, loss, done):
    """LightGBM's ``LambdarankNDCG::GetGradientsForOneQuery`` for every query (module docstring):
    ``order`` holds each query's rows by the scores ``at`` the weights come from (``scores`` unless
    ``frozen``), descending, ties in input order; the sums run in float32 (``sums_g``, ``sums_h``:
    zeros), the document at position ``i``'s in registers across its ``j``; then each query's are
    scaled (``lambdarank_norm``) and weighted into ``grad`` and ``hess``. ``want_loss``: each query's
    reported loss into ``loss`` instead. ``done[q]`` is set when query ``q`` ends."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n = b - a
        w_q = query_weights[q]
        if n < 2 or w_q == 0.0:
            done[q] = True
            continue
        varied = at[order[a]] != at[order[b - 1]]
        inv = inv_max_dcg[q]
        total = 0.0
        acc = 0.0
        for i in range(min(n - 1, top_k)):
            ri = np.uint64(order[np.uint64(a + i)])  # unsigned: no wraparound of negative indices to emit
            ui = np.uint64(i)
            label_i = labels[ri]
            gain_i = gains[ri]
            discount_i = discounts[ui]
            s_i = scores[ri]
            at_i = at[ri]
            g_i = np.float32(0.0)
            h_i = np.float32(0.0)
            if not want_loss:
                g_i = sums_g[ri]
                h_i = sums_h[ri]
            for j in range(i + 1, n):
                rj = np.uint64(order[np.uint64(a + j)])
                uj = np.uint64(j)
                label_j = labels[rj]
                if label_i == label_j:
                    continue
                up = label_i > label_j
                if up:
                    d_at = at_i - at[rj]
                    w = delta_ndcg(gain_i, gains[rj], discount_i, discounts[uj], inv)
                    d = s_i - scores[rj]
                else:
                    d_at = at[rj] - at_i
                    w = delta_ndcg(gains[rj], gain_i, discounts[uj], discount_i, inv)
                    d = scores[rj] - s_i
                if normalize and varied:
                    w = w / (NORM_OFFSET + abs(d_at))
                p = _lookup(d, table, low, high, factor)
                # LightGBM's own products: p_lambda *= -sigmoid_ * delta; p_hessian *= sigmoid_ * sigmoid_ * delta
                g = p * (-sigmoid * w)
                if normalize:
                    total -= 2.0 * (_lookup(d_at, table, low, high, factor) * (-sigmoid * w) if frozen else g)
                if want_loss:
                    if w != 0.0:  # a pair of weight 0 adds nothing, even where its loss overflows
                        z = sigmoid * d
                        acc += w * (math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z)))
                    continue
                g32 = np.float32(g)
                h32 = np.float32((p * (1.0 - p)) * (sigmoid * sigmoid * w))
                if up:
                    sums_g[rj] -= g32
                    g_i += g32
                else:
                    sums_g[rj] += g32
                    g_i -= g32
                sums_h[rj] += h32
                h_i += h32
            if not want_loss:
                sums_g[ri] = g_i
                sums_h[ri] = h_i
        scale = math.log2(1.0 + total) / total if normalize and total > 0.0 else 1.0
        if want_loss:
            loss[q] = w_q * (scale * acc)
        else:
            for r in range(a, b):
                grad[r] = np.float64(np.float32(sums_g[r] * scale)) * w_q
                hess[r] = np.float64(np.float32(sums_h[r] * scale)) * w_q
        done[q] = True


@nb.njit(cache=True)
def position_bias_step(grad: np.ndarray, hess: np.ndarray, ids: np.ndarray, biases: np.ndarray, regularization: float,
                       learning_rate: float) -> None:
    """LightGBM's ``LambdarankNDCG::UpdatePositionBiasFactors`` (one thread): the float32 lambdas
    and Hessians summed by position id in row order (in float64, negated), an L2 term on each bias,
    then one Newton step each, ``bias += learning_rate * first / (|second| + 0.001)`` rounded to
    float32 (``biases``, float32, in place)."""
    n_ids = biases.shape[0]
    first = np.zeros(n_ids)
    second = np.zeros(n_ids)
    count = np.zeros(n_ids, dtype=np.int64)
    for i in range(grad.shape[0]):
        first[ids[i]] -= np.float64(np.float32(grad[i]))
        second[ids[i]] -= np.float64(np.float32(hess[i]))
        count[ids[i]] += 1
    for k in range(n_ids):
        f = first[k] - np.float64(biases[k]) * regularization * count[k]
        h = second[k] - regularization * count[k]
        biases[k] = np.float32(np.float64(biases[k]) + learning_rate * f / (abs(h) + 0.001))


def _positions(value: Any) -> NDArray[np.int64] | None:
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(np.floor(arr) == arr)):
        raise ValueError(f"position must be one integer per row (the Dataset's position), got {show(value)}")
    return arr.astype(np.int64)


class LambdaRank(RunLoss):
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
                         high=SIGMOID_MAX, search=Search(0.3, 3.0, log=True)),
        "lambdarank_truncation_level": Param(30, "int", "pairs with a document among this many first positions "
                                             f"({EVERY_PAIR}: every pair)", low=1, high=EVERY_PAIR,
                                             search=Search(choices=(10, 30, 100, EVERY_PAIR))),
        "lambdarank_norm": Param(True, "bool", "divide each pair's |Delta NDCG| by 0.01 + |s_i - s_j| and scale "
                                 "each query by log2(1 + S) / S"),
        "label_gain": Param(None, "custom", "gain of each integer label (None: LightGBM's 2^i - 1, i < 31)",
                            convert=check_label_gain),
        "position": Param(None, "custom", "each row's position (LightGBM's Dataset position; the adapter reads it "
                          "from the Dataset): with positions, LightGBM's position-bias factors are estimated each "
                          "round and added to the scores", convert=_positions, stand_in=np.array([0, 1])),
        "lambdarank_position_bias_regularization": Param(0.0, "real", "L2 regularisation of the position-bias "
                                                         "factors' Newton steps", low=0.0, needs="position"),
        "learning_rate": Param(0.1, "real", "LightGBM's learning_rate, the step of the position-bias factors' "
                               "updates (the adapter reads it from the training's parameters)", low=0.0),
    }
    hessians = {"lightgbm": Hessian(
        "fitting", "LightGBM's sigmoid^2 |Delta NDCG| p (1 - p) summed over the document's pairs: the diagonal of "
        "the held-weights loss's Hessian, with p from LightGBM's sigmoid table", gradient="lambda",
        # the table's bins are 50 / sigmoid / 2^20 wide, so p is off by up to 1.2e-5: on the contract
        # checks' data the lambdas are then off by up to 1e-5 of the largest
        tolerance=1e-3)}
    hessian_floor = False
    #: What LightGBM's ``lambdarank`` reads from the training's parameters, by LightGBM's names:
    #: taken from them when not given to the objective (the adapters: ``lgb.train``, ``lgb.cv``,
    #: ``LGBMRanker``); ``(parameter, convert)``: the step LightGBM's own ``learning_rate`` gives.
    framework_params = {"lightgbm": {
        **{k: k for k in ("lambdarank_truncation_level", "sigmoid", "lambdarank_norm", "label_gain",
                          "lambdarank_position_bias_regularization")},
        **{k: ("learning_rate", float) for k in ("learning_rate", "shrinkage_rate", "eta")}}}

    sigmoid: float
    lambdarank_truncation_level: int
    lambdarank_norm: bool
    label_gain: NDArray[np.float64] | None
    position: NDArray[np.int64] | None
    lambdarank_position_bias_regularization: float
    learning_rate: float

    def setup(self) -> None:
        if self.position is not None:
            if self.position.shape[0] != self.n_docs:
                raise ValueError(f"{self.name}: position has {self.position.shape[0]} values for a data set of "
                                 f"{self.n_docs} documents (one per row)")
            # LightGBM's position ids: the distinct positions in order of first appearance
            values, first, inverse = np.unique(self.position, return_index=True, return_inverse=True)
            self._position_ids = np.argsort(np.argsort(first))[inverse]
            #: the position-bias factors the latest round used, and the next round's (float32, as LightGBM's)
            self._biases_used = np.zeros(values.shape[0], dtype=np.float32)
            self._biases_next = self._biases_used.copy()
        table = np.array(DEFAULT_LABEL_GAIN) if self.label_gain is None else self.label_gain
        try:
            self._gains = gains_of(self.labels, table)
        except ValueError as e:
            default = "" if self.label_gain is not None else ", by default 2^i - 1 for i < 31,"
            raise ValueError(f"{self.name}: {e} (LightGBM's label_gain{default} gives each integer label its "
                             "gain)") from None
        sizes = np.diff(self.group_ptr)
        self._discounts = position_discounts(self.group_ptr)
        top_k = self.lambdarank_truncation_level  # LightGBM's CalMaxDCGAtK: the gains in the labels' order
        self._inv_max_dcg = inverse_ideal_dcgs(self._gains, self.group_ptr, self._discounts, top_k, self.labels)
        self._work = int(np.sum(sizes * np.minimum(sizes, top_k)))

    def position_biases(self) -> NDArray[np.float32]:
        """The position-bias factors for the next round, by position id (the distinct positions in
        order of first appearance, as LightGBM numbers them); ``ValueError`` without positions."""
        if self.position is None:
            raise ValueError(f"{self.name}: position-bias factors are estimated only with positions")
        return self._biases_next.copy()

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:
        at = self.weights_from(scores)
        estimate = False
        if self.position is not None:  # LightGBM's score_adjusted: each score plus its position's (float32) factor
            estimate = not want_loss and not self.weights_held  # a round's own call: the factors move on
            if estimate:
                self._biases_used = self._biases_next
            shift = self._biases_used[self._position_ids].astype(np.float64)
            scores = scores + shift
            at = at + shift if self.weights_held else scores
        n = 0 if want_loss else self.n_docs
        grad, hess, loss = np.zeros(n), np.zeros(n), np.zeros(self.n_queries if want_loss else 0)
        done = np.zeros(self.n_queries, dtype=np.bool_)
        order = np.empty(self.n_docs, dtype=np.int64)
        dispatch.kernel_for(query_orders, self.n_docs * RANK_DOC_WORK)(at, self.group_ptr, order)
        run = dispatch.kernel_for(lightgbm_lambdas, self._work)
        run(scores, at, order, self.weights_held, self.labels, self._gains, self.group_ptr, self._inv_max_dcg,
            self.query_weights, self._discounts, self.lambdarank_truncation_level, self.lambdarank_norm, want_loss,
            float(self.sigmoid), *sigmoid_table(float(self.sigmoid)), np.zeros(n, np.float32), np.zeros(n, np.float32),
            grad, hess, loss, done)
        if estimate:
            self._biases_next = self._biases_used.copy()
            position_bias_step(grad, hess, self._position_ids, self._biases_next,
                               float(self.lambdarank_position_bias_regularization), float(self.learning_rate))
        return grad, hess, loss
