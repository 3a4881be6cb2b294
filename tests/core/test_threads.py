"""One run's thread limit (boostplug._core.threads.run_limit): numba's count, the loaded OpenMP and BLAS
libraries' counts and the environment that libraries starting inside it read, all restored after it."""

from __future__ import annotations

import os

import numba
import pytest

from boostplug._core.threads import RUN_LIMIT_ENV, run_limit


def test_a_run_limit_bounds_every_pool_and_restores_them(monkeypatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("PJRT_NPROC", raising=False)
    numba_before = numba.get_num_threads()
    counts = {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}
    with run_limit(1):
        assert numba.get_num_threads() == 1
        assert [os.environ[name] for name in RUN_LIMIT_ENV] == ["1", "1"]
        assert {i["num_threads"] for i in threadpoolctl.threadpool_info()} <= {1}
    assert os.environ["OMP_NUM_THREADS"] == "7" and "PJRT_NPROC" not in os.environ
    assert numba.get_num_threads() == numba_before
    assert {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()} == counts
    with run_limit(None):  # no bound: nothing set
        assert "PJRT_NPROC" not in os.environ
