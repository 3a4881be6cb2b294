"""AdaRank.MAP versus AdaRank.NDCG (Xu and Li, SIGIR 2007, Figures 9-10) on training and test data.

Paper claim (Sec. 5, Figures 9 and 10, OHSUMED, per trial of 4-fold CV): measured on the
*training* data, AdaRank.MAP is better in MAP and AdaRank.NDCG (NDCG@5) is better in NDCG@5:
training with a measure enhances that measure.

Per fold this script fits :class:`boostplug.boosters.AdaRank` with ``measure="map"`` and
``measure="ndcg@5"`` under three settings:

* ``paper``: the paper's update (Figure 1) and stop rule (tolerance 0.002 on the training
  measure), at most ``--rounds`` rounds;
* ``paper, no stop``: the paper's update, ``tolerance=None``, exactly ``--fixed-rounds`` rounds
  (shows the fixed point the update reaches: see boostplug/boosters/adarank.py);
* ``ranklib``: RankLib's options (``update="multiplicative"``, RankLib's distribution update,
  ``enqueue=True``, ``max_consecutive=5``, ``tolerance=-0.002``), at most ``--rounds`` rounds;

and reports the training MAP and NDCG@5 after the last round (the paper's Figures 9-10), the
training curves per round (JSON), and test MAP, NDCG@5 and NDCG@10 at the round chosen on vali by
the training measure.

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/adarank_measures.py \\
        [--data ../shared/data/MQ2008 | --data example] [--rounds 500] [--fixed-rounds 50] \\
        [--out DIR] [--tiny]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import _common as C
from boostplug.boosters import AdaRank

MEASURES = {"AdaRank.MAP": "map", "AdaRank.NDCG": "ndcg@5"}
TEST_METRICS = ("map", "ndcg@5", "ndcg@10")
RANKLIB = {"update": "multiplicative", "enqueue": True, "max_consecutive": 5, "tolerance": -0.002}


def settings(rounds: int, fixed_rounds: int) -> dict[str, dict[str, Any]]:
    return {
        "paper": {"n_rounds": rounds},
        "paper, no stop": {"n_rounds": fixed_rounds, "tolerance": None},
        "ranklib": dict(RANKLIB, n_rounds=rounds),
    }


def run(measure: str, params: dict[str, Any], fold: C.Fold) -> dict[str, Any]:
    train, vali, test = fold
    t0 = time.perf_counter()
    model = AdaRank(measure=measure, **params).fit(train.X, train.y, group=np.diff(train.group_ptr))
    secs = time.perf_counter() - t0
    staged_train = list(model.staged_predict(train.X))
    row: dict[str, Any] = {"rounds_fitted": len(staged_train), "seconds": secs, "stop": model.stop_reason_,
                           "features": [int(h["feature"]) for h in model.history_]}
    if not staged_train:
        return row
    row["train_curve_map"] = [C.score("map", s, train) for s in staged_train]
    row["train_curve_ndcg@5"] = [C.score("ndcg@5", s, train) for s in staged_train]
    row["train_map"], row["train_ndcg@5"] = row["train_curve_map"][-1], row["train_curve_ndcg@5"][-1]
    vcurve = [C.score(measure, s, vali) for s in model.staged_predict(vali.X)]
    r = C.best_round(vcurve)
    s = list(model.staged_predict(test.X))[r - 1]
    row["round"] = r
    row.update({f"test_{m}": C.score(m, s, test) for m in TEST_METRICS})
    return row


def summarize(results: dict[str, dict[str, list[dict[str, Any]]]], numbers: list[int]) -> None:
    """Training MAP/NDCG@5 after the last round and at each model's best training round, and test values."""
    for st, by in results.items():
        print(f"\n== [{st}] training measures (the paper's Figures 9-10), per fold")
        for key in ("map", "ndcg@5"):
            print(f"-- train {key} after the last round")
            print(C.fold_table({lb: [r.get(f"train_{key}", np.nan) for r in rows] for lb, rows in by.items()},
                               numbers, 14))
        print("-- train map / ndcg@5 at the round where the model's own training measure is highest")
        for key in ("map", "ndcg@5"):
            table = {}
            for lb, rows in by.items():
                own = "map" if MEASURES[lb] == "map" else "ndcg@5"
                table[f"{lb} {key}"] = [r[f"train_curve_{key}"][int(np.argmax(r[f"train_curve_{own}"]))]
                                        if r["rounds_fitted"] else np.nan for r in rows]
            print(C.fold_table(table, numbers, 20))
        for key in TEST_METRICS:
            print(f"-- test {key} at the round chosen on vali (by the training measure)")
            print(C.fold_table({lb: [r.get(f"test_{key}", np.nan) for r in rows] for lb, rows in by.items()},
                               numbers, 14))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--fixed-rounds", type=int, default=50)
    args, saved = C.start(ap, argv, lambda s: summarize(s["results"], s["folds"]))
    if saved is not None:
        return saved
    numbers, folds, what = C.load_folds(args)
    print(f"AdaRank.MAP vs AdaRank.NDCG on {what}; folds {numbers}; {C.threads_note()}")
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for st, params in settings(args.rounds, args.fixed_rounds).items():
        results[st] = {lb: [run(m, params, f) for f in folds] for lb, m in MEASURES.items()}
        for lb, rows in results[st].items():
            print(f"[{st}] {lb}: rounds fitted per fold {[r['rounds_fitted'] for r in rows]}, "
                  f"features of fold {numbers[0]}: {rows[0]['features'][:12]}; stop: {rows[0]['stop']}", flush=True)
    summarize(results, numbers)
    payload = {"data": what, "folds": numbers, "rounds": args.rounds, "fixed_rounds": args.fixed_rounds,
               "results": results}
    C.write_json(args.out, "adarank_measures.json", payload)
    return payload


if __name__ == "__main__":
    main()
