"""Spark: boostplug objectives trained on Spark DataFrames (placeholder docstring, filled below)."""
from __future__ import annotations

from .partition import QueryLayout, check_partitions, repartition_by_query
from .xgb_train import train_xgboost

__all__ = ["QueryLayout", "repartition_by_query", "check_partitions", "train_xgboost"]
