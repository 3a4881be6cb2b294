"""Cross-validation on XGBoost whose folds keep queries whole and carry each row's keys:
:func:`cv`, ``xgb.cv`` on folds that keyed pairs (:class:`~boostplug.keyed_pairs.KeyedPairs`)
follow. ``DMatrix.slice`` (what ``xgb.cv`` cuts folds with) keeps labels, groups and weights but
nothing a DMatrix built by :func:`~boostplug.frameworks.xgboost.adapters.dmatrix` carries
besides, so the folds are cut here and handed to ``xgb.cv`` with their keys."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_rounds
from ...data.splits import row_folds_by_query
from .adapters import (XGBoostMetric, XGBoostObjective, _group_ptr, directed_callbacks, dmatrix_row_keys,
                       keep_row_keys, params_threads)

__all__ = ["query_fold_rows", "cv"]


def query_fold_rows(dtrain: Any, nfold: int = 5, *, seed: int = 0,
                    shuffle: bool = True) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """``nfold`` pairs ``(train_rows, test_rows)`` of a ranking DMatrix, each query whole in the test
    rows of one fold (:func:`boostplug.data.splits.row_folds_by_query`: the folds of
    ``boostplug.lightgbm.query_folds`` for the same groups and seed)."""
    return row_folds_by_query(np.diff(_group_ptr(dtrain)), nfold, seed=seed, shuffle=shuffle, name="nfold")


def _slice(dall: Any, rows: NDArray[np.int64], gp: NDArray[np.int64]) -> Any:
    part = dall.slice(rows, allow_groups=True)
    q = np.searchsorted(gp, rows, side="right") - 1
    part.set_group(np.diff(np.flatnonzero(np.r_[True, q[1:] != q[:-1], True])))
    keys = dmatrix_row_keys(dall)
    if keys is not None:
        keep_row_keys(part, (keys[0][rows], keys[1][rows]))
    return part


def cv(params: dict[str, Any], dtrain: Any, num_boost_round: int = 10, *, nfold: int = 5, seed: int = 0,
       shuffle: bool = True, fpreproc: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """``xgb.cv`` on folds that keep queries whole (:func:`query_fold_rows`) and carry the rows'
    ``(qid, doc)`` keys of a :func:`~boostplug.frameworks.xgboost.adapters.dmatrix` built with
    ``doc=``, so an objective given keyed pairs trains each fold on its own pairs.

    ``kwargs`` go to ``xgb.cv`` (``obj``, ``custom_metric``, ``early_stopping_rounds``...);
    ``fpreproc`` runs on each fold after it is cut. Returns what ``xgb.cv`` returns.

    What ``xgb.cv`` cannot hand the callables it calls is passed here: a boostplug ``obj`` runs its
    kernels on the ``nthread`` of ``params`` and reads the parameters of its built-in there
    (``lambdarank_num_pair_per_sample`` for ``rank_ndcg``...; they are not handed to XGBoost,
    which would warn that it does not use them), and with a boostplug ``custom_metric`` early
    stopping goes in the metric's direction (``maximize``, and each ``EarlyStopping`` of
    ``callbacks`` left on automatic direction that watches it); a ``maximize`` you give wins.
    """
    import xgboost as xgb

    for name in ("folds", "stratified"):
        if name in kwargs:
            raise TypeError(f"cv() makes query folds from nfold/seed/shuffle; {name}= is xgb.cv's own (call xgb.cv)")
    check_rounds(num_boost_round, "num_boost_round")
    gp = _group_ptr(dtrain)
    folds = iter(query_fold_rows(dtrain, nfold, seed=seed, shuffle=shuffle))

    def our_fold(_train: Any, _test: Any, param: Any) -> tuple[Any, Any, Any]:
        # xgb.cv cuts its own group folds and hands each here, in fold order: replace it by ours
        train_rows, test_rows = next(folds)
        out = (_slice(dtrain, train_rows, gp), _slice(dtrain, test_rows, gp), param)
        return out if fpreproc is None else fpreproc(*out)

    if isinstance(kwargs.get("obj"), XGBoostObjective):
        # what xgb.cv does not hand the objective; the built-in's parameters it reads are not XGBoost's
        kwargs["obj"] = obj = kwargs["obj"].given_threads(params_threads(dict(params))).given_training(params)
        reads = obj.reads("XGBoost")  # (params: a dict, or XGBoost's list of pairs)
        params = ({k: v for k, v in params.items() if k not in reads} if isinstance(params, dict)
                  else [(k, v) for k, v in params if k not in reads])
    if isinstance(kwargs.get("custom_metric"), XGBoostMetric):
        kwargs["custom_metric"] = metric = kwargs["custom_metric"].directed()
        if kwargs.get("maximize") is None:
            kwargs["maximize"] = metric.spec.higher_is_better
        kwargs["callbacks"] = directed_callbacks(kwargs.get("callbacks"), metric.spec)
    return xgb.cv(params, dtrain, num_boost_round, nfold=nfold, seed=seed, shuffle=shuffle, fpreproc=our_fold,
                  **kwargs)
