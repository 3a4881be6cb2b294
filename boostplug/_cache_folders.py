"""The user's cache folder, and which folders compiled code may be loaded from (:func:`folder_problem`;
why, and the rule: docs/reliability.md, "No code from a folder another user can write"). Used for the
class kernels' own cache (:mod:`boostplug._core.class_kernels`) and, through
:mod:`boostplug._numba_cache`, for every folder numba caches in.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
import warnings
from pathlib import Path

__all__ = ["folder_problem", "judge", "refusal", "usable", "user_cache_base", "warn_refused", "writable"]


def writable(folder: Path) -> bool:
    """numba's own test (``_CacheLocator.ensure_cache_path``): create the folder, write a file in it."""
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def folder_problem(path: Path) -> str | None:
    """Why code must not be loaded from the folder ``path`` (a short reason: ``"owned by uid
    1001"``, ``"writable by group (mode 0o775)"``, ``"inside /srv/shared, which is ..."``,
    ``"reached through the link /home/me/cache, owned by uid 1001"``, ``"not a folder"``), or
    ``None`` when it may, as OpenSSH's StrictModes judges a home folder: the folder is this user's
    and not writable by group or others; every folder above it or holding a link met on the way,
    and every such link, is this user's or root's, those folders not writable by group or others
    unless sticky (``/tmp``). Links are followed. On Windows only "not a folder" is checked.

    A folder that does not exist yet is judged by its nearest existing parent (the reason then
    names it); when that passes, the missing folders are created with mode ``0o700`` and ``None``
    is returned (also when they cannot be created: then nothing is there to load)."""
    found = _problem(Path(path))
    return None if found is None else found[1]


def _problem(path: Path) -> tuple[Path, str] | None:
    """:func:`folder_problem` as ``(the folder judged, the reason)``: ``path`` itself, or, when it
    does not exist, its nearest existing parent (the reason then says so)."""
    path = Path(os.path.abspath(path))
    missing = []
    where = path
    while True:
        try:
            os.stat(where)
            break
        except FileNotFoundError:
            if where.parent == where:
                return None
            missing.append(where)
            where = where.parent
        except OSError as e:
            return where, f"not examinable ({e.strerror or e})"
    why = judge(where, leaf=not missing)
    if why is not None:
        return (where, why) if not missing else (where, f"not there, and its parent {where} is {why}")
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None  # cannot be created: nothing in it to load (numba finds it cannot write there)
    why = judge(path)
    return None if why is None else (path, why)


def judge(folder: Path, leaf: bool = True) -> str | None:
    """The reason an existing ``folder`` fails :func:`folder_problem` as the cache folder (``leaf``)
    or as a folder above one, or ``None``."""
    try:
        folders, links = _walk(str(folder)) if hasattr(os, "getuid") else ([str(folder)], [])
        st = os.stat(folders[-1])
    except OSError as e:
        return f"not examinable ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    if not hasattr(os, "getuid"):  # Windows: access lists, not owner and mode bits
        return None
    for link, owner in links:
        if owner not in (os.getuid(), 0):
            return f"reached through the link {link}, owned by uid {owner}"
    for above in folders[:-1]:
        why = _mode_problem(os.stat(above), above=True)
        if why is not None:
            return f"inside {above}, which is {why}"
    return _mode_problem(st, above=not leaf)


def _mode_problem(st: os.stat_result, above: bool) -> str | None:
    """Why a folder with the status ``st`` fails: not owned by this user (or root, for a folder
    ``above`` the cache folder), writable (write and search bits) by group or others (unless sticky, ``above``)."""
    if st.st_uid != os.getuid() and not (above and st.st_uid == 0):
        return f"owned by uid {st.st_uid}"
    mode = stat.S_IMODE(st.st_mode)
    if above and mode & stat.S_ISVTX:
        return None
    if mode & stat.S_IWOTH and mode & stat.S_IXOTH:
        return f"writable by others (mode {oct(mode)})"
    if mode & stat.S_IWGRP and mode & stat.S_IXGRP:
        return f"writable by group (mode {oct(mode)})"
    return None


def _walk(path: str) -> tuple[list[str], list[tuple[str, int]]]:
    """The real folders ``path`` leads through, from the root to its end (the folders holding the
    links met, then the ones their targets lead through), and each link met with its owner's uid:
    the links resolved one at a time, as the system does (``OSError`` for a loop or a missing part)."""
    todo, folders, links = list(Path(os.getcwd(), path).parts[1:]), [os.sep], []  # ".." after a link: its target's
    while todo:
        name = todo.pop(0)
        here = os.path.join(folders[-1], name)
        if name in (".", ".."):
            folders.append(os.path.normpath(here))
            continue
        st = os.lstat(here)
        if stat.S_ISLNK(st.st_mode):
            links.append((here, st.st_uid))
            if len(links) > 40:
                raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
            target = os.readlink(here)
            if os.path.isabs(target):
                folders.append(os.sep)
            todo[:0] = Path(target).parts[1:] if os.path.isabs(target) else Path(target).parts
            continue
        folders.append(here)
    real = folders[-1]
    return [f for f in dict.fromkeys(folders) if f != real] + [real], links


_refused: set[str] = set()
#: Not None: :func:`warn_refused` adds ``(folder, why)`` here instead (:mod:`._numba_cache`'s one warning names them).
held: list[tuple[Path, str]] | None = None


def warn_refused(folder: Path, where: Path, why: str) -> None:
    """One warning per folder ``where`` that fails :func:`folder_problem` (``why``) for the cache
    folder ``folder``; none for a folder inside one already named (numba's subfolders of a
    ``NUMBA_CACHE_DIR``)."""
    if any(str(where) == named or str(where).startswith(named.rstrip(os.sep) + os.sep) for named in _refused):
        return
    _refused.add(str(where))
    if held is not None:
        held.append((folder, why))
        return
    warnings.warn(f"boostplug: numba's cache folder {folder} is {why}: numba does not load or write cache files there "
                  "(whoever can write into it can run code as you through them); kernels are cached in another "
                  "folder or compiled in memory. Make it yours and not writable by group or others (chmod go-w), "
                  "or set NUMBA_CACHE_DIR to a folder of your own", RuntimeWarning, stacklevel=2)


def refusal(folder: Path) -> str | None:
    """Why numba must not cache in ``folder`` (:func:`folder_problem`: missing folders are created
    with mode ``0o700`` when it passes), or ``None``. A folder that fails but that this user could
    write into is named in one warning (one this user cannot write, numba skips anyway)."""
    found = _problem(folder)
    if found is None:
        return None
    where, why = found
    if os.access(where, os.W_OK):
        warn_refused(Path(os.path.abspath(folder)), where, why)
    return why


def usable(folder: Path) -> bool:
    """Whether numba may cache in ``folder``: no :func:`refusal`, and it can be written (:func:`writable`)."""
    return refusal(folder) is None and writable(folder)


def user_cache_base() -> Path:
    """The user's cache folder: ``~/Library/Caches``, ``%LOCALAPPDATA%``, else ``XDG_CACHE_HOME`` or ``~/.cache``."""
    if sys.platform == "darwin":
        return Path("~/Library/Caches").expanduser()
    if sys.platform.startswith("win"):
        return Path(os.environ.get("LOCALAPPDATA", "~")).expanduser()
    return Path(os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")))
