"""CatBoost model files that say which boostplug objective trained them: the record
(:mod:`boostplug.frameworks.model_record`) in the model's metadata, which CatBoost keeps in its files."""

from __future__ import annotations

import os
import warnings
from typing import Any

from .._atomic import write_bytes
from .._validation import fs_path
from ..frameworks.model_record import RECORD_KEY, ObjectiveRecord, warn_if_unregistered
from ._train import record_objective

__all__ = ["save_model", "load_model", "objective_of"]


def objective_of(model_or_path: Any) -> ObjectiveRecord | None:
    """The :class:`~boostplug.frameworks.model_record.ObjectiveRecord` of a CatBoost model (or of a
    model file's path), ``None`` when it records none; validated (``ValueError`` for an unknown
    objective or parameters it refuses). Rebuild the objective with
    ``objective(rec.name, **rec.params_with())``."""
    model = _read(model_or_path) if isinstance(model_or_path, (str, bytes, os.PathLike)) else model_or_path
    if not hasattr(model, "get_metadata"):
        raise TypeError(f"objective_of: expected a CatBoost model or a model file path, got {type(model).__name__}")
    text = model.get_metadata().get(RECORD_KEY)
    return None if text is None else ObjectiveRecord.from_json(text)


def save_model(model: Any, path: Any, objective: Any = None) -> None:
    """Save ``model`` as a CatBoost binary model file (written atomically), after recording
    ``objective`` (given, else the one :func:`~boostplug.catboost.train` recorded; none: a
    ``UserWarning``). CatBoost's ``init_model`` does not carry the record over to a continued model."""
    if objective is not None:
        record_objective(model, objective)
    meta = model.get_metadata()
    record = meta.get(RECORD_KEY)
    if record is None:
        warnings.warn("boostplug.catboost.save_model: the model records no boostplug objective; pass objective= "
                      "(the one it was trained with) to record it", UserWarning, stacklevel=2)
    warn_if_unregistered(record)
    write_bytes(path, model._serialize_model())


def load_model(path: Any) -> Any:
    """A ``catboost.CatBoost`` model from ``path``, its objective record validated (``ValueError`` if
    invalid); a ``UserWarning`` when it records none (a model saved by CatBoost itself)."""
    model = _read(path)
    if objective_of(model) is None:
        warnings.warn(f"boostplug.catboost.load_model: {fs_path(path, 'model file')} records no boostplug "
                      "objective (saved by CatBoost itself, or trained with another loss)", UserWarning, stacklevel=2)
    return model


def _read(path: Any) -> Any:
    from catboost import CatBoost

    return CatBoost().load_model(fs_path(path, "model file"))
