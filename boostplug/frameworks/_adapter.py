"""What the LightGBM and XGBoost adapters share, by one import: they only translate calling
conventions (how to read labels, groups and weights off a ``Dataset``/``DMatrix``).

* :mod:`._bound_objective`: an objective bound once to each training set, and one round's call;
* :mod:`._query_info`: groups and per-query weights of a framework's set (the one rule telling
  weights per row from weights per query);
* :mod:`._builders`: what ``dataset()``/``dmatrix()`` check;
* :mod:`._metric_spec`: a boostplug metric for the frameworks' evaluation hooks.
"""

from __future__ import annotations

from ._bound_objective import FROM_FRAMEWORK, BoundObjective
from ._builders import builder_group_ptr, builder_init_score, builder_weights
from ._metric_spec import WEIGHTINGS, MetricCallable, MetricSpec
from ._query_info import (
    check_set_weights, group_ptr_or_error, metric_query_weights, query_weights_from_rows, set_arrays, weights_by_query,
)

__all__ = ["BoundObjective", "FROM_FRAMEWORK", "query_weights_from_rows", "metric_query_weights",
           "weights_by_query", "set_arrays", "group_ptr_or_error", "builder_group_ptr", "builder_weights",
           "builder_init_score", "check_set_weights", "WEIGHTINGS", "MetricSpec", "MetricCallable"]
