"""An objective written outside the library and added with ``boostplug.objectives.register`` works
everywhere a built-in one does, with no other edit: the registry, the contract checks
(``boostplug.testing``, on the cases the registry gives it), both frameworks' adapters
(``lgb.train``, ``lgb.cv``, ``xgb.train``), the scikit-learn rankers, Dask, the saved-model record
and ``boostplug compare`` (methods, settings, did-you-mean, ``--tune``). It is unregistered after
each test, and the registry's listings (compare's methods) follow."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boostplug.keyed_pairs import pair_rows
from boostplug import objectives
from boostplug.cli import main
from boostplug.compare import DEFAULT_METHODS, METHODS, get_method, method_names
from boostplug.compare import execution
from boostplug.data import make_ranking
from boostplug.objectives import Hessian, Loss, Param, Search
from boostplug.testing import ContractError, cases, check_objective, parametrize_with_checks
from tests._helpers import three_way_split

NAME = "pairlogit"
LGB = {"verbose": -1, "num_threads": 1, "deterministic": True, "min_data_in_leaf": 3, "learning_rate": 0.3}


class PairLogit(Loss):
    """RankNet's pairwise logistic loss: ``sum_k W_k sum_{y_i > y_j} log(1 + exp(-sigma (s_i - s_j)))``."""

    name = NAME
    summary = "pairwise logistic loss on the critical pairs (test objective)"
    params = {"sigma": Param(1.0, "real", "logistic slope", low=0.0, low_open=True,
                             search=Search(0.5, 4.0, log=True))}
    hessians = {"exact": Hessian("exact", "sum over the document's pairs of W sigma^2 p (1 - p)"),
                "bound": Hessian("bound", "W sigma^2 / 2 per pair (p (1 - p) <= 1/4, doubled: majorises H)")}

    def setup(self) -> None:
        hi, lo, w = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
        for q, (a, b) in enumerate(zip(self.group_ptr[:-1], self.group_ptr[1:])):
            if self.query_weights[q] == 0.0:
                continue  # no terms: a weight 0 times a term that overflows would be NaN
            i, j = np.nonzero(self.labels[a:b, None] > self.labels[None, a:b])
            hi.append(a + i)
            lo.append(a + j)
            w.append(np.full(i.size, self.query_weights[q]))
        self._hi, self._lo, self._w = np.concatenate(hi), np.concatenate(lo), np.concatenate(w)

    def _loss(self, scores: np.ndarray) -> float:
        z = self.sigma * (scores[self._hi] - scores[self._lo])
        return float(np.sum(self._w * np.logaddexp(0.0, -z)))

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = self.sigma * (scores[self._hi] - scores[self._lo])
        q = np.exp(-np.logaddexp(0.0, z))  # 1 - sigmoid(z), without overflow
        n = self.n_docs
        d = self._w * self.sigma * q
        g = np.bincount(self._lo, d, n) - np.bincount(self._hi, d, n)
        c = self._w * self.sigma ** 2 * (q * (1.0 - q) if self.hessian == "exact" else 0.5)
        return g, np.bincount(self._hi, c, n) + np.bincount(self._lo, c, n)


@pytest.fixture
def registered():
    entry = objectives.register(PairLogit)
    yield entry
    objectives.unregister(NAME)


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, docs_per_query=(4, 9), n_features=5, n_informative=3, seed=2)


# ---- the registry and the contract ------------------------------------------------------------
def test_the_registry_lists_it_as_declared_and_forgets_it(registered) -> None:
    entry = objectives.get(NAME.upper())
    assert entry is registered and entry.loss_class is PairLogit and NAME in objectives.names()
    assert entry.defaults == {"sigma": 1.0, "hessian": "exact", "hessian_floor": True}
    assert entry.hessian_kinds == {"exact": "exact", "bound": "bound"}
    assert entry.gradient_kinds == {"exact": "exact", "bound": "exact"}
    assert entry.search_space() == {"sigma": Search(0.5, 4.0, log=True)}
    assert dict(entry.methods) == {NAME: {}} and entry.row_params == ()
    with pytest.raises(ValueError, match=r"sigma must be .*got -1"):
        entry.check({"sigma": -1})
    with pytest.raises(ValueError, match="did you mean 'sigma'"):
        entry.check({"sigam": 2.0})
    with pytest.raises(ValueError, match="already registered"):
        objectives.register(PairLogit)
    objectives.unregister(NAME)
    with pytest.raises(ValueError, match="unknown objective"):
        objectives.get(NAME)
    objectives.register(PairLogit)  # for the fixture's teardown


