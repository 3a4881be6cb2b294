"""Shared fixtures. Real data is read from ../shared/data relative to the repo root."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
MQ2008 = SHARED_DATA / "MQ2008"
LGB_EXAMPLE = SHARED_DATA / "LightGBM_lambdarank"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not available at {path}")
    return path


@pytest.fixture
def mq2008_dir() -> Path:
    """Folder with MQ2008's S1..S5.txt (skips the test when absent)."""
    return _need(MQ2008)


@pytest.fixture
def lgb_example_dir() -> Path:
    """Folder with LightGBM's lambdarank example (skips the test when absent)."""
    return _need(LGB_EXAMPLE)


def lgbm_eval_kwargs(X, y) -> dict:
    """One validation set for ``LGBMModel.fit``: ``eval_X``/``eval_y`` where LightGBM has them
    (4.7 deprecates ``eval_set``), else ``eval_set``."""
    import inspect

    import lightgbm as lgb

    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:
        return {"eval_X": (X,), "eval_y": (y,)}
    return {"eval_set": [(X, y)]}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


def random_ranking(rng: np.random.Generator, n_queries: int = 6, max_docs: int = 9,
                   n_labels: int = 4, tie_prob: float = 0.3):
    """Small random (scores, labels, group_ptr) with ties, single-doc and all-zero queries."""
    sizes = rng.integers(1, max_docs + 1, size=n_queries)
    sizes[0] = 1
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(group_ptr[-1])
    labels = rng.integers(0, n_labels, size=n).astype(np.float64)
    if n_queries > 1:
        labels[group_ptr[1]:group_ptr[2]] = 0.0  # an all-zero query
    scores = np.round(rng.normal(size=n), 1)  # rounding makes ties
    tie = rng.random(n) < tie_prob
    scores[tie] = 0.0
    return scores, labels, group_ptr


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
# compare_driver.py patches boostplug.compare.execution when imported: it only runs as a script.
collect_ignore = ["compare_driver.py"]
