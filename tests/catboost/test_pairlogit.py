"""CatBoost's PairLogit reproduced on CatBoost trees by boostplug's ``ranknet``: the objective weighs
each row in the split scores by its pairs (``split_weights``, the general hook of
:class:`boostplug.catboost.CatBoostObjective`), the loop keeps CatBoost's L2 on the queries' weights and
centres each tree's leaves as CatBoost does for its losses on pairs. Checked tree by tree against
CatBoost's own PairLogit (splits equal, leaf values and predictions within 1e-6)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boostplug.data import load_letor_folds, make_ranking
from boostplug.objectives import Hessian, Loss, RankNet
from tests._helpers import MQ2008, need_data

catboost = pytest.importorskip("catboost")
from boostplug import catboost as bpc  # noqa: E402

#: the settings under which a run is deterministic round by round: no sampling, no random score noise
#: (each round of bpc.train is a fit of its own and cannot continue CatBoost's random draws)
PARAMS = {"learning_rate": 0.1, "random_seed": 0, "thread_count": 1, "bootstrap_type": "No", "random_strength": 0}


def _trees(model) -> list[tuple[list[tuple[int, float]], np.ndarray]]:
    j = json.loads(_json(model))
    return [([(s["float_feature_index"], s["border"]) for s in t["splits"]], np.array(t["leaf_values"]))
            for t in j["oblivious_trees"]]


def _json(model) -> str:
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.json")
        model.save_model(path, format="json")
        with open(path) as f:
            return f.read()


def _both(d, rounds: int, depth: int, group_weight=None, **extra):
    params = {**PARAMS, "depth": depth, **extra}
    pool = bpc.pool(d.X, d.y, group_ptr=d.group_ptr, group_weight=group_weight)
    builtin = catboost.CatBoost({**params, "loss_function": "PairLogit", "iterations": rounds, "verbose": False,
                                 "leaf_estimation_iterations": 1, "allow_writing_files": False}).fit(pool)
    copy = bpc.train(params, pool, bpc.objective("ranknet", hessian_floor=False), rounds)
    return pool, builtin, copy


def _agree(builtin, copy) -> int:
    """How many first trees have the same splits and leaf values within 1e-6."""
    for t, ((sa, va), (sb, vb)) in enumerate(zip(_trees(builtin), _trees(copy))):
        if sa != sb or np.max(np.abs(va - vb)) > 1e-6:
            return t
    return copy.tree_count_


@pytest.mark.parametrize("weighted", [False, True])
def test_ranknet_grows_pairlogits_trees(weighted: bool) -> None:
    d = make_ranking(n_queries=30, docs_per_query=(1, 20), n_features=5, seed=3)
    w = np.random.default_rng(5).uniform(0.2, 3.0, size=d.n_queries) if weighted else None
    pool, builtin, copy = _both(d, 12, 4, group_weight=w)
    assert copy.tree_count_ == builtin.tree_count_ == 12
    assert _agree(builtin, copy) == 12
    np.testing.assert_allclose(copy.predict(d.X, prediction_type="RawFormulaVal"),
                               builtin.predict(d.X, prediction_type="RawFormulaVal"), rtol=0, atol=1e-6)


def test_split_weights_are_each_rows_pair_weights() -> None:
    d = make_ranking(n_queries=8, docs_per_query=(1, 9), n_features=3, n_informative=2, seed=1)
    w = np.linspace(0.5, 2.0, d.n_queries)
    got = RankNet(d.y, d.group_ptr, weights=w).split_weights()
    want = np.zeros(d.n_docs)
    for q in range(d.n_queries):
        a, b = d.group_ptr[q], d.group_ptr[q + 1]
        for i in range(a, b):
            want[i] = w[q] * sum(d.y[j] != d.y[i] for j in range(a, b))
    np.testing.assert_array_equal(got, want)


def test_the_round_hands_catboost_the_split_weights_and_refuses_others() -> None:
    d = make_ranking(n_queries=6, docs_per_query=(2, 6), n_features=3, n_informative=2, seed=2)
    pool = bpc.pool(d.X, d.y, group_ptr=d.group_ptr, group_weight=np.arange(1.0, 7.0))
    ders = bpc.objective("ranknet").round(pool, np.zeros(d.n_docs), None)
    assert ders.split and np.array_equal(ders.weights, RankNet(d.y, d.group_ptr, weights=np.arange(1.0, 7.0))
                                         .split_weights())
    rows = np.arange(4)
    ders.calc_ders_range(np.zeros(4), rows.astype(np.float32), ders.weights[rows].astype(np.float32))
    with pytest.raises(ValueError, match="row weights other than the round's"):
        ders.calc_ders_range(np.zeros(4), rows.astype(np.float32), np.ones(4, dtype=np.float32))
    plain = bpc.objective("qbrank").round(pool, np.zeros(d.n_docs), None)  # no hook: the queries' weights
    assert not plain.split and np.array_equal(plain.weights, np.repeat(np.arange(1.0, 7.0), np.diff(d.group_ptr)))


def test_bad_group_weights_are_refused_naming_the_query() -> None:
    d = make_ranking(n_queries=4, docs_per_query=(2, 4), n_features=3, n_informative=2, seed=0)
    with pytest.raises(ValueError, match="query 2"):
        bpc.pool(d.X, d.y, group_ptr=d.group_ptr, group_weight=[1.0, 1.0, np.nan, 1.0])


@pytest.fixture(scope="module")
def mq2008_fold1():
    return load_letor_folds(need_data(MQ2008), "letor4", folds=[0])[0][0]


@pytest.mark.realdata
@pytest.mark.slow
def test_mq2008_fold1_pairlogits_100_trees(mq2008_fold1) -> None:
    """MQ2008 Fold 1, depth 6, 100 rounds, l2_leaf_reg=10: every tree is CatBoost's (splits equal,
    leaves within 1e-6), and so are the predictions."""
    pool, builtin, copy = _both(mq2008_fold1, 100, 6, l2_leaf_reg=10)
    assert copy.tree_count_ == 100 and _agree(builtin, copy) == 100
    np.testing.assert_allclose(copy.predict(mq2008_fold1.X, prediction_type="RawFormulaVal"),
                               builtin.predict(mq2008_fold1.X, prediction_type="RawFormulaVal"), rtol=0, atol=1e-6)


@pytest.mark.realdata
@pytest.mark.slow
def test_mq2008_fold1_pairlogit_trees_up_to_the_near_tie(mq2008_fold1) -> None:
    """The same with CatBoost's default l2_leaf_reg=3: the first 77 trees are CatBoost's. Tree 77 is
    a near-tie (docs/catboost.md): its first split differs, and CatBoost's own PairLogit grown one tree
    from the 77 trees' scores (as a baseline) picks the copy's tree 77."""
    train = mq2008_fold1
    pool, builtin, copy = _both(train, 100, 6)
    assert _agree(builtin, copy) == 77
    at = 77
    np.testing.assert_allclose(copy.predict(train.X, prediction_type="RawFormulaVal", ntree_end=at),
                               builtin.predict(train.X, prediction_type="RawFormulaVal", ntree_end=at), atol=1e-6)
    scores = copy.predict(pool, prediction_type="RawFormulaVal", ntree_end=at)
    base = catboost.Pool(train.X, train.y, group_id=np.repeat(np.arange(train.n_queries), np.diff(train.group_ptr)),
                         baseline=scores)
    one = catboost.CatBoost({**PARAMS, "depth": 6, "loss_function": "PairLogit", "iterations": 1, "verbose": False,
                             "leaf_estimation_iterations": 1, "allow_writing_files": False}).fit(base)
    assert _trees(one)[0][0] == _trees(copy)[at][0] != _trees(builtin)[at][0]


class QueryRMSE(Loss):
    """CatBoost's QueryRMSE, as its derivatives (``TQueryRmseError``): each row's residual less its query's
    weighted mean residual, ``-W_k (y_i - s_i - mean_k(y - s))``, and the Hessian ``W_k`` (the query's mean
    held). A pointwise-scored loss: no split weights, no centring; the path without the hook."""

    name = "query_rmse_test"
    summary = "CatBoost's QueryRMSE (test objective)"
    hessians = {"bound": Hessian("bound", "W_k: the query's mean residual held (exact: W_k (1 - 1/n_k))")}

    def _loss(self, scores: np.ndarray) -> float:
        r = self._residuals(scores)
        return float(0.5 * np.sum(np.repeat(self.query_weights, np.diff(self.group_ptr)) * r * r))

    def _residuals(self, scores: np.ndarray) -> np.ndarray:
        sizes = np.diff(self.group_ptr)
        r = self.labels - scores
        return r - np.repeat(np.add.reduceat(r, self.group_ptr[:-1]) / sizes, sizes)

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = np.repeat(self.query_weights, np.diff(self.group_ptr))
        return -w * self._residuals(scores), w.copy()


@pytest.mark.parametrize("weighted", [False, True])
def test_a_loss_without_split_weights_grows_queryrmses_trees(weighted: bool) -> None:
    d = make_ranking(n_queries=30, docs_per_query=(1, 20), n_features=5, seed=4)
    w = np.random.default_rng(6).uniform(0.2, 3.0, size=d.n_queries) if weighted else None
    pool = bpc.pool(d.X, d.y, group_ptr=d.group_ptr, group_weight=w)
    params = {**PARAMS, "depth": 4}
    builtin = catboost.CatBoost({**params, "loss_function": "QueryRMSE", "iterations": 12, "verbose": False,
                                 "leaf_estimation_iterations": 1, "allow_writing_files": False}).fit(pool)
    copy = bpc.train(params, pool, bpc.objective(QueryRMSE, hessian_floor=False), 12)
    assert _agree(builtin, copy) == 12
    np.testing.assert_allclose(copy.predict(d.X, prediction_type="RawFormulaVal"),
                               builtin.predict(d.X, prediction_type="RawFormulaVal"), rtol=0, atol=1e-6)


@pytest.mark.realdata
@pytest.mark.slow
def test_mq2008_fold1_queryrmses_100_trees(mq2008_fold1) -> None:
    """QueryRMSE on MQ2008 Fold 1, depth 6, 100 rounds: every tree is CatBoost's but tree 30, whose
    fifth split is another feature's cutting the training rows exactly as CatBoost's (a tie): the same
    leaf for every training row, leaf values and predictions within 1e-6."""
    d = mq2008_fold1
    pool = bpc.pool(d.X, d.y, group_ptr=d.group_ptr)
    params = {**PARAMS, "depth": 6}
    builtin = catboost.CatBoost({**params, "loss_function": "QueryRMSE", "iterations": 100, "verbose": False,
                                 "leaf_estimation_iterations": 1, "allow_writing_files": False}).fit(pool)
    copy = bpc.train(params, pool, bpc.objective(QueryRMSE, hessian_floor=False), 100)
    a, b = _trees(builtin), _trees(copy)
    assert [t for t in range(100) if a[t][0] != b[t][0] or np.max(np.abs(a[t][1] - b[t][1])) > 1e-6] == [30]
    assert a[30][0][:4] == b[30][0][:4] and a[30][0][4] != b[30][0][4]
    leaves = [m.calc_leaf_indexes(pool, ntree_start=30, ntree_end=31) for m in (builtin, copy)]
    assert np.array_equal(*leaves) and np.max(np.abs(a[30][1] - b[30][1])) < 1e-6
    np.testing.assert_allclose(copy.predict(d.X, prediction_type="RawFormulaVal"),
                               builtin.predict(d.X, prediction_type="RawFormulaVal"), rtol=0, atol=1e-6)
