"""Seconds of ``boostplug.spark.ml.QueryEvaluator.evaluate`` in Spark ``local[2]``: the metric of a
cached DataFrame of random scores and grades (``--queries`` queries of ``--docs`` rows), best of
``--repeat`` evaluations after a first one (which starts the Python workers).

    python benchmarks/spark_evaluator.py [--queries 5000] [--docs 20] [--repeat 3] [--metric ndcg@10]

Run it with ``PYSPARK_PYTHON`` set to the interpreter that has boostplug, and ``PYTHONPATH`` set to
another checkout to time that one.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--docs", type=int, default=20, help="rows per query")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()

    import pandas as pd
    from pyspark.sql import SparkSession

    import boostplug
    from boostplug.spark.ml import QueryEvaluator

    spark = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "8")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    rng = np.random.default_rng(0)
    n = args.queries * args.docs
    pdf = pd.DataFrame({"qid": np.repeat(np.arange(args.queries), args.docs),
                        "label": rng.integers(0, 3, n).astype(np.float64), "prediction": rng.normal(size=n)})
    df = spark.createDataFrame(pdf).cache()
    df.count()
    ev = QueryEvaluator(metric=args.metric)
    secs = []
    for _ in range(args.repeat + 1):
        t0 = time.perf_counter()
        value = ev.evaluate(df)
        secs.append(time.perf_counter() - t0)
    print(f"boostplug from {boostplug.__file__}")
    print(f"{args.queries:,} queries of {args.docs} rows, {args.metric} = {value:.6f}; seconds: first {secs[0]:.2f}, "
          f"then {' '.join(f'{s:.2f}' for s in secs[1:])}; best {min(secs[1:]):.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
