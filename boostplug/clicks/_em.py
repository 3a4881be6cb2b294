"""Compiled loops of the propensity estimators (:mod:`boostplug.clicks.propensity`): the EM of
the position-based model and the harvested click sums of intervention harvesting.

Both read *cells*: aggregated ``(position, group)`` observations with a (possibly fractional)
number of clicks and of trials, so that a bootstrap replicate only changes the cells' counts.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def pbm_em(pos: np.ndarray, group: np.ndarray, clicks: np.ndarray, trials: np.ndarray, theta: np.ndarray,
           gamma: np.ndarray, max_iter: int, tol: float) -> int:
    """EM of ``P(click) = theta[pos] * gamma[group]`` (Wang et al., WSDM 2018), updating ``theta``
    and ``gamma`` in place; returns the iterations run. A click is examined and relevant; a
    non-click splits into examined-not-relevant and not-examined by their posteriors. Stops when
    no ``theta[k] / theta[0]`` moves by more than ``tol`` in an iteration. Cells with no trials
    count for nothing; a position or group without trials keeps its value."""
    n_pos = theta.shape[0]
    n_grp = gamma.shape[0]
    exam = np.zeros(n_pos)
    seen_pos = np.zeros(n_pos)
    rel = np.zeros(n_grp)
    seen_grp = np.zeros(n_grp)
    for i in range(pos.shape[0]):
        seen_pos[pos[i]] += trials[i]
        seen_grp[group[i]] += trials[i]
    for it in range(1, max_iter + 1):
        exam[:] = 0.0
        rel[:] = 0.0
        for i in range(pos.shape[0]):
            t = theta[pos[i]]
            g = gamma[group[i]]
            skipped = trials[i] - clicks[i]
            rest = 1.0 - t * g
            if rest > 1e-300:
                exam[pos[i]] += clicks[i] + skipped * t * (1.0 - g) / rest
                rel[group[i]] += clicks[i] + skipped * (1.0 - t) * g / rest
            else:  # t = g = 1: a non-click there has probability 0, all its mass goes to both
                exam[pos[i]] += trials[i]
                rel[group[i]] += trials[i]
        moved = 0.0
        before = theta[0]
        after = exam[0] / seen_pos[0] if seen_pos[0] > 0 else theta[0]
        for k in range(n_pos):
            new = exam[k] / seen_pos[k] if seen_pos[k] > 0 else theta[k]
            if before > 0 and after > 0:
                moved = max(moved, abs(new / after - theta[k] / before))
            theta[k] = new
        for j in range(n_grp):
            if seen_grp[j] > 0:
                gamma[j] = rel[j] / seen_grp[j]
        if moved <= tol:
            return it
    return max_iter


@nb.njit(cache=True)
def harvest_sums(ptr: np.ndarray, pos: np.ndarray, clicks: np.ndarray, trials: np.ndarray,
                 n_pos: int) -> tuple[np.ndarray, np.ndarray]:
    """Intervention harvesting's sums (Agarwal et al., WSDM 2019) over the cells of each
    ``(query, document)`` (cells ``ptr[g]:ptr[g+1]``, one per position it was shown at):
    ``C[k, k']``, the click-through rates at ``k`` of the documents shown at both ``k`` and
    ``k'``, and ``N[k, k']``, their number. Cells without trials are left out."""
    c = np.zeros((n_pos, n_pos))
    n = np.zeros((n_pos, n_pos))
    for g in range(ptr.shape[0] - 1):
        for i in range(ptr[g], ptr[g + 1]):
            if trials[i] <= 0:
                continue
            ctr = clicks[i] / trials[i]
            for j in range(ptr[g], ptr[g + 1]):
                if j == i or trials[j] <= 0:
                    continue
                c[pos[i], pos[j]] += ctr
                n[pos[i], pos[j]] += 1.0
    return c, n
