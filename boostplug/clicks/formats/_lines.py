"""What both raw-format readers share: the files to read (plain or gzipped), their numbered
lines (a last line without its line end is a file cut short), the strict reading of a field
(an integer of 64 bits in ASCII digits, UTF-8 text), the refusal or skipping of a bad line, and
rows gathered into batches of whole sessions."""

from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..._validation import check_optional_count, fs_path, special_kind
from .._sources import Batch, RawLog, Report

__all__ = ["paths_of", "numbered_lines", "check_ended", "integer", "text", "Lines", "Rows",
           "FileLog"]

MALFORMED = "a malformed line"
#: Why a last line without its line end is refused: any of its fields may be cut, and a cut field
#: still reads (a number as a shorter number, a document line's first fields as a query line).
CUT_SHORT = "the file ends inside this line (it has no line end): the file is cut short"

_INTEGER = re.compile(rb"-?[0-9]+")
_INT64 = 1 << 63


def paths_of(paths: Any, what: str) -> list[Path]:
    """The files of ``paths``: a file, a folder (its files, by name) or several of either."""
    if isinstance(paths, (str, bytes, os.PathLike)):  # bytes: one path, not a list of byte values
        paths = [paths]
    elif not isinstance(paths, Iterable):
        raise TypeError(f"{what}: expected a path or a list of paths, got {type(paths).__name__}")
    out: list[Path] = []
    for p in paths:
        path = Path(fs_path(p, what))
        if path.is_dir():
            out.extend(sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith(".")))
        elif path.is_file():
            out.append(path)
        elif special_kind(path):
            raise ValueError(f"{what}: {str(path)!r} is {special_kind(path)}, not a file or folder of the log")
        else:
            raise ValueError(f"{what}: no such file or folder: {str(path)!r}")
    if not out:
        raise ValueError(f"{what}: no files to read in {[str(p) for p in paths]}")
    return out


def numbered_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number from 1, line without its end, whether it had one)``: only a file's last
    line can lack its line end, and then the file was cut inside it (:func:`check_ended`). gzip is
    told by its magic bytes, not the name. A cut gzip stream is a ``ValueError`` naming the file
    and the last line read."""
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    n = 0
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
            for n, line in enumerate(f, 1):
                yield n, line.rstrip(b"\r\n"), line.endswith(b"\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"{path}: the gzip stream breaks off after line {n} ({exc}); the file is "
                         "truncated or damaged") from None


def check_ended(ended: bool) -> None:
    """A ``ValueError`` (:data:`CUT_SHORT`) for a line without its line end."""
    if not ended:
        raise ValueError(CUT_SHORT)


def integer(token: bytes, name: str) -> int:
    """``token`` as an integer of 64 bits: ASCII digits after an optional minus sign (not Python's
    ``int``, which also takes spaces, ``+`` and ``1_000``), else a ``ValueError`` naming ``name``."""
    if not _INTEGER.fullmatch(token):
        raise ValueError(f"{name} {token!r} is not an integer")
    v = int(token)
    if not -_INT64 <= v < _INT64:
        raise ValueError(f"{name} {token.decode()} does not fit in 64 bits")
    return v


def text(token: bytes, name: str) -> str:
    """``token`` decoded as UTF-8, else a ``ValueError`` naming ``name`` and the byte (decoding with
    replacement characters would make distinct values equal)."""
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name} {token!r} is not UTF-8 text (byte {exc.start})") from None


class Lines:
    """A bad line: under ``on_bad="raise"`` a ``ValueError`` naming the format, file and line;
    under ``"skip"`` counted through ``report`` (``impressions`` and ``rows`` it takes along)."""

    def __init__(self, what: str, on_bad: str, report: Report) -> None:
        self.what, self.on_bad, self.report = what, on_bad, report

    def bad(self, path: Path, line: int, reason: str, detail: str, impressions: int = 0, rows: int = 0) -> None:
        where = f"{self.what} {path}, line {line}: {detail}"
        if self.on_bad == "raise":
            raise ValueError(f"{where} (on_bad='skip' leaves such lines out and reports them)")
        self.report(reason, impressions, rows, where)


class Rows:
    """Columns of rows gathered until a batch is full; :meth:`batch` is called between sessions
    only, so a batch never splits a session."""

    def __init__(self, dtypes: dict[str, Any]) -> None:
        self.dtypes = dtypes
        self.cols: dict[str, list] = {role: [] for role in dtypes}
        self.first_row = 0

    def __len__(self) -> int:
        return len(self.cols["session"])

    def add(self, **row: Any) -> None:
        """One row, a value per role."""
        for role, value in row.items():
            self.cols[role].append(value)

    def batch(self) -> Batch:
        """The rows gathered so far, as a batch (and a fresh start)."""
        values = {role: np.array(col, dtype=self.dtypes[role]) for role, col in self.cols.items()}
        out = Batch(values, {role: None for role in values}, self.first_row)
        self.first_row += len(out)
        self.cols = {role: [] for role in self.dtypes}
        return out


class FileLog(RawLog):
    """A raw log in files: ``paths`` (:func:`paths_of`) and its own ``batch_rows`` (``None``: the
    reader's default); ``what`` names the format in messages."""

    what = "click log"

    def __init__(self, paths: Any, batch_rows: int | None) -> None:
        self.paths = paths_of(paths, self.what)
        self.batch_rows = check_optional_count(batch_rows, "batch_rows")  # None: the reader's default

    def _start(self, batch_rows: int, on_bad: str, report: Report) -> tuple[int, Lines]:
        """The rows per batch and the bad-line handler of one reading."""
        return self.batch_rows or batch_rows, Lines(self.what, on_bad, report)
