"""The structure of an XGBoost UBJSON model (``.ubj``) checked before XGBoost parses it.

XGBoost's UBJSON reader trusts the lengths and counts it reads: a file cut short crashes the
process (SIGSEGV) or hangs it. :func:`check_ubjson` walks the container without building it
(typed arrays are skipped by their length, so the walk costs one step per key and untyped
value): every length and count must stay within the data, every container must close, and the
outermost value must end where the data ends; otherwise a ``ValueError`` naming the source and
the byte offset. JSON model text is parsed once by Python's ``json`` for the same reason.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

from ..._validation import special_kind

__all__ = ["check_ubjson", "looks_like_ubjson", "checked_model_source"]

#: Payload sizes of the fixed-size UBJSON types (null, no-op, true, false: none).
_FIXED = {"Z": 0, "N": 0, "T": 0, "F": 0, "i": 1, "U": 1, "I": 2, "l": 4, "L": 8, "d": 4, "D": 8, "C": 1}
_INT = {"i": ">b", "U": ">B", "I": ">h", "l": ">i", "L": ">q"}
_STRINGS = ("S", "H")  # a length, then that many bytes


class _Cut(Exception):
    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset


class _Container:
    """One open array or object: its remaining count (None: until its closing marker), the type
    of its elements when typed, and whether a key is due (objects)."""

    __slots__ = ("close", "remaining", "typed", "object")

    def __init__(self, close: str, remaining: int | None, typed: str | None) -> None:
        self.close, self.remaining, self.typed, self.object = close, remaining, typed, close == "}"


def looks_like_ubjson(data: bytes) -> bool:
    """``data`` starts as UBJSON (an object whose first key has a length marker, or an optimised
    container), not as JSON text (``{`` then a quote or white space) or another format."""
    return len(data) >= 1 and data[:1] in (b"{", b"[") and (len(data) < 2 or chr(data[1]) in "iUIlL$#}]")


def check_ubjson(data: bytes, source: str) -> None:
    """``ValueError`` ``"<source>: not a complete UBJSON model: ... at byte N"`` unless ``data`` is one
    complete UBJSON value whose lengths and counts all stay within it."""
    try:
        end = _walk(data)
    except _Cut as cut:
        raise ValueError(f"{source}: not a complete UBJSON model (cut short or damaged): {cut} at byte "
                         f"{cut.offset} of {len(data)}") from None
    if end != len(data):
        raise ValueError(f"{source}: not a complete UBJSON model: the outermost value ends at byte {end}, but the "
                         f"data has {len(data)} bytes")


def checked_model_source(fname: Any) -> None:
    """Check a model XGBoost is about to load (a path, or the bytes of ``Booster.load_model``):
    UBJSON (by content, or a ``.ubj`` path) by :func:`check_ubjson`, JSON text by Python's parser
    (XGBoost's own error for a cut one is not valid UTF-8); anything else is refused where XGBoost
    reads nothing else (3.0 on), and so are a FIFO, a socket and a device: each a ``ValueError``
    naming the file."""
    if isinstance(fname, (bytes, bytearray, memoryview)):
        data, source, named_ubj = bytes(fname), "the model bytes", False
    elif isinstance(fname, (str, os.PathLike)):
        path = os.fspath(fname)
        kind = special_kind(path)
        if kind is not None:  # a FIFO would block the read; /dev/null reads as nothing
            raise ValueError(f"{path}: {kind}, not a model file")
        with open(path, "rb") as f:
            data = f.read()
        source, named_ubj = str(path), str(path).lower().endswith(".ubj")
    else:
        return
    if named_ubj or looks_like_ubjson(data):
        check_ubjson(data, source)
    elif data[:1] == b"{":  # JSON text: XGBoost's error for a cut one is not even valid UTF-8
        try:
            json.loads(data)
        except ValueError as e:
            raise ValueError(f"{source}: not a complete JSON model (cut short or damaged): {e}") from None
    elif _json_models_only():  # XGBoost's own error quotes the bytes, often as invalid UTF-8
        start = "is empty" if not data else f"starts with {data[:8]!r}"
        raise ValueError(f"{source}: not an XGBoost model: XGBoost reads JSON and UBJSON models, which start with "
                         f"'{{', and this {start}")


def _json_models_only() -> bool:
    """Whether the installed XGBoost reads JSON and UBJSON models only (3.0 and later; 2.x still
    reads its old binary format)."""
    import xgboost

    try:
        return int(xgboost.__version__.split(".")[0]) >= 3
    except ValueError:
        return True


def _walk(data: bytes) -> int:
    """The offset where the outermost value ends; ``_Cut`` where the structure breaks."""
    n, pos = len(data), 0
    stack: list[_Container] = []

    def need(k: int, what: str) -> None:
        if k < 0 or pos + k > n:
            raise _Cut(pos, f"{what} needs {k} bytes, {n - pos} are left")

    def marker(what: str) -> str:
        nonlocal pos
        need(1, what)
        m = chr(data[pos])
        pos += 1
        return m

    def integer(m: str, what: str) -> int:
        nonlocal pos
        if m not in _INT:
            raise _Cut(pos - 1, f"{what}: {m!r} is not an integer marker")
        size = _FIXED[m]
        need(size, what)
        (v,) = struct.unpack_from(_INT[m], data, pos)
        if v < 0:
            raise _Cut(pos, f"{what} is negative ({v})")
        pos += size
        return int(v)

    def value(m: str) -> None:
        """Consume the payload of a value of type ``m``; open a container onto the stack."""
        nonlocal pos
        if m in _FIXED:
            need(_FIXED[m], f"a {m!r} value")
            pos += _FIXED[m]
        elif m in _STRINGS:
            length = integer(marker("a string length"), "a string length")
            need(length, "a string")
            pos += length
        elif m in "[{":
            opened(m)
        else:
            raise _Cut(pos - 1, f"{m!r} is not a UBJSON type marker")

    def opened(m: str) -> None:
        nonlocal pos
        close = "]" if m == "[" else "}"
        typed = count = None
        if pos < n and chr(data[pos]) == "$":
            pos += 1
            typed = marker("an optimised container's type")
            if pos >= n or chr(data[pos]) != "#":
                raise _Cut(pos, "an optimised container's type without its count")
        if pos < n and chr(data[pos]) == "#":
            pos += 1
            count = integer(marker("a container count"), "a container count")
            if count > n:
                raise _Cut(pos, f"a container count of {count} exceeds the data's {n} bytes")
        if typed is not None and typed in _FIXED and m == "[":  # a typed array: skipped whole
            need(count * _FIXED[typed], f"a typed array of {count} {typed!r} values")
            pos += count * _FIXED[typed]
            return
        stack.append(_Container(close, count, typed))

    value(marker("the model's first value"))
    while stack:
        top = stack[-1]
        if top.remaining == 0:
            stack.pop()
            continue
        if top.remaining is None:
            need(1, f"the closing {top.close!r}")
            if chr(data[pos]) == top.close:
                pos += 1
                stack.pop()
                continue
        else:
            top.remaining -= 1
        if top.object:
            length = integer(marker("a key's length"), "a key's length")
            need(length, "a key")
            pos += length
        value(top.typed if top.typed is not None else marker("a value's type"))
    return pos
