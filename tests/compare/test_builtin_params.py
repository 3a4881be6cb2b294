"""The built-in methods' own loss parameters in ``boostplug compare`` (issue 80): given as
``lambdarank[sigmoid=2]``, they train what the framework's own API trains with them; their
defaults and names are the installed frameworks'; ``--tune`` searches them and the catalogue
losses' truncations; the table names the pairs each loss uses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boostplug.compare import Result, get_method, run
from boostplug.compare.methods import TREE_PARAMS, Method, pair_rule
from boostplug.compare.report import format_table
from boostplug.compare.search_spaces import TREE_SPACE, Dist
from boostplug.data import make_ranking
from boostplug.objectives.lambdarank import EVERY_PAIR
from tests._helpers import three_way_split

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

#: The loss parameters of LightGBM's docs (Parameters, "Objective Parameters") for its two ranking
#: objectives: LightGBM's package carries no parameter docs, so the list is pinned here; the test
#: checks each against the parameters the installed LightGBM writes into a model.
LIGHTGBM_DOCUMENTED = {
    "lambdarank": ("sigmoid", "lambdarank_truncation_level", "lambdarank_norm", "label_gain",
                   "lambdarank_position_bias_regularization"),
    "rank_xendcg": ("objective_seed",),
}


@pytest.fixture(scope="module")
def fold():
    # queries of 40-80 documents: a truncation at 30 leaves pairs out
    d = make_ranking(n_queries=24, docs_per_query=(40, 80), n_features=6, n_informative=3, seed=4)
    return three_way_split(d, test_size=6, vali_size=6)


def _lightgbm_parameters(objective: str, fold) -> dict[str, str]:
    """The parameters the installed LightGBM writes into a model of ``objective`` (``[name: value]``)."""
    train = fold[0]
    booster = lgb.train({"objective": objective, "verbose": -1},
                        lgb.Dataset(train.X, train.y, group=np.diff(train.group_ptr)), 1)
    text = booster.model_to_string().split("\nparameters:\n", 1)[1].split("\nend of parameters", 1)[0]
    return dict(line.strip("[]").split(": ", 1) for line in text.splitlines() if ": " in line)


def _xgboost_parameters(objective: str, fold) -> dict[str, str]:
    """The loss parameters the installed XGBoost's config holds for ``objective``."""
    train = fold[0]
    dtrain = xgb.DMatrix(train.X, label=(train.y > 0) if objective == "rank:map" else train.y)
    dtrain.set_group(np.diff(train.group_ptr))
    booster = xgb.train({"objective": objective}, dtrain, 1)
    return json.loads(booster.save_config())["learner"]["objective"]["lambdarank_param"]


def _same(default, text: str) -> bool:
    """Whether compare's ``default`` is the framework's written default ``text`` (``None``: unset)."""
    if default is None:  # LightGBM writes an unset label_gain as nothing, XGBoost its unset pair count as 2^32 - 1
        return text in ("", str(2**32 - 1))
    return text == default if isinstance(default, str) else float(text) == float(default)


def _loss_params(name: str) -> dict:
    return {k: v for k, v in get_method(name).parameters().items() if k not in TREE_PARAMS}


@pytest.mark.parametrize("objective", sorted(LIGHTGBM_DOCUMENTED))
def test_lightgbm_builtins_take_every_documented_loss_parameter_at_lightgbms_default(objective, fold) -> None:
    written = _lightgbm_parameters(objective, fold)
    own = _loss_params(objective)
    assert set(own) == set(LIGHTGBM_DOCUMENTED[objective]) <= set(written)
    for key, default in own.items():
        assert _same(default, written[key]), (key, default, written[key])


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:pairwise", "rank:map"])
def test_xgboost_builtins_take_every_loss_parameter_of_the_installed_xgboost_at_its_default(objective, fold) -> None:
    written = _xgboost_parameters(objective, fold)
    if objective != "rank:ndcg":  # NDCG's gain: XGBoost's config carries it for all three, only rank:ndcg reads it
        written.pop("ndcg_exp_gain")
    own = _loss_params(f"xgb-{objective}")
    assert set(own) == set(written)
    for key, default in own.items():
        assert _same(default, written[key]), (key, default, written[key])


def _staged_test_scores(name: str, fold, rounds: int = 6):
    train, vali, test = fold
    return get_method(name).train(train, vali, test, rounds=rounds, tree_params=TREE_PARAMS, seed=0,
                                  threads=1).test_scores[-1]


