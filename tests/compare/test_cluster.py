"""``boostplug compare`` on a Dask cluster (``--scheduler``, ``run(client=...)``): real LocalClusters of
worker processes on loopback. The same table as ``--jobs``; a worker killed mid-run, a worker lost for
good, a run that raises, SIGTERM then ``--resume``; versions refused; ``--import`` on every worker;
bad values in one line."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from boostplug import compare  # noqa: E402
from boostplug.cli import main  # noqa: E402
from boostplug.compare import cluster, run_record  # noqa: E402

pytestmark = [pytest.mark.dask, pytest.mark.slow]

#: An objective for the fault tests, loaded with --import (on every worker too): RankNet whose first
#: gradient in a process announces the process (a file ``started.<method>.<pid>`` in the folder ``sync``
#: beside the file), then waits for ``go`` there; ``raises`` raises, ``dies`` ends its process.
PLUGIN = '''
import os
import time
from pathlib import Path

from boostplug import objectives
from boostplug.objectives.ranknet import RankNet

SYNC = Path(__file__).parent / "sync"


class _Announced(RankNet):
    params = RankNet.params
    seen = False

    def _grad_hess(self, scores):
        if not type(self).seen:
            type(self).seen = True
            (SYNC / f"started.{self.name}.{os.getpid()}").touch()
            self.fault()
        return super()._grad_hess(scores)

    def fault(self):
        pass


class Waits(_Announced):
    name = "waits"
    summary = "RankNet that waits for sync/go at its first round (a test of faults)"

    def fault(self):
        while not (SYNC / "go").exists():
            time.sleep(0.02)


class Raises(_Announced):
    name = "raises"
    summary = "RankNet that raises at its first round (a test of faults)"

    def fault(self):
        raise RuntimeError("raised on purpose")


class Dies(_Announced):
    name = "dies"
    summary = "RankNet whose process ends at its first round (a test of faults)"

    def fault(self):
        os._exit(3)


for cls in (Waits, Raises, Dies):
    objectives.register(cls)
'''


def _cli(*argv: str, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boostplug.cli", "compare", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def _rows(path: Path) -> list[dict]:
    """results.csv without its seconds (the one column that differs between two equal runs)."""
    with open(path, newline="") as f:
        return [{k: v for k, v in row.items() if k != "train_seconds"} for row in csv.DictReader(f)]


def _tuned(path: Path) -> list[tuple]:
    with open(path, newline="") as f:
        return [(r["method"], r["fold"], r["trial"], r["value"], r["best_round"], r["params"], r["chosen"])
                for r in csv.DictReader(f)]


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1", scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as c, Client(c) as cl:
        yield cl


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """The fault objectives' file, registered here (as --import does) and, through the plugin, on the workers."""
    from boostplug import objectives
    from boostplug.compare import plugins

    folder = tmp_path_factory.mktemp("faults")
    (folder / "faults.py").write_text(PLUGIN)
    (folder / "sync").mkdir()
    loaded, registered = list(plugins._LOADED), dict(plugins._REGISTERED)
    plugins.load_plugins([str(folder / "faults.py")])
    yield folder
    plugins._LOADED[:], plugins._REGISTERED = loaded, registered
    for name in ("waits", "raises", "dies"):
        objectives.unregister(name)


@pytest.fixture
def plugin(faults):
    """The fault objectives' sync folder, emptied."""
    for path in (faults / "sync").iterdir():
        path.unlink()
    return faults / "sync"


def test_the_cluster_gives_the_table_of_jobs(tmp_path: Path) -> None:
    """--scheduler local:2 and --jobs 2: the same results.csv (every test value and chosen round) and the
    same tuning.csv (every trial's value, round and parameters); results.json says where each run trained."""
    common = ["--methods", "lambdarank,ranknet", "--rounds", "12", "--tune", "2", "--no-plots", "--no-progress"]
    a = _cli(*common, "--scheduler", "local:2", "--out", "A", cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    b = _cli(*common, "--jobs", "2", "--out", "B", cwd=tmp_path)
    assert b.returncode == 0, b.stderr
    assert _rows(tmp_path / "A/results.csv") == _rows(tmp_path / "B/results.csv")
    assert _tuned(tmp_path / "A/tuning.csv") == _tuned(tmp_path / "B/tuning.csv")
    payload = json.loads((tmp_path / "A/results.json").read_text())
    workers = payload["provenance"]["cluster"]["workers"]
    assert len(workers) == 2 and payload["provenance"]["cluster"]["fold_bytes"] > 0
    assert {r["info"]["worker"] for r in payload["results"]} <= set(workers)
    assert "cluster" not in json.loads((tmp_path / "B/results.json").read_text())["provenance"]
    assert "2 worker(s)" in a.stderr and "Traceback" not in a.stderr


def test_the_api_with_a_client_equals_one_process(client) -> None:
    folds = compare.load_folds("example")
    here = compare.run(["lambdarank", "ranknet"], folds, rounds=10, threads=1)
    there = compare.run(["lambdarank", "ranknet"], folds, rounds=10, client=client)
    assert [(r.method, r.best_round, r.test) for r in there] == [(r.method, r.best_round, r.test) for r in here]
    assert there.cluster["scheduler"] == client.scheduler.address and not there.failures
    assert all(r.info["worker"] in there.cluster["workers"] for r in there)


def test_a_workers_warnings_come_back_with_its_run(client) -> None:
    """A warning raised on a Dask worker is in its run's record (results.json, the report), not only in the
    worker's log."""
    results = compare.run(["lambdarank", "ndcg_boost[hessian=exact]"], compare.load_folds("example"), rounds=3,
                          client=client)
    kept = {r.method: r.info.get("warnings", []) for r in results}
    assert kept["lambdarank"] == [] and not results.failures
    assert [w["warning"].split(":")[0] for w in kept["ndcg_boost[hessian=exact]"]] == ["HessianFloorWarning"]


def _wait_for(pattern: str, folder: Path, timeout: float = 120) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted(folder.glob(pattern))
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"nothing matched {pattern} in {folder} after {timeout} s")


