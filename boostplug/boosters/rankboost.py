"""RankBoost with binary weak rankers: Rb-d, Rb-c and RankBoost+ (Connamacher, Pancha, Liu, Ray,
"Rankboost+: an improvement to Rankboost", MLJ 2020), on decision stumps. What each variant
chooses and records, the pair-free path (``pairwise="levels"``) and the cost of a round:
docs/boosters.md, "RankBoost". A fit keeps one state per variant and path (:class:`_RbPairs`,
:class:`_RbLevels`, :class:`_PlusPairs`, :class:`_PlusLevels`).

Example:
    >>> from boostplug.boosters import RankBoost
    >>> model = RankBoost(variant="rankboost+", n_rounds=50).fit(X, y, qid=qid)
    >>> scores = model.predict(Xt)
    >>> scores.shape == yt.shape
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.special import expit

from .._validation import check_choice, check_flag
from ._estimator import RankingBooster, Round
from ._fit_data import FitData
from ._group_e2 import GroupE2
from ._group_pairs import GroupPairs
from ._level_sums import PAIRWISE, LevelPairs, LevelSpan, split_any
from ._pairwise_choice import choose_pairwise
from ._rankboost_kernels import (DEPENDENT_RTOL, PairSpan, eps_sums, ln_cosh, log_sum_exp, select_independent,
                                 stump_outcomes)
from ._pair_mins import PairMinCodes
from ._stump_sums import doc_potentials, doc_sums_above, pair_split_sums
from .stumps import THRESHOLD_MODES, StumpCandidates, argmax_scan

__all__ = ["RankBoost", "VARIANTS"]

VARIANTS = ("rb-d", "rb-c", "rankboost+")

#: Two candidates whose criteria differ by at most this much (D_t sums to 1) are tied.
TIE_TOL = 1e-12

#: Peak bytes fit allocates per preference pair: the pair list, D_t, ell, the pair weights, stump
#: outcomes and margins, and two more arrays when weighted. RankBoost+ also keeps its pairs' lower
#: codes, a fixed amount (at most ``_pair_mins.LOWER_CODES_BUDGET_BYTES``).
BYTES_PER_PAIR = 112

#: Memory budget of the one-time pruning's temporary basis (bytes).
PRUNE_BUDGET_BYTES = 256 * 2**20


#: The levels path lists no pair (what Algorithm 2's pruning is given there).
_NO_PAIRS = np.zeros((0, 2), dtype=np.int64)


@dataclass
class _State:
    """What every variant keeps on either path."""

    cands: StumpCandidates
    valid: NDArray[np.bool_]         # (F, width) existing stumps that split at least one pair
    F: NDArray[np.float64]           # (n,) ensemble scores on the training documents
    span: PairSpan | None            # S_t and eta (None: Rb-d/Rb-c without the E2 record)
    n_pairs: int
    log_prod_z: float
    bound_log: float                 # log of the theorem bound


@dataclass
class _PairState(_State):
    """The pair list: ``D_t`` per pair."""

    pairs: NDArray[np.int64]         # (P, 2), preferred row first
    w: NDArray[np.float64]           # (P,) D_t
    w1: NDArray[np.float64] | None   # (P,) D_1 when fit was given query weights (else uniform)
    ell: NDArray[np.float64]         # (P,) sum_s ln omega*_2(i, f_s, eta_s): E2 = mean exp(ell) (empty without S_t)


@dataclass
class _LevelState(_State):
    """Pair-free: ``D_t`` from the scores and the label levels."""

    lv: LevelPairs


@dataclass
class _Search:
    """RankBoost+'s candidates: Algorithm 2's set ``R`` and what its one pruning needs."""

    nsplit: NDArray[np.float64]      # (F, width) pairs each stump splits (|D h|^2); 0 for non-stumps
    alive: NDArray[np.bool_]         # (F, width) Algorithm 2's candidate set R
    pruned: bool
    rng: np.random.Generator


@dataclass
class _RbPairs(_PairState):
    """Rb-d/Rb-c on the pair list."""


@dataclass
class _RbLevels(_LevelState):
    """Rb-d/Rb-c pair-free."""

    e2: GroupE2 | None               # the E2 record, kept round by round (None without record_e2)


@dataclass
class _PlusPairs(_PairState):
    """RankBoost+ on the pair list."""

    search: _Search
    lower: PairMinCodes              # the pairs' lower codes


@dataclass
class _PlusLevels(_LevelState):
    """RankBoost+ pair-free."""

    search: _Search
    gp: GroupPairs | None            # D_t over pairs of signature groups (None: no pair, no round runs)


class RankBoost(RankingBooster):
    """RankBoost Rb-d, Rb-c or RankBoost+ with decision stumps (Connamacher et al. 2020).

    Args:
        variant: ``"rb-d"`` (Eq. 13-14), ``"rb-c"`` (Eq. 17-19) or ``"rankboost+"`` (Eq. 22-34).
        n_rounds: boosting rounds ``T``.
        thresholds, max_thresholds, n_thresholds: stump candidates (see
            :mod:`boostplug.boosters.stumps`; ``"sample"`` with 255 is the paper's set-up,
            ``"ranklib"`` with ``variant="rb-c"`` is RankLib's RankBoost).
        efficient: RankBoost+ only: the paper's Algorithm 2 (``True``) or the exact variant
            with directional derivatives along the span coefficients (``False``).
        complements: Rb-d/Rb-c: weak rankers are the stumps ``[x > theta]`` and their complements
            ``[x <= theta]`` (``True``: leaves labelled by weighted majority, as in the paper's
            experiments) or the stumps only (``False``: RankLib). ``None`` (default): ``True``
            except with ``thresholds="ranklib"``. RankBoost+ takes signed weights, so a step on
            a complement is a negative step on its stump and this changes nothing there.
        pairwise: ``"auto"`` (default): ``"pairs"`` with explicit ``pairs=``; ``"levels"`` when the pair
            list would pass the pair memory limit (``boostplug.pairs.pair_memory_limit()``); otherwise
            the path with the smaller estimated time per round
            (:func:`~boostplug.boosters._pairwise_choice.choose_pairwise`: RankBoost+ on queries of up
            to a few thousand documents trains faster on the pair list, Rb-d/Rb-c on the levels when
            queries hold a hundred documents or more).
            ``"levels"``: pair-free, every sum over the critical
            pairs from per-document sums per label level (Rb-d/Rb-c:
            :mod:`boostplug.boosters._level_sums`, memory ``O(n L)``) or over pairs of signature
            groups (RankBoost+: :mod:`boostplug.boosters._group_pairs`, memory ``O(sum_q G_q^2)``,
            ``G_q <= min(n_q, 2^|S_t|)``); the same rankers, weights and history as ``"pairs"``
            up to rounding (tested to ``1e-9``). ``"pairs"``: the critical pairs are listed
            (memory ``O(P)``, guarded by ``boostplug.pairs.PAIR_MEMORY_LIMIT``). Explicit pairs
            always use ``"pairs"``.
        record_e2: Rb-d/Rb-c: keep the ``E2`` record of the paper's Section 4 (``history_``'s
            ``E2``, ``step`` and ``span_size``, and ``span_size_``), which needs the span test of
            every chosen stump and a pass over the pairs of signature groups per round: most of a
            round's time, for a record nothing in training reads. ``False`` (default): those
            entries are absent and ``span_size_`` is ``None``; the rankers, weights and every other
            entry are bit for bit the same. RankBoost+ keeps it always (``E2`` is its loss).
        eval_metric, early_stopping_rounds, verbose, random_state: see
            :class:`~boostplug.boosters._estimator.RankingBooster` (``random_state`` seeds the
            threshold subsample and the pruning's permutation).

    Fitted attributes: ``rankers_``, ``weights_``, ``history_``, ``stop_reason_``,
    ``best_iteration_``, ``n_features_in_``, ``undefined_round_`` (Rb-d: the stump with
    ``eps- = 0`` that stopped training, else ``None``), ``span_size_`` (``|S_t|``; ``None`` for
    Rb-d/Rb-c without ``record_e2``),
    ``pruned_round_`` (efficient RankBoost+: the round whose dependent choice pruned ``R``).
    """

    _fitted_extras = ("undefined_round_", "span_size_", "pruned_round_")

    def __init__(
        self,
        variant: str = "rb-c",
        n_rounds: int = 100,
        thresholds: str = "sample",
        max_thresholds: int = 255,
        n_thresholds: int = 10,
        efficient: bool = True,
        complements: bool | None = None,
        pairwise: str = "auto",
        record_e2: bool = False,
        eval_metric: str = "ndcg@10",
        early_stopping_rounds: int | None = None,
        verbose: int = 0,
        random_state: int | None = None,
    ) -> None:
        self.variant = variant
        self.n_rounds = n_rounds
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds
        self.n_thresholds = n_thresholds
        self.efficient = efficient
        self.complements = complements
        self.pairwise = pairwise
        self.record_e2 = record_e2
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.verbose = verbose
        self.random_state = random_state

    # ---- set-up ---------------------------------------------------------------------
    def _check_params(self) -> None:
        check_choice("variant", self.variant, VARIANTS)
        check_choice("thresholds", self.thresholds, THRESHOLD_MODES)
        check_flag(self.efficient, "efficient")
        check_choice("pairwise", self.pairwise, PAIRWISE)
        check_flag(self.record_e2, "record_e2")
        if self.complements is not None and not isinstance(self.complements, (bool, np.bool_)):
            raise ValueError(f"complements must be True, False or None (True unless thresholds='ranklib'), "
                             f"got {self.complements!r}")

    def _tracks_span(self) -> bool:
        """RankBoost+ trains on ``S_t``; Rb-d/Rb-c keep it for the ``E2`` record only."""
        return self.variant == "rankboost+" or bool(self.record_e2)

    def _both_orientations(self) -> bool:
        """Stumps and their complements (the paper's majority-vote leaves), except RankLib's one-sided set."""
        return self.thresholds != "ranklib" if self.complements is None else bool(self.complements)

    def _choose_pairwise(self, data: FitData) -> str:
        """The path of this fit, ``"levels"`` or ``"pairs"``: ``pairwise``, or for ``"auto"`` the rule of
        :func:`~boostplug.boosters._pairwise_choice.choose_pairwise`."""
        self._check_params()
        if data.pairs is not None and self.pairwise == "levels":
            raise ValueError("pairwise='levels' is not available: explicit pairs were given to fit; "
                             "use pairwise='auto' or 'pairs'")
        if self.pairwise != "auto":
            return self.pairwise
        booster = "rankboost+" if self.variant == "rankboost+" else "rb_e2" if self.record_e2 else "rb"
        return choose_pairwise(booster, data,
                               self._check_n_rounds(), BYTES_PER_PAIR)

    def _fit_init(self, data: FitData) -> _State:
        self._check_params()
        self.undefined_round_: dict[str, Any] | None = None
        self.span_size_: int | None = 0 if self._tracks_span() else None
        self.pruned_round_: int | None = None
        if self._choose_pairwise(data) == "levels":
            return self._fit_init_levels(data)
        pairs = data.preference_pairs(BYTES_PER_PAIR, who=f"RankBoost(variant={self.variant!r})")
        cands = data.stump_candidates(self)
        P = pairs.shape[0]
        pw = data.pair_weights(pairs)  # a query of weight w counts as w copies of its pairs
        cor, rev = pair_split_sums(cands.codes, pairs, np.ones(P) if pw is None else pw, cands.n_thr)
        nsplit = np.where(cands.exists, cor + rev, 0.0)
        valid = cands.exists & (nsplit > 0)
        w1 = None if pw is None else pw / pw.sum()
        common = dict(
            pairs=pairs, cands=cands, valid=valid,
            w=np.full(P, 1.0 / max(P, 1)) if w1 is None else w1.copy(), w1=w1,
            F=np.zeros(data.X.shape[0]), ell=np.zeros(P if self._tracks_span() else 0),
            span=self._pair_span(data, cands, pairs, pw) if self._tracks_span() else None,
            log_prod_z=0.0, bound_log=0.0, n_pairs=P,
        )
        if self.variant != "rankboost+":
            return _RbPairs(**common)
        return _PlusPairs(**common, search=_Search(nsplit=nsplit, alive=valid.copy(), pruned=False, rng=data.rng),
                          lower=PairMinCodes(cands.codes, pairs, cands.n_thr))

    @staticmethod
    def _pair_span(data: FitData, cands: StumpCandidates, pairs: NDArray[np.int64],
                   pw: NDArray[np.float64] | None) -> PairSpan:
        """The span's pair metric on the pair list: from the label levels when the pairs are the labels'
        critical pairs (the same ``L h`` in ``O(n)`` instead of a pass over the pairs, which the span
        test makes twice a round), else from the explicit pairs."""
        if data.pairs is None:
            return LevelSpan(cands.codes, LevelPairs(data.y, data.group_ptr, data.query_weights))
        return PairSpan(cands.codes, pairs, pw)

    def _fit_init_levels(self, data: FitData) -> _State:
        """Pair-free state: label levels per query instead of the pair list (``O(n L)``);
        RankBoost+ adds its signature groups (:class:`~boostplug.boosters._group_pairs.GroupPairs`)."""
        lv = LevelPairs(data.y, data.group_ptr, data.query_weights)
        cands = data.stump_candidates(self)
        valid = cands.exists & split_any(cands.codes, lv, cands.width)
        nsplit = np.zeros(valid.shape)
        gp = e2 = None
        if self.variant != "rankboost+":
            e2 = GroupE2(lv, cands.codes) if self.record_e2 else None
        elif lv.n_pairs:
            gp = GroupPairs(lv, cands.codes)
            # |D h|^2 in the pair metric: the (query-weighted) pairs each stump splits, D_1 rescaled
            cor, rev, _ = gp.split_sums(cands.width)
            nsplit = np.where(cands.exists, (cor + rev) * lv.total, 0.0)
        common = dict(cands=cands, valid=valid, F=np.zeros(data.X.shape[0]),
                      span=LevelSpan(cands.codes, lv) if self._tracks_span() else None,
                      log_prod_z=0.0, bound_log=0.0, lv=lv, n_pairs=lv.n_pairs)
        if self.variant != "rankboost+":
            return _RbLevels(**common, e2=e2)
        return _PlusLevels(**common, search=_Search(nsplit=nsplit, alive=valid.copy(), pruned=False, rng=data.rng),
                           gp=gp)

    # ---- one round ----------------------------------------------------------------------
    def _fit_round(self, s: _State, t: int) -> Round | None:
        if s.n_pairs == 0:
            self._stop_reason = "no preference pairs in the training data"
            return None
        if self.variant == "rankboost+":
            out = self._round_plus(s)
        else:
            out = self._round_rb(s)
        if s.span is not None:
            self.span_size_ = s.span.size
        return out

    def _round_rb(self, s: _RbPairs | _RbLevels) -> Round | None:
        """Rb-d / Rb-c: Algorithm 1 with Eq. 10-14 or Eq. 17-19."""
        levels = isinstance(s, _RbLevels)
        pot = s.lv.potentials(s.F) if levels else doc_potentials(s.pairs, s.w, s.F.shape[0])
        r = np.where(s.valid, doc_sums_above(s.cands.codes, pot, s.cands.n_thr), -np.inf)
        both = self._both_orientations()
        # the complement [x <= theta] has eps+ and eps- swapped: r -> -r
        k, j, best = argmax_scan(np.where(s.valid, np.abs(r), -np.inf) if both else r, TIE_TOL)
        if not best > TIE_TOL:
            self._stop_reason = (
                "no stump or complement has eps+ != eps- (r = 0 for all): none decreases E1" if both else
                "no weak ranker has eps+ > eps- (r <= 0): no stump decreases E1 with a positive weight (Eq. 13 "
                "picks the most negative eps- - eps+; only RankBoost+ takes alpha < 0)")
            return None
        comp = both and bool(r[k, j] < 0)
        sign = -1 if comp else 1
        if levels:
            o1 = None
            ep, e0, em = s.lv.eps(s.F, s.cands.codes[:, k] > j)
            if comp:
                ep, em = em, ep
        else:
            o1 = stump_outcomes(s.cands.codes, k, j, s.pairs)   # outcomes of [x > theta]
            o = -o1 if comp else o1
            ep, e0, em = eps_sums(o, s.w)
        ranker = s.cands.stump(k, j, comp)
        if em == 0.0 and e0 == 0.0 and not self.rankers_:
            return self._perfect_first(s, k, j, comp, 1.0, o1, (ep, e0, em))
        if self.variant == "rb-d":
            if em == 0.0:
                self.undefined_round_ = {"ranker": ranker, "eps_plus": ep, "eps_zero": e0, "eps_minus": em}
                self._stop_reason = (f"Eq. 14 undefined: the chosen stump (feature {k}, "
                                     f"{'x <= ' if comp else 'x > '}{float(s.cands.thresholds[k][j])!r}) has "
                                     f"eps- = 0 (eps+ = {ep:.6g}, eps0 = {e0:.6g}); "
                                     "returning the ensemble before this round, as the paper does (Appendix B)")
                return None
            alpha = 0.5 * math.log(ep / em)
        else:
            if em == 0.0 and e0 == 0.0:
                self._stop_reason = ("perfect weak ranker (eps+ = 1): Eq. 19 gives an infinite weight; "
                                     "returning the ensemble before this round")
                return None
            rr = ep - em
            alpha = 0.5 * math.log((1.0 + rr) / (1.0 - rr))
        if levels:
            # Eq. 11; D_t itself is recomputed from F by the level sums
            z = e0 + ep * math.exp(-alpha) + em * math.exp(alpha)
        else:
            u = s.w * np.exp(-alpha * o)
            z = float(u.sum())
            s.w = u / z
        s.log_prod_z += math.log(z)
        delta = em - ep
        s.bound_log += -2.0 * (delta / 2.0) ** 2
        moved = self._add_ranker(s, alpha, s.cands.vector(k, j, comp))
        rec = {"alpha": alpha, "Z": z, "eps_plus": ep, "eps_zero": e0, "eps_minus": em, "delta": delta,
               "r": ep - em, "complement": comp}
        if s.span is not None:
            rec.update({"step": self._track_e2(s, k, j, sign * alpha, o1), "span_size": s.span.size})
        rec.update(self._losses(s, moved))
        return Round(ranker, alpha, rec)

    def _perfect_first(self, s: _State, k: int, j: int, comp: bool, weight: float,
                       o1: NDArray[np.int8] | None, eps: tuple[float, float, float]) -> Round:
        """Round 1's ranker orders every pair correctly (``eps+ = 1``; ``weight = -1``: RankBoost+'s
        one-sided stump reverses every pair): Eq. 14, 19 and 34 give an infinite weight. As AdaRank
        does with a perfect feature, keep it with weight ``+-1`` (any weight of that sign ranks the
        same) and stop; the record's ``alpha`` is ``+-inf``, its losses those of the kept model.
        ``eps``: the caller's ``(eps+, eps0, eps-)`` of the chosen ranker under ``D_1``."""
        how = "correctly" if weight > 0 else "reversely"
        ep, e0, em = eps
        self._stop_reason = (f"perfect weak ranker in round 1 (it orders every training pair {how}): its weight is "
                             f"infinite; kept with weight {weight:g} (any weight of that sign ranks the same)")
        moved = self._add_ranker(s, weight, s.cands.vector(k, j, comp))
        eta = -weight if comp else weight
        step = self._track_e2(s, k, j, eta, o1) if s.span is not None else None
        s.log_prod_z = -math.inf       # Z_1 -> 0 as |alpha| -> inf
        rec = {"alpha": math.copysign(math.inf, weight), "Z": 0.0, "eps_plus": ep, "eps_zero": e0, "eps_minus": em}
        if self.variant == "rankboost+":
            rec.update({"alpha_prime": 0.0, "delta": em - ep if o1 is None else float(-(o1.astype(np.float64) @ s.w))})
        else:
            rec.update({"delta": em - ep, "r": ep - em, "complement": comp})
        s.bound_log += -2.0 * (rec["delta"] / 2.0) ** 2
        if s.span is not None:
            rec.update({"step": step, "span_size": s.span.size})
        rec.update(self._losses(s, moved))
        return Round(s.cands.stump(k, j, comp), weight, rec)

    def _track_e2(self, s: _State, k: int, j: int, alpha: float, o: NDArray[np.int8] | None) -> str:
        """Keep ``F2(eta)`` over the independent set equal to ``E2`` of the ensemble (Section 4).
        ``alpha``: the step on ``[x > theta]`` (``-alpha`` for a complement, whose pair outcomes
        ``o`` are negated: both are the one distinct ranker of ``S_t``). Pair-free (a :class:`_LevelState`):
        only ``eta`` moves, ``ell`` is not kept (``E2`` comes from ``eta``: :func:`level_e2`)."""
        b = s.span.index.get((k, j))
        if b is not None:
            self._move_member(s, b, alpha, o)
            return "member"
        h = s.cands.vector(k, j)
        c, u, r2, norm2 = s.span.residual(h)
        if s.span.is_dependent(r2, norm2):
            self._move_along(s, s.span.beta(c), alpha)
            return "dependent"
        if isinstance(s, _PairState):
            s.ell += np.where(o != 0, -alpha * o, ln_cosh(alpha))   # Eq. 23: a tie contributes cosh(eta)
        s.span.add(k, j, c, u, r2, alpha)
        return "new"

    def _move_member(self, s: _State, b: int, delta: float,
                     o: NDArray[np.int8] | None) -> NDArray[np.float64] | None:
        """``eta_b += delta``: add ``ln omega*_2(new) - ln omega*_2(old)`` to ``ell``; return it
        (pair-free: ``eta`` only, None)."""
        eta = s.span.eta[b]
        if isinstance(s, _LevelState):
            s.span.eta[b] = eta + delta
            return None
        lr = np.where(o != 0, -delta * o, ln_cosh(eta + delta) - ln_cosh(eta))
        s.ell += lr
        s.span.eta[b] = eta + delta
        return lr

    def _move_along(self, s: _State, beta: NDArray[np.float64], alpha: float) -> None:
        for b, coef in enumerate(beta):
            if coef != 0.0:
                kb, jb = s.span.members[b]
                o = stump_outcomes(s.cands.codes, kb, jb, s.pairs) if isinstance(s, _PairState) else None
                self._move_member(s, b, alpha * float(coef), o)

    @staticmethod
    def _add_ranker(s: _State, weight: float, h: NDArray[np.float64]) -> NDArray[np.bool_]:
        """``F += weight h``, the round's one ranker; returns the rows it moved (for :meth:`_losses`)."""
        s.F += weight * h
        return h != 0.0

    def _losses(self, s: _State, moved: NDArray[np.bool_]) -> dict[str, float]:
        """R1 (Eq. 3), R2 (Eq. 4), E1 (Eq. 5), E2 (Eq. 24; only with the span) of the ensemble, prod Z_t,
        the theorem bound. ``moved``: the rows this round's one ranker moved (the rest kept their scores)."""
        if isinstance(s, _LevelState):
            r1, r2 = s.lv.rates(s.F, moved)
            out = {"R1": r1, "R2": r2, "E1": s.lv.weight_sum(s.F) / s.lv.total}
            if isinstance(s, _PlusLevels):       # the groups follow S_t and eta: D_{t+1} and E2
                s.gp.sync(s.span.members, s.span.eta)
                out["E2"] = math.exp(s.gp.log_e2)
            elif s.span is not None:
                out["E2"] = s.e2.value(s.span.members, s.span.eta)
        else:
            margin = s.F[s.pairs[:, 0]] - s.F[s.pairs[:, 1]]
            if s.w1 is not None:  # means under D_1
                with np.errstate(over="ignore"):
                    e1 = float(s.w1 @ np.exp(-margin))
                out = {"R1": float(s.w1[margin <= 0].sum()),
                       "R2": float(s.w1[margin < 0].sum() + 0.5 * s.w1[margin == 0].sum()), "E1": e1}
                if s.span is not None:
                    out["E2"] = float(np.exp(log_sum_exp(s.ell, s.w1)))
            else:
                m = margin.shape[0]
                with np.errstate(over="ignore"):
                    e1 = float(np.mean(np.exp(-margin)))
                out = {"R1": float(np.count_nonzero(margin <= 0) / m),
                       "R2": float((np.count_nonzero(margin < 0) + 0.5 * np.count_nonzero(margin == 0)) / m),
                       "E1": e1}
                if s.span is not None:
                    out["E2"] = float(np.exp(log_sum_exp(s.ell) - math.log(m)))
        out.update({"prod_Z": math.exp(s.log_prod_z), "bound": math.exp(s.bound_log)})
        return out

    # ---- RankBoost+ -----------------------------------------------------------------------
    def _round_plus(self, s: _PlusPairs | _PlusLevels) -> Round | None:
        if isinstance(s, _PlusLevels):
            cor, rev, total = s.gp.split_sums(s.cands.width)
            e0, d0 = total - cor - rev, rev - cor        # d0: Eq. 33 with alpha' = 0
        else:
            signed, split = s.lower.sums(s.w)
            e0, d0 = float(s.w.sum()) - split, -signed
        members = s.span.members
        g = np.array([d0[kb, jb] + e0[kb, jb] * math.tanh(s.span.eta[b]) for b, (kb, jb) in enumerate(members)])
        dep_beta: dict[tuple[int, int], NDArray[np.float64]] = {}
        while True:
            scores = self._plus_scores(s, d0, g, dep_beta)
            k, j, best = argmax_scan(scores, TIE_TOL)
            if not best > TIE_TOL:
                self._stop_reason = "no weak ranker has a non-zero derivative of E2 (|delta| = 0)"
                return None
            if (k, j) in s.span.index or (k, j) in dep_beta:
                break
            h = s.cands.vector(k, j)
            c, u, r2, norm2 = s.span.residual(h)
            if not s.span.is_dependent(r2, norm2):
                return self._plus_coordinate(s, k, j, None, (c, u, r2))
            if self.efficient:                          # Algorithm 2, lines 12-14
                s.search.alive[k, j] = False
                if not s.search.pruned:
                    self._prune(s)
                    self.pruned_round_ = len(self.history_) + 1
            else:                                        # bulk test missed it: score it as dependent
                dep_beta[(k, j)] = s.span.beta(c)
        if (k, j) in s.span.index:
            return self._plus_coordinate(s, k, j, s.span.index[(k, j)], None)
        return self._plus_dependent(s, k, j, dep_beta[(k, j)], g)

    def _plus_scores(self, s: _PlusPairs | _PlusLevels, d0: NDArray[np.float64], g: NDArray[np.float64],
                     dep_beta: dict[tuple[int, int], NDArray[np.float64]]) -> NDArray[np.float64]:
        """|delta| of every candidate (Eq. 32-33); exact variant: directional derivatives for dependent ones."""
        if self.efficient:
            scores = np.where(s.search.alive, np.abs(d0), -np.inf)
        else:
            scores = np.where(s.valid, np.abs(d0), -np.inf)
            if s.span.size:
                self._score_dependent(s, scores, g, dep_beta)
        for b, (kb, jb) in enumerate(s.span.members):
            scores[kb, jb] = abs(g[b])
        return scores

    def _score_dependent(self, s: _PlusPairs | _PlusLevels, scores: NDArray[np.float64], g: NDArray[np.float64],
                         dep_beta: dict[tuple[int, int], NDArray[np.float64]]) -> None:
        """Exact variant: ``|grad F2 . beta| / ||beta||`` for candidates in the span of ``S_t``."""
        if not dep_beta:
            C = s.span.all_coefficients(s.cands.n_thr)
            r2 = s.search.nsplit - np.einsum("kjb,kjb->kj", C, C)
            dep = s.valid & (r2 <= DEPENDENT_RTOL * s.search.nsplit)
            for kb, jb in s.span.members:
                dep[kb, jb] = False
            ks, js = np.nonzero(dep)
            if ks.size:
                B = solve_triangular(s.span.R, C[ks, js].T, lower=False)   # (|S|, n_dep)
                for i in range(ks.size):
                    dep_beta[(int(ks[i]), int(js[i]))] = B[:, i]
        for (kd, jd), beta in dep_beta.items():
            nb = float(np.linalg.norm(beta))
            scores[kd, jd] = abs(float(g @ beta)) / nb if nb > 0 else -np.inf

    def _plus_coordinate(self, s: _PlusPairs | _PlusLevels, k: int, j: int, b: int | None,
                         new: tuple[NDArray[np.float64], NDArray[np.float64], float] | None) -> Round | None:
        """A step on one distinct ranker: Eq. 34 for alpha, Eq. 25-27 for D and Z (pair-free:
        Eq. 27 from ``eps``; ``D`` follows from ``eta`` in :meth:`_losses`)."""
        if isinstance(s, _PlusLevels):
            o = None
            ep, e0, em = s.gp.eps(s.cands.codes[:, k] > j)
        else:
            o = stump_outcomes(s.cands.codes, k, j, s.pairs)
            ep, e0, em = eps_sums(o, s.w)
        ap = float(s.span.eta[b]) if b is not None else 0.0
        if e0 == 0.0 and (em == 0.0 or ep == 0.0):
            if not self.rankers_:
                return self._perfect_first(s, k, j, False, 1.0 if em == 0.0 else -1.0, o, (ep, e0, em))
            self._stop_reason = ("perfect weak ranker (eps- = eps0 = 0 or eps+ = eps0 = 0): Eq. 34 gives an infinite "
                                 "weight; returning the ensemble before this round")
            return None
        num = ep + e0 * float(expit(-2.0 * ap))        # e^{-a'} / (2 cosh a')
        den = em + e0 * float(expit(2.0 * ap))         # e^{a'} / (2 cosh a')
        alpha = 0.5 * math.log(num / den)
        delta = em - ep + e0 * math.tanh(ap)
        if b is not None:
            lr = self._move_member(s, b, alpha, o)
            step = "member"
        else:
            c, u, r2 = new
            if o is not None:
                lr = -alpha * o.astype(np.float64)
                lr[o == 0] = ln_cosh(alpha)
                s.ell += lr
            s.span.add(k, j, c, u, r2, alpha)
            s.search.alive[k, j] = False
            step = "new"
        if isinstance(s, _PlusLevels):   # Eq. 27: ties scaled by cosh(alpha + alpha') / cosh(alpha')
            z = ep * math.exp(-alpha) + em * math.exp(alpha) + e0 * math.exp(ln_cosh(ap + alpha) - ln_cosh(ap))
            s.log_prod_z += math.log(z)
        else:
            z = self._reweight(s, lr)
        s.bound_log += -2.0 * (delta / 2.0) ** 2
        moved = self._add_ranker(s, alpha, s.cands.vector(k, j))
        rec = {"alpha": alpha, "alpha_prime": ap, "Z": z, "eps_plus": ep, "eps_zero": e0, "eps_minus": em,
               "delta": delta, "step": step, "span_size": s.span.size}
        rec.update(self._losses(s, moved))
        return Round(s.cands.stump(k, j), alpha, rec)

    def _reweight(self, s: _PairState, log_ratio: NDArray[np.float64]) -> float:
        """Eq. 26: ``D_{t+1} = D_t omega / Z_t``; returns ``Z_t``."""
        u = s.w * np.exp(log_ratio)
        z = float(u.sum())
        s.w = u / z
        s.log_prod_z += math.log(z)
        return z

    def _plus_dependent(self, s: _PlusPairs | _PlusLevels, k: int, j: int, beta: NDArray[np.float64],
                        g: NDArray[np.float64]) -> Round | None:
        """Exact variant: ``eta += alpha beta`` with ``alpha = argmin F2(eta + alpha beta)``."""
        sup = np.flatnonzero(beta != 0.0)
        if isinstance(s, _PlusLevels):    # the members' outcomes are constant over a pair of signature groups
            w, O = s.gp.pair_outcomes(sup)
        else:
            w = s.w
            O = np.stack([stump_outcomes(s.cands.codes, *s.span.members[b], s.pairs) for b in sup], axis=1)
        eta, bet = s.span.eta[sup], beta[sup]
        alpha = self._line_search(w, O, eta, bet, float(g @ beta))
        if alpha is None:
            self._stop_reason = "E2 decreases without bound along a dependent direction (perfect combination)"
            return None
        if isinstance(s, _PlusLevels):
            ep, e0, em = s.gp.eps(s.cands.codes[:, k] > j)
        else:
            ep, e0, em = eps_sums(stump_outcomes(s.cands.codes, k, j, s.pairs), s.w)
        lr = self._log_ratio(O, eta, bet, alpha)[0]
        s.span.eta[sup] = eta + alpha * bet
        if isinstance(s, _PlusLevels):
            z = float(w @ np.exp(lr))
            s.log_prod_z += math.log(z)
        else:
            s.ell += lr
            z = self._reweight(s, lr)
        s.bound_log += math.log(z)
        moved = self._add_ranker(s, alpha, s.cands.vector(k, j))
        rec = {"alpha": alpha, "alpha_prime": None, "Z": z, "eps_plus": ep, "eps_zero": e0, "eps_minus": em,
               "delta": float(g @ beta) / float(np.linalg.norm(beta)), "step": "dependent",
               "span_size": s.span.size}
        rec.update(self._losses(s, moved))
        return Round(s.cands.stump(k, j), alpha, rec)

    @staticmethod
    def _log_ratio(O: NDArray[np.int8], eta: NDArray[np.float64], beta: NDArray[np.float64],
                   alpha: float) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Per pair ``lambda(alpha) = sum_b ln omega*_2(eta_b + alpha beta_b) - ln omega*_2(eta_b)``
        and its first two derivatives in ``alpha``."""
        tied = O == 0
        x = eta + alpha * beta
        lam = np.where(tied, ln_cosh(x) - ln_cosh(eta), -alpha * beta * O).sum(axis=1)
        d1 = np.where(tied, beta * np.tanh(x), -beta * O).sum(axis=1)
        d2 = np.where(tied, beta * beta / np.cosh(x) ** 2, 0.0).sum(axis=1)
        return lam, d1, d2

    def _line_search(self, w: NDArray[np.float64], O: NDArray[np.int8], eta: NDArray[np.float64],
                     beta: NDArray[np.float64], slope0: float) -> float | None:
        """Minimiser of the convex ``phi(alpha) = sum_i w_i exp(lambda_i(alpha))``: bracket, then
        Newton steps kept inside the bracket (bisection when they leave it)."""
        def dphi(a: float) -> tuple[float, float]:
            lam, d1, d2 = self._log_ratio(O, eta, beta, a)
            rho = w * np.exp(lam)
            return float(rho @ d1), float(rho @ (d1 * d1 + d2))

        sign = -1.0 if slope0 > 0 else 1.0
        lo, hi, step = 0.0, sign * 0.5, 0.5
        while dphi(hi)[0] * sign < 0:
            lo, step = hi, step * 2.0
            hi = sign * step
            if step > 1e3:
                return None
        lo, hi = min(lo, hi), max(lo, hi)
        a = 0.5 * (lo + hi)
        for _ in range(200):
            d, dd = dphi(a)
            if d > 0:
                hi = a
            else:
                lo = a
            nxt = a - d / dd if dd > 0 else 0.5 * (lo + hi)
            if not lo < nxt < hi:
                nxt = 0.5 * (lo + hi)
            if abs(nxt - a) <= 1e-15 * max(1.0, abs(a)) or hi - lo <= 1e-15 * max(1.0, abs(a)):
                return nxt
            a = nxt
        return a

    # ---- Algorithm 2, line 14: one pruning of R ------------------------------------------
    def _prune(self, s: _PlusPairs | _PlusLevels) -> None:
        """``select-independent-subset``: QR of ``[S, permute(R)]`` built column by column in
        the pair metric (:func:`~boostplug.boosters._rankboost_kernels.select_independent`);
        a column whose diagonal is zero (residual within ``DEPENDENT_RTOL``) leaves ``R``.
        Stops early (the rest stay in ``R``, span-tested when chosen) when the basis would
        exceed ``PRUNE_BUDGET_BYTES``."""
        s.search.pruned = True
        n = s.F.shape[0]
        cap = max(s.span.size + 1, int(PRUNE_BUDGET_BYTES // (16 * max(n, 1))))
        cand = np.argwhere(s.search.alive)
        order = cand[s.search.rng.permutation(cand.shape[0])]
        pairs = s.pairs if isinstance(s, _PairState) else _NO_PAIRS
        drop = select_independent(s.cands.codes, pairs, order, s.span, s.search.nsplit, s.cands.n_thr, cap)
        s.search.alive[order[drop, 0], order[drop, 1]] = False
