"""A run's warnings are kept with it (``info["warnings"]``, with the ``--tune`` trial that raised them) on
every path a run takes: this process, the ``--jobs`` worker processes (a Dask worker's: tests/compare/
test_cluster.py); runs in two threads at once keep each their own, and the process's warning state is
back after them."""

from __future__ import annotations

import threading
import warnings

import pytest

from boostplug import compare
from boostplug.compare import run_warnings
from boostplug.compare.data import file_folds
from boostplug.data import make_ranking

#: Its exact Hessians go negative: the floor raises most of them, and the objective warns once per run.
WARNS = "ndcg_boost[hessian=exact]"


@pytest.fixture(scope="module")
def folds():
    data = make_ranking(n_queries=15, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0)
    return list(enumerate(file_folds(data, 3, folds=[0, 1])))


def _kept(results) -> dict:
    return {(r.method, r.fold): r.info.get("warnings", []) for r in results}


@pytest.mark.parametrize("where", [{"jobs": 1}, {"jobs": 2}])
def test_a_runs_warnings_are_kept_with_it_here_and_in_worker_processes(folds, where: dict) -> None:
    results = compare.run(["lambdarank", WARNS], folds, rounds=3, threads=1, **where)
    kept = _kept(results)
    assert not results.failures and kept[("lambdarank", 0)] == kept[("lambdarank", 1)] == []
    for fold in (0, 1):
        (entry,) = kept[(WARNS, fold)]
        assert entry["trial"] is None, entry
        assert entry["warning"].startswith("HessianFloorWarning: ndcg_boost: the Hessian floor raised "), entry


def test_a_tuned_runs_warnings_name_their_trial(folds) -> None:
    pytest.importorskip("optuna")
    results = compare.run([WARNS], folds[:1], rounds=3, threads=1, tune=2)
    trials = [w["trial"] for w in _kept(results)[(WARNS, 0)]]
    assert trials == sorted(set(trials)) and trials[0] == 0, trials


@pytest.mark.parametrize("attempt", range(3))
def test_two_runs_in_two_threads_keep_each_their_own(attempt: int) -> None:
    """A Dask worker of several threads runs several runs at once: each keeps the warnings of its thread; a
    thread in no run warns as before (here into pytest.warns), and the warning state is back after."""
    before, filters = warnings.showwarning, list(warnings.filters)
    both, kept = threading.Barrier(3), {}

    def one(k: int) -> None:
        with run_warnings.kept() as caught:
            both.wait()
            warnings.warn(f"run {k}", UserWarning)
            both.wait()
        kept[k] = caught

    threads = [threading.Thread(target=one, args=(k,)) for k in range(2)]
    with pytest.warns(UserWarning, match="^outside$") as outside:
        for t in threads:
            t.start()
        both.wait()
        warnings.warn("outside", UserWarning)
        both.wait()
        for t in threads:
            t.join(timeout=30)
    assert kept == {k: [{"warning": f"UserWarning: run {k}", "trial": None}] for k in range(2)}
    assert [str(w.message) for w in outside] == ["outside"]
    assert warnings.showwarning is before and warnings.filters == filters
