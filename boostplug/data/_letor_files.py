"""The file layer of the LETOR reader: regular files only, ``.gz``/``.bz2`` by suffix, read whole
or line by line, and read or decompression errors that name the file."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import IO, Iterator

__all__ = ["PathLike", "COMPRESSED", "regular_file", "file_lines", "file_bytes"]

PathLike = str | os.PathLike

COMPRESSED = {".gz": "gzip", ".bz2": "bz2"}


def regular_file(path: PathLike, what: str = "file") -> Path:
    """``path`` as a Path, refused unless it is a regular file (checked before opening:
    a FIFO would block ``open`` and could not be read twice)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such {what}") from None
    except NotADirectoryError:
        raise FileNotFoundError(f"{p}: no such {what} (a parent in the path is not a folder)") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{p}: is a folder, not a {what}")
    if not stat.S_ISREG(mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise ValueError(f"{p}: is {kind}, not a regular {what}; the reader needs a file it can read "
                         "twice (copy the stream to a file first)")
    return p


def _read_error(path: Path, exc: BaseException) -> Exception:
    """A one-line error naming the file for a failure while reading or decompressing it."""
    kind = COMPRESSED.get(path.suffix)
    if kind is None:
        if isinstance(exc, OSError):
            return OSError(exc.errno, f"{path}: cannot read: {exc.strerror or exc}")
        return ValueError(f"{path}: cannot read: {exc}")  # pragma: no cover - plain reads raise OSError
    if isinstance(exc, EOFError):
        return ValueError(f"{path}: the {kind} data is truncated (the file ends inside the compressed "
                           "stream); the file is incomplete or damaged")
    detail = str(exc) or type(exc).__name__
    return ValueError(f"{path}: not valid {kind} data ({detail}); the name ends in {path.suffix}, so it is "
                       f"read as {kind}: the file is damaged or not {kind}-compressed")


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[IO[bytes]]:
    """The file open for reading; a failure to open, read or decompress it names the file (:func:`_read_error`)."""
    try:
        # plain, .gz or .bz2 by suffix, as scikit-learn reads them
        f: IO[bytes] = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix, open)(path, "rb")  # type: ignore
    except OSError as e:
        raise _read_error(path, e) from None
    with f:
        try:
            yield f
        except (OSError, EOFError, zlib.error) as e:
            raise _read_error(path, e) from None


def file_lines(path: Path) -> Iterator[bytes]:
    """The file's lines (decompressed by suffix), read errors named as :func:`file_bytes` names them."""
    with _reading(path) as f:
        yield from f


def file_bytes(path: Path) -> bytes:
    """The whole file's bytes (decompressed by suffix); a failure to read or decompress it names the file."""
    with _reading(path) as f:
        return f.read()
