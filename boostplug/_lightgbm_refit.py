"""LightGBM's ``Booster.refit`` for models trained with a callable objective.

``lgb.Booster.refit`` refuses such models ("Cannot refit due to null objective
function"): it needs LightGBM's own objective to compute gradients. This module
does the same computation in Python with any LightGBM-style objective callable.

What LightGBM's refit does (``GBDT::RefitTree`` and ``SerialTreeLearner::FitByExistingTree``),
and so what :func:`refit` does:

* every tree keeps its structure; each row of the new data falls in one leaf per tree;
* the trees are refitted in order; tree ``t``'s gradients and Hessians are the
  objective's at the new data's scores ``init_score + sum of the trees refitted so far``
  (LightGBM rounds them to float32, as it does when training);
* a leaf's new value is ``-sign(G) max(|G| - lambda_l1, 0) / (H + lambda_l2)``
  (``G``, ``H``: the sums over its rows, ``H`` starting at LightGBM's ``1e-15``),
  clipped to ``max_delta_step`` when that is positive, times the tree's shrinkage;
* the leaf keeps ``decay_rate * old + (1 - decay_rate) * new`` (a leaf without rows
  keeps ``decay_rate * old``).

``lambda_l1``, ``lambda_l2`` and ``max_delta_step`` are the booster's own parameters,
as in LightGBM's refit. Not supported (``ValueError``): linear trees, several trees per
iteration (multi-class), ``path_smooth > 0``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["refit"]

# LightGBM's kEpsilon (a float literal, 1e-15f), the starting value of a leaf's Hessian sum.
_K_EPSILON = float(np.float32(1e-15))
# LightGBM's kZeroThreshold (1e-35f): smaller leaf values are stored as 0.
_K_ZERO = float(np.float32(1e-35))

_ALIASES: dict[str, tuple[str, ...]] = {
    "lambda_l1": ("lambda_l1", "reg_alpha", "l1_regularization"),
    "lambda_l2": ("lambda_l2", "reg_lambda", "lambda", "l2_regularization"),
    "max_delta_step": ("max_delta_step", "max_tree_output", "max_leaf_output"),
    "path_smooth": ("path_smooth",),
    "linear_tree": ("linear_tree", "linear_trees"),
}


def _param(params: dict[str, Any], name: str, default: Any) -> Any:
    for key in _ALIASES[name]:
        if key in params and params[key] is not None:
            return params[key]
    return default


def leaf_values(sum_grad: NDArray[np.float64], sum_hess: NDArray[np.float64], *, lambda_l1: float,
                lambda_l2: float, max_delta_step: float) -> NDArray[np.float64]:
    """LightGBM's ``CalculateSplittedLeafOutput`` without path smoothing."""
    if lambda_l1 > 0:
        g = np.sign(sum_grad) * np.maximum(np.abs(sum_grad) - lambda_l1, 0.0)
    else:
        g = sum_grad
    out = -g / (sum_hess + lambda_l2)
    if max_delta_step > 0:
        out = np.where(np.abs(out) > max_delta_step, np.sign(out) * max_delta_step, out)
    return out


def refit(booster: Any, train_set: Any, fobj: Callable[[NDArray, Any], tuple[Any, Any]],
          decay_rate: float) -> Any:
    """A new Booster: ``booster``'s trees with every leaf refitted on ``train_set`` (an
    ``lgb.Dataset`` holding its raw data) by ``fobj(preds, train_set) -> (grad, hess)``."""
    import lightgbm as lgb

    if isinstance(decay_rate, bool) or not isinstance(decay_rate, (int, float, np.floating)) \
            or not 0.0 <= float(decay_rate) <= 1.0:
        raise ValueError(f"refit: decay_rate must be a number in [0, 1], got {decay_rate!r}")
    decay = float(decay_rate)
    params = dict(booster.params or {})
    if bool(_param(params, "linear_tree", False)):
        raise ValueError("refit: linear trees are not supported")
    path_smooth = float(_param(params, "path_smooth", 0.0))
    if path_smooth > _K_EPSILON:
        raise ValueError(f"refit: path_smooth={path_smooth} is not supported (only 0)")
    l1 = float(_param(params, "lambda_l1", 0.0))
    l2 = float(_param(params, "lambda_l2", 0.0))
    mds = float(_param(params, "max_delta_step", 0.0))

    model = booster.dump_model(num_iteration=-1)
    if int(model.get("num_tree_per_iteration", 1)) != 1:
        raise ValueError(f"refit: models with {model['num_tree_per_iteration']} trees per iteration "
                         "(multi-class) are not supported")
    trees = model["tree_info"]
    X = train_set.data  # construct() may free it (free_raw_data=True)
    if X is None:
        raise ValueError("refit: the Dataset no longer holds its raw data (free_raw_data=True after "
                         "construction); pass the features and labels instead")
    train_set.construct()
    n = train_set.num_data()
    leaves = np.asarray(booster.predict(X, start_iteration=0, num_iteration=-1, pred_leaf=True))
    leaves = leaves.reshape(n, len(trees)).astype(np.int64)
    init = train_set.get_init_score()
    scores = np.zeros(n) if init is None or len(init) == 0 else np.asarray(init, dtype=np.float64).reshape(-1).copy()

    new = lgb.Booster(model_str=booster.model_to_string(num_iteration=-1))
    for t, info in enumerate(trees):
        n_leaves = int(info["num_leaves"])
        grad, hess = fobj(scores.copy(), train_set)
        # LightGBM hands custom gradients to its learner as float32 (score_t).
        grad = np.asarray(grad, dtype=np.float32).reshape(-1).astype(np.float64)
        hess = np.asarray(hess, dtype=np.float32).reshape(-1).astype(np.float64)
        if grad.shape[0] != n or hess.shape[0] != n:
            raise ValueError(f"refit: the objective returned {grad.shape[0]} gradients and {hess.shape[0]} "
                             f"Hessians for {n} rows")
        leaf = leaves[:, t]
        sum_grad = np.bincount(leaf, weights=grad, minlength=n_leaves)
        sum_hess = _K_EPSILON + np.bincount(leaf, weights=hess, minlength=n_leaves)
        fresh = leaf_values(sum_grad, sum_hess, lambda_l1=l1, lambda_l2=l2, max_delta_step=mds)
        fresh *= float(info["shrinkage"])
        old = np.array([new.get_leaf_output(t, j) for j in range(n_leaves)])
        value = decay * old + (1.0 - decay) * fresh
        value[np.abs(value) <= _K_ZERO] = 0.0
        for j in range(n_leaves):
            new.set_leaf_output(t, j, float(value[j]))
        scores += value[leaf]
    return new