def test_the_registry_gives_the_checks_its_modes_and_settings() -> None:
    assert sorted((c.mode, c.settings) for c in cases(PairLogit)) == [
        (mode, settings) for mode in ("bound", "exact") for settings in ((), (("sigma", 0.5),), (("sigma", 4.0),))]
    assert NAME not in objectives.names()  # a class is registered only while it is checked


@parametrize_with_checks([PairLogit])
def test_the_contract_checks_pass_on_it(objective, check) -> None:
    check(objective)


class HalvedPairLogit(PairLogit):
    """PairLogit with a mode whose gradient is declared a rescaling of d loss / d score."""

    hessians = {**PairLogit.hessians,
                "halved": Hessian("fitting", "half the bound", gradient="scaled", scaling="d loss / d score halved")}

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g, h = super()._grad_hess(scores)
        return (0.5 * g, 0.5 * h) if self.hessian == "halved" else (g, h)


def test_the_checks_take_each_gradient_as_declared() -> None:
    """The exact modes against the derivative, the scaled one for its signs and descent; the same
    halved gradient declared exact fails, naming the check and the mode. No objective name decides."""
    objectives.register(HalvedPairLogit, name="pairlogit-halved")
    try:
        assert objectives.get("pairlogit-halved").gradient_kinds == {"exact": "exact", "bound": "exact",
                                                                     "halved": "scaled"}
        check_objective("pairlogit-halved", checks=["gradient", "hessian"])
    finally:
        objectives.unregister("pairlogit-halved")

    class Misdeclared(HalvedPairLogit):
        name = "pairlogit-misdeclared"
        hessians = {**PairLogit.hessians, "halved": Hessian("fitting", "half the bound")}  # gradient "exact"

    with pytest.raises(ContractError, match=r"(?s)contract check 'gradient' failed for objective "
                                            r"'pairlogit-misdeclared', Hessian mode 'halved' \(fitting\), settings: "
                                            r"defaults: .*not the five-point derivative of the loss") as e:
        check_objective(Misdeclared, checks=["gradient"])
    assert e.value.check == "gradient" and e.value.subject.mode == "halved"


# ---- the frameworks ------------------------------------------------------------------------------
def test_lightgbm_train_and_cv(registered, data) -> None:
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    def direct(preds, ds):  # the objective's own numbers, no adapter
        return PairLogit(ds.get_label(), data.group_ptr, sigma=1.5, hessian="bound").grad_hess(preds)

    models = [lgb.train({**LGB, "objective": obj}, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 8)
              for obj in (bpl.objective(NAME, sigma=1.5, hessian="bound"), direct, bpl.objective(NAME))]
    via_adapter, by_hand, default = (m.predict(data.X, raw_score=True) for m in models)
    np.testing.assert_array_equal(via_adapter, by_hand)
    assert not np.allclose(via_adapter, default)  # sigma and hessian reach training
    bound = PairLogit(data.y, data.group_ptr)
    assert bound.loss(default) < 0.7 * bound.loss(np.zeros(data.n_docs))
    res = bpl.cv({**LGB, "objective": bpl.objective(NAME), "metric": "None"},
                 bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 4, nfold=3, feval=bpl.metric("ndcg@5"))
    assert len(res["valid ndcg@5-mean"]) == 4 and all(0.0 < v <= 1.0 for v in res["valid ndcg@5-mean"])


def test_xgboost_train(registered, data) -> None:
    import xgboost as xgb

    from boostplug import xgboost as bpx

    def direct(preds, dm):
        return PairLogit(dm.get_label(), data.group_ptr, sigma=0.7).grad_hess(preds)

    params = bpx.params(max_depth=3, eta=0.3, nthread=1)
    dtrain = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    models = [xgb.train(params, dtrain, 6, obj=obj) for obj in (bpx.objective(NAME, sigma=0.7), direct,
                                                                 bpx.objective(NAME, sigma=0.7, hessian="bound"))]
    a, b, c = (m.predict(xgb.DMatrix(data.X), output_margin=True) for m in models)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    with pytest.raises(ValueError, match="did you mean 'sigma'"):
        bpx.objective(NAME, sigam=0.7)


