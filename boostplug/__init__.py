"""boostplug: research ranking algorithms for LightGBM and XGBoost.

Subpackages (imported on first use, so ``import boostplug`` stays fast):

* :mod:`boostplug.groups` -- the ``group_ptr`` boundary format and converters;
* :mod:`boostplug.data` -- LETOR/SVMlight loading and writing, folds, splits,
  synthetic data, the embedded example;
* :mod:`boostplug.metrics` -- ranking metrics with explicit conventions;
* :mod:`boostplug.objectives` -- the papers' losses, gradients and Hessians;
* :mod:`boostplug.lightgbm`, :mod:`boostplug.xgboost` -- framework adapters;
* :mod:`boostplug.boosters` -- native reference boosters (RankBoost, AdaRank, ...);
* :mod:`boostplug.clicks` -- click logs in, preference pairs out (QBRank's P ∪ L), click simulation;
* :mod:`boostplug.export` -- ONNX export of LightGBM and XGBoost ranking models;
* :mod:`boostplug.testing` -- the objective contract checks (``check_objective``,
  ``parametrize_with_checks``) for objectives of one's own.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _numba_cache

__version__ = "0.1.0"

_numba_cache.configure()  # before any kernel module: a read-only install must still import

_SUBMODULES = {
    "groups", "data", "metrics", "objectives", "lightgbm", "xgboost", "boosters", "compare", "cli", "dask",
    "export", "testing", "clicks",
}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'boostplug' has no attribute {name!r}")


__all__ = sorted(_SUBMODULES) + ["__version__"]
