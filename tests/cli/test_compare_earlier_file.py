"""``--resume`` on a results.json that an earlier version of ``boostplug compare`` wrote
(``earlier_run/``: fold 1 of 3 of ``data.txt``, regression and rb-c, 3 rounds, written before the
command kept its settings in a run record, without digests and with its folds numbered from 0): it is
refused in one line, before any training, and left as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from boostplug.cli import main

EARLIER = Path(__file__).parent / "earlier_run"
ARGV = ["compare", "--data", "data.txt", "--kfold", "3", "--methods", "regression,rb-c", "--rounds", "3",
        "--no-plots", "--no-progress", "--out", "out", "--resume"]


@pytest.fixture
def earlier_run(tmp_path: Path, monkeypatch) -> dict:
    """The earlier run's data and --out folder in the working directory (it gave relative paths)."""
    shutil.copy(EARLIER / "data.txt", tmp_path / "data.txt")
    (tmp_path / "out").mkdir()
    shutil.copy(EARLIER / "results.json", tmp_path / "out" / "results.json")
    monkeypatch.chdir(tmp_path)
    return json.loads((EARLIER / "results.json").read_text())


def test_an_earlier_versions_results_json_is_refused_in_one_line(earlier_run: dict, monkeypatch, capsys) -> None:
    from boostplug.compare import execution

    trained = []
    monkeypatch.setattr(execution, "run_method", lambda name, *a, **k: trained.append(name))
    assert main(ARGV) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "results[0].fold must be >= 1" in err[0] and "numbered them from 0" in err[0], err
    assert not trained and json.loads(Path("out/results.json").read_text()) == earlier_run


def test_a_file_without_digests_is_refused(earlier_run: dict, capsys) -> None:
    """The same file, its folds numbered from 1: refused for its missing digest."""
    payload = dict(earlier_run, results=[{**r, "fold": r["fold"] + 1} for r in earlier_run["results"]])
    Path("out/results.json").write_text(json.dumps(payload))
    assert main(ARGV) == 2
    assert "the file has no digest: it was edited after the run wrote it, or an earlier version" in \
        capsys.readouterr().err
