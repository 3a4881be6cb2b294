"""MQ2008 5-fold table of the reference boosters (issue 4, "Proof").

For every fold of MQ2008 (parts ``S1..S5`` -> five folds, :func:`boostplug.data.load_letor_folds`;
or, with ``--data example``, the one fold of the embedded LightGBM example as ``boostplug compare``
splits it, :func:`boostplug.compare.data.example_split`) and every booster below: fit on train
with ``n_rounds`` rounds, choose the round on vali by NDCG@10 (MAP for AdaRank.MAP) through
``staged_predict`` (first best round), and report test NDCG@1/3/5/10 and MAP at that round, plus
the fit seconds.

Metric conventions (the LETOR evaluation script's): a query with no relevant document scores 0
(``empty=0.0``); MAP counts labels >= 1 as relevant; gain ``2^r - 1``, discount
``1/log2(rank + 1)``. Ties between equal scores (frequent with stump ensembles) are averaged
over all their orders (``ties="average"``), so no score depends on the order of the rows in
the file.

Boosters (all ``random_state=0``):

* RankBoost Rb-d, Rb-c, RankBoost+ (efficient, Algorithm 2): 255 sampled thresholds per feature;
* AdaRank.MAP / AdaRank.NDCG@5, paper defaults (``update="paper"``, ``tolerance=0.002``) and
  RankLib-style (``update="multiplicative"``, RankLib's distribution update, ``enqueue=True``,
  ``max_consecutive=5``, ``tolerance=-0.002``: RankLib's stop rule), at most 500 rounds;
* MPBoost with the BINARY, LDD (alpha 0.2), LOGDD (lambda 3), LOGITDD (beta 0.5) DDFs;
* NDCG_Boost (sigma 2, the paper's ``F = 2 f``).

Usage::

    nice env NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/booster_table.py \\
        [--data ../shared/data/MQ2008 | --data example] [--rounds 300] [--folds 1 2 3 4 5] \\
        [--json docs/results/booster_table.json]

It imports the boostplug of this checkout (the repository root goes first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's boostplug, not an installed copy

from boostplug import metrics
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost
from boostplug.data import RankingData, load_letor_folds

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "MQ2008"
TEST_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")
RANKLIB_ADARANK = {"update": "multiplicative", "enqueue": True, "max_consecutive": 5, "tolerance": -0.002}


def score(name: str, scores: np.ndarray, d: RankingData) -> float:
    """``name`` (``ndcg@k`` or ``map``) with the table's conventions (empty 0, averaged ties)."""
    base, k = metrics.parse_name(name)
    fn = metrics.ndcg if base == "ndcg" else metrics.average_precision
    return float(fn(scores, d.y, d.group_ptr, k, empty=0.0, ties="average"))


def boosters(rounds: int) -> list[tuple[str, Callable[[], Any], str]]:
    """``(label, factory, selection metric)`` of every table row."""
    out: list[tuple[str, Callable[[], Any], str]] = [
        ("Rb-d", lambda: RankBoost(variant="rb-d", n_rounds=rounds, random_state=0), "ndcg@10"),
        ("Rb-c", lambda: RankBoost(variant="rb-c", n_rounds=rounds, random_state=0), "ndcg@10"),
        ("RankBoost+", lambda: RankBoost(variant="rankboost+", n_rounds=rounds, random_state=0), "ndcg@10"),
        ("AdaRank.MAP (paper)", lambda: AdaRank(measure="map", n_rounds=500), "map"),
        ("AdaRank.NDCG@5 (paper)", lambda: AdaRank(measure="ndcg@5", n_rounds=500), "ndcg@10"),
        ("AdaRank.MAP (RankLib)", lambda: AdaRank(measure="map", n_rounds=500, **RANKLIB_ADARANK), "map"),
        ("AdaRank.NDCG@5 (RankLib)", lambda: AdaRank(measure="ndcg@5", n_rounds=500, **RANKLIB_ADARANK), "ndcg@10"),
    ]
    for ddf in ("binary", "ldd", "logdd", "logitdd"):
        out.append((f"MPBoost.{ddf.upper()}", lambda ddf=ddf: MPBoost(ddf=ddf, n_rounds=rounds, random_state=0),
                    "ndcg@10"))
    out.append(("NDCG_Boost", lambda: NDCGBoost(n_rounds=rounds, random_state=0), "ndcg@10"))
    return out


