"""The metric kernels, made per (ties, metric) pair as closures, are kept by numba's disk cache:
a second process on the same cache compiles nothing (each closure is cached under the values of
its codes, so one pair's machine code never serves another)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CODE = """
import json
import numpy as np
from numba.core import event

compiled = []

class Listener(event.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__qualname__)

    def on_end(self, e):
        pass

event.register("numba:compile", Listener())
from boostplug import metrics

rng = np.random.default_rng(0)
gp = np.arange(0, 121, 12)
y = rng.integers(0, 4, 120).astype(float)
s = np.round(rng.normal(size=120), 1)
out = [metrics.ndcg(s, y, gp, k=5), metrics.average_precision(s, y, gp, ties="worst")]
print(json.dumps([compiled, out]))
"""


def run(cache: Path) -> tuple[list[str], list[float]]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    compiled, values = json.loads(done.stdout.strip().splitlines()[-1])
    return compiled, values


def test_a_second_process_compiles_no_metric_kernel(tmp_path):
    first_compiled, first = run(tmp_path / "numba-cache")
    assert any("_dcg_queries_for" in name for name in first_compiled)
    second_compiled, second = run(tmp_path / "numba-cache")
    assert second_compiled == []
    assert second == first
