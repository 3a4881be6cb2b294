"""RankBoost+'s rounds (Connamacher et al., MLJ 2020, Algorithm 2): the candidates' derivatives of
E2 (Eq. 32-33), the coordinate and dependent steps, the line search and the one pruning of the
candidate set, as a mixin of :class:`~boostplug.boosters.RankBoost` (docs/boosters.md, "RankBoost")."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.special import expit

from ._estimator import Round
from ._rankboost_kernels import DEPENDENT_RTOL, ln_cosh, outcomes_eps, select_independent, step_outcomes
from ._rankboost_state import PairState, PlusLevels, PlusPairs, stump_eps
from .stumps import TIE_TOL, argmax_scan

__all__ = ["PlusRounds", "PRUNE_BUDGET_BYTES"]

#: Memory budget of the one-time pruning's temporary basis (bytes).
PRUNE_BUDGET_BYTES = 256 * 2**20


class PlusRounds:
    """RankBoost+'s round and its helpers; :class:`~boostplug.boosters.RankBoost` supplies the
    shared steps (``_finish``, ``_losses``, ``_perfect_first``, ``_move_member``)."""

    efficient: bool
    _stop_reason: str | None
    pruned_round_: int | None
    history_: list[Any]

    def _round_plus(self, s: PlusPairs | PlusLevels) -> Round | None:
        if isinstance(s, PlusLevels):
            cor, rev, total = s.gp.split_sums(s.cands.width)
            e0, d0 = total - cor - rev, rev - cor        # d0: Eq. 33 with alpha' = 0
        else:
            # eps0 is read at the members only (their g below): the pair histogram of their features alone
            signed, split = s.lower.sums(s.w, features=np.unique([kb for kb, _ in s.span.members]))
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
            c, u, r2, norm2 = s.span.stump_residual(k, j, s.cands.vector(k, j))
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

    def _plus_scores(self, s: PlusPairs | PlusLevels, d0: NDArray[np.float64], g: NDArray[np.float64],
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

    def _score_dependent(self, s: PlusPairs | PlusLevels, scores: NDArray[np.float64], g: NDArray[np.float64],
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

    def _plus_coordinate(self, s: PlusPairs | PlusLevels, k: int, j: int, b: int | None,
                         new: tuple[NDArray[np.float64], NDArray[np.float64] | None, float] | None) -> Round | None:
        """A step on one distinct ranker: Eq. 34 for alpha, Eq. 25-27 for D and Z (pair-free:
        Eq. 27 from ``eps``; ``D`` follows from ``eta`` in :meth:`_losses`)."""
        o, (ep, e0, em) = stump_eps(s, k, j)
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
            eta = s.span.eta[b]
            tied = ln_cosh(eta + alpha) - ln_cosh(eta)      # Eq. 23's term of a tie, as _move_member adds it
            s.span.eta[b] = eta + alpha
            step = "member"
        else:
            c, u, r2 = new
            tied = ln_cosh(alpha)
            s.span.add(k, j, c, u, r2, alpha)
            s.search.alive[k, j] = False
            step = "new"
        if isinstance(s, PlusLevels):   # Eq. 27: ties scaled by cosh(alpha + alpha') / cosh(alpha')
            z = ep * math.exp(-alpha) + em * math.exp(alpha) + e0 * math.exp(ln_cosh(ap + alpha) - ln_cosh(ap))
            s.log_prod_z += math.log(z)
        else:   # ell += lr and D_t exp(lr) in one pass over the pairs, then Eq. 26
            z = self._normalise(s, step_outcomes(o, s.w, s.ell, alpha, tied))
        s.bound_log += -2.0 * (delta / 2.0) ** 2
        rec = {"alpha": alpha, "alpha_prime": ap, "Z": z, "eps_plus": ep, "eps_zero": e0, "eps_minus": em,
               "delta": delta, "step": step, "span_size": s.span.size}
        return self._finish(s, rec, s.cands.stump(k, j), alpha, s.cands.vector(k, j))

    @staticmethod
    def _normalise(s: PairState, u: NDArray[np.float64]) -> float:
        """``D_{t+1} = u / Z_t`` with ``u = D_t omega`` and ``Z_t = sum u``; returns ``Z_t``."""
        z = float(u.sum())
        s.w = u / z
        s.log_prod_z += math.log(z)
        return z

    def _plus_dependent(self, s: PlusPairs | PlusLevels, k: int, j: int, beta: NDArray[np.float64],
                        g: NDArray[np.float64]) -> Round | None:
        """Exact variant: ``eta += alpha beta`` with ``alpha = argmin F2(eta + alpha beta)``."""
        sup = np.flatnonzero(beta != 0.0)
        if isinstance(s, PlusLevels):    # the members' outcomes are constant over a pair of signature groups
            w, O = s.gp.pair_outcomes(sup)
        else:
            w = s.w
            O = np.stack([outcomes_eps(s.cands.codes, *s.span.members[b], s.pairs, s.w)[0] for b in sup], axis=1)
        eta, bet = s.span.eta[sup], beta[sup]
        alpha = self._line_search(w, O, eta, bet, float(g @ beta))
        if alpha is None:
            self._stop_reason = "E2 decreases without bound along a dependent direction (perfect combination)"
            return None
        ep, e0, em = stump_eps(s, k, j)[1]
        lr = self._log_ratio(O, eta, bet, alpha)[0]
        s.span.eta[sup] = eta + alpha * bet
        if isinstance(s, PlusLevels):
            z = float(w @ np.exp(lr))
            s.log_prod_z += math.log(z)
        else:
            s.ell += lr
            z = self._normalise(s, s.w * np.exp(lr))     # Eq. 26: D_{t+1} = D_t omega / Z_t
        s.bound_log += math.log(z)
        rec = {"alpha": alpha, "alpha_prime": None, "Z": z, "eps_plus": ep, "eps_zero": e0, "eps_minus": em,
               "delta": float(g @ beta) / float(np.linalg.norm(beta)), "step": "dependent",
               "span_size": s.span.size}
        return self._finish(s, rec, s.cands.stump(k, j), alpha, s.cands.vector(k, j))

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
    def _prune(self, s: PlusPairs | PlusLevels) -> None:
        """``select-independent-subset``: QR of ``[S, permute(R)]`` built column by column in
        the pair metric (:func:`~boostplug.boosters._rankboost_kernels.select_independent`);
        a column whose diagonal is zero (residual within ``DEPENDENT_RTOL``) leaves ``R``.
        Stops early (the rest stay in ``R``, span-tested when chosen) once the basis holds
        ``PRUNE_BUDGET_BYTES / (16 n)`` stumps: as many as two document vectors per basis stump
        (``Q`` and ``L Q``) fit in the budget, the pruning's bound since it held them (it keeps
        only ``R`` and the candidates' products now, the bound stays so that fits do not change)."""
        s.search.pruned = True
        n = s.F.shape[0]
        cap = max(s.span.size + 1, int(PRUNE_BUDGET_BYTES // (16 * max(n, 1))))
        cand = np.argwhere(s.search.alive)
        order = cand[s.search.rng.permutation(cand.shape[0])]
        drop = select_independent(s.cands.codes, order, s.span, s.search.nsplit, s.cands.n_thr, cap)
        s.search.alive[order[drop, 0], order[drop, 1]] = False
