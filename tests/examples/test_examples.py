"""Every script in examples/ runs end to end in the test suite: the top-level examples here
(in-process, so the imports are paid once), each printing one result line per model with a test
NDCG@10 in (0, 1]; the replication scripts in test_replication_scripts.py. A new script must be
listed in one of them."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: script -> number of models it trains
SCRIPTS = {"boosters_quickstart.py": 4, "lightgbm_objectives.py": 4, "lgbm_ranker.py": 5, "xgboost_objectives.py": 4, "serve_models.py": 4,
           "grid_search.py": 1, "xgb_ranker.py": 4, "custom_objective.py": 5}


#: scripts whose ``main`` takes a size, run small here: script -> (keyword arguments, models)
SIZED = {"dask_lightgbm_xgboost.py": ({"n_queries": 300, "rounds": 10}, 2)}


#: scripts run by a test elsewhere: script -> that test's file
ELSEWHERE = {"spark_ranking.py": "tests/spark/test_example.py"}  # on the test run's one Spark session


def test_every_example_script_is_run_by_a_test() -> None:
    top = {p.name for p in EXAMPLES.glob("*.py")}
    assert top == set(SCRIPTS) | set(SIZED) | set(ELSEWHERE), "list the new example in SCRIPTS, SIZED or ELSEWHERE"
    for script, test in ELSEWHERE.items():
        assert script in (EXAMPLES.parent / test).read_text(), f"{test} does not run {script}"
    replication = (EXAMPLES.parent / "tests" / "examples" / "test_replication_scripts.py").read_text()
    for p in (EXAMPLES / "replication").glob("*.py"):
        assert f'_load("{p.stem}")' in replication, f"{p.name} has no end-to-end test in test_replication_scripts.py"


def _check_results(out: str, models: int) -> None:
    values = [float(v) for v in re.findall(r"test NDCG@10 (\d\.\d{4})", out)]
    assert len(values) == models, out
    assert all(0.0 < v <= 1.0 for v in values), out


@pytest.mark.dask
@pytest.mark.parametrize("script", sorted(SIZED))
def test_sized_example_runs_small(script: str, capsys) -> None:
    kwargs, models = SIZED[script]
    runpy.run_path(str(EXAMPLES / script), run_name="example")["main"](**kwargs)
    _check_results(capsys.readouterr().out, models)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_runs_and_reports_every_model(script: str, capsys) -> None:
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    _check_results(capsys.readouterr().out, SCRIPTS[script])
