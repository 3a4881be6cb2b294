"""An objective travels to other processes (Dask workers, Spark executors) with its class, registered
or not: a process that did not run the code that registered it, and cannot import the module that
defines it, still trains with it; one where even that fails gets an error naming the class at the
first round, never while unpickling (a Dask worker that cannot unpickle a task's arguments left the
training waiting for ever). On a real two-process Dask cluster, in a child process with a time limit:
a class defined in the driver's ``__main__`` or in a module only the driver imports, passed by name to
each of the four training paths; and an objective that raises on one worker ends the training on
every worker with its error. (Spark: tests/spark/test_unregistered.py.)"""

from __future__ import annotations

import pickle
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from boostplug import objectives
from boostplug.data import make_ranking
from tests._child import run_child

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import xgboost as bpx  # noqa: E402

MODULE = textwrap.dedent('''
    """A module only the driver can import."""
    import numba

    from boostplug.objectives import Param, PairwiseLoss

    @numba.njit
    def _gap(d, margin):
        return margin - d if d < margin else 0.0

    class DriverOnly(PairwiseLoss):
        """A cubic hinge; its functions call a helper of the module."""

        name = "test_driver_only_hinge"
        summary = "cubic hinge (test objective, in a module the workers cannot import)"
        params = {"margin": Param(1.0, "real", "margin", low=0.0, low_open=True)}
        pair_loss = staticmethod(lambda d, margin: _gap(d, margin) ** 3 / 3.0)
        pair_grad = staticmethod(lambda d, margin: -_gap(d, margin) ** 2)
        pair_hess = staticmethod(lambda d, margin: 2.0 * _gap(d, margin))
''')


@pytest.fixture
def driver_only(tmp_path, monkeypatch):
    """The class of a module in a folder on this process's path only while the fixture sets it up:
    registered; afterwards unregistered and its module gone, as in a process that never had it."""
    (tmp_path / "i45c_driver_only.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import i45c_driver_only

    objectives.register(i45c_driver_only.DriverOnly)
    yield i45c_driver_only.DriverOnly
    if i45c_driver_only.DriverOnly.name in objectives.names():
        objectives.unregister(i45c_driver_only.DriverOnly.name)


def _elsewhere(cls: type, monkeypatch) -> None:
    """Make this process one that did not register ``cls`` and cannot import its module."""
    objectives.unregister(cls.name)
    monkeypatch.delitem(sys.modules, cls.__module__)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not (Path(p) / f"{cls.__module__}.py").exists()])


def test_a_registered_objective_trains_where_it_is_neither_registered_nor_importable(driver_only,
                                                                                     monkeypatch) -> None:
    data = make_ranking(n_queries=20, docs_per_query=(3, 9), n_features=4, n_informative=3, seed=4)
    for make in (bpl.objective, bpx.objective):
        payload = pickle.dumps(make(driver_only.name, margin=0.5))
        want = make(driver_only.name, margin=0.5)
        with monkeypatch.context() as m:
            _elsewhere(driver_only, m)
            assert driver_only.name not in objectives.names()
            with pytest.raises(ModuleNotFoundError):
                __import__(driver_only.__module__)
            back = pickle.loads(payload)
            assert back.name == driver_only.name and back.params == {"margin": 0.5}
            got = back.objective.prepare(data.y, data.group_ptr, margin=0.5).grad_hess(np.ones(data.n_docs))
        objectives.register(driver_only)
        ref = want.objective.prepare(data.y, data.group_ptr, margin=0.5).grad_hess(np.ones(data.n_docs))
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)


def test_an_objective_that_cannot_be_rebuilt_unpickles_and_names_its_class_at_the_first_round(
        driver_only, monkeypatch) -> None:
    from boostplug.frameworks import _bound_objective

    monkeypatch.setattr(_bound_objective, "_pickled_by_value", lambda entry, cp: None)  # by reference only
    payload = pickle.dumps(bpl.objective(driver_only.name))
    data = make_ranking(n_queries=20, docs_per_query=(3, 9), n_features=4, n_informative=3, seed=4)
    with monkeypatch.context() as m:
        _elsewhere(driver_only, m)
        back = pickle.loads(payload)  # no error here: Dask would lose it
        with pytest.raises(RuntimeError, match=r"objective 'test_driver_only_hinge': its class "
                                               r"i45c_driver_only\.DriverOnly cannot be loaded in this process "
                                               r"\(ModuleNotFoundError: No module named 'i45c_driver_only'\)"):
            lgb.train({"objective": back, "verbose": -1, "num_threads": 1},
                      bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 1)
    objectives.register(driver_only)


