"""A booster's whole fit with its kernels as dispatched (some in parallel inside a round) against the
same fit with every kernel forced serial (``boostplug._core.dispatch.PARALLEL_MIN_WORK`` raised),
milliseconds per round, interleaved, best of ``--repeat``, on OHSUMED and MQ2008 Fold1 train.

    python benchmarks/serial_rounds.py [--boosters mpboost] [--rounds 300] [--repeat 3]

Run it alone: the parallel kernels want both cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # time this checkout's boostplug
SHARED = ROOT.parent / "shared" / "data"

BOOSTERS = {
    "mpboost": ("MPBoost", {"pairwise": "levels"}),
    "ndcg_boost": ("NDCGBoost", {}),
    "rankboost+": ("RankBoost", {"variant": "rankboost+"}),
    "rb-c": ("RankBoost", {"variant": "rb-c"}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--boosters", default="mpboost", help="comma-separated of " + ", ".join(BOOSTERS))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from boostplug import boosters as bp
    from boostplug._core import dispatch
    from boostplug.data import load_letor_folds

    default = dispatch.PARALLEL_MIN_WORK
    for data, layout in (("OHSUMED", "letor3"), ("MQ2008", "letor4")):
        train = load_letor_folds(SHARED / data, layout, folds=[0])[0][0]
        for name in args.boosters.split(","):
            cls, params = BOOSTERS[name]

            def fit() -> None:
                getattr(bp, cls)(n_rounds=args.rounds, random_state=0, **params).fit(train.X, train.y, qid=train.qid)

            fit()   # compile and warm the parallel kernels, then the serial twins
            dispatch.PARALLEL_MIN_WORK = 10**18
            fit()
            runs: dict[str, list[float]] = {"as dispatched": [], "all serial": []}
            try:
                for _ in range(args.repeat):
                    for key in runs:
                        dispatch.PARALLEL_MIN_WORK = default if key == "as dispatched" else 10**18
                        t0 = time.perf_counter()
                        fit()
                        runs[key].append((time.perf_counter() - t0) / args.rounds * 1e3)
            finally:
                dispatch.PARALLEL_MIN_WORK = default
            print(f"{data} {name}: " + "; ".join(
                f"{k} best {min(v):.2f} ms/round (runs {' '.join(f'{x:.2f}' for x in v)})" for k, v in runs.items()),
                flush=True)


if __name__ == "__main__":
    main()
