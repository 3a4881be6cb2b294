"""A booster's whole fit with its kernels as dispatched (some in parallel inside a round) against the
same fit with every kernel forced serial (``boostplug._core.dispatch.PARALLEL_MIN_WORK`` raised),
milliseconds per round, interleaved, best of ``--repeat``. Data sets and boosters are those of
``booster_speed.py`` (its ``load`` and ``make``), on the path ``pairwise="auto"`` takes.

    python benchmarks/serial_rounds.py [--boosters mpboost-logdd] [--data ohsumed,mq2008] [--rounds 300] [--repeat 3]

Run it alone: the parallel kernels want both cores.
"""

from __future__ import annotations

import argparse
import time

import booster_speed as bs


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--boosters", default="mpboost-logdd", help="comma-separated of " + ", ".join(bs.BOOSTERS))
    ap.add_argument("--data", default="ohsumed,mq2008", help="comma-separated of " + ", ".join(bs.DATA_SETS))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from boostplug._core import dispatch

    default = dispatch.PARALLEL_MIN_WORK
    for name in args.data.split(","):
        d = bs.load(name, args.rounds, args.rounds)
        for label in args.boosters.split(","):
            path = bs.auto_path(label, d)

            def fit() -> None:
                bs.make(label, path, d.rounds).fit(d.X, d.y, group=d.sizes)

            runs: dict[str, list[float]] = {"as dispatched": [], "all serial": []}
            limits = {"as dispatched": default, "all serial": 10**18}
            try:
                for key in runs:   # compile and warm the parallel kernels, then their serial twins
                    dispatch.PARALLEL_MIN_WORK = limits[key]
                    fit()
                for _ in range(args.repeat):
                    for key in runs:
                        dispatch.PARALLEL_MIN_WORK = limits[key]
                        t0 = time.perf_counter()
                        fit()
                        runs[key].append((time.perf_counter() - t0) / d.rounds * 1e3)
            finally:
                dispatch.PARALLEL_MIN_WORK = default
            print(f"{name} {label} ({path or '-'}): " + "; ".join(
                f"{k} best {min(v):.2f} ms/round (runs {' '.join(f'{x:.2f}' for x in v)})" for k, v in runs.items()),
                flush=True)


if __name__ == "__main__":
    main()