# ---- a real Dask cluster ------------------------------------------------------------------------------------
_DASK_CHILD = r'''
import json, os, sys, tempfile, time
import numpy as np, pandas as pd, dask, dask.dataframe as dd
from distributed import Client, LocalCluster
from boostplug import objectives, dask as bpd
from boostplug.data import make_ranking
from boostplug.objectives import Hessian, Loss

MODULE = sys.argv[1]


class MainOnly(Loss):
    """0.5 * sum (s - y)^2, defined in the driver's __main__: no worker can import it."""

    name = "test_main_only_squared"
    summary = "squared error (test objective)"
    params = {}
    hessians = {"exact": Hessian("exact", "1")}

    def _loss(self, scores):
        r = scores - self.labels
        return 0.5 * float(r @ r)

    def _grad_hess(self, scores):
        self.calls = getattr(self, "calls", 0) + 1
        self._at_call(self.calls)
        return scores - self.labels, np.ones_like(scores)

    def _at_call(self, n):
        pass


class FailsOnWorkerZero(MainOnly):
    name = "test_fails_on_worker_zero"

    def _at_call(self, n):
        from distributed import get_worker

        if n == 3 and get_worker().name == 0:
            raise RuntimeError("the objective failed on purpose on worker 0")


def step(what):
    print(what, file=sys.stderr, flush=True)


if __name__ == "__main__":
    out = {}
    d = make_ranking(60, (4, 12), n_features=4, n_informative=3, seed=3)
    cols = [f"f{i}" for i in range(4)]
    df = pd.DataFrame(d.X, columns=cols).assign(label=d.y, qid=d.qid, doc=np.arange(d.n_docs))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                         host="127.0.0.1") as cluster, Client(cluster) as client, dask.config.set(scheduler=client):
        # the module's folder joins the path once the workers run: only the driver can import it
        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "i45c_driver_only.py"), "w") as f:
            f.write(MODULE)
        sys.path.insert(0, folder)
        import i45c_driver_only

        for cls in (MainOnly, FailsOnWorkerZero, i45c_driver_only.DriverOnly):
            objectives.register(cls)
        import importlib.util
        out["workers_find_the_module"] = list(client.run(
            lambda: importlib.util.find_spec("i45c_driver_only") is not None).values())
        frame = bpd.repartition_by_query(dd.from_pandas(df, npartitions=2), npartitions=2).persist()
        trees = {}
        for path, name in (("lightgbm", MainOnly.name), ("xgboost", "test_driver_only_hinge"),
                           ("lightgbm-keyed", "test_driver_only_hinge"), ("xgboost-keyed", MainOnly.name)):
            step(path)
            keyed = {"doc_col": "doc"} if path.endswith("keyed") else {}
            if path.startswith("lightgbm"):
                got = bpd.train_lightgbm(client, frame, name, feature_cols=cols, n_estimators=3, **keyed)
                trees[path] = (got.booster_ if hasattr(got, "booster_") else got).num_trees()
            else:
                got = bpd.train_xgboost(client, frame, name, feature_cols=cols, num_boost_round=3, **keyed)
                trees[path] = got["booster"].num_boosted_rounds()
        out["trees"] = trees
        for path in ("lightgbm", "lightgbm-keyed", "xgboost"):
            step(f"failing {path}")
            keyed = {"doc_col": "doc"} if path.endswith("keyed") else {}
            start = time.monotonic()
            try:
                if path.startswith("lightgbm"):
                    bpd.train_lightgbm(client, frame, FailsOnWorkerZero.name, feature_cols=cols, n_estimators=20,
                                       **keyed)
                else:
                    bpd.train_xgboost(client, frame, FailsOnWorkerZero.name, feature_cols=cols, num_boost_round=20)
                out[path] = "no error"
            except Exception as e:
                out[path] = f"{type(e).__name__}: {e}"
            # every worker's training ends: no task left running on any worker
            while any(client.processing().values()) and time.monotonic() - start < 30:
                time.sleep(0.1)
            out[path + " ended"] = not any(client.processing().values())
        step("again")
        again = bpd.train_lightgbm(client, frame, MainOnly.name, feature_cols=cols, n_estimators=2)
        out["again"] = again.booster_.num_trees()
    print(json.dumps(out))
'''


@pytest.mark.slow
def test_dask_trains_a_driver_only_objective_by_name_and_a_failing_worker_ends_every_worker() -> None:
    pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    out = run_child(_DASK_CHILD, MODULE, timeout=300)
    assert out["workers_find_the_module"] == [False, False]
    assert out["trees"] == {"lightgbm": 3, "xgboost": 3, "lightgbm-keyed": 3, "xgboost-keyed": 3}
    for path in ("lightgbm", "lightgbm-keyed", "xgboost"):
        assert out[path] == "RuntimeError: the objective failed on purpose on worker 0", path
        assert out[path + " ended"], f"{path}: a worker still trains after the error"
    assert out["again"] == 2
