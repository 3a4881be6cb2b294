"""Atomic file writes: a failed write leaves the old file whole.

Every file boostplug writes (models, LETOR files, ``compare`` results) goes through
:func:`atomic_write`: the content goes to a temporary file in the target's folder,
is flushed to disk, and replaces the target by ``os.replace`` only when complete.
A full disk, a file-size limit or an interrupt leaves the previous file untouched,
no temporary file behind, and one ``OSError`` naming the target.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from pathlib import Path
from typing import IO, Iterator

__all__ = ["atomic_write", "write_text", "write_bytes"]


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8",
                 newline: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``.

    ``mode`` is ``"w"`` (text) or ``"wb"`` (binary). On any exception the temporary
    file is removed and ``path`` is left as it was; an ``OSError`` from writing is
    re-raised as ``OSError`` naming ``path``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write: mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    folder = target.parent
    # SIGXFSZ would kill the process at the file-size limit; ignoring it makes the
    # write fail with EFBIG instead, which is reported and cleaned up below.
    if hasattr(signal, "SIGXFSZ"):
        with contextlib.suppress(ValueError):  # only the main thread may set handlers
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        if mode == "wb":
            f: IO = os.fdopen(fd, "wb")
        else:
            f = os.fdopen(fd, "w", encoding=encoding, newline=newline)
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, _default_mode(target))
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise OSError(exc.errno, f"could not write {target}: {exc.strerror or exc}; "
                      "the previous file (if any) is unchanged") from exc
    except BaseException:
        _remove(tmp)
        raise


def _default_mode(target: Path) -> int:
    """The target's current mode, or what a plain ``open`` would give under the umask."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_write(path, "w", encoding=encoding) as f:
        f.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_write(path, "wb") as f:
        f.write(data)
