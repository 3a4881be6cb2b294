"""Directed distance functions (DDF) of MPBoost (Zhu et al., CIKM 2009, Eq. 2, 6-8).

For a pair of grades with ``delta = r_i - r_j``:

=========  ============================================  ==========================
name       dist(r_i, r_j)                                parameter (paper Fig. 2)
=========  ============================================  ==========================
binary     sgn(delta)                        (Eq. 2)     --
ldd        alpha * delta                     (Eq. 6)     alpha = 0.2
logdd      sgn(delta) * log(1 + lambda |delta|)  (Eq. 7) lam = 3.0
logitdd    sgn(delta) / (1 + exp(-beta |delta|)) (Eq. 8) beta = 0.5
=========  ============================================  ==========================

``dist`` depends only on the two grades, so an objective can tabulate it once per
pair of label levels (:func:`ddf_table`). Shared by the MPBoost objective and the
stump-based MPBoost booster.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["DDF_NAMES", "DDF_DEFAULTS", "check_ddf", "ddf_values", "ddf_table"]

DDF_NAMES = ("binary", "ldd", "logdd", "logitdd")

#: Parameter defaults, as in the paper's Figure 2.
DDF_DEFAULTS: dict[str, float] = {"alpha": 0.2, "lam": 3.0, "beta": 0.5}


def check_ddf(ddf: str, alpha: float = DDF_DEFAULTS["alpha"], lam: float = DDF_DEFAULTS["lam"],
              beta: float = DDF_DEFAULTS["beta"]) -> tuple[str, float]:
    """Validate a DDF name and return ``(name, its parameter)``.

    The parameter of the chosen DDF must be finite and > 0 (``binary`` has none; 0.0 is returned).
    """
    if not isinstance(ddf, str) or ddf.lower() not in DDF_NAMES:
        raise ValueError(f"unknown ddf {ddf!r}; choose one of {list(DDF_NAMES)}")
    ddf = ddf.lower()
    if ddf == "binary":
        return ddf, 0.0
    pname, value = {"ldd": ("alpha", alpha), "logdd": ("lam", lam), "logitdd": ("beta", beta)}[ddf]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{pname} for ddf={ddf!r} must be a number, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{pname} for ddf={ddf!r} must be finite and > 0, got {value!r}")
    return ddf, float(value)


def ddf_values(delta: ArrayLike, ddf: str, param: float = 0.0) -> NDArray[np.float64]:
    """``dist`` for grade differences ``delta = r_i - r_j`` (vectorised).

    ``param`` is the DDF's parameter as returned by :func:`check_ddf`. ``dist(0) = 0``
    for every DDF (pairs of equal grades are not critical pairs). Every DDF satisfies the
    paper's Eq. 3 (``sgn dist = sgn delta``) and is odd; ``ldd``, ``logdd`` and ``logitdd``
    also satisfy Eq. 4 (``|dist|`` strictly increasing in ``|delta|``); ``binary`` does not
    (it is the magnitude-free baseline, Eq. 2).
    """
    d = np.asarray(delta, dtype=np.float64)
    ddf = ddf.lower() if isinstance(ddf, str) else ddf
    sgn = np.sign(d)
    a = np.abs(d)
    if ddf == "binary":
        return sgn
    if ddf == "ldd":
        return param * d
    if ddf == "logdd":
        return sgn * np.log1p(param * a)
    if ddf == "logitdd":
        return sgn / (1.0 + np.exp(-param * a))
    raise ValueError(f"unknown ddf {ddf!r}; choose one of {list(DDF_NAMES)}")


def ddf_table(levels: ArrayLike, ddf: str, param: float = 0.0) -> NDArray[np.float64]:
    """``table[a, b] = dist(levels[a], levels[b])`` for sorted distinct label levels."""
    lv = np.asarray(levels, dtype=np.float64)
    return ddf_values(lv[:, None] - lv[None, :], ddf, param)

