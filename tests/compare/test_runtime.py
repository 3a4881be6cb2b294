"""The runtime of ``boostplug compare`` in real processes: signals keep the finished runs (while
training and while writing), a kill while the results move in loses no set, workers never outlive
the parent, and a read-only install imports and runs (numba's cache).

Every wait is on something the process under test produces (a line on stderr, a file a run
creates as it starts), never a sleep, and each is bounded."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests._helpers import can_mount_read_only

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "_compare_driver.py"
REPO = HERE.parents[1]
WAIT = 120.0  # seconds: a bound, far above what a busy 2-core machine needs

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/stat").exists(),
                                reason="reads /proc")


# ---- helpers -------------------------------------------------------------------------------------
class Driver:
    """``boostplug compare`` in a subprocess (tests/compare/_compare_driver.py), its stderr read by a thread."""

    def __init__(self, tmp_path: Path, args: list[str], block: str = "rb-c", pause: str = "",
                 hang_at_start: bool = False) -> None:
        self.sync = tmp_path / "sync"
        self.sync.mkdir(exist_ok=True)
        env = dict(os.environ, COMPARE_DRIVER_SYNC=str(self.sync), COMPARE_DRIVER_BLOCK=block,
                   COMPARE_DRIVER_PAUSE=pause, COMPARE_DRIVER_HANG_AT_START="1" if hang_at_start else "",
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        env.pop("BOOSTPLUG_DEBUG", None)
        self.proc = subprocess.Popen([sys.executable, str(DRIVER), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                                     start_new_session=True,  # our test runner's own signals stay ours
                                     preexec_fn=_default_signals)
        self.lines: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        self.out: list[str] = []
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=lambda: self.out.extend(self.proc.stdout), daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            self.lines.put(line)

    def wait_line(self, needle: str) -> str:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if needle in line:
                return line
        pytest.fail(f"no line with {needle!r} on stderr: {''.join(self.err)}")

    def wait_started(self, method: str) -> int:
        """The pid of the process running ``method`` once it has started."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            found = list(self.sync.glob(f"{method}.*"))
            if found:
                return int(found[0].name.rsplit(".", 1)[1])
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"{method} never started: {''.join(self.err)}")

    def __enter__(self) -> "Driver":
        return self

    def __exit__(self, *exc: object) -> None:
        """Leaving the ``with`` block: the command is killed if it still runs (a test that failed)."""
        if self.proc.poll() is None:
            self.proc.kill()

    def kill(self) -> None:
        """SIGKILL the command (nothing can be deferred) and wait for it to end."""
        self.proc.kill()
        self.proc.wait(timeout=WAIT)

    def finish(self) -> tuple[int, str]:
        """Exit code and stdout, once both pipes are read to their end (``err`` is then complete);
        fails (and kills) if the process does not end within the bound."""
        try:
            self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail("the command did not exit after the signal")
        for reader in self._readers:
            reader.join(timeout=WAIT)
        return self.proc.returncode, "".join(self.out)


def _default_signals() -> None:
    """A command started from a background job of a script inherits SIGINT ignored (and kept
    ignored, as it should): the tests start it as from a terminal."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _children(pid: int) -> list[int]:
    """Every live process whose parent is ``pid`` (from /proc)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited (its new parent may be slow to reap it)


