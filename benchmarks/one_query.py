"""One huge query: time and peak memory of the pair-free reference boosters and of rank_loss.

One query of ``n`` documents with grades 0-4 (about 0.4 n^2 critical pairs: 4e9 at 100,000
documents) and ``--features`` Gaussian features, two of them driven by the grade. Each case runs
in its own process (``--repeat`` times): the wall time of ``fit`` for ``--rounds`` rounds (numba
compiled beforehand on a small query, in the same process) and the process's peak resident
memory. Prints best, spread (max - min) and peak memory per case.

Usage::

    python benchmarks/one_query.py [--sizes 100000,1000000] [--rounds 10] [--repeat 3]
    python benchmarks/one_query.py --cases ndcg_boost_grad --sizes 1000,3000,10000,30000,100000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CASES = {
    "rank_loss": None,
    "ndcg_boost_grad": None,   # one gradient of the NDCG_Boost objective: O(n^2) per query by definition
    "rb-c": ("RankBoost", {"variant": "rb-c"}),
    "rb-d": ("RankBoost", {"variant": "rb-d"}),
    "rankboost+": ("RankBoost", {"variant": "rankboost+"}),              # efficient (Algorithm 2), signature groups
    "rankboost+exact": ("RankBoost", {"variant": "rankboost+", "efficient": False}),
    "mpboost-binary": ("MPBoost", {"ddf": "binary"}),
    "mpboost-logdd": ("MPBoost", {"ddf": "logdd"}),
}


def data(n: int, n_features: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, size=n).astype(np.float64)
    X = rng.normal(size=(n, n_features))
    X[:, 0] += y
    X[:, 1] += 0.5 * y
    return X, y


def child(case: str, n: int, rounds: int, n_features: int) -> dict:
    import resource

    from boostplug import boosters, metrics

    X, y = data(n, n_features)
    if case == "ndcg_boost_grad":
        from boostplug import objectives

        obj = objectives.get("ndcg_boost")
        obj.grad_hess(X[:50, 0], y[:50], [0, 50])                  # compile
        prepared = obj.prepare(y, [0, n])
        t0 = time.perf_counter()
        prepared.grad_hess(X[:, 0])
    elif CASES[case] is None:
        metrics.rank_loss(y[:50] * 0.5, y[:50], [0, 50])          # compile
        t0 = time.perf_counter()
        metrics.rank_loss(X[:, 0], y, [0, n])
    else:
        name, params = CASES[case]
        getattr(boosters, name)(n_rounds=1, **params).fit(X[:200], y[:200], group=[200])   # compile
        t0 = time.perf_counter()
        getattr(boosters, name)(n_rounds=rounds, random_state=0, **params).fit(X, y, group=[n])
    seconds = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "peak_gib": peak_kib / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--features", type=int, default=46)
    ap.add_argument("--cases", default=",".join(c for c in CASES if c != "ndcg_boost_grad"),
                    help="comma-separated; also ndcg_boost_grad (one objective gradient, O(n^2))")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        case, n, rounds, f = args.child
        print(json.dumps(child(case, int(n), int(rounds), int(f))))
        return
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE"))
    print(f"one query, grades 0-4, {args.features} features, {args.rounds} rounds; best of {args.repeat} "
          f"(spread = max - min), peak resident memory of the process; numba threads: "
          f"{os.environ.get('NUMBA_NUM_THREADS', 'all cores')}")
    print(f"{'case':16s} {'documents':>10s} {'best s':>9s} {'spread s':>9s} {'peak GiB':>9s}")
    for n in (int(s) for s in args.sizes.split(",")):
        for case in args.cases.split(","):
            runs = []
            for _ in range(args.repeat):
                out = subprocess.run([sys.executable, __file__, "--child", case, str(n), str(args.rounds),
                                      str(args.features)], capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    print(f"{case:16s} {n:>10,d}  failed: {out.stderr.strip().splitlines()[-1:]}")
                    break
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            if runs:
                secs = [r["seconds"] for r in runs]
                print(f"{case:16s} {n:>10,d} {min(secs):9.2f} {max(secs) - min(secs):9.2f} "
                      f"{max(r['peak_gib'] for r in runs):9.2f}", flush=True)


if __name__ == "__main__":
    main()
