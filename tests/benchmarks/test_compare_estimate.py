"""benchmarks/compare_estimate.py's quick mode on a small file: every mode (a cluster started by hand
included) says its estimate before training and the script writes the table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from boostplug.data import make_ranking, write_letor

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "compare_estimate.py"


@pytest.mark.slow  # four fresh commands and a cluster started by hand: 3 min on a busy 2-core machine
def test_the_quick_mode_tabulates_each_modes_estimate_and_time(tmp_path: Path) -> None:
    data = tmp_path / "d.txt"
    write_letor(data, make_ranking(n_queries=24, docs_per_query=(6, 10), n_features=4, n_informative=4, n_labels=3,
                                   seed=0))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(SCRIPT), "--data", str(data), "--layout", "", "--kfold", "3",
                           "--methods", "lambdarank,ranknet", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads((out / "runs.json").read_text())["runs"]
    assert [r["mode"] for r in runs] == ["jobs1", "jobs2", "local2", "cluster2"]
    for r in runs:
        assert r["estimate_s"] is not None and r["actual_s"] > 0 and r["said_after_s"] < r["actual_s"], r
    assert "on 2 parallel slot(s) (the cluster's 2 worker(s), 2 thread(s) in all" in runs[3]["estimate_line"]
    text = (out / "estimate.txt").read_text()
    assert "machine: " in text and "cluster2" in text and "ratio" in text
