"""boostplug's kernels run on the thread count the training hands them: LightGBM's ``num_threads``
(and its aliases, in ``lgb.train`` and ``LGBMRanker(n_jobs=...)``), XGBoost's ``nthread``
(``XGBRanker(n_jobs=...)``, ``boostplug.xgboost.cv``, compare, the distributed workers), else
``threads=``, else numba's own count (a plain ``xgb.train`` or ``lgb.LGBMRanker``, which hand the
objective no count); the caller's own numba setting is restored after each round. Nothing is read
from the call stack anywhere in the package (:func:`test_no_stack_frame_is_read_in_the_package`)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from boostplug import lightgbm as bpl
from boostplug import objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.frameworks._bound_objective import FROM_FRAMEWORK
from boostplug.objectives import Hessian, Loss

pytestmark = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")

NAME = "threadprobe"
SEEN: list[int] = []


class ThreadProbe(Loss):
    """Squared error that records how many numba threads its kernels could use."""

    name = NAME
    summary = "squared error recording numba's thread count (test objective)"
    params: dict = {}
    hessians = {"exact": Hessian("exact", "1 per document")}

    def _loss(self, scores: np.ndarray) -> float:
        return float(0.5 * np.sum((scores - self.labels) ** 2))

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        SEEN.append(numba.get_num_threads())
        return scores - self.labels, np.ones_like(scores)


@pytest.fixture(autouse=True)
def probe():
    objectives.register(ThreadProbe)
    SEEN.clear()
    outer = numba.get_num_threads()  # whatever an earlier test left
    numba.set_num_threads(ALL)
    yield
    objectives.unregister(NAME)
    try:
        assert numba.get_num_threads() == ALL  # restored after every round
    finally:
        numba.set_num_threads(outer)


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=20, docs_per_query=(3, 8), n_features=4, n_informative=2, seed=0)


ALL = numba.config.NUMBA_NUM_THREADS


@pytest.mark.parametrize("params, want", [({"num_threads": 1}, 1), ({"nthread": 1}, 1), ({"n_jobs": 1}, 1),
                                          ({"num_threads": 0}, ALL), ({}, ALL)])
def test_lgb_train(data, params, want) -> None:
    import lightgbm as lgb

    lgb.train({"objective": bpl.objective(NAME), "verbose": -1, **params},
              bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), num_boost_round=3)
    assert SEEN == [want] * 3


@pytest.mark.parametrize("n_jobs, want", [(1, 1), (None, ALL)])
def test_lgbm_ranker(data, n_jobs, want) -> None:
    bpl.LGBMRanker(objective=NAME, n_estimators=3, n_jobs=n_jobs, verbose=-1).fit(data.X, data.y, qid=data.qid)
    assert SEEN == [want] * 3


@pytest.mark.parametrize("n_jobs, want", [(1, 1), (None, ALL)])
def test_xgb_ranker(data, n_jobs, want) -> None:
    bpx.XGBRanker(objective=NAME, n_estimators=3, n_jobs=n_jobs).fit(data.X, data.y, qid=data.qid)
    assert SEEN == [want] * 3


def test_a_callers_own_limit_is_kept_when_the_framework_sets_none(data) -> None:
    import lightgbm as lgb

    numba.set_num_threads(1)
    try:
        lgb.train({"objective": bpl.objective(NAME), "verbose": -1},
                  bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), num_boost_round=2)
    finally:
        numba.set_num_threads(ALL)
    assert SEEN == [1, 1]


# ---- where the framework hands the objective no count: numba's own, unless threads= --------------------------
@pytest.mark.parametrize("params", [{"nthread": 1}, {"nthread": 0}, {}])
def test_a_plain_xgb_train_runs_on_numbas_count_unless_threads_given(data, params) -> None:
    """XGBoost calls ``obj(predt, dtrain)``: nothing there says the Booster's ``nthread``. Before,
    the objective read it from the Booster up the call stack."""
    import xgboost as xgb

    dtrain = bpx.dmatrix(data.X, data.y, qid=data.qid)
    xgb.train(bpx.params(**params), dtrain, num_boost_round=2, obj=bpx.objective(NAME))
    given = bpx.objective(NAME, threads=1)
    xgb.train(bpx.params(**params), dtrain, num_boost_round=2, obj=lambda p, d: given(p, d))  # wrapped: the same
    assert SEEN == [ALL, ALL, 1, 1]


def test_a_plain_lgbm_ranker_runs_on_numbas_count_unless_threads_given(data) -> None:
    """LightGBM's ranker calls ``func(y, p, w, g)``: arrays only. Before, the objective read the
    Dataset its wrapper holds up the call stack."""
    import lightgbm as lgb

    for obj in (bpl.sklearn_objective(NAME), bpl.sklearn_objective(NAME, threads=1)):
        lgb.LGBMRanker(objective=obj, n_estimators=2, n_jobs=1, verbose=-1, min_child_samples=2).fit(
            data.X, data.y, group=np.diff(data.group_ptr))
    assert SEEN == [ALL, ALL, 1, 1]


def test_threads_given_explicitly_win(data) -> None:
    import lightgbm as lgb

    lgb.train({"objective": bpl.objective(NAME, threads=1), "verbose": -1, "num_threads": 2},
              bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), num_boost_round=2)
    assert SEEN == [1] * 2
    with pytest.raises(ValueError, match=r"threads must be a positive integer or None, got 0"):
        bpx.objective(NAME, threads=0)


def test_a_call_outside_any_training_uses_numbas_count_without_a_warning(data) -> None:
    import pickle
    import warnings

    o = bpx.objective(NAME)
    dtrain = bpx.dmatrix(data.X, data.y, qid=data.qid)
    preds = np.zeros(data.X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # before: a RuntimeWarning that the training was not found
        o(preds, dtrain)
        bpx.objective(NAME, threads=1)(preds, dtrain)
    assert SEEN == [ALL, 1]
    assert pickle.loads(pickle.dumps(bpx.objective(NAME, threads=1))).threads == 1
    assert pickle.loads(pickle.dumps(o)).threads is o.threads


# ---- boostplug's own paths pass the count ------------------------------------------------------------------
@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_compare_passes_its_threads(data, framework) -> None:
    from boostplug.compare.methods import Method

    Method("probe", framework, f"boostplug:{NAME}").train(data, data, data, rounds=3, tree_params={}, seed=0,
                                                           threads=1)
    assert SEEN == [1] * 3


def test_xgboost_cv_passes_the_nthread_of_its_params(data) -> None:
    bpx.cv(bpx.params(nthread=1), bpx.dmatrix(data.X, data.y, qid=data.qid), num_boost_round=2, nfold=2,
           obj=bpx.objective(NAME))
    assert SEEN == [1] * 4


def test_a_distributed_xgboost_worker_passes_the_nthread_of_its_params(data) -> None:
    """What Spark's and Dask's XGBoost tasks run (one worker here)."""
    from boostplug.frameworks.distributed.rows import Part
    from boostplug.frameworks.distributed.xgboost_worker import Tracker, train_part

    part = Part(data.X, data.y, data.qid, None)
    with Tracker("127.0.0.1", 1) as tracker:
        train_part(part, bpx.params(nthread=1), bpx.objective(NAME), 3, tracker_args=tracker.args, task_id="0")
    assert SEEN == [1] * 3


def test_the_rankers_and_lgb_train_pass_or_read_the_count(data) -> None:
    import lightgbm as lgb

    bpl.LGBMRanker(objective=NAME, n_estimators=2, n_jobs=1, verbose=-1).fit(data.X, data.y, qid=data.qid)
    bpx.XGBRanker(objective=NAME, n_estimators=2, n_jobs=1).fit(data.X, data.y, qid=data.qid)
    lgb.train({"objective": bpl.objective(NAME), "verbose": -1, "num_threads": 1},
              bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), num_boost_round=2)
    assert SEEN == [1] * 6


def test_given_threads_copies_only_an_objective_left_to_the_framework() -> None:
    o = bpx.objective(NAME)
    fixed = o.given_threads(1)
    assert fixed is not o and fixed.threads == 1 and o.threads is FROM_FRAMEWORK
    assert type(fixed) is type(o) and fixed.name == o.name and fixed.params == o.params
    mine = bpx.objective(NAME, threads=2)
    assert mine.given_threads(1) is mine  # a count given to the objective wins
    assert o.given_threads(None).threads is None  # numba's own setting


def test_no_stack_frame_is_read_in_the_package() -> None:
    """The thread count, the booster and the training are handed to the objective, never read off
    its callers' frames (a LightGBM or XGBoost release renaming a local would break that silently)."""
    import re
    from pathlib import Path

    import boostplug

    root = Path(boostplug.__file__).parent
    pattern = re.compile(r"_getframe|f_locals|f_back|inspect\.stack|currentframe")
    hits = [f"{p.relative_to(root)}:{n}: {line.strip()}" for p in sorted(root.rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert hits == []
    assert len(list(root.rglob("*.py"))) > 100  # the package's source, not an empty folder
