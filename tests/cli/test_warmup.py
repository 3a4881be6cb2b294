"""``boostplug warmup`` fills numba's cache: run again in a new process, it compiles nothing into it.

Both runs use the same cache as the rest of the suite (numba's default places): whatever the first
run compiles, later tests load instead of compiling, so the test costs about two cache loads.
"""

from __future__ import annotations

import re
import subprocess
import sys

from boostplug import objectives
from boostplug.cli import warmup


def _warmup() -> tuple[int, int, int]:
    run = subprocess.run([sys.executable, "-m", "boostplug.cli", "warmup"], capture_output=True, text=True,
                         timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    found = re.search(r"(\d+) kernel signatures compiled into numba's cache, (\d+) loaded from it; "
                      r"(\d+) compiled that numba cannot cache", run.stdout)
    assert found, run.stdout
    return tuple(int(g) for g in found.groups())


def test_a_second_warmup_compiles_nothing_into_the_cache() -> None:
    _warmup()
    compiled, loaded, uncached = _warmup()
    assert compiled == 0
    assert loaded >= 40  # objectives, metrics, boosters, clicks, the LETOR reader: serial and parallel forms
    assert uncached == 0  # every built-in kernel is cached, NDCG-Loss1's pair loop (per class) included


def test_every_registered_objective_is_warmed_with_each_choice() -> None:
    for name in objectives.names():
        settings = list(warmup._objective_settings(objectives.get(name)))
        assert settings[0] == {}
        declared = objectives.get(name).loss_class.declared_params()
        for param, p in declared.items():
            if p.kind == "choice":
                assert {s[param] for s in settings if param in s} == set(p.choices) - {p.default}
