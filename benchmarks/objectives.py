"""Speed of the boostplug objectives, as ratios measured in one run.

For each objective and framework, on (a) MQ2008 Fold1 train (if ../shared/data is there) and
(b) a synthetic MSLR-WEB10K-sized set (6,000 queries, 20-400 documents each, ~720,000
documents, 136 features, labels 0-4), prints:

* seconds per gradient call (``prepare`` once, then ``grad_hess``; best of a few calls);
* training seconds for ``--rounds`` rounds, and that time as a ratio to the same training with
  the framework's plain regression objective (the floor no custom objective can beat) and with
  its built-in LambdaMART (LightGBM ``lambdarank``, XGBoost ``rank:ndcg``).

Usage: python benchmarks/objectives.py [--rounds 20] [--only synthetic|mq2008] [--frameworks lightgbm,xgboost]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lightgbm as lgb  # noqa: E402
import xgboost as xgb  # noqa: E402

from boostplug import data as bpdata  # noqa: E402
from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import objectives  # noqa: E402
from boostplug import xgboost as bpx  # noqa: E402

MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"
TREE = {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20, "max_bin": 255}


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def grad_seconds(name: str, d) -> float:
    prep = objectives.get(name).prepare(d.y, d.group_ptr)
    scores = np.random.default_rng(0).normal(size=d.n_docs)
    prep.grad_hess(scores)  # compile / warm up
    return best_of(lambda: prep.grad_hess(scores))


def lgb_seconds(objective, d, rounds: int) -> float:
    params = {**TREE, "objective": objective, "verbose": -1, "num_threads": 2, "seed": 0}
    ds = bpl.dataset(d.X, d.y, group_ptr=d.group_ptr, params={"max_bin": TREE["max_bin"]})
    ds.construct()
    t0 = time.perf_counter()
    lgb.train(params, ds, num_boost_round=rounds)
    return time.perf_counter() - t0


def xgb_seconds(objective, d, rounds: int) -> float:
    params = {"eta": TREE["learning_rate"], "max_leaves": TREE["num_leaves"], "grow_policy": "lossguide",
              "max_depth": 0, "max_bin": TREE["max_bin"], "tree_method": "hist", "nthread": 2, "seed": 0}
    dm = bpx.dmatrix(d.X, d.y, group_ptr=d.group_ptr)
    obj = None
    if callable(objective):
        obj, params = objective, bpx.params(**params)
    else:
        params["objective"] = objective
    t0 = time.perf_counter()
    xgb.train(params, dm, num_boost_round=rounds, obj=obj)
    return time.perf_counter() - t0


def bench(label: str, d, rounds: int, frameworks: list[str]) -> None:
    print(f"\n## {label}: {d.n_docs:,} documents, {d.n_queries:,} queries, {d.n_features} features, "
          f"{rounds} rounds")
    names = objectives.names()
    print("\nseconds per grad_hess call (prepared once):")
    for n in names:
        print(f"  {n:<12} {grad_seconds(n, d):.4f}")
    for fw in frameworks:
        run = lgb_seconds if fw == "lightgbm" else xgb_seconds
        floor_name, builtin_name = ("regression", "lambdarank") if fw == "lightgbm" else ("reg:squarederror", "rank:ndcg")
        # Warm-up (numba compilation, first-touch) so the timed runs compare like with like.
        run(bpl.objective("mpboost") if fw == "lightgbm" else bpx.objective("mpboost"), d, 1)
        floor = run(floor_name, d, rounds)
        builtin = run(builtin_name, d, rounds)
        print(f"\n{fw}: {floor_name} {floor:.2f} s, {builtin_name} {builtin:.2f} s "
              f"({builtin / floor:.2f}x the floor)")
        print(f"  {'objective':<12} {'seconds':>8} {'/ ' + floor_name:>20} {'/ ' + builtin_name:>14}")
        for n in names:
            obj = bpl.objective(n) if fw == "lightgbm" else bpx.objective(n)
            s = run(obj, d, rounds)
            print(f"  {n:<12} {s:8.2f} {s / floor:20.2f} {s / builtin:14.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--only", choices=["synthetic", "mq2008"], default=None)
    ap.add_argument("--frameworks", default="lightgbm,xgboost")
    args = ap.parse_args()
    fws = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    if args.only in (None, "mq2008"):
        if MQ2008.exists():
            train, _, _ = bpdata.load_letor_folds(MQ2008)[0]
            bench("MQ2008 Fold1 train", train, max(args.rounds, 100), fws)
        else:
            print(f"MQ2008 not found at {MQ2008}: skipped")
    if args.only in (None, "synthetic"):
        d = bpdata.make_ranking(n_queries=6000, docs_per_query=(20, 400), n_features=136, n_informative=20,
                                n_labels=5, noise=1.0, seed=0)
        bench("synthetic MSLR-WEB10K-sized", d, args.rounds, fws)


if __name__ == "__main__":
    main()
