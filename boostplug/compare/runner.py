"""One protocol for every method: same parts, same tree parameters, the round chosen
on the validation part by one metric, metrics reported on the test part."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

from .. import metrics
from ..data import RankingData, load_example, train_test_split_by_query
from .methods import TREE_PARAMS, get_method

__all__ = ["REPORT_METRICS", "Result", "example_split", "run_method", "run", "format_table"]

#: Test metrics every comparison reports (boostplug's default conventions).
REPORT_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")


@dataclass
class Result:
    method: str
    framework: str
    fold: int
    best_round: int
    seconds: float
    test: dict[str, float]
    test_per_query: dict[str, list[float]] = field(repr=False, default_factory=dict)
    vali_curve: list[float] = field(repr=False, default_factory=list)
    test_curve: list[float] = field(repr=False, default_factory=list)


def example_split(seed: int = 0, vali_fraction: float = 0.2) -> tuple[RankingData, RankingData, RankingData]:
    """The embedded LightGBM example: its train/test as shipped, a validation part
    (``vali_fraction`` of the training queries, seeded) split off the training part."""
    train_full, test = load_example()
    train, vali = train_test_split_by_query(train_full, test_size=vali_fraction, seed=seed)
    return train, vali, test


class _Bar:
    """A one-line progress bar on stderr (only when it is a terminal, or when forced)."""

    def __init__(self, label: str, stream: TextIO, enabled: bool) -> None:
        self.label, self.stream, self.enabled = label, stream, enabled
        self.t0 = time.perf_counter()
        self._last = -1.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if done < total and now - self._last < 0.2:
            return
        self._last = now
        width = 24
        fill = int(width * done / max(total, 1))
        self.stream.write(f"\r  {self.label:<28} [{'#' * fill}{'.' * (width - fill)}] {done}/{total} "
                          f"{now - self.t0:5.1f}s")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def run_method(name: str, train: RankingData, vali: RankingData, test: RankingData, *, rounds: int,
               metric: str = "ndcg@10", tree_params: dict[str, Any] | None = None, seed: int = 0,
               fold: int = 0, progress: bool = False, stream: TextIO = sys.stderr) -> Result:
    """Train one method, choose its round on ``vali`` by ``metric``, evaluate on ``test``."""
    method = get_method(name)
    select = metrics.by_name(metric)
    tp = dict(TREE_PARAMS)
    tp.update(tree_params or {})
    bar = _Bar(f"{name} (fold {fold + 1})", stream, progress)
    trained = method.train(train, vali, test, rounds=rounds, tree_params=tp, seed=seed, progress=bar)
    vali_curve = [float(select(s, vali.y, vali.group_ptr)) for s in trained.vali_scores]
    test_curve = [float(select(s, test.y, test.group_ptr)) for s in trained.test_scores]
    best = int(np.argmax(vali_curve)) if vali_curve else -1
    scores = trained.test_scores[best] if best >= 0 else np.zeros(test.n_docs)
    per_query: dict[str, NDArray[np.float64]] = {
        m: metrics.by_name(m)(scores, test.y, test.group_ptr, per_query=True) for m in REPORT_METRICS
    }
    return Result(
        method=name, framework=method.framework, fold=fold, best_round=best + 1, seconds=trained.seconds,
        test={m: float(np.nanmean(v)) for m, v in per_query.items()},
        test_per_query={m: [float(x) for x in v] for m, v in per_query.items()},
        vali_curve=vali_curve, test_curve=test_curve,
    )


def run(methods: Sequence[str], folds: Sequence[tuple[RankingData, RankingData, RankingData]], *, rounds: int,
        metric: str = "ndcg@10", tree_params: dict[str, Any] | None = None, seed: int = 0,
        progress: bool = False, stream: TextIO = sys.stderr) -> list[Result]:
    """Every method on every fold. Ctrl-C keeps the results of the methods that finished."""
    for name in methods:
        get_method(name)  # fail on a bad name before any training
    results: list[Result] = []
    try:
        for f, (train, vali, test) in enumerate(folds):
            for name in methods:
                results.append(run_method(name, train, vali, test, rounds=rounds, metric=metric,
                                          tree_params=tree_params, seed=seed, fold=f, progress=progress,
                                          stream=stream))
    except KeyboardInterrupt:
        stream.write(f"\ninterrupted: reporting the {len(results)} finished runs\n")
    return results


def format_table(results: Sequence[Result]) -> str:
    """Mean (and std over folds when there are several) per method; best per column marked ``*``."""
    names = list(dict.fromkeys(r.method for r in results))
    cols = list(REPORT_METRICS) + ["seconds"]
    stats: dict[str, dict[str, tuple[float, float]]] = {}
    for n in names:
        rs = [r for r in results if r.method == n]
        stats[n] = {}
        for c in cols:
            v = np.array([r.seconds if c == "seconds" else r.test[c] for r in rs])
            stats[n][c] = (float(v.mean()), float(v.std()) if v.size > 1 else float("nan"))
    best = {}
    for c in cols:
        vals = [stats[n][c][0] for n in names]
        best[c] = (min if c == "seconds" else max)(vals) if vals else None
    rounds = {n: int(np.mean([r.best_round for r in results if r.method == n])) for n in names}
    header = ["method", "round"] + [c.upper() if c != "seconds" else "train s" for c in cols]
    rows = []
    for n in names:
        row = [n, str(rounds[n])]
        for c in cols:
            mean, std = stats[n][c]
            cell = f"{mean:.2f}" if c == "seconds" else f"{mean:.4f}"
            if not np.isnan(std):
                cell += f"±{std:.2f}" if c == "seconds" else f"±{std:.4f}"
            if best[c] is not None and mean == best[c] and len(names) > 1:
                cell += "*"
            row.append(cell)
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    out = [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
    return "\n".join(out)
