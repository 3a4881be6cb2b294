"""Speed guard of the objectives: one gradient call per round, as each framework makes it, in two
checkouts of boostplug (A: a base commit, B: this one), interleaved in one run.

For every registered objective but those written in JAX (``boostplug.objectives.names()`` of B; a name A does not have is
reported as ``new``) and framework (LightGBM, XGBoost), the full adapter call a boosting round
makes (reading labels and groups off the Dataset/DMatrix, the binding check, the kernel) on a
synthetic MSLR-shaped set, and the prepared kernel alone. Each checkout runs in its own process;
the processes alternate A, B, A, B, ... (``--pairs`` times, ``benchmarks/_ab.py``), each taking the
best of ``--calls`` calls, so that a busy spell hits both alike. Prints, per case, the best
milliseconds of A and of B over the runs, the ratio B/A of the bests and the range of the per-pair
ratios (the spread), and names the cases whose B/A is above ``--tolerance`` (exit status 1 if any).

Usage:
    python benchmarks/objective_ab.py --a <commit or folder> [--b .] [--docs 400000] [--pairs 3] [--threads 2]
    python benchmarks/objective_ab.py --tiny      # both sides this checkout, seconds (the test's run)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _ab

ROOT = _ab.ROOT

# The child: times each case in the checkout it was started in (PYTHONPATH), prints JSON. Names
# "all": every objective its boostplug registers.
_CHILD = r"""
import json, sys, time
import numpy as np
import boostplug
from boostplug import objectives
from boostplug import lightgbm as bpl, xgboost as bpx
from boostplug.data import make_ranking

docs, calls, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
# "all": the compiled objectives (a loss written in JAX, boostplug.autodiff, is benchmarks/autodiff.py's:
# its Hessian's per-position passes take minutes a call on this set)
names = ([n for n in objectives.names() if not objectives.get(n).loss_class.__module__.startswith("boostplug.autodiff")]
         if sys.argv[4] == "all" else sys.argv[4].split(","))
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
res = {"boostplug": boostplug.__file__, "docs": int(d.n_docs)}
known = set(objectives.names())
for name in names:
    if name not in known:  # not in this checkout: the other side reports it as new
        continue
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", default=str(ROOT), help="the base: a commit or a checkout's folder (default: this one)")
    ap.add_argument("--b", default=str(_ab.this_checkout()), help="the checkout measured against it (default: this one)")
    ap.add_argument("--docs", type=int, default=400_000, help="documents of the synthetic set")
    ap.add_argument("--calls", type=int, default=5, help="calls per process; the best counts")
    ap.add_argument("--pairs", type=int, default=3, help="A/B process pairs, interleaved")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--objectives", default="all", help="comma-separated names (default: all of B's registry)")
    ap.add_argument("--tolerance", type=float, default=1.1, help="flag a case whose B/A is above this")
    ap.add_argument("--tiny", action="store_true", help="2,000 documents, one pair, both sides this checkout")
    args = ap.parse_args(argv)
    names = ",".join(o.strip() for o in args.objectives.split(",") if o.strip()) or "all"
    if args.tiny:
        args.docs, args.calls, args.pairs, args.a, args.b = 2_000, 2, 1, str(ROOT), str(ROOT)
    child = ["-c", _CHILD, str(args.docs), str(args.calls), str(args.threads), names]
    with _ab.checkout(args.a) as a, _ab.checkout(args.b) as b:
        runs_a, runs_b = _ab.interleaved(a, b, child, args.pairs)
    machine = _ab.cpu()
    print(f"A = {args.a} ({a})\nB = {args.b} ({b})\n{runs_b[0]['docs']:,} documents, {args.threads} threads, "
          f"best of {args.calls} calls per process, {args.pairs} interleaved A/B pairs; "
          f"CPU {machine['cpu_model']} (numba: {machine['cpu_name']})\n")
    rows = [r for r in _ab.compare(runs_a, runs_b) if r.case != "docs"]
    return _ab.report(rows, args.tolerance, {"a": "A ms", "b": "B ms"}, scale=1e3, width=24)


if __name__ == "__main__":
    sys.exit(main())
