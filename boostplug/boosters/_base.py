"""Deprecated: the booster base is split by concern. Import from

* :mod:`boostplug.boosters._estimator` -- ``RankingBooster``, ``Round`` (the estimator loop);
* :mod:`boostplug.boosters._fit_data` -- ``FitData``, ``check_query_weights`` (one fit's data);
* :mod:`boostplug.boosters._weak_rankers` -- ``evaluate_rankers`` (the weak rankers);
* :mod:`boostplug.boosters._model_file` -- ``load``, ``FORMAT``, ``FORMAT_VERSION`` (the model file);
* :mod:`boostplug._validation` -- ``check_choice``, ``check_flag`` (was ``check_bool``).

Each name still resolves here, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["RankingBooster", "Round", "FitData", "evaluate_rankers", "load", "check_choice", "check_bool",
           "check_query_weights"]

_MOVED = {
    "RankingBooster": "boostplug.boosters._estimator",
    "Round": "boostplug.boosters._estimator",
    "FitData": "boostplug.boosters._fit_data",
    "check_query_weights": "boostplug.boosters._fit_data",
    "evaluate_rankers": "boostplug.boosters._weak_rankers",
    "load": "boostplug.boosters._model_file",
    "FORMAT": "boostplug.boosters._model_file",
    "FORMAT_VERSION": "boostplug.boosters._model_file",
    "check_choice": "boostplug._validation",
}


def check_bool(name: str, value: Any) -> bool:
    """Deprecated: :func:`boostplug._validation.check_flag` (``value`` first; raises a
    :class:`~boostplug._validation.FlagError`, a ``ValueError`` as this did)."""
    from .._validation import check_flag

    warnings.warn("boostplug.boosters._base.check_bool is deprecated; "
                  "use boostplug._validation.check_flag(value, name)", DeprecationWarning, stacklevel=2)
    return check_flag(value, name)


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"boostplug.boosters._base.{name} is deprecated; import it from {_MOVED[name]}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(_MOVED[name]), name)
