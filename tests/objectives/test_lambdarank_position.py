"""LightGBM's position-bias regularisation (Dataset ``position``,
``lambdarank_position_bias_regularization``) through the ``lambdarank`` copy: the adapter reads the
positions from the Dataset LightGBM hands the objective and the learning rate from the training's
parameters, and the copy grows the built-in's trees (several regularisation values and learning
rates); the factors move each round and only on the round's own call; bad positions are refused."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.objectives.lambdarank import LambdaRank
from tests.objectives._clicks_like import clicks_like
from tests.objectives._same_trees import assert_same_trees

lgb = pytest.importorskip("lightgbm")
from boostplug import lightgbm as bpl  # noqa: E402  (needs lightgbm)

ROUNDS = 20


@pytest.fixture(scope="module")
def clicks():
    return clicks_like()


def _train(clicks, objective, params: dict, position=True):
    features, labels, group_ptr, shown = clicks
    ds = bpl.dataset(features, labels, group_ptr=group_ptr, **({"position": shown} if position else {}))
    return lgb.train({"verbose": -1, "num_threads": 1, "metric": "None", "min_data_in_leaf": 5, **params,
                      "objective": objective}, ds, ROUNDS)


@pytest.mark.parametrize("params", [
    {},
    {"lambdarank_position_bias_regularization": 0.5},
    {"lambdarank_position_bias_regularization": 3.0, "eta": 0.3},   # LightGBM's alias of learning_rate
    {"lambdarank_position_bias_regularization": 0.1, "learning_rate": 0.05, "lambdarank_truncation_level": 5},
], ids=["defaults", "reg0.5", "reg3-eta0.3", "reg0.1-lr0.05-k5"])
def test_positions_in_the_dataset_grow_lightgbms_trees(clicks, params) -> None:
    objective_params = {k: v for k, v in params.items() if k.startswith("lambdarank_")}
    builtin = _train(clicks, "lambdarank", params)
    assert_same_trees(builtin, _train(clicks, bpl.objective("lambdarank", **objective_params), params))
    # the positions change the trees: the assertion above is not the plain objective's
    plain = _train(clicks, "lambdarank", params, position=False)
    assert plain.dump_model()["tree_info"] != builtin.dump_model()["tree_info"]


def test_without_positions_the_copy_is_unchanged(clicks) -> None:
    assert_same_trees(_train(clicks, "lambdarank", {}, position=False),
                      _train(clicks, bpl.objective("lambdarank"), {}, position=False))


def test_factors_move_each_round_and_only_on_the_rounds_own_call() -> None:
    labels = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    s = np.array([0.3, 0.9, -0.2, 0.1, 0.5, -0.4])
    obj = LambdaRank(labels, [0, 6], position=[3, 1, 2, 3, 5, 4])
    first = obj.grad_hess(s)
    np.testing.assert_array_equal(first, LambdaRank(labels, [0, 6]).grad_hess(s))   # round 0: factors 0
    factors = obj.position_biases()
    assert factors.dtype == np.float32 and factors.shape == (5,) and np.any(factors != 0.0)   # 5 distinct positions
    obj.loss(s)
    obj.grad_hess(s, weights_at=s)
    np.testing.assert_array_equal(obj.position_biases(), factors)   # the loss and held calls move nothing
    second = obj.grad_hess(s)
    assert not np.array_equal(second[0], first[0]) and not np.array_equal(obj.position_biases(), factors)


def test_bad_positions_are_refused() -> None:
    with pytest.raises(ValueError, match=r"lambdarank: position has 3 values for a data set of 2 documents"):
        LambdaRank(np.array([1.0, 0.0]), [0, 2], position=[0, 1, 2])
    with pytest.raises(ValueError, match=r"position must be one integer per row"):
        LambdaRank(np.array([1.0, 0.0]), [0, 2], position=[0.5, 1.0])
    with pytest.raises(ValueError, match=r"lambdarank: position-bias factors are estimated only with positions"):
        LambdaRank(np.array([1.0, 0.0]), [0, 2]).position_biases()
