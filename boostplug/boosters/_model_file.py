"""The booster JSON model file: the object a fitted booster is written as
(:class:`ModelFile`: ``to_dict``/``from_dict``/``save``/``load``), written atomically and
read back validated. The format and what reading checks: docs/boosters.md ("The JSON model file").

A stump's threshold may be ``-Infinity`` (the split of known values from missing ones: NaN ranks
lowest); ``"complement": true`` is ``[x <= threshold]``. Floats round-trip bit for bit, every field
is checked (a ``ValueError`` naming the file, or "the model dict", and the field as a JSON path),
then ``"sha256"``, when the object has one.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import write_text
from ._classes import PUBLIC, booster_class

__all__ = ["FORMAT", "FORMAT_VERSION", "RANKER_KINDS", "ModelFile", "load"]

FORMAT = "boostplug.booster"
FORMAT_VERSION = 1

#: Weak-ranker kinds and the keys each may hold (beyond ``kind``): required, optional.
RANKER_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "stump": (("feature", "threshold"), ("float32", "complement")),
    "feature": (("feature",), ("float32",)),
}

_TOP_KEYS = {"format", "version", "class", "params", "n_features_in", "rankers", "weights", "history",
             "stop_reason", "best_iteration", "fitted", "sha256"}
#: The file's key for the SHA-256 of the rest of its content.
CHECKSUM = "sha256"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_REQUIRED = ("format", "version", "class", "params", "n_features_in", "rankers", "weights")
# Feature indices are C ints in the data files and frameworks the boosters read from.
_MAX_FEATURES = 2**31 - 1


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer, np.bool_)):
        return o.item()    # the Python int or bool it holds
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if callable(o):
        raise TypeError(f"cannot save a model whose parameter is a callable ({o!r}) to JSON")
    raise TypeError(f"cannot write {type(o).__name__} to JSON")


def _content_sha256(d: dict[str, Any]) -> str:
    """The SHA-256 of a model object without its checksum: compact JSON with sorted keys (floats as
    Python writes them, which read back exactly)."""
    rest = {k: v for k, v in d.items() if k != CHECKSUM}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def _check_checksum(d: dict[str, Any], source: str) -> None:
    """``d``'s checksum (when it has one) matches its content; ``ValueError`` naming ``source`` otherwise."""
    if CHECKSUM not in d:
        return
    given = d[CHECKSUM]
    if not isinstance(given, str) or not _SHA256_HEX.fullmatch(given):
        raise ValueError(f"{source}: {CHECKSUM} must be a SHA-256 (64 hexadecimal digits), got {_show(given)}")
    actual = _content_sha256(d)
    if given != actual:
        raise ValueError(f"{source}: its checksum does not match its content ({CHECKSUM} {given[:16]}..., the "
                         f"content's is {actual[:16]}...): the file was changed after boostplug saved it; not loaded")


# ---- reading ------------------------------------------------------------------------------------
class _Bad(ValueError):
    """A field of the file is wrong; ``_build`` adds the file name."""


def _kind(v: Any) -> str:
    return "a boolean" if isinstance(v, bool) else f"a JSON {type(v).__name__}" if v is not None else "null"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _show(v: Any) -> str:
    """``repr(v)``, a huge integer shortened to its first digits and its length."""
    if _is_int(v) and abs(v) >= 10**30:
        try:
            text = str(abs(v))
        except ValueError:  # more digits than Python converts to text (4300 by default)
            return f"{'-' if v < 0 else ''}an integer of {v.bit_length():,} bits"
        return f"{'-' if v < 0 else ''}{text[:12]}...({len(text)} digits)"
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _int(v: Any, where: str, lo: int, hi: int | None = None) -> int:
    if not _is_int(v):
        raise _Bad(f"{where} must be an integer, got {_kind(v)} ({_show(v)})")
    if v < lo or (hi is not None and v >= hi):
        rng = f"[{lo}, {hi})" if hi is not None else f">= {lo}"
        raise _Bad(f"{where} = {_show(v)} is outside {rng}")
    return v


