"""Wall time of distributed training with boostplug objectives on 1 and 2 Dask workers.

A synthetic set of ~1 million documents (boostplug.data.make_ranking), partitioned by
query, trained for a few rounds with LightGBM (DaskLGBMRanker) and XGBoost
(xgboost.dask.train), next to the same training on one machine without Dask, with the
same number of threads per process (``--threads``, default 1).

    python benchmarks/dask_training.py [--queries 57000] [--rounds 10] [--objective mpboost]

Per cluster it prints: starting the cluster, repartitioning + scattering the pandas frame,
each framework's first fit (workers import the framework and boostplug, LightGBM sets up its
sockets) and a second fit (the steady state), and the training-set NDCG@10 computed on
the workers by ``boostplug.dask.evaluate`` (next to the single-machine model's, to show that
the models agree). On a 2-core machine two workers are not faster than one: the numbers show
that it works and what Dask's overhead is.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, TypeVar

import numpy as np
import pandas as pd

T = TypeVar("T")


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--queries", type=int, default=57_000, help="queries (~17.5 documents each)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--objective", default="mpboost")
    ap.add_argument("--threads", type=int, default=1, help="threads per worker and without Dask")
    return ap.parse_args()


def _local(df: pd.DataFrame, cols: list[str], gp: np.ndarray, args: argparse.Namespace,
           lgb_params: dict[str, Any], xgb_params: dict[str, Any]) -> None:
    import lightgbm as lgb
    import xgboost as xgb

    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx
    from boostplug.groups import sizes_from_group_ptr
    from boostplug.metrics import by_name

    ndcg = by_name("ndcg@10")
    y = df["label"].to_numpy()
    t, ranker = _timed(lambda: lgb.LGBMRanker(objective=bpl.sklearn_objective(args.objective),
                                              n_jobs=args.threads, **lgb_params)
                       .fit(df[cols], y, group=sizes_from_group_ptr(gp)))
    print(f"  no Dask    LightGBM fit {t:6.1f} s                 train NDCG@10 "
          f"{ndcg(ranker.predict(df[cols]), y, gp):.4f}", flush=True)
    dtrain = bpx.dmatrix(df[cols], y, group_ptr=gp)
    t, booster = _timed(lambda: xgb.train(bpx.params(nthread=args.threads, **xgb_params), dtrain,
                                          args.rounds, obj=bpx.objective(args.objective)))
    print(f"  no Dask    XGBoost  fit {t:6.1f} s                 train NDCG@10 "
          f"{ndcg(booster.predict(xgb.DMatrix(df[cols])), y, gp):.4f}", flush=True)


def _distributed(n_workers: int, df: pd.DataFrame, cols: list[str], args: argparse.Namespace,
                 lgb_params: dict[str, Any], xgb_params: dict[str, Any]) -> None:
    import xgboost.dask as xgb_dask
    from distributed import Client, LocalCluster, wait

    from boostplug import dask as bpd

    t_start, cluster = _timed(lambda: LocalCluster(
        n_workers=n_workers, threads_per_worker=args.threads, processes=True,
        dashboard_address=":0", host="127.0.0.1", env={"NUMBA_NUM_THREADS": str(args.threads)}))
    label = f"  {n_workers} worker{'s' if n_workers > 1 else ' '}"
    with Client(cluster) as client:
        t0 = time.perf_counter()
        frame = bpd.repartition_by_query(df, npartitions=2 * n_workers)
        wait(frame)
        t_part = time.perf_counter() - t0
        print(f"{label}  cluster start {t_start:4.1f} s, repartition+scatter {t_part:4.1f} s", flush=True)
        for name in ("LightGBM", "XGBoost"):
            times, scores = [], None
            for _ in range(2):
                if name == "LightGBM":
                    t, model = _timed(lambda: bpd.train_lightgbm(client, frame, args.objective, **lgb_params))
                    scores = model.predict(frame[cols])
                else:
                    t, out = _timed(lambda: bpd.train_xgboost(client, frame, args.objective, params=xgb_params,
                                                              num_boost_round=args.rounds))
                    scores = xgb_dask.predict(client, out["booster"], frame[cols])
                times.append(t)
            t_eval, result = _timed(lambda: bpd.evaluate(scores, frame, "ndcg@10", client=client))
            print(f"{label}  {name:8s} fit {times[0]:6.1f} s, again {times[1]:6.1f} s  train NDCG@10 "
                  f"{result['ndcg@10']:.4f} (evaluate {t_eval:.2f} s)", flush=True)
    cluster.close()


def main() -> None:
    from boostplug.data import make_ranking
    from boostplug.groups import group_ptr_from_qid

    args = _args()
    d = make_ranking(args.queries, (5, 30), n_features=20, n_informative=5, seed=0)
    cols = [f"f{i}" for i in range(d.X.shape[1])]
    df = pd.DataFrame(d.X, columns=cols).assign(label=d.y, qid=d.qid)
    print(f"{len(df):,} documents, {args.queries:,} queries, {len(cols)} features, {args.rounds} rounds, "
          f"objective {args.objective}, {args.threads} thread(s) per process", flush=True)
    lgb_params = dict(n_estimators=args.rounds, learning_rate=0.1, num_leaves=31, verbose=-1)
    xgb_params = dict(max_depth=6, eta=0.1)
    _local(df, cols, group_ptr_from_qid(d.qid), args, lgb_params, xgb_params)
    for n_workers in (1, 2):
        _distributed(n_workers, df, cols, args, lgb_params, xgb_params)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
