"""RankNet's logistic pair loss ``log(1 + exp(-sigma d))`` and its two derivatives, numba-compiled,
for ``pair_loss, pair_grad, pair_hess = LOGISTIC`` (the first argument after ``d`` is ``sigma``; any
others, a weight's parameters, are ignored). Stable at any ``d``, ``+-inf`` included."""

from __future__ import annotations

import math
from typing import Any

import numba as nb

__all__ = ["LOGISTIC"]


@nb.njit(cache=True)
def _logistic_loss(d: float, sigma: float, *rest: Any) -> float:
    z = sigma * d
    return math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z))


@nb.njit(cache=True)
def _logistic_grad(d: float, sigma: float, *rest: Any) -> float:
    e = math.exp(-abs(sigma * d))  # -sigma / (1 + exp(sigma d))
    return -sigma / (1.0 + e) if d < 0.0 else -sigma * e / (1.0 + e)


@nb.njit(cache=True)
def _logistic_hess(d: float, sigma: float, *rest: Any) -> float:
    e = math.exp(-abs(sigma * d))  # sigma^2 p (1 - p)
    return sigma * sigma * e / (1.0 + e) ** 2


LOGISTIC = (staticmethod(_logistic_loss), staticmethod(_logistic_grad), staticmethod(_logistic_hess))
