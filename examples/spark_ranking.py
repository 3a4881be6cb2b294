"""Ranking on Spark with boostplug objectives: XGBoost and LightGBM trained in barrier tasks on a
DataFrame, scored with a pandas UDF, evaluated over whole queries (see docs/spark.md).

Runs on ``local[2]``; on a cluster, build the session for it instead (``spark-submit``) and read
the data with ``spark.read.parquet``.

    python examples/spark_ranking.py [--queries 2000] [--rounds 50]
"""

from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

from boostplug.data import make_ranking


def main(n_queries: int = 2000, rounds: int = 50) -> None:
    # The executors' Python workers run this interpreter (with boostplug installed).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import SparkSession

    from boostplug import spark as bps
    from boostplug.spark.ml import QueryEvaluator

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())

    # 1. Data: any DataFrame with features (a vector column here), a label and a query id.
    data = make_ranking(n_queries, (5, 40), n_features=20, n_informative=5, seed=0)
    cols = [f"f{i}" for i in range(data.X.shape[1])]
    pdf = pd.DataFrame(data.X, columns=cols).assign(label=data.y, qid=data.qid)
    df = VectorAssembler(inputCols=cols, outputCol="features").transform(spark.createDataFrame(pdf)).drop(*cols)
    train, test = df.filter(df.qid < 0.8 * n_queries), df.filter(df.qid >= 0.8 * n_queries)

    # 2. Train: the rows are laid out by query (whole queries per worker) and checked first.
    models = {
        "xgboost mpboost": bps.train_xgboost(train, "mpboost", objective_params={"ddf": "logdd"},
                                             params={"max_depth": 6, "eta": 0.1, "nthread": 1},
                                             num_boost_round=rounds, num_workers=2),
        "lightgbm mpboost": bps.train_lightgbm(train, "mpboost", objective_params={"ddf": "logdd"},
                                               params={"num_leaves": 31, "learning_rate": 0.1, "num_threads": 1},
                                               num_boost_round=rounds, num_workers=2),
    }

    # 3. Score the test rows where they are, and evaluate over whole queries.
    ndcg = QueryEvaluator(metric="ndcg@10")
    for name, booster in models.items():
        print(f"{name}: test NDCG@10 {ndcg.evaluate(bps.predict(test, booster)):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    main(args.queries, args.rounds)
