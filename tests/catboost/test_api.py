"""CatBoost's own entry points, evaluation sets and early stopping, the saved record and the scikit-learn
ranker of boostplug.catboost."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest

from boostplug.data import load_example
from boostplug.metrics import ndcg

catboost = pytest.importorskip("catboost")
from boostplug import catboost as bpc  # noqa: E402

FAST = {"depth": 3, "learning_rate": 0.3, "thread_count": 1, "random_seed": 7}


@pytest.fixture(scope="module")
def example():
    return load_example()


@pytest.fixture(scope="module")
def pools(example):
    train, test = example
    return bpc.pool(train.X, train.y, group_ptr=train.group_ptr), bpc.pool(test.X, test.y, group_ptr=test.group_ptr)


# -- CatBoost's own entry points ------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda obj: catboost.CatBoost({"loss_function": obj, "iterations": 2, "eval_metric": "RMSE"}),
    lambda obj: catboost.CatBoost({"loss_function": obj, "iterations": 2}),
    lambda obj: catboost.CatBoostRanker(loss_function=obj, iterations=2),
], ids=["CatBoost-with-eval-metric", "CatBoost", "CatBoostRanker"])
def test_an_objective_handed_to_catboost_fails_at_once_naming_the_route_that_works(pools, make) -> None:
    with pytest.raises(TypeError, match=r"boostplug\.catboost\.train\(params, pool, objective, rounds\)"):
        make(bpc.objective("qbrank")).fit(pools[0])


def test_catboosts_own_losses_see_the_true_labels(example, pools) -> None:
    """A bpc.pool handed to CatBoost's own ranker trains on the labels, as a plain Pool with them does
    (on main it trained on the row indices)."""
    train, test = example
    np.testing.assert_array_equal(pools[0].get_label(), train.y)
    plain = catboost.Pool(train.X, label=train.y, group_id=train.qid)
    fit = [catboost.CatBoostRanker(loss_function="YetiRank", iterations=5, depth=3, random_seed=0, thread_count=1,
                                   verbose=False, allow_writing_files=False).fit(p).predict(test.X) for p in (pools[0], plain)]
    np.testing.assert_allclose(fit[0], fit[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rounds", [10 ** 30, 2 ** 31, 0, 2.0, True])
def test_round_counts_are_checked_as_elsewhere(pools, rounds) -> None:
    with pytest.raises(ValueError, match="num_boost_round must be"):
        bpc.train(FAST, pools[0], "qbrank", rounds)


# -- evaluation sets, early stopping, best iteration ----------------------------------------------------


def test_valid_sets_are_scored_with_boostplugs_metrics_every_round(example, pools) -> None:
    train, test = example
    result: dict = {}
    seen = []
    model = bpc.train(FAST, pools[0], "lambdarank", 4, valid_sets=[pools[1]], valid_names=["test"],
                      metric=["map@10", "ndcg@10"], evals_result=result,
                      callback=lambda t, m: seen.append(m.predict(test.X, prediction_type="RawFormulaVal")))
    assert model.tree_count_ == 4 and list(result) == ["test"] and len(result["test"]["ndcg@10"]) == 4
    for t, scores in enumerate(seen):  # each recorded value is the metric of the model after that round
        assert result["test"]["ndcg@10"][t] == pytest.approx(ndcg(scores, test.y, test.group_ptr, k=10), rel=1e-12)


def test_early_stopping_keeps_the_best_round(pools) -> None:
    result: dict = {}
    model = bpc.train({**FAST, "learning_rate": 0.8}, pools[0], "ranknet", 60, valid_sets=[pools[1]],
                      early_stopping_rounds=3, evals_result=result)
    values = result["valid_0"]["ndcg@10"]
    best = int(np.argmax(values)) + 1
    assert len(values) == best + 3 < 60  # stopped 3 rounds after the best
    assert model.tree_count_ == best
    assert json.loads(model.get_metadata()["params"])["boosting_options"]["iterations"] == best


@pytest.mark.parametrize("patience", [1000, None])
def test_the_best_round_is_served_when_the_rounds_run_out_first(example, pools, patience) -> None:
    """CatBoost's use_best_model: with a valid set the model keeps its best round, stopped or not (on
    main patience 1000 and 40 rounds kept all 40 trees where the best round was earlier);
    use_best_model=False keeps every tree, as in CatBoost."""
    train, test = example
    result: dict = {}
    model = bpc.train({**FAST, "learning_rate": 0.8}, pools[0], "ranknet", 40, valid_sets=[pools[1]],
                      early_stopping_rounds=patience, evals_result=result)
    values = result["valid_0"]["ndcg@10"]
    assert len(values) == 40 and int(np.argmax(values)) + 1 < 40  # ran out of rounds, the best one earlier
    assert model.tree_count_ == int(np.argmax(values)) + 1
    assert model.get_params()["iterations"] == model.tree_count_ and "use_best_model" not in model.get_params()
    every = bpc.train({**FAST, "learning_rate": 0.8, "use_best_model": False}, pools[0], "ranknet", 40,
                      valid_sets=[pools[1]], early_stopping_rounds=patience)
    assert every.tree_count_ == 40 and every.get_params()["use_best_model"] is False
    r = bpc.CatBoostRanker("ranknet", n_estimators=40, **{**FAST, "learning_rate": 0.8},
                           early_stopping_rounds=patience).fit(train.X, train.y, qid=train.qid,
                                                              eval_set=[(test.X, test.y)], eval_qid=[test.qid])
    assert r.best_iteration_ == r.model_.tree_count_ == int(np.argmax(values)) + 1  # on main: tree_count_, 40
    plain = bpc.CatBoostRanker("ranknet", n_estimators=3, **FAST).fit(train.X, train.y, qid=train.qid)
    assert plain.best_iteration_ is None and plain.model_.tree_count_ == 3  # no eval set: no best round


def test_the_last_valid_set_is_the_one_served_as_in_catboost(example, pools) -> None:
    """Two valid sets whose best rounds differ (one with its grades reversed): the model keeps the
    last set's best round in either order, as CatBoost's use_best_model does."""
    _, test = example
    reversed_ = bpc.pool(test.X, 4 - test.y, group_ptr=test.group_ptr)
    served = []
    for sets in ([pools[1], reversed_], [reversed_, pools[1]]):
        result: dict = {}
        model = bpc.train({**FAST, "learning_rate": 0.8}, pools[0], "ranknet", 30, valid_sets=sets,
                          early_stopping_rounds=1000, evals_result=result)
        curves = [v["ndcg@10"] for v in result.values()]
        assert model.tree_count_ == int(np.argmax(curves[-1])) + 1 != int(np.argmax(curves[0])) + 1
        served.append(model.tree_count_)
    assert served[0] != served[1]


@pytest.mark.parametrize("values, best", [
    ([np.nan, 0.5, 0.4, 0.6, 0.6, 0.5, 0.55, 0.9], 4),  # a NaN first, then a tie that is no gain
    ([np.nan] * 8, 0),  # no round with a value: none is best, every tree kept
], ids=["nan-first", "all-nan"])
def test_catboost_the_boosters_and_the_workers_stop_at_the_same_round(monkeypatch, example, pools, values,
                                                                      best) -> None:
    """One rule for every loop of boostplug's own: the same metric values stop CatBoost's loop, a
    reference booster's and a distributed LightGBM and XGBoost worker's at the same round, the same
    one best (on main the XGBoost worker ran XGBoost's own rule: a NaN first round was its best)."""
    import lightgbm as lgb

    from boostplug.boosters import RankBoost
    from boostplug.frameworks._metric_spec import MetricSpec
    from boostplug.frameworks.distributed import lightgbm_worker, xgboost_worker
    from boostplug.frameworks.distributed.rows import Part

    train, test = example
    monkeypatch.setattr(MetricSpec, "value", lambda self, s, prepared: values[len(seen)])
    seen: list = []
    model = bpc.train(FAST, pools[0], "ranknet", 8, valid_sets=[pools[1]], early_stopping_rounds=3,
                      callback=lambda t, m: seen.append(t))
    assert (len(seen), model.tree_count_) == (best + 3, best or best + 3)

    monkeypatch.setattr(RankBoost, "_eval_scorer", lambda self, y, gp: lambda s: values[len(self.history_)])
    booster = RankBoost(n_rounds=8, early_stopping_rounds=3).fit(train.X, train.y, qid=train.qid,
                                                                 eval_set=[(test.X, test.y, test.qid)])
    assert (len(booster.history_), booster.best_iteration_) == (best + 3, best or None)

    left = iter(values)
    monkeypatch.setattr(lightgbm_worker, "from_sums", lambda sums: next(left))
    worker = lightgbm_worker._EarlyStopping(MetricSpec("ndcg@10"), Part(test.X, test.y, test.qid, None), 3)
    env = type("Env", (), {"model": type("Model", (), {"predict": lambda self, X, **_: np.zeros(len(X))})(),
                           "iteration": 0, "end_iteration": 100})()
    with pytest.raises(lgb.callback.EarlyStopException) as stop:
        for _ in values:
            worker(env)
    assert (len(values) - len(list(left)), stop.value.best_iteration + 1) == (best + 3, best)

    attrs: dict = {}
    booster_ = type("Booster", (), {"set_attr": lambda self, **kw: attrs.update(kw)})()
    callback = xgboost_worker._best_round(3, MetricSpec("ndcg@10"))
    rounds = next(t + 1 for t in range(len(values)) if callback.after_iteration(
        booster_, t, {"validation": {"ndcg@10": values[:t + 1]}}))
    assert (rounds, int(attrs.get("best_iteration", -1)) + 1) == (best + 3, best)


@pytest.mark.parametrize("kwargs, says", [
    ({"early_stopping_rounds": 2}, "needs a valid set"),
    ({"valid_sets": ["x"], "valid_names": ["a", "b"]}, "valid_names"),
    ({"early_stopping_rounds": 2 ** 31, "valid_sets": ["x"]}, "early_stopping_rounds must be at most"),
])
def test_bad_evaluation_settings_are_refused(pools, kwargs, says) -> None:
    with pytest.raises(ValueError, match=says):
        bpc.train(FAST, pools[0], "qbrank", 2, **kwargs)


def test_a_plain_catboost_pool_as_a_valid_set_is_refused(example, pools) -> None:
    _, test = example
    with pytest.raises(ValueError, match="boostplug.catboost.pool"):
        bpc.train(FAST, pools[0], "qbrank", 2, valid_sets=[catboost.Pool(test.X, label=test.y, group_id=test.qid)])


# -- the saved record --------------------------------------------------------------------------------


def test_a_trained_model_says_its_seed_rounds_and_objective(pools, tmp_path) -> None:
    """On main: iterations 1, random_seed of the last round, and nothing naming the objective."""
    model = bpc.train(FAST, pools[0], bpc.objective("ranknet", sigma=2.0), 5)
    bpc.save_model(model, tmp_path / "m.cbm")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = bpc.load_model(tmp_path / "m.cbm")
    params = loaded.get_all_params()
    assert params["iterations"] == 5 and params["random_seed"] == 7
    record = bpc.objective_of(tmp_path / "m.cbm")
    assert record == bpc.objective_of(model) and record.name == "ranknet" and record.params == {"sigma": 2.0}
    assert loaded.get_metadata()["boostplug_objective_rounds"] == "5"
    np.testing.assert_array_equal(loaded.predict(pools[1]), model.predict(pools[1]))


def test_a_reloaded_model_gives_the_parameters_it_was_trained_with(pools, tmp_path) -> None:
    """On main a reloaded model's get_params() said iterations 1, PythonUserDefinedPerObject, the eval
    metric of one round and the l2_leaf_reg rescaled to RankNet's split weights."""
    model = bpc.train({**FAST, "l2_leaf_reg": 2.0}, pools[0], "ranknet", 4)
    bpc.save_model(model, tmp_path / "m.cbm")
    for params in (model.get_params(), bpc.load_model(tmp_path / "m.cbm").get_params()):
        assert params["iterations"] == 4 and params["loss_function"] == "boostplug:ranknet"
        assert params["l2_leaf_reg"] == 2.0 and params["random_seed"] == 7 and "eval_metric" not in params


def test_a_tampered_record_is_refused(pools, tmp_path) -> None:
    """On main CatBoost's files carried no checksum: the edited record loaded as listmle."""
    model = bpc.train(FAST, pools[0], "ranknet", 3)
    bpc.save_model(model, tmp_path / "m.cbm")
    assert "model_sha256" not in model.get_metadata()["boostplug_objective"]  # it describes the file only
    data = (tmp_path / "m.cbm").read_bytes()
    assert data.count(b'"objective":"ranknet"') == 1
    (tmp_path / "t.cbm").write_bytes(data.replace(b'"objective":"ranknet"', b'"objective":"listmle"'))
    for read in (bpc.load_model, bpc.objective_of):
        with pytest.raises(ValueError, match="checksum does not match"):
            read(tmp_path / "t.cbm")
    model.get_metadata()["boostplug_objective_rounds"] = "banana"
    with pytest.raises(ValueError, match="boostplug_objective_rounds is not a round count: 'banana'"):
        bpc.objective_of(model)
    with pytest.raises(ValueError, match="not a round count"):
        bpc.save_model(model, tmp_path / "b.cbm")
        bpc.load_model(tmp_path / "b.cbm")
    model.get_metadata()["boostplug_objective_rounds"] = "2"  # as init_model leaves it on a continued model
    with pytest.raises(ValueError, match="for its first 2 rounds, but it has 3"):
        bpc.save_model(model, tmp_path / "s.cbm")


def test_a_record_without_its_checksum_is_refused_naming_the_file_and_the_fix(pools, tmp_path) -> None:
    """On main the checksum was optional: a record edited to listmle and saved by CatBoost's own writer
    (or written before the checksum existed) loaded as listmle without a word."""
    model = bpc.train(FAST, pools[0], "ranknet", 3)
    model.get_metadata()["boostplug_objective"] = model.get_metadata()["boostplug_objective"].replace("ranknet",
                                                                                                      "listmle")
    model.save_model(str(tmp_path / "own.cbm"))  # CatBoost's writer: no model_sha256
    for read in (bpc.load_model, bpc.objective_of):
        with pytest.raises(ValueError, match=r"own\.cbm: its boostplug_objective record has no model_sha256 .*"
                                             r"save it again: boostplug\.catboost\.save_model"):
            read(tmp_path / "own.cbm")
    bpc.save_model(catboost.CatBoost().load_model(str(tmp_path / "own.cbm")), tmp_path / "again.cbm")
    assert bpc.objective_of(tmp_path / "again.cbm").name == "listmle"  # the fix: integrity, not authenticity


def test_a_file_catboost_cannot_read_is_refused_naming_it(pools, tmp_path) -> None:
    """On main: CatBoost's "Flatbuffers model verification failed", without the path."""
    bpc.save_model(bpc.train(FAST, pools[0], "ranknet", 3), tmp_path / "m.cbm")
    data = (tmp_path / "m.cbm").read_bytes()
    for name, content in (("cut.cbm", data[:len(data) // 2]), ("empty.cbm", b""), ("text.cbm", b"not a model")):
        (tmp_path / name).write_bytes(content)
        for read in (bpc.load_model, bpc.objective_of):
            with pytest.raises(ValueError, match=rf"{name.replace('.', '[.]')}: not a model file CatBoost reads"):
                read(tmp_path / name)


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_a_record_nested_too_deep_is_refused_not_a_recursion_error(pools, depth) -> None:
    """On main objective_of raised a bare RecursionError."""
    model = bpc.train(FAST, pools[0], "ranknet", 1)
    model.get_metadata()["boostplug_objective"] = ('{"format":1,"objective":"ranknet","params":{"sigma":'
                                                   + "[" * depth + "]" * depth + "}}")
    with pytest.raises(ValueError, match="boostplug_objective record is not JSON.*recursion"):
        bpc.objective_of(model)


def test_catboosts_private_calls_are_there_and_a_missing_one_is_named(monkeypatch, pools, tmp_path) -> None:
    """The private names boostplug.catboost uses exist in the CatBoost installed (the range
    pyproject.toml asks for); a release without one fails naming it, not with an AttributeError."""
    import tomllib
    from pathlib import Path

    from boostplug.catboost._train import TESTED

    model = bpc.train(FAST, pools[0], "ranknet", 1)
    for name in ("_serialize_model", "_init_params", "_canonized_params",
                 "_get_params_from_model_updated_with_init_params"):
        assert hasattr(model, name), name
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    assert f"catboost{TESTED}" in project["optional-dependencies"]["catboost"]
    monkeypatch.delattr(next(c for c in type(model).__mro__ if "_serialize_model" in vars(c)), "_serialize_model")
    with pytest.raises(RuntimeError, match=r"CatBoost's private _serialize_model, which catboost 1\.2\.\d+ "
                                           r"does not have: boostplug is tested with catboost>=1\.2,<1\.3"):
        bpc.save_model(model, tmp_path / "m.cbm")


def test_a_model_without_the_record_warns_when_saved_and_loaded(example, tmp_path) -> None:
    train, _ = example
    own = catboost.CatBoost({"iterations": 2, "verbose": False, "allow_writing_files": False}).fit(train.X, train.y)
    with pytest.warns(UserWarning, match="records no boostplug objective"):
        bpc.save_model(own, tmp_path / "own.cbm")
    with pytest.warns(UserWarning, match="records no boostplug objective"):
        bpc.load_model(tmp_path / "own.cbm")
    assert bpc.objective_of(own) is None


def test_a_pickled_model_carries_no_rounds_derivatives(pools) -> None:
    """On main the model's parameters held the last round's derivative and score arrays."""
    model = bpc.train(FAST, pools[0], "qbrank", 3)
    assert model.get_params()["loss_function"] == "boostplug:qbrank"  # the name, not the derivatives
    back = pickle.loads(pickle.dumps(model))
    assert len(pickle.dumps(model)) < len(model._serialize_model()) + 8 * pools[0].num_row()  # < one array
    assert bpc.objective_of(back).name == "qbrank"
    np.testing.assert_array_equal(back.predict(pools[1]), model.predict(pools[1]))


@pytest.mark.parametrize("weights, says", [
    (lambda n: np.full(n, np.nan), "must be finite and non-negative; row 0 has nan"),
    (lambda n: np.full(n, np.inf), "must be finite and non-negative; row 0 has inf"),
    (lambda n: np.full(n, 1e300), "must have a positive sum within float32"),
    (lambda n: -np.ones(n), "must be finite and non-negative; row 0 has -1.0"),
    (lambda n: np.zeros(n), "must have a positive sum within float32.*got 0 over"),
    (lambda n: np.ones(n - 1), "has length"),
    (lambda n: np.ones((n, 2)), "must be one-dimensional"),
], ids=["nan", "inf", "1e300", "negative", "all-zero", "short", "2-D"])
def test_split_weights_are_checked_naming_them(pools, monkeypatch, weights, says) -> None:
    """On main each reached CatBoost: its "Weights[5] is negative", "This should be unreachable"..."""
    from boostplug.objectives import RankNet

    n = pools[0].num_row()
    monkeypatch.setattr(RankNet, "split_weights", lambda self: weights(n))
    with pytest.raises(ValueError, match=r"ranknet's split_weights\(\) " + says):
        bpc.train(FAST, pools[0], "ranknet", 1)


def test_a_pools_weights_are_set_when_it_is_made(example) -> None:
    """On main set_weight and set_group_weight were taken, and the rounds went on without them."""
    train, _ = example
    p = bpc.pool(train.X, train.y, group_ptr=train.group_ptr)
    for setter in (p.set_weight, p.set_group_weight):
        with pytest.raises(ValueError, match=r"boostplug.catboost.pool\(..., group_weight=...\)"):
            setter(np.ones(train.X.shape[0]))


def test_the_pool_is_not_changed_by_training(example, pools) -> None:
    train, _ = example
    bpc.train(FAST, pools[0], "qbrank", 1)
    assert not pools[0].is_quantized()
    np.testing.assert_array_equal(pools[0].get_label(), train.y)


# -- the scikit-learn ranker ---------------------------------------------------------------------------


def test_the_ranker_fits_with_eval_set_and_early_stopping(example) -> None:
    train, test = example
    r = bpc.CatBoostRanker("ranknet", n_estimators=40, depth=3, learning_rate=0.8, thread_count=1,
                           early_stopping_rounds=3, sigma=1.5)
    assert r.fit(train.X, train.y, group_id=train.qid, eval_set=[(test.X, test.y)], eval_qid=[test.qid]) is r
    values = r.evals_result_["validation_0"]["ndcg@10"]
    assert r.best_iteration_ == int(np.argmax(values)) + 1 == r.model_.tree_count_
    assert r.score(test.X, test.y, qid=test.qid) == pytest.approx(max(values), rel=1e-12)
    assert bpc.objective_of(r.model_).params == {"sigma": 1.5}
    back = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(back.predict(test.X), r.predict(test.X))


def test_the_rankers_sample_weights_are_the_pools_query_weights(example) -> None:
    """``sample_weight`` (alike within a query) reaches the pool as ``group_weight``: the same model
    as bpc.train on a pool with those query weights, another than without them."""
    train, _ = example
    qw = 1.0 + np.arange(len(train.group_ptr) - 1) % 3
    rows = np.repeat(qw, np.diff(train.group_ptr))
    r = bpc.CatBoostRanker("ranknet", n_estimators=5, **FAST).fit(train.X, train.y, qid=train.qid, sample_weight=rows)
    direct = bpc.train(FAST, bpc.pool(train.X, train.y, group_ptr=train.group_ptr, group_weight=qw), "ranknet", 5)
    np.testing.assert_allclose(r.predict(train.X), direct.predict(train.X, prediction_type="RawFormulaVal"),
                               rtol=1e-12, atol=1e-12)
    plain = bpc.CatBoostRanker("ranknet", n_estimators=5, **FAST).fit(train.X, train.y, qid=train.qid)
    assert np.abs(plain.predict(train.X) - r.predict(train.X)).max() > 1e-6
    uneven = rows.copy()
    uneven[train.group_ptr[np.flatnonzero(np.diff(train.group_ptr) > 1)[0]] + 1] += 1.0  # a query's second row
    with pytest.raises(ValueError, match="weight"):
        bpc.CatBoostRanker("ranknet", n_estimators=1).fit(train.X, train.y, qid=train.qid, sample_weight=uneven)


def test_the_rankers_parameters_and_refusals(example) -> None:
    train, _ = example
    r = bpc.CatBoostRanker("ranknet", n_estimators=2, sigma=2.0, l2_leaf_reg=1.0)
    assert r.get_params()["sigma"] == 2.0 and r.set_params(sigma=3.0, depth=2).get_params()["sigma"] == 3.0
    with pytest.raises(ValueError, match="is a parameter of the boostplug objective"):
        bpc.CatBoostRanker("ranknet", n_estimators=2, ddf="ldd").fit(train.X, train.y, qid=train.qid)
    with pytest.raises(ValueError, match="catboost.CatBoostRanker"):
        bpc.CatBoostRanker("QuerySoftMax", n_estimators=2).fit(train.X, train.y, qid=train.qid)
    # on main CatBoost's spelling trained boostplug's yetirank
    with pytest.raises(ValueError, match=r"'YetiRank' is CatBoost's spelling.*loss_function='YetiRank'.*'yetirank'"):
        bpc.CatBoostRanker("YetiRank", n_estimators=2).fit(train.X, train.y, qid=train.qid)
    with pytest.raises(ValueError, match="not both"):
        bpc.CatBoostRanker("ranknet").fit(train.X, train.y, qid=train.qid, group_id=train.qid)
    with pytest.raises(ValueError, match="n_estimators must be at most"):
        bpc.CatBoostRanker("ranknet", n_estimators=2 ** 31).fit(train.X, train.y, qid=train.qid)


def test_grid_search_with_group_kfold(example) -> None:
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold, KFold

    train, _ = example
    est = bpc.CatBoostRanker("ranknet", n_estimators=3, depth=2, thread_count=1)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(est, {"sigma": [0.5, 2.0]}, cv=GroupKFold(2), error_score="raise")
        search.fit(train.X, train.y, qid=train.qid, groups=train.qid)
        assert search.best_params_["sigma"] in (0.5, 2.0) and np.all(np.isfinite(search.cv_results_["mean_test_score"]))
        with pytest.raises(ValueError, match="share query ids"):
            GridSearchCV(est, {"sigma": [0.5]}, cv=KFold(2, shuffle=True, random_state=0),
                         error_score="raise").fit(train.X, train.y, qid=train.qid)