def test_lambdarank_with_its_parameters_trains_what_lgb_train_trains(fold) -> None:
    train, _, test = fold
    scores = _staged_test_scores("lambdarank[lambdarank_truncation_level=1000,sigmoid=2,label_gain=[0,1,2,3,4]]",
                                 fold)
    params = {**TREE_PARAMS, "objective": "lambdarank", "lambdarank_truncation_level": 1000, "sigmoid": 2,
              "label_gain": [0, 1, 2, 3, 4], "verbose": -1, "seed": 0, "deterministic": True, "num_threads": 1}
    booster = lgb.train(params, lgb.Dataset(train.X, train.y, group=np.diff(train.group_ptr)), 6)
    np.testing.assert_allclose(scores, booster.predict(test.X, raw_score=True), rtol=1e-12, atol=1e-12)
    assert not np.allclose(scores, _staged_test_scores("lambdarank", fold))  # the settings reached LightGBM


@pytest.mark.parametrize("spec,given", [
    ("xgb-rank:ndcg[lambdarank_pair_method=mean,lambdarank_num_pair_per_sample=4,ndcg_exp_gain=false]",
     {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 4, "ndcg_exp_gain": False}),
    ("xgb-rank:pairwise[lambdarank_num_pair_per_sample=100,lambdarank_score_normalization=false]",
     {"lambdarank_num_pair_per_sample": 100, "lambdarank_score_normalization": False}),
])
def test_xgboost_builtins_with_their_pair_parameters_train_what_xgb_train_trains(spec, given, fold) -> None:
    train, _, test = fold
    scores = _staged_test_scores(spec, fold)
    dtrain = xgb.DMatrix(train.X, label=train.y)
    dtrain.set_group(np.diff(train.group_ptr))
    params = {"objective": get_method(spec).loss, **given, "grow_policy": "lossguide", "max_depth": 0,
              "tree_method": "hist", "seed": 0, "nthread": 1, "eta": 0.05, "max_leaves": 31,
              "min_child_weight": 1e-3, "lambda": 0.0, "colsample_bytree": 1.0, "max_bin": 255}
    booster = xgb.train(params, dtrain, 6)
    np.testing.assert_allclose(scores, booster.predict(xgb.DMatrix(test.X), output_margin=True), rtol=1e-6)
    assert not np.allclose(scores, _staged_test_scores(spec.split("[")[0], fold))


