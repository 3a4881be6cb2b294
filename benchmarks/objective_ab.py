"""Speed guard of the objectives: one gradient call per round, as each framework makes it, in two
checkouts of boostplug (A: a reference commit, B: this one), interleaved in one run.

For every objective (QBRank, MPBoost, NDCG_Boost) and framework (LightGBM, XGBoost), the full
adapter call a boosting round makes (reading labels and groups off the Dataset/DMatrix, the
binding check, the kernel) on a synthetic MSLR-shaped set, and the prepared kernel alone. Each
checkout runs in its own process; the processes alternate A, B, A, B, ... (``--pairs`` times),
each taking the best of ``--calls`` calls, so that a busy spell hits both alike. Prints, per
case, the best seconds of A and of B over the runs, the ratio B/A of the bests and the range of
the per-pair ratios (the spread).

Usage:
    git worktree add /tmp/ref <commit>
    python benchmarks/objective_ab.py --a /tmp/ref --b . [--docs 400000] [--pairs 3] [--threads 2]
    python benchmarks/objective_ab.py --tiny      # both sides this checkout, seconds (the test's run)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OBJECTIVES = ("qbrank", "mpboost", "ndcg_boost")

# The child: times each case in the checkout it was started in (PYTHONPATH), prints JSON.
_CHILD = r"""
import json, sys, time
import numpy as np
import boostplug
from boostplug import objectives
from boostplug import lightgbm as bpl, xgboost as bpx
from boostplug.data import make_ranking

docs, calls, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
names = sys.argv[4].split(",")
queries = max(2, docs // 100)
d = make_ranking(n_queries=queries, docs_per_query=(20, 180), n_features=8, n_labels=5, seed=0)
rng = np.random.default_rng(1)
preds = rng.normal(size=d.n_docs)
lgb_set = bpl.dataset(d.X, d.y, group_ptr=d.group_ptr, params={"verbose": -1, "num_threads": threads},
                      free_raw_data=False).construct()
xgb_set = bpx.dmatrix(d.X, d.y, group_ptr=d.group_ptr, nthread=threads)

def best(fn):
    fn()  # binds the set, compiles nothing new after this
    out = []
    for _ in range(calls):
        t0 = time.perf_counter(); fn(); out.append(time.perf_counter() - t0)
    return min(out)

from boostplug._core.threads import limit_threads
res = {"docs": int(d.n_docs)}
for name in names:
    prep = objectives.get(name).prepare(d.y, d.group_ptr)
    with limit_threads(threads):
        res[f"{name}/kernel"] = best(lambda: prep.grad_hess(preds))
    lo = bpl.objective(name)
    res[f"{name}/lightgbm"] = best(lambda: lo(preds, lgb_set))
    xo = bpx.objective(name)
    with limit_threads(threads):
        res[f"{name}/xgboost"] = best(lambda: xo(preds, xgb_set))
print(json.dumps(res))
"""


def _run(root: Path, args: argparse.Namespace) -> dict[str, float]:
    env_path = str(root.resolve())
    out = subprocess.run([sys.executable, "-c", _CHILD, str(args.docs), str(args.calls), str(args.threads),
                          ",".join(args.objectives)], capture_output=True, text=True, check=False,
                         env={**_env(), "PYTHONPATH": env_path}, cwd=env_path)
    if out.returncode != 0:
        raise SystemExit(f"the run in {root} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, default=ROOT, help="the reference checkout (default: this one)")
    ap.add_argument("--b", type=Path, default=ROOT, help="the checkout measured against it (default: this one)")
    ap.add_argument("--docs", type=int, default=400_000, help="documents of the synthetic set")
    ap.add_argument("--calls", type=int, default=5, help="calls per process; the best counts")
    ap.add_argument("--pairs", type=int, default=3, help="A/B process pairs, interleaved")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--objectives", default=",".join(OBJECTIVES))
    ap.add_argument("--tiny", action="store_true", help="2,000 documents, one pair, both sides this checkout")
    args = ap.parse_args(argv)
    args.objectives = [o.strip() for o in args.objectives.split(",") if o.strip()]
    if args.tiny:
        args.docs, args.calls, args.pairs, args.a, args.b = 2_000, 2, 1, ROOT, ROOT
    runs: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
    for _ in range(args.pairs):
        runs["a"].append(_run(args.a, args))
        runs["b"].append(_run(args.b, args))
    cases = [k for k in runs["a"][0] if k != "docs"]
    print(f"A = {args.a.resolve()}\nB = {args.b.resolve()}\n{runs['a'][0]['docs']:,} documents, "
          f"{args.threads} threads, best of {args.calls} calls per process, {args.pairs} interleaved A/B pairs\n")
    print(f"{'case':<24} {'A ms':>9} {'B ms':>9} {'B/A':>6}  per-pair B/A")
    worst = 0.0
    for case in cases:
        a = [r[case] for r in runs["a"]]
        b = [r[case] for r in runs["b"]]
        ratio = min(b) / min(a)
        pairs = [y / x for x, y in zip(a, b)]
        worst = max(worst, ratio)
        print(f"{case:<24} {min(a) * 1e3:9.2f} {min(b) * 1e3:9.2f} {ratio:6.3f}  "
              f"{min(pairs):.3f}-{max(pairs):.3f}")
    print(f"\nlargest B/A of the bests: {worst:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
