"""LightGBM model files that say which boostplug objective trained them: the record
(:mod:`boostplug.frameworks.model_record`) as one line of the model text's parameters."""

from __future__ import annotations

import os
from typing import Any

from ..._atomic import write_text
from ..model_record import lightgbm_text_with_record, record_for, record_from_lightgbm_text, warn_if_unregistered
from .model_text import check_model_text

__all__ = ["record_objective", "objective_of", "model_to_string", "save_model", "load_model", "RECORD_ATTR"]

#: The booster attribute holding the record in memory.
RECORD_ATTR = "_boostplug_objective_record"


def record_objective(booster: Any, objective: Any):
    """Remember on ``booster`` which boostplug ``objective`` trained it; :func:`save_model`
    and :func:`model_to_string` then write it into the model text. Returns ``booster``.

    ``objective``: what ``params["objective"]`` was (``objective(...)`` or
    ``sklearn_objective(...)``), or a registered objective's name (default parameters).
    """

    setattr(booster, RECORD_ATTR, record_for(objective))
    return booster


def objective_of(booster_or_path: Any):
    """The :class:`~boostplug.frameworks.model_record.ObjectiveRecord` of a LightGBM model (a
    Booster, a model file's path), or ``None`` when it records no boostplug objective
    (models trained with a built-in objective: their name is in ``booster.params["objective"]``).

    The record is validated: ``ValueError`` when it names an unknown objective or parameters
    the objective rejects. Rebuild the objective with
    ``objective(rec.name, **rec.params_with())``.
    """
    if isinstance(booster_or_path, (str, os.PathLike)):
        return record_from_lightgbm_text(_read_checked(booster_or_path))
    if not hasattr(booster_or_path, "model_to_string"):
        raise TypeError(f"objective_of: expected an lgb.Booster or a model file path, got "
                        f"{type(booster_or_path).__name__}")
    record = getattr(booster_or_path, RECORD_ATTR, None)
    if record is not None:
        return record
    return record_from_lightgbm_text(booster_or_path.model_to_string(num_iteration=-1))


def model_to_string(booster: Any, objective: Any = None, **kwargs: Any) -> str:
    """``booster.model_to_string(**kwargs)`` with the boostplug objective record in its
    parameters section: ``objective`` if given, else the one :func:`record_objective` or
    :func:`load_model` attached (a model without either is written as LightGBM writes it)."""
    record = record_for(objective) if objective is not None else getattr(booster, RECORD_ATTR, None)
    warn_if_unregistered(record)
    text = booster.model_to_string(**kwargs)
    return text if record is None else lightgbm_text_with_record(text, record)


def save_model(booster: Any, path: Any, objective: Any = None, **kwargs: Any) -> None:
    """Save ``booster`` as LightGBM's text model file, with the boostplug objective record
    (see :func:`model_to_string`). The file loads with ``lgb.Booster(model_file=path)``,
    which ignores the record, and converts with treelite. Written atomically.
    ``kwargs``: ``num_iteration``, ``start_iteration``, ``importance_type`` as in
    ``Booster.save_model``."""
    write_text(path, model_to_string(booster, objective, **kwargs))


def _read_checked(path: Any) -> str:
    """The text of the model file ``path``, checked by :func:`check_model_text`."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{os.fspath(path)}: not a LightGBM text model file (byte {exc.start} is not "
                         "UTF-8 text)") from None
    check_model_text(text, os.fspath(path))
    return text


def load_model(path: Any = None, *, model_str: str | None = None):
    """``lgb.Booster(model_file=path)`` (or ``model_str=``) with its objective record read,
    validated and attached, so :func:`objective_of` and a later :func:`save_model` keep it.

    The text is checked before LightGBM reads it (LightGBM's parser can crash the process on a
    file cut short): ``ValueError`` naming the file (or "the model string") and the line for
    text that is incomplete or inconsistent (tree count, fields and array lengths of each tree,
    end markers), including cuts that LightGBM would load without their parameters section
    and so without the objective record.
    """
    import lightgbm as lgb

    if (path is None) == (model_str is None):
        raise ValueError("load_model: pass exactly one of path or model_str=")
    if model_str is None:
        model_str = _read_checked(path)
    else:
        if not isinstance(model_str, str):
            raise TypeError(f"load_model: model_str must be a str, got {type(model_str).__name__}")
        check_model_text(model_str, "the model string")
    record = record_from_lightgbm_text(model_str)
    booster = lgb.Booster(model_str=model_str)
    if record is not None:
        setattr(booster, RECORD_ATTR, record)
    return booster
