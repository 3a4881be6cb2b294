"""Deprecated: ``boostplug.compare.runner`` is split by concern. Import from :mod:`boostplug.compare`, or

* :mod:`boostplug.compare.protocol` -- ``Result``, ``choose_round``, ``metric_curve``, ``run_method``,
  ``REPORT_METRICS``, ``CURVE_METRIC`` (what one (method, fold) run does);
* :mod:`boostplug.compare.execution` -- ``run``, ``Results``, ``Failure``, ``threads_per_job``,
  ``max_parallel``, ``check_parallel`` (every run, in parallel processes);
* :mod:`boostplug.compare.report` -- ``summary``, ``significance``, ``bootstrap``, ``format_table``,
  ``folds_finished``, ``common_folds``, ``comparable``, ``BOOTSTRAP_*`` (the report).

Each name still resolves here, with a ``DeprecationWarning``. Patch a name where it lives now
(e.g. ``boostplug.compare.execution.run_method``), not here.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = [
    "REPORT_METRICS", "CURVE_METRIC", "Result", "Results", "Failure", "example_split", "metric_curve", "choose_round",
    "run_method", "run", "threads_per_job", "max_parallel", "check_parallel", "significance", "summary",
    "folds_finished", "common_folds", "comparable", "format_table", "bootstrap", "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_LEVEL", "BOOTSTRAP_SEED",
]

_MOVED = {
    **dict.fromkeys(("REPORT_METRICS", "CURVE_METRIC", "Result", "metric_curve", "choose_round", "run_method"),
                    "boostplug.compare.protocol"),
    **dict.fromkeys(("Results", "Failure", "run", "threads_per_job", "max_parallel", "check_parallel"),
                    "boostplug.compare.execution"),
    **dict.fromkeys(("significance", "summary", "folds_finished", "common_folds", "comparable", "format_table",
                     "bootstrap", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_LEVEL", "BOOTSTRAP_SEED"),
                    "boostplug.compare.report"),
    "example_split": "boostplug.compare.data",
}


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"boostplug.compare.runner.{name} is deprecated; import it from {home}", DeprecationWarning,
                  stacklevel=2)
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_MOVED})
