"""LightGBM model files that say which boostplug objective trained them, and that other tools
read as a standard LightGBM model (user documentation: ``docs/objectives/index.md``, "Saving,
serving and refitting models").

A model saved here with the record (:mod:`boostplug.frameworks.model_record`) says
``objective=lambdarank`` in the header (a raw-score ranking objective, for treelite and
onnxmltools) and ``[objective: lambdarank_by_boostplug_refit_with_boostplug.lightgbm.refit_<record>]``
among the parameters, ``<record>`` the record's JSON in lower-case base32 without padding (LightGBM
lower-cases an objective name where it parses one). LightGBM loads that known parameter without a
warning and writes it out again when a loaded model is saved; its ``Booster.refit`` refuses the
unknown name, whose first words say what to call instead. Files of the earlier layout (a
``[boostplug_objective: ...]`` parameter) still load; a model whose parameters name a built-in
objective keeps it, its record written in that earlier layout. The record written carries the
SHA-256 of the rest of the text and of the record itself (``model_sha256``), which
:func:`load_model` and :func:`objective_of` of a file check.
"""

from __future__ import annotations

import base64
import hashlib
import os
import warnings
from dataclasses import replace
from typing import Any

from ..._atomic import write_text
from ..model_record import (RECORD_KEY, ObjectiveRecord, checksum_of, clip, objective_that_trained, record_for,
                            record_found, refuse_mismatch, refuse_stale, warn_if_unregistered, without_checksum)
from .model_text import check_model_text

__all__ = ["record_objective", "objective_of", "model_to_string", "save_model", "load_model", "log_model", "RECORD_ATTR",
           "LIGHTGBM_OBJECTIVE", "text_with_record", "record_from_text"]

#: How a LightGBM model file names the objective of a model trained with a boostplug objective: it
#: starts like a raw-score ranking objective (what onnxmltools looks at), LightGBM knows no such
#: objective (its ``Booster.refit`` stops with this name in its message), and the record follows
#: it, base32-encoded.
LIGHTGBM_OBJECTIVE = "lambdarank_by_boostplug_refit_with_boostplug.lightgbm.refit"

#: The booster attribute holding the record in memory.
RECORD_ATTR = "_boostplug_objective_record"
#: The booster attribute holding how many rounds the booster had when the record was attached.
ROUNDS_ATTR = "_boostplug_objective_rounds"

_HEADER_OBJECTIVE = "objective=lambdarank"
_CALLABLE = ("custom", "none")
_OBJECTIVE_LINE = "[objective: "
_OURS = f"{_OBJECTIVE_LINE}{LIGHTGBM_OBJECTIVE}_"
_PARAMETER_RECORD = f"[{RECORD_KEY}: "  # the earlier layout: a parameter LightGBM does not know


def record_objective(booster: Any, objective: Any):
    """Remember on ``booster`` which boostplug ``objective`` trained it; :func:`save_model`
    and :func:`model_to_string` then write it into the model text. Returns ``booster``.

    ``objective``: what ``params["objective"]`` was (``objective(...)`` or
    ``sklearn_objective(...)``), or a registered objective's name (default parameters).
    """

    return _attach(booster, record_for(objective))


def _attach(booster: Any, record: ObjectiveRecord) -> Any:
    """``booster`` holding ``record`` and its current round count."""
    setattr(booster, RECORD_ATTR, record)
    setattr(booster, ROUNDS_ATTR, booster.current_iteration())
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
        return record_from_text(_read_checked(booster_or_path), os.fspath(booster_or_path))
    if not hasattr(booster_or_path, "model_to_string"):
        raise TypeError(f"objective_of: expected an lgb.Booster or a model file path, got "
                        f"{type(booster_or_path).__name__}")
    record = getattr(booster_or_path, RECORD_ATTR, None)
    if record is not None:
        return record
    return record_from_text(booster_or_path.model_to_string(num_iteration=-1))


def model_to_string(booster: Any, objective: Any = None, **kwargs: Any) -> str:
    """``booster.model_to_string(**kwargs)`` with the boostplug objective record in its
    parameters section: ``objective`` if given, else the one :func:`record_objective` or
    :func:`load_model` attached, else the boostplug objective the booster was trained with (its
    ``params["objective"]``, or the one its training rounds called); a model without any is
    written as LightGBM writes it. The record carries the text's checksum. A booster trained on
    (``booster.update()``) since its record was attached is a ``ValueError`` without ``objective=``."""
    return _text(booster, objective, None, kwargs)


def _text(booster: Any, objective: Any, who: str | None, kwargs: dict[str, Any]) -> str:
    """:func:`model_to_string`; ``who`` (a function's name) warns when the booster was trained with a
    custom objective and no record is found."""
    record = _record_to_write(booster, objective, who)
    warn_if_unregistered(record)
    text = booster.model_to_string(**kwargs)
    return text if record is None else text_with_record(text, record)


