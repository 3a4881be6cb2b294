"""The ``--out`` folder of ``boostplug compare``: one run's complete set of files, or the previous one
(what the user sees: docs/compare.md on ``--out``, docs/reliability.md on ``compare --out``).

* :class:`OutDir` takes the folder for one run, before any training: an ``fcntl.flock`` on
  :data:`LOCK_NAME` held for the whole run (the kernel drops it when its process dies, so a killed
  run leaves no stale lock), a set a killed run left half moved put back (:meth:`OutDir.recover`),
  and a folder refused that holds results (unless told to overwrite them) or a results file that
  is a folder or a symbolic link; staging folders a killed run left are removed.
* :meth:`OutDir.write` writes the new files into a staging folder inside ``--out`` (each with
  :func:`boostplug._atomic.atomic_write`), then swaps the sets by renames: the previous files
  aside into ``.boostplug-compare-previous.partial`` (``results.json`` first), renamed
  :data:`PREVIOUS` once it holds them all; the new files in, ``results.json`` last, the commit;
  the previous set deleted. A rename that fails puts the previous set back (``compare`` writes a
  set as each run ends, so that is every run written before); a process killed at any point leaves a
  state that the next :meth:`OutDir.acquire` completes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

__all__ = ["OUTPUT_FILES", "MARKER", "LOCK_NAME", "PREVIOUS", "OutDir", "OutDirError"]

#: Every file a ``compare`` run may write into ``--out``.
OUTPUT_FILES = ("results.csv", "per_query.csv", "curves.csv", "summary.csv", "results.json", "curves.png",
                "metrics.png", "tuning.csv")
#: Written last: its presence marks a complete set of files.
MARKER = "results.json"
LOCK_NAME = ".boostplug-compare.lock"
#: The previous run's complete set while the new one moves in.
PREVIOUS = ".boostplug-compare-previous"
#: The previous run's files while they are moved aside (some may still be in ``--out``).
_PREVIOUS_PARTIAL = PREVIOUS + ".partial"
_STAGING_PREFIX = ".boostplug-compare-staging-"


class OutDirError(Exception):
    """The folder cannot be used for this run (held by another run, holds results, ...)."""


class OutDir:
    """``--out`` taken for one run; use as a context manager (releases the lock on exit).

    ``recovered`` (after :meth:`acquire`): ``"previous"`` or ``"new"`` when a run killed while
    moving its files in had left them half moved and the complete previous or new set was
    restored, else None."""

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        self.path = Path(path)
        self.overwrite = overwrite
        self.recovered: str | None = None
        #: the folders this run created for ``--out`` (it and missing parents, deepest first), which
        #: :meth:`remove_if_unused` removes again when the run wrote nothing into them
        self.created: list[Path] = []
        self._fd: int | None = None

    # ---- taking the folder ----------------------------------------------------------------
    def __enter__(self) -> "OutDir":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Create the folder and take it as the module docstring's first point says; ``OutDirError`` otherwise."""
        self.path.mkdir(parents=True, exist_ok=True)
        self._fd = _lock(self.path / LOCK_NAME)
        try:
            try:
                self.recovered = self.recover()
            except OSError as e:
                raise OutDirError(f"--out {self.path}: a run killed while moving its results in left the earlier "
                                  f"run's files in {self._aside()}, and they cannot be put back "
                                  f"({e.strerror or e}); move them into {self.path} by hand") from None
            for name in OUTPUT_FILES:
                p = self.path / name
                if p.is_symlink():
                    raise OutDirError(f"--out {self.path}: {name} is a symbolic link; a run replaces its files as "
                                      "one set and does not write through links: remove the link, or choose "
                                      "another folder")
                if p.is_dir():
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

    def remove_if_unused(self) -> None:
        """After :meth:`release`: remove the folders this run created (:attr:`created`) that are
        still empty, deepest first, so that a run that ended before writing (an error in what was
        asked, Ctrl-C) leaves no folder behind. A folder anything was written into stays."""
        for folder in self.created:
            try:
                os.rmdir(folder)
            except OSError:  # not empty (or not ours to remove): it and its parents stay
                return

    # ---- writing a run ------------------------------------------------------------------
    def write(self, fill: Callable[[Path], None]) -> list[str]:
        """``fill(staging)`` writes the run's files into an empty staging folder; they then
        replace the folder's output files as one set (``results.json`` last; output files the run
        did not write, e.g. the plots of an earlier run, are removed). Returns the names written.

        An ``OSError`` (naming the file of ``--out`` concerned) says which set the folder holds:
        nothing was written (``fill`` failed), or the new set could not be moved in and the
        previous set is back, or (when even that failed) where the previous files wait for the
        next run to put them back."""
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
            _fsync_dir(staging)
            with _signals_deferred():
                self._swap(staging, written)
        finally:  # gone already when its files moved in; rmtree(ignore_errors) passes over that
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

    def _swap(self, staging: Path, written: list[str]) -> None:
        """The previous set aside, the new set in (``results.json`` last: the commit), the
        previous set deleted; on a failure, the previous set back and an ``OSError`` saying so."""
        previous = sorted((n for n in OUTPUT_FILES if os.path.lexists(self.path / n)), key=lambda n: n != MARKER)
        partial = self.path / _PREVIOUS_PARTIAL
        where = self.path
        try:
            os.mkdir(partial)
            for name in previous:
                where = self.path / name
                os.replace(self.path / name, partial / name)
            _fsync_dir(partial)
            where = self.path
            os.replace(partial, self.path / PREVIOUS)  # the previous set is whole aside
            _fsync_dir(self.path)
            for name in _marker_last(written):
                where = self.path / name
                os.replace(staging / name, self.path / name)
        except OSError as e:  # putting the previous set back removes the new files moved in
            raise self._not_moved(e, where, bool(previous)) from e
        _fsync_dir(self.path)
        shutil.rmtree(self.path / PREVIOUS, ignore_errors=True)  # one left is deleted by the next recover()

    def _not_moved(self, e: OSError, where: Path, had_previous: bool) -> OSError:
        """The previous set put back after ``e``, as an ``OSError`` about ``where`` saying which set
        the folder now holds."""
        reason = e.strerror or str(e)
        try:
            self.recover()
        except OSError as again:
            return OSError(e.errno, f"{reason}; the new results were not moved in, and the earlier run's files "
                                    f"could not be put back ({again.strerror or again}): they are in "
                                    f"{self._aside()}, and the next boostplug compare on {self.path} puts "
                                    "them back", str(where))
        held = ("the folder holds the complete set of results it held before" if had_previous else
                "the folder holds no results, as before")
        return OSError(e.errno, f"{reason}; the new results were not moved in: {held}", str(where))

    # ---- after a killed run ---------------------------------------------------------------
    def _aside(self) -> Path:
        """The folder that holds the previous run's files while a swap is not complete."""
        partial = self.path / _PREVIOUS_PARTIAL
        return partial if _is_folder(partial) else self.path / PREVIOUS

    def recover(self) -> str | None:
        """Complete a swap of sets that a killed process left half done: ``"new"`` when the new
        set had been committed (its ``results.json`` moved in; the previous set is deleted),
        ``"previous"`` when the previous set is put back (the new files are removed), None when
        there was nothing to do. Each step can be interrupted and run again. ``OSError`` when a
        file cannot be moved."""
        partial, previous = self.path / _PREVIOUS_PARTIAL, self.path / PREVIOUS
        if _is_folder(previous):
            if os.path.lexists(self.path / MARKER):
                shutil.rmtree(previous, ignore_errors=True)
                return "new"
            for name in OUTPUT_FILES:  # all new files: the previous set is whole in ``previous``
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path / name)
            os.replace(previous, partial)  # from here, every output file in the folder is the previous set's
        if not _is_folder(partial):
            return None
        for name in _marker_last(n for n in OUTPUT_FILES if os.path.lexists(partial / n)):
            os.replace(partial / name, self.path / name)
        shutil.rmtree(partial, ignore_errors=True)
        _fsync_dir(self.path)
        return "previous"


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _marker_last(names: Iterable[str]) -> list[str]:
    """``names`` with :data:`MARKER` last, the others in their order."""
    return sorted(names, key=lambda n: n == MARKER)


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
