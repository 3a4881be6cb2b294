"""StageTimes: the seconds of each stage from the driver's and the tasks' stamps."""

from __future__ import annotations

import json

import pytest

from boostplug.spark.stages import StageTimes, Stamps


def _stamps(*at):
    s = Stamps()
    s.at = list(at)
    return s


def test_seconds_per_stage_take_the_slowest_worker():
    times = StageTimes(driver=_stamps(("start", 100.0), ("layout", 104.0), ("barrier", 120.0), ("load", 120.5)))
    times.add_worker(json.dumps([["start", 105.0], ["read", 106.0], ["train", 115.0], ["return", 116.0]]))
    times.add_worker(json.dumps([["start", 107.0], ["read", 107.5], ["train", 118.5], ["return", 119.0]]))
    got = times.seconds()
    assert list(got) == ["layout", "launch", "read", "train", "return", "collect", "load", "total"]
    want = {"layout": 4.0, "launch": 3.0, "read": 1.0, "train": 11.0, "return": 1.0, "collect": 1.0, "load": 0.5,
            "total": 20.5}
    assert got == pytest.approx(want)
    assert times.table().splitlines()[1].split() == ["launch", "3.000", "s"]


def test_begin_restarts_the_clock():
    times = StageTimes()
    times.add_worker(json.dumps([["start", 1.0]]))
    times.begin()
    assert times.workers == [] and [s for s, _ in times.driver.at] == ["start"]
