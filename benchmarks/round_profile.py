"""Where a boosting round's time goes: the share of each function in whole fits, by cProfile.

For the stump boosters (stump MPBoost, stump NDCG_Boost, RankBoost+) on OHSUMED Fold1 train, and
for LightGBM trained with each boostplug objective on a synthetic MSLR-shaped set (the tree
learner's ``__boost`` against the objective's kernels), it runs one warm-up fit (compiling
nothing later), then profiles a whole fit and prints the functions with the largest own time,
as shares of the fit. A numba kernel is one entry (its own time is the compiled code's), so the
table says which kernel to work on, not why it is slow. Shares, not seconds: cProfile's own cost
inflates the Python-level entries a little, and the shares hold on a busy machine where
seconds do not.

Usage::

    python benchmarks/round_profile.py [--boosters mpboost,ndcg_boost,rankboost+]
        [--objectives qbrank,mpboost,ndcg_boost] [--docs 400000] [--rounds 300] [--top 8]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any, Callable


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # profile this checkout's boostplug, not an installed copy
SHARED = ROOT.parent / "shared" / "data"

BOOSTERS = {
    "mpboost": ("MPBoost", {}),
    "ndcg_boost": ("NDCGBoost", {}),
    "rankboost+": ("RankBoost", {"variant": "rankboost+"}),
}
OBJECTIVES = ("qbrank", "mpboost", "ndcg_boost")


def _where(func: tuple[str, int, str]) -> str:
    path, line, name = func
    if path == "~":
        return name
    p = Path(path)
    parts = p.parts
    short = "/".join(parts[parts.index("boostplug"):]) if "boostplug" in parts else "/".join(parts[-2:])
    return f"{short}:{line}({name})"


def profile(run: Callable[[], Any], top: int) -> list[tuple[float, int, str]]:
    """``(share of the run, calls, function)`` of the ``top`` functions by own time."""
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    run()
    prof.disable()
    wall = time.perf_counter() - t0
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values()) or wall
    rows = sorted(((v[2] / total, v[1], _where(k)) for k, v in stats.items()), reverse=True)
    return rows[:top]


def show(title: str, rows: list[tuple[float, int, str]]) -> None:
    print(f"\n== {title}")
    print(f"{'share':>6} {'calls':>7}  function")
    for share, calls, where in rows:
        print(f"{100 * share:5.1f}% {calls:7d}  {where}")


def boosters(names: list[str], rounds: int, top: int) -> None:
    if not names:
        return   # no booster asked for: OHSUMED is not read (it need not be there)
    from boostplug import boosters as bp
    from boostplug.data import load_letor_folds

    train = load_letor_folds(SHARED / "OHSUMED", "letor3", folds=[0])[0][0]
    for name in names:
        cls, params = BOOSTERS[name]

        def fit(n: int = rounds) -> Any:
            return getattr(bp, cls)(n_rounds=n, random_state=0, **params).fit(train.X, train.y, qid=train.qid)

        fit(3)
        show(f"{name}: OHSUMED Fold1 train ({train.n_docs:,} documents), {rounds} rounds", profile(fit, top))


def objectives(names: list[str], docs: int, top: int) -> None:
    import lightgbm as lgb

    from boostplug import lightgbm as bpl
    from boostplug.data import make_ranking

    n_queries = max(docs // 120, 2)
    d = make_ranking(n_queries=n_queries, docs_per_query=(20, 220), n_features=20, n_labels=5, seed=0)
    threads = int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1))
    ds = bpl.dataset(d.X, d.y, group_ptr=d.group_ptr)
    for name in names:
        params = {"objective": bpl.objective(name), "num_leaves": 31, "verbose": -1, "num_threads": threads,
                  "metric": "None"}
        lgb.train(params, ds, 2)
        show(f"LightGBM with {name}: {d.n_docs:,} documents, 31 leaves, 20 rounds, {threads} threads",
             profile(lambda: lgb.train(params, ds, 20), top))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boosters", default=",".join(BOOSTERS), help="comma-separated of " + ", ".join(BOOSTERS))
    ap.add_argument("--objectives", default=",".join(OBJECTIVES), help="comma-separated of " + ", ".join(OBJECTIVES))
    ap.add_argument("--docs", type=int, default=400_000, help="documents of the objectives' synthetic set")
    ap.add_argument("--rounds", type=int, default=300, help="rounds of each booster's fit")
    ap.add_argument("--top", type=int, default=8, help="functions shown per fit")
    args = ap.parse_args(argv)
    b = [x for x in args.boosters.split(",") if x]
    o = [x for x in args.objectives.split(",") if x]
    bad = [x for x in b if x not in BOOSTERS] + [x for x in o if x not in OBJECTIVES]
    if bad:
        ap.error(f"unknown --boosters or --objectives values: {bad}")
    if b and not (SHARED / "OHSUMED").is_dir():
        ap.error(f"the boosters' profile reads OHSUMED from {SHARED}; pass --boosters '' to skip it")
    print(f"cProfile shares of own time; load average at start {os.getloadavg()[0]:.2f}")
    boosters(b, args.rounds, args.top)
    objectives(o, args.docs, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
