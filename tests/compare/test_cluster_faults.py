"""``boostplug compare`` on a Dask cluster when the cluster fails: a scheduler killed mid-study, an
address that accepts and never answers, paused workers, a worker lost during the version check, two
studies' imports on one cluster, an edited ``--import`` package, a worker whose import failed, a worker
with another Optuna. Schedulers and workers are processes on 127.0.0.1; every wait is bounded."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from boostplug import compare  # noqa: E402
from boostplug.cli import main  # noqa: E402
from boostplug.compare import cluster, plugins  # noqa: E402

from .test_cluster import PLUGIN, _wait_for  # noqa: E402

pytestmark = [pytest.mark.dask, pytest.mark.slow]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _scheduler(workers: int = 1, cwd: Path | None = None):
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes on 127.0.0.1 (killed on exit):
    yields the scheduler's address and process."""
    port = _port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--dashboard-address", "127.0.0.1:0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)]
    procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                "--no-dashboard", "--no-nanny", "--host", "127.0.0.1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
              for _ in range(workers)]
    try:
        yield address, procs[0]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=30)


def _lines_until(proc: subprocess.Popen, text: str, timeout: float = 180) -> str:
    """``proc``'s stderr up to the line holding ``text``."""
    err, deadline = "", time.monotonic() + timeout
    while text not in err:
        assert time.monotonic() < deadline, err
        line = proc.stderr.readline()
        assert line, err
        err += line
    return err


def test_a_killed_scheduler_ends_the_study_in_one_line_and_keeps_the_finished_runs(tmp_path: Path) -> None:
    """N1: each finished run is in --out as it finishes (a SIGKILL of compare itself would keep it); the
    scheduler SIGKILLed while ``waits`` trains: one line naming the address and --resume, exit 1, results.json
    interrupted with lambdarank's run; --resume (here, with --jobs) trains only ``waits``."""
    (tmp_path / "faults.py").write_text(PLUGIN)
    (tmp_path / "sync").mkdir()
    argv = [sys.executable, "-m", "boostplug.cli", "compare", "--import", "faults.py", "--methods",
            "lambdarank,waits", "--rounds", "5", "--no-plots", "--out", "out"]
    with _scheduler(cwd=tmp_path) as (address, scheduler):
        proc = subprocess.Popen([*argv, "--scheduler", address], cwd=tmp_path, stderr=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        try:
            err = _lines_until(proc, "] lambdarank fold 1")
            _wait_for("started.waits.*", tmp_path / "sync")
            payload = json.loads((tmp_path / "out/results.json").read_text())  # on disk before the study ends
            assert payload["interrupted"] and [r["method"] for r in payload["results"]] == ["lambdarank"]
            scheduler.kill()
            out, rest = proc.communicate(timeout=120)
        finally:
            proc.kill()
    err += rest
    assert proc.returncode == 1, err
    said = [line for line in err.splitlines() if address in line and "went away" in line]
    assert len(said) == 1 and "--resume" in said[0], err
    assert "Traceback" not in err and "lambdarank" in out
    payload = json.loads((tmp_path / "out/results.json").read_text())
    assert payload["interrupted"] is True and [r["method"] for r in payload["results"]] == ["lambdarank"]
    assert payload["provenance"]["cluster"]["stopped"].startswith(f"the Dask scheduler at {address} went away")
    (tmp_path / "sync" / "go").touch()
    done = subprocess.run([*argv, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 run(s) finished earlier are kept" in done.stderr and "[1/1] waits fold 1" in done.stderr


def test_an_address_that_never_answers_is_refused_in_time(monkeypatch, capsys) -> None:
    """H1: a socket that accepts and never answers (no Dask handshake): refused in one line after the wait."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        held: list = []
        threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
        monkeypatch.setattr(cluster, "WAIT_SECONDS", 2.0)
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        started = time.monotonic()
        assert main(["compare", "--methods", "regression", "--rounds", "2", "--scheduler", address]) == 2
        assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert f"--scheduler {address}: no Dask scheduler answers there" in err and len(err.strip().splitlines()) == 1
