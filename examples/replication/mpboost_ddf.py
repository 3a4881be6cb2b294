"""MPBoost (Zhu et al., CIKM 2009): the DDFs versus BINARY, on stumps and on LightGBM trees.

Paper setting (Sec. 5): decision stumps, 5-fold CV, DDF parameter and number of rounds T
chosen on validation NDCG@5, test NDCG@1..10 averaged over folds (Figures 3-5); Figure 6:
test NDCG@5 against rounds, where MPBoost.BINARY overfits and the DDFs stay stable.

What this script runs, per fold:

* stumps: :class:`boostplug.boosters.MPBoost` for BINARY and each DDF at the paper's Figure 2
  parameters (LDD alpha 0.2, LOGDD lambda 3, LOGITDD beta 0.5), plus (``--grid``) a small grid
  per DDF with the parameter chosen on vali NDCG@5 as in the paper;
* trees: the ``mpboost`` objective on LightGBM (boostplug.compare.methods.TREE_PARAMS,
  one thread) for BINARY and each DDF at the Figure 2 parameters;
* round chosen on vali NDCG@5 (the paper's criterion), test NDCG@1..10 at that round, and the
  test NDCG@5/NDCG@10 curves against rounds (mean over folds) -> PNG.

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/mpboost_ddf.py \\
        [--data ../shared/data/MQ2008 | --data example] [--rounds 300] [--grid] \\
        [--out docs/results/replication/mq2008] \\
        [--png docs/img/mpboost_rounds.png] [--tiny]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

import _common as C
from boostplug.boosters import MPBoost
from boostplug.compare.methods import TREE_PARAMS

FIG2 = {"binary": {}, "ldd": {"alpha": 0.2}, "logdd": {"lam": 3.0}, "logitdd": {"beta": 0.5}}
GRID = {"ldd": [{"alpha": a} for a in (0.2, 0.5, 1.0)], "logdd": [{"lam": v} for v in (0.5, 1.0, 3.0)],
        "logitdd": [{"beta": b} for b in (0.5, 1.0, 2.0)]}
KS = tuple(range(1, 11))


def evaluate(vali_staged: list[np.ndarray], test_staged: list[np.ndarray], vali: Any, test: Any) -> dict[str, Any]:
    """Round on vali NDCG@5; test NDCG@1..10 there; test NDCG@5/@10 curves."""
    vcurve = [C.score("ndcg@5", s, vali) for s in vali_staged]
    r = C.best_round(vcurve)
    row: dict[str, Any] = {"round": r, "vali_ndcg@5": vcurve[r - 1]}
    row.update({f"ndcg@{k}": C.score(f"ndcg@{k}", test_staged[r - 1], test) for k in KS})
    row["curve_ndcg@5"] = [C.score("ndcg@5", s, test) for s in test_staged]
    row["curve_ndcg@10"] = [C.score("ndcg@10", s, test) for s in test_staged]
    row["vali_curve_ndcg@5"] = vcurve
    return row


def run_stumps(ddf: str, params: dict[str, float], fold: C.Fold, rounds: int) -> dict[str, Any]:
    train, vali, test = fold
    t0 = time.perf_counter()
    model = MPBoost(ddf=ddf, n_rounds=rounds, random_state=0, **params).fit(
        train.X, train.y, group=np.diff(train.group_ptr))
    secs = time.perf_counter() - t0
    row = evaluate(list(model.staged_predict(vali.X)), list(model.staged_predict(test.X)), vali, test)
    row.update({"seconds": secs, "stop": model.stop_reason_, "params": params})
    return row


def run_trees(ddf: str, params: dict[str, float], fold: C.Fold, rounds: int) -> dict[str, Any]:
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    train, vali, test = fold
    p = dict(TREE_PARAMS, verbose=-1, seed=0, deterministic=True, num_threads=1,
             objective=bpl.objective("mpboost", ddf=ddf, **params))
    t0 = time.perf_counter()
    bst = lgb.train(p, bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), num_boost_round=rounds)
    secs = time.perf_counter() - t0
    n = bst.current_iteration()
    row = evaluate(C.lgb_staged(bst, vali.X, n), C.lgb_staged(bst, test.X, n), vali, test)
    row.update({"seconds": secs, "params": params})
    return row


def label(ddf: str, params: dict[str, float]) -> str:
    return f"{ddf.upper()}" + "".join(f" {k}={v:g}" for k, v in params.items())


def tune(results: dict[str, list[dict[str, Any]]], ddf: str, n_folds: int) -> list[dict[str, Any]]:
    """Per fold, the grid row of ``ddf`` with the best vali NDCG@5."""
    labels = [label(ddf, p) for p in GRID[ddf]]
    return [max((results[lb][i] for lb in labels), key=lambda r: r["vali_ndcg@5"]) for i in range(n_folds)]


def report(title: str, results: dict[str, list[dict[str, Any]]], numbers: list[int]) -> None:
    print(f"\n== {title}: test NDCG@k at the round chosen on vali NDCG@5, mean over folds {numbers}")
    print(f"{'':30s} " + " ".join(f"{'@' + str(k):>6s}" for k in KS) + "   rounds per fold")
    for lb, rows in results.items():
        print(f"{lb:30s} " + " ".join(f"{np.mean([r[f'ndcg@{k}'] for r in rows]):6.4f}" for k in KS)
              + "   " + "/".join(str(r["round"]) for r in rows))
    print(f"\n-- {title}: test NDCG@10 per fold")
    print(C.fold_table({lb: [r["ndcg@10"] for r in rows] for lb, rows in results.items()}, numbers))
    print(f"\n-- {title}: mean test NDCG@10 over folds at fixed rounds (overfitting check)")
    marks = [m for m in (10, 25, 50, 100, 200, 300, 500, 1000) if m <= len(next(iter(results.values()))[0]
                                                                           ["curve_ndcg@10"])]
    print(f"{'':30s} " + " ".join(f"{'T=' + str(m):>7s}" for m in marks) + "  best(T)")
    for lb, rows in results.items():
        curve = np.mean([r["curve_ndcg@10"] for r in rows], axis=0)
        print(f"{lb:30s} " + " ".join(f"{curve[m - 1]:7.4f}" for m in marks)
              + f"  {curve.max():.4f}({int(curve.argmax()) + 1})")


def paired_vs_binary(title: str, results: dict[str, list[dict[str, Any]]]) -> None:
    base = next(rows for lb, rows in results.items() if lb.startswith("BINARY"))
    print(f"\n-- {title}: each DDF against BINARY, paired over folds")
    for lb, rows in results.items():
        if rows is base:
            continue
        for m in ("ndcg@1", "ndcg@5", "ndcg@10"):
            print(f"{lb:30s} {m:8s} " + C.paired([r[m] for r in rows], [r[m] for r in base]))


def summarize(payload: dict[str, Any]) -> None:
    """The report's tables from the per-fold rows (also for ``--summarize``)."""
    numbers, stumps = payload["folds"], payload["stumps"]
    shown = {label(d, p): stumps[label(d, p)] for d, p in FIG2.items()}
    report("Stump MPBoost, Figure 2 parameters", shown, numbers)
    paired_vs_binary("Stump MPBoost, Figure 2 parameters", shown)
    if all(label(d, p) in stumps for d, ps in GRID.items() for p in ps):
        tuned = {"BINARY": stumps[label("binary", {})]}
        tuned.update({f"{d.upper()} (tuned on vali)": tune(stumps, d, len(numbers)) for d in GRID})
        report("Stump MPBoost, DDF parameter tuned on vali NDCG@5", tuned, numbers)
        for d in GRID:
            print(f"{d.upper()} parameter chosen per fold: "
                  + ", ".join(str(r["params"]) for r in tuned[f"{d.upper()} (tuned on vali)"]))
        paired_vs_binary("Stump MPBoost, tuned", tuned)
    if "trees" in payload:
        report("mpboost objective on LightGBM trees", payload["trees"], numbers)
        paired_vs_binary("mpboost objective on LightGBM trees", payload["trees"])


