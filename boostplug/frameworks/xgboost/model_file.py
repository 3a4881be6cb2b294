"""XGBoost model files that say which boostplug objective trained them: the record
(:mod:`boostplug.frameworks.model_record`) as the booster attribute ``boostplug_objective``,
which XGBoost keeps in its JSON and UBJSON model files. :func:`save_model` adds the SHA-256 of the
model's other content to the record it writes (:func:`~.model_check.content_sha256`), which
:func:`load_model` checks."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

from ..._atomic import write_bytes
from ..model_record import (RECORD_KEY, ROUNDS_KEY, ObjectiveRecord, json_object, objective_that_trained, record_for,
                            record_found, refuse_stale, warn_if_unregistered, with_checksum)
from .model_check import content_sha256, forget_checksum, load_checked
from .ubjson import parse_ubjson

__all__ = ["record_objective", "objective_of", "save_model", "load_model", "ROUNDS_KEY"]


def record_objective(booster: Any, objective: Any):
    """Record which boostplug ``objective`` trained ``booster``, as the booster attribute
    ``boostplug_objective``, which XGBoost saves in its JSON/UBJSON model files
    (``booster.save_model``, ``save_raw``, pickling), with the booster's round count
    (``boostplug_objective_rounds``: :func:`save_model` refuses to guess for more). Returns ``booster``.

    ``objective``: what ``xgb.train(obj=...)`` was given (:func:`objective`), or a registered
    objective's name (default parameters). The model file's own ``objective`` stays
    ``reg:squarederror``, XGBoost's placeholder for a custom objective.
    """
    booster.set_attr(**{RECORD_KEY: record_for(objective).to_json(), ROUNDS_KEY: str(booster.num_boosted_rounds())})
    return booster


def objective_of(booster_or_path: Any):
    """The :class:`~boostplug.frameworks.model_record.ObjectiveRecord` of an XGBoost model (a Booster,
    a JSON/UBJSON model file's path), or ``None`` when it records no boostplug objective
    (models trained with a built-in objective: see ``booster.save_config()``).

    The record is validated: ``ValueError`` when it names an unknown objective or parameters
    the objective rejects. Rebuild the objective with
    ``objective(rec.name, **rec.params_with())``.
    """

    if isinstance(booster_or_path, (str, bytes, os.PathLike)):
        booster_or_path = _read(booster_or_path)
    if not hasattr(booster_or_path, "attr"):
        raise TypeError(f"objective_of: expected an xgb.Booster or a model file path, got "
                        f"{type(booster_or_path).__name__}")
    text = booster_or_path.attr(RECORD_KEY)
    return None if text is None else ObjectiveRecord.from_json(text)


def save_model(booster: Any, path: Any, objective: Any = None) -> None:
    """Save ``booster`` (JSON for a ``.json`` path, UBJSON otherwise), after recording
    ``objective`` (:func:`record_objective`): the one given, else the one already recorded, else
    the boostplug objective the booster was trained with (``xgb.train(obj=...)``); a
    ``UserWarning`` when it was trained with a custom objective and none of these is known. The
    record in the file carries the SHA-256 of the model's content, which :func:`load_model`
    checks. Written atomically. A booster with more rounds than when its record was attached
    (training continued with ``xgb_model=``, which copies the record) is a ``ValueError`` without
    ``objective=``: the record may not name the objective of the last rounds."""
    recorded = booster.attr(RECORD_KEY)
    if objective is None and recorded is not None:  # (named by its JSON, else by the text itself)
        refuse_stale((json_object(recorded) or {}).get("objective", recorded), booster.attr(ROUNDS_KEY),
                     booster.num_boosted_rounds(), "boostplug.xgboost.save_model")
    elif objective is None:
        trained = objective_that_trained(booster)
        if trained is None:
            _warn_if_custom(booster)
        else:
            objective = record_found(trained, "boostplug.xgboost.save_model")
    if objective is not None:
        record_objective(booster, objective)
    record = booster.attr(RECORD_KEY)
    fmt = "json" if os.fspath(path).lower().endswith(".json") else "ubj"
    if record is None:
        write_bytes(path, bytes(booster.save_raw(raw_format=fmt)))
        return
    warn_if_unregistered(record)
    digest = content_sha256(parse_ubjson(bytes(booster.save_raw(raw_format="ubj")), "the booster"))
    booster.set_attr(**{RECORD_KEY: with_checksum(record, digest)})
    try:
        data = bytes(booster.save_raw(raw_format=fmt))
    finally:  # the booster keeps its record without the checksum, which describes this file only
        booster.set_attr(**{RECORD_KEY: with_checksum(record, "")})
    write_bytes(path, data)


def _warn_if_custom(booster: Any) -> None:
    """A ``UserWarning`` when ``booster`` may have been trained with a custom objective (its objective
    is ``reg:squarederror``, XGBoost's placeholder for one) that boostplug does not know."""
    try:
        name = json.loads(booster.save_config())["learner"]["objective"]["name"]
    except (KeyError, TypeError, ValueError):
        return
    if name == "reg:squarederror":
        warnings.warn("boostplug.xgboost.save_model: no boostplug objective is recorded for this booster and none "
                      "was seen training it, so the file names none; if a custom objective trained it (XGBoost "
                      "then writes its placeholder reg:squarederror), pass objective= (the boostplug objective "
                      "it was trained with) to record it", UserWarning, stacklevel=3)


def load_model(path: Any):
    """``xgb.Booster(model_file=path)``, its objective record validated (``ValueError`` if invalid).
    The file is checked first (:func:`~.model_check.load_checked`): XGBoost's own reader
    crashes the process or hangs on a UBJSON file cut short, and its ``predict`` on a tree whose
    children or split features are out of range. A UBJSON structure that breaks is a
    ``ValueError`` naming the file and the byte offset; a tree that does not hold together, one
    naming the file, the tree and the field; a file whose record carries a checksum that its
    content does not match, one saying so. ``path``: str, bytes or os.PathLike; a FIFO, a socket,
    a device and (XGBoost 3.0 on) a file that is neither JSON nor UBJSON are a ``ValueError``
    naming it."""
    booster = _read(path)
    if objective_of(booster) is not None and booster.attr(ROUNDS_KEY) is None:  # the record covers the file's rounds
        booster.set_attr(**{ROUNDS_KEY: str(booster.num_boosted_rounds())})
    return forget_checksum(booster)


def _read(path: Any):
    import xgboost as xgb

    from ..._validation import fs_path

    # bytes too (XGBoost takes only str and os.PathLike)
    return load_checked(fs_path(path, "model file"), lambda checked: xgb.Booster(model_file=checked))
