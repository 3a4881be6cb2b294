"""The early-stopping rule of boostplug's own round loops (CatBoost's, the reference boosters', the
distributed workers') and of ``boostplug compare``'s round choice: one implementation, so that they
serve the same round on the same values (docs/objectives/index.md, "Which round a model serves")."""

from __future__ import annotations

import math
from typing import Iterable

__all__ = ["BestRound"]


class BestRound:
    """After each round, :meth:`update` with the metric on the watched set. ``best``: the round
    (from 1) whose value beat every earlier one (strictly, in the metric's direction; NaN never
    does), 0 while none has; ``value``: its value. Training stops once ``patience`` rounds (``None``:
    never) have passed since ``best``, the rounds before a first best included. A model serves its
    ``best`` rounds, whether the stop fired or the rounds ran out; every round when none is best."""

    def __init__(self, patience: int | None, higher_is_better: bool) -> None:
        self.patience, self.sign = patience, 1.0 if higher_is_better else -1.0
        self.rounds = self.best = 0
        self.value, self._key = math.nan, -math.inf

    @classmethod
    def of(cls, values: Iterable[float], higher_is_better: bool) -> "BestRound":
        """The rule after one round per value of ``values``."""
        rule = cls(None, higher_is_better)
        for v in values:
            rule.update(float(v))
        return rule

    def update(self, value: float) -> bool:
        """Record the next round's ``value``; whether to stop after it."""
        self.rounds += 1
        if self.sign * value > self._key:
            self.best, self.value, self._key = self.rounds, value, self.sign * value
        return self.patience is not None and self.rounds - self.best >= self.patience
