"""The copies of the built-ins read the framework's own parameters: swapping the built-in's name for
the plugin in a params dict (``"objective": "lambdarank"`` -> ``bpl.objective("lambdarank")``;
``objective="rank:ndcg"`` -> ``obj=bpx.objective("rank_ndcg").given_training(params)``, since
``xgb.train`` hands a custom objective no parameters) and keeping the rest grows the built-in's
trees, one test per parameter, through each entry point (``lgb.train``, ``lgb.cv``, the rankers,
``xgb.train``, ``boostplug.xgboost.cv``); a value given both to the objective and in the params that
differs is a ``ValueError`` naming both; another objective handed a built-in's parameter it does
not read warns once, naming it."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from boostplug.objectives.lambdarank import LambdaRank
from boostplug.objectives.xendcg import XENDCG, objective_seed_from_seed
from tests.objectives._clicks_like import clicks_like
from tests.objectives._same_trees import assert_same_nodes, assert_same_trees, assert_same_xgb_trees, xgb_trees

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
from boostplug import lightgbm as bpl  # noqa: E402  (needs lightgbm)
from boostplug import xgboost as bpx  # noqa: E402  (needs xgboost)
from tests.objectives.test_xgb_lambdarank import binary, example  # noqa: E402,F401  (the fixtures: their data)

ROUNDS = 20
#: LightGBM's parameters of every comparison: one thread, no metric
BASE = {"verbose": -1, "num_threads": 1, "metric": "None", "deterministic": True, "min_data_in_leaf": 5}


@pytest.fixture(scope="module")
def clicks():
    return clicks_like()


def _lgb_train(data, objective, params: dict, position=None):
    ds = bpl.dataset(data.X, data.y, group_ptr=data.group_ptr, **({} if position is None else {"position": position}))
    return lgb.train({**BASE, **params, "objective": objective}, ds, ROUNDS)


def _clicks_data(clicks):
    features, labels, group_ptr, _ = clicks
    return dataclasses.make_dataclass("D", ["X", "y", "group_ptr"])(features, labels, group_ptr)


# -- LightGBM ----------------------------------------------------------------------------------

@pytest.mark.parametrize("builtin, plugin, params", [
    ("lambdarank", "lambdarank", {"lambdarank_truncation_level": 5}),
    ("lambdarank", "lambdarank", {"sigmoid": 2.0}),
    ("lambdarank", "lambdarank", {"lambdarank_norm": False}),
    ("lambdarank", "lambdarank", {"label_gain": [0.0, 1.0, 5.0, 6.0, 20.0]}),
    ("rank_xendcg", "xendcg", {"objective_seed": 9}),
    ("rank_xendcg", "xendcg", {"seed": 7}),
    ("rank_xendcg", "xendcg", {"random_state": 7, "objective_seed": 11}),   # objective_seed wins, as in LightGBM
], ids=["truncation", "sigmoid", "norm", "label_gain", "objective_seed", "seed", "seed-and-objective_seed"])
def test_lgb_train_reads_the_builtins_parameters(example, builtin, plugin, params) -> None:
    reference = _lgb_train(example, builtin, params)
    assert_same_trees(reference, _lgb_train(example, bpl.objective(plugin), params))
    # the parameter changes the trees: the assertion above is not the defaults'
    with pytest.raises(AssertionError):
        assert_same_trees(reference, _lgb_train(example, builtin, {}))


@pytest.mark.parametrize("params", [
    {"lambdarank_position_bias_regularization": 0.5},
    {"lambdarank_position_bias_regularization": 0.5, "eta": 0.3},
], ids=["regularization", "regularization-eta"])
def test_lgb_train_reads_the_position_bias_parameters(clicks, params) -> None:
    data, position = _clicks_data(clicks), clicks[3]
    reference = _lgb_train(data, "lambdarank", params, position)
    assert_same_trees(reference, _lgb_train(data, bpl.objective("lambdarank"), params, position))
    with pytest.raises(AssertionError):
        assert_same_trees(reference, _lgb_train(data, "lambdarank", {}, position))


def test_lgb_cv_folds_read_them(example) -> None:
    def cv(objective):
        ds = bpl.dataset(example.X, example.y, group_ptr=example.group_ptr)
        out = bpl.cv({**BASE, "objective": objective, "lambdarank_truncation_level": 3}, ds, 10, nfold=3,
                     return_cvbooster=True)
        return out["cvbooster"].boosters

    for a, b in zip(cv("lambdarank"), cv(bpl.objective("lambdarank")), strict=True):
        assert_same_trees(a, b)


@pytest.mark.parametrize("builtin, plugin, kw", [
    ("lambdarank", LambdaRank, {"lambdarank_truncation_level": 3, "sigmoid": 1.5}),
    ("rank_xendcg", XENDCG, {"random_state": 7}),   # the estimator's own parameter: LightGBM's seed
], ids=["lambdarank", "xendcg-random_state"])
def test_the_lightgbm_rankers_hand_them_to_the_objective(example, builtin, plugin, kw) -> None:
    """boostplug's ``LGBMRanker`` with the copy's class, and LightGBM's own with
    ``sklearn_objective(...).given_training(params)``: LightGBM's scikit-learn wrapper calls the
    objective with arrays only."""
    kw = {"n_estimators": 10, "n_jobs": 1, "verbose": -1, "deterministic": True, **kw}
    group = np.diff(example.group_ptr)
    reference = lgb.LGBMRanker(objective=builtin, **kw).fit(example.X, example.y, group=group).booster_
    ours = bpl.LGBMRanker(objective=plugin, **kw).fit(example.X, example.y, group=group)
    assert_same_trees(reference, ours.booster_)
    theirs = lgb.LGBMRanker(objective=bpl.sklearn_objective(plugin.name).given_training(kw), **kw)
    assert_same_trees(reference, theirs.fit(example.X, example.y, group=group).booster_)


def test_a_lightgbm_value_given_both_ways_must_agree(example) -> None:
    with pytest.raises(ValueError, match=r"lambdarank: lambdarank_truncation_level is given twice, 10 to the objective "
                                         r"and lambdarank_truncation_level=5 in LightGBM's training parameters"):
        _lgb_train(example, bpl.objective("lambdarank", lambdarank_truncation_level=10),
                   {"lambdarank_truncation_level": 5})
    with pytest.raises(ValueError, match=r"label_gain is given twice, \[0, 1, 2\] to the objective and "
                                         r"label_gain=\[0, 1, 3\]"):
        _lgb_train(example, bpl.objective("lambdarank", label_gain=[0, 1, 2]), {"label_gain": [0, 1, 3]})
    # the same value both ways, and LightGBM's seed beside an objective_seed given: no conflict
    assert_same_trees(_lgb_train(example, "lambdarank", {"sigmoid": 2.0}),
                      _lgb_train(example, bpl.objective("lambdarank", sigmoid=2), {"sigmoid": 2.0}))
    assert_same_trees(_lgb_train(example, "rank_xendcg", {"seed": 7}),
                      _lgb_train(example, bpl.objective("xendcg", objective_seed=objective_seed_from_seed(7)),
                                 {"seed": 7}))


def test_a_bad_lightgbm_value_is_named_with_where_it_came_from(example) -> None:
    """A value LightGBM takes and the copy cannot (its sigmoid table's range)."""
    with pytest.raises(ValueError, match=r"lambdarank: sigmoid must be .* got 100000000000.0 \(from "
                                         r"sigmoid=100000000000.0 in LightGBM's training parameters\)"):
        _lgb_train(example, bpl.objective("lambdarank"), {"sigmoid": 1e11})


def _messages(caught, name: str) -> list[str]:
    return [str(w.message) for w in caught if str(w.message).startswith(f"{name}:")]


def test_another_objective_warns_once_on_lightgbm(example) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _lgb_train(example, bpl.objective("mpboost"), {"lambdarank_truncation_level": 5, "learning_rate": 0.2,
                                                        "seed": 3})
        ds = bpl.dataset(example.X, example.y, group_ptr=example.group_ptr)
        bpl.cv({**BASE, "objective": bpl.objective("ranknet"), "sigmoid": 2.0}, ds, 3, nfold=3)
    mine = _messages(caught, "mpboost")
    assert len(mine) == 1 and "lambdarank_truncation_level=5 in LightGBM's training parameters" in mine[0]
    assert "learning_rate" not in mine[0] and "seed" not in mine[0]   # LightGBM's own, for any objective
    assert len(_messages(caught, "ranknet")) == 1   # one objective, three folds: one warning


# -- XGBoost -----------------------------------------------------------------------------------

def _xgb_train(data, builtin: str, params: dict, plugin: bool):
    """``xgb.train`` hands a custom objective neither its parameters nor the Booster: the objective
    is given them (``given_training``); XGBoost warns that it does not use them itself."""
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*are not used")   # XGBoost's, before the first round
        if plugin:
            params = bpx.params(nthread=1, **params)
            return xgb.train(params, dm, ROUNDS, obj=bpx.objective(builtin.replace(":", "_")).given_training(params))
        return xgb.train(bpx.params(nthread=1, objective=builtin, **params), dm, ROUNDS)


XGB_CASES = [
    ("rank:ndcg", {"lambdarank_num_pair_per_sample": 5}),
    ("rank:map", {"lambdarank_num_pair_per_sample": 3}),
    ("rank:pairwise", {"lambdarank_num_pair_per_sample": 4}),
    ("rank:ndcg", {"lambdarank_pair_method": "mean"}),
    ("rank:ndcg", {"lambdarank_normalization": False}),
    ("rank:pairwise", {"lambdarank_score_normalization": False}),
    ("rank:ndcg", {"ndcg_exp_gain": False}),
]


@pytest.mark.parametrize("builtin, params", XGB_CASES,
                         ids=["ndcg-pairs", "map-pairs", "pairwise-pairs", "pair_method", "normalization",
                              "score_normalization", "exp_gain"])
def test_xgb_train_reads_the_builtins_parameters(example, binary, builtin, params) -> None:
    data = binary if builtin == "rank:map" else example
    reference = _xgb_train(data, builtin, params, plugin=False)
    assert_same_xgb_trees(reference, _xgb_train(data, builtin, params, plugin=True))
    assert xgb_trees(reference) != xgb_trees(_xgb_train(data, builtin, {}, plugin=False))


@pytest.mark.parametrize("params", [
    {"lambdarank_unbiased": True},
    {"lambdarank_unbiased": True, "lambdarank_bias_norm": 0.5},
], ids=["unbiased", "unbiased-bias_norm"])
def test_xgb_train_reads_the_unbiased_parameters(clicks, params) -> None:
    data = _clicks_data(clicks)
    reference = _xgb_train(data, "rank:ndcg", params, plugin=False)
    assert_same_xgb_trees(reference, _xgb_train(data, "rank:ndcg", params, plugin=True))
    without = {**params, "lambdarank_unbiased": False} if len(params) == 1 else {"lambdarank_unbiased": True}
    assert xgb_trees(reference) != xgb_trees(_xgb_train(data, "rank:ndcg", without, plugin=False))


def test_boostplugs_xgb_cv_hands_them_to_the_objective(example) -> None:
    """``xgb.cv`` hands the objective no parameters: ``boostplug.xgboost.cv`` gives them to it, and
    not to XGBoost (no "not used" warning)."""
    def cv(params, obj=None):
        dm = bpx.dmatrix(example.X, example.y, group_ptr=example.group_ptr)
        boosters = []

        class Keep(xgb.callback.TrainingCallback):
            def after_training(self, model):
                boosters.extend(b.bst for b in model.cvfolds)
                return model

        bpx.cv(bpx.params(nthread=1, lambdarank_num_pair_per_sample=3, **params), dm, 10, nfold=3, obj=obj,
               callbacks=[Keep()])
        return boosters

    reference = cv({"objective": "rank:ndcg"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a, b in zip(reference, cv({}, bpx.objective("rank_ndcg")), strict=True):
            assert_same_xgb_trees(a, b)


def test_xgboosts_ranker_reads_its_keyword_parameters(example) -> None:
    kw = {"n_estimators": 10, "n_jobs": 1, "base_score": 0.0, "lambdarank_num_pair_per_sample": 3,
          "ndcg_exp_gain": False, "lambdarank_pair_method": "topk"}
    builtin = xgb.XGBRanker(objective="rank:ndcg", **kw).fit(example.X, example.y, qid=np.repeat(
        np.arange(example.n_queries), np.diff(example.group_ptr)))
    ours = bpx.XGBRanker(objective="rank_ndcg", **kw).fit(example.X, example.y, group=np.diff(example.group_ptr))
    assert_same_nodes(xgb_trees(builtin.get_booster()), xgb_trees(ours.get_booster()))


def test_an_xgboost_value_given_both_ways_must_agree(example) -> None:
    dm = bpx.dmatrix(example.X, example.y, group_ptr=example.group_ptr)
    with pytest.raises(ValueError, match=r"rank_ndcg: lambdarank_pair_method is given twice, 'topk' to the objective "
                                         r"and lambdarank_pair_method='mean' in XGBoost's training parameters"):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"(?s).*are not used")
            params = bpx.params(nthread=1, lambdarank_pair_method="mean")
            obj = bpx.objective("rank_ndcg", lambdarank_pair_method="topk").given_training(params)
            xgb.train(params, dm, 2, obj=obj)


def test_another_objective_warns_once_on_xgboost(example) -> None:
    dm = bpx.dmatrix(example.X, example.y, group_ptr=example.group_ptr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        params = bpx.params(nthread=1, lambdarank_num_pair_per_sample=4, ndcg_exp_gain=False, eta=0.2)
        xgb.train(params, dm, 5, obj=bpx.objective("mpboost").given_training(params))
        # the LightGBM copy on XGBoost reads none of XGBoost's
        params = bpx.params(nthread=1, lambdarank_unbiased=True)
        bpx.cv(params, dm, 2, nfold=2, obj=bpx.objective("lambdarank"))
    mine = _messages(caught, "mpboost")
    assert len(mine) == 1
    assert "lambdarank_num_pair_per_sample=4, ndcg_exp_gain=False in XGBoost's training parameters" in mine[0]
    assert len(_messages(caught, "lambdarank")) == 1