def test_sklearn_rankers(registered, data) -> None:
    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx

    sizes = np.diff(data.group_ptr)
    fit = {"n_estimators": 6, "learning_rate": 0.3, "min_child_samples": 3, "verbose": -1, "n_jobs": 1}
    r1 = bpl.LGBMRanker(objective=NAME, sigma=0.5, **fit).fit(data.X, data.y, group=sizes)
    r2 = bpl.LGBMRanker(objective=NAME, sigma=2.0, **fit).fit(data.X, data.y, group=sizes)
    assert r1.get_params()["sigma"] == 0.5 and not np.allclose(r1.predict(data.X), r2.predict(data.X))
    with pytest.raises(ValueError, match=r"sigma"):
        bpl.LGBMRanker(objective=NAME, sigma=-1.0, **fit).fit(data.X, data.y, group=sizes)
    x = bpx.XGBRanker(objective=NAME, n_estimators=6, max_depth=3, n_jobs=1).fit(data.X, data.y, qid=data.qid)
    bound = PairLogit(data.y, data.group_ptr)
    assert bound.loss(x.predict(data.X)) < 0.8 * bound.loss(np.zeros(data.n_docs))


def test_saved_model_records_the_objective(registered, data, tmp_path: Path) -> None:
    import lightgbm as lgb
    import xgboost as xgb

    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx

    obj = bpl.objective(NAME, sigma=2.5, hessian="bound")
    booster = lgb.train({**LGB, "objective": obj}, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 3)
    path = tmp_path / "m.txt"
    bpl.save_model(booster, path, objective=obj)
    rec = bpl.objective_of(path)
    assert (rec.name, rec.params) == (NAME, {"sigma": 2.5, "hessian": "bound"})
    again = bpl.objective(rec.name, **rec.params_with())
    assert again.params == obj.params
    xobj = bpx.objective(NAME, sigma=0.8)
    xb = xgb.train(bpx.params(max_depth=2), bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 2, obj=xobj)
    bpx.save_model(xb, tmp_path / "m.json", objective=xobj)
    assert bpx.objective_of(tmp_path / "m.json").params == {"sigma": 0.8}
    objectives.unregister(NAME)
    try:
        with pytest.raises(ValueError, match=NAME):
            bpl.objective_of(path)  # a record of an objective this process does not know
    finally:
        objectives.register(PairLogit)


@pytest.mark.dask
def test_dask_training(registered, data) -> None:
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    import dask
    import pandas as pd
    import xgboost as xgb
    from distributed import Client, LocalCluster

    from boostplug import dask as bpd

    cols = [f"f{i}" for i in range(data.X.shape[1])]
    frame = pd.DataFrame(data.X, columns=cols).assign(label=data.y, qid=data.qid)
    bound = PairLogit(data.y, data.group_ptr)
    start = bound.loss(np.zeros(data.n_docs))
    # workers in this process: they see the objective registered here (spawned workers would
    # need it registered at their import, like any objective shipped by name)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client, dask.config.set(scheduler=client):
        parts = bpd.repartition_by_query(frame, npartitions=2, client=client)
        ranker = bpd.train_lightgbm(client, parts, NAME, objective_params={"sigma": 1.5}, n_estimators=6,
                                    learning_rate=0.3, min_child_samples=3, verbose=-1)
        out = bpd.train_xgboost(client, parts, NAME, params={"max_depth": 3, "eta": 0.3}, num_boost_round=6)
    assert bound.loss(ranker.to_local().predict(frame[cols])) < 0.8 * start
    assert bound.loss(out["booster"].predict(xgb.DMatrix(frame[cols]), output_margin=True)) < 0.8 * start


