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

* :func:`repartition_by_query` builds such a frame (from pandas or Dask), with
  partitions balanced by document count; :func:`from_arrays` makes a frame of Dask
  arrays ``X, y, qid`` (one partition per row chunk of ``X``).
* :func:`check_partitions` verifies it in one pass over the query-id column and
  returns the per-partition group structure; :func:`train_lightgbm`,
  :func:`train_xgboost` and :func:`evaluate` call it, so a split query is a
  ``ValueError`` that says to repartition, never silently wrong gradients.
* The helpers only build what the frameworks need (group *sizes* aligned with
  the partitions for ``DaskLGBMRanker.fit(group=...)``, dense sorted query ids for
  ``xgboost.dask.DaskDMatrix(qid=...)``) and call them; the math lives in
  :mod:`boostplug.objectives`. The implementation is in :mod:`boostplug.frameworks.dask`.
* Click pairs keyed by (query, document) (a :class:`~boostplug.keyed_pairs.KeyedPairs` in
  ``objective_params``) need ``doc_col=``, the frame's document-key column: boostplug then runs
  each worker's training itself, its set built with the rows' keys (as :mod:`boostplug.spark`).
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