def _assert_all_end(pids: list[int]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:  # do not leave them running on the machine
        os.kill(p, signal.SIGKILL)
    assert not left, f"processes outlived the compare command: {left}"


# ---- signals -------------------------------------------------------------------------------------
@linux_only
# each signal once and each --jobs mode more than once (every run trains in a worker process, so the
# serial and parallel paths differ only in how many workers are ended)
@pytest.mark.parametrize("sig,jobs", [(signal.SIGTERM, 1), (signal.SIGHUP, 2), (signal.SIGINT, 2)],
                         ids=["TERM-serial", "HUP-jobs2", "INT-jobs2"])
def test_a_signal_keeps_the_finished_runs_and_ends_the_workers(tmp_path: Path, sig: int, jobs: int) -> None:
    """regression finishes, rb-c never does: the signal arrives once regression's run is logged
    and rb-c's has started; the command writes regression's results and exits 128 + signum,
    and no process it started is left."""
    out = tmp_path / "out"
    with Driver(tmp_path, ["--methods", "regression,rb-c", "--rounds", "3", "--no-plots", "--jobs", str(jobs),
                           "--threads", "1", "--out", str(out)]) as d:
        d.wait_line("] regression fold 1: round")
        d.wait_started("rb-c")
        kids = _children(d.proc.pid)
        if jobs > 1:
            assert kids, "no worker process"
        d.proc.send_signal(sig)
        code, table = d.finish()
    _assert_all_end(kids)
    assert code == 128 + sig, "".join(d.err)
    assert "regression" in table and "rb-c" not in table
    payload = json.loads((out / "results.json").read_text())
    assert payload["interrupted"] is True
    assert [(r["method"], r["fold"]) for r in payload["results"]] == [("regression", 1)]
    assert payload["folds_completed"] == {"regression": [1], "rb-c": []}
    assert "Traceback" not in "".join(d.err)


@linux_only
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    """SIGKILL cannot be handled: the kernel (PR_SET_PDEATHSIG), else the workers' watch of their
    parent, ends them."""
    with Driver(tmp_path, ["--methods", "regression,rb-c", "--rounds", "3", "--no-plots", "--jobs", "2",
                           "--threads", "1"]) as d:
        d.wait_line("] regression fold 1: round")
        d.wait_started("rb-c")
        kids = _children(d.proc.pid)
        assert kids
        d.kill()
    _assert_all_end(kids)


def test_worker_init_ignores_the_terminal_signals_and_asks_to_die_with_the_parent(monkeypatch) -> None:
    """In this process (the handlers are restored): INT and HUP are left to the parent, and the
    worker dies with it; on Linux prctl(PR_SET_PDEATHSIG) succeeds."""
    from boostplug.compare import _worker_guard
    from boostplug.compare import execution

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP)}
    started = []
    monkeypatch.setattr(_worker_guard, "_ask_the_kernel", lambda: started.append(1) or True)
    monkeypatch.setattr(_worker_guard, "_watched", set())
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    try:
        execution._worker_init(os.getppid())
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    assert started == [1, "boostplug-parent-watch"]
    if sys.platform.startswith("linux"):
        # in a child, so that this test process does not get a death signal of its own
        code = ("import sys; from boostplug.compare._worker_guard import _ask_the_kernel; "
                "sys.exit(0 if _ask_the_kernel() else 1)")
        assert subprocess.run([sys.executable, "-c", code], timeout=WAIT).returncode == 0


@linux_only
def test_workers_still_starting_up_die_with_a_killed_parent(tmp_path: Path) -> None:
    """A spawned worker spends its first seconds importing, before any code of the pool runs in it;
    a parent SIGKILLed then had left such workers alive for seconds (here, where they hang in
    their startup: for ever). ``import boostplug.compare``, which the worker's entry points are in, ties
    them to the parent before its heavy imports."""
    with Driver(tmp_path, ["--methods", "regression,rb-c", "--rounds", "3", "--no-plots", "--jobs", "2",
                           "--threads", "1"], hang_at_start=True) as d:
        _wait_files(d, "starting.*", 1)  # one worker hangs in its startup, the other is on its way
        starting = _children(d.proc.pid)
        d.kill()
    _assert_all_end(starting)


