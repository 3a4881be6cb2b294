"""An objective trains without registration: the LightGBM and XGBoost adapters, both rankers,
``check_objective`` and Dask take a ``Loss`` subclass or an instance of one as well as a registered
name, hand the frameworks what the registered objective would, and leave the registry as it was;
a model trained so says, when saved, that its objective cannot be rebuilt by name. (Spark:
tests/spark/test_unregistered.py.)"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from boostplug import objectives
from boostplug.data import make_ranking
from boostplug.objectives import Param, PairwiseLoss, Search
from boostplug.objectives.pairwise import LOGISTIC
from boostplug.objectives.pairwise import BOUND, EXACT

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import xgboost as bpx  # noqa: E402


class Unlisted(PairwiseLoss):
    """RankNet's pairwise logistic loss, never registered (a module-level class: Dask's workers
    import it)."""

    name = "test_unlisted_ranknet"
    summary = "RankNet, unregistered (test objective)"
    params = {"sigma": Param(1.0, "real", "slope", low=0.0, low_open=True, search=Search(0.5, 4.0, log=True))}
    hessians = {"exact": EXACT, "bound": BOUND}
    pair_loss, pair_grad, pair_hess = LOGISTIC


@pytest.fixture(scope="module")
def data():
    d = make_ranking(n_queries=30, docs_per_query=(3, 10), n_features=5, n_informative=3, seed=2)
    d.X[:] = np.round(d.X, 1)
    return d


@pytest.fixture(autouse=True)
def _registry_unchanged():
    before = objectives.names()
    yield
    assert objectives.names() == before and Unlisted.name not in before


def _reference(data, **params):
    """The gradients of one round from zero, straight from the class."""
    return Unlisted(data.y, data.group_ptr, **params).grad_hess(np.zeros(data.n_docs))


def _first_round(objective, data):
    """What ``objective`` hands LightGBM in its first round."""
    seen = []

    def spy(preds, train_set):
        seen.append(objective(preds, train_set))
        return seen[-1]

    lgb.train({"objective": spy, "verbose": -1, "num_threads": 1}, bpl.dataset(data.X, data.y, qid=data.qid), 1)
    return seen[0]


def test_the_lightgbm_adapter_takes_a_class_or_an_instance(data) -> None:
    """A class with parameters, or an instance (its settings, overridden by those given): LightGBM
    gets the class's gradients."""
    obj = bpl.objective(Unlisted, sigma=2.0)
    assert obj.name == Unlisted.name and obj.params == {"sigma": 2.0}
    for got, want in zip(_first_round(obj, data), _reference(data, sigma=2.0)):
        np.testing.assert_array_equal(got, want)
    inst = Unlisted(data.y[:5], np.array([0, 5]), sigma=3.0, hessian="bound")   # bound to other data: its settings count
    obj = bpl.objective(inst, sigma=2.0)
    assert obj.params["sigma"] == 2.0 and obj.params["hessian"] == "bound"
    for got, want in zip(_first_round(obj, data), _reference(data, sigma=2.0, hessian="bound")):
        np.testing.assert_array_equal(got, want)


def test_the_same_trees_as_registered(data) -> None:
    """Unregistered or registered, the objective is the same: the same model."""
    def train(objective):
        ds = bpl.dataset(data.X, data.y, qid=data.qid)
        return lgb.train({"objective": objective, "verbose": -1, "num_threads": 1}, ds, 5).dump_model()["tree_info"]

    unregistered = train(bpl.objective(Unlisted, sigma=1.5))
    objectives.register(Unlisted)
    try:
        registered = train(bpl.objective(Unlisted.name, sigma=1.5))
    finally:
        objectives.unregister(Unlisted.name)
    assert unregistered == registered


def test_the_xgboost_adapter_takes_a_class(data) -> None:
    obj = bpx.objective(Unlisted, sigma=2.0, threads=1)
    dm = bpx.dmatrix(data.X, data.y, qid=data.qid)
    booster = xgb.train(bpx.params(max_depth=3, nthread=1), dm, 3, obj=obj)
    assert booster.num_boosted_rounds() == 3
    g, h = obj(np.zeros(data.n_docs), dm)
    np.testing.assert_array_equal(g, _reference(data, sigma=2.0)[0])