@pytest.mark.parametrize("spec,message", [
    ("lambdarank[lambdarank_truncation_levl=5]", "did you mean lambdarank_truncation_level"),
    ("lambdarank[sigmoid=-1]", r"sigmoid must be .*got -1"),
    ("lambdarank[lambdarank_truncation_level=0]", r"lambdarank_truncation_level must be .*got 0"),
    ("lambdarank[label_gain=[0,1,-3]]", r"label_gain\[2\] = -3"),
    ("lambdarank[position=[0,1]]", "has no parameter 'position'"),  # the copy's alone: the data's positions
    ("rank_xendcg[objective_seed=1.5]", "objective_seed must be an integer"),
    ("xgb-rank:ndcg[lambdarank_pair_method=top]", r"lambdarank_pair_method must be one of \['topk', 'mean'\], got 'top'"),
    ("xgb-rank:map[lambdarank_num_pair_per_sample=0]", r"lambdarank_num_pair_per_sample must be .*got 0"),
    ("xgb-rank:pairwise[ndcg_exp_gain=false]", "has no parameter 'ndcg_exp_gain'"),
])
def test_a_builtins_bad_setting_is_refused_before_training(spec, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        get_method(spec)


def _own_space(name: str) -> dict[str, str]:
    return {k: d.describe() for k, d in get_method(name).search_space().items() if k not in TREE_SPACE}


def test_tune_searches_each_methods_own_loss_parameters_and_truncation() -> None:
    every = f"{EVERY_PAIR}"
    assert _own_space("lambdarank") == _own_space("lambdarank-plugin") == {
        "sigmoid": "0.3..3.0 (log)", "lambdarank_truncation_level": f"{{10, 30, 100, {every}}}"}
    for name in ("xgb-rank:ndcg", "xgb-rank:pairwise", "xgb-rank:map"):
        assert _own_space(name) == {"lambdarank_num_pair_per_sample": f"{{10, 32, 100, {every}}}"}
    assert _own_space("xgb-rank:ndcg[lambdarank_pair_method=mean]") == {}  # a count per document, not a depth
    # XGBoost sizes its position biases by the level: every pair would allocate 2^31 of them (std::bad_alloc)
    for name in ("xgb-rank:ndcg[lambdarank_unbiased=true]", "rank_ndcg-plugin[lambdarank_unbiased=true]"):
        assert _own_space(name) == {"lambdarank_num_pair_per_sample": "{10, 32, 100}"}
    for name in ("ranknet", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp", "lambdamart_map", "xgb-ranknet"):
        assert _own_space(name)["truncation_level"] == "{10, 30, 100, none}"
    assert _own_space("lambdarank[lambdarank_truncation_level=50]") == {"sigmoid": "0.3..3.0 (log)"}  # fixed
    assert _own_space("rank_xendcg") == _own_space("regression") == {}
    assert Dist("categorical", choices=(10, EVERY_PAIR)).describe() == f"{{10, {every}}}"


def test_every_pair_is_every_pair_for_lightgbm(fold) -> None:
    """LightGBM takes the search's "every pair" (a 32-bit int's largest) and trains as with a level
    beyond the longest query."""
    longest = int(np.diff(fold[0].group_ptr).max())
    every = _staged_test_scores(f"lambdarank[lambdarank_truncation_level={EVERY_PAIR}]", fold)
    np.testing.assert_allclose(every, _staged_test_scores(f"lambdarank[lambdarank_truncation_level={longest}]",
                                                          fold), rtol=1e-12, atol=1e-12)


def test_a_tuned_run_searches_lambdaranks_truncation_and_sigmoid_and_the_table_says_so(fold) -> None:
    results = run(["lambdarank", "ranknet"], [(0, fold)], rounds=3, tune=3, seed=1, threads=1)
    for r in results:
        space = r.info["tuning"]["space"]
        assert set(space) - set(TREE_SPACE) == ({"sigmoid", "lambdarank_truncation_level"} if r.method == "lambdarank"
                                               else {"sigma", "truncation_level"})
        assert {k for t in r.info["tuning"]["trials"][1:] for k in t["params"]} >= set(space)
    table = " ".join(format_table(results, "lambdarank").split())  # unwrapped
    assert "--tune searched, besides the tree parameters: lambdarank: sigmoid 0.3..3.0 (log)," in table
    assert "ranknet: sigma 0.5..4.0 (log), truncation_level {10, 30, 100, none}" in table


def _result(method: str, fold: int, chosen: dict | None = None) -> Result:
    per_query = {"ndcg@10": [0.5, 0.6, 0.7], "map": [0.5, 0.6, 0.7]}
    tuning = {"space": {}, "chosen": chosen, "n_trials": 2, "seconds": 1.0} if chosen is not None else None
    return Result(method=method, framework="lightgbm", fold=fold, best_round=1, rounds_trained=1, seconds=1.0,
                  select_metric="ndcg@10", test={m: float(np.mean(v)) for m, v in per_query.items()},
                  test_per_query=per_query, info={"tuning": tuning} if tuning else {})


def test_the_table_names_the_pairs_each_loss_uses_where_they_differ() -> None:
    names = ["lambdarank", "ranknet", "xgb-rank:ndcg", "regression", "xgb-rank:pairwise[lambdarank_pair_method=mean]"]
    table = " ".join(format_table([_result(n, 0) for n in names], "lambdarank").split())
    assert ("pairs each loss uses: lambdarank: top 30; ranknet: every pair; xgb-rank:ndcg: top 32; "
            "xgb-rank:pairwise[lambdarank_pair_method=mean]: 1 drawn per document") in table
    assert "regression:" not in table
    same = format_table([_result(n, 0) for n in ("lambdarank", "lambdarank-plugin", "regression")], "lambdarank")
    assert "pairs each loss uses" not in same  # all top 30: nothing differs
    tuned = [_result("lambdarank", f, {"lambdarank_truncation_level": level})
             for f, level in enumerate((30, EVERY_PAIR))] + [_result("ranknet", f, {}) for f in range(2)]
    assert "lambdarank: top 30/every pair; ranknet: every pair" in " ".join(format_table(tuned, "lambdarank").split())


def test_the_pairs_note_asks_the_methods_and_hides_no_error(monkeypatch) -> None:
    clicks = _result("lgb-clicks", 0)
    clicks.info = {"clicks": {}}  # the click protocol's: another table's method
    table = " ".join(format_table([_result("lambdarank", 0), _result("ranknet", 0), _result("no-method", 0), clicks],
                                  "lambdarank").split())
    assert "pairs each loss uses: lambdarank: top 30; ranknet: every pair " in table

    def broken(self):
        raise ValueError("a bug of parameters()")

    # the note caught ValueError and TypeError to pass over other tables' names, and so any error of a method
    monkeypatch.setattr(Method, "parameters", broken)
    with pytest.raises(ValueError, match="a bug of parameters"):
        format_table([_result("lambdarank", 0), _result("ranknet", 0)], "lambdarank")


def test_pair_rule() -> None:
    assert pair_rule({"lambdarank_truncation_level": 30}) == "top 30"
    assert pair_rule({"truncation_level": None}) == pair_rule({"truncation_level": EVERY_PAIR}) == "every pair"
    assert pair_rule({"lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": None}) == "top 32"
    assert pair_rule({"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 3}) == "3 drawn per document"
    assert pair_rule({"sigma": 1.0}) == ""