# ---- boostplug compare -----------------------------------------------------------------------------
BUILTIN = ["lambdarank", "rank_xendcg", "regression", "qbrank", "mpboost-binary", "mpboost-ldd", "mpboost-logdd",
           "mpboost-logitdd", "ndcg_boost", "rankboost-loss", "lambdarank-plugin",
           "yetirank", "yetiloss",
           "rank_ndcg-plugin", "rank_pair-plugin", "rank_map-plugin", "xendcg-plugin", "listnet",
           "ranknet", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp", "approx_ndcg", "approx_mrr", "listmle",
           "lambdamart_map", "lambdamart_err", "lambdamart_mrr", "lambdamart_rbp", "xgb-rank:ndcg",
           "xgb-rank:pairwise", "xgb-rank:map", "xgb-reg:squarederror", "xgb-qbrank", "xgb-mpboost-binary",
           "xgb-mpboost-ldd", "xgb-mpboost-logdd", "xgb-mpboost-logitdd", "xgb-ndcg_boost", "xgb-rankboost-loss",
           "xgb-lambdarank-plugin",
           "xgb-yetirank", "xgb-yetiloss",
           "xgb-rank_ndcg-plugin", "xgb-rank_pair-plugin", "xgb-rank_map-plugin", "xgb-xendcg-plugin", "xgb-listnet",
           "xgb-ranknet", "xgb-ndcg_loss1", "xgb-ndcg_loss2", "xgb-ndcg_loss2pp", "xgb-approx_ndcg", "xgb-approx_mrr",
           "xgb-listmle", "xgb-lambdamart_map", "xgb-lambdamart_err", "xgb-lambdamart_mrr", "xgb-lambdamart_rbp",
           "rb-d", "rb-c", "rankboost+",
           "adarank-map", "adarank-ndcg", "mpboost-stumps", "ndcg_boost-stumps", "linear-ridge", "linear-ranksvm"]
if "approx_ap" in objectives.names():  # written in JAX: registered with the jax extra only, after the others
    BUILTIN.insert(BUILTIN.index("lambdamart_rbp") + 1, "approx_ap")
    BUILTIN.insert(BUILTIN.index("approx_ap") + 1, "neural_ndcg")
    BUILTIN[BUILTIN.index("neural_ndcg") + 1:BUILTIN.index("neural_ndcg") + 1] = ["st_listnet", "rank_cosine"]
    BUILTIN.insert(BUILTIN.index("xgb-lambdamart_rbp") + 1, "xgb-approx_ap")
    BUILTIN.insert(BUILTIN.index("xgb-approx_ap") + 1, "xgb-neural_ndcg")
    BUILTIN[BUILTIN.index("xgb-neural_ndcg") + 1:BUILTIN.index("xgb-neural_ndcg") + 1] = ["xgb-st_listnet",
                                                                                         "xgb-rank_cosine"]


def _not_catboost(names: list[str]) -> list[str]:
    """The methods of LightGBM, XGBoost and the boosters (CatBoost's, with catboost installed, are
    tests/compare/test_catboost_methods.py's)."""
    return [n for n in names if not n.startswith("cb-")]


def test_compare_lists_it_while_registered_only() -> None:
    assert method_names() == list(METHODS)
    assert _not_catboost(method_names()) == BUILTIN
    assert DEFAULT_METHODS == ("lambdarank", "regression", "qbrank", "mpboost-logitdd", "ndcg_boost",
                               "rankboost-loss", "xgb-rank:ndcg", "rb-c", "ndcg_boost-stumps")
    objectives.register(PairLogit)
    try:
        names = _not_catboost(method_names())
        # registered after the built-in entries: after the last LightGBM one, and the last XGBoost one
        assert names[names.index(BUILTIN[BUILTIN.index("xgb-rank:ndcg") - 1]) + 1] == NAME
        assert names[names.index(BUILTIN[BUILTIN.index("rb-d") - 1]) + 1] == f"xgb-{NAME}"
        assert [n for n in names if n not in (NAME, f"xgb-{NAME}")] == BUILTIN
        m, x = get_method(NAME), get_method(f"xgb-{NAME}")
        assert (m.framework, m.loss, x.framework, x.loss) == ("lightgbm", f"boostplug:{NAME}", "xgboost",
                                                              f"boostplug:{NAME}")
        assert m.parameters()["sigma"] == 1.0 and m.parameters()["hessian"] == "exact"
        assert m.search_space()["sigma"].describe() == "0.5..4.0 (log)"
        assert get_method(f"{NAME}:sigma=2").loss_params == {"sigma": 2}
    finally:
        objectives.unregister(NAME)
    assert _not_catboost(method_names()) == BUILTIN
    with pytest.raises(ValueError, match=f"unknown method '{NAME}'"):
        get_method(NAME)


