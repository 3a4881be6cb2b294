"""Stump NDCG_Boost (Valizadegan, Jin, Zhang, Mao, "Learning to rank by optimizing
NDCG measure", NIPS 2009, Algorithm 1).

The definition (``M``, ``w_i``, ``eta``, the step of Eq. 15, with ``F = sigma * score``; a query of
weight ``w`` counts as ``w`` copies of it) and why a weighted stump replaces the paper's sampling by
``|w_i|``: docs/boosters.md, "NDCG_Boost with stumps". ``w`` and ``M`` come from the NDCG_Boost
objective (``boostplug.objectives.get("ndcg_boost").prepare(...)``: ``descent_weights`` and ``loss``).

Both orientations of a stump: the paper's weak learner is a binary *classifier*
(a decision stump), which labels either side of its threshold 1. So the
candidates are ``f = [x_k > theta]`` and its complement ``f = [x_k <= theta]``
(NaN counts as below every value, so the complement is 1 on missing values).
Since ``sum_i w_i = 0`` in every query, the complement's ``eta`` is minus the
stump's: the choice is in effect ``argmax |eta|`` (over the stumps with a
finite step, below). The complement is stored in the
model as the stump ``[x_k > theta]`` with weight ``-alpha / sigma``: the
constant ``alpha / sigma`` it drops shifts every score alike and changes no
ranking and no ``M`` (``history_`` records ``complement: true``).

Model scale: the model's scores are ``F / sigma``, so a round adds
``(alpha / sigma) * f`` and the stored weight is ``alpha / sigma``
(``history_`` keeps the paper's ``alpha``).

Infinite steps: Eq. 15's denominator is 0 exactly when a stump splits every query it touches
perfectly (no document with a positive gain left out while another is picked); the paper gives no
rule for it. That depends on the data only (``gamma_ij > 0``), so such candidates are found once, up
front, and left out. If the best remaining stump has ``eta <= 0`` (or the denominator underflows),
nothing improves ``M``: the fit stops and records why. Ties between stumps (equal ``eta`` up to
``1e-10 sum |w|``) go to the lowest feature, then the lowest threshold, then the
stump before its complement. ``M`` decreases every round: Eq. 15 minimises the
upper bound of Proposition 2 (Eq. 13), which equals ``M`` at ``alpha = 0``
(``eta = numerator - denominator`` of Eq. 15, so ``eta > 0`` gives ``alpha > 0``;
a round whose rounding breaks that stops the fit, with the reason).

The two sums of Eq. 15 visit each pair across the chosen stump's split once, and the
next round's weights (Eq. 16) come with ``M`` from one pass over each query's pairs: ``O(n_q^2)``
per query (numba kernels, parallel over queries); the rest costs ``O(n * F)`` per round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import dispatch
from .._validation import check_choice, check_real
from ..objectives._ndcg_boost_kernels import cross_gamma_sums
from ._estimator import RankingBooster, Round
from ._fit_data import FitData
from ._stump_sums import doc_sums_above
from .stumps import THRESHOLD_MODES, TIE_RTOL, StumpCandidates, argmax_first

__all__ = ["NDCGBoost", "alpha_sums"]

def alpha_sums(F: NDArray[np.float64], f: NDArray[np.float64], c: NDArray[np.float64],
               group_ptr: NDArray[np.int64]) -> tuple[float, float]:
    """The numerator and denominator sums of Eq. 15.

    ``F``: ``sigma * scores``; ``f``: the weak classifier's 0/1 outputs;
    ``c``: ``G_i / Z_k`` per document (0 in queries with ``Z_k = 0``).
    Returns ``(sum G_i/Z theta_ij [f_i > f_j], sum G_i/Z theta_ij [f_i < f_j])``.
    """
    gp = np.ascontiguousarray(group_ptr, dtype=np.int64)
    ff = np.ascontiguousarray(f, dtype=np.float64)
    nq = gp.shape[0] - 1
    # work: the pairs across the split, at most (n_q / 2)^2 per query
    ones = np.add.reduceat(ff, gp[:-1]) if ff.shape[0] else np.zeros(nq)
    ones = np.where(np.diff(gp) > 0, ones, 0.0)
    run = dispatch.kernel_for(cross_gamma_sums, int((ones * (np.diff(gp) - ones)).sum()))
    num = np.zeros(nq)
    den = np.zeros(nq)
    run(np.ascontiguousarray(F, dtype=np.float64), ff, np.ascontiguousarray(c, dtype=np.float64), gp, num, den)
    return float(num.sum()), float(den.sum())


def finite_step_stumps(codes: NDArray[np.int32], positive: NDArray[np.bool_], group_ptr: NDArray[np.int64],
                       width: int) -> NDArray[np.bool_]:
    """``(F, width, 2)`` mask: Eq. 15's denominator is > 0 for the stump ``[code > j]`` (``[..., 0]``)
    and for its complement ``[code <= j]`` (``[..., 1]``).

    ``positive``: documents with ``G_i / Z_k > 0``. The stump's denominator is > 0 iff some query has a
    positive document with ``code <= j`` (left out) and any document with ``code > j`` (picked), i.e.
    ``min code of its positive documents <= j < max code of its documents``; the complement's iff
    ``min code <= j < max code of its positive documents``. Difference arrays over ``j``: ``O(n * F)``.
    """
    sizes = np.diff(group_ptr)
    starts = group_ptr[:-1][sizes > 0]
    big = np.iinfo(np.int32).max
    lo_all = np.minimum.reduceat(codes, starts, axis=0)
    hi_all = np.maximum.reduceat(codes, starts, axis=0)
    lo_pos = np.minimum.reduceat(np.where(positive[:, None], codes, big), starts, axis=0)
    hi_pos = np.maximum.reduceat(np.where(positive[:, None], codes, -1), starts, axis=0)
    out = np.zeros((codes.shape[1], width, 2), dtype=bool)
    for o, (lo, hi) in enumerate(((lo_pos, hi_all), (lo_all, hi_pos))):
        diff = np.zeros((codes.shape[1], width + 2))
        q, k = np.nonzero(lo < hi)  # the query contributes to the denominator for lo <= j < hi
        np.add.at(diff, (k, lo[q, k]), 1.0)
        np.add.at(diff, (k, hi[q, k]), -1.0)
        out[:, :, o] = np.cumsum(diff, axis=1)[:, :width] > 0.5
    return out


def _prepare_objective(labels: NDArray[np.float64], group_ptr: NDArray[np.int64], sigma: float,
                       label_gain: ArrayLike | None, weights: NDArray[np.float64] | None = None) -> Any:
    """The NDCG_Boost objective bound to the training labels (``descent_weights``, ``loss``, ``ideal_dcg``),
    with per-query ``weights`` ``W_k`` (``None``: 1)."""
    from .. import objectives

    return objectives.get("ndcg_boost").prepare(labels, group_ptr, weights=weights, sigma=sigma,
                                                label_gain=label_gain)


@dataclass
class _State:
    prep: Any                     # the prepared NDCG_Boost objective
    c: NDArray[np.float64]        # (n,) G_i / Z_k
    group_ptr: NDArray[np.int64]
    cands: StumpCandidates
    allowed: NDArray[np.bool_]   # (F, width, 2) existing stumps / complements with a finite Eq. 15 step
    sigma: float
    scores: NDArray[np.float64]   # (n,) model scores = F / sigma (up to a constant)
    w: NDArray[np.float64]        # (n,) descent weights (Eq. 16) at scores


@dataclass(eq=False, repr=False)
class NDCGBoost(RankingBooster):
    """Stump NDCG_Boost (Valizadegan et al. 2009, Algorithm 1), weighted stumps instead of sampling.

    Args:
        n_rounds: boosting rounds (the paper: 100, no validation set).
        sigma: ``F = sigma * score``; 2.0 is the paper's ``F_i = 2 F(d_i)`` (Eq. 8).
        label_gain: gains per integer label (``None``: ``2^r - 1``).
        thresholds, max_thresholds, n_thresholds: stump candidates
            (see :mod:`boostplug.boosters.stumps`).
        eval_metric, early_stopping_rounds, verbose, random_state: see
            :class:`~boostplug.boosters._estimator.RankingBooster`.

    ``history_`` per round: ``alpha`` (Eq. 15, in ``F`` units), ``eta`` (Eq. 17),
    ``M`` (Eq. 11 as a sum over queries, after the round), ``complement``.
    """

    n_rounds: int = 100
    sigma: float = 2.0
    label_gain: list[float] | None = None
    thresholds: str = "sample"
    max_thresholds: int = 255
    n_thresholds: int = 10

    def _fit_init(self, data: FitData) -> _State:
        sigma = check_real("sigma", self.sigma, 0.0, math.inf)
        check_choice("thresholds", self.thresholds, THRESHOLD_MODES)
        if data.pairs is not None:
            raise ValueError("NDCGBoost is listwise and learns from graded labels; it takes no explicit pairs")
        qw = data.query_weights
        prep = _prepare_objective(data.y, data.group_ptr, sigma, self.label_gain, qw)
        z = np.asarray(prep.ideal_dcg(), dtype=np.float64)
        inv_z = np.divide(1.0, z, out=np.zeros_like(z), where=z > 0)
        if qw is not None:
            inv_z = inv_z * qw  # c = W_k G_i / Z_k: Eq. 15's sums weighted like M
        c = prep.gains * np.repeat(inv_z, np.diff(data.group_ptr))
        cands = data.stump_candidates(self)
        allowed = cands.exists[:, :, None] & finite_step_stumps(cands.codes, c > 0, data.group_ptr, cands.width)
        scores = np.zeros(data.X.shape[0])
        return _State(prep, c, data.group_ptr, cands, allowed, sigma, scores, prep.descent_weights(scores))

    def _choose(self, s: _State, w: NDArray[np.float64]) -> tuple[int, int, bool, float]:
        """The stump (feature, j, complement?) maximising Eq. 17 and its ``eta``."""
        eta = doc_sums_above(s.cands.codes, w, s.cands.n_thr)  # eta of [x_k > t_j]
        both = np.stack([eta, float(w.sum()) - eta], axis=-1)  # (F, width, 2): stump, complement
        both = np.where(s.allowed, both, -np.inf)
        idx = argmax_first(both.ravel(), TIE_RTOL * float(np.abs(w).sum()))
        k, j, o = np.unravel_index(idx, both.shape)
        return int(k), int(j), bool(o), float(both[k, j, o])

    def _fit_round(self, s: _State, t: int) -> Round | None:
        k, j, complement, eta = self._choose(s, s.w)
        if not eta > 0:
            self._stop_reason = "no stump with a finite step (Eq. 15) has eta > 0 (Eq. 17): M cannot decrease"
            return None
        h = s.cands.vector(k, j)
        f = 1.0 - h if complement else h
        num, den = alpha_sums(s.sigma * s.scores, f, s.c, s.group_ptr)
        if not den > 0:
            self._stop_reason = (f"alpha undefined at round {t + 1}: the denominator of Eq. 15 underflowed to "
                                 f"{den!r} (numerator {num!r}); the scores are too far apart")
            return None
        if not num > den:
            self._stop_reason = (f"round {t + 1}: eta = {eta!r} > 0 but the sums of Eq. 15 give alpha <= 0 "
                                 f"({num!r} / {den!r}): rounding at a vanishing eta")
            return None
        alpha = 0.5 * math.log(num / den)
        weight = (-alpha if complement else alpha) / s.sigma
        s.scores = s.scores + weight * h
        s.w, m = s.prep.descent_weights_and_loss(s.scores)   # the next round's weights, with this one's M
        rec = {"alpha": alpha, "eta": eta, "M": m, "complement": complement}
        return Round(s.cands.stump(k, j), weight, rec)
