"""What compiles on an entry point's first use (``first_use.py``'s entry points), kernel by kernel:
each entry point runs in a fresh process with an empty ``NUMBA_CACHE_DIR`` while numba's
``numba:compile`` events are recorded. A kernel's compile includes the compiles of the helpers it
calls for the first time; the "self" column leaves those out, so the self times add up to the total.
Times are the process's CPU seconds (``time.process_time``: compiling runs on one thread), so that a
busy machine changes them less than wall-clock times; the first line's figure is wall-clock.

Usage:
    python benchmarks/first_use_compiles.py --only metrics,qbrank
    python benchmarks/first_use_compiles.py --only rankboost+,ndcg_boost-stumps --counts   # counts only, a line each
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from first_use import _SETUP, ENTRY_POINTS, ROOT  # noqa: E402

_RECORD = """
import json, time
from numba.core import event
_events = []
class _L(event.Listener):
    def on_start(self, e):
        _events.append((time.process_time(), 1, e.kind, e.data))
    def on_end(self, e):
        _events.append((time.process_time(), 0, e.kind, e.data))
event.register("numba:compile", _L())
event.register("numba:llvm_lock", _L())
"""

_REPORT = """
_t_end = time.perf_counter()
_t_start = t0
stack, rows, llvm_depth, llvm_t0 = [], [], 0, 0.0
for t, start, kind, data in _events:
    if kind == "numba:llvm_lock":
        if start:
            llvm_depth += 1
            if llvm_depth == 1:
                llvm_t0 = t
        else:
            llvm_depth -= 1
            if llvm_depth == 0 and stack:
                stack[-1][2] += t - llvm_t0
        continue
    d = data["dispatcher"]
    if start:
        stack.append([t, 0.0, 0.0])
    else:
        t0, children, llvm = stack.pop()
        total = t - t0
        if stack:
            stack[-1][1] += total
        fn = d.py_func
        rows.append(dict(name=f"{fn.__module__}.{fn.__qualname__}", args=str(tuple(data["args"])),
                         parallel=bool(d.targetoptions.get("parallel")), total=total, self=total - children,
                         llvm=llvm, nested=bool(stack)))
print(json.dumps(dict(rows=rows, seconds=_t_end - _t_start)))
"""


def _record(code: str, cache: str) -> dict:
    script = _RECORD + _SETUP + code + _REPORT
    # the class kernels' cache is under the user's cache folder: empty too
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=str(ROOT))
    if out.returncode != 0:
        raise SystemExit(f"{code!r} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="metrics,qbrank,mpboost,ndcg_boost", help="comma-separated entry points")
    ap.add_argument("--signatures", action="store_true", help="print each compile's argument types")
    ap.add_argument("--counts", action="store_true",
                    help="one line per entry point: its compiles, boostplug's among them, the kernels it called")
    args = ap.parse_args(argv)
    if args.counts:
        print(f"{'entry point':<20} {'compiles':>8} {'boostplug':>9} {'called':>6}  kernels called")
    for name in [n.strip() for n in args.only.split(",")]:
        with tempfile.TemporaryDirectory(prefix="bp-numba-") as cache:
            rec = _record(ENTRY_POINTS[name], cache)
        rows = rec["rows"]
        if args.counts:
            ours = [r for r in rows if r["name"].startswith("boostplug.")]
            called = [r["name"].rsplit(".", 1)[-1] for r in rows if not r["nested"]]
            print(f"{name:<20} {len(rows):8d} {len(ours):9d} {len(called):6d}  {' '.join(sorted(called))}")
            continue
        print(f"\n{name}: {rec['seconds']:.2f} s from import to the end of the first call, "
              f"{len(rows)} compiles, {sum(r['self'] for r in rows):.2f} CPU s compiling "
              f"({sum(r['llvm'] for r in rows):.2f} s in LLVM)")
        print(f"  {'self':>7} {'LLVM':>7} {'total':>7}  compiled function (CPU seconds)")
        for r in sorted(rows, key=lambda r: -r["self"]):
            tag = " [parallel]" if r["parallel"] else ""
            tag += "" if r["nested"] else " (called)"
            print(f"  {r['self']:7.2f} {r['llvm']:7.2f} {r['total']:7.2f}  {r['name']}{tag}")
            if args.signatures:
                print(f"  {'':23}  {r['args']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
