"""Input validation at the public boundary, shared by metrics, objectives and boosters.

Every public function that takes ``(scores, labels, group_ptr)`` calls
:func:`boostplug.groups.check_ranking_inputs` once; numba kernels behind it may then assume
float64 contiguous arrays of matching length and a valid ``group_ptr``.
Messages show the offending values (never ``assert``). A feature matrix: :mod:`boostplug._features`.
"""

from __future__ import annotations

import difflib
import math
import os
import stat
from numbers import Real
from typing import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["check_scores", "check_labels", "check_k", "check_weights",
           "check_flag", "FlagError", "check_choice", "did_you_mean",
           "check_group_ptr", "GroupedRows", "show_values", "as_1d", "plain", "check_int", "INT64_MAX", "INT32_MAX", "FLOAT32_MAX", "ROUNDS_MAX", "check_rounds"]

#: The largest cut-off the kernels can take (they index with int64).
INT64_MAX = int(np.iinfo(np.int64).max)

#: The largest C ``int``: what LightGBM and XGBoost read integer parameters into (LightGBM refuses
#: a larger ``num_iterations``, ``max_bin`` or ``min_data_in_leaf`` only when it wraps negative).
INT32_MAX = int(np.iinfo(np.int32).max)

#: The largest C ``float``: what XGBoost reads its real parameters into (``eta``, ``lambda``, ...).
FLOAT32_MAX = float(np.finfo(np.float32).max)

#: The most boosting rounds boostplug trains anywhere: LightGBM's ``num_iterations`` and XGBoost's
#: iteration numbers are C ``int``s (XGBoost would wrap around after 2^31 - 1 rounds).
ROUNDS_MAX = INT32_MAX


def plain(value: object) -> object:
    """A numpy scalar as the Python number it holds (``-1.0``, not ``np.float64(-1.0)``), for messages."""
    return value.item() if isinstance(value, np.generic) else value


def show(value: object) -> str:
    """``repr`` of a value for a message, numpy scalars as the plain number (``1e+308``)."""
    return repr(plain(value))


def check_real(what: str, value: object, lo: float, hi: float, *, lo_open: bool = True) -> float:
    """``value`` as a float in ``(lo, hi]`` (``[lo, hi]`` with ``lo_open=False``): a real number
    (``TypeError`` for bools, strings, ...), finite and in range (``ValueError``), both naming it
    as ``what`` (``"qbrank: tau"``, ``"alpha for ddf='ldd'"``)."""
    rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number in {rng}, got {show(value)}")
    v = float(value)
    if not (math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi):
        kind = "a positive finite number" if lo == 0.0 and lo_open else "a finite number"
        raise ValueError(f"{what} must be {kind} in {rng}, got {show(value)}")
    return v


