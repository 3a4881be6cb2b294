"""Where one Spark training's time goes: :func:`boostplug.spark.train` given ``stage_times=StageTimes()``
fills it with wall-clock stamps the driver and each barrier task take between their stages (a
handful of ``time.time()`` calls per run, outside every loop), and :meth:`StageTimes.table` gives
the seconds of each stage.

Driver: ``layout`` (the rows selected, unioned with the validation rows, shuffled into whole
queries per partition, persisted and checked), then the barrier stage, then ``load`` (the model
read back). Each task: ``launch`` (from the layout's end to the task's start: scheduling, Python
workers), ``read`` (the partition's rows as Arrow batches into pandas), ``arrays`` (features to a
numpy or CSR matrix, labels, query ids), ``join`` (the workers' network), ``build`` (the DMatrix
or Dataset; LightGBM builds its Dataset inside training), ``train``, ``return`` (the model
serialised, the closing barrier); ``collect``: from the last task's end to the driver holding
the rows. The use in a run of yours: docs/spark.md, "Speed and memory".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..frameworks.distributed.stamps import Stamps

__all__ = ["Stamps", "StageTimes"]


@dataclass
class StageTimes:
    """The stamps of one training run: the driver's and each barrier task's (by partition)."""

    driver: Stamps = field(default_factory=Stamps)
    workers: list[Stamps] = field(default_factory=list)

    def begin(self) -> None:
        """Start a run: the driver's clock from now, no workers yet."""
        self.driver, self.workers = Stamps(), []

    def add_worker(self, payload: str) -> None:
        stamps = Stamps()
        stamps.at = [(str(name), float(t)) for name, t in json.loads(payload)]
        self.workers.append(stamps)

    def seconds(self) -> dict[str, float]:
        """Seconds per stage: the driver's, and for a task stage the slowest worker's."""
        drv = dict(self.driver.at)
        out: dict[str, float] = {"layout": drv["layout"] - drv["start"]}
        if self.workers:
            out["launch"] = max(w.at[0][1] for w in self.workers) - drv["layout"]
            per = [w.seconds() for w in self.workers]
            for stage in dict.fromkeys(s for p in per for s in p):
                out[stage] = max(p.get(stage, 0.0) for p in per)
            out["collect"] = drv["barrier"] - max(w.at[-1][1] for w in self.workers)
        else:
            out["barrier"] = drv["barrier"] - drv["layout"]
        out["load"] = drv["load"] - drv["barrier"]
        out["total"] = drv["load"] - drv["start"]
        return out

    def table(self) -> str:
        """One line per stage: its name and seconds."""
        return "\n".join(f"{name:<8} {s:9.3f} s" for name, s in self.seconds().items())
