"""The range ``boostplug compare --tune`` searches for a declared parameter (:class:`Search`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import show

__all__ = ["Search"]


@dataclass(frozen=True)
class Search:
    """The range ``boostplug compare --tune`` searches for one parameter: ``low``..``high``
    (``log``-uniform or uniform; ``integer`` is set for an ``int`` parameter) or ``choices``."""

    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    integer: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.choices:
            if self.low is not None or self.high is not None or self.log:
                raise TypeError(f"Search takes either choices or low/high, got both: {self!r}")
            return
        if self.low is None or self.high is None:
            raise TypeError("Search needs low and high (a range) or choices=(...)")
        for end in (self.low, self.high):
            if isinstance(end, (bool, np.bool_)) or not isinstance(end, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(end):
                raise TypeError(f"Search's low and high must be finite numbers, got {show(end)}")
        if not self.low < self.high or (self.log and self.low <= 0):
            raise ValueError(f"Search needs low < high{' and low > 0 (log)' if self.log else ''}, "
                             f"got low={show(self.low)}, high={show(self.high)}")
