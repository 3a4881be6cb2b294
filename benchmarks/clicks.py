"""Preference extraction at scale: a click log of 10 million impressions of 10 documents
(100 million rows) read from Parquet in batches of whole sessions.

Run: ``python benchmarks/clicks.py [--impressions 10000000] [--docs 10] [--queries 100000]
[--folder DIR] [--strategies default|all] [--dask-impressions 1000000] [--out result.json]``.

Stages, each in its own process (peak resident memory from ``/proc/self/status`` VmHWM,
reset before the step through ``clear_refs``):

* ``simulate``: :func:`boostplug.clicks.simulate` of one million sessions in memory (PBM);
* ``write``: the log, simulated block by block (one million sessions at a time, queries of
  30 candidate documents, the production ranker's top ``docs`` shown) and written as Parquet,
  each row group holding whole sessions;
* ``extract``: :func:`boostplug.clicks.preferences` of the Parquet file, streamed;
* ``dask``: the same through ``dask.dataframe.read_parquet`` of a log of
  ``--dask-impressions`` impressions (one partition per file, whole sessions each).

Prints one JSON line per stage: seconds, rows per second, seconds per 10 million rows, peak
GiB, and the number of preference pairs. The targets (issue 19): under a minute per 10 million
rows and under 4 GiB for the 100-million-row log.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _process_memory import peak_gib, reset_peak

BLOCK = 1_000_000  # sessions simulated and written at a time
CANDIDATES = 30  # documents per query, of which the top --docs are shown


def _data(queries: int):
    from boostplug.data import RankingData

    sizes = np.full(queries, CANDIDATES)
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    rng = np.random.default_rng(0)
    y = rng.choice(5, size=int(ptr[-1]), p=[0.5, 0.25, 0.13, 0.08, 0.04]).astype(np.float64)
    scores = y + rng.normal(scale=1.5, size=y.shape[0])  # a fair production ranker
    return RankingData(np.zeros((y.shape[0], 1)), y, None, ptr), scores


def stage_simulate(args: argparse.Namespace) -> dict:
    from boostplug import clicks

    data, scores = _data(args.queries)
    clicks.simulate(data, scores, 10, top_k=args.docs, seed=0)
    reset_peak()
    t = time.perf_counter()
    log = clicks.simulate(data, scores, BLOCK, top_k=args.docs, seed=0)
    return {"sessions": BLOCK, "rows": len(log), "seconds": time.perf_counter() - t, "peak_gib": peak_gib()}


def _write(path: Path, impressions: int, args: argparse.Namespace, files: int = 1) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from boostplug import clicks

    data, scores = _data(args.queries)
    t = time.perf_counter()
    rows = 0
    writer = None
    block = min(BLOCK, -(-impressions // files))
    for k, start in enumerate(range(0, impressions, block)):
        log = clicks.simulate(data, scores, min(block, impressions - start), top_k=args.docs, seed=start)
        cols = log.columns()
        table = pa.table({"session": cols["session"] + start, "query": cols["query"], "doc": cols["doc"],
                          "position": cols["position"].astype(np.int16), "clicked": cols["clicked"],
                          "order": cols["order"].astype(np.float32)})
        rows += table.num_rows
        if files > 1:
            path.mkdir(exist_ok=True)
            pq.write_table(table, path / f"part-{k:04d}.parquet")
            continue
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=table.num_rows)
    if writer is not None:
        writer.close()
    size = sum(p.stat().st_size for p in (path.glob("*.parquet") if path.is_dir() else [path]))
    return {"impressions": impressions, "rows": rows, "seconds": time.perf_counter() - t, "file_gib": size / 2**30}


def stage_write(args: argparse.Namespace) -> dict:
    return _write(Path(args.folder) / "clicks.parquet", args.impressions, args)


def _strategies(args: argparse.Namespace):
    from boostplug.clicks import strategies

    return strategies.DEFAULT if args.strategies == "default" else "all"


def stage_extract(args: argparse.Namespace) -> dict:
    from boostplug import clicks

    path = Path(args.folder) / "clicks.parquet"
    tiny = Path(args.folder) / "tiny.parquet"
    _write(tiny, 100, args)
    clicks.preferences(tiny, _strategies(args))  # compiles or loads the numba cache
    reset_peak()
    t = time.perf_counter()
    prefs = clicks.preferences(path, _strategies(args))
    seconds = time.perf_counter() - t
    rows = args.impressions * args.docs
    return {"rows": rows, "seconds": seconds, "rows_per_second": rows / seconds,
            "seconds_per_10M_rows": seconds * 1e7 / rows, "peak_gib": peak_gib(), "pairs": len(prefs),
            "impressions": prefs.n_impressions}


def stage_dask(args: argparse.Namespace) -> dict:
    import dask.dataframe as dd

    from boostplug import clicks

    folder = Path(args.folder) / "dask"
    info = _write(folder, args.dask_impressions, args, files=4)
    ddf = dd.read_parquet(str(folder))
    reference = clicks.preferences(clicks.read_log(ddf.compute()), _strategies(args))
    reset_peak()
    t = time.perf_counter()
    prefs = clicks.preferences(ddf, _strategies(args))
    seconds = time.perf_counter() - t
    same = all(np.array_equal(a, b) for a, b in zip(prefs.columns().values(), reference.columns().values()))
    return {"rows": info["rows"], "partitions": ddf.npartitions, "seconds": seconds,
            "seconds_per_10M_rows": seconds * 1e7 / info["rows"], "peak_gib": peak_gib(), "pairs": len(prefs),
            "equal_to_in_memory": same}


STAGES = {"simulate": stage_simulate, "write": stage_write, "extract": stage_extract, "dask": stage_dask}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impressions", type=int, default=10_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--strategies", choices=("default", "all"), default="default")
    parser.add_argument("--dask-impressions", type=int, default=1_000_000)
    parser.add_argument("--folder", help="where the Parquet files go (default: a temporary folder)")
    parser.add_argument("--stages", default="simulate,write,extract,dask")
    parser.add_argument("--stage", help=argparse.SUPPRESS)  # one stage in this process
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(STAGES[args.stage](args)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or tmp
        results = {}
        for stage in args.stages.split(","):
            argv = [sys.executable, __file__, "--stage", stage, "--folder", folder, "--impressions",
                    str(args.impressions), "--docs", str(args.docs), "--queries", str(args.queries),
                    "--strategies", args.strategies, "--dask-impressions", str(args.dask_impressions)]
            out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            results[stage] = json.loads(out)
            print(stage, out, flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
