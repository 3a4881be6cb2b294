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
* ``lgb.cv`` keeps queries whole only for its built-in ranking objective names: with a
  callable objective it splits rows at random, cutting queries between training and
  validation. The objectives and metrics here refuse such a fold; use :func:`cv`, or
  ``lgb.cv(..., folds=query_folds(train_set))``.
* Labels: LightGBM stores a NaN label as 0 and an infinite one as +-1e38 when it builds a
  Dataset, before any objective sees it. :func:`dataset` refuses NaN and infinite labels; on
  a plain ``lgb.Dataset`` the objectives and metrics refuse the +-1e38 stand-in, but a NaN
  turned into 0 cannot be told from a real 0.
* The math lives in :mod:`boostplug.objectives`; this module only adapts.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._adapter import (
    BoundObjective, MetricSpec, group_ptr_from_lgb_sizes, metric_query_weights,
    query_weights_from_rows,
)
from ._validation import check_finite
from .groups import check_group_ptr, group_ptr_from_qid, group_ptr_from_sizes, sizes_from_group_ptr

__all__ = ["objective", "sklearn_objective", "metric", "sklearn_metric", "dataset", "query_folds", "cv",
           "train_line_search"]

_FOLDS_FIX = (
    "pass folds that keep queries whole: lgb.cv(..., folds=boostplug.lightgbm.query_folds(train_set, nfold=5)), "
    "or boostplug.lightgbm.cv(params, train_set, ...)"
)

#: What LightGBM stores for an infinite label (NaN becomes 0) when it builds a Dataset.
_LGB_INF_LABEL = np.float32(1e38)


def _check_whole_queries(data: Any, who: str) -> None:
    """A subset Dataset (an ``lgb.cv`` fold) must hold each query of its parent whole or not at all."""
    used = getattr(data, "used_indices", None)
    parent = getattr(data, "reference", None)
    if used is None or parent is None:
        return
    sizes = parent.get_group()
    if sizes is None or len(sizes) == 0:
        return
    sizes = np.asarray(sizes, dtype=np.int64)
    query_of_row = np.repeat(np.arange(sizes.shape[0]), sizes)
    counts = np.bincount(query_of_row[np.asarray(used, dtype=np.int64)], minlength=sizes.shape[0])
    cut = np.flatnonzero((counts > 0) & (counts != sizes))
    if cut.size:
        q = int(cut[0])
        raise ValueError(
            f"{who}: this Dataset is a subset of another (an lgb.cv fold) holding {int(counts[q])} of the "
            f"{int(sizes[q])} rows of its query {q} ({cut.size} queries cut in all), so documents of one query "
            "sit in both training and validation and the validation score is inflated. lgb.cv splits rows at "
            "random unless the objective is one of its built-in ranking names; " + _FOLDS_FIX
        )


def _check_lgb_labels(labels: Any, who: str) -> None:
    """Refuse LightGBM's stand-in for an infinite label (a NaN label is already 0, undetectable)."""
    y = np.asarray(labels)
    bad = np.flatnonzero(~(np.abs(y) < _LGB_INF_LABEL))
    if bad.size:
        row = int(bad[0])
        raise ValueError(
            f"{who}: row {row} has label {float(y[row]):g}, which is how LightGBM stores an infinite label "
            "(it stores a NaN label as 0, which cannot be detected here); fix the labels: "
            "boostplug.lightgbm.dataset(X, y, ...) refuses NaN and infinite labels with their row"
        )


def _check_set(data: Any, labels: Any, who: str) -> None:
    _check_whole_queries(data, who)
    _check_lgb_labels(labels, who)


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
        prep = self.prepared(train_data, labels, gp, w, check_new=lambda: _check_set(train_data, labels, self.name))
        return prep.grad_hess(np.asarray(preds, dtype=np.float64).reshape(-1))


class LightGBMSklearnObjective(BoundObjective):
    """Callable for ``LGBMRanker(objective=...)``: ``(y_true, y_pred, weight, group) -> (grad, hess)``."""

    def __call__(self, y_true: NDArray, y_pred: NDArray, weight: NDArray | None, group: NDArray | None):
        n = len(y_true)
        gp = group_ptr_from_lgb_sizes(group, n)
        w = query_weights_from_rows(weight, gp, "LightGBM")
        # A refit on new data legitimately brings new labels: re-bind instead of raising.
        prep = self.prepared(None, y_true, gp, w, strict=False, check_new=lambda: _check_lgb_labels(y_true, self.name))
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


