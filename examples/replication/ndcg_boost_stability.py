"""NDCG_Boost (Valizadegan et al., NIPS 2009) versus the other methods, and its stability across folds.

Paper setting (Sec. 4): LETOR 3.0, decision stumps, 100 iterations, *no* validation set;
Figure 1: test NDCG@1..10 averaged over the five folds; claims "NDCG_Boost performs almost
always the best" and "appears to be the most stable method across all the data sets".

Per fold this script fits

* ``stumps, T=100 (paper)``: :class:`boostplug.boosters.NDCGBoost` (sigma 2), test at round 100;
* ``stumps, T on vali``: the same fit continued to ``--rounds`` rounds, round chosen on vali NDCG@10;
* ``trees, T on vali``: the ``ndcg_boost`` objective on LightGBM trees
  (boostplug.compare.methods.TREE_PARAMS, one thread), round chosen on vali NDCG@10;

and prints test NDCG@1/3/5/10 and MAP per fold with mean and standard deviation. With
``--table`` (the JSON of ``benchmarks/booster_table.py``: every reference booster on the same
folds) it also prints, per fold, the rank of NDCG_Boost among those boosters and every
booster's standard deviation of test NDCG@10 over folds.

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/ndcg_boost_stability.py \\
        [--data ../shared/data/MQ2008 | --data example] [--rounds 300] \\
        [--table docs/results/booster_table.json] \\
        [--out DIR] [--tiny]
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

import _common as C
from boostplug.boosters import NDCGBoost
from boostplug.compare.methods import TREE_PARAMS

TEST_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")
PAPER_ROUNDS = 100


def test_row(scores: np.ndarray, test: Any, r: int) -> dict[str, Any]:
    row: dict[str, Any] = {"round": r}
    row.update({m: C.score(m, scores, test) for m in TEST_METRICS})
    return row


def stumps(fold: C.Fold, rounds: int) -> tuple[dict[str, Any], dict[str, Any]]:
    train, vali, test = fold
    t0 = time.perf_counter()
    model = NDCGBoost(n_rounds=max(rounds, PAPER_ROUNDS), random_state=0).fit(
        train.X, train.y, group=np.diff(train.group_ptr))
    secs = time.perf_counter() - t0
    ts = list(model.staged_predict(test.X))
    fixed = test_row(ts[min(PAPER_ROUNDS, len(ts)) - 1], test, min(PAPER_ROUNDS, len(ts)))
    r = C.best_round([C.score("ndcg@10", s, vali) for s in model.staged_predict(vali.X)])
    chosen = test_row(ts[r - 1], test, r)
    fixed["seconds"] = chosen["seconds"] = secs
    return fixed, chosen


def trees(fold: C.Fold, rounds: int) -> dict[str, Any]:
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    train, vali, test = fold
    p = dict(TREE_PARAMS, verbose=-1, seed=0, deterministic=True, num_threads=1,
             objective=bpl.objective("ndcg_boost"))
    t0 = time.perf_counter()
    bst = lgb.train(p, bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), num_boost_round=rounds)
    secs = time.perf_counter() - t0
    n = bst.current_iteration()
    r = C.best_round([C.score("ndcg@10", s, vali) for s in C.lgb_staged(bst, vali.X, n)])
    row = test_row(C.lgb_staged(bst, test.X, r)[-1], test, r)
    row["seconds"] = secs
    return row


def versus_table(table: Path, ours: list[float], numbers: list[int]) -> dict[str, Any]:
    """NDCG_Boost's rank per fold among the boosters of ``booster_table.json`` (test NDCG@10)."""
    data = json.loads(table.read_text())
    if list(data["folds"]) != numbers:
        raise SystemExit(f"{table} has folds {data['folds']}, this run {numbers}: pass the same --folds")
    res = {lb: [r["ndcg@10"] for r in rows] for lb, rows in data["results"].items()}
    labels = list(res)
    ranks = []
    for i in range(len(numbers)):
        vals = np.array([res[lb][i] for lb in labels])
        ranks.append(rankdata(-vals, method="min")[labels.index("NDCG_Boost")])
    print(f"\n== {table}: test NDCG@10 of every booster (stumps, round on vali), per fold")
    print(C.fold_table(res, numbers, 26))
    print(f"\nNDCG_Boost's rank among these {len(labels)} boosters per fold: "
          + ", ".join(f"Fold{f} {int(r)}" for f, r in zip(numbers, ranks)))
    if len(numbers) > 1:
        order = sorted(labels, key=lambda lb: np.std(res[lb], ddof=1))
        print("std over folds of test NDCG@10, smallest first: "
              + ", ".join(f"{lb} {np.std(res[lb], ddof=1):.4f}" for lb in order))
    else:
        print("std over folds of test NDCG@10: not defined on one fold (no stability across folds to measure)")
    mean_rank = {lb: float(np.mean([rankdata(-np.array([res[o][i] for o in labels]), method="average")[j]
                                    for i in range(len(numbers))])) for j, lb in enumerate(labels)}
    print("mean rank over folds (1 = best): " + ", ".join(
        f"{lb} {mean_rank[lb]:.1f}" for lb in sorted(labels, key=mean_rank.get)))
    diffs = [o - n for o, n in zip(ours, res["NDCG_Boost"])]
    print(f"this run's stumps (T on vali) minus the table's NDCG_Boost, per fold: {[round(d, 4) for d in diffs]}")
    return {"ranks": [int(r) for r in ranks], "mean_rank": mean_rank}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--table", type=Path, default=None, help="booster_table.py JSON to compare with")
    args = ap.parse_args(argv)
    C.single_thread()
    numbers, folds, what = C.load_folds(args)
    print(f"NDCG_Boost on {what}; folds {numbers}; {args.rounds} rounds; {C.threads_note()}")
    results: dict[str, list[dict[str, Any]]] = {"stumps, T=100 (paper)": [], "stumps, T on vali": [],
                                                "trees, T on vali": []}
    for fold in folds:
        fixed, chosen = stumps(fold, args.rounds)
        results["stumps, T=100 (paper)"].append(fixed)
        results["stumps, T on vali"].append(chosen)
        results["trees, T on vali"].append(trees(fold, args.rounds))
    for m in TEST_METRICS:
        print(f"\n-- test {m} per fold")
        print(C.fold_table({lb: [r[m] for r in rows] for lb, rows in results.items()}, numbers, 24))
    print("\nrounds per fold: " + "; ".join(f"{lb} {'/'.join(str(r['round']) for r in rows)}"
                                            for lb, rows in results.items()))
    payload: dict[str, Any] = {"data": what, "folds": numbers, "rounds": args.rounds, "results": results}
    if args.table is not None:
        payload["versus_table"] = versus_table(args.table, [r["ndcg@10"] for r in results["stumps, T on vali"]],
                                               numbers)
    C.write_json(args.out, "ndcg_boost_stability.json", payload)
    return payload


if __name__ == "__main__":
    main()
