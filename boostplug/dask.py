"""Dask adapter: boostplug objectives and metrics on ``lightgbm.dask`` and ``xgboost.dask``.

Pairwise and listwise losses couple the documents of a query, so each worker's
gradients are exact only when every query sits whole on one worker. Dask moves
*partitions* between workers, never parts of one, so the rule here is: **every
query in one partition, contiguous inside it**.

Example:
    >>> import pandas as pd
    >>> from distributed import Client, LocalCluster
    >>> from boostplug import dask as bpd
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))  # doctest: +SKIP
    >>> features = [f"f{j}" for j in range(X.shape[1])]
    >>> df = pd.DataFrame(X, columns=features).assign(label=y, qid=qid)
    >>> frame = bpd.repartition_by_query(df, qid_col="qid", npartitions=2)
    >>> int(bpd.check_partitions(frame).queries_per_partition.sum()) == len(set(qid))
    True
    >>> ranker = bpd.train_lightgbm(client, frame, name, objective_params=objective_params,
    ...                             n_estimators=100)                      # doctest: +SKIP
    >>> out = bpd.train_xgboost(client, frame, name, num_boost_round=100)  # doctest: +SKIP
    >>> bpd.evaluate(ranker.predict(frame[features]), frame, ["ndcg@10"])  # doctest: +SKIP

``name`` is one of :func:`boostplug.objectives.names`, ``objective_params`` its parameters. The
doctests skip the lines that need the cluster (starting worker processes takes seconds); without
a client, the frame is built by Dask's local scheduler.

What each helper builds, checks and hands the frameworks (and ``doc_col=``, the document-key column
that keyed click pairs need): docs/dask.md. The math lives in :mod:`boostplug.objectives`, the
implementation in :mod:`boostplug.frameworks.dask`.
"""
from __future__ import annotations

from .frameworks.dask.evaluate import evaluate
from .frameworks.dask.partition import PartitionLayout, check_partitions, from_arrays, repartition_by_query
from .frameworks.dask.train import dense_qid, lightgbm_group, train_lightgbm, train_xgboost

__all__ = [
    "PartitionLayout",
    "repartition_by_query",
    "from_arrays",
    "check_partitions",
    "lightgbm_group",
    "dense_qid",
    "train_lightgbm",
    "train_xgboost",
    "evaluate",
]
