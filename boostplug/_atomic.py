"""Atomic file writes: a failed write leaves the old file whole.

Every file boostplug writes (models, LETOR files, ``compare`` results) goes through
:func:`atomic_write`: the content goes to a temporary file in the target's folder
(``.<target>.boostplug-XXXXXXXX.tmp``, ``flock``-ed while written), is flushed to disk, and
replaces the target by ``os.replace`` only when complete. What that guarantees (one ``OSError``
naming the target, symbolic links followed, a killed writer's temporary file removed by the next
write once older than :data:`STALE_AFTER` seconds): docs/reliability.md, "Atomic writes".
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import tempfile
import time
from pathlib import Path
from typing import IO, Iterator

__all__ = ["atomic_write", "write_text", "write_bytes", "remove_stale_temporaries", "STALE_AFTER"]

#: Seconds after its last write before an unlocked temporary file counts as left behind by a
#: killed process. The lock is what protects a file being written; the age covers the moment
#: between its creation and its lock, and file systems whose locks do not reach other machines.
STALE_AFTER = 60.0
_TEMP_MARK = ".boostplug-"
#: Our temporary files: ``tempfile.mkstemp``'s eight characters between our prefix and suffix.
_TEMP_NAME = re.compile(r"\..*" + re.escape(_TEMP_MARK) + r"[a-z0-9_]{8}\.tmp\Z", re.DOTALL)
#: Leaves room for the prefix, mark and suffix within the 255 bytes of a file name.
_NAME_KEPT = 100


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8",
                 newline: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``.

    ``mode`` is ``"w"`` (text) or ``"wb"`` (binary). On any exception the temporary
    file is removed and ``path`` is left as it was; an ``OSError`` from writing (or from
    creating the temporary file, e.g. in a read-only folder) is re-raised as ``OSError``
    naming ``path``. A symbolic link ``path`` writes its target.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write: mode must be 'w' or 'wb', got {mode!r}")
    given = Path(path)
    target = _follow_links(given)
    what = f"{given} (a symbolic link to {target})" if target != given else f"{given}"
    folder = target.parent
    # SIGXFSZ would kill the process at the file-size limit; ignoring it makes the
    # write fail with EFBIG instead, which is reported and cleaned up below.
    if hasattr(signal, "SIGXFSZ"):
        with contextlib.suppress(ValueError):  # only the main thread may set handlers
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    remove_stale_temporaries(folder)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:_NAME_KEPT]}{_TEMP_MARK}", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _naming(exc, what) from exc
    _lock(fd)
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
        raise _naming(exc, what) from exc
    except BaseException:
        _remove(tmp)
        raise


def _naming(exc: OSError, what: str) -> OSError:
    """``exc`` as an ``OSError`` of the same kind (errno) about the target, not the temporary file."""
    return OSError(exc.errno, f"could not write {what}: {exc.strerror or exc}; the previous file (if any) is "
                              "unchanged")


def _follow_links(path: Path) -> Path:
    """The file a write to ``path`` reaches: ``path`` itself, or the end of its chain of links."""
    if not path.is_symlink():
        return path
    real = Path(os.path.realpath(path))
    if real.is_symlink():  # realpath stops where a chain of links comes back on itself
        raise OSError(errno.ELOOP, f"could not write {path}: it is a loop of symbolic links; the previous file "
                                   "(if any) is unchanged")
    return real


def _lock(fd: int) -> None:
    """Mark the temporary file as being written: a lock the kernel drops when the process dies."""
    try:
        import fcntl
    except ImportError:  # Windows: an open file cannot be deleted, which protects it as well
        return
    with contextlib.suppress(OSError):  # a file system without locks: the age alone protects it
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> list[str]:
    """Remove the temporary files of :func:`atomic_write` that a killed process left in
    ``folder``: ours by name, regular files, older than :data:`STALE_AFTER` seconds and
    locked by no live process. Returns the names removed; files it cannot inspect or remove
    are left alone."""
    removed: list[str] = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:  # a missing or unreadable folder: the write itself reports it
        return removed
    for entry in entries:
        if not _TEMP_NAME.match(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < STALE_AFTER:
            continue
        if _remove_unless_held(entry.path):
            removed.append(entry.name)
    return removed


def _remove_unless_held(path: str) -> bool:
    """Remove ``path`` unless a live process holds its lock (it is being written)."""
    try:
        import fcntl
    except ImportError:
        return _remove(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False  # its writer is alive
        return _remove(path)  # removed while we hold the lock: no writer can take it meanwhile
    finally:
        os.close(fd)


def _default_mode(target: Path) -> int:
    """The target's current mode, or what a plain ``open`` would give under the umask."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_write(path, "w", encoding=encoding) as f:
        f.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_write(path, "wb") as f:
        f.write(data)