def test_a_worker_killed_mid_run_is_run_again(client, plugin: Path) -> None:
    """kill -9 of the worker training ``waits``: Dask runs the task again on a worker (the nanny restarts
    the killed one), the study completes, and its values are those of an undisturbed run."""
    import threading

    folds = compare.load_folds("example")
    out: dict = {}
    thread = threading.Thread(target=lambda: out.setdefault("r", compare.run(["waits", "lambdarank"], folds,
                                                                             rounds=8, client=client)))
    thread.start()
    first = _wait_for("started.waits.*", plugin)[0]
    os.kill(int(first.name.rsplit(".", 1)[1]), signal.SIGKILL)
    first.unlink()
    _wait_for("started.waits.*", plugin)  # the task started again
    (plugin / "go").touch()
    thread.join(timeout=300)
    results = out["r"]
    assert not results.failures and [r.method for r in results] == ["waits", "lambdarank"]
    (plugin / "go").touch()
    alone = compare.run(["waits"], folds, rounds=8, threads=1)
    assert (results[0].best_round, results[0].test) == (alone[0].best_round, alone[0].test)


def test_a_worker_lost_for_good_and_a_raising_run_are_named(client, plugin: Path) -> None:
    """``dies`` ends every worker that runs it: Dask gives the task up after its allowed failures (3) and
    it is recorded as failed,
    ``raises`` fails as it does locally; ``lambdarank`` finishes."""
    folds = compare.load_folds("example")
    results = compare.run(["dies", "raises", "lambdarank"], folds, rounds=5, client=client)
    assert [r.method for r in results] == ["lambdarank"]
    errors = {f.method: f.error for f in results.failures}
    assert set(errors) == {"dies", "raises"}
    assert errors["dies"].startswith("KilledWorker") and "raised on purpose" in errors["raises"]


def test_a_changed_import_is_refused_where_a_worker_imported_it_before(client, plugin: Path) -> None:
    folds = compare.load_folds("example")
    path = plugin.parent / "faults.py"
    compare.run(["lambdarank"], folds, rounds=2, client=client)  # every worker imports the file
    try:
        path.write_text(PLUGIN + "\n# changed\n")
        with pytest.raises(ValueError, match=f"imported an earlier version of --import {path}; restart the workers"):
            compare.run(["lambdarank"], folds, rounds=2, client=client)
    finally:
        path.write_text(PLUGIN)


def test_a_worker_of_other_versions_is_refused(client) -> None:
    """Before anything is sent: the message names the worker, the package and both versions."""
    address = sorted(client.scheduler_info()["workers"])[0]

    def patch(wrong: bool) -> None:
        from boostplug.compare import run_record as there

        if wrong:
            there._real_versions = getattr(there, "_real_versions", there.versions)
            there.versions = lambda *a: {**there._real_versions(*a), "lightgbm": "0.0.1"}
        elif hasattr(there, "_real_versions"):
            there.versions = there._real_versions

    client.run(patch, True, workers=[address])
    try:
        with pytest.raises(ValueError) as e:
            compare.run(["lambdarank"], compare.load_folds("example"), rounds=3, client=client)
    finally:
        client.run(patch, False, workers=[address])
    here = run_record.versions()["lightgbm"]
    assert f"worker {address} has lightgbm 0.0.1, this process {here}" in str(e.value)


def test_an_objective_registered_only_here_is_refused(client) -> None:
    from boostplug import objectives
    from boostplug.objectives.ranknet import RankNet

    class OnlyHere(RankNet):
        name = "only_here_ranknet"
        params = RankNet.params

    objectives.register(OnlyHere)
    try:
        with pytest.raises(ValueError, match="only_here_ranknet are registered in this process only"):
            compare.run(["lambdarank"], compare.load_folds("example"), rounds=3, client=client)
    finally:
        objectives.unregister("only_here_ranknet")