def test_row_params_and_fixed_params_are_no_compare_settings() -> None:
    class Rows(PairLogit):
        name = "pairlogit_rows"
        params = {**PairLogit.params, "pairs": Param(None, "rows", "explicit pairs", convert=pair_rows)}

    objectives.register(Rows, fixed={"hessian": "bound"}, methods={"pl-a": {"sigma": 2.0}, "pl-b": {}})
    try:
        m = get_method("xgb-pl-a")
        assert m.loss_params == {"sigma": 2.0} and "pairs" not in m.parameters() and "hessian" not in m.parameters()
        assert set(m.search_space()) - set(get_method("lambdarank").search_space()) == {"sigma"}
        with pytest.raises(ValueError, match="has no parameter 'pairs'"):
            get_method("pl-b[pairs=[[0,1]]]")
        with pytest.raises(ValueError, match="has no parameter 'hessian'"):
            get_method("pl-b:hessian=exact")
    finally:
        objectives.unregister("pairlogit_rows")


def test_a_method_name_a_builtin_has_is_not_listed() -> None:
    objectives.register(PairLogit, name="shadow", methods={"lambdarank": {}, "shadow": {}})
    try:
        with pytest.warns(UserWarning, match="'lambdarank' is taken"):
            names = method_names()
        assert METHODS["lambdarank"].loss == "lambdarank" and names.count("lambdarank") == 1 and "shadow" in names
    finally:
        objectives.unregister("shadow")


FAST = ["--rounds", "3", "--no-progress", "--no-plots"]


def test_compare_cli_trains_and_tunes_it(registered, letor_file: Path, tmp_path: Path, capsys) -> None:
    pytest.importorskip("optuna")
    out = tmp_path / "out"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods",
                 f"{NAME},xgb-{NAME},{NAME}:sigma=2.5", "--tune", "2", "--out", str(out), *FAST]) == 0
    table = capsys.readouterr().out
    assert f"{NAME}[sigma=2.5]" in table and f"xgb-{NAME}" in table
    payload = json.loads((out / "results.json").read_text())
    runs = {r["method"]: r for r in payload["results"]}
    assert list(runs) == [NAME, f"xgb-{NAME}", f"{NAME}[sigma=2.5]"] and not payload["failures"]
    for name in (NAME, f"xgb-{NAME}"):
        tuning = runs[name]["info"]["tuning"]
        assert tuning["n_trials"] == 2 and tuning["space"]["sigma"] == "0.5..4.0 (log)"
        assert 0.5 <= tuning["trials"][1]["params"]["sigma"] <= 4.0
    assert "sigma" not in runs[f"{NAME}[sigma=2.5]"]["info"]["tuning"]["space"]  # a setting is not searched
    assert main(["compare", "--methods", "list"]) == 0
    listed = [line.split()[:2] for line in capsys.readouterr().out.splitlines()]
    assert [NAME, "lightgbm"] in listed and [f"xgb-{NAME}", "xgboost"] in listed


def test_compare_setting_reaches_training_and_misspelt_one_is_refused(registered, data, monkeypatch,
                                                                       capsys) -> None:
    train, vali, test = three_way_split(data, test_size=6, vali_size=6)
    kw = {"rounds": 3, "tree_params": {"min_data_in_leaf": 3, "num_leaves": 7}, "seed": 0, "threads": 1}
    a, b = (get_method(n).train(train, vali, test, **kw) for n in (NAME, f"{NAME}[sigma=3.0,hessian=bound]"))
    assert not np.allclose(a.vali_scores[-1], b.vali_scores[-1])
    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite a bad setting"))
    assert main(["compare", "--methods", f"{NAME}:sigam=2", *FAST]) == 2
    err = capsys.readouterr().err
    assert "has no parameter 'sigam'; did you mean sigma?" in err and NAME in err
    assert main(["compare", "--methods", f"xgb-{NAME}:sigma=-2", *FAST]) == 2
    assert "sigma must be" in capsys.readouterr().err
