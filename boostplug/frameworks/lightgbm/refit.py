"""LightGBM's ``Booster.refit`` for models trained with a callable objective.

``lgb.Booster.refit`` refuses such models ("Cannot refit due to null objective
function"): it needs LightGBM's own objective to compute gradients. This module
does the same computation in Python with any LightGBM-style objective callable
(:func:`refit_leaves`); :func:`refit` is the user-facing call (``boostplug.lightgbm.refit``).

:func:`refit_leaves` follows LightGBM's ``GBDT::RefitTree`` and
``SerialTreeLearner::FitByExistingTree`` (the trees refitted in order, each on the objective's
gradients at the scores of those before it; a leaf's new value from its rows' sums and the
booster's own ``lambda_l1``, ``lambda_l2`` and ``max_delta_step``, times the shrinkage, mixed with
the old by ``decay_rate``): docs/objectives/index.md, "Refitting a LightGBM model", gives the
computation. Not supported (``ValueError``): linear trees, several trees per iteration
(multi-class), ``path_smooth > 0``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._bound_objective import BoundObjective
from .._builders import builder_init_score
from ..model_record import ObjectiveRecord, record_for
from .adapters import LightGBMObjective, aliases, dataset, initial_scores
from .model_file import RECORD_ATTR, objective_of

__all__ = ["refit", "refit_leaves"]

# LightGBM's kEpsilon (a float literal, 1e-15f), the starting value of a leaf's Hessian sum.
_K_EPSILON = float(np.float32(1e-15))
# LightGBM's kZeroThreshold (1e-35f): smaller leaf values are stored as 0.
_K_ZERO = float(np.float32(1e-35))


def _param(params: dict[str, Any], name: str, default: Any) -> Any:
    """The value ``params`` give LightGBM's parameter ``name`` (under any of its names), else ``default``."""
    return next((params[key] for key in aliases(name) if params.get(key) is not None), default)


def leaf_values(sum_grad: NDArray[np.float64], sum_hess: NDArray[np.float64], *, lambda_l1: float,
                lambda_l2: float, max_delta_step: float) -> NDArray[np.float64]:
    """LightGBM's ``CalculateSplittedLeafOutput`` without path smoothing."""
    g = np.sign(sum_grad) * np.maximum(np.abs(sum_grad) - lambda_l1, 0.0) if lambda_l1 > 0 else sum_grad
    out = -g / (sum_hess + lambda_l2)
    if max_delta_step > 0:
        out = np.where(np.abs(out) > max_delta_step, np.sign(out) * max_delta_step, out)
    return out


def refit_leaves(booster: Any, train_set: Any, fobj: Callable[[NDArray, Any], tuple[Any, Any]],
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
    # before construct(): LightGBM then stores NaN as 0 and +-inf as +-1e300
    builder_init_score(train_set.init_score, "init_score of the training set")
    train_set.construct()
    n = train_set.num_data()
    leaves = np.asarray(booster.predict(X, start_iteration=0, num_iteration=-1, pred_leaf=True))
    leaves = leaves.reshape(n, len(trees)).astype(np.int64)
    scores = initial_scores(train_set)

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


def refit(booster: Any, data: Any, label: ArrayLike | None = None, *, qid: ArrayLike | None = None,
          group_ptr: ArrayLike | None = None, weight: ArrayLike | None = None, init_score: ArrayLike | None = None,
          objective: Any = None, decay_rate: float = 0.9):
    """What ``booster.refit(...)`` does, for models trained with a callable objective
    (LightGBM's own refit refuses them): a new Booster with every tree's structure kept and
    every leaf refitted on the new data, ``leaf = decay_rate * old + (1 - decay_rate) * new``.
    See :func:`refit_leaves` for the exact computation (it matches LightGBM's).

    Args:
        booster: the trained model.
        data: an ``lgb.Dataset`` with its raw data and query groups, or the features ``X``
            (then ``label`` and ``qid`` or ``group_ptr`` are needed, as in :func:`dataset`).
        objective: a LightGBM-style objective ``(preds, train_data) -> (grad, hess)``
            (:func:`objective`, or any callable ``lgb.train`` accepts), a boostplug
            objective's name, or ``None``: the objective recorded in ``booster``.
        decay_rate: weight of the old leaf values, in [0, 1].

    The result predicts like any Booster; it is not trainable further (as a loaded model).
    """
    import lightgbm as lgb

    if objective is None:
        objective = objective_of(booster)
        if objective is None:
            raise ValueError("refit: the booster records no boostplug objective; pass objective=... "
                             "(for a built-in objective use booster.refit)")
    if isinstance(objective, str):
        fobj: Any = LightGBMObjective(objective, {})
    elif isinstance(objective, ObjectiveRecord):
        fobj = LightGBMObjective(objective.name, objective.params_with())
    elif isinstance(objective, BoundObjective):
        fobj = objective if isinstance(objective, LightGBMObjective) else LightGBMObjective(objective.name,
                                                                                          objective.params)
    elif callable(objective):
        fobj = objective
    else:
        raise TypeError(f"refit: objective must be a callable (preds, train_data) -> (grad, hess), an objective "
                        f"name or None, got {type(objective).__name__}")
    if isinstance(data, lgb.Dataset):
        given = [k for k, v in dict(label=label, qid=qid, group_ptr=group_ptr, weight=weight,
                                    init_score=init_score).items() if v is not None]
        if given:
            raise ValueError(f"refit: {given} come from the Dataset; don't pass them with one")
        train_set = data
    else:
        if label is None:
            raise ValueError("refit: pass the labels (label=...) with the features")
        train_set = dataset(data, label, qid=qid, group_ptr=group_ptr, weight=weight, init_score=init_score,
                            free_raw_data=False)
    new = refit_leaves(booster, train_set, fobj, decay_rate)
    if isinstance(fobj, BoundObjective):
        setattr(new, RECORD_ATTR, record_for(fobj))
    elif getattr(booster, RECORD_ATTR, None) is not None:
        setattr(new, RECORD_ATTR, getattr(booster, RECORD_ATTR))
    return new
