"""Shared fixtures. Real data is read from ../shared/data relative to the repo root (tests/_helpers.py
says where); the helpers the test modules import are in tests/_helpers.py."""

from __future__ import annotations

import os

# OpenMP threads (LightGBM's, XGBoost's, scikit-learn's) that wait for the others at a barrier sleep
# instead of spinning: set before any of them loads, inherited by the processes the tests start. The
# results are the same; on a machine busier than its cores a spinning thread burns the time slice
# the thread it waits for needs (three 10-round LGBMRanker fits on the example data, whose n_jobs
# default is every physical core whatever OMP_NUM_THREADS says: 16.7 s spinning, 5.2 s sleeping, at
# a load average of 10 on 2 cores). A value set in the environment is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The kernels' serial/parallel switch at its default, whatever `boostplug calibrate` stored for this
# machine (the same results either way; the tests that pin the switch expect the default).
# tests/core/test_calibration.py checks that this is calibration.DEFAULT_PARALLEL_MIN_WORK.
os.environ.setdefault("BOOSTPLUG_PARALLEL_MIN_WORK", "5000000")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tests._helpers import LGB_EXAMPLE, MQ2008, OHSUMED, need_data  # noqa: E402


@pytest.fixture
def mq2008_dir() -> Path:
    """Folder with MQ2008's S1..S5.txt (skips the test when absent)."""
    return need_data(MQ2008)


@pytest.fixture
def ohsumed_dir() -> Path:
    """Folder with OHSUMED's (LETOR 3.0) S1..S5.txt (skips the test when absent)."""
    return need_data(OHSUMED)


@pytest.fixture
def lgb_example_dir() -> Path:
    """Folder with LightGBM's lambdarank example (skips the test when absent)."""
    return need_data(LGB_EXAMPLE)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


@pytest.fixture
def letor_file(tmp_path: Path) -> Path:
    """A small synthetic LETOR file (15 queries of 4-8 documents, 4 features) for the command line."""
    from boostplug.data import make_ranking, write_letor

    p = tmp_path / "data.txt"
    write_letor(p, make_ranking(n_queries=15, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0))
    return p


# -- a run in which no test passed is not a pass ------------------------------------------------------
# pytest exits 0 when every collected test was skipped (e.g. only real-data tests selected and
# ../shared/data absent); CI must not count that as green, so such a run exits 5, the code pytest
# uses when nothing was collected.
_PASSED = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _PASSED
    if report.when == "call" and report.passed:
        _PASSED += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and _PASSED == 0 and session.testscollected > 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("no test passed (all skipped): exit code 5", red=True)


# -- the docstring examples (--doctest-modules) import every module collected here -----------------
# compare/_compare_driver.py patches boostplug.compare.execution when imported: it only runs as a script.
collect_ignore = ["compare/_compare_driver.py"]
