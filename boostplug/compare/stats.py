"""Paired significance tests of one method against a baseline over per-query values."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["PairedTest", "paired_tests"]


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
