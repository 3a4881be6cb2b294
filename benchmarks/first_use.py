"""What a user pays once: each entry point's first call in a fresh process with an empty numba
cache (the kernels it needs compiled and written to the cache), against the same call in a fresh
process once the cache is warm. Every call is timed in a child process of its own from
``import boostplug`` on, so both numbers include the interpreter's imports.

Usage:
    python benchmarks/first_use.py [--repeat 2]
    python benchmarks/first_use.py --only metrics --repeat 1     # one entry point (the test's run)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"

_SETUP = """
import time
t0 = time.perf_counter()
import numpy as np
import boostplug
from boostplug.data import make_ranking
d = make_ranking(n_queries=30, docs_per_query=(5, 20), n_features=5, n_labels=3, seed=0)
s = np.random.default_rng(0).normal(size=d.n_docs)
"""

_TRAIN = ("import lightgbm as lgb; from boostplug import lightgbm as bpl; "
          "lgb.train({{'objective': {objective}, 'verbose': -1}}, bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), 5)")

#: Entry point -> the code of its first use (after _SETUP).
ENTRY_POINTS = {
    # what a user runs first: five rounds of lgb.train with a paper objective or the lambdarank copy, and
    # the first NDCG; the built-in lambdarank is the reference (no kernel of ours)
    "lgb-builtin": _TRAIN.format(objective="'lambdarank'"),
    "lgb-qbrank": _TRAIN.format(objective="bpl.objective('qbrank')"),
    "lgb-mpboost": _TRAIN.format(objective="bpl.objective('mpboost')"),
    "lgb-ndcg_boost": _TRAIN.format(objective="bpl.objective('ndcg_boost')"),
    "lgb-lambdarank": _TRAIN.format(objective="bpl.objective('lambdarank')"),
    "lgb-ranknet": _TRAIN.format(objective="bpl.objective('ranknet')"),
    "lgb-approx_ndcg": _TRAIN.format(objective="bpl.objective('approx_ndcg')"),
    # a JaxLoss (the jax extra): JAX's import, its tracing and compilation per bucket (compiles kept in JAX's
    # persistent cache under the user's cache folder, XDG_CACHE_HOME here); on MQ2008 Fold 1 (needs ../shared/data)
    "lgb-approx_ap-jax": _TRAIN.format(objective="bpl.objective('approx_ap')"),
    "lgb-approx_ap-mq2008": ("import lightgbm as lgb; from boostplug import lightgbm as bpl, data; "
                             f"t = data.load_letor_folds({str(MQ2008)!r}, 'letor4')[0][0]; "
                             "lgb.train({'objective': bpl.objective('approx_ap'), 'verbose': -1}, "
                             "bpl.dataset(t.X, t.y, group_ptr=t.group_ptr), 5)"),
    "ndcg": "from boostplug import metrics; metrics.ndcg(s, d.y, d.group_ptr, k=10)",
    "metrics": "from boostplug import metrics; metrics.ndcg(s, d.y, d.group_ptr, k=10); metrics.average_precision(s, d.y, d.group_ptr)",
    "qbrank": "from boostplug import objectives; objectives.get('qbrank').prepare(d.y, d.group_ptr).grad_hess(s)",
    "mpboost": "from boostplug import objectives; objectives.get('mpboost').prepare(d.y, d.group_ptr).grad_hess(s)",
    "ndcg_boost": "from boostplug import objectives; objectives.get('ndcg_boost').prepare(d.y, d.group_ptr).grad_hess(s)",
    "lambdarank": "from boostplug import objectives; objectives.get('lambdarank').prepare(d.y, d.group_ptr).grad_hess(s)",
    "xendcg": "from boostplug import objectives; objectives.get('xendcg').prepare(d.y, d.group_ptr).grad_hess(s)",
    "rank_ndcg": "from boostplug import objectives; objectives.get('rank_ndcg').prepare(d.y, d.group_ptr).grad_hess(s)",
    "ranknet": "from boostplug import objectives; objectives.get('ranknet').prepare(d.y, d.group_ptr).grad_hess(s)",
    "listnet": "from boostplug import objectives; objectives.get('listnet').prepare(d.y, d.group_ptr).grad_hess(s)",
    "ndcg_loss1": "from boostplug import objectives; objectives.get('ndcg_loss1').prepare(d.y, d.group_ptr).grad_hess(s)",
    "ndcg_loss2pp": "from boostplug import objectives; objectives.get('ndcg_loss2pp').prepare(d.y, d.group_ptr).grad_hess(s)",
    "yetirank": "from boostplug import objectives; objectives.get('yetirank').prepare(d.y, d.group_ptr).grad_hess(s)",
    "rankboost": "from boostplug.boosters import RankBoost; RankBoost(n_rounds=3).fit(d.X, d.y, qid=d.qid)",
    "rankboost+": "from boostplug.boosters import RankBoost; RankBoost(variant='rankboost+', n_rounds=3).fit(d.X, d.y, qid=d.qid)",
    "adarank": "from boostplug.boosters import AdaRank; AdaRank(n_rounds=3).fit(d.X, d.y, qid=d.qid)",
    "mpboost-stumps": "from boostplug.boosters import MPBoost; MPBoost(n_rounds=3).fit(d.X, d.y, qid=d.qid)",
    "ndcg_boost-stumps": "from boostplug.boosters import NDCGBoost; NDCGBoost(n_rounds=3).fit(d.X, d.y, qid=d.qid)",
    "clicks": ("from boostplug import clicks; log = clicks.simulate(d, s, 200, seed=0); clicks.preferences(log)"),
}


def _seconds(code: str, cache: str) -> float:
    script = _SETUP + code + "\nprint(time.perf_counter() - t0)\n"
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=str(ROOT))
    if out.returncode != 0:
        raise SystemExit(f"{code!r} failed:\n{out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=2, help="fresh caches per entry point; the best counts")
    ap.add_argument("--only", default=None, help="comma-separated entry points (default: all)")
    args = ap.parse_args(argv)
    names = list(ENTRY_POINTS) if args.only is None else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in ENTRY_POINTS]
    if unknown:
        raise SystemExit(f"unknown entry points {unknown}; choose from {', '.join(ENTRY_POINTS)}")
    print(f"seconds from `import boostplug` to the end of the first call, best of {args.repeat} fresh caches")
    print(f"{'entry point':<20} {'empty cache':>12} {'warm cache':>11} {'once':>7}")
    for name in names:
        if name.endswith("mq2008") and not MQ2008.exists():
            print(f"{name:<20} skipped: {MQ2008} not found")
            continue
        cold, warm = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="bp-numba-") as cache:
                cold.append(_seconds(ENTRY_POINTS[name], cache))
                warm.append(_seconds(ENTRY_POINTS[name], cache))
        print(f"{name:<20} {min(cold):12.2f} {min(warm):11.2f} {min(cold) - min(warm):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
