"""A LightGBM model as an :class:`~boostplug.export._trees.Ensemble`, read from ``Booster.dump_model``.

LightGBM's split rule (``Tree::NumericalDecision``): a row goes left when ``x <= threshold``,
compared in double precision. A missing value depends on the split's missing type:

* ``None``: NaN is read as 0.0 and compared like any value;
* ``NaN``: NaN goes to the default side (``default_left``);
* ``Zero`` (``zero_as_missing=true``): NaN and every value in ``[-1e-35f, 1e-35f]`` go to the
  default side.

The raw score is the sum of the trees (``boost_from_average``'s starting score is in the first
tree's leaves), their mean for ``boosting="rf"``; for a custom objective it is what
``booster.predict`` returns.
"""

from __future__ import annotations

from typing import Any

from ._trees import Ensemble, Tree, tree_from

__all__ = ["ensemble_from_lightgbm", "IDENTITY_OBJECTIVES"]

#: LightGBM objectives whose prediction is the raw score itself (no sigmoid, softmax or exp).
IDENTITY_OBJECTIVES = frozenset({"lambdarank", "rank_xendcg", "regression", "regression_l1", "huber", "fair",
                                 "quantile", "mape"})
# What dump_model says for a model trained with a callable objective (no objective at all).
_CUSTOM = frozenset({"", "custom", "none"})


def ensemble_from_lightgbm(booster: Any, num_iteration: int | None, record: str | None) -> Ensemble:
    """The trees of a ``lgb.Booster`` and how they sum (``ValueError`` for a model whose
    prediction is not its raw score, or that has splits ONNX export does not cover).
    ``num_iteration``: the first rounds, ``None`` for those ``booster.predict`` uses."""
    dump = booster.dump_model(num_iteration=num_iteration)
    # A model saved with boostplug's record names lambdarank in its header (a raw-score stand-in).
    objective = "" if record is not None else _objective_name(dump)
    per_iteration = int(dump.get("num_tree_per_iteration", 1))
    if per_iteration != 1:
        raise ValueError(f"to_onnx: the LightGBM model has {per_iteration} trees per iteration (num_class="
                         f"{dump.get('num_class')}); a ranking score is one value per row")
    trees = [_tree(info) for info in dump["tree_info"]]
    return Ensemble(trees=trees, n_features=int(dump["max_feature_idx"]) + 1, comparison="<=",
                    average=bool(dump.get("average_output", False)), framework="lightgbm",
                    objective=objective or "custom", record=record)


def _objective_name(dump: dict[str, Any]) -> str:
    """The model's objective name ('' for a callable), refused unless its prediction is the raw score."""
    text = str(dump.get("objective", "")).strip()
    words = text.split()
    name = words[0] if words else ""
    if name.lower() in _CUSTOM:
        return ""
    if name not in IDENTITY_OBJECTIVES or "sqrt" in words:
        raise ValueError(
            f"to_onnx: the LightGBM model's objective is {text!r}, whose prediction is not its raw score "
            f"(exported: a boostplug or other custom objective, or {sorted(IDENTITY_OBJECTIVES)} without sqrt)"
        )
    return name


def _tree(info: dict[str, Any]) -> Tree:
    """One tree of the dump, its nodes numbered depth-first from the root."""
    index = info.get("tree_index")

    def read(node: dict[str, Any]) -> Any:
        if "leaf_value" not in node:
            return _split(node, index), node["left_child"], node["right_child"]
        if "leaf_coeff" in node or "leaf_features" in node:
            raise ValueError(f"to_onnx: tree {index} of the LightGBM model is a linear tree (linear_tree=true), "
                             "whose leaves are linear models; ONNX export covers constant leaves")
        return float(node["leaf_value"])

    return tree_from(info["tree_structure"], read)


def _split(node: dict[str, Any], index: Any) -> tuple[int, float, bool, bool]:
    """(feature, threshold, NaN goes left, zero range is missing) of a split node."""
    feature = int(node["split_feature"])
    if node.get("decision_type") != "<=":
        raise ValueError(
            f"to_onnx: tree {index} of the LightGBM model splits feature {feature} on categories "
            f"(decision_type {node.get('decision_type')!r}); ONNX export covers numerical splits only: "
            "train without categorical_feature to export"
        )
    threshold = float(node["threshold"])
    missing = node.get("missing_type", "None")
    if missing not in ("None", "NaN", "Zero"):
        raise ValueError(f"to_onnx: tree {index} of the LightGBM model has a split with missing type {missing!r}, "
                         "which this boostplug does not know")
    nan_left = 0.0 <= threshold if missing == "None" else bool(node["default_left"])  # None: NaN is read as 0.0
    return feature, threshold, nan_left, missing == "Zero"
