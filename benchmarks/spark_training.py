"""Spark ``local[2]`` against a Dask ``LocalCluster`` (2 workers) and one process: XGBoost with a
boostplug objective on MSLR-shaped data, wall time and peak memory of each, measured in one run.

Data: ``mslr_shaped.generate(--scale)`` (MSLR-WEB30K's shape at ``--scale 1``: 3.77 million
documents, 31,531 queries, 136 features). Each engine runs in a child process of its own; this
process samples the resident memory of the child's whole process tree (the JVM and Spark's
Python workers, Dask's workers) and reports its peak. Per engine: the wall time of the whole
child (start-up, moving the data in, laying it out by query, ``--rounds`` rounds), the wall
time of training alone, the peak memory, and both as ratios to one process. Then, on paper,
what a cluster of N workers holds and moves per worker (rows, critical pairs, the bytes of the
query shuffle, the histogram bytes reduced per tree level).

    python benchmarks/spark_training.py [--scale 0.05] [--rounds 20] [--objective mpboost]
    python benchmarks/spark_training.py --tiny      # a few seconds of data: checks that it runs
    python benchmarks/spark_training.py --stages    # Spark alone: the seconds of each stage of one training

``--stages`` runs only the Spark engine and prints where its time went, stage by stage
(:mod:`boostplug.spark.stages`: the layout shuffle, task launch, Arrow batches into pandas,
features to arrays, the workers' network, the DMatrix, training, the model's return).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ENGINES = ("one", "dask", "spark")


def _data(scale: float):
    sys.path.insert(0, str(HERE))
    from mslr_shaped import generate

    return generate(scale)


def _frame(d):
    import pandas as pd

    from boostplug.groups import qid_from_group_ptr

    cols = [f"f{j}" for j in range(d.X.shape[1])]
    return pd.DataFrame(d.X, columns=cols).assign(label=d.y, qid=qid_from_group_ptr(d.group_ptr)), cols


def run_engine(engine: str, scale: float, rounds: int, objective: str, stages: bool = False) -> dict[str, Any]:
    """One engine end to end (in a child process); returns its training seconds (and Spark's
    seconds per stage with ``stages``)."""
    import xgboost as xgb

    from boostplug import xgboost as bpx

    d = _data(scale)
    params = {"max_depth": 6, "eta": 0.1, "nthread": 1}
    if engine == "one":
        t0 = time.perf_counter()
        xgb.train(bpx.params(**params), bpx.dmatrix(d.X, d.y, group_ptr=d.group_ptr), rounds,
                  obj=bpx.objective(objective))
        return {"train_s": time.perf_counter() - t0}
    df, cols = _frame(d)
    del d
    if engine == "dask":
        from distributed import Client, LocalCluster

        from boostplug import dask as bpd

        with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            frame = bpd.repartition_by_query(df, qid_col="qid", npartitions=2)
            t0 = time.perf_counter()
            bpd.train_xgboost(client, frame, objective, params=params, num_boost_round=rounds)
            return {"train_s": time.perf_counter() - t0}
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from boostplug import spark as bps
    from boostplug.spark.stages import StageTimes

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "4g")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sdf = spark.createDataFrame(df)
    del df
    times = StageTimes()
    t0 = time.perf_counter()
    bps.train_xgboost(sdf, objective, params=params, num_boost_round=rounds, feature_cols=cols, num_workers=2,
                      stage_times=times)
    out: dict[str, Any] = {"train_s": time.perf_counter() - t0}
    if stages:
        out["stages"] = times.seconds()
    spark.stop()
    return out


def _tree_rss(pid: int) -> int:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def measure(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one engine in a child process; its wall time, training time and peak tree memory (and
    with ``--stages`` Spark's seconds per stage)."""
    cmd = [sys.executable, __file__, "--child", engine, "--scale", str(args.scale), "--rounds", str(args.rounds),
           "--objective", args.objective, *(["--stages"] if args.stages else [])]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.1)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    watcher.join()
    if proc.returncode:
        raise SystemExit(f"{engine} failed (exit {proc.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    return {"wall_s": time.perf_counter() - t0, "train_s": result["train_s"], "peak_gib": peak[0] / 2**30,
            "stages": result.get("stages", {})}


def on_paper(scale: float, workers: tuple[int, ...] = (2, 8, 32, 128)) -> None:
    """Per worker of an N-worker cluster: rows, critical pairs, shuffle bytes, histogram bytes per level."""
    from boostplug.pairs import count_critical_pairs

    d = _data(scale)
    pairs = count_critical_pairs(d.y, d.group_ptr)
    sizes = np.diff(d.group_ptr)
    row_bytes = 8 * (d.X.shape[1] + 2)  # features, label and query id as doubles
    hist_bytes = d.X.shape[1] * 256 * 16  # features x bins x (gradient, Hessian) in float64
    print(f"\non paper: {d.n_docs:,} rows, {d.n_queries:,} queries, {int(pairs.sum()):,} critical pairs, "
          f"{row_bytes} bytes per row")
    print(f"  {'workers':>7} {'rows/worker':>12} {'pairs/worker':>13} {'largest query':>13} "
          f"{'shuffle MiB/worker':>18} {'histogram MiB/level':>19}")
    for n in workers:
        # Range partitioning moves a row unless it already sits on its query's worker: (N-1)/N of them.
        shuffle = d.n_docs * row_bytes * (n - 1) / n / n
        # XGBoost's allreduce sends about twice the histogram per worker per tree level (ring).
        print(f"  {n:>7} {d.n_docs / n:>12,.0f} {pairs.sum() / n:>13,.0f} {int(sizes.max()):>13} "
              f"{shuffle / 2**20:>18,.1f} {2 * hist_bytes * (n - 1) / n / 2**20:>19,.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.05, help="share of MSLR-WEB30K's size")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--objective", default="mpboost")
    ap.add_argument("--tiny", action="store_true", help="0.2%% of the size and 2 rounds: checks that it runs")
    ap.add_argument("--stages", action="store_true", help="Spark only: the seconds of each stage of one training")
    ap.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tiny:
        args.scale, args.rounds = 0.002, 2
    if args.child:
        print(json.dumps(run_engine(args.child, args.scale, args.rounds, args.objective, args.stages)))
        return
    if args.stages:
        r = measure("spark", args)
        print(f"Spark local[2], XGBoost, {args.objective}, {args.rounds} rounds, scale {args.scale} of MSLR-WEB30K: "
              f"wall {r['wall_s']:.1f} s, train {r['train_s']:.1f} s; per stage (task stages: the slowest worker)")
        for name, sec in r["stages"].items():
            print(f"  {name:<8} {sec:>9.3f} s")
        return
    print(f"XGBoost, {args.objective}, {args.rounds} rounds, scale {args.scale} of MSLR-WEB30K, 2 workers / 1 thread")
    rows = {engine: measure(engine, args) for engine in ENGINES}
    one = rows["one"]
    print(f"  {'engine':<6} {'wall s':>8} {'train s':>8} {'peak GiB':>9} {'wall/one':>9} {'train/one':>10} {'peak/one':>9}")
    for engine, r in rows.items():
        print(f"  {engine:<6} {r['wall_s']:>8.1f} {r['train_s']:>8.1f} {r['peak_gib']:>9.2f} "
              f"{r['wall_s'] / one['wall_s']:>9.2f} {r['train_s'] / one['train_s']:>10.2f} "
              f"{r['peak_gib'] / one['peak_gib']:>9.2f}")
    on_paper(args.scale)


if __name__ == "__main__":
    main()