def _wait_files(d: Driver, pattern: str, n: int) -> list[int]:
    """The pids of the first ``n`` files ``<name>.<pid>`` matching ``pattern`` in the sync folder."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = sorted(d.sync.glob(pattern))
        if len(found) >= n:
            return [int(p.name.rsplit(".", 1)[1]) for p in found[:n]]
        if d.proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"no {n} files {pattern}: {''.join(d.err)}")


def test_a_worker_guard_acts_only_for_the_parent_that_set_it(tmp_path: Path) -> None:
    """The variable reaches only processes started while a pool starts its workers, but another
    thread may start one meanwhile: a process that is not a multiprocessing child, or whose parent
    is another live process, goes on; a multiprocessing child whose parent has died exits."""
    from boostplug.compare._worker_guard import ENV

    code = "import os, boostplug.compare; print('alive', os.environ.get({!r}))".format(ENV)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    for parent in (os.getpid(), 1):  # the parent of this child is this process, not the named one
        done = subprocess.run([sys.executable, "-c", code], env={**env, ENV: str(parent)}, capture_output=True,
                              text=True, timeout=WAIT)
        assert done.stdout == "alive None\n", done.stderr  # and the variable is gone for its own children
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait(timeout=WAIT)
    gone = ended.pid  # a process that has exited
    as_a_worker = code + "\n"  # what multiprocessing starts: python -c ... --multiprocessing-fork
    done = subprocess.run([sys.executable, "-c", as_a_worker, "--multiprocessing-fork"], env={**env, ENV: str(1)},
                          capture_output=True, text=True, timeout=WAIT)  # pid 1 lives, and is not its parent
    assert done.returncode == 0 and done.stdout == "alive None\n", done.stderr
    done = subprocess.run([sys.executable, "-c", as_a_worker, "--multiprocessing-fork"], env={**env, ENV: str(gone)},
                          capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 1 and done.stdout == "", done.stderr


# ---- signals and kills while the results are written ---------------------------------------------
def _go(d: Driver) -> None:
    (d.sync / "go").touch()


@linux_only
@pytest.mark.parametrize("sig,pause,plots", [(signal.SIGTERM, "write", False), (signal.SIGINT, "write", True),
                                             (signal.SIGHUP, "last-move:3", False)],
                         ids=["TERM-writing", "INT-writing-plots", "HUP-moving-in"])
def test_a_signal_while_writing_keeps_every_finished_run(tmp_path: Path, monkeypatch, sig: int, pause: str,
                                                         plots: bool) -> None:
    """Training is over and the table printed; the signal arrives while the files are written (or
    moved into --out). It had cut the writing short: exit 128 + signum and an empty --out, so no
    --resume. Now the writing finishes first, then the exit is 128 + signum, and --resume finds
    every run done."""
    from boostplug.cli import main
    from boostplug.compare import execution

    out = tmp_path / "out"
    argv = ["--methods", "regression", "--rounds", "3", "--no-progress", "--out", str(out),
            *([] if plots else ["--no-plots"])]
    with Driver(tmp_path, argv, block="", pause=pause) as d:
        _wait_files(d, "paused.*", 1)
        d.proc.send_signal(sig)
        _go(d)
        code, table = d.finish()
    assert code == 128 + sig, "".join(d.err)
    assert "regression" in table and "Traceback" not in "".join(d.err)
    assert f"{signal.Signals(sig).name} arrived after training; the results were written first" in "".join(d.err)
    payload = json.loads((out / "results.json").read_text())
    assert [(r["method"], r["fold"]) for r in payload["results"]] == [("regression", 1)]
    assert (out / "curves.png").is_file() == plots
    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained a finished run again"))
    assert main(["compare", *argv, "--resume"]) == 0


@linux_only
def test_a_run_killed_while_moving_its_results_in_is_put_right_by_the_next(tmp_path: Path, capsys) -> None:
    """SIGKILL (nothing can be deferred) in the middle of moving the new set over an earlier one:
    the next run on the folder finds the earlier run's complete set, byte for byte, says so, and
    resumes it."""
    from boostplug.cli import main

    out = tmp_path / "out"
    argv = ["--methods", "regression", "--rounds", "3", "--no-plots", "--no-progress", "--out", str(out)]
    assert main(["compare", *argv]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # 5 files aside, their folder renamed, then the new files: killed before the 9th rename
    with Driver(tmp_path, [*argv, "--overwrite", "--seed", "1"], block="", pause="move:9") as d:
        _wait_files(d, "paused.*", 1)
        assert not (out / "results.json").exists()  # a mixture at this moment
        d.kill()
    capsys.readouterr()
    assert main(["compare", *argv, "--resume"]) == 0
    assert ("a run killed while moving its results in had left them half moved; the earlier run's complete set "
            "is back") in capsys.readouterr().err
    payload = json.loads((out / "results.json").read_text())
    assert payload["settings"]["seed"] == 0 and len(payload["provenance"]["earlier_runs"]) == 1
    assert {p.name for p in out.iterdir()} == set(before)


# ---- numba's cache on a read-only install ----------------------------------------------------------
def test_kernel_folders_hold_every_cached_kernel() -> None:
    from boostplug import _numba_cache

    package = Path(_numba_cache.__file__).resolve().parent
    # the package's modules; not the pair loops' generated copies, which numba caches beside themselves
    folders = {p.parent for p in package.rglob("*.py")
               if "__pycache__" not in p.relative_to(package).parts and "cache=True" in p.read_text()}
    assert folders and folders <= set(_numba_cache.KERNEL_FOLDERS)


def test_cache_decision(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    from boostplug import _numba_cache

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    temp = tmp_path / f"boostplug-numba-cache-{os.getuid()}"
    assert _numba_cache.decide(lambda p: True) == ("numba", None)
    # one kernel folder read-only, the user cache writable: numba uses the latter for that folder
    user = _numba_cache._user_cache_dir()
    assert _numba_cache.decide(lambda p: p == user or p.parent != _numba_cache.KERNEL_FOLDERS[1]) == ("numba", None)
    # one kernel folder read-only and no user cache: the temporary folder, created private
    assert _numba_cache.decide(lambda p: p.parent != _numba_cache.KERNEL_FOLDERS[1] and p != user) == ("temp",
                                                                                                       str(temp))
    assert temp.is_dir() and temp.stat().st_mode & 0o777 == 0o700
    assert _numba_cache.decide(lambda p: p == temp) == ("temp", str(temp))
    assert _numba_cache.decide(lambda p: False) == ("off", None)
    # the user's NUMBA_CACHE_DIR when it can be written, else as if unset
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert _numba_cache.decide(lambda p: p == tmp_path / "mine") == ("numba", None)
    assert _numba_cache.decide(lambda p: p == temp) == ("temp", str(temp))


@pytest.mark.skipif(not can_mount_read_only(), reason="needs root and unshare -m (read-only bind mounts)")
@pytest.mark.parametrize("temp_writable", [True, False], ids=["temp-folder", "no-cache"])
def test_a_read_only_install_with_a_read_only_home_imports_and_runs(tmp_path: Path, temp_writable: bool) -> None:
    """A copy of the package and HOME bind-mounted read-only in a private mount namespace (as
    root, chmod would not stop writes): numba found no locator and ``import boostplug.metrics``
    failed. Now: one warning, and the metric computes; cached in the temporary folder, or (that
    read-only too) not at all."""
    import shutil

    from boostplug import _numba_cache

    pkg, home, tmp = tmp_path / "site", tmp_path / "home", tmp_path / "tmp"
    for d in (pkg, home, tmp):
        d.mkdir()
    shutil.copytree(Path(_numba_cache.__file__).resolve().parent, pkg / "boostplug",
                    ignore=shutil.ignore_patterns("__pycache__"))
    temp_dir = tmp if temp_writable else home  # tempfile.tempdir: where the fallback folder goes
    code = ("import tempfile, warnings; tempfile.tempdir = {!r}; warnings.simplefilter('always')\n"
            "import numpy as np, boostplug, boostplug.metrics as m\n"
            "assert boostplug.__file__.startswith({!r}), boostplug.__file__\n"
            "print(m.ndcg(np.array([1.0, 2.0, 0.5]), np.array([0.0, 1.0, 2.0]), np.array([0, 3])))\n"
            ).format(str(temp_dir), str(pkg))
    script = (f"mount --bind {pkg} {pkg} && mount -o remount,bind,ro {pkg} && "
              f"mount --bind {home} {home} && mount -o remount,bind,ro {home} && "
              f"cd {home} && exec {sys.executable} -c \"$CODE\"")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(HOME=str(home), PYTHONPATH=str(pkg), CODE=code)
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert 0.0 < float(done.stdout.split()[-1]) < 1.0
    warned = [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1, done.stderr
    cached = list(tmp.rglob("*.nbi"))
    if temp_writable:
        assert f"cached in {tmp / f'boostplug-numba-cache-{os.getuid()}'}" in warned[0]
        assert cached  # the kernels did go to the fallback folder
    else:
        assert "compiled in memory, again in every process" in warned[0] and not cached


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can use folders of mode 0666")
def test_command_1_under_folders_of_mode_0666_is_quiet_and_caches(tmp_path: Path) -> None:
    """Home and temporary folder of mode 0666 (write without search for group and others: nobody else can
    create, remove or rename anything in them), the package installed inside the home: every kernel folder
    was refused as "writable by others", a warning each, and nothing cached. Now: no warning, and the
    kernels are cached beside the package."""
    import shutil

    from boostplug import _numba_cache

    home, tmp = tmp_path / "home", tmp_path / "tmp"
    site = home / "site"
    site.mkdir(parents=True)
    tmp.mkdir()
    shutil.copytree(Path(_numba_cache.__file__).resolve().parent, site / "boostplug",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in (home, tmp):
        folder.chmod(0o666)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(site))
    done = subprocess.run([sys.executable, "-W", "always", "-m", "boostplug.cli", "compare", "--rounds", "3",
                           "--no-plots", "--no-progress"], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stderr.splitlines() if "RuntimeWarning" in line]) <= 1, done.stderr
    assert list((site / "boostplug").rglob("__pycache__/*.nbi")), "no kernel cached beside the package"


# ---- a signal inside a compiled kernel that never returns -------------------------------------------
_SPIN = '''
import os
from pathlib import Path

from boostplug import objectives
from boostplug.objectives import PairwiseLoss


class Spin(PairwiseLoss):
    name = "spin"
    summary = "a pair gradient that never returns once the scores differ (a test of signals)"
    params = {}

    @staticmethod
    def pair_loss(d):
        return max(0.0, 1.0 - d)

    @staticmethod
    def pair_grad(d):
        t, k = abs(d), 0.0
        while t > 0.0:  # never ends once t > 0 (t only grows); the compiler cannot know d
            k += 1.0
            t += k
        return -1.0 - k

    @staticmethod
    def pair_hess(d):
        return 1.0

    def _grad_hess(self, scores):
        if (scores != scores[0]).any():  # the second round: this call enters the loop
            Path(os.environ["SPIN_SYNC"], f"spinning.{os.getpid()}").touch()
        return super()._grad_hess(scores)


objectives.register(Spin)
'''


@linux_only
@pytest.mark.parametrize("sig,jobs", [(signal.SIGTERM, 1), (signal.SIGINT, 2)], ids=["TERM-jobs1", "INT-jobs2"])
def test_a_signal_ends_a_compiled_kernel_that_never_returns(tmp_path: Path, sig: int, jobs: int) -> None:
    """A pair function of an --import'ed objective loops for ever in numba's compiled code, where
    no Python signal handler runs: with --jobs 1 the command trained in its own process and only
    SIGKILL ended it. Now every --jobs trains in workers: the command exits 128 + signum within
    5 s, regression's finished run written, and leaves no process behind."""
    (tmp_path / "spin.py").write_text(_SPIN)
    sync = tmp_path / "sync"
    sync.mkdir()
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "BOOSTPLUG_DEBUG"}
    env.update(SPIN_SYNC=str(sync), PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    argv = [sys.executable, "-m", "boostplug.cli", "compare", "--import", "spin.py", "--methods", "regression,spin",
            "--rounds", "5", "--no-plots", "--jobs", str(jobs), "--threads", "1", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            start_new_session=True, preexec_fn=_default_signals)
    try:
        deadline = time.monotonic() + WAIT
        while not list(sync.glob("spinning.*")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None and list(sync.glob("spinning.*")), proc.communicate()[1]
        kids = _children(proc.pid)
        sent = time.monotonic()
        proc.send_signal(sig)
        try:
            table, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{signal.Signals(sig).name}: the command still runs 5 s after it")
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    _assert_all_end(kids)
    assert proc.returncode == 128 + sig, err
    assert took < 5 and "regression" in table and "Traceback" not in err, (took, err)
    payload = json.loads((out / "results.json").read_text())
    assert payload["interrupted"] is True and payload["folds_completed"] == {"regression": [1], "spin": []}
