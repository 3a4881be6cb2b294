"""AdaRank: boosting a query-level IR measure with single-feature weak rankers
(Xu and Li, "AdaRank: a boosting algorithm for information retrieval", SIGIR 2007).

Definition (the paper's Figure 1; the extracted text lost its symbols, see
``shared/papers/README.md`` section 5). Queries ``i = 1..m``, a query-level measure
``E(pi, y)`` (here in ``[0, 1]``), ``h_k(x) = x_k`` the single-feature weak rankers
(a missing value counts as 0, as in :mod:`boostplug.boosters._weak_rankers`):

* ``P_1(i) = 1/m``;
* round ``t``: ``h_t = argmax_k phi_k``, ``phi_k = sum_i P_t(i) E(pi(q_i, d_i, h_k), y_i)``
  (documents of each query ranked by that feature alone);
* ``alpha_t = 1/2 ln( sum_i P_t(i) (1 + E(h_t)_i) / sum_i P_t(i) (1 - E(h_t)_i) )``
  ``= 1/2 ln((1 + phi(t)) / (1 - phi(t)))``;
* ``f_t = sum_{s <= t} alpha_s h_s``;
* ``update="paper"``: ``P_{t+1}(i) = exp(-E(f_t)_i) / sum_j exp(-E(f_t)_j)``;
  ``update="multiplicative"``: RankLib's rule
  ``P_{t+1}(i) ∝ P_t(i) exp(-alpha_t E(f_t)_i)``: the previous distribution multiplied by
  ``exp(-alpha_t E(f_t)_i)``, so the weights keep the history of every round (RankLib divides
  by ``sum_j exp(-alpha_t E(f_t)_j)``, without the ``P_t`` factor, so its weights do not sum
  to 1; the argmax and ``alpha`` are invariant to that scale, so normalising to 1, as done
  here, chooses the same features with the same weights).

Theorem 1 (training accuracy). With ``E(f_0) := 0`` (``f_0 = 0``, which is what makes
``P_1`` uniform the ``exp(-E(f_0))`` distribution) and

    ``delta^t_i = E(f_t)_i - E(f_{t-1})_i - alpha_t E(h_t)_i``,  ``delta^t_min = min_i delta^t_i``,

``(1/m) sum_i E(f_T)_i >= 1 - prod_{t<=T} e^{-delta^t_min} sqrt(1 - phi(t)^2)``.
(Proof: ``mean E >= 1 - mean exp(-E)`` and ``mean_i exp(-E(f_t)_i) <= e^{-delta^t_min}
mean_i exp(-E(f_{t-1})_i) sum_i P_t(i) exp(-alpha_t E(h_t)_i)``; by convexity of ``exp`` on
``E in [-1, 1]`` the last sum is at most ``sqrt(1 - phi(t)^2)`` at the paper's ``alpha_t``.)
The proof needs ``P_t ∝ exp(-E(f_{t-1}))``, i.e. ``update="paper"``; it holds for any choice
of ``h_t``, so also with ``enqueue``/``max_consecutive``. ``history_`` records it per round.

Query weights (``fit(sample_weight=...)``): a query of weight ``w`` counts as ``w`` copies of
it: ``P_1(i) = w_i / sum_j w_j``; the paper update is ``P_{t+1}(i) ∝ w_i exp(-E(f_t)_i)``;
the training measure (``mean E`` below, ``train_measure``, the tolerance rule and Theorem 1)
is the ``w``-weighted mean over queries. ``delta_min`` is a minimum over queries, unchanged.

Stopping (``tolerance``): the paper stops "when the training measure stops improving".
Here round ``t`` is kept only if ``mean_i E(f_t)_i - mean_i E(f_{t-1})_i > tolerance``;
otherwise training stops and round ``t`` is dropped (round 1 is always compared with
``-inf``). The default ``0.002`` is RankLib's value (the paper gives none); note that
RankLib *applies* it differently: it stops only when the measure drops by at least the
tolerance (``new + 0.002 - last <= 0``), which is ``tolerance=-0.002`` here.
``tolerance=None`` never stops on the training measure (run ``n_rounds``).

RankLib's extras (off by default), as in RankLib's ``AdaRank.java``:

* ``enqueue=True``: while enqueueing, a feature chosen in two consecutive iterations is put
  in a queue (no longer selectable) and the earlier of the two rounds is rolled back
  (distribution, ensemble and last training measure restored); the rollback uses up an
  iteration of ``n_rounds``. When that phase ends (tolerance stop, no selectable feature,
  or ``n_rounds`` iterations), the queued features are released one at a time, the last
  queued first, each followed by a further non-enqueueing phase from the same iteration
  count (a failed round's iteration is reused, as in RankLib).
* ``max_consecutive=c`` (RankLib's ``-max``, 5 there): in the non-enqueueing phases, a
  feature chosen again while the training measure stays exactly equal is counted; at the
  ``c``-th such repeat it is removed from the pool until the training measure changes (or
  another feature is chosen).

Measures: ``"ndcg@k"`` is :func:`boostplug.metrics.ndcg`, ``"map"`` (or ``"map@k"``)
:func:`boostplug.metrics.average_precision`, both with ties in input order; ``empty`` and a
callable measure: the class's arguments.

Cost: the per-feature, per-query measures ``E(h_k)`` are computed once (``O(F n log n)``); a round
costs ``O(F m)`` for the weighted argmax and ``O(n log n)`` for the new ensemble's measure. Ties
between features (``phi`` equal within ``1e-12``) go to the lowest feature index.

The paper-exact default can stall once a round picks the feature the ensemble already ranks by
(docs/boosters.md, "AdaRank").

Example:
    >>> from boostplug.boosters import AdaRank
    >>> model = AdaRank(measure="map", n_rounds=100).fit(X, y, qid=qid)
    >>> round(model.history_[-1]["train_measure"], 3)
    0.914
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import metrics
from .._validation import check_choice, check_flag, check_optional_count
from ._estimator import RankingBooster, Round
from ._fit_data import FitData
from .stumps import argmax_first

__all__ = ["AdaRank", "resolve_measure"]

MeasureFn = Callable[[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]], NDArray[np.float64]]
UPDATES = ("paper", "multiplicative")
#: Relative tolerance under which two features' weighted measures count as tied.
TIE_TOL = 1e-12


# ---- measures ---------------------------------------------------------------------------
def _builtin(measure: str, empty: float | str) -> MeasureFn:
    """``"ndcg@k"``/``"ndcg"``/``"map"``/``"map@k"`` as a per-query function (ties in input order)."""
    try:
        base, k = metrics.parse_name(measure)
    except ValueError:
        base, k = "", None
    if base not in ("ndcg", "map"):
        raise ValueError(f"measure must be 'map', 'map@k', 'ndcg', 'ndcg@k' or a callable; got {measure!r}")
    fn = metrics.ndcg if base == "ndcg" else metrics.average_precision
    fn(np.zeros(1), np.zeros(1), np.array([0, 1]), k, empty=empty)  # validates empty

    def per_query(scores: NDArray[np.float64], labels: NDArray[np.float64],
                  group_ptr: NDArray[np.int64]) -> NDArray[np.float64]:
        return np.asarray(fn(scores, labels, group_ptr, k, empty=empty, ties="order", per_query=True))

    return per_query


def _checked(fn: Callable[..., ArrayLike]) -> MeasureFn:
    """Wrap a user measure: its result must be a finite ``(n_queries,)`` array in ``[0, 1]``."""
    def per_query(scores: NDArray[np.float64], labels: NDArray[np.float64],
                  group_ptr: NDArray[np.int64]) -> NDArray[np.float64]:
        m = group_ptr.shape[0] - 1
        out = np.asarray(fn(scores, labels, group_ptr))
        if out.shape != (m,):
            raise ValueError(f"measure {fn!r} must return one value per query, shape ({m},); got shape {out.shape}")
        if out.dtype.kind not in "biuf":
            raise ValueError(f"measure {fn!r} must return numbers; got dtype {out.dtype}")
        out = out.astype(np.float64)
        bad = ~((out >= 0.0) & (out <= 1.0))  # also catches NaN
        if bad.any():
            q = int(np.flatnonzero(bad)[0])
            raise ValueError(f"measure {fn!r} must return values in [0, 1]; query {q} got {out[q]!r}")
        return out

    return per_query


def resolve_measure(measure: str | Callable[..., ArrayLike], empty: float | str = 0.0) -> MeasureFn:
    """The per-query measure ``E`` of ``measure`` (name or callable), validated (anything else is a
    ``ValueError`` from :func:`_builtin`)."""
    return _checked(measure) if callable(measure) else _builtin(measure, empty)


# ---- fitting state ------------------------------------------------------------------------
#: What a RankLib rollback restores: ``(P, scores, E_f, train, log_bound)`` of a :class:`_State` (a round
#: replaces those arrays, never changes them in place, so they need no copy).
_Snapshot = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float, float]


@dataclass
class _State:
    X: NDArray[np.float64]        # (n, F) features of the training queries, NaN -> 0
    y: NDArray[np.float64]
    group_ptr: NDArray[np.int64]
    measure: MeasureFn
    E: NDArray[np.float64]        # (F, m) E(pi(q_i, d_i, h_k), y_i), computed once
    P: NDArray[np.float64]        # (m,) current distribution over queries
    scores: NDArray[np.float64]   # (n,) f_{t-1} on the training documents
    E_f: NDArray[np.float64]      # (m,) E(f_{t-1}) per query (E(f_0) := 0)
    train: float                  # mean E(f_{t-1}) (-inf before round 1)
    log_bound: float              # sum_t [-delta_min^t + log sqrt(1 - phi(t)^2)]
    n_rounds: int
    v: NDArray[np.float64] | None = None  # (m,) query weights / their sum (None: uniform)
    t: int = 1                    # RankLib's iteration counter (rollbacks included)
    queue: list[int] = field(default_factory=list)
    removed: set[int] = field(default_factory=set)
    last: int = -1
    repeats: int = 0
    emitted: int = 0
    done: bool = False
    reason: str = "n_rounds reached"
    rounds: Iterator[Round] | None = None

    def snapshot(self) -> _Snapshot:
        return self.P, self.scores, self.E_f, self.train, self.log_bound

    def restore(self, b: _Snapshot) -> None:
        self.P, self.scores, self.E_f, self.train, self.log_bound = b


@dataclass
class _Step:
    """One round computed but not yet committed."""

    feature: int
    phi: float
    alpha: float
    scores: NDArray[np.float64]
    E_f: NDArray[np.float64]
    train: float
    delta_min: float


def feature_measures(X: NDArray[np.float64], y: NDArray[np.float64], group_ptr: NDArray[np.int64],
                     measure: MeasureFn) -> NDArray[np.float64]:
    """``(F, m)`` matrix of ``E(pi(q_i, d_i, h_k), y_i)``: every query ranked by every feature alone
    (``fit`` refuses an ``X`` without columns)."""
    return np.stack([measure(np.ascontiguousarray(X[:, k]), y, group_ptr) for k in range(X.shape[1])])


def _skip_empty_queries(X: NDArray[np.float64], y: NDArray[np.float64], group_ptr: NDArray[np.int64],
                        measure: MeasureFn, weights: NDArray[np.float64] | None = None
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64],
                                   NDArray[np.float64] | None]:
    """Drop the queries the measure skips (NaN: ``empty="skip"``), and their ``weights``; they carry
    no ranking information."""
    e = measure(np.zeros(y.shape[0]), y, group_ptr)
    keep = ~np.isnan(e)
    if keep.all():
        return X, y, group_ptr, weights
    rows = np.repeat(keep, np.diff(group_ptr))
    return (X[rows], y[rows], np.concatenate([[0], np.cumsum(np.diff(group_ptr)[keep])]).astype(np.int64),
            None if weights is None else weights[keep])


@dataclass(eq=False, repr=False)
class AdaRank(RankingBooster):
    """AdaRank (Xu and Li 2007, Figure 1) with single features as weak rankers.

    Args:
        measure: ``"ndcg@k"`` (AdaRank.NDCG uses ``"ndcg@5"``), ``"ndcg"``, ``"map"``
            (AdaRank.MAP), ``"map@k"``, or a callable ``(scores, labels, group_ptr) ->``
            per-query values in ``[0, 1]``.
        n_rounds: at most this many rounds ``T`` (RankLib iterations, rollbacks included).
        tolerance: keep a round only if the training measure improves by more than this
            (``None``: never stop on it); default ``0.002`` (RankLib's value; see the module
            docstring for RankLib's different use of it: ``-0.002`` here).
        update: ``"paper"`` ``P_{t+1} ∝ exp(-E(f_t))`` (default) or ``"multiplicative"``
            ``P_{t+1} ∝ P_t exp(-alpha_t E(f_t))`` (RankLib's rule).
        enqueue: RankLib's enqueueing of a feature chosen twice in a row (module docstring).
        max_consecutive: RankLib's ``-max``: remove a feature repeated this many times without
            any change of the training measure (``None``: off).
        empty: value of a query without relevant documents for the built-in measures:
            a number in ``[0, 1]`` (default ``0.0``, RankLib) or ``"skip"``.
        eval_metric, early_stopping_rounds, verbose, random_state: see
            :class:`~boostplug.boosters._estimator.RankingBooster` (AdaRank makes no random choice).

    Fitted attributes: ``rankers_`` (``{"kind": "feature", "feature": k}``), ``weights_``
    (the ``alpha_t``), ``history_`` (per round: ``feature``, ``alpha``, ``phi``,
    ``train_measure`` = mean E(f_t), ``delta_min``, ``bound`` = Theorem 1's lower bound,
    ``iteration`` = RankLib's counter), ``stop_reason_``, ``best_iteration_``, ``n_features_in_``.
    """

    measure: str | Callable[..., ArrayLike] = "ndcg@5"
    n_rounds: int = 500
    tolerance: float | None = 0.002
    update: str = "paper"
    enqueue: bool = False
    max_consecutive: int | None = None
    empty: float | str = 0.0

    # ---- parameters -----------------------------------------------------------------
    def _update_rule(self) -> str:
        """``"paper"`` or ``"multiplicative"``, else a ValueError naming ``update``."""
        return check_choice("update", self.update, UPDATES)

    def _check_params(self) -> MeasureFn:
        self._update_rule()
        tol = self.tolerance
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating))
                                or not math.isfinite(float(tol))):
            raise ValueError(f"tolerance must be a finite number or None, got {tol!r}")
        check_flag(self.enqueue, "enqueue")
        check_optional_count(self.max_consecutive, "max_consecutive")
        return resolve_measure(self.measure, self.empty)

    # ---- set-up -----------------------------------------------------------------------
    def _fit_init(self, data: FitData) -> _State:
        measure = self._check_params()
        if data.pairs is not None:
            raise ValueError("AdaRank boosts a query-level measure (MAP, NDCG) of the graded labels; "
                             "it takes no explicit pairs")
        X0 = np.nan_to_num(data.X, nan=0.0)  # h_k(x) = x_k, missing = 0 (as predict does)
        X, y, gp, qw = _skip_empty_queries(X0, data.y, data.group_ptr, measure, data.query_weights)
        m = gp.shape[0] - 1
        v = None if qw is None or m == 0 else qw / qw.sum()
        s = _State(X=X, y=y, group_ptr=gp, measure=measure, E=feature_measures(X, y, gp, measure),
                   P=np.full(m, 1.0 / max(m, 1)) if v is None else v.copy(), scores=np.zeros(X.shape[0]),
                   E_f=np.zeros(m), train=-math.inf, log_bound=0.0, n_rounds=self._check_n_rounds(), v=v)
        if m == 0:
            s.done, s.reason = True, "no training query with a relevant document (empty='skip')"
        s.rounds = self._phases(s)
        return s

    def _fit_round(self, s: _State, t: int) -> Round | None:
        rnd = next(s.rounds, None)
        if rnd is None:
            self._stop_reason = s.reason
        return rnd

    # ---- the algorithm ------------------------------------------------------------------
    def _choose(self, s: _State) -> int | None:
        """``argmax_k sum_i P_t(i) E(h_k)_i`` over the selectable features (lowest index on ties)."""
        phi = s.E @ s.P
        ok = np.ones(phi.shape[0], dtype=bool)
        ok[list(s.queue) + list(s.removed)] = False
        if not ok.any():
            return None
        vals = np.where(ok, phi, -np.inf)
        return argmax_first(vals, TIE_TOL * max(abs(vals.max()), 1.0))

    def _step(self, s: _State, k: int) -> _Step | None:
        """Round with feature ``k``: ``alpha_t``, ``f_t``, ``E(f_t)``, ``delta_min``; ``None`` if ``phi = 1``."""
        e = s.E[k]
        num = float(s.P @ (1.0 + e))
        den = float(s.P @ (1.0 - e))
        phi = float(s.P @ e)
        if den <= 0.0:
            return None
        alpha = 0.5 * math.log(num / den)
        scores = s.scores + alpha * s.X[:, k]
        E_f = s.measure(scores, s.y, s.group_ptr)
        delta_min = float(np.min(E_f - s.E_f - alpha * e))
        return _Step(k, phi, alpha, scores, E_f, self._mean(s, E_f), delta_min)

    @staticmethod
    def _mean(s: _State, e: NDArray[np.float64]) -> float:
        """Mean over the training queries, weighted by the query weights when ``fit`` had them."""
        return float(e.mean()) if s.v is None else float(s.v @ e)

    def _commit(self, s: _State, st: _Step) -> Round:
        """Accept the round: new distribution P_{t+1}, ensemble, Theorem 1 bound; the history record."""
        if self._update_rule() == "paper":
            u = np.exp(-st.E_f) if s.v is None else s.v * np.exp(-st.E_f)
        else:
            u = s.P * np.exp(-st.alpha * st.E_f)
        s.P = u / u.sum()
        s.scores, s.E_f, s.train = st.scores, st.E_f, st.train
        root = 1.0 - st.phi * st.phi  # sqrt(1 - phi(t)^2) of Theorem 1; 0 if rounding put phi at 1
        s.log_bound += -st.delta_min + (0.5 * math.log(root) if root > 0.0 else -math.inf)
        rec = {"feature": st.feature, "alpha": st.alpha, "phi": st.phi, "train_measure": st.train,
               "delta_min": st.delta_min, "bound": 1.0 - math.exp(s.log_bound), "iteration": s.t}
        return Round({"kind": "feature", "feature": st.feature}, st.alpha, rec)

    def _perfect(self, s: _State, k: int) -> Round | None:
        """``phi = 1``: feature ``k`` alone ranks every weighted query perfectly and ``alpha`` is
        infinite. Stop; in round 1 keep ``h = x_k`` with weight 1 (any positive weight ranks the same)."""
        s.done = True
        s.reason = f"feature {k} ranks every training query perfectly (phi = 1, alpha infinite)"
        if s.emitted:
            return None
        rec = {"feature": k, "alpha": math.inf, "phi": 1.0, "train_measure": self._mean(s, s.E[k]),
               "delta_min": math.nan, "bound": math.nan, "iteration": s.t}
        return Round({"kind": "feature", "feature": k}, 1.0, rec)

    def _stops(self, s: _State, st: _Step) -> bool:
        """The tolerance rule: the round fails unless mean E(f_t) - mean E(f_{t-1}) > tolerance."""
        if self.tolerance is None or st.train - s.train > float(self.tolerance):
            return False
        s.reason = (f"training measure did not improve by more than tolerance={self.tolerance} "
                    f"({s.train:.6g} -> {st.train:.6g}); round dropped")
        return True

    def _count_repeats(self, s: _State, st: _Step) -> None:
        """RankLib's ``-max``: remove a feature chosen ``max_consecutive`` times more with no change."""
        if self.max_consecutive is None:
            return
        if st.train != s.train or s.last != st.feature:
            s.repeats = 0
            s.removed.clear()
            return
        s.repeats += 1
        if s.repeats == self.max_consecutive:
            s.repeats = 0
            s.removed.add(st.feature)

    def _phases(self, s: _State) -> Iterator[Round]:
        """RankLib's ``learn()``: an enqueueing phase, then one phase per released feature."""
        if s.done:
            return
        yield from self._learn(s, bool(self.enqueue))
        for i in range(len(s.queue) - 1, -1, -1):    # (only an enqueueing phase queues a feature)
            if s.done:
                return
            del s.queue[i]
            yield from self._learn(s, False)

    def _learn(self, s: _State, with_enqueue: bool) -> Iterator[Round]:
        """One phase (RankLib's ``learn(t, withEnqueue)``); yields the rounds it keeps.

        While enqueueing, a round is held back until the next iteration shows it is not
        rolled back.
        """
        pending: tuple[Round, _Snapshot] | None = None
        while s.t <= s.n_rounds:
            k = self._choose(s)
            if k is None:
                s.reason = "no selectable feature left"
                break
            if with_enqueue and k == s.last and pending is not None:
                s.queue.append(k)
                s.restore(pending[1])
                pending = None
                s.t += 1
                continue
            if pending is not None:
                s.emitted += 1
                yield pending[0]
                pending = None
            backup = s.snapshot() if with_enqueue else None
            st = self._step(s, k)
            if st is None:
                rnd = self._perfect(s, k)
                if rnd is not None:
                    s.emitted += 1
                    yield rnd
                return
            if not with_enqueue:
                self._count_repeats(s, st)
            s.last = k
            if self._stops(s, st):
                break
            rnd = self._commit(s, st)
            s.t += 1
            if backup is not None:
                pending = (rnd, backup)
            else:
                s.emitted += 1
                yield rnd
        else:
            s.reason = "n_rounds reached"
        if pending is not None:
            s.emitted += 1
            yield pending[0]
