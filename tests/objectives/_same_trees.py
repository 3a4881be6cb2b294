"""Identical-trees assertions for the objectives that reproduce a framework's built-in through the
plugin path (LightGBM's lambdarank, XGBoost's rank:*): every tree has the same splits (features,
thresholds and the branch missing values take, exactly) and leaf values equal to 1e-12 relative
(the frameworks sum the same float32 gradients, so they come out equal, but a tolerance keeps the
tests from asserting more than the claim)."""

from __future__ import annotations

import json

import numpy as np


def assert_same_nodes(a: list[list[tuple]], b: list[list[tuple]]) -> None:
    """Two models' trees, each a preorder list of ``("split", ...)`` and ``("leaf", value)`` nodes."""
    assert len(a) == len(b), f"{len(a)} trees against {len(b)}"
    for t, (nx, ny) in enumerate(zip(a, b)):
        shape = [[n if n[0] == "split" else ("leaf",) for n in nodes] for nodes in (nx, ny)]
        assert shape[0] == shape[1], f"tree {t}: the splits differ"
        leaves_x = np.array([n[1] for n in nx if n[0] == "leaf"])
        leaves_y = np.array([n[1] for n in ny if n[0] == "leaf"])
        np.testing.assert_allclose(leaves_y, leaves_x, rtol=1e-12, atol=0, err_msg=f"tree {t}: leaf values")


def _lgb_nodes(tree: dict, out: list) -> list:
    """A LightGBM tree's nodes in preorder: ``("split", feature, threshold, decision)`` or ``("leaf", value)``."""
    if "split_feature" in tree:
        out.append(("split", tree["split_feature"], tree["threshold"], tree["decision_type"]))
        _lgb_nodes(tree["left_child"], out)
        _lgb_nodes(tree["right_child"], out)
    else:
        out.append(("leaf", tree["leaf_value"]))
    return out


def assert_same_trees(builtin, plugin) -> None:
    """Two LightGBM Boosters grew the same trees."""
    a, b = builtin.dump_model()["tree_info"], plugin.dump_model()["tree_info"]
    assert_same_nodes([_lgb_nodes(x["tree_structure"], []) for x in a],
                      [_lgb_nodes(y["tree_structure"], []) for y in b])


def _xgb_nodes(tree: dict) -> list:
    """An XGBoost tree of the JSON model in preorder: ``("split", feature, condition, default_left)``
    or ``("leaf", value)`` (the float32 values as the model stores them)."""
    left, right = tree["left_children"], tree["right_children"]
    out: list = []
    stack = [0]
    while stack:
        i = stack.pop()
        if left[i] == -1:
            out.append(("leaf", tree["split_conditions"][i]))
            continue
        out.append(("split", tree["split_indices"][i], tree["split_conditions"][i], tree["default_left"][i]))
        stack += [right[i], left[i]]
    return out


def xgb_trees(booster) -> list[list[tuple]]:
    """Every tree of an XGBoost Booster, from its JSON model (exact floats, unlike the text dump)."""
    model = json.loads(bytes(booster.save_raw("json")))
    return [_xgb_nodes(t) for t in model["learner"]["gradient_booster"]["model"]["trees"]]


def assert_same_xgb_trees(builtin, plugin) -> None:
    """Two XGBoost Boosters grew the same trees."""
    assert_same_nodes(xgb_trees(builtin), xgb_trees(plugin))
