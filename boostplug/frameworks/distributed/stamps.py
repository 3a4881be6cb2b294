"""A worker's stage stamps: when each stage of its training ended (wall clock), so that a driver
can tell where one distributed training's time went (:class:`boostplug.spark.stages.StageTimes`)."""

from __future__ import annotations

import json
import time

__all__ = ["Stamps"]


class Stamps:
    """A process's stage stamps: ``mark(stage)`` records when ``stage`` ended."""

    def __init__(self) -> None:
        self.at: list[tuple[str, float]] = [("start", time.time())]

    def mark(self, stage: str) -> None:
        self.at.append((stage, time.time()))

    def to_json(self) -> str:
        return json.dumps(self.at)

    def seconds(self) -> dict[str, float]:
        """Each stage's seconds (from the previous stamp)."""
        return {name: t - prev for (_, prev), (name, t) in zip(self.at, self.at[1:])}
