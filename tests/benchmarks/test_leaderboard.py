"""benchmarks/leaderboard.py: the page and plots made from compare's own output folders, the same page on a
rerun, folders of different versions refused, failed and missing runs shown, Holm's correction right."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import leaderboard  # noqa: E402  (benchmarks/ is no package)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tiny tuned studies on the embedded example, as two of the leaderboard's sets."""
    base = tmp_path_factory.mktemp("leaderboard")
    subprocess.run([sys.executable, "-m", "boostplug.cli", "compare", "--methods", "lambdarank,ranknet,linear-ridge",
                    "--rounds", "5", "--tune", "2", "--no-plots", "--no-progress", "--out", str(base / "mq2008")],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    shutil.copytree(base / "mq2008", base / "ohsumed")
    return base


def _edited(folders: Path, tmp_path: Path, study: str, edit) -> Path:
    """A copy of the folders whose ``study``'s results.json went through ``edit``."""
    other = tmp_path / "results"
    shutil.copytree(folders, other)
    path = other / study / "results.json"
    payload = json.loads(path.read_text())
    edit(payload)
    path.write_text(json.dumps(payload))
    return other


def _make(results: Path, tmp_path: Path) -> tuple[str, Path]:
    page, img = tmp_path / "page.md", tmp_path / "img"
    assert leaderboard.main(["--results", str(results), "--page", str(page), "--img", str(img)]) == 0
    return page.read_text(encoding="utf-8"), img


@pytest.mark.slow  # one tuned compare run (about 15 s)
def test_the_page_has_every_methods_row_interval_and_verdict_and_is_remade_byte_for_byte(
        folders: Path, tmp_path: Path) -> None:
    text, img = _make(folders, tmp_path)
    summary = json.loads((folders / "mq2008" / "results.json").read_text())["significance"]
    for method in ("ranknet", "linear-ridge"):
        row = next(line for line in text.split("## MQ2008")[1].splitlines() if line.startswith(f"| `{method}` |"))
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert float(cells[3]) == pytest.approx(summary[method]["mean_diff"], abs=6e-5)  # dNDCG@10
        assert cells[4].startswith("[") and cells[4].endswith("]")  # its interval
        assert cells[6].split(" (")[0] in ("above", "below", "not different", "**above**")  # Holm's verdict
    assert "MSLR-shaped trees set" in text and "Not run yet" in text  # the third set, said to be missing
    assert "not run at all: " in text and "`qbrank`, " in text  # methods of the leaderboard that the folder lacks, named
    assert (img / "leaderboard_mq2008.png").stat().st_size > 1000
    again, _ = _make(folders, tmp_path)
    assert again == text


@pytest.mark.slow
def test_folders_of_different_versions_are_refused_naming_the_difference(folders: Path, tmp_path: Path) -> None:
    other = _edited(folders, tmp_path, "ohsumed",
                    lambda payload: payload["provenance"]["versions"].update(boostplug="0.1.0+another"))
    with pytest.raises(SystemExit, match=r"differ in boostplug: '0.1.0\+another'"):
        _make(other, tmp_path)


@pytest.mark.slow
def test_a_failed_method_is_shown_with_its_reason(folders: Path, tmp_path: Path) -> None:
    failure = {"method": "neural_ndcg", "framework": "lightgbm", "fold": 1, "error": "MemoryError: the worker ran out"}
    other = _edited(folders, tmp_path, "mq2008", lambda payload: payload.update(failures=[failure]))
    text, _ = _make(other, tmp_path)
    row = next(line for line in text.split("## MQ2008")[1].splitlines() if line.startswith("| `neural_ndcg` |"))
    assert "failed" in row and "MemoryError: the worker ran out" in row


def test_holm_against_its_definition() -> None:
    p = {"a": 0.01, "b": 0.04, "c": 0.03, "d": float("nan")}
    adjusted = leaderboard.holm(p)
    # sorted 0.01, 0.03, 0.04 over 3 tests: 0.03, max(0.03, 0.06), max(0.06, 0.04)
    assert adjusted["a"] == pytest.approx(0.03) and adjusted["c"] == pytest.approx(0.06)
    assert adjusted["b"] == pytest.approx(0.06)
    assert adjusted["d"] != adjusted["d"]  # NaN: no test, not counted


def test_each_study_command_names_every_method_once() -> None:
    for study in leaderboard.STUDIES:
        command = study.command("out")
        methods = command[command.index("--methods") + 1].split(",")
        assert len(methods) == len(set(methods)) >= 36
        assert "--tune" in command and command[command.index("--tune") + 1] == str(study.tune)
