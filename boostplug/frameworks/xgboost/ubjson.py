"""XGBoost UBJSON models (``.ubj``) read before XGBoost parses them.

XGBoost's UBJSON reader trusts the lengths and counts it reads: a file cut short crashes the
process (SIGSEGV) or hangs it. :func:`parse_ubjson` reads the data into Python values (typed
numeric arrays as numpy arrays, read whole by their length, so the cost is one step per key and
untyped value) without recursion: every length and count must stay within the data, every
container must close, containers may nest at most :data:`MAX_DEPTH` deep (XGBoost's reader
recurses), and the outermost value must end where the data ends; otherwise a ``ValueError``
naming the source and the byte offset. What the values must hold to be a model XGBoost reads
safely is :mod:`.model_check`'s.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

__all__ = ["parse_ubjson", "looks_like_ubjson", "MAX_DEPTH"]

#: Payload sizes of the fixed-size UBJSON types (null, no-op, true, false: none).
_FIXED = {"Z": 0, "N": 0, "T": 0, "F": 0, "i": 1, "U": 1, "I": 2, "l": 4, "L": 8, "d": 4, "D": 8, "C": 1}
_INT = {"i": ">b", "U": ">B", "I": ">h", "l": ">i", "L": ">q"}
_NUMBER = {**_INT, "d": ">f", "D": ">d"}
_CONSTANT = {"Z": None, "N": None, "T": True, "F": False}
_STRINGS = ("S", "H")  # a length, then that many bytes
#: How deep containers may nest: an XGBoost model nests about 8 deep, and XGBoost's reader recurses.
MAX_DEPTH = 64


class _Cut(Exception):
    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset


class _Container:
    """One open array or object: its values so far, its remaining count (None: until its closing
    marker), the type of its elements when typed, and the key whose value is due (objects)."""

    __slots__ = ("close", "remaining", "typed", "value", "key")

    def __init__(self, close: str, remaining: int | None, typed: str | None) -> None:
        self.close, self.remaining, self.typed = close, remaining, typed
        self.value: Any = {} if close == "}" else []
        self.key: str | None = None

    def add(self, v: Any) -> None:
        if self.close == "}":
            self.value[self.key] = v
        else:
            self.value.append(v)


def looks_like_ubjson(data: bytes) -> bool:
    """``data`` starts as UBJSON (an object whose first key has a length marker, or an optimised
    container), not as JSON text (``{`` then a quote or white space) or another format."""
    return len(data) >= 1 and data[:1] in (b"{", b"[") and (len(data) < 2 or chr(data[1]) in "iUIlL$#}]")


def parse_ubjson(data: bytes, source: str) -> Any:
    """The value ``data`` holds (objects as dicts, arrays as lists, typed numeric arrays as numpy
    arrays, strings as text); ``ValueError`` ``"<source>: not a complete UBJSON model: ... at byte
    N"`` unless ``data`` is one complete UBJSON value whose lengths and counts all stay within it,
    and whose strings are UTF-8."""
    try:
        value, end = _parse(data)
    except _Cut as cut:
        raise ValueError(f"{source}: not a complete UBJSON model (cut short or damaged): {cut} at byte "
                         f"{cut.offset} of {len(data)}") from None
    if end != len(data):
        raise ValueError(f"{source}: not a complete UBJSON model: the outermost value ends at byte {end}, but the "
                         f"data has {len(data)} bytes")
    return value


def _parse(data: bytes) -> tuple[Any, int]:
    """The outermost value and the offset where it ends; ``_Cut`` where the structure breaks."""
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

    def text(what: str) -> str:
        nonlocal pos
        length = integer(marker(f"{what}'s length"), f"{what}'s length")
        need(length, what)
        pos += length
        try:
            return data[pos - length:pos].decode("utf-8")
        except UnicodeDecodeError as e:  # (XGBoost's Python API decodes its attributes and names as UTF-8)
            raise _Cut(pos - length + e.start, f"{what} is not UTF-8 text") from None

    def value(m: str) -> tuple[bool, Any]:
        """``(True, v)`` for a value read whole, ``(False, None)`` for a container opened onto the stack."""
        nonlocal pos
        if m in _NUMBER:
            size = _FIXED[m]
            need(size, f"a {m!r} value")
            (v,) = struct.unpack_from(_NUMBER[m], data, pos)
            pos += size
            return True, v
        if m in _CONSTANT:
            return True, _CONSTANT[m]
        if m == "C":
            need(1, "a 'C' value")
            pos += 1
            return True, chr(data[pos - 1])
        if m in _STRINGS:
            return True, text("a string")
        if m in "[{":
            return opened(m)
        raise _Cut(pos - 1, f"{m!r} is not a UBJSON type marker")

    def opened(m: str) -> tuple[bool, Any]:
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
        if typed is not None and typed in _NUMBER and m == "[":  # a typed numeric array: read whole
            size = count * _FIXED[typed]
            need(size, f"a typed array of {count} {typed!r} values")
            pos += size
            return True, np.frombuffer(data, dtype=np.dtype(_NUMBER[typed]), count=count, offset=pos - size).astype(
                np.dtype(_NUMBER[typed]).newbyteorder("="))
        if len(stack) == MAX_DEPTH:
            raise _Cut(pos, f"containers nested more than {MAX_DEPTH} deep")
        stack.append(_Container(close, count, typed))
        return False, None

    done, out = value(marker("the model's first value"))
    while stack:
        top = stack[-1]
        finished = top.remaining == 0
        if top.remaining is None:
            need(1, f"the closing {top.close!r}")
            if chr(data[pos]) == top.close:
                pos += 1
                finished = True
        if finished:
            stack.pop()
            if stack:
                stack[-1].add(top.value)
            else:
                out = top.value
            continue
        if top.remaining is not None:
            top.remaining -= 1
        if top.close == "}":
            top.key = text("a key")
        done, v = value(top.typed if top.typed is not None else marker("a value's type"))
        if done:
            top.add(v)  # (a container opened is added to this one when it closes)
    return out, pos
