"""Spark: boostplug objectives trained on Spark DataFrames (placeholder docstring, filled below)."""
from __future__ import annotations

from .lgb_train import train_lightgbm
from .partition import QueryLayout, check_partitions, repartition_by_query
from .scoring import predict
from .xgb_train import train_xgboost

__all__ = ["QueryLayout", "repartition_by_query", "check_partitions", "train_xgboost", "train_lightgbm", "predict"]
