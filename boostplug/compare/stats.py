"""Paired significance tests of one method against a baseline over per-query values, and
percentile bootstrap confidence intervals of means over queries (resampled within folds)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["PairedTest", "paired_tests", "BootstrapCI", "bootstrap_means", "bootstrap_ci"]


@dataclass(frozen=True)
class PairedTest:
    """Mean difference (method - baseline) over ``n`` paired queries and two-sided p-values
    of the paired t-test and the Wilcoxon signed-rank test (NaN when undefined)."""

    n: int
    mean_diff: float
    t_pvalue: float
    wilcoxon_pvalue: float


def paired_tests(values: ArrayLike, baseline: ArrayLike) -> PairedTest:
    """Paired t-test (``scipy.stats.ttest_rel``) and Wilcoxon signed-rank test
    (``scipy.stats.wilcoxon``, zero differences dropped) of ``values`` against ``baseline``.

    Pairs where either value is NaN (a query a metric convention skips) are left out.
    All differences zero (the method is the baseline): p-values 1.0. Fewer than two
    pairs: p-values NaN.
    """
    from scipy import stats

    a = np.asarray(values, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values need two 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n = int(a.size)
    if n < 2:
        return PairedTest(n, float(np.mean(a - b)) if n else float("nan"), float("nan"), float("nan"))
    d = a - b
    if not np.any(d):
        return PairedTest(n, 0.0, 1.0, 1.0)
    t_p = float(stats.ttest_rel(a, b).pvalue)
    w_p = float(stats.wilcoxon(a, b, zero_method="wilcox").pvalue)
    return PairedTest(n, float(d.mean()), t_p, w_p)


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap confidence interval: the statistic on the data (``estimate``), the
    interval ``[low, high]`` at ``level``, over ``n`` values and ``resamples`` resamples (NaN
    bounds when no value is left)."""

    n: int
    estimate: float
    low: float
    high: float
    level: float
    resamples: int


_BLOCK = 256


def _strata(n: int, strata: ArrayLike | None) -> list[np.ndarray]:
    if strata is None:
        return [np.arange(n)]
    s = np.asarray(strata)
    if s.shape != (n,):
        raise ValueError(f"strata must have one label per value ({n}), got shape {s.shape}")
    return [np.flatnonzero(s == label) for label in dict.fromkeys(s.tolist())]


def bootstrap_means(values: ArrayLike, strata: ArrayLike | None = None, *, resamples: int = 2000, seed: int = 0,
                    by_stratum: bool = False) -> np.ndarray:
    """The mean of ``values`` on each of ``resamples`` bootstrap resamples (seeded).

    Each resample draws, within every stratum (``strata``: one label per value; None: one
    stratum), as many values as the stratum has, with replacement. The statistic is the mean
    of the drawn values (NaN values left out), or with ``by_stratum`` the mean over strata of
    each stratum's mean (the mean over folds of per-fold means). Paired resamples: the same
    seed and strata draw the same positions for every array of that length, so the means of
    two methods' per-query values, and of their differences, come from the same queries.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {v.shape}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be an integer >= 1, got {resamples!r}")
    rng = np.random.default_rng(seed)
    known = ~np.isnan(v)
    filled = np.where(known, v, 0.0)
    groups = _strata(v.size, strata)
    sums = np.zeros((len(groups), resamples))
    counts = np.zeros_like(sums)
    for start in range(0, resamples, _BLOCK):  # blocks bound the memory of the draws on many queries
        block = slice(start, min(start + _BLOCK, resamples))
        for k, pos in enumerate(groups):
            drawn = pos[rng.integers(0, pos.size, size=(block.stop - block.start, pos.size))]
            sums[k, block] = filled[drawn].sum(axis=1)
            counts[k, block] = known[drawn].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if by_stratum:
            per = sums / counts
            kept = ~np.isnan(per)
            return np.where(kept, per, 0.0).sum(axis=0) / kept.sum(axis=0)
        return sums.sum(axis=0) / counts.sum(axis=0)


def bootstrap_ci(values: ArrayLike, strata: ArrayLike | None = None, *, resamples: int = 2000, level: float = 0.95,
                 seed: int = 0, by_stratum: bool = False) -> BootstrapCI:
    """Percentile bootstrap interval of the mean of ``values`` (see :func:`bootstrap_means`):
    the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled means."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    v = np.asarray(values, dtype=np.float64)
    means = bootstrap_means(v, strata, resamples=resamples, seed=seed, by_stratum=by_stratum)
    n = int(np.sum(~np.isnan(v)))
    if n == 0:
        return BootstrapCI(0, float("nan"), float("nan"), float("nan"), level, resamples)
    estimate = float(np.mean([np.nanmean(v[pos]) for pos in _strata(v.size, strata) if np.any(~np.isnan(v[pos]))])
                     if by_stratum else np.nanmean(v))
    low, high = np.nanquantile(means, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return BootstrapCI(n, estimate, float(low), float(high), level, resamples)
