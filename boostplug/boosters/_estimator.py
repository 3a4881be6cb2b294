"""The estimator loop every reference booster shares: input handling, the round loop over a
linear ensemble of weak rankers (:mod:`boostplug.boosters._weak_rankers`), eval sets, early
stopping, callbacks, progress, Ctrl-C, staged prediction, ``score`` and feature importances.

Subclasses implement three hooks (see :class:`RankingBooster`); the data a fit hands them is
:class:`~boostplug.boosters._fit_data.FitData`, and the JSON model file
(``to_dict``/``from_dict``/``save``/``load``) is :class:`~boostplug.boosters._model_file.ModelFile`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from .. import metrics
from .._core import dispatch
from .._core.blas import fit_blas
from .._core.early_stopping import BestRound
from .._memory import check_fits
from .._sklearn_folds import check_scored_queries, record_fitted_queries
from .._validation import check_labels, check_optional_rounds, check_rounds, check_scores
from ..groups import check_group_ptr, group_ptr_of
from ._fit_data import FitData, check_query_weights, check_X
from ._model_file import ModelFile
from ._weak_rankers import evaluate_rankers

__all__ = ["RankingBooster", "Round", "BYTES_PER_ROUND"]

#: The least memory a fitted round keeps (its weak ranker, weight and ``history_`` record:
#: 620-1030 bytes measured across the boosters): ``n_rounds`` times this beyond the memory
#: available is refused before training.
BYTES_PER_ROUND = 512


@dataclass
class Round:
    """What one boosting round chose.

    ``ranker`` is a weak-ranker dict (see :mod:`boostplug.boosters._weak_rankers`), ``weight``
    its coefficient in the ensemble, ``record`` the paper quantities of the round
    (Z_t, training losses, ...) that go into ``history_``.
    Return ``None`` from ``_fit_round`` with ``stop_reason`` set to stop.
    """

    ranker: dict[str, Any]
    weight: float
    record: dict[str, Any] = field(default_factory=dict)


def _watched_set(index: Any, n_evals: int) -> int:
    """``fit(early_stopping_set=...)`` as an index into the ``n_evals`` eval sets (0 without any)."""
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"early_stopping_set must be an int (an index into eval_set), got {index!r}")
    if index != 0 and not -n_evals <= index < n_evals:
        raise ValueError(f"early_stopping_set={int(index)}"
                         + (f", but eval_set has {n_evals} sets" if n_evals else " needs an eval_set"))
    return int(index) % max(n_evals, 1)


@dataclass(eq=False, repr=False, kw_only=True)
class RankingBooster(ModelFile, BaseEstimator):
    """Base class of the reference boosters (scikit-learn style).

    Subclasses are dataclasses of their parameters (``@dataclass(eq=False, repr=False)``: the
    generated ``__init__`` stores them, and scikit-learn reads its signature), which must include
    ``n_rounds`` (the common parameters below are this class's fields, keyword-only, last), and
    implement:

    * ``_fit_init(data: FitData) -> state``: everything computed once
      (pairs, candidate stumps, per-feature measures, the initial distribution);
    * ``_fit_round(state, t: int) -> Round | None``: one round; ``None`` stops, with the reason in
      ``self._stop_reason`` (set with a round: stop after it).

    The common parameters (``n_rounds``, whose records, :data:`BYTES_PER_ROUND` or more each, must
    fit in the memory available; ``eval_metric``, ``early_stopping_rounds`` on the watched eval
    set, ``verbose``, ``random_state``): docs/boosters.md, "Common API".

    scikit-learn: :meth:`score` is the mean NDCG@10, the default scoring of ``cross_validate`` and
    ``GridSearchCV``; with metadata routing on they route ``qid`` to ``fit`` and ``score`` (requested
    by default): docs/boosters.md, "scikit-learn model selection".

    ``to_dict``, ``from_dict``, ``save`` and ``load`` (the JSON model file, with the fitted
    attributes a subclass lists in ``_fitted_extras``) come from
    :class:`~boostplug.boosters._model_file.ModelFile`.
    """

    eval_metric: str = "ndcg@10"
    early_stopping_rounds: int | None = None
    verbose: int = 0
    random_state: int | None = None

    # qid is how these estimators are told the queries: routed to fit and score unless refused
    __metadata_request__fit = {"qid": True, "doc": True, "pairs": True}
    __metadata_request__score = {"qid": True}

    # ---- hooks --------------------------------------------------------------
    def _fit_init(self, data: FitData) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_round(self, state: Any, t: int) -> Round | None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- fitting ------------------------------------------------------------
    @fit_blas()  # a new context per call
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
        pairs: ArrayLike | None = None,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike]] | None = None,
        callback: Callable[[int, dict[str, Any]], bool | None] | None = None,
        sample_weight: ArrayLike | None = None,
        doc: ArrayLike | None = None,
        early_stopping_set: int = 0,
    ) -> "RankingBooster":
        """Fit on ``X`` (NaN = missing), grades ``y`` and query ids ``qid``
        (or group sizes ``group``).

        Args:
            pairs: explicit preference pairs ``(n_pairs, 2)`` of row indices,
                preferred row first; used instead of the label-derived critical pairs
                by the pairwise boosters. With ``sample_weight`` both rows of a pair must
                belong to one query (whose weight the pair takes). Or a
                :class:`~boostplug.keyed_pairs.KeyedPairs` table (unweighted), mapped onto these
                rows by their ``qid`` and ``doc`` keys: pairs of queries not among them are left
                out, so one table serves every cross-validation fold.
            doc: one document key per row (with keyed ``pairs``); routed like ``qid``.
            sample_weight: per-query weights ``>= 0``: one per query, or one per row, equal
                within each query. An integer weight ``w`` trains exactly as if the query were
                repeated ``w`` times (each booster's docstring says which quantity it weights);
                a zero weight removes the query (its rows, pairs and candidate thresholds);
                equal weights are no weights.
            eval_set: list of ``(X, y, qid)`` validation sets, each with as many columns
                as ``X``; ``eval_metric`` is recorded on each every round. One of them, the
                first unless ``early_stopping_set`` names another, drives early stopping (when
                ``early_stopping_rounds`` is set) and ``best_iteration_``; the others are only
                recorded.
            early_stopping_set: the index in ``eval_set`` of the set that drives early stopping
                and ``best_iteration_`` (default 0, the first; ``-1``, the last).
            callback: called after every round as ``callback(t, record)`` (``record`` is the
                round's ``history_`` entry); a true return value stops training
                (``stop_reason_ == "stopped by callback"``).

        Ctrl-C during fit stops it and keeps the rounds done so far
        (``stop_reason_ == "interrupted"``); a round is recorded whole or not at all
        (``rankers_``, ``weights_`` and ``history_`` always have the same length).
        """
        record_fitted_queries(self, qid, y)
        data = FitData.prepare(X, y, qid=qid, group=group, pairs=pairs, sample_weight=sample_weight,
                               random_state=self.random_state, doc=doc,
                               caller=f"{type(self).__name__}.fit")
        n_rounds = self._check_n_rounds()
        esr = check_optional_rounds(self.early_stopping_rounds, "early_stopping_rounds")
        verbose = self._check_verbose()
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable as callback(t, record), got {callback!r}")
        evals = [self._prepare_eval(e, i, data.X.shape[1]) for i, e in enumerate(eval_set or [])]
        scorers = [self._eval_scorer(ye, ge) for _, ye, ge in evals]
        if esr is not None and not evals:
            raise ValueError("early_stopping_rounds needs an eval_set")
        watched = _watched_set(early_stopping_set, len(evals))

        self.n_features_in_ = data.X.shape[1]
        self.rankers_: list[dict[str, Any]] = []
        self.weights_: list[float] = []
        self.history_: list[dict[str, Any]] = []
        self.stop_reason_ = "n_rounds reached"
        self._stop_reason: str | None = None

        state = self._fit_init(data)
        eval_scores = [np.zeros(e[0].shape[0]) for e in evals]
        rule = BestRound(esr, not evals or metrics.higher_is_better(self.eval_metric))  # r1/r2: minimised
        t0 = time.perf_counter()
        try:
            for t in range(n_rounds):
                with dispatch.booster_round():
                    rnd = self._fit_round(state, t)
                if rnd is None:
                    self.stop_reason_ = self._stop_reason or "no useful weak ranker"
                    break
                # the whole record first (validation metrics included), then the round is added
                rec = {"round": t + 1, "ranker": rnd.ranker, "weight": float(rnd.weight)}
                rec.update(rnd.record)
                new_scores = []
                for i, (Xe, ye, ge) in enumerate(evals):
                    new_scores.append(eval_scores[i] + rnd.weight * evaluate_rankers(Xe, [rnd.ranker])[:, 0])
                    rec[f"valid_{i}_{self.eval_metric}"] = float(scorers[i](new_scores[i]))
                rec["seconds"] = time.perf_counter() - t0
                eval_scores = new_scores
                self.rankers_.append(rnd.ranker)
                self.weights_.append(float(rnd.weight))
                self.history_.append(rec)
                if verbose and ((t + 1) % verbose == 0 or t == 0):
                    shown = {k: v for k, v in rec.items() if isinstance(v, float)}
                    print(f"[{type(self).__name__}] round {t + 1}: "
                          + " ".join(f"{k}={v:.5g}" for k, v in shown.items()), file=sys.stderr)
                if evals and rule.update(rec[f"valid_{watched}_{self.eval_metric}"]):
                    self.stop_reason_ = (f"early stopping: no {self.eval_metric} gain on eval_set[{watched}] "
                                         f"for {esr} rounds")
                    break
                if callback is not None and callback(t + 1, rec):
                    self.stop_reason_ = "stopped by callback"
                    break
                if self._stop_reason is not None:
                    self.stop_reason_ = self._stop_reason
                    break
        except KeyboardInterrupt:
            # an interrupt between the three appends leaves a partial round: drop it
            n = min(len(self.rankers_), len(self.weights_), len(self.history_))
            del self.rankers_[n:], self.weights_[n:], self.history_[n:]
            self.stop_reason_ = "interrupted"
            print(f"[{type(self).__name__}] interrupted: keeping {len(self.rankers_)} rounds", file=sys.stderr)
        self.best_iteration_: int | None = rule.best or None
        if esr is not None and rule.best:  # stopped or not (all NaN: every round kept)
            del self.rankers_[rule.best:], self.weights_[rule.best:]
        return self

    def _check_n_rounds(self) -> int:
        """``n_rounds`` in ``[1, ROUNDS_MAX]``, and its rounds' records within the memory available."""
        n = check_rounds(getattr(self, "n_rounds", None), "n_rounds")
        check_fits(n * BYTES_PER_ROUND, f"n_rounds={n}: the rounds' records ({BYTES_PER_ROUND} bytes or more each)",
                   "train fewer rounds")
        return n

    def _check_verbose(self) -> int:
        """``verbose``: ``False``/``0`` (silent), ``True`` (every round) or ``k >= 1`` (every ``k`` rounds)."""
        v = self.verbose
        if isinstance(v, (bool, np.bool_)):
            return int(v)
        if not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"verbose must be a bool or an integer >= 0 (print every verbose rounds), got {v!r}")
        return int(v)

    def _prepare_eval(self, e: Any, i: int, n_features: int
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
        """``eval_set[i]`` validated against the training ``X`` of this fit (``n_features`` columns)."""
        if not isinstance(e, (tuple, list)) or len(e) != 3:
            raise ValueError(f"eval_set[{i}] must be a tuple (X, y, qid)")
        Xe = check_X(e[0])
        if Xe.shape[1] != n_features:
            raise ValueError(f"eval_set[{i}] X has {Xe.shape[1]} features but the training X has {n_features}")
        ye = check_labels(e[1], name=f"eval_set[{i}] y")
        if ye.shape[0] != Xe.shape[0]:
            raise ValueError(f"eval_set[{i}] y has length {ye.shape[0]} but its X has {Xe.shape[0]} rows")
        return Xe, ye, group_ptr_of(Xe.shape[0], e[2], None, f"eval_set[{i}]", caller=f"{type(self).__name__}.fit")

    def _eval_scorer(self, y: NDArray[np.float64], group_ptr: NDArray[np.int64]
                     ) -> Callable[[NDArray[np.float64]], float]:
        """``eval_metric`` of one eval set's scores; ``r1``/``r2`` find the set's label levels once, not every round."""
        name = self.eval_metric
        if metrics.higher_is_better(name):
            fn = metrics.by_name(name)
            return lambda scores: fn(scores, y, group_ptr)
        steps = metrics.StepCounts(y, group_ptr)
        r1 = metrics.parse_name(name)[0] == "r1"
        return lambda scores: steps.loss(check_scores(scores), r1)

    # ---- prediction -----------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "rankers_"):
            # NotFittedError is a ValueError and an AttributeError (hasattr on fitted properties)
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """``(n_features_in_,)``: the sum of ``|weight_t|`` over the weak rankers that use each
        feature (a stump's or a feature ranker's coefficient in ``F``), normalised to sum 1;
        all zeros when the model has no ranker. AdaRank's weights multiply raw feature values,
        so its importances depend on the features' scales."""
        self._check_fitted()
        imp = np.zeros(int(self.n_features_in_))
        for r, w in zip(self.rankers_, self.weights_):
            imp[int(r["feature"])] += abs(float(w))
        total = imp.sum()
        return imp / total if total > 0 else imp

    def score(self, X: ArrayLike, y: ArrayLike, qid: ArrayLike | None = None,
              group_ptr: ArrayLike | None = None, sample_weight: ArrayLike | None = None) -> float:
        """Mean NDCG@10 of :meth:`predict` over the queries of ``(X, y, qid)`` (or ``group_ptr``):
        :func:`boostplug.metrics.ndcg` with its default conventions (gain ``2^r - 1``, ``log2``
        discount, a query without relevant documents counts 1, ties in input order).
        ``sample_weight`` (per query, or per row equal within each query) gives the weighted
        mean over queries. Always NDCG@10, whatever ``eval_metric`` is, so that scores compare
        across parameter settings in a model search. With scikit-learn's metadata routing on, rows
        whose query ids the booster was fitted on are refused, unless they are the fitted rows
        themselves (:func:`boostplug._sklearn_folds.check_scored_queries`)."""
        from ..frameworks._metric_spec import MetricSpec

        if qid is not None and group_ptr is not None:
            raise ValueError("pass either qid or group_ptr, not both")
        check_scored_queries(self, qid, y, f"{type(self).__name__}.score")
        scores = self.predict(X)
        ya = check_labels(y, name="y")
        if ya.shape[0] != scores.shape[0]:
            raise ValueError(f"y has length {ya.shape[0]} but X has {scores.shape[0]} rows")
        if group_ptr is not None:
            gp = check_group_ptr(group_ptr, n_docs=scores.shape[0])
        else:
            gp = group_ptr_of(scores.shape[0], qid, None, caller=f"{type(self).__name__}.score")
        qw = None if sample_weight is None else check_query_weights(sample_weight, gp)
        return MetricSpec("ndcg@10")(scores, ya, gp, qw)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``F(x) = sum_t weight_t h_t(x)`` of the fitted ensemble.

        Summed round by round, ``((0 + w_1 h_1) + w_2 h_2) + ...``: the order training and
        :meth:`staged_predict` use, so the last staged scores equal these bit for bit and
        documents tied during training stay tied (a matrix product may differ in the last
        bit and break such ties differently).
        """
        self._check_fitted()
        Xa = check_X(X, self.n_features_in_)
        out = np.zeros(Xa.shape[0])
        for out in self._staged(Xa, check=False):
            pass
        if not np.isfinite(out).all():   # a non-finite score stays so: find its round again
            for _ in self._staged(Xa):
                pass
        return out

    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Scores after every round (round 1, 2, ...), for choosing the round on validation data."""
        self._check_fitted()
        return self._staged(check_X(X, self.n_features_in_))

    def _staged(self, Xa: NDArray[np.float64], check: bool = True) -> Iterator[NDArray[np.float64]]:
        """Scores after each round; with ``check``, an overflow is refused at its round."""
        s = np.zeros(Xa.shape[0])
        for t, (r, w) in enumerate(zip(self.rankers_, self.weights_)):
            h = evaluate_rankers(Xa, [r])[:, 0]
            with np.errstate(over="ignore", invalid="ignore"):
                s = s + w * h
            if check and not np.isfinite(s).all():
                self._overflowed(s, t, r, w, h)
            yield s

    def _overflowed(self, s: NDArray[np.float64], t: int, ranker: dict[str, Any], w: float,
                    h: NDArray[np.float64]) -> None:
        """A score overflowed: a feature ranker outputs the feature value itself, so a weight that
        a valid model file may hold (stumps bound the sum of weights) can still overflow on a
        large enough feature; refused, naming the first row, rather than predicting inf."""
        row = int(np.flatnonzero(~np.isfinite(s))[0])
        what = (f"feature {int(ranker['feature'])} = {float(h[row])!r}" if ranker["kind"] == "feature"
                else f"{ranker['kind']} output {float(h[row])!r}")
        raise ValueError(f"{type(self).__name__}.predict: row {row}: round {t + 1} (weight {float(w)!r} times "
                         f"{what}) makes the score {float(s[row])!r}; its scores are not representable in float64")
