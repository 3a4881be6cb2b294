"""The directed distances stump MPBoost can train with, checked before it trains.

The parameters take the MPBoost objective's ranges (:func:`boostplug.objectives.ddf.check_ddf`,
one definition). The booster then needs, for the grade differences of its preference pairs,
``|dist|`` in ``[DIST_MIN, DIST_MAX]`` (narrower than the objective's ``(0, 1e15]``):

* Eq. 13 multiplies a pair's weight by ``exp(-d_ij (f(x_i) - f(x_j)))`` with
  ``|f(x_i) - f(x_j)| <= |a| <= max |d|`` (``a`` is a weighted mean of ``+-d``), so by up to
  ``exp(max d^2)``, and ``Z_t``, the sum of the reweighted weights, can be as large:
  ``max d^2`` must stay below ``log`` of the largest float64 (``max |d|`` about 26.6;
  beyond it the weights become ``inf``/``NaN``).
* The stump criterion compares ``N^2 / D`` with ``TIE_RTOL * sum w d^2`` (``sum w = 1``): that
  threshold must be a normal float64, ``min d^2 * TIE_RTOL >= tiny`` (``min |d|`` about
  1.5e-149; below it ``d^2`` underflows and no stump, or a wrong one, is chosen).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..groups import qid_from_group_ptr
from ..objectives.ddf import check_ddf, ddf_values
from ._fit_data import FitData
from .stumps import TIE_RTOL

__all__ = ["DIST_MIN", "DIST_MAX", "check_stump_ddf", "grade_gap_range", "pair_gaps"]

#: Largest ``|dist|`` of a preference pair: ``exp(DIST_MAX ** 2)`` is the largest float64.
DIST_MAX = math.sqrt(math.log(float(np.finfo(np.float64).max)))

#: Smallest ``|dist|`` of a preference pair: ``DIST_MIN ** 2 * TIE_RTOL`` is the smallest normal float64.
DIST_MIN = math.sqrt(float(np.finfo(np.float64).tiny) / TIE_RTOL)


def pair_gaps(data: FitData, pairs: NDArray[np.int64]) -> NDArray[np.float64]:
    """The grade differences ``r_i - r_j`` of the fit's preference ``pairs`` as MPBoost weighs them: an explicit
    pair without a positive difference counts as one grade (its preference is known, its magnitude is not)."""
    delta = data.y[pairs[:, 0]] - data.y[pairs[:, 1]]
    return delta if data.pairs is None else np.where(delta > 0, delta, 1.0)


def grade_gap_range(data: FitData) -> NDArray[np.float64]:
    """``[smallest, largest]`` grade difference ``r_i - r_j`` of the fit's preference pairs as
    MPBoost weighs them (empty when there is none): the critical pairs of each query, or the
    explicit ``pairs`` (:func:`pair_gaps`)."""
    y = data.y
    if data.pairs is not None:
        delta = pair_gaps(data, data.pairs)
        return np.array([delta.min(), delta.max()]) if delta.size else np.zeros(0)
    gp = data.group_ptr
    q = qid_from_group_ptr(gp)
    order = np.lexsort((y, q))  # by query (already contiguous), then grade
    ys = y[order]
    steps = np.diff(ys)[q[order][1:] == q[order][:-1]]
    steps = steps[steps > 0]
    if steps.size == 0:
        return np.zeros(0)
    full = np.diff(gp) > 0
    spans = ys[gp[1:][full] - 1] - ys[gp[:-1][full]]
    return np.array([steps.min(), spans.max()])


def check_stump_ddf(ddf: str, alpha: float, lam: float, beta: float, data: FitData) -> tuple[str, float]:
    """The DDF name and its parameter (:func:`~boostplug.objectives.ddf.check_ddf`), checked against
    ``data``: a ``ValueError`` naming the parameter, the grade difference and the ``|dist|`` it
    gives when that is outside ``[DIST_MIN, DIST_MAX]`` (module docstring). ``|dist|`` grows with
    the grade difference, so the smallest and the largest difference decide."""
    name, param = check_ddf(ddf, alpha, lam, beta)
    if name == "binary":  # |dist| = 1
        return name, param
    gaps = grade_gap_range(data)
    try:
        ddf_values(gaps, name, param, dist_min=DIST_MIN, dist_max=DIST_MAX)
    except ValueError as e:
        raise ValueError(
            f"MPBoost: {e}. The booster's reweighting (Eq. 13) multiplies pair weights by up to "
            f"exp(max dist^2), which must stay finite, and its stump choice needs dist^2 well above "
            "float64's smallest normal; the MPBoost objective on LightGBM or XGBoost takes |dist| up to 1e15"
        ) from None
    return name, param