def panels_of(payload: dict[str, Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The figure's panels: stumps (Figure 2 parameters, plus LOGDD tuned on vali when the grid
    ran) and, when they ran, trees."""
    stumps = payload["stumps"]
    first = {label(d, p): stumps[label(d, p)] for d, p in FIG2.items()}
    if all(label("logdd", p) in stumps for p in GRID["logdd"]):
        first["LOGDD (tuned on vali)"] = tune(stumps, "logdd", len(payload["folds"]))
    panels = {"MPBoost, decision stumps": first}
    if "trees" in payload:
        panels["mpboost objective, LightGBM trees"] = payload["trees"]
    return panels


def plot(png: Path, panels: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    plt = C.pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2), squeeze=False)
    for ax, (title, results) in zip(axes[0], panels.items()):
        for lb, rows in results.items():
            curve = np.mean([r["curve_ndcg@10"] for r in rows], axis=0)
            # a curve that alternates between two states every round would hide the others
            jumpy = curve.size > 2 and np.median(np.abs(np.diff(curve))) > 0.01
            ax.plot(np.arange(1, curve.size + 1), curve, label=lb + (" (oscillates)" if jumpy else ""),
                    lw=0.3 if jumpy else 1.5, alpha=0.35 if jumpy else 1.0, ls="--" if "tuned" in lb else "-")
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_ylabel("test NDCG@10 (mean over folds)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    C.save_figure(fig, png)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--grid", action="store_true", help="also tune each DDF's parameter on vali NDCG@5")
    ap.add_argument("--no-trees", action="store_true", help="skip the LightGBM tree runs")
    ap.add_argument("--png", type=Path, default=None, help="write the NDCG@10-vs-rounds figure here")
    args, saved = C.start(ap, argv, summarize)
    if saved is not None:
        if args.png is not None:
            plot(args.png, panels_of(saved))
        return saved
    numbers, folds, what = C.load_folds(args)
    print(f"MPBoost DDFs vs BINARY on {what}; folds {numbers}; {args.rounds} rounds; {C.threads_note()}")
    stumps: dict[str, list[dict[str, Any]]] = {}
    configs = [(d, p) for d, p in FIG2.items()]
    if args.grid:
        configs += [(d, p) for d, ps in GRID.items() for p in ps if p != FIG2[d]]
    for ddf, params in configs:
        stumps[label(ddf, params)] = [run_stumps(ddf, params, f, args.rounds) for f in folds]
        print(f"stumps {label(ddf, params):28s} done ({sum(r['seconds'] for r in stumps[label(ddf, params)]):.1f}s)",
              flush=True)
    payload: dict[str, Any] = {"data": what, "folds": numbers, "rounds": args.rounds, "stumps": stumps}
    if not args.no_trees:
        payload["trees"] = {label(d, p): [run_trees(d, p, f, args.rounds) for f in folds] for d, p in FIG2.items()}
    summarize(payload)
    if args.png is not None:
        plot(args.png, panels_of(payload))
        print(f"\nwrote {args.png}")
    C.write_json(args.out, "mpboost_ddf.json", payload)
    return payload


if __name__ == "__main__":
    main()
