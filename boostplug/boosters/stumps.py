"""Decision-stump candidates and feature binning for the stump-based boosters.

A stump on feature ``k`` with threshold ``theta`` is ``[x_k > theta]`` (NaN below every known
value), its complement ``[x_k <= theta]``. The candidate thresholds per feature (``thresholds=``:
``"sample"``, ``"quantile"``, ``"all"``, ``"ranklib"``, with RankLib's ``fmax``/``fmin`` scan
starting from ``-1e6``/``1e6``) and the extra ``-inf`` threshold of a feature with missing values,
counted in ``max_thresholds``: docs/boosters.md, "Weak rankers and stump candidates". Thresholds
that give the same split of the training rows are all kept, so that candidate lists match the
published procedures.

:func:`bin_features` turns ``X`` into integer codes so that a stump is a
comparison of codes: with a feature's thresholds sorted ascending
``t_0 < t_1 < ...``, ``code(x) = #{j : t_j < x}`` (``0`` for NaN) and
``h_j(x) = [x > t_j] = [code(x) > j]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["TIE_TOL", "THRESHOLD_MODES", "StumpCandidates", "candidate_thresholds", "bin_features", "make_candidates",
           "argmax_first", "argmax_scan"]

THRESHOLD_MODES = ("sample", "quantile", "all", "ranklib")

#: Relative tolerance (of the criterion's scale) under which two stumps' criteria count as
#: tied (MPBoost, NDCG_Boost: the first one in feature-then-threshold order wins).
TIE_RTOL = 1e-10
#: Two RankBoost stumps whose criteria (sums of a distribution D_t over the pairs, which sums to 1)
#: differ by at most this much are tied: the first in scan order wins (:func:`argmax_scan`).
TIE_TOL = 1e-12


@dataclass
class StumpCandidates:
    """Per-feature sorted (ascending) threshold arrays and the binned training matrix.

    ``codes[i, k]`` is the bin of row ``i`` on feature ``k``; the stump
    ``(k, j)`` fires on row ``i`` iff ``codes[i, k] > j``. Arrays over all stumps
    are ``(n_features, width)``, ``width = max_k n_thr[k] + 1``; entries with
    ``j >= n_thr[k]`` are no stump (``exists`` is False there).
    ``float32``: the values are compared as 32-bit floats (RankLib), recorded in
    every weak-ranker dict so that prediction does the same.
    """

    thresholds: list[NDArray[np.float64]]
    codes: NDArray[np.int32]
    float32: bool = False
    n_thr: NDArray[np.int64] = field(init=False)   # (F,) thresholds per feature
    width: int = field(init=False)

    def __post_init__(self) -> None:
        self.n_thr = np.array([t.shape[0] for t in self.thresholds], dtype=np.int64)
        self.width = int(self.n_thr.max()) + 1 if self.n_thr.size else 1

    @property
    def exists(self) -> NDArray[np.bool_]:
        """``(F, width)`` mask of the existing stumps ``j < n_thr[k]``."""
        return np.arange(self.width)[None, :] < self.n_thr[:, None]

    def stump(self, feature: int, j: int, complement: bool = False) -> dict[str, Any]:
        """The weak-ranker dict of stump ``(feature, j)``, or of its complement ``[x <= theta]``
        (``"complement": true``; see :mod:`boostplug.boosters._weak_rankers`)."""
        r: dict[str, Any] = {"kind": "stump", "feature": int(feature),
                             "threshold": float(self.thresholds[feature][j])}
        if complement:
            r["complement"] = True
        if self.float32:
            r["float32"] = True
        return r

    def vector(self, feature: int, j: int, complement: bool = False) -> NDArray[np.float64]:
        """``h(x) = [code(x) > j]`` (or its complement ``[code(x) <= j]``) on every training row, as floats."""
        h = self.codes[:, feature] > j
        return (~h if complement else h).astype(np.float64)


def argmax_first(values: NDArray[np.float64], tol: float) -> int:
    """Flat index of the first entry within ``tol`` of the maximum (ties go to the lowest index)."""
    best = values.max()
    return int(np.flatnonzero(values >= best - tol)[0])


def argmax_scan(scores: NDArray[np.float64], tol: float) -> tuple[int, int, float]:
    """``(k, j, best)`` for ``(F, width)`` stump scores: the first maximum in RankLib's scan order
    (features ascending, thresholds descending), entries within ``tol`` of the best counting as
    equal; ``(-1, -1, best)`` when no score is finite."""
    best = float(scores.max()) if scores.size else -math.inf
    if not math.isfinite(best):
        return -1, -1, best
    near = scores >= best - tol
    k = int(np.flatnonzero(near.any(axis=1))[0])
    j = int(np.flatnonzero(near[k])[-1])
    return k, j, best


def _ranklib_thresholds(col: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    known = col[~np.isnan(col)]
    if known.size == 0:
        return np.array([-np.inf])
    v = known.astype(np.float32).astype(np.float64)
    # RankBoost.java starts the scan from fmax = -1E6, fmin = 1E6 (doubles)
    fmax, fmin = max(float(v.max()), -1e6), min(float(v.min()), 1e6)
    step = abs(fmax - fmin) / n
    t = np.cumsum(np.r_[fmax, np.full(n - 1, -step)])  # fmax - step - step ..., one subtraction at a time (accumulate)
    return np.append(t, fmin - 1e8)


def candidate_thresholds(X: NDArray[np.float64], mode: str = "sample", *, max_thresholds: int = 255,
                         n_thresholds: int = 10, rng: np.random.Generator | None = None) -> list[NDArray[np.float64]]:
    """Sorted (ascending, possibly repeated for ``ranklib``) candidate thresholds per feature."""
    if mode not in THRESHOLD_MODES:
        raise ValueError(f"unknown thresholds mode {mode!r}; choose one of {list(THRESHOLD_MODES)}")
    for name, value in (("max_thresholds", max_thresholds), ("n_thresholds", n_thresholds)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    rng = rng if rng is not None else np.random.default_rng(0)
    out: list[NDArray[np.float64]] = []
    for k in range(X.shape[1]):
        col = X[:, k]
        if mode == "ranklib":
            out.append(np.sort(_ranklib_thresholds(col, int(n_thresholds))))
            continue
        missing = np.isnan(col)
        vals = np.unique(col[~missing])
        cap = int(max_thresholds) - int(missing.any())   # -inf counts towards max_thresholds
        if mode != "all" and vals.size > cap:
            if cap == 0:
                vals = vals[:0]
            elif mode == "sample":
                vals = np.sort(rng.choice(vals, size=cap, replace=False))
            else:
                idx = np.unique(np.round(np.linspace(0, vals.size - 1, cap)).astype(np.int64))
                vals = vals[idx]
        if missing.any():
            vals = np.concatenate(([-np.inf], vals))
        out.append(vals.astype(np.float64))
    return out


def bin_features(
    X: NDArray[np.float64], thresholds: list[NDArray[np.float64]], *, float32: bool = False
) -> NDArray[np.int32]:
    """``codes[i, k] = #{j : thresholds[k][j] < X[i, k]}`` (0 for NaN).

    With ``float32=True`` the values are first rounded to 32-bit floats (RankLib).
    """
    n, F = X.shape
    # column-major: the stump kernels scan one feature at a time
    codes = np.zeros((n, F), dtype=np.int32, order="F")
    for k in range(F):
        col = X[:, k].astype(np.float32).astype(np.float64) if float32 else X[:, k]
        c = np.searchsorted(thresholds[k], col, side="left")
        c[np.isnan(col)] = 0
        codes[:, k] = c
    return codes


def make_candidates(X: NDArray[np.float64], mode: str = "sample", *, max_thresholds: int = 255, n_thresholds: int = 10,
                    rng: np.random.Generator | None = None) -> StumpCandidates:
    """Candidate thresholds and the binned training matrix in one call."""
    th = candidate_thresholds(X, mode, max_thresholds=max_thresholds, n_thresholds=n_thresholds, rng=rng)
    float32 = mode == "ranklib"
    return StumpCandidates(th, bin_features(X, th, float32=float32), float32)