JAX_PLUGIN = '''
import jax.numpy as jnp

from boostplug import objectives
from boostplug.autodiff import JaxLoss


class SoftmaxCE(JaxLoss):
    name = "cluster_softmax_ce"
    summary = "ListNet's cross-entropy written in JAX (a test of --import on a cluster)"

    @staticmethod
    def query_loss(scores, labels, mask):
        s = jnp.where(mask, scores, -jnp.inf)
        target = jnp.where(mask, jnp.exp2(labels) - 1.0, 0.0)
        target = target / jnp.maximum(jnp.sum(target), 1e-12)
        logp = s - jnp.max(s) - jnp.log(jnp.sum(jnp.where(mask, jnp.exp(s - jnp.max(s)), 0.0)))
        return -jnp.sum(jnp.where(mask, target * logp, 0.0))


objectives.register(SoftmaxCE)
'''


def test_an_imported_jax_loss_trains_on_every_worker(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    (tmp_path / "jaxloss.py").write_text(JAX_PLUGIN)
    common = ["--import", "jaxloss.py", "--methods", "cluster_softmax_ce,lambdarank", "--rounds", "4", "--no-plots",
              "--no-progress"]
    a = _cli(*common, "--scheduler", "local:2", "--out", "A", cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    b = _cli(*common, "--out", "B", cwd=tmp_path)
    assert b.returncode == 0, b.stderr
    assert _rows(tmp_path / "A/results.csv") == _rows(tmp_path / "B/results.csv")


def _descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_keeps_the_finished_runs_and_resume_trains_the_rest(tmp_path: Path) -> None:
    """SIGTERM while ``waits`` trains on the cluster and ``lambdarank`` has finished: exit 143, lambdarank's
    run on disk, no worker left; ``--resume`` (here, locally) trains only ``waits``."""
    (tmp_path / "faults.py").write_text(PLUGIN)
    sync = tmp_path / "sync"
    sync.mkdir()
    argv = [sys.executable, "-m", "boostplug.cli", "compare", "--import", "faults.py", "--methods",
            "lambdarank,waits", "--rounds", "5", "--no-plots", "--out", "out"]  # a line per finished run
    proc = subprocess.Popen([*argv, "--scheduler", "local:2"], cwd=tmp_path, stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        _wait_for("started.waits.*", sync)
        err = ""
        while "] lambdarank fold 1" not in err:  # lambdarank's run is back at the client
            line = proc.stderr.readline()
            assert line, err
            err += line
        kids = _descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 143, err + rest
    assert "Traceback" not in rest
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(Path(f"/proc/{k}").exists() for k in kids):
        time.sleep(0.1)
    assert not [k for k in kids if Path(f"/proc/{k}").exists()], "a worker process was left running"
    payload = json.loads((tmp_path / "out/results.json").read_text())
    assert [(r["method"], r["fold"]) for r in payload["results"]] == [("lambdarank", 1)]
    (sync / "go").touch()
    done = subprocess.run([*argv, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    payload = json.loads((tmp_path / "out/results.json").read_text())
    assert [r["method"] for r in payload["results"]] == ["lambdarank", "waits"]
    assert "worker" in payload["results"][0]["info"] and "worker" not in payload["results"][1]["info"]
    assert len(list(sync.glob("started.lambdarank.*"))) == 0  # (lambdarank is not a fault objective)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("value,says", [
    ("local:0", "a whole number from 1 to"), ("local:-1", "a whole number from 1 to"),
    ("local:x", "a whole number from 1 to"), ("local:", "a whole number from 1 to"),
    ("local:100000", "a whole number from 1 to"), ("tcp://a b", "give a Dask scheduler's address"),
])
def test_bad_scheduler_values_in_one_line(value: str, says: str, capsys) -> None:
    assert main(["compare", "--scheduler", value, "--rounds", "2"]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_scheduler_and_jobs_are_refused_together(capsys) -> None:
    assert main(["compare", "--scheduler", "local:2", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "--scheduler local:2 and --jobs 2" in err


def test_an_unreachable_scheduler_leaves_the_results_on_disk(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "out"
    assert main(["compare", "--methods", "regression", "--rounds", "2", "--no-plots", "--no-progress",
                 "--out", str(out)]) == 0
    before = (out / "results.json").read_bytes()
    monkeypatch.setattr(cluster, "WAIT_SECONDS", 2.0)
    address = f"tcp://127.0.0.1:{_closed_port()}"
    capsys.readouterr()
    assert main(["compare", "--methods", "regression", "--rounds", "2", "--no-plots", "--no-progress",
                 "--out", str(out), "--overwrite", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert f"--scheduler {address}: no Dask scheduler answers there" in err and "Traceback" not in err
    assert (out / "results.json").read_bytes() == before


def test_a_scheduler_without_workers_times_out_with_a_message(monkeypatch, capsys) -> None:
    from distributed import LocalCluster

    monkeypatch.setattr(cluster, "WAIT_SECONDS", 2.0)
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None, host="127.0.0.1",
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as empty:
        started = time.monotonic()
        assert main(["compare", "--methods", "regression", "--rounds", "2", "--scheduler",
                     empty.scheduler_address]) == 2
        assert time.monotonic() - started < 60
    err = capsys.readouterr().err
    assert "the scheduler has no worker after 2 s" in err and "dask worker" in err