class LightGBMMetric:
    """``feval`` for ``lgb.train``/``lgb.cv``: ``(preds, eval_data) -> (name, value, is_higher_better)``.

    A module-level class (not a closure) so that it pickles (joblib, multiprocessing, Dask).
    """

    def __init__(self, name: str, display_name: str | None = None) -> None:
        self.spec = MetricSpec(name, display_name)
        self.__name__ = f"boostplug_{name}"
        self._checked: "weakref.WeakSet[Any]" = weakref.WeakSet()

    def __call__(self, preds: NDArray, eval_data: Any) -> tuple[str, float, bool]:
        name = self.spec.name
        if not hasattr(eval_data, "get_label"):
            raise TypeError(
                f"boostplug.lightgbm.metric({name!r}) is a feval for lgb.train/lgb.cv and got "
                f"{type(eval_data).__name__} instead of an lgb.Dataset; for LGBMRanker.fit(eval_metric=...) "
                f"use boostplug.lightgbm.sklearn_metric({name!r})"
            )
        labels = eval_data.get_label()
        gp = group_ptr_from_lgb_sizes(eval_data.get_group(), len(labels))
        self._check_once(eval_data, labels)
        qw = metric_query_weights(eval_data.get_weight(), gp)
        return self.spec.display_name, self.spec(preds, labels, gp, qw), self.spec.higher_is_better

    def _check_once(self, eval_data: Any, labels: Any) -> None:
        try:
            if eval_data in self._checked:
                return
        except TypeError:
            pass
        _check_set(eval_data, labels, f"boostplug.lightgbm.metric({self.spec.name!r})")
        try:
            self._checked.add(eval_data)
        except TypeError:
            pass

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.spec.name, "display_name": self.spec.display_name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["display_name"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec.name!r}, display_name={self.spec.display_name!r})"


class LightGBMSklearnMetric:
    """``eval_metric`` for ``LGBMRanker.fit``: ``(y_true, y_pred, weight, group) -> (name, value,
    is_higher_better)``; picklable like :class:`LightGBMMetric`."""

    def __init__(self, name: str, display_name: str | None = None) -> None:
        self.spec = MetricSpec(name, display_name)
        self.__name__ = f"boostplug_{name}"

    def __call__(self, y_true: NDArray, y_pred: NDArray, weight: Any, group: Any) -> tuple[str, float, bool]:
        gp = group_ptr_from_lgb_sizes(group, len(y_true))
        _check_lgb_labels(y_true, f"boostplug.lightgbm.sklearn_metric({self.spec.name!r})")
        value = self.spec(y_pred, y_true, gp, metric_query_weights(weight, gp))
        return self.spec.display_name, value, self.spec.higher_is_better

    __getstate__ = LightGBMMetric.__getstate__
    __repr__ = LightGBMMetric.__repr__

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["display_name"])


def metric(name: str, *, display_name: str | None = None) -> LightGBMMetric:
    """A ``feval`` for ``lgb.train``/``lgb.cv``: boostplug's metric ``name`` (e.g. ``"ndcg@10"``, ``"map@10"``)
    with boostplug's default conventions, reported as ``(display_name, value, is_higher_better)``
    (``is_higher_better`` is ``False`` only for the losses ``r1``/``r2``, so LightGBM's early
    stopping goes the right way). With row weights it is the mean over queries weighted by each
    query's mean row weight, as LightGBM's own ndcg/map weight queries. For
    ``LGBMRanker.fit(eval_metric=...)`` use :func:`sklearn_metric`.

    An ``lgb.cv`` fold that cuts a query of the full Dataset is refused (see :func:`query_folds`),
    as is LightGBM's stand-in for an infinite label. The callable pickles.

    Don't also ask LightGBM for its built-in metric of the same name, or pass ``display_name``.
    """
    return LightGBMMetric(name, display_name)


