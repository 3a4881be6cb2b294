"""What trained a saved model: the boostplug objective record shared by the framework adapters.

A model trained with a callable objective does not say what trained it, so the adapters add one
compact JSON record, the same for both frameworks (user documentation: ``docs/objectives/index.md``,
"Saving, serving and refitting models")::

    {"boostplug":"0.1.0","format":1,"objective":"<name>","params":{"<parameter>":<value>,...}}

LightGBM keeps it in the model text (:mod:`boostplug.frameworks.lightgbm.model_file`), XGBoost as
the booster attribute ``boostplug_objective``. Parameters are saved by value, except the
objective's ``row_params``, saved only as a :class:`Fingerprint` (:meth:`ObjectiveRecord.params_with`
takes them back). A record is validated when read. A file saved by boostplug's ``save_model``
carries ``"model_sha256"``, the SHA-256 of the rest of the model, checked when boostplug reads it
(:func:`checksum_of`, :func:`refuse_mismatch`); a model loaded by boostplug keeps its record
without it (:func:`without_checksum`). Without ``objective=``, ``save_model`` records the objective
the Booster's parameters hold (:func:`objective_that_trained`), and refuses a Booster trained past
the rounds its record covers (:func:`refuse_stale`). An objective that was never registered is
recorded with its class's import path in ``"class"`` (:func:`warn_if_unregistered`). The rules as
users meet them: docs/reliability.md, "saved objective records".
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np

from .. import objectives as _objectives
from ..keyed_pairs import KeyedPairs

__all__ = ["RECORD_KEY", "ROUNDS_KEY", "FORMAT", "CHECKSUM_KEY", "Fingerprint", "ObjectiveRecord", "record_for",
           "warn_if_unregistered", "clip", "checksum_of", "refuse_mismatch", "with_checksum", "without_checksum",
           "objective_that_trained", "record_found", "refuse_stale", "json_object"]

#: Name of the record: the LightGBM parameter line's key and the XGBoost attribute.
RECORD_KEY = "boostplug_objective"
#: The key (XGBoost's attribute, CatBoost's metadata) of how many rounds the model had when its record
#: was attached (``xgb.train(xgb_model=...)`` and CatBoost's ``init_model`` copy both to the continued model).
ROUNDS_KEY = "boostplug_objective_rounds"
#: Version of the record's layout; a reader refuses a newer one.
FORMAT = 1
#: The record's key for the SHA-256 (hex) of the model file's other content (optional: readers of
#: format 1 that predate it ignore it).
CHECKSUM_KEY = "model_sha256"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
#: The dtype a fingerprint of a KeyedPairs table records (its shape is the number of pairs).
KEYED_DTYPE = "keyed_pairs"
# Objective.check stands in for row-index parameters, so any value does for validation.
_STAND_IN = [[0, 1]]


@dataclass(frozen=True)
class Fingerprint:
    """Shape, dtype and SHA-256 of a row-index parameter that the record does not hold."""

    shape: tuple[int, ...]
    dtype: str
    sha256: str

    @classmethod
    def of(cls, value: Any) -> "Fingerprint":
        if isinstance(value, KeyedPairs):
            h = hashlib.sha256()
            for part in (value.query, value.better, value.worse, value.weight):
                h.update(b"\x1e" + _key_bytes(part))
            return cls((value.n_pairs,), KEYED_DTYPE, h.hexdigest())
        arr = _canonical_array(value)
        return cls(tuple(int(s) for s in arr.shape), str(arr.dtype), hashlib.sha256(arr.tobytes()).hexdigest())


@dataclass(frozen=True)
class ObjectiveRecord:
    """The boostplug objective a model was trained with, as saved in the model file.

    Attributes:
        name: the registered objective's name (``boostplug.objectives.names()``).
        params: the parameters given to it, by value.
        fingerprints: parameters given but saved only as a :class:`Fingerprint`
            (the objective's row-index parameters, its ``row_params``).
        version: the boostplug version that wrote the record.
        loss_class: ``"module.QualName"`` of the objective's class when it was not registered
            under ``name`` ("" when it was): what to register before the record can be read.
        model_sha256: the SHA-256 of the model file's other content, as the file that held the
            record gave it ("" for none; not part of the record's equality).
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    fingerprints: Mapping[str, Fingerprint] = field(default_factory=dict)
    version: str = ""
    loss_class: str = ""
    model_sha256: str = field(default="", compare=False)

    def params_with(self, **row_params: Any) -> dict[str, Any]:
        """The parameters to rebuild the objective, with the fingerprinted ones given back.

        Example: ``bpl.objective(rec.name, **rec.params_with(**{key: rows}))`` for each ``key``
        in :attr:`fingerprints`. Each
        fingerprinted parameter must be given and match its fingerprint (``ValueError``
        otherwise, naming it); a parameter that was not fingerprinted is a ``TypeError``.
        """
        extra = sorted(set(row_params) - set(self.fingerprints))
        if extra:
            raise TypeError(f"params_with: {extra} were not fingerprinted in this record "
                            f"(fingerprinted: {sorted(self.fingerprints)})")
        out = dict(self.params)
        for key, fp in self.fingerprints.items():
            if key not in row_params:
                raise ValueError(
                    f"the {self.name!r} objective was trained with {key} of shape {list(fp.shape)}, which the "
                    f"model file holds only as a fingerprint: pass them, params_with({key}=...)"
                )
            got = Fingerprint.of(row_params[key])
            if got != fp:
                raise ValueError(
                    f"{key} given (shape {list(got.shape)}, sha256 {got.sha256[:12]}...) are not the ones the model "
                    f"was trained with (shape {list(fp.shape)}, sha256 {fp.sha256[:12]}...)"
                )
            out[key] = row_params[key]
        return out

    def to_json(self) -> str:
        """The compact JSON text saved in model files."""
        doc: dict[str, Any] = {"boostplug": self.version, "format": FORMAT, "objective": self.name,
                               "params": dict(self.params)}
        if self.fingerprints:
            doc["fingerprints"] = {k: asdict(v) for k, v in self.fingerprints.items()}
        if self.loss_class:
            doc["class"] = self.loss_class
        if self.model_sha256:
            doc[CHECKSUM_KEY] = self.model_sha256
        return _dumps(doc)

    @classmethod
    def from_json(cls, text: str) -> "ObjectiveRecord":
        """Parse and validate a record (``ValueError`` saying what is wrong)."""
        try:
            doc = json.loads(text)
        except (TypeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep to read
            raise ValueError(f"the model's {RECORD_KEY} record is not JSON ({exc}): {clip(text)}") from None
        if not isinstance(doc, dict):
            raise ValueError(f"the model's {RECORD_KEY} record is not a JSON object: {clip(text)}")
        fmt = doc.get("format")
        if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt < 1:
            raise ValueError(f"the model's {RECORD_KEY} record has no valid format number: {clip(text)}")
        if fmt > FORMAT:
            raise ValueError(f"the model's {RECORD_KEY} record has format {fmt}, newer than this boostplug reads "
                             f"({FORMAT}); upgrade boostplug (the record was written by {doc.get('boostplug')!r})")
        name, params, fps = doc.get("objective"), doc.get("params", {}), doc.get("fingerprints", {})
        if not isinstance(name, str):
            raise ValueError(f"the model's {RECORD_KEY} record names no objective: {clip(text)}")
        if not isinstance(params, dict) or not isinstance(fps, dict):
            raise ValueError(f"the model's {RECORD_KEY} record has malformed params or fingerprints: {clip(text)}")
        try:
            fingerprints = {str(k): Fingerprint(tuple(int(s) for s in v["shape"]), str(v["dtype"]), str(v["sha256"]))
                            for k, v in fps.items()}
        except (TypeError, KeyError, ValueError):
            raise ValueError(f"the model's {RECORD_KEY} record has a malformed fingerprint: {clip(text)}") from None
        loss_class = doc.get("class", "")
        if loss_class and name.lower() not in _objectives.names():
            raise ValueError(f"the model was trained with the objective {name!r} of class {loss_class}, which was not "
                             "registered and is not registered here: boostplug.objectives.register it (import the "
                             "class first), then read the model's record")
        # a JAX objective where JAX is not installed: read unchecked (only training needs JAX); any other is
        # registered here now: the name rebuilds it, as any other record's
        jax_only = name.lower() in _objectives.JAX_OBJECTIVES and name.lower() not in _objectives.names()
        record = cls(name.lower() if jax_only else _objectives.get(name).name, params, fingerprints,
                     str(doc.get("boostplug", "")), model_sha256=_checksum_in(doc, "the model"))
        if not jax_only:
            record.validate()
        return record

    def validate(self, entry: Any = None) -> None:
        """Check the name and parameters with the objective registry (or with ``entry``, the
        objective's own entry when it is not registered)."""
        obj = _objectives.get(self.name) if entry is None else entry
        clash = sorted(set(self.params) & set(self.fingerprints))
        if clash:
            raise ValueError(f"the {RECORD_KEY} record gives {clash} both by value and as a fingerprint")
        not_rows = sorted(set(self.fingerprints) - set(obj.row_params))
        if not_rows:
            raise ValueError(f"the {RECORD_KEY} record fingerprints {not_rows}, which are not row-index "
                             f"parameters of {self.name!r} (those are {list(obj.row_params)})")
        obj.check({**self.params, **dict.fromkeys(self.fingerprints, _STAND_IN)})


def record_for(objective: Any) -> ObjectiveRecord:
    """The record of ``objective``: a boostplug objective built by an adapter
    (``boostplug.lightgbm.objective(...)``, ``boostplug.xgboost.objective(...)``, ...),
    an :class:`ObjectiveRecord`, or a registered objective's name (default parameters). An
    adapter's objective that is not registered is recorded with its class (``loss_class``)."""
    from .. import __version__

    if isinstance(objective, ObjectiveRecord):
        if not objective.loss_class:
            objective.validate()
        return objective
    entry = None
    if isinstance(objective, str):
        entry = _objectives.get(objective)
        name, given = entry.name, {}
    elif hasattr(objective, "name") and isinstance(getattr(objective, "params", None), dict):
        name, given = objective.name, objective.params
        entry = getattr(objective, "objective", None)
        entry = entry if isinstance(entry, _objectives.Objective) else _objectives.get(name)
    else:
        raise TypeError(
            f"expected a boostplug objective (boostplug.lightgbm.objective(...), boostplug.xgboost.objective(...)) "
            f"or an objective name, got {type(objective).__name__}"
        )
    rows = entry.row_params
    fingerprints = {key: Fingerprint.of(value) for key, value in given.items() if key in rows and value is not None}
    params = {key: _savable(name, key, value) for key, value in given.items() if key not in fingerprints}
    cls = entry.loss_class
    unregistered = "" if _objectives.is_registered(entry) else f"{cls.__module__}.{cls.__qualname__}"
    record = ObjectiveRecord(name, params, fingerprints, __version__, unregistered)
    record.validate(entry)
    return record


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":"), sort_keys=True, allow_nan=False)


def json_object(text: Any) -> dict[str, Any] | None:
    """``text`` parsed as a JSON object; ``None`` when it is no JSON or not an object."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _checksum_in(doc: Any, source: str) -> str:
    """The record's ``model_sha256`` ("" when it has none); ``ValueError`` for one that is not a SHA-256."""
    if CHECKSUM_KEY not in doc:
        return ""
    value = doc[CHECKSUM_KEY]
    if not isinstance(value, str) or not _SHA256_HEX.fullmatch(value):
        raise ValueError(f"{source}: its {RECORD_KEY} record's {CHECKSUM_KEY} is not a SHA-256 (64 hexadecimal "
                         f"digits): {clip(value, 80)}")
    return value


def checksum_of(record_text: str, source: str) -> str | None:
    """The ``model_sha256`` of a record's JSON text, ``None`` when it has none; ``ValueError`` naming
    ``source`` for a record that is not a JSON object or a checksum that is not a SHA-256."""
    doc = json_object(record_text)
    if doc is None:
        raise ValueError(f"{source}: its {RECORD_KEY} record is not JSON, or not a JSON object: {clip(record_text)}")
    return _checksum_in(doc, source) or None


def refuse_mismatch(expected: str, actual: str, source: str) -> None:
    """``ValueError`` naming ``source`` when the checksum its record gives is not its content's."""
    if expected != actual:
        raise ValueError(f"{source}: its checksum does not match its content (the record gives {CHECKSUM_KEY} "
                         f"{expected[:16]}..., the content's is {actual[:16]}...): the file was changed after "
                         "boostplug saved it; not loaded")


def with_checksum(record_text: str, digest: str) -> str:
    """A record's JSON text, compact with sorted keys, carrying ``digest`` as its ``model_sha256``
    (none for ""); unchanged when it is no JSON object (reading the record refuses that)."""
    doc = json_object(record_text)
    if doc is None:
        return record_text
    doc.pop(CHECKSUM_KEY, None)
    if digest:
        doc[CHECKSUM_KEY] = digest
    try:
        return _dumps(doc)
    except ValueError:  # a NaN the writer would not write: the record is refused when read
        return record_text


def without_checksum(record_text: str) -> str:
    """A record's JSON text without its ``model_sha256``, compact with sorted keys (what a file's
    checksum covers of its record); unchanged when it is no JSON object."""
    return with_checksum(record_text, "")


# ---- which objective trained a Booster ----------------------------------------------------------------
def objective_that_trained(booster: Any) -> Any:
    """The boostplug objective ``booster``'s ``params["objective"]`` holds (a scikit-learn wrapper's
    ``func`` too), or ``None``: LightGBM's ``lgb.train`` puts ``"none"`` there and XGBoost keeps no
    objective callable, and nothing else ties a Booster to the objective that trained it (a round
    hands the objective the training set, not the Booster), so those need ``objective=``."""
    given = (getattr(booster, "params", None) or {}).get("objective")
    given = getattr(given, "func", given)  # LightGBM's scikit-learn wrapper of it
    return given if hasattr(given, "name") and isinstance(getattr(given, "params", None), dict) else None


def refuse_stale(name: Any, covered: Any, rounds: int, who: str) -> None:
    """``ValueError`` from ``who`` when a Booster has more ``rounds`` than the ``covered`` ones its
    record of the objective ``name`` was attached for (``None``: not known, nothing refused)."""
    try:
        covered = int(covered)
    except (TypeError, ValueError):
        return
    if rounds > covered:
        raise ValueError(f"{who}: the booster's objective record names {name!r} for its first {covered} rounds, but it "
                         f"has {rounds}: the later ones were trained where boostplug did not see them (continued "
                         "training carries the record over), perhaps with another objective; pass objective= (the "
                         "boostplug objective the last rounds were trained with) to record it")


def record_found(objective: Any, who: str | None) -> ObjectiveRecord | None:
    """The record of an objective found training a Booster (:func:`objective_that_trained`), or, when
    its parameters cannot be recorded, ``None`` with a ``UserWarning`` from ``who`` (none when
    ``who`` is ``None``): a file saved without ``objective=`` is then written as before, without one."""
    try:
        return record_for(objective)
    except (TypeError, ValueError) as exc:
        if who is not None:
            name = getattr(objective, "name", objective)
            warnings.warn(f"{who}: the booster was trained with the objective {name!r}, which cannot be recorded "
                          f"({exc}); the file records no objective", UserWarning, stacklevel=4)
        return None


def warn_if_unregistered(record: ObjectiveRecord | str | None) -> None:
    """A ``UserWarning`` when a model about to be saved records an objective that was not registered
    (``record``: an :class:`ObjectiveRecord` or its JSON): the file names it, but reading it back
    needs the class registered under that name."""
    if isinstance(record, str):
        doc = json_object(record) or {}
        name, loss_class = doc.get("objective"), doc.get("class", "")
    elif isinstance(record, ObjectiveRecord):
        name, loss_class = record.name, record.loss_class
    else:
        return
    if loss_class:
        warnings.warn(f"the model's objective {name!r} ({loss_class}) is not registered: the file records its name, "
                      f"parameters and class, and objective_of / load_model read it back only where "
                      f"boostplug.objectives.register({loss_class.rsplit('.', 1)[-1]}) has run", UserWarning,
                      stacklevel=3)


def _savable(name: str, key: str, value: Any) -> Any:
    """``value`` as plain JSON (numpy scalars and arrays become numbers and lists)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name}: parameter {key}={value} cannot be saved (not finite)")
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name}: parameter {key} is an array of {arr.dtype}; only numeric arrays can be saved")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: parameter {key} has non-finite values and cannot be saved")
        return arr.tolist()
    raise TypeError(f"{name}: parameter {key} of type {type(value).__name__} cannot be saved in a model file "
                    "(strings, numbers, booleans, None and numeric arrays can)")


def _key_bytes(values: np.ndarray | None) -> bytes:
    """One key column (or the weights) as bytes that do not depend on its integer width or string
    storage: int64 or float64 bytes, else the keys' text separated by a unit separator."""
    if values is None:
        return b"none"
    if values.dtype.kind in "biuf":
        return _canonical_array(values).tobytes()
    return "\x1f".join(map(str, values.tolist())).encode("utf-8")


def _canonical_array(value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind in "biu":
        return np.ascontiguousarray(arr, dtype=np.int64)
    if arr.dtype.kind == "f":
        return np.ascontiguousarray(arr, dtype=np.float64)
    raise TypeError(f"expected a numeric array, got {arr.dtype}")


def clip(text: Any, n: int = 200) -> str:
    s = str(text)
    return s if len(s) <= n else s[:n] + "..."
