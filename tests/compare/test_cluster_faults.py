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


@contextlib.contextmanager
def _local(n: int = 1, **kwargs):
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.memory.pause": False}), LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1",
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, **kwargs) as c, Client(c) as client:
        yield client


def _pause(dask_worker) -> None:
    from distributed.core import Status

    dask_worker.status = Status.paused  # what Dask does at its memory's pause fraction


def test_a_paused_worker_is_named_and_a_study_that_cannot_progress_ends(monkeypatch) -> None:
    """H2: the only worker paused after the first run: one line names it with its memory limit at once, and
    after STALL_SECONDS without a worker able to run, the study ends as interrupted with its finished run."""
    import io

    monkeypatch.setattr(cluster, "STALL_SECONDS", 3.0)
    folds = compare.load_folds("example")
    with _local(memory_limit="3GiB") as client:
        stream = io.StringIO()
        started = time.monotonic()
        results = compare.run(["regression", "lambdarank"], folds, rounds=2, client=client, stream=stream,
                              on_run=lambda outcome: client.run(_pause))
        assert time.monotonic() - started < 60
    said = stream.getvalue()
    paused = [line for line in said.splitlines() if "is paused (memory limit" in line]
    assert len(paused) == 1 and "(memory limit 3072 MiB" in paused[0], said
    assert results.interrupted and [r.method for r in results] == ["regression"] and not results.failures
    assert "could take a run for 3 s" in results.cluster["stopped"] and "--resume" in said


def test_the_seconds_without_progress_are_checked(monkeypatch) -> None:
    monkeypatch.setenv(cluster.STALL_ENV, "soon")
    with pytest.raises(ValueError, match=f"{cluster.STALL_ENV}=soon: expected the seconds"):
        cluster._stall_seconds()
    monkeypatch.setenv(cluster.STALL_ENV, "2.5")
    assert cluster._stall_seconds() == 2.5


def test_two_studies_imports_on_one_cluster_are_both_loaded_by_a_restarted_worker(tmp_path: Path, monkeypatch) -> None:
    """N4: study A's imports and study B's, each registered by prepare(): a worker restarted afterwards
    imports both (B's plugin does not replace A's)."""
    files = [tmp_path / "study_a.py", tmp_path / "study_b.py"]
    for path in files:
        path.write_text("VALUE = 1\n")
    with _local() as client:
        for path in files:
            monkeypatch.setattr(cluster, "loaded_plugins", lambda path=path: [str(path)])
            cluster.prepare(client)
        client.restart()
        loaded = client.run(plugins.loaded_plugins)
    assert list(loaded.values()) and all(set(map(str, files)) <= set(v) for v in loaded.values()), loaded


def test_an_import_package_is_digested_over_every_file(tmp_path: Path, monkeypatch) -> None:
    """N3: --import mypkg whose objective is in mypkg/loss.py: an edit of loss.py changes the digest the
    workers must match (an edited package is refused like an edited file)."""
    package = tmp_path / "n3pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import loss\n")
    (package / "loss.py").write_text("SCALE = 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = cluster._digest("n3pkg")
    (package / "loss.py").write_text("SCALE = 2.0\n")
    assert before is not None and cluster._digest("n3pkg") != before
    assert cluster._digest("n3pkg.loss") != before  # a module of it: the package's files too


GONE = '''
from boostplug import objectives
from boostplug.objectives.ranknet import RankNet


class GoneNet(RankNet):
    name = "gone_ranknet"
    params = RankNet.params


objectives.register(GoneNet)
'''


def test_a_worker_whose_import_failed_runs_none_of_the_study(tmp_path: Path) -> None:
    """N5: the --import file deleted, then the only worker restarts mid-study: its import fails there, and
    the run it takes fails naming that error, never "unknown method"; the killed worker is said gone (H2)."""
    import io

    from boostplug import objectives

    path = tmp_path / "gone.py"
    path.write_text(GONE)
    loaded, registered = list(plugins._LOADED), dict(plugins._REGISTERED)
    plugins.load_plugins([str(path)])
    try:
        with _local() as client:
            def restart(outcome) -> None:
                if path.exists():
                    path.unlink()
                    [pid] = client.run(os.getpid).values()
                    os.kill(pid, signal.SIGKILL)  # its nanny starts it again

            stream = io.StringIO()
            results = compare.run(["regression", "gone_ranknet"], compare.load_folds("example"), rounds=2,
                                  client=client, on_run=restart, stream=stream)
    finally:
        plugins._LOADED[:], plugins._REGISTERED = loaded, registered
        objectives.unregister("gone_ranknet")
    assert [r.method for r in results] == ["regression"]
    [failure] = results.failures
    assert f"--import {path}: not found there" in failure.error and "unknown method" not in failure.error, failure
    assert len([line for line in stream.getvalue().splitlines() if " is gone (memory limit" in line]) == 1


@pytest.mark.parametrize("package,other", [("optuna", "4.9.0"), ("jax", "0.0.1")])
def test_a_worker_with_another_optuna_or_jax_is_refused(package: str, other: str) -> None:
    """N2 and the versions read from the module that runs: a worker whose optuna (or, in a study that
    imported JAX, jax) reports another ``__version__`` is refused, naming it, the package and both versions."""
    import importlib

    here = importlib.import_module(pytest.importorskip(package).__name__).__version__

    def patch() -> None:
        importlib.import_module(package).__version__ = other

    with _local() as client:
        address = next(iter(client.scheduler_info()["workers"]))
        client.run(patch)
        with pytest.raises(ValueError) as e:
            cluster.prepare(client)
    assert f"worker {address} has {package} {other}, this process {here}" in str(e.value)


def test_a_worker_lost_during_the_version_check_is_named_and_the_check_made_again(capsys) -> None:
    """N7: a worker dies as it answers the version check: one line names it, the check is made again."""
    def die_at_the_check() -> None:
        from boostplug.compare import run_record

        run_record.versions = lambda *a: os._exit(1)

    with _local(2) as client:
        doomed = sorted(client.scheduler_info()["workers"])[0]
        client.run(die_at_the_check, workers=[doomed])
        workers, _ = cluster.prepare(client)
    err = capsys.readouterr().err
    lost = [line for line in err.splitlines() if "lost during the version check" in line]
    assert len(lost) == 1 and doomed in lost[0] and "checking the workers again" in lost[0], err
    assert doomed not in workers and workers
