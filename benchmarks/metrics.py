"""Time boostplug.metrics.ndcg(k=10) on 250,000 synthetic documents in 2,500 queries.

Run: ``python benchmarks/metrics.py [--repeat N] [--docs N] [--queries N]``. Prints the best
of ``repeat`` runs after a warm-up call (which compiles, or loads the numba cache), for
every tie convention, the per-query variant, and MAP@10 / ERR@10 for comparison.
Input validation is included in the time (it is part of every public call).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import numba
import numpy as np

from boostplug import metrics


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
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=250_000)
    ap.add_argument("--queries", type=int, default=2_500)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
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
