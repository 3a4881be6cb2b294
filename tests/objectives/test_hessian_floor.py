"""Honest Hessians: nothing floors or clips a Hessian unless the objective's settings say so. Every
objective takes ``hessian_floor`` and declares its default (on for the papers' objectives, whose
models stay as they were; off for the copies of the built-ins); off, the frameworks get the Hessians
exactly as computed, negative ones included; on, a round whose floor raises more than
FLOOR_WARN_SHARE of the rows warns once, naming the objective."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from boostplug import objectives
from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN, HessianFloorWarning, Loss, Param, PairwiseLoss, \
    floor_hessian
from boostplug.objectives._loss import FLOOR_WARN_SHARE
from boostplug.objectives.pairwise import EXACT, LOGISTIC
from boostplug.testing import check_objective

#: objective -> settings whose raw Hessians have zeros (queries of one label) and, for ndcg_boost's
#: exact mode, negative values
SETTINGS = {"qbrank": {}, "mpboost": {}, "ndcg_boost": {"hessian": "exact"}, "rankboost": {}}


def _data():
    rng = np.random.default_rng(8)
    gp = np.array([0, 1, 5, 12, 20], dtype=np.int64)
    y = rng.integers(0, 3, 20).astype(np.float64)
    y[1:5] = 1.0                                  # one label: no term
    return rng.normal(size=20), y, gp, np.array([1.0, 2.0, 0.0, 1.5])


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_the_papers_objectives_keep_the_floor_on_by_default(name) -> None:
    """Their default is the floor (their models do not change), and the floor is what grad_hess applies."""
    entry = objectives.get(name)
    assert entry.defaults["hessian_floor"] is True and Loss.hessian_floor is True
    s, y, gp, w = _data()
    prep = entry.prepare(y, gp, weights=w, **SETTINGS[name])
    g, raw = prep._grad_hess(s)
    np.testing.assert_array_equal(prep.grad_hess(s)[1], floor_hessian(g, raw))
    assert np.any(prep.grad_hess(s)[1] == NO_INFO_HESSIAN)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_without_the_floor_the_hessians_pass_exactly_as_computed(name) -> None:
    """hessian_floor=False: the objective's own Hessians, bit for bit (negative ones too); a document
    without any term gets 0; the gradient is the same either way."""
    s, y, gp, w = _data()
    entry = objectives.get(name)
    off = entry.prepare(y, gp, weights=w, hessian_floor=False, **SETTINGS[name])
    on = entry.prepare(y, gp, weights=w, **SETTINGS[name])
    g, raw = off._grad_hess(s)
    g_off, h_off = off.grad_hess(s)
    g_on, h_on = on.grad_hess(s)
    np.testing.assert_array_equal(g_off, g_on)
    np.testing.assert_array_equal(h_off, raw)
    none = (g == 0.0) & (raw == 0.0)
    assert none[gp[2]:gp[3]].all()                            # the query of weight 0
    np.testing.assert_array_equal(h_off[none], 0.0)
    np.testing.assert_array_equal(h_on[none], NO_INFO_HESSIAN)
    assert off.settings["hessian_floor"] is False


def test_a_negative_curvature_is_returned_negative_without_the_floor() -> None:
    """ndcg_boost's exact Hessian is negative somewhere: HESSIAN_FLOOR with the floor, itself without
    (no clip to 0)."""
    s, y, gp, w = _data()
    entry = objectives.get("ndcg_boost")
    raw = entry.prepare(y, gp, weights=w, hessian="exact")._grad_hess(s)[1]
    negative = raw < 0.0
    assert negative.any()
    np.testing.assert_array_equal(entry.prepare(y, gp, weights=w, hessian="exact").grad_hess(s)[1][negative],
                                  HESSIAN_FLOOR)
    np.testing.assert_array_equal(
        entry.prepare(y, gp, weights=w, hessian="exact", hessian_floor=False).grad_hess(s)[1][negative],
        raw[negative])


class NoFloor(PairwiseLoss):
    """A pairwise logistic loss that declares the floor off by default."""

    name = "test_no_floor"
    summary = "pairwise logistic loss without a Hessian floor (test objective)"
    params = {"sigma": Param(1.0, "real", "slope", low=0.0, low_open=True)}
    hessians = {"exact": EXACT}
    hessian_floor = False
    pair_loss, pair_grad, pair_hess = LOGISTIC


def test_an_objective_declares_its_default_and_the_parameter_overrides_it() -> None:
    s, y, gp, w = _data()
    assert NoFloor.defaults()["hessian_floor"] is False
    off, on = NoFloor(y, gp, weights=w), NoFloor(y, gp, weights=w, hessian_floor=True)
    np.testing.assert_array_equal(off.grad_hess(s)[1][:gp[3]], 0.0)
    np.testing.assert_array_equal(on.grad_hess(s)[1][:gp[3]], NO_INFO_HESSIAN)
    declared = NoFloor.declared_params()["hessian_floor"]
    assert declared.kind == "bool" and "blows up" in declared.doc


@pytest.mark.parametrize("params", [None, {"hessian_floor": True}])
def test_the_contract_checks_follow_the_floor(params) -> None:
    """check_objective with the floor off (the class's default) and on: every check passes, its
    Hessian checks expecting 0 or NO_INFO_HESSIAN where no term is."""
    checks = ["gradient", "hessian", "query_weights", "sum_over_queries", "extreme_inputs"]
    results = check_objective(NoFloor, params=params, checks=checks)
    assert [r.check for r in results] == checks


def test_bad_values_and_declarations_are_refused() -> None:
    s, y, gp, w = _data()
    with pytest.raises((TypeError, ValueError), match=r"hessian_floor.*'yes'"):
        objectives.get("qbrank").prepare(y, gp, hessian_floor="yes")
    with pytest.raises(TypeError, match="declare the Hessian floor's default as the class attribute"):
        objectives.register(type("Bad", (NoFloor,), {"name": "test_bad_floor", "hessian_floor": 1}))
    with pytest.raises(TypeError, match="declare the Hessian floor's default as the class attribute"):
        objectives.register(type("Bad", (NoFloor,), {"name": "test_bad_floor",
                                                     "params": {"hessian_floor": Param(True, "bool", "x")}}))
    assert "test_bad_floor" not in objectives.names()


class Concave(Loss):
    """``-sum cos(s)``-like per row: its exact Hessian ``cos(s)`` is negative wherever cos is."""

    name = "test_concave_rows"
    summary = "a loss with negative exact curvature (test objective)"
    hessians = {"exact": objectives.Hessian("exact", "cos(s)")}
    returns_new_arrays = True

    def _loss(self, scores):
        return float(np.sum(np.cos(scores) * self.query_weights[0]))

    def _grad_hess(self, scores):
        return -np.sin(scores) * self.query_weights[0], np.cos(scores) * self.query_weights[0]


def test_a_floor_that_raises_many_rows_warns_once_naming_the_objective() -> None:
    y, gp = np.zeros(20), np.array([0, 20])
    obj = Concave(y, gp)
    most = np.full(20, np.pi)                       # cos = -1 on every row
    with pytest.warns(HessianFloorWarning, match=r"test_concave_rows: the Hessian floor raised 20 of 20 Hessians"):
        obj.grad_hess(most)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        obj.grad_hess(most)                         # once per bound objective
        few = np.zeros(20)
        few[:int(FLOOR_WARN_SHARE * 20)] = np.pi    # exactly the share: no warning
        Concave(y, gp).grad_hess(few)
        Concave(y, gp, hessian_floor=False).grad_hess(most)   # no floor, nothing raised, no warning


class Kept(Concave):
    """Concave, keeping the arrays its _grad_hess returned last."""

    def _grad_hess(self, scores):
        self.returned = super()._grad_hess(scores)
        return self.returned


def test_returns_new_arrays_floors_in_place() -> None:
    """``returns_new_arrays``: the arrays _grad_hess returns are its own, made in the call, so the
    floor works on them in place; without it the Hessian is floored on a copy. The former name,
    ``fresh_output``, means nothing (no alias)."""
    y, gp, s = np.zeros(4), np.array([0, 4]), np.array([0.0, 1.0, np.pi, 0.5])  # one Hessian below 0
    obj = Kept(y, gp)
    assert obj.grad_hess(s)[1] is obj.returned[1] and obj.returned[1][2] == HESSIAN_FLOOR
    copied = type("Copied", (Kept,), {"returns_new_arrays": False})(y, gp)
    h = copied.grad_hess(s)[1]
    assert h is not copied.returned[1] and copied.returned[1][2] == -1.0 and h[2] == HESSIAN_FLOOR
    old = type("Old", (Kept,), {"returns_new_arrays": False, "fresh_output": True})
    assert old.returns_new_arrays is False


def test_the_floor_changes_a_lightgbm_model() -> None:
    """The reason it is a choice: on data with documents without any term, LightGBM grows other trees
    with the floor than without (so a copy of a built-in, which has none, must turn it off)."""
    lgb = pytest.importorskip("lightgbm")
    from boostplug import lightgbm as bpl
    from boostplug.data import load_example

    data, _ = load_example()
    cut = int(data.group_ptr[40])
    ds = bpl.dataset(data.X[:cut], data.y[:cut], group_ptr=data.group_ptr[:41])
    trees = {}
    for floor in (True, False):
        params = {"objective": bpl.objective("mpboost", hessian_floor=floor), "verbose": -1, "num_threads": 1,
                  "min_data_in_leaf": 5}
        trees[floor] = lgb.train(params, ds, 3).dump_model()["tree_info"]
    assert trees[True] != trees[False]


@pytest.mark.parametrize("name, params, advice", [
    ("lambdamart_map", {}, "The floor is a setting, not a fault: hessian_floor=false trains another model, which may "
                           "rank better or worse (off, the loss's own near-zero or negative Hessians size the steps); "
                           'measure them side by side: boostplug compare --methods '
                           '"lambdamart_map,lambdamart_map[hessian_floor=false]"'),
    ("ndcg_boost", {"hessian": "exact"}, "hessian=bound or hessian_floor=false trains another model, which may rank "
                                         "better or worse (off, the loss's own near-zero or negative Hessians size "
                                         "the steps); measure them side by side: boostplug compare --methods "
                                         '"ndcg_boost[hessian=exact],ndcg_boost[hessian=bound],'
                                         'ndcg_boost[hessian=exact,hessian_floor=false]"'),
])
def test_the_floor_warning_names_only_the_objectives_own_options(name, params, advice) -> None:
    """lambdamart_map has no ``hessian`` parameter: its warning does not suggest one; ndcg_boost's
    exact mode names its bound mode. Each is a setting to measure, not a fix (turning the floor off made
    one user's pairwise loss rank much worse): the warning says so and gives the --methods that trains
    them side by side, each of which compare reads."""
    rng = np.random.default_rng(0)
    y, gp = rng.integers(0, 3, 100).astype(np.float64), np.arange(0, 101, 10)
    loss = objectives.get(name).loss_class(y, gp, **params)
    assert ("hessian" in loss.declared_params()) == bool(params)
    with pytest.warns(HessianFloorWarning) as caught:
        loss.grad_hess(y * 30.0)                    # far apart (lambdamart) or the exact mode's negatives
    message = str(caught[0].message)
    assert message.endswith(advice), message
    from boostplug.compare.method_specs import split_specs
    from boostplug.compare.methods import get_method

    specs = split_specs(message.split('--methods "')[1].rstrip('"'))
    assert [get_method(spec).name for spec in specs] == specs  # each a method compare trains


def test_the_floor_warning_says_whether_the_raised_rows_have_small_gradients_too() -> None:
    """lambdamart_map's Hessians stay positive: scores far apart in the labels' order settle every pair
    (Hessian and gradient below the floor: the floor bounds the steps to 1); in the reverse order the
    gradients stay large on tiny Hessians (the steps are the floor's)."""
    rng = np.random.default_rng(0)
    y, gp = rng.integers(0, 3, 100).astype(np.float64), np.arange(0, 101, 10)
    messages = []
    for sign in (1.0, -1.0):
        with pytest.warns(HessianFloorWarning) as caught:
            objectives.get("lambdamart_map").loss_class(y, gp).grad_hess(sign * y * 30.0)
        messages.append(str(caught[0].message))
    assert "each with a gradient below 1e-06 too, so the floor bounds their Newton steps" in messages[0], messages[0]
    assert "the Newton steps there are the floor's, not the loss's" in messages[1], messages[1]
