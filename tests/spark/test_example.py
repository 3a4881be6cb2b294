"""examples/spark_ranking.py runs end to end, small, on the test run's Spark session."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "spark_ranking.py"


def test_spark_example_runs_small(spark, capsys):
    runpy.run_path(str(SCRIPT), run_name="example")["main"](n_queries=120, rounds=8)
    values = [float(v) for v in re.findall(r"test NDCG@10 (\d\.\d{4})", capsys.readouterr().out)]
    assert len(values) == 2 and all(0.0 < v <= 1.0 for v in values)