def _record_to_write(booster: Any, objective: Any, who: str | None) -> ObjectiveRecord | None:
    if objective is not None:
        return record_for(objective)
    record = getattr(booster, RECORD_ATTR, None)
    if record is not None:  # (booster.update() continues training in place, perhaps with another objective)
        refuse_stale(record.name, getattr(booster, ROUNDS_ATTR, None), booster.current_iteration(),
                     who or "boostplug.lightgbm.model_to_string")
        return record
    trained = objective_that_trained(booster)
    if trained is not None:
        return record_found(trained, who)
    if who is not None and (getattr(booster, "params", None) or {}).get("objective") in _CALLABLE:
        warnings.warn(f"{who}: the booster was trained with a custom objective, and boostplug knows no record of "
                      "which (none given, and a Booster of lgb.train keeps no trace of it), so the file says [objective: custom] "
                      "and records none; pass objective= (the boostplug objective it was trained with)",
                      UserWarning, stacklevel=4)
    return None


def save_model(booster: Any, path: Any, objective: Any = None, **kwargs: Any) -> None:
    """Save ``booster`` as LightGBM's text model file, with the boostplug objective record
    (see :func:`model_to_string`: without ``objective=``, the one the booster was trained with;
    a ``UserWarning`` when it was trained with a custom objective that boostplug does not know).
    The file loads with ``lgb.Booster(model_file=path)``, which ignores the record, and converts
    with treelite. Written atomically. ``kwargs``: ``num_iteration``, ``start_iteration``,
    ``importance_type`` as in ``Booster.save_model``."""
    write_text(path, _text(booster, objective, "boostplug.lightgbm.save_model", kwargs))


