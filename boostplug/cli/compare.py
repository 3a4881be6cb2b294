"""``boostplug compare``: train ranking methods under one protocol and tabulate them."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from ..compare import DEFAULT_METHODS, REPORT_METRICS, example_split, format_table, method_names, run


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare",
        help="train ranking methods on one data set and compare them",
        description=(
            "Train each method on the same parts with the same tree parameters, choose its number of rounds "
            "on the validation part, and report test NDCG@1/3/5/10 and MAP. Default data: LightGBM's "
            "learning-to-rank example, embedded in boostplug (train/test as shipped, 20%% of the training "
            "queries held out for validation)."
        ),
    )
    p.add_argument("--data", default="example", help="'example' (default: the embedded data)")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help=f"comma-separated; available: {', '.join(method_names())} (default: %(default)s)")
    p.add_argument("--rounds", type=int, default=300, help="maximum boosting rounds (default: %(default)s)")
    p.add_argument("--early-stopping-metric", default="ndcg@10",
                   help="metric that chooses the round on the validation part (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the validation split and of training")
    p.add_argument("--out", type=Path, default=None, help="folder for results.csv and results.json")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(run=run_compare)
    return p


def _folds(args: argparse.Namespace):
    if args.data != "example":
        from ..cli import UsageError

        raise UsageError(
            f"--data {args.data!r}: only the embedded data ('example') is supported by this version of compare"
        )
    return [example_split(seed=args.seed)]


def run_compare(args: argparse.Namespace) -> int:
    from ..cli import UsageError
    from .. import metrics

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in method_names()]
    if not methods or unknown:
        raise UsageError(f"unknown method(s) {unknown or methods}; available: {', '.join(method_names())}")
    if args.rounds < 1:
        raise UsageError(f"--rounds must be >= 1, got {args.rounds}")
    try:
        metrics.by_name(args.early_stopping_metric)
    except ValueError as e:
        raise UsageError(f"--early-stopping-metric: {e}") from None
    folds = _folds(args)
    print(f"boostplug compare: {len(methods)} method(s), {len(folds)} fold(s), up to {args.rounds} rounds, "
          f"round chosen on validation {args.early_stopping_metric}", file=sys.stderr)
    results = run(methods, folds, rounds=args.rounds, metric=args.early_stopping_metric, seed=args.seed,
                  progress=not args.no_progress)
    if not results:
        print("no method finished", file=sys.stderr)
        return 1
    print(format_table(results))
    if args.out is not None:
        _write(args.out, results)
        print(f"results written to {args.out}/results.csv and results.json", file=sys.stderr)
    return 0


def _write(out: Path, results: list) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "framework", "fold", "best_round", "train_seconds", *REPORT_METRICS])
        for r in results:
            w.writerow([r.method, r.framework, r.fold + 1, r.best_round, f"{r.seconds:.4f}",
                        *(f"{r.test[m]:.6f}" for m in REPORT_METRICS)])
    payload = [
        {"method": r.method, "framework": r.framework, "fold": r.fold + 1, "best_round": r.best_round,
         "train_seconds": r.seconds, "test": r.test, "test_per_query": r.test_per_query,
         "vali_curve": r.vali_curve, "test_curve": r.test_curve}
        for r in results
    ]
    (out / "results.json").write_text(json.dumps(payload, indent=1))
