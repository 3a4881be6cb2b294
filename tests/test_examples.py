"""The objective examples run (in-process, so the imports are paid once) and print one result
line per model with a test NDCG@10 in (0, 1]."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: script -> number of models it trains
SCRIPTS = {"lightgbm_objectives.py": 4, "lgbm_ranker.py": 5, "xgboost_objectives.py": 4, "treelite_export.py": 2,
           "grid_search.py": 1, "xgb_ranker.py": 4, "custom_objective.py": 5}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_runs_and_reports_every_model(script: str, capsys) -> None:
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    out = capsys.readouterr().out
    values = [float(v) for v in re.findall(r"test NDCG@10 (\d\.\d{4})", out)]
    assert len(values) == SCRIPTS[script], out
    assert all(0.0 < v <= 1.0 for v in values), out
