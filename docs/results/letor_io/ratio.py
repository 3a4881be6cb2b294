"""Read an MSLR-WEB10K-Fold1-sized LETOR file two ways, interleaved in one process, best of N.

Run: ``PYTHONPATH=. python docs/results/letor_io/ratio.py [--rows-per-query 60 181] [--repeats 3]``.
The file (6,000 queries of 60-180 documents, about 723k rows, 136 features, qid; features from
``make_ranking`` rounded to three decimals as MSLR's are, zeros not written) is written with
``write_letor`` to a temporary folder. Timed, in rotating order each round:

* ``loader``: ``load_letor(path, dense=False)`` (the numba parser when present);
* ``sklearn``: ``load_svmlight_file(path, query_id=True, zero_based=False)`` alone.

The recorded runs also timed ``loader-sklearn``, the loader with scikit-learn's reader in place of
the numba parser; the loader has had no scikit-learn path since (README).
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

from boostplug.data import load_letor, make_ranking, write_letor


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=6000)
    ap.add_argument("--rows-per-query", type=int, nargs=2, default=(60, 181))
    ap.add_argument("--features", type=int, default=136)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--file", help="keep the file here and read it again if it exists (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="letor_ratio_") as tmp:
        path = Path(args.file or Path(tmp) / "mslr_sized.txt")
        if path.exists():
            print(f"reading {path} as it is", flush=True)
        d = None if path.exists() else make_ranking(n_queries=args.queries, docs_per_query=tuple(args.rows_per_query),
                         n_features=args.features, seed=0)
        if d is not None:
            X = np.round(d.X, 3)
            X[X == 0] = 0.0  # no -0 tokens
            write_letor(path, type(d)(X, d.y, d.qid, None), with_comments=False)
            del d, X
            gc.collect()
        print(f"{path.stat().st_size / 2**20:.0f} MiB", flush=True)
        tiny = Path(tmp) / "tiny.txt"
        tiny.write_text("1 qid:1 1:0.5\n")
        load_letor(tiny)  # numba cache loaded or compiled outside the timing

        def loader():
            return load_letor(path, dense=False)

        def sklearn():
            return load_svmlight_file(str(path), query_id=True, zero_based=False, dtype=np.float64)

        ways = {"loader": loader, "sklearn": sklearn}
        best = {k: float("inf") for k in ways}
        best_cpu = {k: float("inf") for k in ways}
        names = ["loader", "sklearn"]
        for r in range(args.repeats):
            order = names[r % 2:] + names[:r % 2]
            for name in order:
                gc.collect()
                t0, c0 = time.perf_counter(), time.process_time()
                out = ways[name]()
                s, c = time.perf_counter() - t0, time.process_time() - c0
                del out
                best[name], best_cpu[name] = min(best[name], s), min(best_cpu[name], c)
                print(f"round {r + 1} {name:15s} {s:7.2f} s wall {c:7.2f} s cpu", flush=True)
        for what, b in (("wall", best), ("cpu", best_cpu)):
            print(f"best {what}: " + ", ".join(f"{k} {v:.2f} s" for k, v in b.items()))
            print(f"  {what}: sklearn / loader = {b['sklearn'] / b['loader']:.2f}x")


if __name__ == "__main__":
    main()