def _finite(v: Any, where: str, *, minus_inf: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad(f"{where} must be a number, got {_kind(v)} ({_show(v)})")
    allowed = "finite or -Infinity (the known-vs-missing split)" if minus_inf else "finite"
    try:
        f = float(v)
    except OverflowError:  # a JSON integer beyond the float64 range (json reads it exactly, as an int)
        raise _Bad(f"{where} must be {allowed}, got {_show(v)}, beyond the float64 range") from None
    if not (math.isfinite(f) or (minus_inf and f == -math.inf)):
        raise _Bad(f"{where} must be {allowed}, got {f!r}")
    return f


def _check_weights(weights: list[Any]) -> None:
    """Finite weights whose absolute values sum to a finite float64, added in the order predict adds
    them: a stump outputs 0 or 1, so that sum bounds every score a stump ensemble can give (and with
    it every partial sum, rounding included), and a larger one would predict inf."""
    total = 0.0
    for t, w in enumerate(weights):
        total += abs(_finite(w, f"weights[{t}]"))
        if math.isinf(total):
            raise _Bad(f"weights[{t}] = {float(w)!r} makes |weights[0]| + ... + |weights[{t}]| overflow float64: "
                       "the model's scores could be infinite")


def _check_ranker(r: Any, where: str, n_features: int) -> None:
    if not isinstance(r, dict):
        raise _Bad(f"{where} must be a JSON object, got {_kind(r)}")
    if "kind" not in r:
        raise _Bad(f"{where} has no 'kind' (one of {sorted(RANKER_KINDS)})")
    kind = r["kind"]
    if not isinstance(kind, str) or kind not in RANKER_KINDS:
        raise _Bad(f"{where}.kind = {kind!r} is not a known weak ranker kind {sorted(RANKER_KINDS)}")
    required, optional = RANKER_KINDS[kind]
    for key in required:
        if key not in r:
            raise _Bad(f"{where} (a {kind}) has no {key!r}")
    extra = sorted(set(r) - {"kind", *required, *optional})
    if extra:
        raise _Bad(f"{where} (a {kind}) has unknown keys {extra}")
    _int(r["feature"], f"{where}.feature", 0, n_features)
    if "threshold" in r:
        _finite(r["threshold"], f"{where}.threshold", minus_inf=True)
    for flag in ("float32", "complement"):
        if flag in r and not isinstance(r[flag], bool):
            raise _Bad(f"{where}.{flag} must be true or false, got {_kind(r[flag])} ({r[flag]!r})")


def _check_fitted_extras(fitted: dict[str, Any], n_features: int) -> None:
    """The extras RankBoost writes (the only class that has any)."""
    # span_size_ None: Rb-d/Rb-c fitted without the E2 record
    for key, lowest in (("span_size_", 0), ("pruned_round_", 1)):
        if fitted.get(key) is not None:
            _int(fitted[key], f"fitted.{key}", lowest)
    und = fitted.get("undefined_round_")
    if und is not None:
        if not isinstance(und, dict):
            raise _Bad(f"fitted.undefined_round_ must be null or a JSON object, got {_kind(und)}")
        if "ranker" in und:
            _check_ranker(und["ranker"], "fitted.undefined_round_.ranker", n_features)


def _validate(d: Any, known_classes: Any) -> None:
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        found = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise _Bad(f"is not a boostplug booster JSON file (format {found!r}, expected {FORMAT!r})")
    if not _is_int(d.get("version")) or d["version"] != FORMAT_VERSION:
        raise _Bad(f"has booster format version {d.get('version')!r}; this boostplug reads version {FORMAT_VERSION}")
    for key in _REQUIRED:
        if key not in d:
            raise _Bad(f"has no {key!r}")
    extra = sorted(set(d) - _TOP_KEYS)
    if extra:
        raise _Bad(f"has unknown keys {extra}")
    name = d["class"]
    if not isinstance(name, str) or name not in known_classes:
        raise _Bad(f"holds an unknown booster class {name!r}; known: {sorted(known_classes)}")
    for key, kind in (("params", dict), ("rankers", list), ("weights", list)):
        if not isinstance(d[key], kind):
            raise _Bad(f"{key!r} must be a JSON {kind.__name__}, got {d[key]!r}")
    n_features = _int(d["n_features_in"], "n_features_in", 1, _MAX_FEATURES + 1)
    if len(d["rankers"]) != len(d["weights"]):
        raise _Bad(f"{len(d['rankers'])} rankers but {len(d['weights'])} weights")
    for t, r in enumerate(d["rankers"]):
        _check_ranker(r, f"rankers[{t}]", n_features)
    _check_weights(d["weights"])
    history = d.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise _Bad(f"history must be a JSON list of objects, got {_kind(history)}")
    if d.get("stop_reason") is not None and not isinstance(d["stop_reason"], str):
        raise _Bad(f"stop_reason must be a string or null, got {_kind(d['stop_reason'])}")
    if d.get("best_iteration") is not None:
        _int(d["best_iteration"], "best_iteration", 1, max(len(history), len(d["rankers"])) + 1)
    fitted = d.get("fitted", {})
    if not isinstance(fitted, dict):
        raise _Bad(f"fitted must be a JSON object, got {_kind(fitted)}")
    _check_fitted_extras(fitted, n_features)


def load(path: str | Path, expect: type | None = None) -> Any:
    """Load a booster saved with ``save``; the class is read from the file and only its
    module is imported. ``expect``: the class the file must hold (``Class.load``)."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path} is not a boostplug booster JSON file (not valid JSON: {exc})") from None
    except ValueError as exc:  # an integer literal beyond Python's int-from-text digit limit
        raise ValueError(f"{path} is not a boostplug booster JSON file (it holds a number that cannot be read: "
                         f"{exc})") from None
    return _build(d, expect, str(path))


def _build(d: Any, expect: type | None, source: str) -> Any:
    """The booster of a model object, every field validated; the checks that need its class, and the
    checksum, first."""
    try:
        _validate(d, PUBLIC)
    except _Bad as exc:
        sep = " " if str(exc).startswith(("is ", "has ", "holds ")) else ": "  # source: a path, or "the model dict"
        raise ValueError(f"{source}{sep}{exc}") from None
    name = d["class"]
    klass = booster_class(name)
    if expect is not None and klass is not expect:
        raise ValueError(f"{source} holds a {name}, not a {expect.__name__}")
    try:
        unknown = sorted(set(d["params"]) - set(klass._get_param_names()))
        if unknown:
            raise _Bad(f"params has keys {unknown} that {name} does not take")
        fitted = d.get("fitted", {})
        missing = [a for a in klass._fitted_extras if a not in fitted]
        if missing:
            raise _Bad(f"the {name} model lacks the fitted attributes {missing} under 'fitted'")
        unknown = sorted(set(fitted) - set(klass._fitted_extras))
        if unknown:
            raise _Bad(f"fitted has keys {unknown} that a {name} model does not have")
    except _Bad as exc:
        raise ValueError(f"{source}: {exc}") from None
    _check_checksum(d, source)  # after the fields, which name what is wrong
    model = klass(**d["params"])
    model.n_features_in_ = int(d["n_features_in"])
    model.rankers_ = list(d["rankers"])
    model.weights_ = [float(w) for w in d["weights"]]
    model.history_ = list(d.get("history", []))
    model.stop_reason_ = d.get("stop_reason")
    model.best_iteration_ = d.get("best_iteration")
    for a in klass._fitted_extras:
        setattr(model, a, fitted[a])
    return model


def _expected(cls: type) -> type | None:
    """The class a file must hold for ``cls.load``: ``cls`` itself when it is a public booster
    (:data:`~boostplug.boosters._classes.PUBLIC`) or derives from one, else (a base) any booster."""
    is_booster = any(PUBLIC.get(k.__name__) is not None and k.__module__ == f"{__package__}.{PUBLIC[k.__name__]}"
                     for k in cls.__mro__)
    return cls if is_booster else None


class ModelFile:
    """The JSON model file of a fitted :class:`~boostplug.boosters._estimator.RankingBooster`
    (the mixin that gives it ``to_dict``, ``from_dict``, ``save`` and ``load``)."""

    #: fitted attributes beyond the common ones that the file carries (JSON-serialisable
    #: values), under ``"fitted"``
    _fitted_extras: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The model as the JSON object :meth:`save` writes (a copy: changing it leaves the model be)."""
        return copy.deepcopy(self._file_object())

    def _file_object(self) -> dict[str, Any]:
        """The JSON object of the fitted model (module docstring), holding the model's own objects."""
        self._check_fitted()
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "class": type(self).__name__,
            "params": self.get_params(deep=False),
            "n_features_in": int(self.n_features_in_),
            "rankers": self.rankers_,
            "weights": [float(w) for w in self.weights_],
            "history": self.history_,
            "stop_reason": self.stop_reason_,
            "best_iteration": self.best_iteration_,
            "fitted": {name: getattr(self, name) for name in self._fitted_extras},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Any:
        """The model of a :meth:`to_dict` object (any booster class when called on the base),
        validated as :meth:`load` validates a file (``ValueError`` naming the field). ``d`` is read as
        the file ``save`` would write, so the model shares no object with ``d``."""
        source = "the model dict"
        try:
            text = json.dumps(d, default=_json_default)
        except ValueError as exc:  # an integer beyond Python's int-to-text digit limit, or a circular reference
            raise ValueError(f"{source} cannot be read as a model file: {exc}") from None
        return _build(json.loads(text), _expected(cls), source)

    def save(self, path: str | Path) -> None:
        """Write the model as a plain JSON file, atomically (the text is complete before the file is
        touched, and replaces it whole: a failed save leaves the old file whole), with the checksum of
        its content."""
        d = json.loads(json.dumps(self._file_object(), default=_json_default))  # as a reader will see it
        d[CHECKSUM] = _content_sha256(d)
        write_text(path, json.dumps(d, indent=1))

    @classmethod
    def load(cls, path: str | Path) -> Any:
        """Read a model written by :meth:`save` (any booster class when called on the base);
        every field is validated (``ValueError`` naming the file and the field)."""
        return load(path, expect=_expected(cls))
