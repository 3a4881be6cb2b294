"""The last step of every ``grad_hess``: the Hessian floor and the finiteness check in one pass.

The numpy form (``np.where(no_info, NO_INFO_HESSIAN, np.maximum(hess, HESSIAN_FLOOR))`` and
``isfinite`` masks) made several full-size temporaries every boosting round; on millions of
documents their page faults cost more than some objectives' own kernels.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["floor_in_place"]


@nb.njit(cache=True)
def floor_in_place(grad: np.ndarray, hess: np.ndarray, floor: float, no_info: float) -> tuple[int, int]:
    """Set ``hess[i]`` to ``no_info`` where ``grad[i]`` and ``hess[i]`` are both 0, else to at
    least ``floor``; rows with a non-finite gradient or Hessian are left alone. Returns the
    first such row (-1: none) and their number."""
    first = -1
    n_bad = 0
    for i in range(grad.shape[0]):
        g = grad[i]
        h = hess[i]
        if not (math.isfinite(g) and math.isfinite(h)):
            if first < 0:
                first = i
            n_bad += 1
        elif h == 0.0 and g == 0.0:
            hess[i] = no_info
        elif h < floor:
            hess[i] = floor
    return first, n_bad
