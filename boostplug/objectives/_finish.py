"""The last step of every ``grad_hess``: the Hessian floor (when on) and the check that every value
is finite and within float32 (which LightGBM and XGBoost store gradients in), in one pass.

The numpy form (``np.where``, ``isfinite`` masks) made several full-size temporaries every boosting
round; on millions of documents their page faults cost more than some objectives' own kernels.
"""

from __future__ import annotations


import numba as nb
import numpy as np

__all__ = ["FLOAT32_MAX", "finish_in_place"]

#: The largest finite float32: a gradient or Hessian beyond it is inf to the frameworks.
FLOAT32_MAX = float(np.finfo(np.float32).max)


@nb.njit(cache=True)
def finish_in_place(grad: np.ndarray, hess: np.ndarray, floor_on: bool, floor: float,
                    no_info: float) -> tuple[int, int, int]:
    """With ``floor_on``, set ``hess[i]`` to ``no_info`` where ``grad[i]`` and ``hess[i]`` are both 0,
    else to at least ``floor``; rows with a value that is not finite or beyond float32 are left
    alone. Returns the first such row (-1: none), their number, and how many rows the floor raised
    (a Hessian below ``floor`` that was not a row without any term).

    Branch-free (selects and counts): LLVM vectorises the pass, where branches on each row's values
    mispredict on mixed data. The first bad row is looked for only when there is one."""
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
    first = -1
    if n_bad:
        for i in range(grad.shape[0]):
            if not (abs(grad[i]) <= FLOAT32_MAX and abs(hess[i]) <= FLOAT32_MAX):
                first = i
                break
    return first, n_bad, raised