def sklearn_metric(name: str, *, display_name: str | None = None) -> LightGBMSklearnMetric:
    """An ``eval_metric`` for ``LGBMRanker.fit``: ``(y_true, y_pred, weight, group) -> (name, value, is_higher_better)``."""
    return LightGBMSklearnMetric(name, display_name)


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

    ``weight`` may be one per row or one per query (expanded to rows). Labels must be finite:
    LightGBM would store a NaN label as 0 and an infinite one as 1e38, so they are refused here
    with their row. ``group_ptr`` must hold whole numbers from 0 to ``len(y)``.
    """
    import lightgbm as lgb

    if (qid is None) == (group_ptr is None):
        raise ValueError("pass exactly one of qid=... or group_ptr=...")
    if "group" in kwargs:
        raise TypeError("dataset() builds LightGBM's group= from qid= or group_ptr=; don't pass group= too")
    check_finite(y, "y", noun="label")
    n = int(np.shape(y)[0])
    if qid is not None and np.shape(qid)[0] != n:
        raise ValueError(f"qid has {np.shape(qid)[0]} rows but y has {n}")
    gp = group_ptr_from_qid(qid) if qid is not None else check_group_ptr(group_ptr)
    if gp[-1] != n:
        raise ValueError(f"the query groups cover {int(gp[-1])} rows but y has {n}")
    sizes = sizes_from_group_ptr(gp)
    if weight is not None:
        w = np.asarray(weight, dtype=np.float64).reshape(-1)
        if w.shape[0] == sizes.shape[0] and w.shape[0] != n:
            w = np.repeat(w, sizes)
        elif w.shape[0] != n:
            raise ValueError(
                f"got {w.shape[0]} weights for {n} rows in {sizes.shape[0]} queries; give one per row or one per query"
            )
        weight = w
    return lgb.Dataset(X, label=y, group=sizes, weight=weight, init_score=init_score, reference=reference, **kwargs)


def _group_sizes_of(train_set: Any) -> NDArray[np.int64]:
    """Group sizes of an ``lgb.Dataset`` without constructing it when they were given to it."""
    sizes = getattr(train_set, "group", None)
    if sizes is None:
        sizes = train_set.construct().get_group()
    if sizes is None or len(sizes) == 0:
        raise ValueError(
            "the Dataset has no query information (lgb.Dataset(X, y, group=sizes), or "
            "boostplug.lightgbm.dataset(X, y, qid=qid))"
        )
    return np.diff(group_ptr_from_sizes(np.asarray(sizes)))


def query_folds(
    train_set: Any, nfold: int = 5, *, seed: int = 0, shuffle: bool = True
) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Cross-validation folds that keep every query whole, for ``lgb.cv(..., folds=...)``.

    ``lgb.cv`` groups its folds by query only for its built-in ranking objective names; with a
    boostplug (callable) objective it splits rows at random, so one query's documents land in
    both training and validation, and the validation scores are inflated.

    Example:
        >>> folds = query_folds(train_set, nfold=5, seed=0)                   # doctest: +SKIP
        >>> lgb.cv(params, train_set, 100, folds=folds, feval=metric("ndcg@10"))  # doctest: +SKIP

    Args:
        train_set: an ``lgb.Dataset`` with query groups.
        nfold: number of folds, 2 to the number of queries.
        seed: seeds the shuffle of the queries (``numpy.random.RandomState``, as LightGBM's own folds).
        shuffle: shuffle the queries before splitting; else consecutive runs of queries.

    Returns:
        ``nfold`` pairs ``(train_rows, test_rows)`` (sorted int64 row indices); each query is
        in the test rows of exactly one fold, and the folds differ by at most one query.
    """
    if isinstance(nfold, bool) or not isinstance(nfold, (int, np.integer)):
        raise TypeError(f"nfold must be an integer, got {nfold!r}")
    sizes = _group_sizes_of(train_set)
    n_q = sizes.shape[0]
    if not 2 <= nfold <= n_q:
        raise ValueError(f"nfold must be between 2 and the number of queries ({n_q}), got {int(nfold)}")
    order = np.random.RandomState(seed).permutation(n_q) if shuffle else np.arange(n_q)
    fold_of_query = np.empty(n_q, dtype=np.int64)
    for k, queries in enumerate(np.array_split(order, int(nfold))):
        fold_of_query[queries] = k
    fold_of_row = np.repeat(fold_of_query, sizes)
    return [(np.flatnonzero(fold_of_row != k), np.flatnonzero(fold_of_row == k)) for k in range(int(nfold))]


def cv(params: dict[str, Any], train_set: Any, num_boost_round: int = 100, *, nfold: int = 5, seed: int = 0,
       shuffle: bool = True, **kwargs: Any) -> dict[str, Any]:
    """``lgb.cv`` on folds that keep queries whole (:func:`query_folds`).

    ``kwargs`` go to ``lgb.cv`` (``feval``, ``callbacks``, ``return_cvbooster``...); for folds of
    your own call ``lgb.cv(..., folds=...)`` directly.
    """
    import lightgbm as lgb

    if "folds" in kwargs:
        raise TypeError(
            "cv() makes query folds from nfold/seed/shuffle; for your own folds call lgb.cv(..., folds=...)"
        )
    folds = query_folds(train_set, nfold, seed=seed, shuffle=shuffle)
    return lgb.cv(params, train_set, num_boost_round, folds=folds, seed=seed, **kwargs)


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


__all__.append("LGBMRanker")


def __getattr__(name: str) -> Any:
    # The scikit-learn ranker imports lightgbm and scikit-learn, so it loads on first use.
    if name == "LGBMRanker":
        from ._lightgbm_ranker import LGBMRanker

        return LGBMRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
