"""RankBoost with binary weak rankers: Rb-d, Rb-c and RankBoost+ (Connamacher, Pancha, Liu, Ray,
"Rankboost+: an improvement to Rankboost", MLJ 2020), on decision stumps. What each variant
chooses and records, the pair-free path (``pairwise="levels"``) and the cost of a round:
docs/boosters.md, "RankBoost". A fit keeps one state per variant and path
(:mod:`._rankboost_state`); RankBoost+'s own round is :mod:`._rankboost_plus`.

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

from .._validation import check_choice, check_flag
from ._estimator import RankingBooster, Round
from ._fit_data import FitData
from ._group_e2 import GroupE2
from ._group_pairs import GroupPairs
from ._level_sums import LevelPairs, LevelSpan, split_any
from ._pairwise_choice import choose_pairwise, fixed_pairwise
from ._pair_mins import PairMinCodes
from ._rankboost_kernels import PairSpan, ln_cosh, outcomes_eps, pair_e2, pair_losses
from ._rankboost_plus import PlusRounds
from ._rankboost_state import LevelState, PairState, PlusLevels, PlusPairs, RbLevels, Search, State, stump_eps
from ._stump_sums import doc_sides, doc_sums_above, pair_split_sums
from .stumps import THRESHOLD_MODES, TIE_TOL, argmax_scan

__all__ = ["RankBoost", "VARIANTS"]

VARIANTS = ("rb-d", "rb-c", "rankboost+")

#: The history's ``R1``, ``R2``, ``E1`` on the pair list of the labels' critical pairs come from the
#: label levels (``O(n L)`` and a sort per query) from this many pairs per document on, else from a
#: pass over the pairs: about 6 ns a pair against 40 ns a document and 0.4 us a query (OHSUMED Fold1
#: train, 40 pairs a document: 1.7 against 0.4 ms; MQ2008, 5.4: 0.3 against 0.55 ms).
LEVEL_LOSSES_PAIRS_PER_DOC = 16

#: Peak bytes fit allocates per preference pair: the pair list, D_t, ell, the pair weights, stump
#: outcomes and margins, and two more arrays when weighted. RankBoost+ also keeps its pairs' lower
#: codes, a fixed amount (at most ``_pair_mins.LOWER_CODES_BUDGET_BYTES``).
BYTES_PER_PAIR = 112



@dataclass(eq=False, repr=False)
class RankBoost(PlusRounds, RankingBooster):
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
        pairwise: ``"levels"`` (pair-free, from sums per label level or, RankBoost+, over pairs of
            signature groups), ``"pairs"`` (the critical pairs listed, guarded by
            ``boostplug.pairs.PAIR_MEMORY_LIMIT``; always with explicit pairs) or ``"auto"`` (default:
            the cheaper of the two); the same model up to rounding (docs/boosters.md).
        record_e2: Rb-d/Rb-c: keep the ``E2`` record of the paper's Section 4 (``history_``'s
            ``E2``, ``step`` and ``span_size``, and ``span_size_``), most of a round's time.
            ``False`` (default): those entries are absent and ``span_size_`` is ``None``; everything
            else is bit for bit the same. RankBoost+ keeps it always (``E2`` is its loss).
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

    variant: str = "rb-c"
    n_rounds: int = 100
    thresholds: str = "sample"
    max_thresholds: int = 255
    n_thresholds: int = 10
    efficient: bool = True
    complements: bool | None = None
    pairwise: str = "auto"
    record_e2: bool = False

    # ---- set-up ---------------------------------------------------------------------
    def _check_params(self) -> None:
        check_choice("variant", self.variant, VARIANTS)
        check_choice("thresholds", self.thresholds, THRESHOLD_MODES)
        check_flag(self.efficient, "efficient")
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
        booster = "rankboost+" if self.variant == "rankboost+" else "rb_e2" if self.record_e2 else "rb"
        return fixed_pairwise(self.pairwise, data) or choose_pairwise(booster, data, self._check_n_rounds(),
                                                                      BYTES_PER_PAIR)

    def _fit_init(self, data: FitData) -> State:
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
        # the label levels of the labels' critical pairs, built only for a use: the span's metric or the losses
        level_losses = P >= LEVEL_LOSSES_PAIRS_PER_DOC * data.X.shape[0]
        levels = (LevelPairs(data.y, data.group_ptr, data.query_weights)
                  if data.pairs is None and (self._tracks_span() or level_losses) else None)
        common = dict(
            pairs=pairs, cands=cands, valid=valid,
            w=np.full(P, 1.0 / max(P, 1)) if w1 is None else w1.copy(), w1=w1,
            F=np.zeros(data.X.shape[0]), ell=np.zeros(P if self._tracks_span() else 0),
            # the span's pair metric from the label levels when the pairs are the labels' critical pairs (the
            # same L h in O(n) instead of a pass over the pairs, which the span test makes twice a round)
            span=(None if not self._tracks_span() else PairSpan(cands.codes, pairs, pw) if levels is None
                  else LevelSpan(cands.codes, levels)),
            log_prod_z=0.0, bound_log=0.0, n_pairs=P,
            loss_levels=levels if level_losses else None,
        )
        if self.variant != "rankboost+":
            return PairState(**common)   # Rb-d/Rb-c
        self._span_products(common["span"], nsplit, cands.n_thr)
        return PlusPairs(**common, search=Search(nsplit=nsplit, alive=valid.copy(), pruned=False, rng=data.rng),
                          lower=PairMinCodes(cands.codes, pairs, cands.n_thr))

    def _span_products(self, span: PairSpan, nsplit: NDArray[np.float64], n_thr: NDArray[np.int64]) -> None:
        """The efficient RankBoost+ reads only the span test's answer and ``R`` (its dependent steps are
        single members'): its span keeps the stumps' products with the members, not the basis vectors
        (:meth:`~boostplug.boosters._rankboost_kernels.PairSpan.use_products`). The exact variant and
        Rb-d/Rb-c's ``E2`` record move along ``R^{-1} c``, which the Gram-Schmidt of the vectors gives."""
        if self.efficient:
            span.use_products(nsplit, n_thr)

    def _fit_init_levels(self, data: FitData) -> State:
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
            return RbLevels(**common, e2=e2)
        self._span_products(common["span"], nsplit, cands.n_thr)
        return PlusLevels(**common, search=Search(nsplit=nsplit, alive=valid.copy(), pruned=False, rng=data.rng),
                           gp=gp)

    # ---- one round ----------------------------------------------------------------------
    def _fit_round(self, s: State, t: int) -> Round | None:
        if s.n_pairs == 0:
            self._stop_reason = "no preference pairs in the training data"
            return None
        out = self._round_plus(s) if self.variant == "rankboost+" else self._round_rb(s)
        if s.span is not None:
            self.span_size_ = s.span.size
        return out

    def _round_rb(self, s: PairState | RbLevels) -> Round | None:
        """Rb-d / Rb-c: Algorithm 1 with Eq. 10-14 or Eq. 17-19."""
        levels = isinstance(s, RbLevels)
        # pot[x] = sum_{pairs (x, .)} D - sum_{pairs (., x)} D
        pot = s.lv.potentials(s.F) if levels else np.subtract(*doc_sides(s.pairs, s.w, s.F.shape[0]))
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
        o1, (ep, e0, em) = stump_eps(s, k, j)   # o1: the outcomes of [x > theta] (None pair-free)
        if comp:
            ep, em = em, ep
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
            s.log_prod_z += math.log(z)
        else:
            z = self._normalise(s, s.w * np.exp(-sign * alpha * o1))    # Eq. 10 (a complement's o is -o1)
        delta = em - ep
        s.bound_log += -2.0 * (delta / 2.0) ** 2
        rec = {"alpha": alpha, "Z": z, "eps_plus": ep, "eps_zero": e0, "eps_minus": em, "delta": delta,
               "r": ep - em, "complement": comp}
        if s.span is not None:
            rec.update({"step": self._track_e2(s, k, j, sign * alpha, o1), "span_size": s.span.size})
        return self._finish(s, rec, ranker, alpha, s.cands.vector(k, j, comp))

    def _perfect_first(self, s: State, k: int, j: int, comp: bool, weight: float,
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
        return self._finish(s, rec, s.cands.stump(k, j, comp), weight, s.cands.vector(k, j, comp))

    def _track_e2(self, s: State, k: int, j: int, alpha: float, o: NDArray[np.int8] | None) -> str:
        """Keep ``F2(eta)`` over the independent set equal to ``E2`` of the ensemble (Section 4).
        ``alpha``: the step on ``[x > theta]`` (``-alpha`` for a complement, whose pair outcomes
        ``o`` are negated: both are the one distinct ranker of ``S_t``). Pair-free (a :class:`LevelState`):
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
        if isinstance(s, PairState):
            s.ell += np.where(o != 0, -alpha * o, ln_cosh(alpha))   # Eq. 23: a tie contributes cosh(eta)
        s.span.add(k, j, c, u, r2, alpha)
        return "new"

    def _move_member(self, s: State, b: int, delta: float, o: NDArray[np.int8] | None) -> None:
        """``eta_b += delta``: add ``ln omega*_2(new) - ln omega*_2(old)`` to ``ell`` (pair-free: ``eta`` only)."""
        eta = s.span.eta[b]
        if isinstance(s, PairState):
            s.ell += np.where(o != 0, -delta * o, ln_cosh(eta + delta) - ln_cosh(eta))
        s.span.eta[b] = eta + delta

    def _move_along(self, s: State, beta: NDArray[np.float64], alpha: float) -> None:
        for b, coef in enumerate(beta):
            if coef != 0.0:
                kb, jb = s.span.members[b]
                o = outcomes_eps(s.cands.codes, kb, jb, s.pairs, s.w)[0] if isinstance(s, PairState) else None
                self._move_member(s, b, alpha * float(coef), o)

    def _finish(self, s: State, rec: dict[str, Any], ranker: dict[str, Any], weight: float,
                h: NDArray[np.float64]) -> Round:
        """The round's one ranker (outputs ``h``) added, ``F += weight h``, and ``rec`` completed by
        :meth:`_losses` of the new ensemble (only the rows ``h`` moved changed their scores)."""
        s.F += weight * h
        rec.update(self._losses(s, h != 0.0))
        return Round(ranker, weight, rec)

    def _losses(self, s: State, moved: NDArray[np.bool_]) -> dict[str, float]:
        """R1 (Eq. 3), R2 (Eq. 4), E1 (Eq. 5), E2 (Eq. 24; only with the span) of the ensemble, prod Z_t,
        the theorem bound. ``moved``: the rows this round's one ranker moved (the rest kept their scores)."""
        # pair-free, or the labels' critical pairs, many a document: R1, R2, E1 from the label levels (no
        # pass over the pairs), means under D_1 as below
        lv = s.lv if isinstance(s, LevelState) else s.loss_levels
        if lv is not None:
            r1, r2 = lv.rates(s.F, moved)
            out = {"R1": r1, "R2": r2, "E1": lv.weight_sum(s.F) / lv.total}
            if isinstance(s, PlusLevels):       # the groups follow S_t and eta: D_{t+1} and E2
                s.gp.sync(s.span.members, s.span.eta)
                out["E2"] = math.exp(s.gp.log_e2)
            elif s.span is not None:
                out["E2"] = (s.e2.value(s.span.members, s.span.eta) if isinstance(s, LevelState)
                             else pair_e2(s.ell, s.w1))
        else:   # means under D_1 (uniform without query weights); E2 only with the span's ell
            out = pair_losses(s.pairs, s.F, s.w1, s.ell if s.span is not None else np.zeros(0))
        out.update({"prod_Z": math.exp(s.log_prod_z), "bound": math.exp(s.bound_log)})
        return out
