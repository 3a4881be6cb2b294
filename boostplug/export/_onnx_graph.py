"""An :class:`~boostplug.export._trees.Ensemble` as an ONNX model: one ``TreeEnsembleRegressor``
(``ai.onnx.ml`` opset 3) whose output, flattened, is the model's raw score.

Float32 graphs hold float32 thresholds chosen so that every float32 input takes the framework's
branch: LightGBM's double ``x <= t`` becomes ``x <= t32`` with ``t32`` the largest float32 not
above ``t``; XGBoost's thresholds are float32 already. Float64 graphs (LightGBM) keep the double
thresholds. LightGBM's zero-as-missing splits read a copy of their feature in which the zero
range is NaN, so that one ONNX node with a missing-value direction decides them exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._trees import Ensemble

if TYPE_CHECKING:
    import onnx

__all__ = ["ensemble_to_onnx", "INPUT", "OUTPUT", "OPSET", "ML_OPSET", "IR_VERSION"]

INPUT, OUTPUT = "X", "score"
#: Opsets and IR version: old enough for the runtimes of recent years, new enough for double trees.
OPSET, ML_OPSET, IR_VERSION = 17, 3, 8
# LightGBM's kZeroThreshold: 1e-35f, compared with the feature value as a double.
_ZERO_RANGE = float(np.float32(1e-35))


def ensemble_to_onnx(ensemble: Ensemble, dtype: np.dtype, metadata: dict[str, str], doc: str) -> "onnx.ModelProto":
    """The ONNX ``ModelProto`` computing ``ensemble``'s raw score from an ``(n, n_features)`` input of
    ``dtype`` (float32 or float64), as a float32 vector ``score`` of length ``n``."""
    import onnx
    from onnx import TensorProto, helper

    in_type = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    # XGBoost rounds features to float32 before comparing: so does its graph, whatever the input.
    tree_dtype = np.dtype(np.float32) if ensemble.float32_input else dtype
    tree_type = TensorProto.FLOAT if tree_dtype == np.float32 else TensorProto.DOUBLE
    nodes: list[Any] = []
    inits: list[Any] = []
    features = INPUT
    if in_type != tree_type:
        nodes.append(helper.make_node("Cast", [INPUT], ["X_float32"], to=tree_type))
        features = "X_float32"
    zero_features = ensemble.zero_missing_features
    if zero_features:
        features = _zero_range_as_nan(features, zero_features, tree_dtype, nodes, inits)
    nodes.append(helper.make_node("TreeEnsembleRegressor", [features], ["Y"], domain="ai.onnx.ml",
                                  **_tree_attributes(ensemble, tree_dtype, zero_features)))
    inits.append(helper.make_tensor("flat", TensorProto.INT64, [1], [-1]))
    nodes.append(helper.make_node("Reshape", ["Y", "flat"], [OUTPUT]))
    graph = helper.make_graph(
        nodes, "boostplug_ranking_score",
        [helper.make_tensor_value_info(INPUT, in_type, [None, ensemble.n_features])],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [None])],
        initializer=inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)]
    from .. import __version__

    model = helper.make_model(graph, producer_name="boostplug", producer_version=__version__, doc_string=doc,
                              ir_version=IR_VERSION, opset_imports=opsets)
    helper.set_model_props(model, metadata)
    onnx.checker.check_model(model)
    return model


def _zero_range_as_nan(features: str, columns: list[int], dtype: np.dtype, nodes: list[Any], inits: list[Any]) -> str:
    """Append ``columns`` of ``features`` with values in LightGBM's zero range replaced by NaN;
    return the widened input's name (those copies are columns ``n_features + i``)."""
    from onnx import helper, numpy_helper

    inits.append(numpy_helper.from_array(np.asarray(columns, dtype=np.int64), "zero_missing_columns"))
    inits.append(numpy_helper.from_array(np.asarray(_ZERO_RANGE, dtype=dtype), "zero_range"))
    inits.append(numpy_helper.from_array(np.asarray(np.nan, dtype=dtype), "nan"))
    nodes += [
        helper.make_node("Gather", [features, "zero_missing_columns"], ["zm_values"], axis=1),
        helper.make_node("Abs", ["zm_values"], ["zm_abs"]),
        helper.make_node("LessOrEqual", ["zm_abs", "zero_range"], ["zm_in_range"]),
        helper.make_node("Where", ["zm_in_range", "nan", "zm_values"], ["zm_missing"]),
        helper.make_node("Concat", [features, "zm_missing"], ["X_zero_missing"], axis=1),
    ]
    return "X_zero_missing"


