"""Boosting CatBoost trees on a boostplug objective, one fit of one tree per round; the model files
that say which objective trained them (the record of :mod:`boostplug.frameworks.model_record` in the
model's metadata, which CatBoost keeps in its files)."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .._atomic import write_bytes
from .._core.early_stopping import BestRound
from .._validation import check_optional_rounds, check_rounds, fs_path, plain
from ..frameworks.model_record import (CHECKSUM_KEY, RECORD_KEY, ROUNDS_KEY, ObjectiveRecord, checksum_of, clip,
                                      json_object, record_for, refuse_mismatch, refuse_stale, warn_if_unregistered,
                                      with_checksum, without_checksum)
from ..frameworks.sklearn_ranker import check_eval_metrics
from ._objective import CatBoostObjective, _pool_arrays, objective, rounds_pool

__all__ = ["train", "record_objective", "save_model", "load_model", "objective_of"]

#: CatBoost parameters this loop sets itself: the loss, one tree per fit, and what keeps CatBoost's
#: derivative calls at the round's scores (plain boosting, one leaf estimation iteration).
_OWN = {"loss_function": None, "objective": None, "iterations": None, "n_estimators": None, "num_boost_round": None,
        "num_trees": None, "eval_metric": None, "boosting_type": "Plain", "leaf_estimation_iterations": 1}
#: Quantization parameters the pool is quantized with, once, before the first round.
_QUANTIZATION = ("border_count", "feature_border_type", "nan_mode", "per_float_feature_quantization")


#: The CatBoost releases this module is tested with (pyproject.toml's range): it uses private CatBoost
#: attributes, which any feature release (1.0, 1.1, 1.2...) may change, all through :func:`_private`.
TESTED = ">=1.2,<1.3"


def _private(model: Any, name: str, *value: Any) -> Any:
    """``model``'s private ``name``, or set it to ``value``: a ``RuntimeError`` naming a missing one."""
    if not hasattr(model, name):
        import catboost

        raise RuntimeError(f"boostplug.catboost uses CatBoost's private {name}, which catboost {catboost.__version__} "
                           f"does not have: boostplug is tested with catboost{TESTED}")
    return setattr(model, name, *value) if value else getattr(model, name)


def _check(params: dict[str, Any]) -> None:
    for key, allowed in _OWN.items():
        if key in params and params[key] != allowed:
            why = (f"must be {allowed!r}: CatBoost would ask for derivatives at scores other than the round's"
                   if allowed is not None else "is set by boostplug.catboost.train")
            raise ValueError(f"boostplug.catboost.train: {key}={params[key]!r} {why}")