def check_int(what: str, value: object, low: float | None, high: float | None) -> int:
    """``value`` as an int in ``[low, high]`` (``None``: unbounded, within int64, which the kernels
    hold it in); bools and floats are a ``TypeError``. The message gives the bounds exactly, and
    names the int64 bound too when the value breaks it (``2**70`` is not refused as "must be >= 1")."""
    lo = (-INT64_MAX - 1) if low is None else low
    hi = INT64_MAX if high is None else high

    def exact(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else f"{v:g}"

    rng = (f" in [{exact(low)}, {exact(high)}]" if low is not None and high is not None
           else f" >= {exact(low)}" if low is not None else f" <= {exact(high)}" if high is not None else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer{rng}, got {show(value)}")
    if not lo <= value <= hi:
        if (low is None or value >= low) and (high is None or value <= high):  # beyond int64 only
            rng = (f" in [{exact(lo)}, {exact(hi)}] (the kernels hold it in a 64-bit integer: "
                   f"{'at most 2^63 - 1' if value > hi else 'at least -2^63'})")
        raise ValueError(f"{what} must be an integer{rng}, got {show(value)}")
    return int(value)


def _first_bad(mask: np.ndarray, values: np.ndarray, noun: str = "") -> str:
    idx = np.flatnonzero(mask)
    i = int(idx[0])
    more = f" ({idx.size} such rows)" if idx.size > 1 else ""
    return f"row {i} has {noun + ' ' if noun else ''}{plain(values[i])!r}{more}"


def check_finite(values: ArrayLike, name: str, noun: str = "") -> NDArray[np.float64]:
    """``values`` as contiguous float64 (1-d); NaN or infinite values are a ``ValueError`` naming
    the first such row (``noun`` says what the values are: ``row 5 has label nan``)."""
    v = _as_float_1d(values, name)
    bad = ~np.isfinite(v)
    if bad.any():
        raise ValueError(f"{name} must be finite; {_first_bad(bad, v, noun)}")
    return v


class FlagError(TypeError, ValueError):
    """A yes/no option that is not a bool. Both a ``TypeError`` (the metrics' contract for a
    wrong kind of argument) and a ``ValueError`` (scikit-learn's for a bad estimator parameter)."""


def check_flag(value: object, name: str) -> bool:
    """A yes/no option: ``True``/``False`` (or a numpy bool); :class:`FlagError` naming anything
    else (``per_query="yes"`` would otherwise be truthy)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise FlagError(f"{name} must be True or False; got {show(value)}")


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    """``value`` if it is one of the string ``choices``, else a ``ValueError`` naming it."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {show(value)}")
    return value


def did_you_mean(value: object, choices: Iterable[object], *, quote: bool = False) -> str:
    """The hint for a misspelt name: ``"did you mean a or b?"`` with the ``choices`` closest to
    ``value`` (at most three, closest first, as :func:`difflib.get_close_matches` ranks them), or
    ``""`` when none is close. ``value`` may be a list of several names: then the closest choice of
    each, ``"did you mean a for x, b for y?"``, leaving out the names nothing is close to.
    ``quote``: the names as ``repr`` (``'a'``), for messages that quote them."""
    known = list(dict.fromkeys(map(str, choices)))
    name = repr if quote else str
    several = isinstance(value, (list, tuple))
    if several and len(value) == 1:
        value, several = value[0], False
    if several:
        hints = [f"{name(close[0])} for {name(v)}" for v in map(str, value)
                 if (close := difflib.get_close_matches(v, known, n=1))]
        return f"did you mean {', '.join(hints)}?" if hints else ""
    close = difflib.get_close_matches(str(value), known, n=3)
    return f"did you mean {' or '.join(map(name, close))}?" if close else ""


def _as_float_1d(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def check_scores(scores: ArrayLike, name: str = "scores") -> NDArray[np.float64]:
    """Scores as contiguous float64; NaN or infinite values are a ``ValueError``."""
    return check_finite(scores, name)


def check_labels(labels: ArrayLike, name: str = "labels", noun: str = "") -> NDArray[np.float64]:
    """Relevance labels as contiguous float64: finite (``noun`` as in :func:`check_finite`) and non-negative."""
    y = check_finite(labels, name, noun)
    bad = y < 0
    if bad.any():
        raise ValueError(f"{name} must be non-negative relevance grades; {_first_bad(bad, y)}")
    return y


def check_weights(weights: ArrayLike | None, n: int, name: str = "weights") -> NDArray[np.float64] | None:
    """Optional non-negative finite weights of length ``n``."""
    if weights is None:
        return None
    w = _as_float_1d(weights, name)
    if w.shape[0] != n:
        raise ValueError(f"{name} has length {w.shape[0]} but {n} were expected")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        raise ValueError(f"{name} must be finite and non-negative; {_first_bad(bad, w)}")
    return w


def check_rounds(value: object, name: str = "n_rounds", *, or_none: bool = False) -> int:
    """A number of boosting rounds: an integer in ``[1, ROUNDS_MAX]``, else a ``ValueError`` naming
    ``name`` and the value (a bound beyond which LightGBM fails and XGBoost wraps around);
    ``or_none``: the message says ``None`` is allowed too (:func:`check_optional_rounds`)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1{' or None' if or_none else ''}, got {plain(value)!r}")
    if value > ROUNDS_MAX:
        raise ValueError(f"{name} must be at most {ROUNDS_MAX} (2^31 - 1: LightGBM and XGBoost count rounds in a "
                         f"32-bit int), got {plain(value)}")
    return int(value)


def check_optional_rounds(value: object, name: str) -> int | None:
    """``None``, or a number of rounds as :func:`check_rounds` takes (``early_stopping_rounds``)."""
    return None if value is None else check_rounds(value, name, or_none=True)


def check_count(value: object, name: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``: a ``TypeError`` for anything but an integer (bools too),
    a ``ValueError`` below ``minimum``, both naming ``name`` and the value."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {show(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {show(value)}")
    return int(value)


def check_optional_count(value: object, name: str) -> int | None:
    """A positive integer (a count of rows, threads...) or ``None`` for the default."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return int(value)


def check_rng(seed: object, name: str = "seed") -> np.random.Generator:
    """The random generator of ``seed``: a ``numpy.random.Generator`` as it is, ``None`` (fresh
    entropy) or an integer ``>= 0`` seeding a new one; anything else a ``ValueError`` naming
    ``name`` and the value (numpy's own message names neither)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise ValueError(f"{name} must be an integer >= 0, None or a numpy.random.Generator, got {show(seed)}")
    return np.random.default_rng(None if seed is None else int(seed))


#: What a path can name that is neither a file nor a folder (reading a FIFO blocks until something
#: writes to it; /dev/null reads as empty), for :func:`special_kind`.
_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"))


def special_kind(path: object) -> str | None:
    """``"a FIFO"``, ``"a socket"``, ``"a character device"`` or ``"a block device"`` when ``path``
    names one (symbolic links followed), for a message saying what it is instead of "no such
    file" (or a read that blocks); ``None`` for a regular file, a folder or a missing path."""
    try:
        mode = os.stat(path).st_mode  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError):
        return None
    return next((name for test, name in _SPECIAL_FILES if test(mode)), None)


def fs_path(value: object, what: str) -> str:
    """A path given as ``str``, ``bytes`` (decoded as the file system does, ``os.fsdecode``) or
    ``os.PathLike``, as text; a ``TypeError`` naming ``what`` and the value otherwise."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    raise TypeError(f"{what}: expected a path (str, bytes or os.PathLike), got {type(value).__name__} ({value!r})")


def check_k(k: int | None, name: str = "k") -> int | None:
    """A cut-off: ``None`` (whole list) or an integer >= 1."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= 1 or None, got {plain(k)!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1 (or None for the whole list), got {plain(k)}")
    if k > INT64_MAX:
        raise ValueError(f"{name} = {plain(k)} does not fit in int64 (at most {INT64_MAX}); "
                         "use None for the whole list")
    return int(k)


