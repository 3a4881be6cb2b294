"""An XGBoost model as an :class:`~boostplug.export._trees.Ensemble`, read from its JSON model.

XGBoost's split rule: the feature value, rounded to float32, goes left when ``x < split_condition``;
a missing value (NaN) goes to the ``default_left`` side. The raw score is the intercept
(``base_score``, which the objectives exported here use as is: their link is the identity) plus
the sum of the trees' leaf values (a leaf's value is its ``split_conditions`` entry).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ._trees import Ensemble, Tree, tree_from

__all__ = ["ensemble_from_xgboost", "IDENTITY_OBJECTIVES"]

#: XGBoost objectives whose prediction is the raw margin and whose base_score is the margin's
#: intercept as is (``reg:squarederror`` is also what a model trained with ``obj=`` says).
IDENTITY_OBJECTIVES = frozenset({"reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror", "rank:ndcg",
                                 "rank:pairwise", "rank:map"})


def ensemble_from_xgboost(booster: Any, record: str | None) -> Ensemble:
    """Every tree of a ``xgb.Booster`` and its intercept (``ValueError`` for a model whose
    prediction is not its raw margin, or that has splits ONNX export does not cover)."""
    learner = json.loads(bytes(booster.save_raw(raw_format="json")))["learner"]
    objective = str(learner["objective"]["name"])
    if objective not in IDENTITY_OBJECTIVES:
        raise ValueError(
            f"to_onnx: the XGBoost model's objective is {objective!r}, whose prediction is not its raw margin "
            f"(exported: a boostplug or other custom objective, or {sorted(IDENTITY_OBJECTIVES)})"
        )
    gbm = learner["gradient_booster"]
    if gbm.get("name") != "gbtree":
        raise ValueError(f"to_onnx: the XGBoost model's booster is {gbm.get('name')!r}; ONNX export covers "
                         "booster='gbtree'")
    param = learner["learner_model_param"]
    n_targets = max(int(param.get("num_target", 1)), int(param.get("num_class", 0)), 1)
    if n_targets != 1:
        raise ValueError(f"to_onnx: the XGBoost model has {n_targets} outputs per row; a ranking score is one")
    model = gbm["model"]
    return Ensemble(trees=[_tree(t) for t in model["trees"]], n_features=int(param["num_feature"]), comparison="<",
                    base_score=_base_score(param["base_score"]), float32_input=True, framework="xgboost",
                    objective=objective, record=record)


def _base_score(text: Any) -> float:
    """XGBoost's intercept: ``"5E-1"`` (XGBoost 2) or a one-value list ``"[5E-1]"`` (XGBoost 3)."""
    values = [v for v in str(text).strip("[] ").split(",") if v.strip()]
    if len(values) != 1:
        raise ValueError(f"to_onnx: the XGBoost model's base_score {text!r} is not one number")
    return float(np.float32(float(values[0])))


def _tree(tree: dict[str, Any]) -> Tree:
    """One tree, its reachable nodes renumbered depth-first from the root."""
    index = tree.get("id")
    if int(tree.get("tree_param", {}).get("size_leaf_vector", 1)) > 1:
        raise ValueError(f"to_onnx: tree {index} of the XGBoost model has vector leaves (multi-output)")
    left, right = tree["left_children"], tree["right_children"]
    feature, condition = tree["split_indices"], tree["split_conditions"]
    # XGBoost's values are float32 that its JSON writes in their shortest form ("0.9" is float32(0.9)).
    condition = np.asarray(condition, dtype=np.float32).astype(np.float64)
    default_left, split_type = tree["default_left"], tree.get("split_type", [0] * len(left))

    def read(node: int) -> Any:
        if left[node] == -1:
            return float(condition[node])
        if split_type[node] != 0:
            raise ValueError(
                f"to_onnx: tree {index} of the XGBoost model splits feature {feature[node]} on categories; "
                "ONNX export covers numerical splits only: train without enable_categorical to export"
            )
        return (int(feature[node]), float(condition[node]), bool(default_left[node]), False), left[node], right[node]

    return tree_from(0, read)