def train(params: dict[str, Any], pool: Any, obj: Any, num_boost_round: int, *, valid_sets: Sequence[Any] = (),
          valid_names: Sequence[str] | None = None, metric: str | Sequence[str] = "ndcg@10",
          early_stopping_rounds: int | None = None, evals_result: dict[str, Any] | None = None,
          callback: Callable[[int, Any], Any] | None = None) -> Any:
    """A ``catboost.CatBoost`` model of ``num_boost_round`` trees boosted on the boostplug objective
    ``obj`` (:func:`~boostplug.catboost.objective`, or a name) over :func:`~boostplug.catboost.pool`
    ``pool``; ``params``: CatBoost's but the loss, the tree count, ``boosting_type`` (Plain) and
    ``leaf_estimation_iterations`` (1). ``valid_sets`` (pools, named ``valid_names``) are scored
    after each round with ``metric`` into ``evals_result`` (``{name: {metric: [values]}}``);
    ``early_stopping_rounds``: stop when the last metric on the last set has not improved for that
    many rounds; with valid sets the model keeps its best round on it, stopped or not, unless
    ``params["use_best_model"]`` is false (CatBoost's rule). ``callback(t, model)`` after each round. Stops
    when a round's gradients are all zero (``None`` if no tree was grown). A loss's ``split_weights()``
    weigh the rows, ``l2_leaf_reg`` rescaled to the queries' weights (CatBoost scales it by the mean
    weight), each tree's leaves centred at the end, as for CatBoost's losses on pairs. docs/catboost.md."""
    from catboost import CatBoost, CatBoostError

    _check(params)
    rounds = check_rounds(num_boost_round, "num_boost_round")
    patience = check_optional_rounds(early_stopping_rounds, "early_stopping_rounds")
    specs = check_eval_metrics(metric)
    names = list(valid_names or [f"valid_{i}" for i in range(len(valid_sets))])
    if len(names) != len(valid_sets) or (patience and not valid_sets):
        raise ValueError(f"boostplug.catboost.train: {len(valid_sets)} valid_sets, valid_names {names!r}, "
                         f"early_stopping_rounds={patience} (which needs a valid set)")
    sets = [(name, v, [s.prepare(*_pool_arrays(v)) for s in specs], np.zeros(v.num_row()))
            for name, v in zip(names, valid_sets)]
    results = {} if evals_result is None else evals_result
    results.update({name: {s.name: [] for s in specs} for name in names})
    bound = obj if isinstance(obj, CatBoostObjective) else objective(obj)
    labels, _ = _pool_arrays(pool)
    work = rounds_pool(pool, {k: params[k] for k in _QUANTIZATION if k in params})
    threads = params.get("thread_count", -1)
    # Every round fits with random_seed: CatBoost continues an init_model with that model's seed anyway.
    base = {"verbose": False, "allow_writing_files": False, **params, "use_best_model": False,
            "boosting_type": "Plain", "leaf_estimation_iterations": 1, "iterations": 1, "eval_metric": "RMSE"}
    l2_key = "reg_lambda" if "reg_lambda" in params else "l2_leaf_reg"
    user = pool.boostplug_rows.row_weights  # the queries' weights, per row
    scores, weighted = np.zeros(labels.shape[0]), None
    model, rule = None, BestRound(patience, specs[-1].higher_is_better)
    for t in range(rounds):
        ders = bound.round(pool, scores, threads if threads and threads > 0 else None)
        if not np.any(ders.der1):
            break  # nothing to learn: every tree would be one leaf of value 0
        if ders.weights is not None and ders.weights is not weighted:  # the same array every round: set once
            work.set_weight(weighted := ders.weights)
        scale = (labels.shape[0] if user is None else user.sum()) / ders.weights.sum() if ders.split else 1.0
        step = CatBoost({**base, "loss_function": ders, l2_key: float(params.get(l2_key, 3.0)) * scale})
        try:
            with warnings.catch_warnings():  # CatBoost's note that it cannot compile the objective, at every fit
                warnings.filterwarnings("ignore", message="Can't optimze method", category=UserWarning)
                step.fit(work, init_model=model)
        except CatBoostError:
            if ders.error is not None:
                raise ders.error from None
            raise
        scores = scores + step.predict(work, prediction_type="RawFormulaVal", ntree_start=t, ntree_end=t + 1,
                                       thread_count=threads)  # CatBoost predicts on every core unless told
        model = step
        for name, v, prepared, s in sets:
            s += step.predict(v, prediction_type="RawFormulaVal", ntree_start=t, ntree_end=t + 1, thread_count=threads)
            for spec, prep in zip(specs, prepared):
                results[name][spec.name].append(spec.value(s, prep))
        if callback is not None:
            callback(t + 1, model)
        if sets and rule.update(results[names[-1]][specs[-1].name][-1]):
            break
    if model is not None:
        if rule.best and params.get("use_best_model", True):  # all NaN: every tree kept
            model.shrink(rule.best)
        if ders.split:
            _centre(model, work, user)
        _finish(model, bound, params, l2_key)
    return model


def _centre(model: Any, work: Any, user: np.ndarray | None) -> None:
    """Each tree's leaves less their mean over the training rows (weighted as the queries), a leaf without rows
    at 0, as CatBoost's losses on pairs do; at the end (each round's fit continues from the trees as grown)."""
    counts, values = model.get_tree_leaf_counts(), model.get_leaf_values()
    for t, (leaf, start) in enumerate(zip(model.calc_leaf_indexes(work).T, np.cumsum(counts) - counts)):
        tree = values[start:start + counts[t]]  # a view: the model's values change with it
        sums = np.bincount(leaf, weights=user, minlength=counts[t])
        tree -= np.where(np.abs(sums) > 1e-9, tree @ sums / sums.sum(), tree)
    model.set_leaf_values(values)
    model.load_model(blob=_private(model, "_serialize_model")())  # set_leaf_values alone changes no prediction


def _finish(model: Any, bound: CatBoostObjective, params: dict[str, Any], l2_key: str) -> None:
    """The model's parameters as trained, in memory and in its files (``get_params()`` of a loaded
    model): its tree count, the seed and ``l2_leaf_reg`` given, the objective as ``"boostplug:<name>"``
    (CatBoost cannot train it; not the last round's derivatives, nor the stand-in eval metric); the
    objective's record in its metadata."""
    meta = model.get_metadata()
    saved = json.loads(meta["params"])
    saved["random_seed"], saved["boosting_options"]["iterations"] = int(params.get("random_seed", 0)), model.tree_count_
    for given in (_private(model, "_init_params"), saved["flat_params"]):
        for key in ("eval_metric", "use_best_model", l2_key):
            given.pop(key, None)
        given.update({key: plain(params[key]) for key in ("random_seed", l2_key, "use_best_model") if key in params})
        given["iterations"], given["loss_function"] = model.tree_count_, f"boostplug:{bound.name}"
    meta["params"] = json.dumps(saved)
    _private(model, "_canonized_params", None)  # CatBoost's copy of _init_params with synonyms resolved
    record_objective(model, bound)


