"""boostplug.catboost: boostplug's objectives on CatBoost trees. The derivatives CatBoost gets are
the LightGBM adapter's on the same scores (negated: CatBoost maximises), looked up by row whatever
blocks and order CatBoost asks in; the papers' objectives train; anything that could make the
derivatives silently wrong is refused."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from boostplug import objectives
from boostplug.data import load_example, make_ranking
from boostplug.metrics import ndcg

catboost = pytest.importorskip("catboost")
from boostplug import catboost as bpc  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=40, docs_per_query=(2, 25), n_features=6, seed=7)


def _lightgbm_grad_hess(name: str, d, scores):
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    ds = lgb.Dataset(d.X, d.y, group=np.diff(d.group_ptr), params={"verbose": -1, "num_threads": 1},
                     free_raw_data=False)
    ds.construct()
    return bpl.objective(name, threads=1)(scores.copy(), ds)


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == "lambdarank" else pytest.mark.slow)
                                  for n in objectives.names()])  # slow: each compiles its kernels first
def test_derivatives_are_the_lightgbm_adapters_negated(data, name: str) -> None:
    scores = np.random.default_rng(3).normal(size=data.n_docs)
    pool = bpc.pool(data.X, data.y, group_ptr=data.group_ptr)
    ders = bpc.objective(name, threads=1).round(pool, scores, None)
    grad, hess = _lightgbm_grad_hess(name, data, scores)
    np.testing.assert_allclose(ders.der1, -np.asarray(grad), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ders.der2, -np.asarray(hess), rtol=1e-12, atol=1e-12)


def test_blocks_in_any_order_get_each_rows_derivatives(data) -> None:
    """CatBoost's calls: blocks of rows cutting queries, in an order its threads choose; each row's values
    are found by the index the pool holds as its label."""
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    ders = bpc.objective("lambdarank", threads=1).round(bpc.pool(data.X, data.y, group_ptr=data.group_ptr), scores,
                                                         None)
    rows = np.random.default_rng(1).permutation(data.n_docs)
    for block in np.array_split(rows, 7)[::-1]:
        got = np.array(ders.calc_ders_range(scores[block], block.astype(np.float32), None))
        np.testing.assert_array_equal(got[:, 0], ders.der1[block])
        np.testing.assert_array_equal(got[:, 1], ders.der2[block])


@pytest.mark.parametrize("name", ["qbrank", "mpboost", "ndcg_boost", "lambdarank"])
def test_the_papers_objectives_train_on_catboost_trees(name: str) -> None:
    train, test = load_example()
    pool = bpc.pool(train.X, train.y, group_ptr=train.group_ptr)
    seen = []
    model = bpc.train({"depth": 4, "learning_rate": 0.2, "thread_count": 1, "random_seed": 0}, pool,
                      bpc.objective(name), 5, callback=lambda t, m: seen.append((t, m.tree_count_)))
    assert model.tree_count_ == 5 and seen == [(t, t) for t in range(1, 6)]
    s = model.predict(test.X, prediction_type="RawFormulaVal")
    assert ndcg(s, test.y, test.group_ptr, k=10) > ndcg(np.zeros(test.n_docs), test.y, test.group_ptr, k=10)


def test_one_seed_gives_one_model(data) -> None:
    def fit(seed):
        pool = bpc.pool(data.X, data.y, group_ptr=data.group_ptr)
        m = bpc.train({"depth": 3, "random_seed": seed, "thread_count": 1}, pool, "ranknet", 3)
        return m.predict(data.X, prediction_type="RawFormulaVal")

    assert np.array_equal(fit(1), fit(1))


@pytest.mark.parametrize("params, says", [
    ({"boosting_type": "Ordered"}, "boosting_type='Ordered' must be 'Plain'"),
    ({"leaf_estimation_iterations": 2}, "leaf_estimation_iterations=2 must be 1"),
    ({"loss_function": "YetiRank"}, "loss_function='YetiRank' is set by boostplug.catboost.train"),
    ({"iterations": 10}, "iterations=10 is set by"),
])
def test_settings_that_would_ask_at_other_scores_are_refused(data, params, says) -> None:
    with pytest.raises(ValueError, match=__import__("re").escape(says)):
        bpc.train(params, bpc.pool(data.X, data.y, group_ptr=data.group_ptr), "qbrank", 1)


def test_a_plain_pool_and_unsorted_or_missing_groups_are_refused(data) -> None:
    from catboost import Pool

    with pytest.raises(ValueError, match="boostplug.catboost.pool"):
        bpc.train({}, Pool(data.X, label=data.y, group_id=data.qid), "qbrank", 1)
    qid = np.asarray(data.qid).copy()
    qid[:2], qid[-2:] = qid[-1], qid[0]  # a query's rows apart
    with pytest.raises(ValueError, match="not contiguous"):
        bpc.pool(data.X, data.y, qid=qid)
    with pytest.raises(ValueError, match="group_ptr=... .offsets. or qid="):
        bpc.pool(data.X, data.y)
    with pytest.raises(ValueError, match="weight= is not taken"):
        bpc.pool(data.X, data.y, group_ptr=data.group_ptr, weight=np.ones(data.n_docs))


def test_calls_that_could_be_silently_wrong_raise(data) -> None:
    """Approxes other than the round's scores, row weights."""
    scores = np.zeros(data.n_docs)
    ders = bpc.objective("qbrank").round(bpc.pool(data.X, data.y, group_ptr=data.group_ptr), scores, None)
    rows = np.arange(5, dtype=np.float32)
    with pytest.raises(ValueError, match="other than the round's"):
        ders.calc_ders_range(scores[:5] + 0.1, rows, None)
    with pytest.raises(ValueError, match="row weights"):
        ders.calc_ders_range(scores[:5], rows, np.full(5, 2.0, dtype=np.float32))
    assert ders.error is not None  # kept for train(), which CatBoost's rethrow would reduce to text


def test_an_error_inside_catboosts_call_reaches_the_caller_as_itself(data, monkeypatch) -> None:
    from boostplug.catboost import _objective

    real = _objective.RoundDers._rows

    def shifted(self, approxes, targets, weights):
        return real(self, approxes + 1.0, targets, weights)

    monkeypatch.setattr(_objective.RoundDers, "_rows", shifted)
    with pytest.raises(ValueError, match="other than the round's"):
        bpc.train({"depth": 2, "thread_count": 1}, bpc.pool(data.X, data.y, group_ptr=data.group_ptr), "qbrank", 1)


def test_importing_the_adapter_does_not_import_catboost(monkeypatch) -> None:
    import importlib

    monkeypatch.delitem(sys.modules, "catboost")
    for mod in [m for m in sys.modules if m.startswith("boostplug.catboost")]:
        monkeypatch.delitem(sys.modules, mod)
    importlib.import_module("boostplug.catboost")
    assert "catboost" not in sys.modules