def test_the_rankers_take_a_class_and_its_parameters(data) -> None:
    ranker = bpl.LGBMRanker(objective=Unlisted, sigma=2.0, n_estimators=3, verbose=-1, n_jobs=1)
    assert ranker.get_params()["sigma"] == 2.0
    ranker.fit(data.X, data.y, qid=data.qid)
    assert ranker._objective.name == Unlisted.name and ranker._objective.params == {"sigma": 2.0}
    assert ranker.booster_.params["objective"].lower() == "none"   # LightGBM trains with the callable
    assert clone(ranker).get_params()["objective"] is Unlisted
    with pytest.raises(ValueError, match=r"sigmaa.*did you mean|sigmaa"):
        bpl.LGBMRanker(objective=Unlisted, sigmaa=2.0, n_estimators=1).fit(data.X, data.y, qid=data.qid)
    xranker = bpx.XGBRanker(objective=Unlisted, sigma=2.0, hessian="bound", n_estimators=3, n_jobs=1)
    xranker.fit(data.X, data.y, qid=data.qid)
    assert xranker.predict(data.X).shape == (data.n_docs,)


def test_check_objective_takes_a_class_or_an_instance(data) -> None:
    from boostplug.testing import check_objective

    for subject in (Unlisted, Unlisted(data.y, data.group_ptr, sigma=2.0)):
        results = check_objective(subject, checks=["gradient", "lightgbm_adapter"])
        assert {r.check for r in results} == {"gradient", "lightgbm_adapter"}
    # an instance is checked with its own settings
    ids = {r.subject for r in check_objective(Unlisted(data.y, data.group_ptr, sigma=2.0), checks=["gradient"])}
    assert all("sigma=2.0" in i for i in ids)


def test_pickles_with_its_class(data) -> None:
    """Dask and Spark ship objectives to other processes: an unregistered one travels with its class."""
    obj = bpl.objective(Unlisted, sigma=2.0)
    back = pickle.loads(pickle.dumps(obj))
    assert back.objective.loss_class is Unlisted and back.params == {"sigma": 2.0}
    xback = pickle.loads(pickle.dumps(bpx.objective(Unlisted)))
    assert xback.objective.loss_class is Unlisted


def test_a_saved_model_says_its_objective_is_not_registered(data, tmp_path) -> None:
    obj = bpl.objective(Unlisted, sigma=2.0)
    booster = lgb.train({"objective": obj, "verbose": -1, "num_threads": 1}, bpl.dataset(data.X, data.y, qid=data.qid), 2)
    path = tmp_path / "model.txt"
    with pytest.warns(UserWarning, match=r"test_unlisted_ranknet.*not registered.*objectives\.register"):
        bpl.save_model(booster, path, objective=obj)
    with pytest.raises(ValueError, match=r"class tests\.frameworks\.test_unregistered\.Unlisted, which was not "
                                         r"registered and is not registered here"):
        bpl.objective_of(path)
    objectives.register(Unlisted)
    try:
        record = bpl.objective_of(path)
        assert record.name == Unlisted.name and record.params == {"sigma": 2.0}
    finally:
        objectives.unregister(Unlisted.name)
    # a registered objective's model saves without the warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bpl.save_model(lgb.train({"objective": bpl.objective("mpboost"), "verbose": -1, "num_threads": 1},
                                 bpl.dataset(data.X, data.y, qid=data.qid), 2), tmp_path / "m2.txt",
                       objective=bpl.objective("mpboost"))


def test_what_is_not_an_objective_is_named(data) -> None:
    for bad in (42, object):
        with pytest.raises(TypeError, match=r"a registered objective's name, a boostplug\.objectives\.Loss subclass"):
            bpl.objective(bad)
    with pytest.raises(TypeError, match="Loss declares no name"):
        bpl.objective(objectives.Loss)
    with pytest.raises(TypeError, match="Bad declares no Hessian mode"):
        bpl.objective(type("Bad", (objectives.Loss,), {"name": "bad", "_loss": lambda s, x: 0.0,
                                                       "_grad_hess": lambda s, x: (x, x)}))


@pytest.mark.dask
def test_dask_trains_an_unregistered_class(data) -> None:
    pytest.importorskip("distributed")
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    from boostplug import dask as bpd

    frame = pd.DataFrame(data.X, columns=[f"f{i}" for i in range(data.X.shape[1])]).assign(label=data.y, qid=data.qid)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        ddf = bpd.repartition_by_query(dd.from_pandas(frame, npartitions=2), "qid")
        out = bpd.train_xgboost(client, ddf, Unlisted, objective_params={"sigma": 2.0}, num_boost_round=3,
                                params={"max_depth": 3, "nthread": 1})
    assert out["booster"].num_boosted_rounds() == 3
