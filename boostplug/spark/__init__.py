"""Spark: boostplug objectives trained on Spark DataFrames, models scored on them.

A ranking loss needs every document of a query on the worker that computes its gradients, and
a barrier task trains on its own partition only, so the rule here is: **every query whole in one
partition, its rows together**. The trainers lay the rows out so (``repartitionByRange`` on the
query id, then sorted within partitions) and check it; a split query is a ``ValueError`` naming it.

Example (``df`` with a ``features`` vector column, ``label`` and ``qid``)::

    from boostplug import spark as bps

    booster = bps.train_xgboost(df, "mpboost", objective_params={"ddf": "ldd"}, num_boost_round=100,
                                valid_df=valid, metric="ndcg@10", early_stopping_rounds=10)
    scored = bps.predict(test, booster)       # + "prediction"

* :func:`repartition_by_query`, :func:`check_partitions` (:class:`QueryLayout`): the layout.
* :func:`train` (:func:`train_xgboost`, :func:`train_lightgbm`): barrier tasks on XGBoost's
  collective running ``xgb.train``, or on LightGBM's socket network (``data_parallel``) running
  ``lgb.train``, with the objective.
* :func:`predict`: a pandas UDF scoring a DataFrame with either framework's booster.
* :mod:`boostplug.spark.ml`: the ``pyspark.ml`` Estimator (``Ranker``), Model, query-grouped
  evaluator and query folds for ``CrossValidator`` (imports pyspark when imported).
* :mod:`boostplug.spark.stages`: ``StageTimes``, where one training's time went, stage by stage.
* Click logs: ``boostplug.clicks.preferences`` takes a Spark DataFrame.

pyspark is imported when first needed (``pip install 'boostplug[spark]'``; Spark needs Java 17+).
User documentation: docs/spark.md.
"""

from __future__ import annotations

from .partition import QueryLayout, check_partitions, repartition_by_query
from .scoring import predict
from .training import train, train_lightgbm, train_xgboost

__all__ = ["QueryLayout", "repartition_by_query", "check_partitions", "train", "train_xgboost", "train_lightgbm",
           "predict"]
