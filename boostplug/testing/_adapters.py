"""The contract checks of the framework adapters: ``boostplug.lightgbm.objective`` and
``boostplug.xgboost.objective`` hand the framework exactly ``grad_hess``."""

from __future__ import annotations

import importlib
import unittest
from typing import Any, Callable

import numpy as np

from ._cases import Case, contract_data

__all__ = ["check_lightgbm_adapter", "check_xgboost_adapter"]


def _spy(objective: Callable[..., Any]) -> tuple[Callable[..., Any], list[tuple[np.ndarray, Any, Any]]]:
    """``objective`` recording what the framework gave it and what it returned (a function, not
    an object: lgb.train deep-copies its params)."""
    calls: list[tuple[np.ndarray, Any, Any]] = []

    def spy(preds: Any, train_set: Any) -> Any:
        g, h = objective(preds, train_set)
        calls.append((np.array(preds, dtype=np.float64), g, h))
        return g, h

    return spy, calls


def _adapter_hands_grad_hess(case: Case, objective: Callable[..., Any], calls: list[Any], train_set: Any,
                             start: np.ndarray, framework: str) -> None:
    """One round: the framework started from ``start`` and got ``grad_hess`` there; called
    directly on the same set at other scores, the adapter gives ``grad_hess`` too."""
    d = contract_data()
    ref = case.prepare(d.labels, d.group_ptr, d.weights)
    if len(calls) != 1:
        raise AssertionError(f"{framework} called the objective {len(calls)} times in one round")
    (preds, g, h), = calls
    np.testing.assert_array_equal(preds, start, err_msg=f"{framework} did not start from the initial scores")
    for scores, (g, h) in ((preds, (g, h)), (d.scores, objective(d.scores, train_set))):
        g_ref, h_ref = ref.grad_hess(scores)
        np.testing.assert_array_equal(g, g_ref, err_msg=f"the {framework} adapter's gradient is not grad_hess's")
        np.testing.assert_array_equal(h, h_ref, err_msg=f"the {framework} adapter's Hessian is not grad_hess's")


def _framework(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise unittest.SkipTest(f"{module} is not installed") from None


def check_lightgbm_adapter(case: Case) -> None:
    """``boostplug.lightgbm.objective`` hands ``lgb.train`` exactly ``grad_hess`` (one round from
    an ``init_score``, per-query weights)."""
    lgb = _framework("lightgbm")
    from .. import lightgbm as bpl

    d = contract_data()
    init = np.random.default_rng(1).normal(size=d.scores.shape[0])
    obj = bpl.objective(case.name, **case.params(d.labels, d.group_ptr))
    spy, calls = _spy(obj)
    ds = bpl.dataset(d.X, d.labels, group_ptr=d.group_ptr, weight=d.weights, init_score=init)
    lgb.train({"objective": spy, "verbose": -1, "num_leaves": 3, "min_data_in_leaf": 1, "num_threads": 1}, ds, 1)
    _adapter_hands_grad_hess(case, obj, calls, ds, init, "LightGBM")


def check_xgboost_adapter(case: Case) -> None:
    """``boostplug.xgboost.objective`` hands ``xgb.train`` exactly ``grad_hess`` (one round from a
    ``base_margin``, per-query weights)."""
    xgb = _framework("xgboost")
    from .. import xgboost as bpx

    d = contract_data()
    margin = np.random.default_rng(1).normal(size=d.scores.shape[0]).astype(np.float32)
    # threads as the training's nthread: the check also calls the objective outside xgb.train
    obj = bpx.objective(case.name, threads=1, **case.params(d.labels, d.group_ptr))
    spy, calls = _spy(obj)
    dm = bpx.dmatrix(d.X, d.labels, group_ptr=d.group_ptr, weight=d.weights, base_margin=margin)
    xgb.train(bpx.params(max_depth=2, nthread=1, min_child_weight=0.0), dm, 1, obj=spy)
    _adapter_hands_grad_hess(case, obj, calls, dm, margin.astype(np.float64), "XGBoost")
