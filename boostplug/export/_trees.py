"""A framework-neutral tree ensemble: what a LightGBM or XGBoost model computes, read off its
own dump, before it is written in another format (:mod:`boostplug.export._onnx_graph`).

Each tree is flat arrays indexed by node, the root at 0. A split node sends a row left when
its feature value compares true with the threshold (``x <= t`` or ``x < t``, one comparison
for the whole ensemble), a missing value (NaN) to ``nan_left``'s side; a leaf has feature -1.
The score of a row is ``base_score`` plus the sum (``average``: the mean) of its leaves' values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np
from numpy.typing import NDArray

__all__ = ["Tree", "Ensemble", "tree_from"]

Comparison = Literal["<=", "<"]


@dataclass(frozen=True)
class Tree:
    """One tree as flat node arrays (the root is node 0).

    Attributes:
        feature: the split feature of each node, -1 for a leaf.
        threshold: the split threshold (float64: LightGBM's are doubles, XGBoost's float32 values).
        left, right: child node indices of a split node (-1 for a leaf).
        nan_left: whether a missing value (NaN) goes left.
        zero_is_missing: whether the split treats values in LightGBM's zero range as missing
            (``zero_as_missing``): those rows go to ``nan_left``'s side too.
        value: the leaf value of each leaf (0 for a split node).
    """

    feature: NDArray[np.int64]
    threshold: NDArray[np.float64]
    left: NDArray[np.int64]
    right: NDArray[np.int64]
    nan_left: NDArray[np.bool_]
    zero_is_missing: NDArray[np.bool_]
    value: NDArray[np.float64]


@dataclass(frozen=True)
class Ensemble:
    """A model's trees and how their leaves add up to the raw score.

    Attributes:
        trees: the trees, in boosting order.
        n_features: columns of the input the model expects.
        comparison: a split's test, ``"<="`` (LightGBM) or ``"<"`` (XGBoost).
        base_score: added to every row's score (XGBoost's intercept; LightGBM's is in the first tree).
        average: the score is the mean of the trees instead of their sum (LightGBM's ``rf`` boosting).
        float32_input: the framework rounds features to float32 before comparing (XGBoost).
        framework, objective: where the model comes from, for the exported model's metadata.
        record: the boostplug objective record (JSON) when the model carries one.
    """

    trees: list[Tree]
    n_features: int
    comparison: Comparison
    base_score: float = 0.0
    average: bool = False
    float32_input: bool = False
    framework: str = ""
    objective: str = ""
    record: str | None = None

    @property
    def zero_missing_features(self) -> list[int]:
        """The features some split treats with LightGBM's zero-as-missing rule, ascending."""
        found: set[int] = set()
        for tree in self.trees:
            found.update(int(f) for f in tree.feature[tree.zero_is_missing])
        return sorted(found)


def tree_from(root: Any, read: Callable[[Any], float | tuple[tuple[int, float, bool, bool], Any, Any]]) -> Tree:
    """One tree, its nodes numbered depth-first from ``root`` (the left child first): ``read(node)``
    is a leaf's value, or a split node's ``((feature, threshold, nan_left, zero_is_missing), left
    child, right child)``."""
    nodes: list[list[Any]] = []  # one row a node: the fields of Tree in their order
    # An explicit stack: a leaf-wise tree can be deeper than Python's recursion limit.
    stack: list[tuple[Any, int, bool]] = [(root, -1, True)]
    while stack:
        node, parent, is_left = stack.pop()
        got = read(node)
        if isinstance(got, tuple):
            (feature, threshold, nan_left, zero_is_missing), left, right = got
            nodes.append([feature, threshold, -1, -1, nan_left, zero_is_missing, 0.0])
            stack += [(right, len(nodes) - 1, False), (left, len(nodes) - 1, True)]
        else:
            nodes.append([-1, 0.0, -1, -1, False, False, got])
        if parent >= 0:
            nodes[parent][2 if is_left else 3] = len(nodes) - 1
    dtypes = (np.int64, np.float64, np.int64, np.int64, np.bool_, np.bool_, np.float64)
    return Tree(*(np.asarray(column, dtype=t) for column, t in zip(zip(*nodes), dtypes)))
