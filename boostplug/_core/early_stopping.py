"""The early-stopping rule of boostplug's own round loops (CatBoost's, the reference boosters', a
distributed LightGBM worker's): one implementation, so that they stop at the same round on the same
metric values."""

from __future__ import annotations

import math

__all__ = ["BestRound"]


class BestRound:
    """After each round, :meth:`update` with the metric on the watched set. ``best``: the round
    (from 1) whose value beat every earlier one (strictly, in the metric's direction; NaN never
    does), 0 while none has; ``value``: its value. Training stops once ``patience`` rounds (``None``:
    never) have passed since ``best``, the rounds before a first best included."""

    def __init__(self, patience: int | None, higher_is_better: bool) -> None:
        self.patience, self.sign = patience, 1.0 if higher_is_better else -1.0
        self.rounds = self.best = 0
        self.value, self._key = math.nan, -math.inf

    def update(self, value: float) -> bool:
        """Record the next round's ``value``; whether to stop after it."""
        self.rounds += 1
        if self.sign * value > self._key:
            self.best, self.value, self._key = self.rounds, value, self.sign * value
        return self.patience is not None and self.rounds - self.best >= self.patience
