"""How OpenMP's idle threads should wait: LightGBM training per round under each wait setting,
on idle and on busy cores.

After each parallel region, libgomp's idle threads spin for a while before they sleep
(``GOMP_SPINCOUNT`` iterations; 300,000 when ``OMP_WAIT_POLICY`` is unset, none under
``PASSIVE``). Spinning wins when the cores are idle (the next region starts without a wake-up)
and loses when other processes want the cores (the spinners take their time slices). This
script measures both sides, each configuration in a child process of its own (the runtime reads
the variables once, at start):

* wait settings: ``OMP_WAIT_POLICY`` unset; ``GOMP_SPINCOUNT`` bounded (``--spins``); ``PASSIVE``;
* load: ``idle`` (nothing else running) and ``busy`` (one spinning Python process per core,
  started before the child and stopped after it);
* data: MQ2008 Fold1 train (``../shared/data``; skipped when absent) and the synthetic
  MSLR-WEB10K-sized set of ``benchmarks/objectives.py`` (~705,000 documents);
* threads: LightGBM's ``num_threads`` and numba's thread count, both set to each of ``--threads``;
* methods: LightGBM's built-in ``lambdarank`` and boostplug's ``lambdamart_map`` (a numba
  objective called every round).

Each training runs until ``--seconds`` have passed (at least ``--min-rounds`` rounds); the
median of its per-round times after the first round is reported, best of ``--repeat``
trainings. Run it alone: the idle rows assume nothing else is running.

Usage: python benchmarks/thread_wait.py [--threads 1,2] [--loads idle,busy] [--sets mq2008,synthetic]
                                        [--spins 3000,30000] [--seconds 4] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"
TREE = {"learning_rate": 0.1, "num_leaves": 64, "min_data_in_leaf": 20, "max_bin": 255, "verbose": -1, "seed": 0}
METHODS = ("lambdarank", "lambdamart_map")


def _dataset_file(name: str, folder: Path) -> Path | None:
    """The set as a LightGBM binary file (built once: the children only load it)."""
    path = folder / f"{name}.bin"
    if path.exists():
        return path
    import lightgbm as lgb  # noqa: F401 (the parent builds the files; the children time)

    from boostplug import data as bpdata
    from boostplug import lightgbm as bpl

    if name == "mq2008":
        if not MQ2008.exists():
            return None
        d = bpdata.load_letor_folds(MQ2008, "letor4")[0][0]
    else:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from objectives import mslr_sized

        d = mslr_sized()
    bpl.dataset(d.X, d.y, group_ptr=d.group_ptr, params={"max_bin": TREE["max_bin"], "verbose": -1}).save_binary(
        str(path))
    return path


def _child(path: str, threads: int, seconds: float, min_rounds: int, repeat: int) -> dict[str, float]:
    """Milliseconds per round of each method (run in the child, where the environment is set)."""
    import lightgbm as lgb
    import numba

    from boostplug import lightgbm as bpl

    numba.set_num_threads(threads)
    out = {}
    for method in METHODS:
        best = float("inf")
        for _ in range(repeat):
            stamps: list[float] = []

            def stop_after(env: lgb.callback.CallbackEnv) -> None:
                stamps.append(time.perf_counter())
                if len(stamps) > min_rounds and stamps[-1] - stamps[0] > seconds:
                    raise lgb.callback.EarlyStopException(env.iteration, [])

            objective = "lambdarank" if method == "lambdarank" else bpl.objective(method)
            train = lgb.Dataset(path, params={"verbose": -1})
            lgb.train({**TREE, "objective": objective, "num_threads": threads}, train, num_boost_round=100_000,
                      callbacks=[stop_after])
            rounds = [b - a for a, b in zip(stamps, stamps[1:])]
            best = min(best, 1000 * statistics.median(rounds))
        out[method] = best
    return out


def _env(wait: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    if wait == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    elif wait != "unset":
        env["GOMP_SPINCOUNT"] = wait.split("=", 1)[1]
    env["PYTHONPATH"] = str(ROOT)
    return env


def _hogs(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--loads", default="idle,busy")
    ap.add_argument("--sets", default="mq2008,synthetic")
    ap.add_argument("--spins", default="3000,30000", help="bounded GOMP_SPINCOUNT values")
    ap.add_argument("--seconds", type=float, default=4.0, help="training time per measurement")
    ap.add_argument("--min-rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--child", nargs=2, metavar=("DATASET", "THREADS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], int(args.child[1]), args.seconds, args.min_rounds, args.repeat)))
        return 0
    waits = ["unset"] + [f"spin={int(s)}" for s in args.spins.split(",") if s] + ["passive"]
    cores = os.cpu_count() or 1
    print(f"{cores} cores; LightGBM, {TREE['num_leaves']} leaves; ms per round (median round, best of "
          f"{args.repeat} trainings of >= {args.seconds:g} s); busy = {cores} spinning processes")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets.split(","):
            path = _dataset_file(name, Path(tmp))
            if path is None:
                print(f"\n{name}: not found, skipped")
                continue
            print(f"\n## {name}\n| load | threads | wait | " + " | ".join(METHODS) + " |")
            print("|---|---|---|" + "---|" * len(METHODS))
            for load in args.loads.split(","):
                for threads in (int(t) for t in args.threads.split(",")):
                    for wait in waits:
                        hogs = _hogs(cores) if load == "busy" else []
                        try:
                            run = subprocess.run(
                                [sys.executable, __file__, "--child", str(path), str(threads), "--seconds",
                                 str(args.seconds), "--min-rounds", str(args.min_rounds), "--repeat",
                                 str(args.repeat)], env=_env(wait), capture_output=True, text=True)
                        finally:
                            for h in hogs:
                                h.kill()
                                h.wait()
                        if run.returncode != 0:
                            raise SystemExit(f"{name} {load} {threads} {wait} failed:\n{run.stderr[-2000:]}")
                        ms = json.loads(run.stdout.strip().splitlines()[-1])
                        print(f"| {load} | {threads} | {wait} | " + " | ".join(f"{ms[m]:.1f}" for m in METHODS)
                              + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
