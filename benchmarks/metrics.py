"""Time boostplug.metrics.ndcg(k=10) on 250,000 synthetic documents in 2,500 queries.

Run: ``python benchmarks/metrics.py [--repeat N] [--docs N] [--queries N]``. Prints the best
of ``repeat`` runs after a warm-up call (which compiles, or loads the numba cache), for
every tie convention, the per-query variant, and MAP@10 / ERR@10 for comparison.
Input validation is included in the time (it is part of every public call).

``python benchmarks/metrics.py --pairwise [--sizes 20000,100000,1000000] [--repeat 3]``
instead times ``rank_loss`` (R2, pooled) on one query of each size with labels 0-4: the best
and the spread (slowest - best) of ``repeat`` calls, the peak of numpy's allocations during
one call (tracemalloc) and how much the call raised the peak resident memory of a fresh
process (``getrusage`` maxrss; one subprocess per size). ``--pair-list 20000`` adds, for
that size, the pair list the critical-pair count replaced: ``rank_loss(..., pairs=critical_pairs(...))``.
``--function pair_precision_at [--percent 10]`` times QBRank's precision at K% the same way
(counted by score gap, the cut found by bisection; ``--pair-list`` passes the pairs explicitly).
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from typing import Callable

import numba
import numpy as np
from _timing import call_seconds

from boostplug import metrics
from boostplug.pairs import count_critical_pairs, critical_pairs


def synthetic(n_docs: int, n_queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores with ties (rounded), labels 0..4, query sizes around n_docs / n_queries."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, n_docs), size=n_queries - 1, replace=False))
    group_ptr = np.concatenate(([0], cuts, [n_docs])).astype(np.int64)
    labels = rng.integers(0, 5, size=n_docs).astype(np.float64)
    scores = np.round(labels + rng.normal(scale=2.0, size=n_docs), 2)
    return scores, labels, group_ptr


def best_of(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up: compile or load the cache
    return min(call_seconds(fn, repeat))


def one_query(n_docs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One query: labels 0..4, scores correlated with them, with ties (rounded)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 5, size=n_docs).astype(np.float64)
    scores = np.round(labels + rng.normal(scale=2.0, size=n_docs), 3)
    return scores, labels, np.array([0, n_docs], dtype=np.int64)


def _maxrss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def pairwise_child(n_docs: int, repeat: int, pair_list: bool = False, function: str = "rank_loss",
                   percent: float = 10.0) -> dict:
    """Measure ``rank_loss`` (or ``pair_precision_at``) on one query of ``n_docs`` in this (fresh) process."""
    s, y, g = one_query(n_docs)
    fn = functools.partial(metrics.pair_precision_at, percent=percent) if function == "pair_precision_at" \
        else metrics.rank_loss

    def call(s: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
        if pair_list:
            return fn(s, y, g, pairs=critical_pairs(y, g))
        return fn(s, y, g)

    call(s[:100], y[:100], np.array([0, 100]))  # compile or load the cache
    if not pair_list:  # the counts' parallel driver too (the pair list has none)
        call(np.repeat(s[:100], 200), np.repeat(y[:100], 200), np.array([0, 20_000]))
    rss_before = _maxrss_bytes()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = call(s, y, g)
        times.append(time.perf_counter() - t0)
    rss_after = _maxrss_bytes()
    tracemalloc.start()
    call(s, y, g)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    n_pairs = int(count_critical_pairs(y, g)[0])
    return {"n_docs": n_docs, "pairs": n_pairs, "value": value, "times": times,
            "traced_peak": traced_peak, "rss_growth": rss_after - rss_before, "rss_peak": rss_after}


def pairwise(sizes: list[int], repeat: int, pair_list: list[int], function: str = "rank_loss",
             percent: float = 10.0) -> None:
    what = f"pair_precision_at {percent:g}%" if function == "pair_precision_at" else "rank_loss (r2, pooled)"
    print(f"{what}, one query, labels 0-4, numba threads: {numba.get_num_threads()}, "
          f"best of {repeat}, one fresh process per row")
    print(f"  {'method':<10} {'documents':>10} {'critical pairs':>16} {'best ms':>9} {'spread ms':>9} "
          f"{'traced peak MB':>14} {'maxrss +MB':>10} {'maxrss MB':>9}")
    runs = [(n, False) for n in sizes] + [(n, True) for n in pair_list]
    for n, listed in runs:
        cmd = [sys.executable, __file__, "--pairwise-child", str(n), "--repeat", str(repeat),
               "--function", function, "--percent", repr(percent)]
        out = subprocess.run(cmd + (["--pair-list", str(n)] if listed else []),
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        best, worst = min(r["times"]), max(r["times"])
        print(f"  {'pair list' if listed else 'counts':<10} {n:>10,} {r['pairs']:>16,} {best * 1e3:9.1f} "
              f"{(worst - best) * 1e3:9.1f} {r['traced_peak'] / 2**20:14.1f} {r['rss_growth'] / 2**20:10.1f} "
              f"{r['rss_peak'] / 2**20:9.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=250_000)
    ap.add_argument("--queries", type=int, default=2_500)
    ap.add_argument("--repeat", type=int, default=None, help="calls per case (default 7; 3 with --pairwise)")
    ap.add_argument("--pairwise", action="store_true", help="time rank_loss (or --function) on one large query instead")
    ap.add_argument("--sizes", default="20000,100000,1000000", help="with --pairwise: documents per query")
    ap.add_argument("--pair-list", default="", help="with --pairwise: sizes also timed with the pair list")
    ap.add_argument("--function", default="rank_loss", choices=["rank_loss", "pair_precision_at"],
                    help="with --pairwise: the metric timed")
    ap.add_argument("--percent", type=float, default=10.0, help="with --function pair_precision_at: K")
    ap.add_argument("--pairwise-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pairwise_child is not None:
        print(json.dumps(pairwise_child(args.pairwise_child, args.repeat or 3, bool(args.pair_list), args.function,
                                        args.percent)))
        return
    if args.pairwise:
        pairwise([int(x) for x in args.sizes.split(",")], args.repeat or 3,
                 [int(x) for x in args.pair_list.split(",") if x], args.function, args.percent)
        return
    args.repeat = args.repeat or 7
    s, y, g = synthetic(args.docs, args.queries)
    print(f"{args.docs:,} documents, {args.queries:,} queries, numba threads: {numba.get_num_threads()}, "
          f"best of {args.repeat}")
    cases: list[tuple[str, Callable[[], object]]] = [
        (f"ndcg k=10 ties={t}", lambda t=t: metrics.ndcg(s, y, g, 10, ties=t)) for t in ("order", "average", "worst")
    ]
    cases += [
        ("ndcg k=10 per_query=True", lambda: metrics.ndcg(s, y, g, 10, per_query=True)),
        ("ndcg k=None (whole list)", lambda: metrics.ndcg(s, y, g)),
        ("average_precision k=10", lambda: metrics.average_precision(s, y, g, 10)),
        ("err k=10", lambda: metrics.err(s, y, g, 10)),
    ]
    for name, fn in cases:
        print(f"  {name:<28} {best_of(fn, args.repeat) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
