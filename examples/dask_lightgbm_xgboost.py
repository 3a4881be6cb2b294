"""Distributed training with boostplug objectives on a Dask cluster (LightGBM and XGBoost).

Runs on a local two-worker cluster; to use a real cluster, replace ``LocalCluster(...)``
by ``Client("tcp://scheduler:8786")`` and read the data with ``dask.dataframe.read_parquet``
(see docs/dask.md).

    python examples/dask_lightgbm_xgboost.py [--queries 3000] [--rounds 100]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
import xgboost.dask as xgb_dask
from distributed import Client, LocalCluster

from boostplug import dask as bpd
from boostplug.data import make_ranking


def main(n_queries: int = 3000, rounds: int = 100) -> None:
    # 1. Data: any pandas/Dask DataFrame with features, a label and a query-id column.
    data = make_ranking(n_queries, (5, 40), n_features=20, n_informative=5, seed=0)
    cols = [f"f{i}" for i in range(data.X.shape[1])]
    df = pd.DataFrame(data.X, columns=cols).assign(label=data.y, qid=data.qid)
    train_df, test_df = df[df.qid < 0.8 * n_queries], df[df.qid >= 0.8 * n_queries]

    # boostplug's kernels use the threads the frameworks give each worker (threads_per_worker).
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0")
    with Client(cluster) as client:
        # 2. Every query whole in one partition, partitions balanced by document count
        #    (from pandas the pieces are scattered straight to the workers).
        train = bpd.repartition_by_query(train_df, qid_col="qid", npartitions=2)
        test = bpd.repartition_by_query(test_df, qid_col="qid", npartitions=2)
        print("documents per partition:", bpd.check_partitions(train).docs_per_partition.tolist())

        # A frame cut by row count splits queries: training on it would be refused.
        try:
            bpd.check_partitions(dd.from_pandas(train_df, npartitions=3, sort=False))
        except ValueError as err:
            print("row-count partitions:", str(err).split(";")[0])

        # 3. LightGBM: DaskLGBMRanker with a boostplug objective (group sizes built for you).
        ranker = bpd.train_lightgbm(client, train, "mpboost", objective_params={"ddf": "logdd"},
                                    n_estimators=rounds, learning_rate=0.1, num_leaves=31, verbose=-1)
        lgb_scores = ranker.predict(test[cols])

        # 4. XGBoost: xgboost.dask.train(obj=...) on a DaskDMatrix with dense sorted query ids.
        out = bpd.train_xgboost(client, train, "ndcg_boost", params={"max_depth": 6, "eta": 0.1},
                                num_boost_round=rounds)
        xgb_scores = xgb_dask.predict(client, out["booster"], test[cols])

        # 5. Metrics computed on the workers, reduced here.
        for name, scores in (("LightGBM + MPBoost", lgb_scores), ("XGBoost + NDCG_Boost", xgb_scores)):
            result = bpd.evaluate(scores, test, ["ndcg@10", "map@10"], client=client)
            print(f"{name:22s} test NDCG@10 {result['ndcg@10']:.4f}  MAP@10 {result['map@10']:.4f}")

        # The models are ordinary single-machine models once trained.
        folder = Path(tempfile.gettempdir())
        ranker.to_local().booster_.save_model(folder / "boostplug_dask_lgb.txt")
        out["booster"].save_model(folder / "boostplug_dask_xgb.json")
        print("models saved in", folder)
    cluster.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=3000, help="synthetic queries (default 3000)")
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds per framework (default 100)")
    args = parser.parse_args()
    main(args.queries, args.rounds)