def show_values(values: NDArray, limit: int = 8) -> str:
    """``[a, b, c]`` (plain Python reprs, no numpy padding), abbreviated past ``limit``."""
    values = np.asarray(values).reshape(-1)
    shown = ", ".join(str(v) for v in values[:limit].tolist())
    if values.size <= limit:
        return f"[{shown}]"
    return f"[{shown}, ...] ({values.size} values)"


def as_1d(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def check_group_ptr(group_ptr: ArrayLike, n_docs: int | None = None) -> NDArray[np.int64]:
    """Validate a group pointer and return it as a contiguous int64 array.

    ``group_ptr`` must be 1-D, start at 0, be strictly increasing (no empty
    query) and, when ``n_docs`` is given, end at ``n_docs``.
    """
    g = as_1d(group_ptr, "group_ptr")
    if g.dtype.kind == "f":
        if not np.all(np.isfinite(g)) or not np.all(g == np.round(g)):
            raise ValueError(f"group_ptr must hold whole numbers, got {show_values(g)}")
    elif g.dtype.kind not in "iu":
        raise TypeError(f"group_ptr must be an integer array, got dtype {g.dtype}")
    g = np.ascontiguousarray(g, dtype=np.int64)
    if g.shape[0] < 1:
        raise ValueError("group_ptr must have at least one entry (0)")
    if g[0] != 0:
        raise ValueError(f"group_ptr must start at 0, got {show_values(g)}")
    d = np.diff(g)
    bad = np.flatnonzero(d <= 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            "group_ptr must be strictly increasing (every query non-empty); "
            f"group_ptr[{i}] = {int(g[i])} is followed by group_ptr[{i + 1}] = "
            f"{int(g[i + 1])} (group_ptr: {show_values(g)})"
        )
    if n_docs is not None and g[-1] != n_docs:
        raise ValueError(
            f"group_ptr ends at {int(g[-1])} but there are {n_docs} documents "
            f"(group_ptr: {show_values(g)})"
        )
    return g


class GroupedRows:
    """Rows in queries by a ``group_ptr`` :func:`check_group_ptr` validated: the counts ``n_docs``, ``n_queries``."""

    group_ptr: NDArray[np.int64]

    @property
    def n_docs(self) -> int:
        return int(self.group_ptr[-1])

    @property
    def n_queries(self) -> int:
        return int(self.group_ptr.shape[0] - 1)
