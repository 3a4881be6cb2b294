"""The serial/parallel switch calibrated per machine: the arithmetic, the cache file, the environment
variable, what ``boostplug._core.dispatch`` loads at import, and ``boostplug calibrate``."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest

from boostplug._core import calibration, dispatch
from boostplug._core import parallel_threshold as pt
from boostplug._core.threads import limit_threads

#: What a process without a setting or a calibration runs at: the default, or serially when it may
#: run on one CPU only (as this one may, on a one-CPU machine; the children below inherit its CPUs).
FALLBACK = (pt.NEVER, "one-CPU") if pt.available_cpus() < 2 else (pt.DEFAULT_PARALLEL_MIN_WORK, "default")

def _entry(threshold: int, key: str | None = None) -> calibration.Calibration:
    return calibration.Calibration(key or pt.machine_key(), 2, 1e-6, 5e-9, 1.9, 430.0, threshold)


def test_the_suite_runs_at_the_default_threshold() -> None:
    assert os.environ["BOOSTPLUG_PARALLEL_MIN_WORK"] == str(pt.DEFAULT_PARALLEL_MIN_WORK)   # tests/conftest.py
    assert dispatch.PARALLEL_MIN_WORK == pt.DEFAULT_PARALLEL_MIN_WORK


def test_crossover_is_where_the_start_up_equals_the_time_saved() -> None:
    start, u, s = 2e-6, 4e-9, 2.0
    w = calibration.crossover(start, u, s)
    assert w == pytest.approx(1000.0, rel=1e-12)
    assert start + w * u / s == pytest.approx(w * u, rel=1e-12)     # the serial and parallel times meet
    assert calibration.crossover(-1e-7, u, s) == 0.0          # no start-up cost: parallel pays at once
    assert calibration.crossover(start, u, calibration.MIN_SPEEDUP * 0.999) is None  # a second thread adds too little
    assert calibration.crossover(start, u, math.nan) is None


@pytest.mark.parametrize("policy", ["default", "passive"])
def test_threshold_scales_the_default_by_powers_of_two(policy: str) -> None:
    ref = calibration.REFERENCE.crossover[policy]
    d = pt.DEFAULT_PARALLEL_MIN_WORK
    assert calibration.threshold_from(ref, policy) == d
    assert calibration.threshold_from(ref * 1.3, policy) == d          # the probe's noise leaves it in place
    assert calibration.threshold_from(ref * 0.75, policy) == d
    assert calibration.threshold_from(ref * 2.2, policy) == 2 * d
    assert calibration.threshold_from(ref / 3.5, policy) == d // 4
    lo, hi = calibration.SCALE_LIMITS
    assert calibration.threshold_from(ref * 1e6, policy) == int(d * hi)
    assert calibration.threshold_from(0.0, policy) == int(d * lo)
    assert calibration.threshold_from(None, policy) == pt.NEVER


def test_parse_threshold() -> None:
    assert pt.parse_threshold("123") == 123
    assert pt.parse_threshold(" 5_000_000 ") == 5_000_000
    assert pt.parse_threshold("Never") == pt.NEVER
    assert pt.parse_threshold("0") == 0
    for bad in ("-1", "1e6", "fast", ""):
        with pytest.raises(ValueError, match="BOOSTPLUG_PARALLEL_MIN_WORK"):
            pt.parse_threshold(bad)


def test_store_keeps_other_machines_and_reads_back_this_one(tmp_path, monkeypatch) -> None:
    path = tmp_path / "sub" / "dispatch.json"
    monkeypatch.delenv(pt.ENV_VAR, raising=False)
    assert pt.stored_threshold(path) == FALLBACK   # no file
    calibration.store(_entry(123, key="othercpu|cpus=64|threads=64|wait=default"), path)
    assert pt.stored_threshold(path) == FALLBACK   # another machine's
    calibration.store(_entry(456), path)
    assert pt.stored_threshold(path) == (456, str(path))
    calibration.store(_entry(789), path)                                                        # replaced, not added
    entries = json.loads(path.read_text())["entries"]
    assert sorted(entries) == sorted(["othercpu|cpus=64|threads=64|wait=default", pt.machine_key()])
    assert entries[pt.machine_key()]["parallel_min_work"] == 789
    monkeypatch.setenv(pt.ENV_VAR, "never")                                            # the variable wins
    assert pt.stored_threshold(path) == (pt.NEVER, pt.ENV_VAR)


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"entries": 3}', '{"entries": {"%s": {"parallel_min_work": -5}}}',
                                  '{"entries": {"%s": {"parallel_min_work": true}}}', '{"entries": {"%s": 7}}'])
def test_a_broken_cache_file_gives_the_default(tmp_path, monkeypatch, text: str) -> None:
    monkeypatch.delenv(pt.ENV_VAR, raising=False)
    path = tmp_path / "dispatch.json"
    path.write_text(text.replace("%s", pt.machine_key()))
    unusable = "%s" not in text  # not a table of entries: said in one warning (a bad entry is just not used)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert pt.stored_threshold(path) == FALLBACK
    assert [f"ignored {path}" in str(w.message) for w in got] == ([True] if unusable else [])
    calibration.store(_entry(99), path)                  # and storing over it works
    assert pt.stored_threshold(path) == (99, str(path))


def test_the_key_names_the_cpu_threads_and_wait_policy(monkeypatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    key = pt.machine_key(threads=3)
    assert key == f"{pt.cpu_name()}|cpus={pt.available_cpus()}|threads=3|wait=passive"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert pt.machine_key(threads=3).endswith("|wait=default")
    monkeypatch.delenv("OMP_WAIT_POLICY")
    assert pt.machine_key(threads=3).endswith("|wait=default")


def test_calibrate_measures_this_machine() -> None:
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread")
    with limit_threads(2):
        c = calibration.calibrate(repeat=2)
    assert c.key == pt.machine_key()
    assert c.threads == 2
    assert c.serial_per_unit_s > 0 and c.speedup > 0 and math.isfinite(c.start_s)
    assert c.crossover == calibration.crossover(c.start_s, c.serial_per_unit_s, c.speedup)
    assert c.parallel_min_work == calibration.threshold_from(c.crossover)


def test_calibrate_needs_two_threads() -> None:
    with limit_threads(1), pytest.raises(ValueError, match="2 or more numba threads, got 1"):
        calibration.calibrate(repeat=1)


def test_probe_serial_and_parallel_agree() -> None:
    rng = np.random.default_rng(3)
    s, y = rng.standard_normal(200), rng.integers(0, 3, 200).astype(np.float64)
    gp = np.array([0, 5, 5, 80, 200], dtype=np.int64)
    a, b = np.empty(4), np.empty(4)
    calibration._probe(s, y, gp, a)
    dispatch.serial_twin(calibration._probe)(s, y, gp, b)
    want = [sum(1.0 / (1.0 + math.exp((s[i] - s[j]) if y[i] > y[j] else (s[j] - s[i])))
                for i in range(lo, hi) for j in range(i + 1, hi) if y[i] != y[j])
            for lo, hi in zip(gp[:-1], gp[1:])]
    np.testing.assert_allclose(a, want, rtol=1e-12)
    np.testing.assert_array_equal(a, b)


def _import_threshold(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "from boostplug._core import dispatch; print(dispatch.PARALLEL_MIN_WORK, dispatch.THRESHOLD_SOURCE)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_dispatch_loads_the_stored_threshold_at_import(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != pt.ENV_VAR}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = _import_threshold(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(FALLBACK[0]), FALLBACK[1]]
    # this machine's entry, under the child's wait policy and thread count (the same as this process's)
    path = tmp_path / "boostplug" / "dispatch.json"
    calibration.store(_entry(1234), path)
    out = _import_threshold(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1234", str(path)]
    env[pt.ENV_VAR] = "77"
    assert _import_threshold(env).stdout.split() == ["77", pt.ENV_VAR]
    env[pt.ENV_VAR] = "lots"
    out = _import_threshold(env)
    assert out.returncode != 0 and "BOOSTPLUG_PARALLEL_MIN_WORK='lots'" in out.stderr


def test_the_command_measures_each_wait_policy_and_stores_both(tmp_path) -> None:
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread")
    path = tmp_path / "d.json"
    run = subprocess.run([sys.executable, "-m", "boostplug.cli", "calibrate", "--repeat", "1", "--file", str(path)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    entries = json.loads(path.read_text())["entries"]
    assert sorted(k.rsplit("|wait=", 1)[1] for k in entries) == ["default", "passive"]
    for key, e in entries.items():
        assert f"machine               {key}" in run.stdout
        assert e["parallel_min_work"] == calibration.threshold_from(e["crossover"], key.rsplit("wait=", 1)[1])
    run = subprocess.run([sys.executable, "-m", "boostplug.cli", "calibrate", "--repeat", "0"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 2 and "--repeat must be 1 or more, got 0" in run.stderr


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_two_threads_on_one_cpu_run_every_kernel_serially() -> None:
    code = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
            "from boostplug._core import calibration, parallel_threshold as t; r = calibration.calibrate(repeat=3); "
            "print(r.speedup, r.parallel_min_work == t.NEVER); from boostplug.cli.calibrate import describe; "
            "print(describe(r).splitlines()[-2])")
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    speedup, never = run.stdout.splitlines()[0].split()
    # whatever the timings say (other processes on that CPU can make the serial calls look slower)
    assert never == "True", speedup
    assert run.stdout.splitlines()[1].endswith("never (one CPU)"), run.stdout


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_a_process_on_one_cpu_runs_every_kernel_serially() -> None:
    """Pinned to one CPU (``taskset``, a container's CPU set) with numba's threads still 2 (numba counts
    every CPU of the machine): without the rule, large kernels ran two threads in turns on one CPU."""
    code = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
            "from boostplug._core import dispatch, parallel_threshold as t; "
            "print(dispatch.PARALLEL_MIN_WORK == t.NEVER, dispatch.THRESHOLD_SOURCE)")
    env = {k: v for k, v in os.environ.items() if k != pt.ENV_VAR}
    env["NUMBA_NUM_THREADS"] = "2"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True one-CPU", run.stdout
    # the user's own setting still wins
    env[pt.ENV_VAR] = "1000"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip() == f"False {pt.ENV_VAR}", run.stdout + run.stderr


# ---- a cache file that cannot be used: ignored with one warning, never an error or a hang ------------------
def test_a_fifo_as_the_cache_file_does_not_hang_the_import(tmp_path) -> None:
    """A FIFO at ``<user cache>/boostplug/dispatch.json``: the import waited for ever for a writer."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "boostplug" / "dispatch.json"
    path.parent.mkdir()
    os.mkfifo(path)
    env = {k: v for k, v in os.environ.items() if k != pt.ENV_VAR}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    code = ("import warnings; warnings.simplefilter('always')\n"
            "from boostplug._core import dispatch; print(dispatch.PARALLEL_MIN_WORK, dispatch.THRESHOLD_SOURCE)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(FALLBACK[0]), FALLBACK[1]]
    warned = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and f"ignored {path} (it is a FIFO, not a regular file)" in warned[0], out.stderr


def test_a_link_to_an_endless_device_is_not_read(tmp_path, monkeypatch) -> None:
    """A link to /dev/zero: the whole "file" was read, a ``MemoryError``."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    monkeypatch.delenv(pt.ENV_VAR, raising=False)
    path = tmp_path / "dispatch.json"
    path.symlink_to("/dev/zero")
    with pytest.warns(RuntimeWarning, match=r"ignored .*dispatch\.json \(it is a character device, not a regular"):
        assert pt.stored_threshold(path) == FALLBACK


def test_deeply_nested_json_is_ignored(tmp_path, monkeypatch) -> None:
    """200,000 ``[``: ``json.loads`` raised ``RecursionError``, which the reader did not catch."""
    monkeypatch.delenv(pt.ENV_VAR, raising=False)
    path = tmp_path / "dispatch.json"
    path.write_text("[" * 200_000)
    with pytest.warns(RuntimeWarning, match=r"ignored .*dispatch\.json \(RecursionError") as got:
        assert pt.stored_threshold(path) == FALLBACK
    assert len(got) == 1
    calibration.store(_entry(99), path)                  # storing over it works
    assert pt.stored_threshold(path) == (99, str(path))


def test_a_file_over_the_size_limit_is_not_read(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(pt.ENV_VAR, raising=False)
    path = tmp_path / "dispatch.json"
    path.write_text(json.dumps({"entries": {pt.machine_key(): {"parallel_min_work": 7}}, "pad": "x" * pt.MAX_CACHE_FILE_BYTES}))
    with pytest.warns(RuntimeWarning, match=f"larger than {pt.MAX_CACHE_FILE_BYTES:,} bytes"):
        assert pt.stored_threshold(path) == FALLBACK