def _tree_attributes(ensemble: Ensemble, dtype: np.dtype, zero_features: list[int]) -> dict[str, Any]:
    """The ``TreeEnsembleRegressor`` attributes of ``ensemble``, thresholds and leaves in ``dtype``
    (zero-as-missing splits read their feature's copy, see :func:`_zero_range_as_nan`)."""
    from onnx import numpy_helper

    copy_of = {f: ensemble.n_features + i for i, f in enumerate(zero_features)}
    trees = ensemble.trees
    feature, threshold, left, right, nan_left, zero, value = (
        np.concatenate([getattr(t, name) for t in trees])
        for name in ("feature", "threshold", "left", "right", "nan_left", "zero_is_missing", "value"))
    sizes = [t.feature.shape[0] for t in trees]
    tree_ids = np.repeat(np.arange(len(trees)), sizes)
    node_ids = np.concatenate([np.arange(n) for n in sizes])
    leaf = feature < 0
    feature = np.where(leaf, 0, feature)
    feature[zero] = [copy_of[int(f)] for f in feature[zero]]
    threshold = np.where(leaf, 0.0, threshold)
    value = value[leaf]
    split_mode = "BRANCH_LEQ" if ensemble.comparison == "<=" else "BRANCH_LT"
    attrs: dict[str, Any] = dict(
        n_targets=1, aggregate_function="AVERAGE" if ensemble.average else "SUM", post_transform="NONE",
        nodes_treeids=tree_ids.tolist(), nodes_nodeids=node_ids.tolist(), nodes_featureids=feature.tolist(),
        nodes_modes=np.where(leaf, "LEAF", split_mode).tolist(), nodes_truenodeids=np.where(leaf, 0, left).tolist(),
        nodes_falsenodeids=np.where(leaf, 0, right).tolist(),
        nodes_missing_value_tracks_true=(nan_left & ~leaf).astype(np.int64).tolist(),
        target_treeids=tree_ids[leaf].tolist(), target_nodeids=node_ids[leaf].tolist(),
        target_ids=[0] * int(leaf.sum()),
    )
    if dtype == np.float32:
        attrs["nodes_values"] = float32_thresholds(threshold, ensemble.comparison).tolist()
        attrs["target_weights"] = value.astype(np.float32).tolist()
        if ensemble.base_score:
            attrs["base_values"] = [ensemble.base_score]
    else:
        attrs["nodes_values_as_tensor"] = numpy_helper.from_array(threshold.astype(np.float64))
        attrs["target_weights_as_tensor"] = numpy_helper.from_array(value.astype(np.float64))
        if ensemble.base_score:
            attrs["base_values_as_tensor"] = numpy_helper.from_array(np.asarray([ensemble.base_score], np.float64))
    return attrs


def float32_thresholds(threshold: NDArray[np.float64], comparison: str) -> NDArray[np.float32]:
    """Float32 thresholds that split every float32 value as the float64 ones do: for ``x <= t``
    the largest float32 not above ``t``, for ``x < t`` the smallest not below it."""
    t32 = threshold.astype(np.float32)
    side = -1.0 if comparison == "<=" else 1.0  # x <= t: rounded down where float32 rounding went up; x < t: up
    with np.errstate(invalid="ignore"):
        off = side * t32.astype(np.float64) < side * threshold
        t32[off] = np.nextafter(t32[off], np.float32(side * np.inf))
    return t32
