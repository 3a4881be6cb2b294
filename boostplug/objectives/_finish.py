"""The last pass of every ``grad_hess``: the Hessian floor (when on) and the count of values the
frameworks cannot take, in one vectorised pass (numpy's masks' temporaries cost more than some kernels)."""

from __future__ import annotations

import numba as nb
import numpy as np

from .._validation import FLOAT32_MAX

__all__ = ["finish_in_place"]


@nb.njit(cache=True)
def finish_in_place(grad: np.ndarray, hess: np.ndarray, floor_on: bool, floor: float,
                    no_info: float) -> tuple[int, int]:
    """With ``floor_on``, set ``hess[i]`` to ``no_info`` where ``grad[i]`` and ``hess[i]`` are both 0,
    else to at least ``floor`` (rows with a value not finite or beyond float32 left alone). Returns
    those rows' number and how many Hessians the floor raised (not counting rows without any term).
    Branch-free (selects and counts), so that LLVM vectorises it."""
    n_bad = 0
    raised = 0
    for i in range(grad.shape[0]):
        g = grad[i]
        h = hess[i]
        ok = abs(g) <= FLOAT32_MAX and abs(h) <= FLOAT32_MAX  # False for NaN too
        n_bad += 0 if ok else 1
        empty = h == 0.0 and g == 0.0
        low = h < floor and not empty
        raised += 1 if (floor_on and low and ok) else 0
        v = no_info if empty else (floor if low else h)
        hess[i] = v if (floor_on and ok) else h
    return n_bad, raised
