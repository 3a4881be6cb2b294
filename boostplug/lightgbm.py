"""LightGBM adapter: boostplug objectives and metrics in LightGBM's calling conventions.

Example:
    >>> import lightgbm as lgb
    >>> from boostplug import lightgbm as bpl
    >>> train = bpl.dataset(X, y, qid=qid)                                  # doctest: +SKIP
    >>> params = {"objective": bpl.objective("mpboost", ddf="logdd"), "metric": "None"}
    >>> booster = lgb.train(params, train, 200, valid_sets=[vali],            # doctest: +SKIP
    ...                     feval=bpl.metric("ndcg@10"),
    ...                     callbacks=[lgb.early_stopping(20)])
    >>> ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective("qbrank"))   # doctest: +SKIP

Notes:
* Query groups come from the Dataset (``group=`` sizes). Row weights must be
  constant within each query (ranking losses weight whole queries).
* ``init_score`` is honoured: LightGBM passes scores that include it.
* A model trained with a callable objective saves and loads as usual
  (``booster.save_model``); its raw scores are the ranking scores.
* The math lives in :mod:`boostplug.objectives`; this module only adapts.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._adapter import (
    BoundObjective, MetricSpec, group_ptr_from_lgb_sizes, metric_query_weights, query_weights_from_rows,
)
from .groups import group_ptr_from_qid, sizes_from_group_ptr

__all__ = ["objective", "sklearn_objective", "metric", "sklearn_metric", "dataset", "train_line_search"]


class LightGBMObjective(BoundObjective):
    """Callable for ``params["objective"]`` of ``lgb.train`` / ``lgb.cv``: ``(preds, train_data) -> (grad, hess)``."""

    def __call__(self, preds: NDArray, train_data: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self.params.get("pairs") is not None and getattr(train_data, "used_indices", None) is not None:
            raise ValueError(
                f"{self.name}: explicit pairs are row indices of the full training set, but LightGBM "
                "handed a subset of it (lgb.cv folds): build the folds yourself, each with its own pairs"
            )
        labels = train_data.get_label()
        n = len(labels)
        gp = group_ptr_from_lgb_sizes(train_data.get_group(), n)
        w = query_weights_from_rows(train_data.get_weight(), gp, "LightGBM")
        prep = self.prepared(train_data, labels, gp, w)
        return prep.grad_hess(np.asarray(preds, dtype=np.float64).reshape(-1))


class LightGBMSklearnObjective(BoundObjective):
    """Callable for ``LGBMRanker(objective=...)``: ``(y_true, y_pred, weight, group) -> (grad, hess)``."""

    def __call__(self, y_true: NDArray, y_pred: NDArray, weight: NDArray | None, group: NDArray | None):
        n = len(y_true)
        gp = group_ptr_from_lgb_sizes(group, n)
        w = query_weights_from_rows(weight, gp, "LightGBM")
        # A refit on new data legitimately brings new labels: re-bind instead of raising.
        prep = self.prepared(None, y_true, gp, w, strict=False)
        return prep.grad_hess(np.asarray(y_pred, dtype=np.float64).reshape(-1))


def objective(name: str, **params: Any) -> LightGBMObjective:
    """A boostplug objective for ``lgb.train(params={"objective": ...})`` and ``lgb.cv``.

    Args:
        name: one of :func:`boostplug.objectives.names` (``"qbrank"``, ``"mpboost"``,
            ``"ndcg_boost"``, ``"rankboost"``).
        **params: the objective's parameters (see its module); unknown names raise ``ValueError``.
    """
    return LightGBMObjective(name, params)


def sklearn_objective(name: str, **params: Any) -> LightGBMSklearnObjective:
    """A boostplug objective in the 4-argument form ``LGBMRanker(objective=...)`` accepts."""
    return LightGBMSklearnObjective(name, params)


def metric(name: str, *, display_name: str | None = None) -> Callable[[NDArray, Any], tuple[str, float, bool]]:
    """A ``feval`` for ``lgb.train``/``lgb.cv``: boostplug's metric ``name`` (e.g. ``"ndcg@10"``, ``"map@10"``)
    with boostplug's default conventions, reported as ``(display_name, value, is_higher_better)``.
    With row weights it is the mean over queries weighted by each query's mean row weight, as
    LightGBM's own ndcg/map weight queries
    (``False`` only for the losses ``r1``/``r2``). For ``LGBMRanker.fit(eval_metric=...)`` use
    :func:`sklearn_metric`.

    Don't also ask LightGBM for its built-in metric of the same name, or pass ``display_name``.
    """
    spec = MetricSpec(name, display_name)

    def feval(preds: NDArray, eval_data: Any) -> tuple[str, float, bool]:
        if not hasattr(eval_data, "get_label"):
            raise TypeError(
                f"boostplug.lightgbm.metric({name!r}) is a feval for lgb.train/lgb.cv and got "
                f"{type(eval_data).__name__} instead of an lgb.Dataset; for LGBMRanker.fit(eval_metric=...) "
                f"use boostplug.lightgbm.sklearn_metric({name!r})"
            )
        labels = eval_data.get_label()
        gp = group_ptr_from_lgb_sizes(eval_data.get_group(), len(labels))
        qw = metric_query_weights(eval_data.get_weight(), gp)
        return spec.display_name, spec(preds, labels, gp, qw), spec.higher_is_better

    feval.__name__ = f"boostplug_{name}"
    return feval


def sklearn_metric(
    name: str, *, display_name: str | None = None
) -> Callable[[NDArray, NDArray, Any, Any], tuple[str, float, bool]]:
    """An ``eval_metric`` for ``LGBMRanker.fit``: ``(y_true, y_pred, weight, group) -> (name, value, is_higher_better)``."""
    spec = MetricSpec(name, display_name)

    def eval_metric(y_true: NDArray, y_pred: NDArray, weight: Any, group: Any) -> tuple[str, float, bool]:
        gp = group_ptr_from_lgb_sizes(group, len(y_true))
        return spec.display_name, spec(y_pred, y_true, gp, metric_query_weights(weight, gp)), spec.higher_is_better

    eval_metric.__name__ = f"boostplug_{name}"
    return eval_metric


def dataset(
    X: Any,
    y: ArrayLike,
    *,
    qid: ArrayLike | None = None,
    group_ptr: ArrayLike | None = None,
    weight: ArrayLike | None = None,
    init_score: ArrayLike | None = None,
    reference: Any = None,
    **kwargs: Any,
):
    """``lgb.Dataset`` with query groups from ``qid`` (contiguous, any order) or ``group_ptr``.

    ``weight`` may be one per row or one per query (expanded to rows).
    """
    import lightgbm as lgb

    if (qid is None) == (group_ptr is None):
        raise ValueError("pass exactly one of qid=... or group_ptr=...")
    gp = group_ptr_from_qid(qid) if qid is not None else np.asarray(group_ptr, dtype=np.int64)
    sizes = sizes_from_group_ptr(gp)
    if weight is not None:
        w = np.asarray(weight, dtype=np.float64)
        if w.shape[0] == sizes.shape[0] and w.shape[0] != gp[-1]:
            w = np.repeat(w, sizes)
        weight = w
    return lgb.Dataset(X, label=y, group=sizes, weight=weight, init_score=init_score, reference=reference, **kwargs)


def train_line_search(*args: Any, **kwargs: Any):
    """QBRank's Algorithm 2 with its exact line search on LightGBM trees (see
    :func:`boostplug._lightgbm_line_search.train_with_line_search`)."""
    from ._lightgbm_line_search import train_with_line_search

    return train_with_line_search(*args, **kwargs)


# Saved models: which boostplug objective trained them (the record is described in
# boostplug._model_record), and LightGBM's refit for callable objectives.

__all__ += ["record_objective", "objective_of", "model_to_string", "save_model", "load_model", "refit"]

_RECORD_ATTR = "_boostplug_objective_record"


def record_objective(booster: Any, objective: Any):
    """Remember on ``booster`` which boostplug ``objective`` trained it; :func:`save_model`
    and :func:`model_to_string` then write it into the model text. Returns ``booster``.

    ``objective``: what ``params["objective"]`` was (``objective(...)`` or
    ``sklearn_objective(...)``), or a registered objective's name (default parameters).
    """
    from ._model_record import record_for

    setattr(booster, _RECORD_ATTR, record_for(objective))
    return booster


def objective_of(booster_or_path: Any):
    """The :class:`~boostplug._model_record.ObjectiveRecord` of a LightGBM model (a
    Booster, a model file's path), or ``None`` when it records no boostplug objective
    (models trained with a built-in objective: their name is in ``booster.params["objective"]``).

    The record is validated: ``ValueError`` when it names an unknown objective or parameters
    the objective rejects. Rebuild the objective with
    ``objective(rec.name, **rec.params_with())``.
    """
    import os

    from ._model_record import record_from_lightgbm_text

    if isinstance(booster_or_path, (str, os.PathLike)):
        with open(booster_or_path, encoding="utf-8") as f:
            return record_from_lightgbm_text(f.read())
    if not hasattr(booster_or_path, "model_to_string"):
        raise TypeError(f"objective_of: expected an lgb.Booster or a model file path, got "
                        f"{type(booster_or_path).__name__}")
    record = getattr(booster_or_path, _RECORD_ATTR, None)
    if record is not None:
        return record
    return record_from_lightgbm_text(booster_or_path.model_to_string(num_iteration=-1))


def model_to_string(booster: Any, objective: Any = None, **kwargs: Any) -> str:
    """``booster.model_to_string(**kwargs)`` with the boostplug objective record in its
    parameters section: ``objective`` if given, else the one :func:`record_objective` or
    :func:`load_model` attached (a model without either is written as LightGBM writes it)."""
    from ._model_record import lightgbm_text_with_record, record_for

    record = record_for(objective) if objective is not None else getattr(booster, _RECORD_ATTR, None)
    text = booster.model_to_string(**kwargs)
    return text if record is None else lightgbm_text_with_record(text, record)


def save_model(booster: Any, path: Any, objective: Any = None, **kwargs: Any) -> None:
    """Save ``booster`` as LightGBM's text model file, with the boostplug objective record
    (see :func:`model_to_string`). The file loads with ``lgb.Booster(model_file=path)``,
    which ignores the record, and converts with treelite. Written atomically.
    ``kwargs``: ``num_iteration``, ``start_iteration``, ``importance_type`` as in
    ``Booster.save_model``."""
    from ._atomic import write_text

    write_text(path, model_to_string(booster, objective, **kwargs))


def load_model(path: Any = None, *, model_str: str | None = None):
    """``lgb.Booster(model_file=path)`` (or ``model_str=``) with its objective record read,
    validated and attached, so :func:`objective_of` and a later :func:`save_model` keep it."""
    import lightgbm as lgb

    from ._model_record import record_from_lightgbm_text

    if (path is None) == (model_str is None):
        raise ValueError("load_model: pass exactly one of path or model_str=")
    if model_str is None:
        with open(path, encoding="utf-8") as f:
            model_str = f.read()
    record = record_from_lightgbm_text(model_str)
    booster = lgb.Booster(model_str=model_str)
    if record is not None:
        setattr(booster, _RECORD_ATTR, record)
    return booster


def refit(
    booster: Any,
    data: Any,
    label: ArrayLike | None = None,
    *,
    qid: ArrayLike | None = None,
    group_ptr: ArrayLike | None = None,
    weight: ArrayLike | None = None,
    init_score: ArrayLike | None = None,
    objective: Any = None,
    decay_rate: float = 0.9,
):
    """What ``booster.refit(...)`` does, for models trained with a callable objective
    (LightGBM's own refit refuses them): a new Booster with every tree's structure kept and
    every leaf refitted on the new data, ``leaf = decay_rate * old + (1 - decay_rate) * new``.
    See :mod:`boostplug._lightgbm_refit` for the exact computation (it matches LightGBM's).

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

    from ._adapter import BoundObjective
    from ._lightgbm_refit import refit as _refit
    from ._model_record import ObjectiveRecord, record_for

    if objective is None:
        rec = objective_of(booster)
        if rec is None:
            raise ValueError("refit: the booster records no boostplug objective; pass objective=... "
                             "(for a built-in objective use booster.refit)")
        fobj: Any = LightGBMObjective(rec.name, rec.params_with())
    elif isinstance(objective, str):
        fobj = LightGBMObjective(objective, {})
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
    new = _refit(booster, train_set, fobj, decay_rate)
    if isinstance(fobj, BoundObjective):
        setattr(new, _RECORD_ATTR, record_for(fobj))
    elif getattr(booster, _RECORD_ATTR, None) is not None:
        setattr(new, _RECORD_ATTR, getattr(booster, _RECORD_ATTR))
    return new
