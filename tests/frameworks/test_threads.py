"""boostplug's kernels run on the framework's thread count: LightGBM's ``num_threads`` (and its
aliases, in ``lgb.train`` and ``LGBMRanker(n_jobs=...)``), XGBoost's ``nthread`` (``xgb.train`` and
``XGBRanker(n_jobs=...)``); the caller's own numba setting is restored after each round."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from boostplug import lightgbm as bpl
from boostplug import objectives
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
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


@pytest.mark.parametrize("params, want", [({"nthread": 1}, 1), ({"nthread": 0}, ALL), ({}, ALL)])
def test_xgb_train(data, params, want) -> None:
    import xgboost as xgb

    xgb.train(bpx.params(**params), bpx.dmatrix(data.X, data.y, qid=data.qid), num_boost_round=3,
              obj=bpx.objective(NAME))
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
