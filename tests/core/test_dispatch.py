"""The one serial/parallel policy (boostplug._core.dispatch) and the switch points of its callers."""

from __future__ import annotations

import importlib

import numba
import numpy as np
import pytest
from tests._helpers import random_ranking

from boostplug._core import dispatch, parallel_threshold
from boostplug._core import dcg
from boostplug.objectives import get


@numba.njit(cache=False, parallel=True)
def _row_sums(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = x[i].sum()


def test_work_and_threads_pick_the_kernel(monkeypatch) -> None:
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread: the parallel kernels never run")
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(2)
        assert dispatch.kernel_for(_row_sums, dispatch.PARALLEL_MIN_WORK) is _row_sums
        serial = dispatch.kernel_for(_row_sums, dispatch.PARALLEL_MIN_WORK - 1)
        assert serial is not _row_sums and not serial.targetoptions.get("parallel")
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0)
        assert dispatch.kernel_for(_row_sums, 0) is _row_sums
        numba.set_num_threads(1)  # one thread: always the serial twin
        assert dispatch.kernel_for(_row_sums, 10**15) is serial
    finally:
        numba.set_num_threads(previous)


def test_a_booster_round_counts_work_round_work_factor_times(monkeypatch) -> None:
    """Inside ``booster_round`` (each round of a booster's fit) a kernel goes parallel from
    ``PARALLEL_MIN_WORK / ROUND_WORK_FACTOR``; the scope is the calling thread's and ends with the round."""
    import threading

    from boostplug.boosters import MPBoost

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread: the parallel kernels never run")
    previous = numba.get_num_threads()
    low = -(-dispatch.PARALLEL_MIN_WORK // dispatch.ROUND_WORK_FACTOR)
    try:
        numba.set_num_threads(2)
        assert dispatch.kernel_for(_row_sums, low) is not _row_sums
        with dispatch.booster_round():
            assert dispatch.kernel_for(_row_sums, low) is _row_sums
            assert dispatch.kernel_for(_row_sums, low - 1) is not _row_sums
            other: list[object] = []
            t = threading.Thread(target=lambda: other.append(dispatch.kernel_for(_row_sums, low)))
            t.start()
            t.join()
            assert other[0] is not _row_sums                # another thread's kernels: not in the round
        assert dispatch.kernel_for(_row_sums, low) is not _row_sums
    finally:
        numba.set_num_threads(previous)

    factors: list[tuple[int, int]] = []
    real = dispatch.kernel_for

    def spy(kernel, work):
        factors.append((getattr(dispatch._scope, "factor", 1), work))
        return real(kernel, work)

    monkeypatch.setattr(dispatch, "kernel_for", spy)
    s, y, gp = random_ranking(np.random.default_rng(3), n_queries=4, max_docs=12)
    X = np.random.default_rng(4).normal(size=(y.shape[0], 3))
    MPBoost(n_rounds=3, pairwise="levels").fit(X, y, group=np.diff(gp))
    assert {f for f, _ in factors} == {dispatch.ROUND_WORK_FACTOR}    # its kernels all run in rounds
    assert getattr(dispatch._scope, "factor", 1) == 1


def test_serial_twin_is_the_same_code_compiled_once_under_its_own_name() -> None:
    twin = dispatch.serial_twin(_row_sums)
    assert dispatch.serial_twin(_row_sums) is twin
    assert twin.py_func.__qualname__ == _row_sums.py_func.__qualname__ + "_serial"
    assert twin.py_func.__code__ is _row_sums.py_func.__code__
    x = np.arange(12.0).reshape(4, 3)
    a, b = np.empty(4), np.empty(4)
    twin(x, a)
    _row_sums(x, b)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, [3.0, 12.0, 21.0, 30.0])


def test_callers_switch_where_they_did(monkeypatch) -> None:
    """Each family's work estimate keeps its measured switch point: objectives 100,000 documents
    (QBRank, MPBoost) or 5 million pairs (NDCG_Boost), metrics 20,000 documents."""
    assert parallel_threshold.DEFAULT_PARALLEL_MIN_WORK == 5_000_000
    from boostplug.objectives import mpboost, qbrank

    assert 100_000 * qbrank.DOC_WORK == 100_000 * mpboost.DOC_WORK == parallel_threshold.DEFAULT_PARALLEL_MIN_WORK
    assert 20_000 * dcg.RANK_DOC_WORK == parallel_threshold.DEFAULT_PARALLEL_MIN_WORK


@pytest.mark.parametrize("module_name, call", [
    ("qbrank", lambda s, y, gp: get("qbrank").prepare(y, gp, labeled="all").grad_hess(s)),
    ("mpboost", lambda s, y, gp: get("mpboost").prepare(y, gp).grad_hess(s)),
])
def test_objectives_pass_documents_times_doc_work(module_name, call, monkeypatch) -> None:
    module = importlib.import_module(f"boostplug.objectives.{module_name}")
    s, y, gp = random_ranking(np.random.default_rng(2), n_queries=5, max_docs=9)
    seen: list[int] = []

    def spy(kernel, work):
        seen.append(work)
        return dispatch.serial_twin(kernel)

    monkeypatch.setattr(dispatch, "kernel_for", spy)
    call(s, y, gp)
    assert seen and set(seen) == {s.shape[0] * module.DOC_WORK}
