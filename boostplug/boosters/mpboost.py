"""Stump MPBoost: GentleBoost over preference pairs with directed distances
(Zhu et al., "MPBoost: magnitude-preserving boosting for ranking", CIKM 2009).

Definition, Theorem 1, the explicit pairs' distances, the numerics of ``N`` and ``D`` and the
pair-free path (``pairwise="levels"``): docs/boosters.md, "MPBoost with stumps". The paper's ``I``
holds both orders of every pair with ``r_i != r_j``; both give the same term of Eq. 10, 12 and 13
(``dist`` is antisymmetric), so one order per pair, uniformly weighted, gives the same ``a``,
``Z_t`` and normalised mis-ordering. A stump with ``D <= max(TIE_RTOL * c / max d^2, SPLIT_RTOL)``
(``c = sum w d^2``) is skipped; ties go to the lowest feature, then threshold.

Example:
    >>> from boostplug.boosters import MPBoost
    >>> model = MPBoost(ddf="logdd", lam=3.0, n_rounds=100).fit(X, y, qid=qid)
    >>> scores = model.predict(Xt)
    >>> scores.shape == yt.shape
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from ..objectives.ddf import ddf_values
from .._validation import check_choice
from ._estimator import RankingBooster, Round
from ._ddf_range import check_stump_ddf, pair_gaps
from ._fit_data import FitData
from ._level_sums import DirectedLevelPairs, codes_in_order, query_code_order
from ._pairwise_choice import choose_pairwise, fixed_pairwise
from ._stump_sums import best_fit_stump, pair_fit_sums
from .stumps import THRESHOLD_MODES, TIE_RTOL, StumpCandidates

__all__ = ["MPBoost", "SPLIT_RTOL"]

#: Peak bytes fit allocates per preference pair (the pair list, d, w and the round's
#: temporaries): measured ~73 unweighted, plus two arrays when weighted.
BYTES_PER_PAIR = 96

#: Stumps whose split weight ``D`` (the pair weights sum to 1) is at most this are skipped:
#: ``N`` and ``D`` carry absolute rounding errors of about ``1e-16`` (times up to the number
#: of bins), so below this ``a = N / D`` would lose its precision.
SPLIT_RTOL = 1e-12

@dataclass
class _State:
    pairs: NDArray[np.int64]      # (P, 2), preferred row first
    d: NDArray[np.float64]        # (P,) dist(r_i, r_j) > 0
    cands: StumpCandidates
    w: NDArray[np.float64]        # (P,) current pair weights, sum 1
    w1: NDArray[np.float64] | None  # (P,) w^(1) when fit was given query weights (else uniform)
    F: NDArray[np.float64]        # (n,) training scores
    log_bound: float              # sum_t log Z_t
    d2_max: float                 # max d^2
    n_pairs: int = 0
    lv: DirectedLevelPairs | None = None   # pair-free mode: pairs, d, w, w1 are empty/unused
    order: NDArray[np.integer] | None = None  # (n, F) rows by query, then code, per feature
    sorted_codes: NDArray[np.int32] | None = None  # (n, F) their codes, in that order
    R: NDArray[np.float64] | None = None    # (n, L + 2) level factors of F and per-document terms
    tot: NDArray[np.float64] | None = None  # (Q, L, L) the factors' per-query, per-level totals
    W: float = 1.0                # sum of the unnormalised pair weights at F
    C: float = 1.0                # the same with d^2
    #: pairwise="auto": (pairs, d, w1) of the pair path, taken when the level factors overflow
    to_pairs: Callable[[], tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64] | None]] | None = None


@dataclass(eq=False, repr=False)
class MPBoost(RankingBooster):
    """Stump MPBoost (Zhu et al. 2009, Algorithm 1 with the appendix's decision stumps).

    Args:
        ddf: directed distance function, ``"binary"``, ``"ldd"``, ``"logdd"`` or ``"logitdd"``
            (Eq. 2, 6-8).
        alpha, lam, beta: the parameter of ``ldd``, ``logdd``, ``logitdd`` (paper's Fig. 2:
            0.2, 3, 0.5); the others are ignored.
        n_rounds: boosting rounds ``T``.
        thresholds, max_thresholds, n_thresholds: stump candidates
            (see :mod:`boostplug.boosters.stumps`).
        pairwise: ``"levels"`` (pair-free, every sum over the critical pairs from per-level sums),
            ``"pairs"`` (the pairs listed, guarded by the pair memory limit; always with explicit
            pairs) or ``"auto"`` (default: the cheaper of the two); the same stumps, weights and
            history up to rounding (docs/boosters.md).
        eval_metric, early_stopping_rounds, verbose, random_state: see
            :class:`~boostplug.boosters._estimator.RankingBooster`.

    Fitted attributes: ``rankers_``, ``weights_`` (the stumps' ``a``), ``history_``,
    ``stop_reason_``, ``best_iteration_``, ``n_features_in_``.
    """

    ddf: str = "logdd"
    alpha: float = 0.2
    lam: float = 3.0
    beta: float = 0.5
    n_rounds: int = 100
    thresholds: str = "sample"
    max_thresholds: int = 255
    n_thresholds: int = 10
    pairwise: str = "auto"

    # ---- set-up -----------------------------------------------------------------
    def _choose_pairwise(self, data: FitData) -> str:
        """The path of this fit, ``"levels"`` or ``"pairs"``: ``pairwise``, or for ``"auto"`` the rule of
        :func:`~boostplug.boosters._pairwise_choice.choose_pairwise`."""
        return fixed_pairwise(self.pairwise, data) or choose_pairwise("mpboost", data, self._check_n_rounds(),
                                                                      BYTES_PER_PAIR)

    def _fit_init(self, data: FitData) -> _State:
        ddf = check_stump_ddf(self.ddf, self.alpha, self.lam, self.beta, data)  # objective's ranges + booster's |dist|
        check_choice("thresholds", self.thresholds, THRESHOLD_MODES)
        if self._choose_pairwise(data) == "levels":
            return self._fit_init_levels(data, ddf)
        pairs, d, w1 = self._pairs_of(data, ddf)
        cands = data.stump_candidates(self)
        n_pairs = pairs.shape[0]
        return _State(
            pairs=pairs, d=d, cands=cands,
            w=np.full(n_pairs, 1.0 / max(n_pairs, 1)) if w1 is None else w1.copy(), w1=w1,
            F=np.zeros(data.X.shape[0]), log_bound=0.0,
            d2_max=float(np.max(d * d)) if n_pairs else 1.0, n_pairs=n_pairs,
        )

    @staticmethod
    def _pairs_of(data: FitData, ddf: tuple[str, float]
                  ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64] | None]:
        """The pair path's pairs, their ``d_ij = dist(r_i, r_j)`` (Eq. 2, 6-8; ``ddf``: the DDF's name and
        parameter; the grade gaps of :func:`._ddf_range.pair_gaps`) and ``w^(1)`` (None: uniform)."""
        pairs = data.preference_pairs(BYTES_PER_PAIR, who="MPBoost")
        pw = data.pair_weights(pairs)
        return pairs, ddf_values(pair_gaps(data, pairs), *ddf), (None if pw is None else pw / pw.sum())

    def _fit_init_levels(self, data: FitData, ddf: tuple[str, float]) -> _State:
        """Pair-free state: label levels per query and their factors (``O(n L)``)."""
        name, param = ddf
        lv = DirectedLevelPairs(data.y, data.group_ptr, data.query_weights, lambda dl: ddf_values(dl, name, param))
        cands = data.stump_candidates(self)
        F = np.zeros(data.X.shape[0])
        R, tot = lv.terms(F)
        W, C = lv.weight_sums(tot)
        order = query_code_order(cands.codes, lv.query)
        none = np.zeros(0)
        return _State(
            pairs=np.zeros((0, 2), dtype=np.int64), d=none, cands=cands, w=none, w1=None, F=F, log_bound=0.0,
            d2_max=float(np.max(lv.dd ** 2)) if lv.n_pairs else 1.0, n_pairs=lv.n_pairs, lv=lv,
            order=order, sorted_codes=codes_in_order(cands.codes, order), R=R, tot=tot, W=W, C=C,
            to_pairs=(lambda: self._pairs_of(data, ddf)) if self.pairwise == "auto" else None,
        )

    # ---- one round ----------------------------------------------------------------
    def _stump_sums(self, s: _State) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """``(N, D, W)`` of every stump: ``N / W = sum_A1 w d - sum_B2 w d``, ``D / W = sum_A1 w + sum_B2 w``,
        both summed over the pairs the stump splits (one pass over the pairs, ``W = 1``, or over the
        documents in code order per level pair when pair-free, ``W`` the unnormalised weights' sum)."""
        if s.lv is not None:
            N, D = s.lv.fit_sums(s.R, s.sorted_codes, s.order, s.cands.width)
            return N, D, s.W
        N, D = pair_fit_sums(s.cands.codes, s.pairs, s.w, s.w * s.d, s.cands.n_thr)
        return N, D, 1.0

    def _fit_round(self, s: _State, t: int) -> Round | None:
        if s.n_pairs == 0:
            self._stop_reason = "no preference pairs in the training data"
            return None
        N, D, scale = self._stump_sums(s)
        c = s.C / s.W if s.lv is not None else float(s.w @ (s.d * s.d))
        w_sum = 1.0 if s.lv is not None else float(s.w.sum())
        # a stump splitting less weight than this cannot reach the stopping threshold, or its
        # N and D are within rounding of their size (docs/boosters.md); J_wse = sum w d^2 - N^2 / D
        floor = max(TIE_RTOL * c / s.d2_max, SPLIT_RTOL * w_sum)
        gains = np.empty(N.shape)
        idx = best_fit_stump(N, D, s.cands.n_thr, scale, floor, TIE_RTOL * c, gains)
        if idx < 0:
            raise FloatingPointError("MPBoost: a stump's fit N^2 / D is NaN (the pair weights left the float range)")
        k, j = divmod(idx, N.shape[1])
        gain = float(gains[k, j])
        if gain <= TIE_RTOL * c:
            self._stop_reason = "no stump reduces the weighted squared error (Eq. 12)"
            return None
        a = float((N[k, j] / scale) / (D[k, j] / scale))
        f = a * s.cands.vector(int(k), int(j))
        z = self._reweight(s, f)
        if s.lv is not None:
            misorder = s.lv.rates(s.F, f != 0.0)[0]   # R1: tied or reversed pairs under w^(1)
        else:
            wrong = s.F[s.pairs[:, 0]] <= s.F[s.pairs[:, 1]]
            misorder = float(np.mean(wrong)) if s.w1 is None else float(s.w1[wrong].sum())
        rec = {"a": a, "Z": z, "bound": math.exp(s.log_bound), "misorder": misorder,
               "wse": c - gain}
        return Round(s.cands.stump(int(k), int(j)), a, rec)

    @staticmethod
    def _reweight(s: _State, f: NDArray[np.float64]) -> float:
        """Eq. 13: ``w <- w exp(-d (f_i - f_j)) / Z_t``; adds ``f`` to ``F``; returns ``Z_t``
        (pair-free: ``Z_t = W(F + f) / W(F)``, the weights being recomputed from ``F``)."""
        if s.lv is not None:
            s.F += f
            s.R, s.tot = s.lv.terms(s.F, out=s.R)
            w_new, s.C = s.lv.weight_sums(s.tot)
            if not (math.isfinite(w_new) and w_new > 0.0 and math.isfinite(s.C)):
                # exp(d * score range) left the float range: only relative (pair) weights stay finite
                if s.to_pairs is not None:
                    return MPBoost._leave_levels(s, f)
                raise FloatingPointError("MPBoost(pairwise='levels'): the pair weights left the float range "
                                         "(scores of a query span more than ~700 / max d); use pairwise='pairs' "
                                         "(the same model, with memory and time per pair)")
            z = w_new / s.W
            s.W = w_new
            s.log_bound += math.log(z)
            return z
        u = s.w * np.exp(-s.d * (f[s.pairs[:, 0]] - f[s.pairs[:, 1]]))
        z = float(u.sum())
        s.w = u / z
        s.F += f
        s.log_bound += math.log(z)
        return z

    @staticmethod
    def _leave_levels(s: _State, f: NDArray[np.float64]) -> float:
        """``pairwise="auto"`` after the level factors overflowed: continue on the pair list, its
        weights ``w^(1) exp(-d (F_i - F_j))`` normalised in log space (the same weights the pair
        path would hold now), ``Z_t`` as their sum's ratio; ``s.F`` already includes ``f``."""
        pairs, d, w1 = s.to_pairs()
        base = 0.0 if w1 is None else np.log(w1)

        def log_weights(F: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
            e = base - d * (F[pairs[:, 0]] - F[pairs[:, 1]])
            top = float(e.max())
            return e, top + math.log(float(np.exp(e - top).sum()))

        _, lse_old = log_weights(s.F - f)
        e, lse_new = log_weights(s.F)
        z = math.exp(lse_new - lse_old)
        s.pairs, s.d, s.w1, s.w = pairs, d, w1, np.exp(e - lse_new)
        s.lv = s.to_pairs = None
        s.log_bound += lse_new - lse_old
        return z

