"""``boostplug compare``'s first estimate of a study's time against the time it took.

The study (docs/compare.md's tuned MQ2008 study): ``--data MQ2008 --layout letor4 --methods
lambdarank,ranknet,ndcg_loss2pp,yetirank --tune 20``, up to 300 rounds, five folds. Modes: ``--jobs 1``,
``--jobs 2``, ``--scheduler local:2`` and a cluster started by hand on 127.0.0.1 (``dask scheduler`` and two
``dask worker --nthreads 1``, stopped after). Each mode runs the command in a fresh process; from its stderr
the first ``expected time about ...`` line (said before the first training) and the wall time from start to
exit. Printed and written to ``--out`` (``estimate.txt``, ``runs.json``): per mode the estimate, the actual
time and their ratio, with the CPU (numba's name and ``lscpu``'s model) and the command.

``--quick``: ``--tune 4 --folds 1 --rounds 100``, to see the script work (not a measurement).

Usage::

    python benchmarks/compare_estimate.py [--data ../shared/data/MQ2008 --layout letor4] [--quick]
        [--modes jobs1,jobs2,local2,cluster2] [--out docs/results/compare_estimate]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
METHODS = "lambdarank,ranknet,ndcg_loss2pp,yetirank"
UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}


def cpu() -> str:
    """numba's CPU name and lscpu's model name."""
    from numba.misc.numba_sysinfo import get_sysinfo

    info = get_sysinfo()
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        model = next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "")
    except (OSError, subprocess.SubprocessError):
        pass
    return f"{model or platform.processor()} (numba: {info.get('CPU Name')}, {info.get('CPU Count')} CPUs)"


def estimate_seconds(line: str) -> float | None:
    """The seconds of an ``expected time about N unit`` line."""
    m = re.search(r"expected time about ([\d.]+) (s|min|h)\b", line)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"no scheduler on 127.0.0.1:{port} after {seconds:g} s")


def start_cluster(workers: int, env: dict[str, str]) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and ``workers`` single-threaded workers on 127.0.0.1, no dashboards; their address and
    processes."""
    dask = str(Path(sys.executable).parent / "dask")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        _wait_port(port)
        procs += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--host", "127.0.0.1",
                                    "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                  for _ in range(workers)]
    except BaseException:
        stop(procs)
        raise
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    """End the processes this script started (workers first), by their own ids."""
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
    for p in reversed(procs):
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=15)


def run_mode(mode: str, study: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One mode's command, timed; its first estimate line and the seconds it said."""
    procs: list[subprocess.Popen] = []
    try:
        if mode.startswith("jobs"):
            where = ["--jobs", mode[4:]]
        elif mode.startswith("local"):
            where = ["--scheduler", f"local:{mode[5:]}"]
        else:  # cluster2: started by hand
            address, procs = start_cluster(int(mode[7:]), env)
            where = ["--scheduler", address]
        argv = [sys.executable, "-m", "boostplug.cli", "compare", *study, *where, "--no-plots"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first, said_at, err = None, None, []
        for line in proc.stderr:  # type: ignore[union-attr]
            err.append(line)
            if first is None and "expected time about" in line:
                first, said_at = line.strip(), time.perf_counter() - t0
        out = proc.stdout.read()  # type: ignore[union-attr]
        code = proc.wait()
        wall = time.perf_counter() - t0
    finally:
        stop(procs)
    if code != 0:
        raise RuntimeError(f"{mode}: exit {code}\n{''.join(err)[-3000:]}")
    return {"mode": mode, "argv": [a for a in argv[1:] if a != sys.executable], "estimate_line": first,
            "estimate_s": estimate_seconds(first or ""), "said_after_s": said_at, "actual_s": wall,
            "table": out, "stderr": "".join(err)}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'mode':10} {'estimate s':>11} {'actual s':>9} {'ratio':>6} {'said after s':>13}"]
    for r in rows:
        est = r["estimate_s"]
        ratio = f"{est / r['actual_s']:6.2f}" if est else f"{'-':>6}"
        said = f"{r['said_after_s']:13.1f}" if r["said_after_s"] is not None else f"{'-':>13}"
        lines.append(f"{r['mode']:10} {est if est is not None else '-':>11} {r['actual_s']:9.1f} {ratio} {said}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "MQ2008"))
    p.add_argument("--layout", default="letor4", help="'' for a single file (with --kfold)")
    p.add_argument("--kfold", type=int, default=None)
    p.add_argument("--methods", default=METHODS)
    p.add_argument("--tune", type=int, default=20)
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--folds", default=None)
    p.add_argument("--quick", action="store_true", help="--tune 4 --folds 1 --rounds 100: to see it work")
    p.add_argument("--modes", default="jobs1,jobs2,local2,cluster2")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "compare_estimate")
    args = p.parse_args(argv)
    if args.quick:
        args.tune, args.folds, args.rounds = 4, "1", 100
    study = ["--data", args.data, "--methods", args.methods, "--tune", str(args.tune), "--rounds", str(args.rounds),
             "--no-progress", *(["--layout", args.layout] if args.layout else []),
             *(["--kfold", str(args.kfold)] if args.kfold else []), *(["--folds", args.folds] if args.folds else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    machine = cpu()
    print(f"boostplug compare {shlex.join(study)}; {machine}", flush=True)
    rows = []
    for mode in args.modes.split(","):
        rows.append(run_mode(mode, study, env))
        r = rows[-1]
        print(f"{mode}: {r['estimate_line'] or 'no estimate line'}; took {r['actual_s']:.1f} s", flush=True)
    text = table(rows)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "estimate.txt").write_text(f"boostplug compare {shlex.join(study)} (+ each mode's --jobs or "
                                           f"--scheduler)\nmachine: {machine}\n\n{text}\n")
    (args.out / "runs.json").write_text(json.dumps({"machine": machine, "study": study, "runs": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