def log_model(booster: Any, name: str = "model", objective: Any = None, **kwargs: Any) -> Any:
    """``mlflow.lightgbm.log_model`` of a Booster with its objective record (returns MLflow's
    ``ModelInfo``); ``mlflow.lightgbm.load_model`` then gives a Booster that
    :func:`objective_of` reads.

    MLflow saves a Booster with LightGBM's own writer, which knows only LightGBM's parameters:
    a Booster freshly trained with a boostplug objective is logged with ``[objective: custom]``
    and no record. Logged here, it goes as the model :func:`save_model` writes (``objective``
    and the record as there: without ``objective=``, the one the booster was trained with). A Booster loaded from such a file (:func:`load_model`,
    ``lgb.Booster(model_file=...)``) keeps its record through ``mlflow.lightgbm.log_model`` too;
    so does a fitted ``boostplug.lightgbm.LGBMRanker`` (MLflow pickles it). ``kwargs`` go to
    ``mlflow.lightgbm.log_model`` (``input_example``, ``signature``, ``registered_model_name``...).
    """
    import lightgbm as lgb
    import mlflow.lightgbm

    if not isinstance(booster, lgb.Booster):
        raise TypeError(f"log_model: expected an lgb.Booster, got {type(booster).__name__} (log a fitted "
                        "LGBMRanker with mlflow.lightgbm.log_model, which keeps its record)")
    text = _text(booster, objective, "boostplug.lightgbm.log_model", {})
    return mlflow.lightgbm.log_model(load_model(model_str=text), name=name, **kwargs)


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
    file cut short), and against its record's checksum when it carries one (``ValueError``
    naming the file and saying that it does not match): ``ValueError`` naming the file (or "the
    model string") and the line for
    text that is incomplete or inconsistent (tree count, fields and array lengths of each tree,
    end markers), including cuts that LightGBM would load without their parameters section
    and so without the objective record. What LightGBM refuses itself (a header without
    ``feature_infos``, a damaged ``pandas_categorical:`` line) is that ``ValueError`` too, with
    LightGBM's message.
    """
    import lightgbm as lgb

    if (path is None) == (model_str is None):
        raise ValueError("load_model: pass exactly one of path or model_str=")
    if model_str is None:
        model_str, source = _read_checked(path), os.fspath(path)
    else:
        if not isinstance(model_str, str):
            raise TypeError(f"load_model: model_str must be a str, got {type(model_str).__name__}")
        source = "the model string"
        check_model_text(model_str, source)
    record = record_from_text(model_str, source)
    if record is not None and record.model_sha256:  # the Booster's own text then says nothing of this file
        record = replace(record, model_sha256="")
        model_str = text_with_record(model_str, record, checksum=False)
    try:
        booster = lgb.Booster(model_str=model_str)
    except (lgb.basic.LightGBMError, ValueError) as exc:  # ValueError: the pandas_categorical line's JSON
        raise ValueError(f"{source}: LightGBM refused it ({exc}); an incomplete or damaged LightGBM model, "
                         "not loaded") from None
    return booster if record is None else _attach(booster, record)


def text_with_record(model_str: str, record: ObjectiveRecord | None, *, checksum: bool = True) -> str:
    """LightGBM model text with ``record`` written as the module docstring says (replacing a record
    already there, of either layout), carrying the text's checksum unless ``checksum`` is false;
    ``None`` takes it out and restores ``[objective: custom]``."""
    lines = model_str.split("\n")
    ours = any(ln.startswith(_OURS) for ln in lines)
    lines = [ln for ln in lines if not ln.startswith(_PARAMETER_RECORD) and not (ours and ln == _HEADER_OBJECTIVE)]
    lines = [f"{_OBJECTIVE_LINE}custom]" if ln.startswith(_OURS) else ln for ln in lines]
    if record is None:
        return "\n".join(lines)
    record = replace(record, model_sha256="")
    start, end = _parameters(lines)
    if start is None:  # no parameters section: LightGBM writes it before pandas_categorical
        at = next((i for i, ln in enumerate(lines) if ln.startswith("pandas_categorical:")), len(lines))
        lines[at:at] = ["parameters:", f"{_OBJECTIVE_LINE}custom]", "end of parameters", ""]
        start, end = at, at + 2
    at = next((i for i in range(start + 1, end) if lines[i].startswith(_OBJECTIVE_LINE)), None)
    if at is None or lines[at][len(_OBJECTIVE_LINE):-1] not in _CALLABLE:
        lines.insert(end, _record_line(record, False))  # a built-in trained it: keep its name
        at = end
    else:
        lines[at] = _record_line(record, True)
        header_end = next((i for i, ln in enumerate(lines) if ln.startswith("Tree=")), start)
        if not any(ln.startswith("objective=") for ln in lines[:header_end]):
            after = next((i + 1 for i, ln in enumerate(lines[:header_end]) if ln.startswith("max_feature_idx=")), 1)
            lines.insert(after, _HEADER_OBJECTIVE)
            at += 1
    if checksum:
        digest = _content_sha256("\n".join(lines[:at] + lines[at + 1:]), record.to_json())
        lines[at] = _record_line(replace(record, model_sha256=digest), lines[at].startswith(_OURS))
    return "\n".join(lines)


def _record_line(record: ObjectiveRecord, encoded: bool) -> str:
    """The line that holds ``record``: the objective line with the record in base32 (``encoded``), or
    the earlier layout's parameter."""
    if not encoded:
        return f"{_PARAMETER_RECORD}{record.to_json()}]"
    return f"{_OURS}{base64.b32encode(record.to_json().encode('utf-8')).decode('ascii').rstrip('=').lower()}]"


def _content_sha256(rest: str, record_json: str) -> str:
    """The checksum of model text: the text without the record's line (and without the newlines at
    its end) and the record's JSON without its checksum."""
    h = hashlib.sha256(rest.rstrip("\n").encode("utf-8", "surrogatepass"))
    h.update(b"\x00" + without_checksum(record_json).encode("utf-8"))
    return h.hexdigest()


def _parameters(lines: list[str]) -> tuple[int | None, int]:
    """Indexes of the ``parameters:`` line and of its ``end of parameters`` (``None, 0``: none)."""
    try:
        start = lines.index("parameters:")
        return start, lines.index("end of parameters", start)
    except ValueError:
        return None, 0


def record_from_text(model_str: str, source: str | None = None) -> ObjectiveRecord | None:
    """The record in LightGBM model text (either layout), validated; ``None`` when there is none.
    With ``source`` (a file's name, "the model string"), the text must match the checksum the
    record carries (``ValueError`` naming ``source`` otherwise)."""
    found = next(((p, at) for p in (_OURS, _PARAMETER_RECORD) if (at := model_str.find("\n" + p)) >= 0), None)
    if found is None:
        return None
    prefix, start = found
    line_start = start + 1
    start = line_start + len(prefix)
    end = model_str.find("\n", start)
    line = (model_str[start:] if end < 0 else model_str[start:end]).rstrip("\r")
    if not line.endswith("]"):
        raise ValueError(f"the model's {RECORD_KEY} line is cut short: {clip(line)}")
    if prefix == _PARAMETER_RECORD:
        text = line[:-1]
    else:
        try:
            text = base64.b32decode(line[:-1].upper() + "=" * (-len(line[:-1]) % 8)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise ValueError(f"the model's objective line holds a damaged {RECORD_KEY} record (not base32 of UTF-8 "
                             f"text): {clip(line)}") from None
    expected = None if source is None else checksum_of(text, source)
    if expected is not None:
        rest = model_str[:line_start] + ("" if end < 0 else model_str[end + 1:])
        refuse_mismatch(expected, _content_sha256(rest, text), source)
    return ObjectiveRecord.from_json(text)
