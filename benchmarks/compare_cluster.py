"""``boostplug compare`` on a Dask cluster against local processes: one tuned study, timed end to end.

The study: the MSLR-shaped set (``benchmarks/mslr_shaped.py``, labels that need trees) at ``--scale``,
``--methods`` on folds 1-3 of a query-level 5-fold split, ``--tune`` trials per method and fold, up to
``--rounds`` rounds, one training thread per run. Modes: ``--jobs 1`` (in one worker process, as the
command trains), ``--scheduler local:1``, ``local:2`` and ``--jobs 2`` (more where the machine has the
cores: ``local:N`` and ``--jobs N`` up to the cores). Each mode starts fresh processes, which load
the kernels from numba's cache (a warm-up run fills it first).

Printed per mode: the wall seconds from start to the last result (a cluster's start included) and
the cluster's start alone, the speedup over ``--jobs 1``, and for the cluster modes, from Dask's task
stream, the runs' compute seconds and, with one worker (the runs serial), the overhead per run: the wall
time after the cluster's start not spent computing a run (scheduling, transfers, the folds' tasks, the
checks), per run and as a share of the mean run's compute time;
then the bytes the folds weigh and the bytes the workers fetched from each other. Every mode's test
values must equal ``--jobs 1``'s (checked).

Usage::

    python benchmarks/compare_cluster.py --work /tmp/mslr [--scale 0.01] [--rounds 300] [--tune 5]
        [--methods lambdarank,rank_xendcg,ranknet,xgb-rank:ndcg] [--modes jobs1,local1,local2,jobs2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def study(work: Path, scale: float) -> Path:
    path = work / "mslr_shaped.txt"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "mslr_shaped.py"), "--work", str(work), "--scale",
                        str(scale), "--stages", "data"], check=True)
    return path


def run_mode(mode: str, methods: list[str], folds: Any, args: argparse.Namespace) -> dict[str, Any]:
    from boostplug import compare
    from boostplug.compare.cluster import connect
    from distributed import get_task_stream

    kw = dict(rounds=args.rounds, tune=args.tune, threads=1, seed=0)
    t0 = time.perf_counter()
    if mode.startswith("jobs"):
        jobs = int(mode[4:])
        results = compare.run(methods, folds, jobs=jobs, isolated=True, **kw)
        return {"wall": time.perf_counter() - t0, "results": results}
    with connect(int(mode[5:])) as client:
        started = time.perf_counter() - t0
        with get_task_stream(client=client) as stream:
            results = compare.run(methods, folds, client=client, **kw)
        wall = time.perf_counter() - t0
        fetched = client.run(lambda dask_worker: sum(t["total"] for t in dask_worker.transfer_incoming_log))
    compute = [sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
               for task in stream.data if "boostplug-compare-" in str(task["key"])]  # the runs, not the folds
    return {"wall": wall, "start": started, "results": results, "compute": compute,
            "fetched": sum(fetched.values()), "fold_bytes": results.cluster["fold_bytes"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--scale", type=float, default=0.01)
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--tune", type=int, default=5)
    p.add_argument("--methods", default="lambdarank,rank_xendcg,ranknet,xgb-rank:ndcg")
    p.add_argument("--modes", default=None, help="default: jobs1,local1, then local:N and jobs N for N = 2..cores")
    args = p.parse_args()
    from boostplug import compare

    cores = os.cpu_count() or 1
    modes = (args.modes.split(",") if args.modes else
             ["jobs1", "local1"] + [m for n in range(2, cores + 1) for m in (f"local{n}", f"jobs{n}")])
    methods = args.methods.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    folds = compare.load_folds(str(study(args.work, args.scale)), n_folds=5, select="1,2,3", seed=0)
    print(f"{len(methods)} methods x {len(folds)} folds = {len(methods) * len(folds)} runs, --tune {args.tune}, "
          f"up to {args.rounds} rounds, 1 thread per run; {cores} cores")
    compare.run(methods[:1], folds[:1], rounds=2, jobs=1, isolated=True)  # numba's cache filled
    measured = {}
    for m in modes:
        measured[m] = run_mode(m, methods, folds, args)
        print(f"{m}: {measured[m]['wall']:.1f} s", flush=True)
    base = measured[modes[0]]
    key = [(r.method, r.fold, r.best_round, r.test) for r in base["results"]]
    print(f"{'mode':8} {'wall s':>8} {'start s':>8} {'speedup':>8} {'compute s':>10} {'overhead/run':>13} {'same':>5}")
    for mode, m in measured.items():
        same = [(r.method, r.fold, r.best_round, r.test) for r in m["results"]] == key
        line = f"{mode:8} {m['wall']:8.1f} {m.get('start', 0.0):8.1f} {base['wall'] / m['wall']:8.2f}"
        if "compute" in m and mode == "local1":  # one worker: the runs are serial, the rest is overhead
            runs = len(m["compute"])
            overhead = (m["wall"] - m["start"] - sum(m["compute"])) / runs
            line += f" {sum(m['compute']):10.1f} {overhead:6.2f} s {100 * overhead * runs / sum(m['compute']):4.1f}%"
        elif "compute" in m:
            line += f" {sum(m['compute']):10.1f} {'':13}"
        else:
            line += f" {'':10} {'':13}"
        print(line + f" {'yes' if same else 'NO':>5}")
    for mode, m in measured.items():
        if "fold_bytes" in m:
            print(f"{mode}: the folds weigh {m['fold_bytes'] / 2**20:.1f} MiB (sent once to the scheduler); "
                  f"the workers fetched {m['fetched'] / 2**20:.1f} MiB from each other")


if __name__ == "__main__":
    main()
