"""A study's time: before the first training one line with its expected time, from a probe of the data, on
the parallel slots it will have; during it the rest over the slots working; the resume header's trainings
left and in all; a method the probe cannot train and a scheduler without threads, one line each before any
training."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from boostplug.cli import compare_clock, main
from boostplug.cli.compare_clock import slots, study_seconds, training_seconds
from boostplug.data import make_ranking, write_letor

TOOK = r"\d+(\.\d)? (s|min|h)"


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "d.txt"
    write_letor(path, make_ranking(n_queries=24, docs_per_query=(6, 10), n_features=4, n_informative=4, n_labels=3,
                                   seed=0))
    return path


def _run(capsys, argv: list[str]) -> tuple[int, list[str]]:
    code = main(["compare", *argv])
    return code, capsys.readouterr().err.splitlines()


# ---- the estimator ----------------------------------------------------------------------------------

def test_a_training_takes_the_line_through_the_probes_two_times() -> None:
    # 1 s fixed + 0.1 s a round: 10 rounds 2 s, 30 rounds 4 s -> 300 rounds 31 s
    assert training_seconds({30: 4.0, 10: 2.0}, 300) == pytest.approx(31.0)
    # a falling line (noise, or a method that trains its own rounds): flat at the first time
    assert training_seconds({10: 2.0, 30: 1.5}, 300) == pytest.approx(2.0)


def test_the_estimate_divides_the_runs_by_the_slots_working() -> None:
    assert study_seconds([10.0] * 4, 1) == pytest.approx(40.0)
    assert study_seconds([10.0] * 4, 2) == pytest.approx(20.0)
    assert study_seconds([10.0] * 4, 8) == pytest.approx(10.0)  # four runs: four slots work, not eight
    assert study_seconds([30.0, 5.0, 5.0], 2) == pytest.approx(30.0)  # a run is not split across slots
    assert study_seconds([10.0] * 4, 2, elapsed=15.0) == pytest.approx(5.0)
    assert study_seconds([10.0] * 4, 2, elapsed=50.0) == 0.0
    assert study_seconds([], 2) == 0.0


class _Client:
    def __init__(self, nthreads: list[int]) -> None:
        self.workers = {f"tcp://127.0.0.1:{4000 + k}": {"nthreads": n} for k, n in enumerate(nthreads)}
        self.scheduler = type("Scheduler", (), {"address": "tcp://127.0.0.1:8786"})()

    def scheduler_info(self) -> dict:
        return {"workers": self.workers}

    def nthreads(self) -> dict:
        return {a: w["nthreads"] for a, w in self.workers.items()}


def test_the_slots_are_the_jobs_the_cores_run_or_the_threads_the_scheduler_reports(monkeypatch) -> None:
    monkeypatch.setattr("boostplug.compare.execution.os.cpu_count", lambda: 2)
    assert slots(1, 2) == (1, "--jobs 1")
    assert slots(2, 1) == (2, "--jobs 2")
    assert slots(4, 1) == (2, "--jobs 4")  # two cores run two at once
    assert slots(1, 1, _Client([2, 1]), "tcp://127.0.0.1:8786") == (
        3, "the cluster's 2 worker(s), 3 thread(s) in all as its scheduler reports")


@pytest.mark.parametrize("nthreads", [[], [0, 0]])
def test_a_scheduler_reporting_no_threads_is_an_error_naming_what_to_do(nthreads: list[int]) -> None:
    with pytest.raises(ValueError, match=re.escape(
            f"--scheduler tcp://127.0.0.1:8786: the scheduler reports {len(nthreads)} worker(s) and 0 threads, "
            "nothing would train; start workers with threads: dask worker tcp://127.0.0.1:8786 --nthreads 1")):
        slots(1, 1, _Client(nthreads), "tcp://127.0.0.1:8786")


# ---- the command -----------------------------------------------------------------------------------

def test_the_expected_time_comes_before_the_first_training(tmp_path: Path, capsys, monkeypatch) -> None:
    import sys

    from boostplug.compare import execution

    real = execution.run_method

    def said(name, *a, **k):  # the study's trainings search (--tune), the probe's do not
        if k["tune"]:
            print(f"training {name} fold {k['fold'] + 1}", file=sys.stderr)
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", said)
    monkeypatch.setattr(compare_clock, "PROBE_SHARE", 1.0)  # a tiny study probed too
    code, lines = _run(capsys, ["--data", str(_data(tmp_path)), "--kfold", "3", "--tune", "2", "--rounds", "5",
                                "--methods", "lambdarank,ranknet", "--jobs", "1", "--no-plots", "--no-progress"])
    assert code == 0, lines
    expected = next(i for i, line in enumerate(lines) if "expected time" in line)
    assert re.fullmatch(rf"boostplug compare: expected time about {TOOK} on 1 parallel slot\(s\) \(--jobs 1\), from "
                        r"a probe of 1 and 2 rounds per method on fold 1 \(it took \d+\.\d s, not reused\)",
                        lines[expected])
    assert lines[expected - 1].startswith("boostplug compare: --tune 2: 12 trainings")
    assert lines[expected + 1] == "training lambdarank fold 1"
    # during: at each method's first run, the rest on the slots working
    assert re.fullmatch(rf"boostplug compare: lambdarank's first run took {TOOK}; the study about {TOOK} more on "
                        r"1 slot\(s\)", lines[expected + 2]), lines


def test_a_small_study_is_not_probed(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(compare_clock, "run", lambda *a, **k: pytest.fail("probed"))
    code, lines = _run(capsys, ["--data", str(_data(tmp_path)), "--kfold", "3", "--tune", "2", "--rounds", "5",
                                "--methods", "lambdarank", "--no-plots", "--no-progress"])
    assert code == 0 and not any("expected time" in line for line in lines), lines


def test_the_resume_header_says_the_trainings_left_and_in_all(tmp_path: Path, capsys) -> None:
    argv = ["--data", str(_data(tmp_path)), "--kfold", "3", "--tune", "2", "--rounds", "3", "--methods",
            "lambdarank,adarank-ndcg", "--out", str(tmp_path / "out"), "--no-plots", "--no-progress"]
    code, _ = _run(capsys, [*argv, "--folds", "1"])
    assert code == 0
    code, lines = _run(capsys, [*argv, "--resume"])
    assert code == 0, lines
    assert ("boostplug compare: --tune 2: 6 of 9 trainings left of up to 3 rounds (2 method(s) x 3 fold(s) x 2 "
            "trials; adarank-ndcg: one per fold, nothing to search)") in lines


def test_a_method_the_probe_cannot_train_is_one_line_before_any_training(tmp_path: Path, capsys,
                                                                          monkeypatch) -> None:
    from boostplug.compare import execution

    real = execution.run_method

    def no_ranknet(name, *a, **k):
        if name == "ranknet":
            raise ValueError("no pair of different labels")
        return real(name, *a, **k)

    monkeypatch.setattr(compare_clock, "PROBE_SHARE", 1.0)
    monkeypatch.setattr(execution, "run_method", no_ranknet)
    out = tmp_path / "out"
    code, lines = _run(capsys, ["--data", str(_data(tmp_path)), "--kfold", "3", "--rounds", "5", "--methods",
                                "lambdarank,ranknet", "--no-plots", "--out", str(out)])
    assert code == 2 and lines[-1] == (
        "boostplug compare: error: ranknet cannot train on this data: 1 rounds on fold 1 (the probe of the study's "
        "time) failed: ValueError: no pair of different labels; leave it out of --methods or change its settings"), lines
    assert not any(line.startswith("  [1/") for line in lines) and not out.exists()


def test_a_scheduler_without_threads_is_one_line_before_any_training(tmp_path: Path, capsys, monkeypatch) -> None:
    from boostplug.cli import compare as cli_compare

    monkeypatch.setattr(cli_compare, "connect", lambda scheduler: contextlib.nullcontext(_Client([0])))
    monkeypatch.setattr(cli_compare, "prepare", lambda client: [])
    code, lines = _run(capsys, ["--data", str(_data(tmp_path)), "--kfold", "3", "--rounds", "2", "--methods",
                                "lambdarank", "--no-plots", "--scheduler", "tcp://127.0.0.1:8786"])
    assert code == 2 and lines[-1] == (
        "boostplug compare: error: --scheduler tcp://127.0.0.1:8786: the scheduler reports 1 worker(s) and 0 "
        "threads, nothing would train; start workers with threads: dask worker tcp://127.0.0.1:8786 --nthreads 1"), lines
