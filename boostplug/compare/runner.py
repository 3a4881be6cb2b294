"""Deprecated: ``boostplug.compare.runner`` is split by concern. Import from :mod:`boostplug.compare`, or

* :mod:`boostplug.compare.protocol` -- ``Result``, ``choose_round``, ``metric_curve``, ``run_method``,
  ``REPORT_METRICS``, ``CURVE_METRIC`` (what one (method, fold) run does);
* :mod:`boostplug.compare.execution` -- ``run``, ``Results``, ``Failure``, ``threads_per_job``,
  ``max_parallel``, ``check_parallel`` (every run, in parallel processes);
* :mod:`boostplug.compare.report` -- ``summary``, ``significance``, ``bootstrap``, ``format_table``,
  ``folds_finished``, ``common_folds``, ``comparable``, ``BOOTSTRAP_*`` (the report).

Each name still resolves here, the public ones with a ``DeprecationWarning``. Setting a name here
(a patch) sets it in the module that holds it now, where the code that uses it looks it up.
"""

from __future__ import annotations

import importlib
import sys
import types
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
#: Private names of the split module that code outside it used (the worker set-up, the run log).
_PRIVATE = dict.fromkeys(("_worker_init", "_die_with_parent", "_log_done"), "boostplug.compare.execution")
#: The modules the split module's code went to.
_HOMES = ("boostplug.compare.protocol", "boostplug.compare.execution", "boostplug.compare.report")


class _Runner(types.ModuleType):
    """This module, with each moved name a property: reading it reads the name where it lives now
    (a public one with a ``DeprecationWarning``); setting it (a patch) sets it there and in every
    module that imported it from there (runner.run_method must reach execution's)."""


def _moved(name: str, home: str) -> property:
    def get(self: types.ModuleType) -> Any:
        if name in _MOVED:
            warnings.warn(f"boostplug.compare.runner.{name} is deprecated; import it from {home}",
                          DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(home), name)

    def put(self: types.ModuleType, value: Any) -> None:
        current = getattr(importlib.import_module(home), name)
        holders = [importlib.import_module(home),
                   *(m for m in map(importlib.import_module, _HOMES) if vars(m).get(name) is current)]
        for module in dict.fromkeys(holders):
            setattr(module, name, value)

    return property(get, put, doc=f"{home}.{name}")


for _name, _where in {**_MOVED, **_PRIVATE}.items():
    setattr(_Runner, _name, _moved(_name, _where))
del _name, _where


def __dir__() -> list[str]:
    return sorted({*globals(), *_MOVED})


sys.modules[__name__].__class__ = _Runner
