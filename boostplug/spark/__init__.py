"""Spark: boostplug objectives trained on Spark DataFrames, models scored on them.

A barrier task trains on its own partition only, so the rule here is: **every query whole in one
partition, its rows together**; the trainers lay the rows out so and check it, a split query is a
``ValueError`` naming it (docs/spark.md, "The partitioning rule"). An example: its "Quick start".

* :func:`repartition_by_query`, :func:`check_partitions` (:class:`QueryLayout`): the layout.
* :func:`train` (:func:`train_xgboost`, :func:`train_lightgbm`): barrier tasks running ``xgb.train``
  or ``lgb.train`` with the objective (docs/spark.md, "How training runs").
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
