"""QBRank (Zheng et al., NIPS 2007): QBRank versus GBT on the same trees, and single-label queries.

Paper setting (Sec. 5): L1 = the queries whose documents all share one grade, L2 = the other
training queries, P2 = the preference pairs extracted from L2 (all critical pairs, tau = grade
difference); GBT (regression trees on the grades) with L1, L2, L1 u L2, QBRank with P2 and with
P2 + L1 (single-label documents in the squared-error term); 20-leaf trees, w = 0.5; reported:
DCG-5 against iterations (Figure 1) and precision at K% of test pairs (Table 1).

How this script builds it from a LETOR fold (per fold, the test part plays L3/P3):

* L1 = training queries with one distinct grade (on MQ2008 almost all are all-0 queries),
  L2 = the other training queries;
* ``GBT L2`` / ``GBT L1+L2``: LightGBM ``regression`` on the grades of L2 / of the whole train;
* ``QBRank P2``: the ``qbrank`` objective on L2 only with ``labeled="none"`` (pairs only);
* ``QBRank P2+L1``: ``qbrank`` on the whole train with ``labeled="single"`` (pairs from L2, L1's
  documents in the labeled term: exactly the paper's P2 u L1);
* ``QBRank P2+L1+L2 labels``: ``labeled="all"`` (every training document also in the labeled term);
* ``QBRank P2+L1 line search``: Algorithm 2 with its exact line search
  (:func:`boostplug.lightgbm.train_line_search`, eta = the shared learning rate 0.05).

All on LightGBM trees with boostplug.compare.methods.TREE_PARAMS (31 leaves, learning rate 0.05;
``--leaves 20`` for the paper's size), one thread, QBRank w = 0.5, tau = grade difference,
Hessian ``bound``. Round chosen on vali NDCG@10; reported on test: DCG@5 (gain 2^r - 1),
NDCG@10, MAP and precision at K% of the test critical pairs.

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/qbrank_gbt.py \\
        [--data ../shared/data/MQ2008 | --data example] [--rounds 500] \\
        [--out docs/results/replication/mq2008] \\
        [--png docs/img/qbrank_dcg5.png] [--tiny]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import _common as C
from boostplug import metrics
from boostplug.compare.methods import TREE_PARAMS
from boostplug.data import RankingData

PERCENTS = (10, 25, 50, 75, 100)
TEST_METRICS = ("dcg@5", "ndcg@10", "map")


def single_label_queries(d: RankingData) -> np.ndarray:
    """Boolean mask of the queries whose documents all have the same grade."""
    g = d.group_ptr
    return np.array([np.unique(d.y[g[q]:g[q + 1]]).size == 1 for q in range(d.n_queries)])


def tree_params(leaves: int) -> dict[str, Any]:
    return dict(TREE_PARAMS, num_leaves=leaves, verbose=-1, seed=0, deterministic=True, num_threads=1)


def train_lgb(objective: Any, d: RankingData, rounds: int, leaves: int) -> Any:
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    return lgb.train(dict(tree_params(leaves), objective=objective),
                     bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), num_boost_round=rounds)


def train_line_search(d: RankingData, rounds: int, leaves: int) -> Any:
    from boostplug import lightgbm as bpl

    p = tree_params(leaves)
    eta = p.pop("learning_rate")
    booster, _ = bpl.train_line_search(p, bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), rounds, eta=eta,
                                       objective_params={"labeled": "single"})
    return booster


def methods(fold: C.Fold, rounds: int, leaves: int) -> dict[str, Callable[[], Any]]:
    from boostplug import lightgbm as bpl

    train = fold[0]
    single = single_label_queries(train)
    l2 = train.subset(np.flatnonzero(~single))
    return {
        "GBT L2": lambda: train_lgb("regression", l2, rounds, leaves),
        "GBT L1+L2": lambda: train_lgb("regression", train, rounds, leaves),
        "QBRank P2": lambda: train_lgb(bpl.objective("qbrank", labeled="none"), l2, rounds, leaves),
        "QBRank P2+L1": lambda: train_lgb(bpl.objective("qbrank", labeled="single"), train, rounds, leaves),
        "QBRank P2+L1+L2 labels": lambda: train_lgb(bpl.objective("qbrank", labeled="all"), train, rounds, leaves),
        "QBRank P2+L1 line search": lambda: train_line_search(train, rounds, leaves),
    }


def evaluate(bst: Any, vali: RankingData, test: RankingData) -> dict[str, Any]:
    n = bst.current_iteration()
    vs, ts = C.lgb_staged(bst, vali.X, n), C.lgb_staged(bst, test.X, n)
    vcurve = [C.score("ndcg@10", s, vali) for s in vs]
    r = C.best_round(vcurve)
    s = ts[r - 1]
    row: dict[str, Any] = {"round": r, "vali_ndcg@10": vcurve[r - 1]}
    row.update({m: C.score(m, s, test) for m in TEST_METRICS})
    row.update({f"prec@{k}%": metrics.pair_precision_at(s, test.y, test.group_ptr, k) for k in PERCENTS})
    row["curve_dcg@5"] = [C.score("dcg@5", x, test) for x in ts]
    return row


def plot(png: Path, results: dict[str, list[dict[str, Any]]]) -> None:
    plt = C.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for lb, rows in results.items():
        curve = np.mean([r["curve_dcg@5"] for r in rows], axis=0)
        ax.plot(np.arange(1, curve.size + 1), curve, label=lb)
    ax.set_xlabel("round")
    ax.set_ylabel("test DCG@5 (mean over folds)")
    ax.set_title("QBRank vs GBT on LightGBM trees (cf. the paper's Figure 1)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    C.save_figure(fig, png)


COMPARISONS = (("QBRank P2", "GBT L2"), ("QBRank P2+L1", "QBRank P2"), ("GBT L1+L2", "GBT L2"),
               ("QBRank P2+L1+L2 labels", "QBRank P2+L1"), ("QBRank P2+L1 line search", "QBRank P2+L1"),
               ("QBRank P2+L1", "GBT L1+L2"))


def summarize(results: dict[str, list[dict[str, Any]]], numbers: list[int]) -> None:
    """The tables of the report, from the per-fold rows."""
    cols = list(TEST_METRICS) + [f"prec@{k}%" for k in PERCENTS]
    print(f"\n== Test metrics at the round chosen on vali NDCG@10, mean±std over folds {numbers}")
    print(f"{'':26s} " + " ".join(f"{c:>15s}" for c in cols) + "  rounds")
    for lb, rows in results.items():
        print(f"{lb:26s} " + " ".join(f"{C.mean_std(r[c] for r in rows):>15s}" for c in cols)
              + "  " + "/".join(str(r["round"]) for r in rows))
    for m in ("dcg@5", "ndcg@10", "prec@100%"):
        print(f"\n-- test {m} per fold")
        print(C.fold_table({lb: [r[m] for r in rows] for lb, rows in results.items()}, numbers, 26))
    print("\n== Paired over folds (first vs second)")
    for a, b in COMPARISONS:
        for m in ("dcg@5", "ndcg@10", "map", "prec@10%", "prec@100%"):
            print(f"{a:>24s} vs {b:22s} {m:9s}: "
                  + C.paired([r[m] for r in results[a]], [r[m] for r in results[b]]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--leaves", type=int, default=TREE_PARAMS["num_leaves"])
    ap.add_argument("--png", type=Path, default=None, help="write the DCG@5-vs-rounds figure here")
    args, saved = C.start(ap, argv, lambda s: summarize(s["results"], s["folds"]))
    if saved is not None:
        return saved
    numbers, folds, what = C.load_folds(args)
    print(f"QBRank vs GBT on {what}; folds {numbers}; {args.rounds} rounds, {args.leaves} leaves; {C.threads_note()}")
    for f, fold in zip(numbers, folds):
        single = single_label_queries(fold[0])
        g = fold[0].group_ptr
        docs = int(sum(g[q + 1] - g[q] for q in np.flatnonzero(single)))
        grades = sorted({float(fold[0].y[g[q]]) for q in np.flatnonzero(single)})
        print(f"Fold{f}: train {fold[0].n_queries} queries; L1 = {int(single.sum())} single-label queries "
              f"({docs} docs, grades {grades}); L2 = {int((~single).sum())} queries")
    results: dict[str, list[dict[str, Any]]] = {}
    for fold in folds:
        for lb, make in methods(fold, args.rounds, args.leaves).items():
            t0 = time.perf_counter()
            bst = make()
            secs = time.perf_counter() - t0
            row = evaluate(bst, fold[1], fold[2])
            row["seconds"] = secs
            results.setdefault(lb, []).append(row)
        done = ", ".join(f"{lb} {rows[-1]['ndcg@10']:.4f}" for lb, rows in results.items())
        print(f"fold done, test NDCG@10: {done}", flush=True)
    summarize(results, numbers)
    if args.png is not None:
        plot(args.png, results)
        print(f"\nwrote {args.png}")
    payload = {"data": what, "folds": numbers, "rounds": args.rounds, "leaves": args.leaves, "results": results}
    C.write_json(args.out, "qbrank_gbt.json", payload)
    return payload


if __name__ == "__main__":
    main()
