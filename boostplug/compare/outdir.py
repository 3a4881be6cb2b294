"""The ``--out`` folder of ``boostplug compare``: one run's complete set of files, or the previous one.

* :class:`OutDir` takes the folder for one run: it holds a lock on it for the whole run
  (``fcntl.flock`` on ``.boostplug-compare.lock``: a second run on the same folder is refused,
  and the kernel drops the lock when its process dies, so a killed run leaves no stale lock),
  and refuses a folder that already holds results unless told to overwrite them. Both before
  any training.
* :meth:`OutDir.write` writes the new files into a staging folder inside ``--out``
  (each with :func:`boostplug._atomic.atomic_write`), then moves them in by renames, with
  ``results.json`` last: it marks a complete set. The old ``results.json`` is removed
  before the first rename, so a set without it is an incomplete one. A write that fails
  (a full disk, a file-size limit, an interrupt) fails in the staging folder and leaves the
  previous run's files as they were.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["OUTPUT_FILES", "MARKER", "LOCK_NAME", "OutDir", "OutDirError"]

#: Every file a ``compare`` run may write into ``--out``.
OUTPUT_FILES = ("results.csv", "per_query.csv", "curves.csv", "summary.csv", "results.json", "curves.png",
                "metrics.png", "tuning.csv")
#: Written last: its presence marks a complete set of files.
MARKER = "results.json"
LOCK_NAME = ".boostplug-compare.lock"
_STAGING_PREFIX = ".boostplug-compare-staging-"


class OutDirError(Exception):
    """The folder cannot be used for this run (held by another run, holds results, ...)."""


class OutDir:
    """``--out`` taken for one run; use as a context manager (releases the lock on exit)."""

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        self.path = Path(path)
        self.overwrite = overwrite
        self._fd: int | None = None

    # ---- taking the folder ----------------------------------------------------------------
    def __enter__(self) -> "OutDir":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Create the folder, lock it, check that it holds no other run's results (unless
        ``overwrite``) and remove staging folders a killed run left; ``OutDirError`` otherwise."""
        self.path.mkdir(parents=True, exist_ok=True)
        self._fd = _lock(self.path / LOCK_NAME)
        try:
            for name in OUTPUT_FILES:
                p = self.path / name
                if p.is_dir() and not p.is_symlink():
                    raise OutDirError(f"--out {self.path}: {name} is a folder; a run writes a file there")
            found = [n for n in OUTPUT_FILES if os.path.lexists(self.path / n)]
            if found and not self.overwrite:
                raise OutDirError(f"--out {self.path}: holds an earlier run's results ({', '.join(found)}); "
                                  "give --overwrite to replace them, or another folder")
            for stale in self.path.glob(_STAGING_PREFIX + "*"):  # the lock is ours: no run is writing them
                shutil.rmtree(stale, ignore_errors=True)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        if self._fd is None:
            return
        # unlinked while still locked: a run waiting on this file sees it gone and locks a new one
        with contextlib.suppress(OSError):
            os.unlink(self.path / LOCK_NAME)
        os.close(self._fd)
        self._fd = None

    # ---- writing a run ------------------------------------------------------------------
    def write(self, fill: Callable[[Path], None]) -> list[str]:
        """``fill(staging)`` writes the run's files into an empty staging folder; they then
        replace the folder's output files (``results.json`` last; output files the run did not
        write, e.g. the plots of an earlier run, are removed). Returns the names written."""
        if self._fd is None:
            raise RuntimeError("OutDir.write before acquire()")
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=self.path))
        try:
            try:
                fill(staging)
            except OSError as e:
                raise self._nothing_written(e, staging) from e
            written = [n for n in OUTPUT_FILES if (staging / n).is_file()]
            unknown = sorted(p.name for p in staging.iterdir() if p.name not in OUTPUT_FILES)
            if unknown:
                raise RuntimeError(f"compare wrote files outside OUTPUT_FILES: {unknown}")
            with _signals_deferred():
                self._move_in(staging, written)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return written

    def _nothing_written(self, e: OSError, staging: Path) -> OSError:
        """``e`` about a file of the staging folder, as an ``OSError`` naming the file of ``--out``."""
        text = f"{e.strerror or e} {e.filename or ''}"
        name = next((n for n in OUTPUT_FILES if f"{staging / n}" in text), None)
        cause = e.__cause__ if isinstance(e.__cause__, OSError) else e
        reason = cause.strerror or (os.strerror(cause.errno) if cause.errno else str(cause))
        where = self.path / name if name else self.path
        return OSError(e.errno, f"{reason}; nothing was written, the folder is as it was before the run", str(where))

    def _move_in(self, staging: Path, written: list[str]) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path / MARKER)
        for name in OUTPUT_FILES:
            if name not in written:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path / name)
        for name in sorted(written, key=lambda n: n == MARKER):
            os.replace(staging / name, self.path / name)
        _fsync_dir(self.path)


def _lock(path: Path) -> int:
    """An open, ``flock``-ed descriptor of ``path`` holding this process's pid; ``OutDirError``
    naming the holder when another process has it."""
    import fcntl

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_pid(fd)
            os.close(fd)
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            who = f" (pid {holder})" if holder else ""
            raise OutDirError(f"--out {path.parent}: another boostplug compare{who} is writing there; wait for "
                              "it to finish or choose another folder") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the run that held it finished and unlinked it meanwhile: lock the new one
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """INT, TERM and HUP that arrive during the renames (microseconds) are raised again after
    them, so that an interrupt never leaves half of a set moved in."""
    sigs = [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    got: list[int] = []
    try:
        old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in sigs}
    except ValueError:  # not the main thread: handlers cannot be set (nor do they run here)
        yield
        return
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        for s in dict.fromkeys(got):
            signal.raise_signal(s)
