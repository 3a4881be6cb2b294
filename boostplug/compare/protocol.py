"""What one (method, fold) run does: train the method, choose its round on the validation part by
one metric (maximised, or minimised for the losses r1/r2), and report that round's metrics on the
test part, every metric under the run's conventions (:mod:`.conventions`)."""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

from .._core.early_stopping import BestRound
from .conventions import REPORT_METRICS, Conventions, higher_is_better
from .methods import TREE_PARAMS, Method, get_method

__all__ = ["REPORT_METRICS", "CURVE_METRIC", "Result", "metric_curve", "choose_round", "run_method", "degenerate",
           "reported_metrics"]

#: The metric of the curves and of the significance test.
CURVE_METRIC = "ndcg@10"


@dataclass
class Result:
    """One method on one fold: the chosen round, test metrics (mean and per query), curves."""

    method: str
    framework: str
    fold: int
    best_round: int
    rounds_trained: int
    seconds: float
    select_metric: str
    test: dict[str, float]
    test_per_query: dict[str, list[float]] = field(repr=False, default_factory=dict)
    #: the query id (as read from the file) of each entry of ``test_per_query``'s lists
    test_qids: list[Any] = field(repr=False, default_factory=list)
    vali_curve: list[float] = field(repr=False, default_factory=list)
    vali_ndcg10_curve: list[float] = field(repr=False, default_factory=list)
    test_curve: list[float] = field(repr=False, default_factory=list)
    #: the trainer's notes (a booster's ``stop_reason``), ``tuning`` (the search's record),
    #: ``degenerate`` (why the chosen model ranks nothing: :func:`degenerate`) when it does not,
    #: ``relevant_queries`` (the test queries with a document labelled above 0) and ``warnings``
    #: (those the run raised, :mod:`.run_warnings`)
    info: dict[str, Any] = field(repr=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reported_metrics(results: Sequence[Result]) -> tuple[str, ...]:
    """The test metrics ``results`` carry (``--metrics``, in its order); :data:`REPORT_METRICS` without results."""
    return tuple(results[0].test) if results else REPORT_METRICS


def choose_round(curve: Sequence[float], metric: str) -> int:
    """0-based index of the round early stopping would serve from ``curve`` (:class:`BestRound`): the
    first best value, the maximum or the minimum when ``metric`` is a loss
    (:func:`.conventions.higher_is_better`), NaN never best (all NaN: the last). -1 when empty."""
    rule = BestRound.of(curve, higher_is_better(metric))
    return (rule.best or rule.rounds) - 1


def degenerate(scores: NDArray[np.float64], round_: int) -> str | None:
    """Why the model chosen at ``round_`` (1-based; 0: no round trained) ranks nothing, from its
    test ``scores``: one value for every document (its trees all stopped at one leaf, say: a
    gradient that overflowed, a zero gradient), so that its metrics measure the tie convention,
    not a ranking; ``None`` when its scores differ (or there are fewer than two documents)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size < 2:
        return None
    if round_ < 1:
        return "no round trained: every test document scores 0"
    same = np.all(s == s[0]) or np.all(np.isnan(s))
    return f"round {round_} predicts one value ({float(s[0]):.6g}) for every test document" if same else None


class _Bar:
    """A one-line progress bar on a stream (drawn only when ``enabled``)."""

    def __init__(self, label: str, stream: TextIO, enabled: bool) -> None:
        self.label, self.stream, self.enabled = label, stream, enabled
        self.t0 = time.perf_counter()
        self._last = -1.0
        self._closed = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or self._closed:
            return
        now = time.perf_counter()
        if done < total and now - self._last < 0.2:
            return
        self._last = now
        width = 24
        fill = int(width * min(done, total) / max(total, 1))
        eta = f" ETA {(now - self.t0) / done * (total - done):6.1f}s" if 0 < done < total else ""
        self.stream.write(f"\r  {self.label:<32} [{'#' * fill}{'.' * (width - fill)}] {done}/{total} "
                          f"{now - self.t0:6.1f}s{eta}")
        if done >= total:
            self.stream.write("\n")
            self._closed = True
        self.stream.flush()


def metric_curve(name: str, scores: Sequence[NDArray[np.float64]], data: Any,
                 conventions: Conventions | None = None) -> list[float]:
    """Metric ``name`` (under ``conventions``, default the library's) of each round's scores on
    ``data``: the curve that :func:`choose_round` picks the round from."""
    fn = (conventions or Conventions()).metric(name)
    return [float(fn(s, data.y, data.group_ptr)) for s in scores]


def _select_round(scores: Sequence[NDArray[np.float64]], vali: Any, select: str,
                  conv: Conventions) -> tuple[list[float], int]:
    """The validation curve of ``select`` and the round :func:`choose_round` picks from it (0-based)."""
    curve = metric_curve(select, scores, vali, conv)
    return curve, choose_round(curve, select)


def run_method(name: str, train: Any, vali: Any, test: Any, *, rounds: int, metric: str = "ndcg@10",
               tree_params: dict[str, Any] | None = None, seed: int = 0, fold: int = 0, threads: int = 0,
               progress: bool = False, stream: TextIO = sys.stderr, tune: int = 0,
               conventions: Conventions | None = None, method: Method | None = None) -> Result:
    """Train one method, choose its round on ``vali`` by ``metric`` (the method's own
    ``select_metric`` when it has one), evaluate that round on ``test``; every metric, the
    selection's included, under ``conventions`` (default the library's). ``tune > 0``: search the
    method's parameters first (:mod:`.tuning`, that many trials on ``vali``) and evaluate the
    best trial's model; its record is ``info["tuning"]``. ``method``: train this method under ``name``
    instead of the registered one (the click protocol builds its methods per fold)."""
    method = get_method(name) if method is None else method
    select = method.select_metric or metric
    conv = conventions or Conventions()
    tp = {**TREE_PARAMS, **(tree_params or {})}
    if tune > 0:
        from .tuning import tune as search

        def train_one(m: Any, checkpoint: Any) -> Any:
            return m.train(train, vali, test, rounds=rounds, tree_params=tp, seed=seed, threads=threads,
                           checkpoint=checkpoint)

        def score(t: Any) -> tuple[float, int]:
            curve, k = _select_round(t.vali_scores, vali, select, conv)
            return (curve[k], k + 1) if k >= 0 else (float("nan"), 0)

        select_fn = conv.metric(select)
        bar = _Bar(f"{name} (fold {fold + 1}) trials", stream, progress)
        trained, record = search(method, tune, train_one, score, metric=select, seed=seed, fold=fold, progress=bar,
                                 value=lambda s: float(select_fn(s, vali.y, vali.group_ptr)))
        trained.info = {**trained.info, "tuning": asdict(record)}
    else:
        bar = _Bar(f"{name} (fold {fold + 1})", stream, progress)
        trained = method.train(train, vali, test, rounds=rounds, tree_params=tp, seed=seed, threads=threads,
                               progress=bar)
    vali_curve, best = _select_round(trained.vali_scores, vali, select, conv)
    vali_ndcg = (vali_curve if select == CURVE_METRIC else
                 metric_curve(CURVE_METRIC, trained.vali_scores, vali, conv))
    test_curve = metric_curve(CURVE_METRIC, trained.test_scores, test, conv)
    scores = trained.test_scores[best] if best >= 0 else np.zeros(test.n_docs)
    per_query = {m: conv.metric(m)(scores, test.y, test.group_ptr, per_query=True) for m in conv.metrics}
    flat = degenerate(scores, best + 1)
    # the test queries with a relevant document: the others score the same for every method (the verdict's count)
    relevant = int(np.count_nonzero(np.maximum.reduceat(test.y, test.group_ptr[:-1]) > 0)) if test.n_docs else 0
    info = {**trained.info, "relevant_queries": relevant, **({} if flat is None else {"degenerate": flat})}
    return Result(
        method=name, framework=method.framework, fold=fold, best_round=best + 1,
        rounds_trained=len(trained.test_scores), seconds=trained.seconds, select_metric=select,
        test={m: float(np.nanmean(v)) for m, v in per_query.items()},
        test_per_query={m: [float(x) for x in v] for m, v in per_query.items()},
        test_qids=np.asarray(test.qid)[test.group_ptr[:-1]].tolist(),
        vali_curve=vali_curve, vali_ndcg10_curve=vali_ndcg, test_curve=test_curve, info=info,
    )
