"""The slow, exact pass of the LETOR reader: the data lines with their numbers and comments, the
first malformed line of a file with what is wrong with it (it runs only when a parse failed or a
check refused what was read, so that every refusal names its line), and the reading of the rare
well-formed file the numba parser declines."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterator

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._validation import INT64_MAX
from ._letor_files import file_lines

__all__ = ["line_numbers", "read_comments", "show_token", "find_bad_line", "line_error", "parse_lines"]

def data_lines(path: Path) -> Iterator[tuple[int, bytes, bytes | None]]:
    """``(line_number, data_part, comment)`` of every data line (1-based numbers).

    Like scikit-learn's parser, a line is cut at its first ``#``; lines with
    nothing before it (blank or comment-only lines) are not data lines.
    ``comment`` is None when the line has no ``#``.
    """
    for number, line in enumerate(file_lines(path), start=1):
        data, hashed, comment = line.partition(b"#")
        if data.split():
            yield number, data, comment if hashed else None


def line_numbers(path: Path) -> NDArray[np.int64]:
    """1-based line number of every data row."""
    return np.fromiter((n for n, _, _ in data_lines(path)), dtype=np.int64)


def read_comments(path: Path) -> list[str]:
    return [
        "" if c is None else c.decode("utf-8", errors="replace").strip()
        for _, _, c in data_lines(path)
    ]


# scikit-learn's reader holds feature indices as C ints and query ids as int64.
_MAX_FEATURE_INDEX = 2**31 - 1
_INT64_MIN = -INT64_MAX - 1
_DECIMAL = rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_LABEL_RX = re.compile(_DECIMAL)
_VALUE_RX = re.compile(_DECIMAL + rb"|[+-]?[nN][aA][nN]")
_INDEX_RX = re.compile(rb"[0-9]+")
_QID_RX = re.compile(rb"qid:(-?[0-9]+)")


def show_token(token: bytes) -> str:
    return repr(token.decode(errors="replace"))


def _line_problem(tokens: list[bytes], n_features: int | None) -> tuple[str, bool]:
    """What is wrong with one data line ('' if nothing), and whether it has a qid."""
    label = tokens[0]
    if not _LABEL_RX.fullmatch(label):
        try:
            float(label)
        except ValueError:
            return f"label {show_token(label)} is not a number", False
        if label.strip(b"+-").lower() in (b"nan", b"inf", b"infinity"):
            return f"label {show_token(label)} is not a finite number", False
        return f"label {show_token(label)} is not a plain decimal number (digits, '.', 'e' and a sign only)", False
    if not math.isfinite(float(label)):
        return f"label {show_token(label)} is not a finite number (too large for a 64-bit float)", False
    if float(label) < 0:
        return f"label {show_token(label)} is negative (relevance grades are 0 or more)", False
    rest = tokens[1:]
    has_qid = bool(rest) and rest[0].startswith(b"qid")
    if has_qid:
        m = _QID_RX.fullmatch(rest[0])
        if m is None:
            return f"bad query id {show_token(rest[0])} (expected qid:<integer>, plain digits)", True
        qid = int(m.group(1))
        if not _INT64_MIN <= qid <= INT64_MAX:
            return f"query id {qid} does not fit in a 64-bit integer", True
        rest = rest[1:]
    previous = 0
    for tok in rest:
        shown = show_token(tok)
        index, colon, value = tok.partition(b":")
        if not colon or not _INDEX_RX.fullmatch(index):
            return f"bad token {shown} (expected <index>:<value> with an integer index >= 1)", has_qid
        i = int(index)
        if i < 1:
            return f"bad token {shown}: feature indices start at 1", has_qid
        if i > _MAX_FEATURE_INDEX:
            return f"bad token {shown}: feature index {i} is larger than {_MAX_FEATURE_INDEX}", has_qid
        if i <= previous:
            return f"bad token {shown}: feature indices must be strictly increasing", has_qid
        if n_features is not None and i > n_features:
            return f"feature index {i} is larger than n_features={n_features}", has_qid
        if not _VALUE_RX.fullmatch(value) and value.strip(b"+-").lower() not in (b"inf", b"infinity"):
            return f"bad token {shown}: {show_token(value)} is not a plain decimal number (or nan)", has_qid
        if math.isinf(float(value)):
            return (f"bad token {shown}: the value is not finite (infinite feature values are refused; "
                    "write nan for a missing value)"), has_qid
        previous = i
    return "", has_qid


def find_bad_line(path: Path, n_features: int | None) -> tuple[int, str] | None:
    """The first malformed line (slow pass, runs only after a failure; the file was read whole
    before, so damaged compressed data has been refused already)."""
    first_has_qid: bool | None = None
    for number, data, _ in data_lines(path):
        problem, has_qid = _line_problem(data.split(), n_features)
        if problem:
            return number, problem
        if first_has_qid is None:
            first_has_qid = has_qid
        elif has_qid != first_has_qid:
            where = "has no qid: but earlier lines have one" if first_has_qid else "has a qid: but earlier lines do not"
            return number, f"this line {where} (qid must be on every line or on none)"
    return None


def line_error(path: Path, number: int, message: str) -> ValueError:
    return ValueError(f"{path}, line {number}: {message}")


def parse_lines(path: Path, n_features: int | None) -> tuple[sp.csr_matrix, NDArray[np.float64], NDArray[np.int64]]:
    """``(X, y, qid)`` of a file the numba parser declines, as it gives them (``X`` CSR): the
    file's first malformed line is a ``ValueError`` naming it, and a well-formed file (a qid of
    19 digits, a NUL byte in a comment) is read line by line with Python's ``int`` and ``float``."""
    bad = find_bad_line(path, n_features)
    if bad is not None:
        raise line_error(path, *bad)
    y: list[float] = []
    qid: list[int] = []
    indptr, indices, values = [0], [], []
    for _, data, _ in data_lines(path):
        label, *rest = data.split()
        y.append(float(label))
        if rest and rest[0].startswith(b"qid:"):
            qid.append(int(rest.pop(0)[4:]))
        for token in rest:
            index, _, value = token.partition(b":")
            indices.append(int(index) - 1)
            values.append(float(value))
        indptr.append(len(indices))
    width = max(indices, default=0) + 1 if n_features is None else n_features
    # csr_array keeps int64 indices, as the numba parser gives them (csr_matrix would narrow them)
    X = sp.csr_array((np.array(values, dtype=np.float64), np.array(indices, dtype=np.int64),
                      np.array(indptr, dtype=np.int64)), shape=(len(y), width))
    return sp.csr_matrix(X), np.array(y, dtype=np.float64), np.array(qid, dtype=np.int64)
