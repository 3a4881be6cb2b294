"""The helpers of boostplug/_validation.py that every module's messages share."""

from __future__ import annotations

from boostplug._validation import did_you_mean


def test_did_you_mean_names_the_closest_choices_or_nothing() -> None:
    choices = ["lambdarank", "lambdarank-gain", "rank:ndcg", "mpboost-ldd"]
    assert did_you_mean("lambdrank", choices) == "did you mean lambdarank or lambdarank-gain?"
    assert did_you_mean("lambdrank", choices, quote=True) == "did you mean 'lambdarank' or 'lambdarank-gain'?"
    assert did_you_mean("zzz", choices) == ""
    assert did_you_mean("sigam", {"sigma": 1.0, "mode": "x"}, quote=True) == "did you mean 'sigma'?"  # a dict's keys
    assert did_you_mean("a", ["b"] * 2 + ["a"] * 5) == "did you mean a?"  # each choice once
    assert len(did_you_mean("rank", [f"rank{i}" for i in range(10)]).split(" or ")) == 3  # at most three


def test_did_you_mean_pairs_each_of_several_names_with_its_closest() -> None:
    choices = ["sigma", "margin", "top"]
    assert (did_you_mean(["sigam", "zzz", "tpo"], choices, quote=True)
            == "did you mean 'sigma' for 'sigam', 'top' for 'tpo'?")
    assert did_you_mean(["sigam", "margn"], choices) == "did you mean sigma for sigam, margin for margn?"
    assert did_you_mean(["sigam"], choices) == did_you_mean("sigam", choices) == "did you mean sigma?"
    assert did_you_mean(["zzz", "yyy"], choices) == ""
    assert did_you_mean(7, ["7a", "x"]) == "did you mean 7a?"  # names that are not strings: as str
