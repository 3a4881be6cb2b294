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
pair of label levels. Shared by the MPBoost objective and the stump-based MPBoost booster.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._contract import Param, Search

__all__ = ["DDF_NAMES", "DDF_DEFAULTS", "DIST_MAX", "DDF_PARAM_OF", "DDF_PARAMS", "check_ddf",
           "ddf_values", "search_space"]

DDF_NAMES = ("binary", "ldd", "logdd", "logitdd")

#: Parameter defaults, as in the paper's Figure 2.
DDF_DEFAULTS: dict[str, float] = {"alpha": 0.2, "lam": 3.0, "beta": 0.5}


#: Largest ``|dist|`` of a critical pair. MPBoost's Newton Hessian sums ``d^2 exp(e)`` over a
#: document's pairs with ``e <= 600`` (``mpboost.EXP_LIMIT``): with ``d <= 1e15`` that stays
#: finite for up to ~1e17 pairs (and ``d^2`` itself overflows above ~1.3e154).
DIST_MAX = 1e15

_FLOAT_MAX = float(np.finfo(np.float64).max)

#: The parameter of each DDF (``binary`` has none).
DDF_PARAM_OF: dict[str, str] = {"ldd": "alpha", "logdd": "lam", "logitdd": "beta"}

#: The DDF and its parameters as objective declarations (MPBoost's ``params``). ``search``: what
#: ``boostplug compare --tune`` explores, ranges where |dist| (Eq. 9) is about 1 for grade
#: differences 1..4. Each parameter's range is before the data (:func:`ddf_values` checks ``dist``
#: itself): ``ldd``'s ``dist = alpha * delta`` reaches ``alpha`` at a grade difference of 1;
#: ``logdd``'s and ``logitdd``'s ``dist`` stay below ~1420 and 1 for any finite positive parameter.
DDF_PARAMS: dict[str, Param] = {
    "ddf": Param("logdd", "choice", "directed distance function (Eq. 2, 6-8)", choices=DDF_NAMES, ignore_case=True),
    "alpha": Param(DDF_DEFAULTS["alpha"], "real", "LDD's slope (Eq. 6)", 0.0, DIST_MAX, low_open=True,
                   search=Search(0.05, 1.0, log=True)),
    "lam": Param(DDF_DEFAULTS["lam"], "real", "LOGDD's lambda (Eq. 7)", 0.0, _FLOAT_MAX, low_open=True,
                 search=Search(0.3, 10.0, log=True)),
    "beta": Param(DDF_DEFAULTS["beta"], "real", "LOGITDD's beta (Eq. 8)", 0.0, _FLOAT_MAX, low_open=True,
                  search=Search(0.1, 5.0, log=True)),
}


def _ddf_name(ddf: object) -> str:
    """A DDF name, in any case, as its :data:`DDF_NAMES` spelling (``ValueError`` naming anything else)."""
    return str(DDF_PARAMS["ddf"].check(ddf, "ddf"))


def search_space(ddf: str) -> dict[str, Search]:
    """What ``boostplug compare --tune`` searches for ``ddf``: its own parameter's range
    (nothing for ``binary``)."""
    pname = DDF_PARAM_OF.get(_ddf_name(ddf))
    return {} if pname is None else {pname: DDF_PARAMS[pname].search}


def check_ddf(ddf: str, alpha: float = DDF_DEFAULTS["alpha"], lam: float = DDF_DEFAULTS["lam"],
              beta: float = DDF_DEFAULTS["beta"]) -> tuple[str, float]:
    """Validate a DDF name and return ``(name, its parameter)``.

    The parameter of the chosen DDF must be in its range (:data:`DDF_PARAMS`; ``binary`` has
    none: 0.0 is returned), else a ``TypeError`` (not a number) or ``ValueError`` naming it and the range.
    """
    ddf = _ddf_name(ddf)
    if ddf == "binary":
        return ddf, 0.0
    pname = DDF_PARAM_OF[ddf]
    value = {"alpha": alpha, "lam": lam, "beta": beta}[pname]
    return ddf, float(DDF_PARAMS[pname].check(value, f"{pname} for ddf={ddf!r}"))


def ddf_values(delta: ArrayLike, ddf: str, param: float = 0.0, *, dist_min: float = 0.0,
               dist_max: float = DIST_MAX) -> NDArray[np.float64]:
    """``dist`` for grade differences ``delta = r_i - r_j`` (vectorised).

    ``param`` is the DDF's parameter as returned by :func:`check_ddf`. ``dist(0) = 0``
    for every DDF (pairs of equal grades are not critical pairs). Every DDF satisfies the
    paper's Eq. 3 (``sgn dist = sgn delta``) and is odd; ``ldd``, ``logdd`` and ``logitdd``
    also satisfy Eq. 4 (``|dist|`` strictly increasing in ``|delta|``); ``binary`` does not
    (it is the magnitude-free baseline, Eq. 2).

    A non-zero ``delta`` whose ``|dist|`` is not in ``(0, dist_max]`` and at least ``dist_min``
    (by default the objective's range ``(0, DIST_MAX]``: ``alpha * delta`` beyond
    :data:`DIST_MAX`, or a ``dist`` that underflows to 0 and would drop the pair) is a
    ``ValueError`` naming the parameter and the grade difference. (``binary``'s ``|dist|`` is 1.)
    """
    d = np.asarray(delta, dtype=np.float64)
    ddf = _ddf_name(ddf)
    sgn = np.sign(d)
    a = np.abs(d)
    with np.errstate(over="ignore", divide="ignore"):
        if ddf == "binary":
            return sgn
        if ddf == "ldd":
            out = param * d
        elif ddf == "logdd":
            x = param * a
            # log1p(x) = log(param) + log(a) where x overflows (then log1p(x) ~ log(x) exactly)
            out = sgn * np.where(np.isinf(x), np.log(param) + np.log(np.maximum(a, 1e-300)), np.log1p(x))
        else:  # logitdd
            out = sgn / (1.0 + np.exp(-param * a))
    mag = np.abs(out)
    bad = (d != 0.0) & ~((mag > 0.0) & (mag >= dist_min) & (mag <= dist_max))
    if bad.any():
        i = np.flatnonzero(bad.ravel())[0]
        pname = DDF_PARAM_OF[ddf]
        allowed = f"(0, {dist_max:g}]" if dist_min <= 0.0 else f"[{dist_min:.3g}, {dist_max:.4g}]"
        raise ValueError(
            f"ddf={ddf!r} with {pname}={param!r} gives |dist| = {float(mag.ravel()[i])!r} for the grade "
            f"difference {float(a.ravel()[i])!r}; |dist| must be in {allowed} "
            f"(choose {pname} so that every pair of grades gets such a dist)"
        )
    return out