def run_one(make: Callable[[], Any], select: str, train: RankingData, vali: RankingData,
            test: RankingData) -> dict[str, Any]:
    """Fit, choose the round on vali, evaluate test at that round."""
    t0 = time.perf_counter()
    model = make().fit(train.X, train.y, group=np.diff(train.group_ptr))
    seconds = time.perf_counter() - t0
    vals = [score(select, s, vali) for s in model.staged_predict(vali.X)]
    if not vals:  # no round at all: every score 0
        best, scores = 0, np.zeros(test.X.shape[0])
    else:
        best = int(np.argmax(vals)) + 1
        scores = next(s for t, s in enumerate(model.staged_predict(test.X), 1) if t == best)
    row = {"round": best, "rounds_fitted": len(model.rankers_), "vali": max(vals) if vals else 0.0,
           "seconds": seconds, "stop": model.stop_reason_}
    row.update({m: score(m, scores, test) for m in TEST_METRICS})
    return row


def summary(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = [f"{'booster':26s} " + " ".join(f"{m:>15s}" for m in TEST_METRICS) + f" {'fit s':>7s} {'rounds':>12s}"]
    for label, rows in results.items():
        cells = []
        for m in TEST_METRICS:
            v = np.array([r[m] for r in rows])
            cells.append(f"{v.mean():.4f}±{v.std(ddof=1) if v.size > 1 else 0.0:.4f}")
        secs = np.mean([r["seconds"] for r in rows])
        rounds = "/".join(str(r["round"]) for r in rows)
        lines.append(f"{label:26s} " + " ".join(f"{c:>15s}" for c in cells) + f" {secs:7.1f} {rounds:>12s}")
    return "\n".join(lines)


def per_fold(results: dict[str, list[dict[str, Any]]], metric: str, folds: list[int]) -> str:
    lines = [f"{'booster':26s} " + " ".join(f"{'Fold' + str(f):>8s}" for f in folds) + f" {'mean':>8s}"]
    for label, rows in results.items():
        v = [r[metric] for r in rows]
        lines.append(f"{label:26s} " + " ".join(f"{x:8.4f}" for x in v) + f" {np.mean(v):8.4f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA),
                    help="LETOR folder (S1..S5.txt or Fold1..Fold5), or 'example' (the embedded LightGBM example)")
    ap.add_argument("--rounds", type=int, default=300, help="rounds of the stump boosters (AdaRank: 500)")
    ap.add_argument("--folds", type=int, nargs="+", default=None, help="1-based folds (default: all)")
    ap.add_argument("--only", action="append", default=[], help="run only this booster label (repeatable)")
    ap.add_argument("--json", type=Path, default=None, help="also write every per-fold row here")
    args = ap.parse_args(argv)
    if args.data == "example":
        from boostplug.compare.data import example_split

        folds, what = [example_split(seed=0)], ("the embedded LightGBM example (split as boostplug compare "
                                                "splits it: 20% of the training queries as vali, seed 0)")
    else:
        # MQ2008 parts: LETOR 4.0 folds; Fold1..FoldK folders are read as they are
        folds, what = load_letor_folds(args.data, "letor4" if (Path(args.data) / "S1.txt").exists() else None), args.data
    if args.folds is None:
        args.folds = list(range(1, len(folds) + 1))
    bad = [f for f in args.folds if not 1 <= f <= len(folds)]
    if bad:
        raise SystemExit(f"--folds {bad}: the data has folds 1..{len(folds)}")
    threads = {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    print(f"Data: {what}; {len(folds)} folds; stump boosters {args.rounds} rounds; threads {threads}")
    table = [b for b in boosters(args.rounds) if not args.only or b[0] in args.only]
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in table}
    for f in args.folds:
        train, vali, test = folds[f - 1]
        print(f"\n== Fold{f}: train {train.X.shape[0]} docs / {train.n_queries} queries, "
              f"vali {vali.n_queries}, test {test.n_queries} queries", flush=True)
        for label, make, select in table:
            row = run_one(make, select, train, vali, test)
            results[label].append(row)
            print(f"{label:26s} round {row['round']:4d}/{row['rounds_fitted']:<4d} vali {select} {row['vali']:.4f}  "
                  + " ".join(f"{m} {row[m]:.4f}" for m in TEST_METRICS) + f"  fit {row['seconds']:.1f}s"
                  + f"  [{row['stop']}]", flush=True)
    print(f"\n== Test metrics, mean±std over folds {args.folds} (round chosen on vali; rounds per fold listed)")
    print(summary(results))
    for m in ("ndcg@10", "map"):
        print(f"\n== Test {m} per fold")
        print(per_fold(results, m, args.folds))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"data": str(what), "folds": args.folds, "rounds": args.rounds,
                                         "results": results}, indent=1))


if __name__ == "__main__":
    main()