def record_objective(model: Any, objective: Any) -> Any:
    """Record which boostplug ``objective`` trained the CatBoost ``model`` in its metadata (saved in
    its model files and pickles), with its tree count. Returns ``model``."""
    meta = model.get_metadata()
    meta[RECORD_KEY], meta[ROUNDS_KEY] = record_for(objective).to_json(), str(model.tree_count_)
    return model


def objective_of(model_or_path: Any) -> ObjectiveRecord | None:
    """The :class:`~boostplug.frameworks.model_record.ObjectiveRecord` of a CatBoost model (or of a
    model file's path), ``None`` when it records none; validated (``ValueError`` for an unknown
    objective or parameters it refuses). Rebuild the objective with
    ``objective(rec.name, **rec.params_with())``."""
    model = _read(model_or_path) if isinstance(model_or_path, (str, bytes, os.PathLike)) else model_or_path
    if not hasattr(model, "get_metadata"):
        raise TypeError(f"objective_of: expected a CatBoost model or a model file path, got {type(model).__name__}")
    meta = model.get_metadata()
    rounds = meta.get(ROUNDS_KEY)
    if rounds is not None and not (rounds.isascii() and rounds.isdigit()):
        raise ValueError(f"objective_of: the model's {ROUNDS_KEY} is not a round count: {clip(rounds, 80)!r}")
    text = meta.get(RECORD_KEY)
    return None if text is None else ObjectiveRecord.from_json(text)


def save_model(model: Any, path: Any, objective: Any = None) -> None:
    """Save ``model`` as a CatBoost binary model file (written atomically), after recording
    ``objective`` (given, else the one :func:`~boostplug.catboost.train` recorded; none: a
    ``UserWarning``), with the SHA-256 of the file's other content, which :func:`load_model` checks.
    CatBoost's ``init_model`` copies the record to a continued model: without ``objective=``, a model
    with more trees than its record covers is a ``ValueError``."""
    if objective is not None:
        record_objective(model, objective)
    meta = model.get_metadata()
    record = meta.get(RECORD_KEY)
    if record is None:
        warnings.warn("boostplug.catboost.save_model: the model records no boostplug objective; pass objective= "
                      "(the one it was trained with) to record it", UserWarning, stacklevel=2)
        write_bytes(path, _private(model, "_serialize_model")())
        return
    refuse_stale((json_object(record) or {}).get("objective", record), meta.get(ROUNDS_KEY), model.tree_count_,
                 "boostplug.catboost.save_model")
    warn_if_unregistered(record)
    meta[RECORD_KEY] = record = without_checksum(record)
    meta[RECORD_KEY] = with_checksum(record, hashlib.sha256(_private(model, "_serialize_model")()).hexdigest())
    try:
        data = _private(model, "_serialize_model")()
    finally:  # the model keeps its record without the checksum, which describes this file only
        meta[RECORD_KEY] = record
    write_bytes(path, data)


def load_model(path: Any) -> Any:
    """A ``catboost.CatBoost`` model from ``path``, its objective record validated (``ValueError`` if
    invalid); a ``UserWarning`` when it records none (a model saved by CatBoost itself)."""
    model = _read(path)
    if objective_of(model) is None:
        warnings.warn(f"boostplug.catboost.load_model: {fs_path(path, 'model file')} records no boostplug "
                      "objective (saved by CatBoost itself, or trained with another loss)", UserWarning, stacklevel=2)
    return model


def _read(path: Any) -> Any:
    """The model in the file ``path``, its record's checksum checked and taken out (read from the bytes:
    CatBoost's reader of a path rewrites the parameters' numbers, which the checksum covers)."""
    from catboost import CatBoost, CatBoostError

    source = fs_path(path, "model file")
    with open(source, "rb") as f:
        try:
            model = CatBoost().load_model(blob=f.read())
        except CatBoostError as e:
            raise ValueError(f"{source}: not a model file CatBoost reads ({e})") from None
    meta = model.get_metadata()
    if meta.get(RECORD_KEY) is not None:
        if (expected := checksum_of(meta[RECORD_KEY], source)) is None:
            raise ValueError(f"{source}: its {RECORD_KEY} record has no {CHECKSUM_KEY} (edited, or saved by CatBoost "
                             "or a boostplug older than the checksum): not loaded. To trust it, save it again: "
                             "boostplug.catboost.save_model(catboost.CatBoost().load_model(path), path)")
        meta[RECORD_KEY] = without_checksum(meta[RECORD_KEY])
        refuse_mismatch(expected, hashlib.sha256(_private(model, "_serialize_model")()).hexdigest(), source)
    _private(model, "_init_params", _private(model, "_get_params_from_model_updated_with_init_params")())  # as a path
    return model
