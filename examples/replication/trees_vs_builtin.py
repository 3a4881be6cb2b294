"""Every paper objective on LightGBM trees versus LightGBM lambdarank and XGBoost rank:ndcg.

The protocol of ``boostplug compare``, through its own code: the methods of
:mod:`boostplug.compare.methods` (``get_method(name).train``) with the shared tree parameters
``TREE_PARAMS`` (31 leaves, learning rate 0.05, min 20 documents per leaf), up to ``--rounds``
rounds, seed 0, one thread, and the round chosen on vali exactly as compare chooses it
(:func:`boostplug.compare.protocol.choose_round` over compare's own validation curve: NDCG@10, or
the method's ``select_metric``, with the library's default conventions: a query without a
relevant document scores 1, tied scores in input order). The test metrics at that round are
reported in this report's conventions (``_common.score``: all-0 queries score 0, tied scores
averaged) and, for comparison with ``boostplug compare``'s output, as NDCG@10 with the library
defaults. The JSON also keeps, per fold, the round the report's convention would have chosen
(``round_report_convention``), which is where this script and compare used to disagree.
Paired against ``--baseline`` (default ``lambdarank``): folds won and mean difference, and a
Wilcoxon signed-rank test over the per-query test NDCG@10 of all folds.

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/trees_vs_builtin.py \\
        [--data ../shared/data/MQ2008 | --data example] [--rounds 300] [--methods ...] \\
        [--out DIR] [--tiny]
"""

from __future__ import annotations

from typing import Any

import numpy as np

import _common as C
from boostplug import metrics
from boostplug.compare.methods import TREE_PARAMS, get_method
from boostplug.compare.protocol import choose_round, metric_curve

#: compare's default round-selection metric (``--early-stopping-metric``)
SELECT_METRIC = "ndcg@10"

METHODS = ("lambdarank", "xgb-rank:ndcg", "regression", "qbrank", "mpboost-binary", "mpboost-ldd", "mpboost-logdd",
           "mpboost-logitdd", "ndcg_boost", "rankboost-loss")
TEST_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")


def run(name: str, fold: C.Fold, rounds: int) -> dict[str, Any]:
    train, vali, test = fold
    method = get_method(name)
    trained = method.train(train, vali, test, rounds=rounds, tree_params=dict(TREE_PARAMS), seed=0, threads=1)
    # the round as boostplug compare's run_method chooses it (its curve, its conventions, its argmax)
    select = method.select_metric or SELECT_METRIC
    r = choose_round(metric_curve(select, trained.vali_scores, vali), select) + 1
    s = trained.test_scores[r - 1]
    row: dict[str, Any] = {"round": r, "seconds": trained.seconds, "select_metric": select,
                           "round_report_convention": C.best_round([C.score("ndcg@10", x, vali)
                                                                    for x in trained.vali_scores])}
    row.update({m: C.score(m, s, test) for m in TEST_METRICS})
    row["per_query_ndcg@10"] = C.score("ndcg@10", s, test, per_query=True)
    row["ndcg@10 (empty=1, ties=order)"] = float(metrics.ndcg(s, test.y, test.group_ptr, 10))
    return row


def summarize(results: dict[str, list[dict[str, Any]]], numbers: list[int], baseline: str) -> None:
    from scipy.stats import wilcoxon

    print(f"\n== Test metrics at the round boostplug compare chooses (vali NDCG@10, library conventions), "
          f"mean±std over folds {numbers}")
    cols = list(TEST_METRICS) + ["ndcg@10 (empty=1, ties=order)"]
    print(f"{'':18s} " + " ".join(f"{c[:15]:>15s}" for c in cols) + "  fit s  rounds")
    for lb, rows in results.items():
        print(f"{lb:18s} " + " ".join(f"{C.mean_std(r[c] for r in rows):>15s}" for c in cols)
              + f"  {np.mean([r['seconds'] for r in rows]):5.1f}  " + "/".join(str(r["round"]) for r in rows))
    moved = [f"{lb} Fold{f}: {r['round']} (report's convention: {r['round_report_convention']})"
             for lb, rows in results.items() for f, r in zip(numbers, rows)
             if r.get("round_report_convention", r["round"]) != r["round"]]
    print(f"\n-- rounds the report's convention (empty queries 0, ties {C.TIES}) would have chosen instead: "
          + ("; ".join(moved) if moved else "none, every fold the same"))
    print("\n-- test ndcg@10 per fold")
    print(C.fold_table({lb: [r["ndcg@10"] for r in rows] for lb, rows in results.items()}, numbers, 18))
    if baseline not in results:
        return
    base = results[baseline]
    qb = np.concatenate([np.asarray(r["per_query_ndcg@10"]) for r in base])
    print(f"\n== Paired against {baseline} (test NDCG@10: folds; per-query Wilcoxon over all folds' queries)")
    for lb, rows in results.items():
        if lb == baseline:
            continue
        q = np.concatenate([np.asarray(r["per_query_ndcg@10"]) for r in rows])
        p = wilcoxon(q, qb).pvalue if np.any(q != qb) else 1.0
        print(f"{lb:18s} {C.paired([r['ndcg@10'] for r in rows], [r['ndcg@10'] for r in base])}; "
              f"queries better {int(np.sum(q > qb))} worse {int(np.sum(q < qb))}, p = {p:.2g}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--baseline", default="lambdarank")
    args, saved = C.start(ap, argv, lambda s: summarize(s["results"], s["folds"], s["baseline"]))
    if saved is not None:
        return saved
    numbers, folds, what = C.load_folds(args)
    print(f"Tree methods on {what}; folds {numbers}; up to {args.rounds} rounds; {C.threads_note()}", flush=True)
    results: dict[str, list[dict[str, Any]]] = {}
    payload = {"data": what, "folds": numbers, "rounds": args.rounds, "baseline": args.baseline,
               "results": results}
    for name in args.methods:
        results[name] = [run(name, f, args.rounds) for f in folds]
        print(f"{name:18s} test NDCG@10 per fold {[round(r['ndcg@10'], 4) for r in results[name]]}", flush=True)
        C.write_json(args.out, "trees_vs_builtin.json", payload)  # keep finished methods if a later one fails
    summarize(results, numbers, args.baseline)
    return payload


if __name__ == "__main__":
    main()
