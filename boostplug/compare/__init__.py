"""Train ranking methods under one protocol and compare them (``boostplug compare``).

* :mod:`.methods` -- the methods by name (built-in and boostplug objectives on
  LightGBM and XGBoost trees), one shared set of tree parameters;
* :mod:`.runner` -- the protocol (round chosen on validation, metrics on test)
  and the table.
"""

from .methods import DEFAULT_METHODS, METHODS, TREE_PARAMS, get_method, method_names
from .runner import REPORT_METRICS, Result, example_split, format_table, run, run_method

__all__ = [
    "DEFAULT_METHODS", "METHODS", "TREE_PARAMS", "get_method", "method_names",
    "REPORT_METRICS", "Result", "example_split", "format_table", "run", "run_method",
]
