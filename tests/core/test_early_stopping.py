"""The early-stopping rule boostplug's own round loops share (CatBoost's, the boosters', the LightGBM
and XGBoost workers'; that they stop alike: tests/catboost/test_api.py)."""

from __future__ import annotations

import math

from boostplug._core.early_stopping import BestRound


def test_a_loss_is_minimised_a_tie_is_no_gain_and_nan_is_never_best() -> None:
    rule = BestRound(2, higher_is_better=False)
    assert [rule.update(v) for v in (math.nan, 3.0, 2.0, 2.0, 2.5)] == [False, False, False, False, True]
    assert (rule.best, rule.value, rule.rounds) == (3, 2.0, 5)


def test_without_patience_it_only_keeps_the_best_round() -> None:
    rule = BestRound(None, higher_is_better=True)
    assert not any(rule.update(v) for v in (0.5, 0.7, 0.6, math.nan, 0.1))
    assert (rule.best, rule.value) == (2, 0.7)


def test_rounds_before_a_first_value_count_towards_patience() -> None:
    rule = BestRound(2, higher_is_better=True)
    assert [rule.update(math.nan) for _ in range(2)] == [False, True]
    assert (rule.best, math.isnan(rule.value)) == (0, True)


def test_of_gives_the_rule_after_a_curve() -> None:
    assert (BestRound.of([0.5, 0.7, 0.6], True).best, BestRound.of([0.5, 0.7, 0.6], False).best) == (2, 1)
    assert (BestRound.of([math.nan, math.nan], True).best, BestRound.of([math.nan, math.nan], True).rounds) == (0, 2)
