"""Where numba caches boostplug's compiled kernels, decided before any kernel module loads, and
how numba's cache is made safe. docs/reliability.md ("A read-only installation" and after) states
each rule and what it protects against; here, where each is done:

* The place (numba itself fails at import when it can write neither beside the source nor in the
  user's cache folder): :func:`configure`, run by ``import boostplug``, applying :func:`decide`.
* Random function ids: :class:`RandomIds` (numba issue #10486: NDCG came out 1.0).
* Safe folders and files: :func:`boostplug._cache_folders.folder_problem` for each folder,
  :func:`_file_problem` for each file right before it is loaded.
* The stamp: :func:`package_digest`. A file that cannot be loaded: :func:`_set_aside`.
* Saves are locked: numba reads the folder's index, adds its entry, writes the index, then the
  data file, so two processes saving at once could lose an entry or point one at the other's data.
  boostplug's saves hold an exclusive ``flock`` on the folder's ``boostplug.lock`` around the whole
  update: the index read again, the data written, then the index (a reader sees an entry only once
  its data is there).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.abc
import importlib.util
import itertools
import os
import secrets
import stat
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Callable

from . import _cache_folders
from ._cache_folders import judge, refusal, usable, user_cache_base, warn_refused

__all__ = ["KERNEL_FOLDERS", "RandomIds", "configure", "decide", "package_digest",
           "source_digest"]

_PACKAGE = Path(__file__).resolve().parent
#: The folders of the modules with ``cache=True`` kernels (a test keeps this list complete).
KERNEL_FOLDERS = (_PACKAGE, _PACKAGE / "metrics", _PACKAGE / "objectives", _PACKAGE / "boosters",
                  _PACKAGE / "_core", _PACKAGE / "data", _PACKAGE / "clicks")

_decision: tuple[str, str | None] | None = None


def source_digest(folder: Path, version: str) -> str:
    """A digest of ``version`` and the path (relative to ``folder``) and contents of every ``.py``
    file under ``folder``."""
    h = hashlib.sha256(version.encode())
    for path in sorted(folder.rglob("*.py")):
        h.update(f"\0{path.relative_to(folder).as_posix()}\0".encode() + path.read_bytes())
    return h.hexdigest()[:32]


_PACKAGE_DIGEST: list[str] = []


def package_digest() -> str:
    """:func:`source_digest` of boostplug (its version and its package's sources), once per process."""
    if not _PACKAGE_DIGEST:
        _PACKAGE_DIGEST.append(source_digest(_PACKAGE, sys.modules["boostplug"].__version__))
    return _PACKAGE_DIGEST[0]


def _user_cache_dir() -> Path:
    """numba's user-wide cache folder (its ``appdirs.user_cache_dir('numba')``)."""
    if sys.platform.startswith("win"):
        return user_cache_base() / "numba" / "Cache"
    return user_cache_base() / "numba"


def _temp_cache_dir() -> Path:
    """A folder of this user's in the temporary directory (a shared /tmp: created 0700, and only
    used when it is ours and not a link)."""
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    path = Path(tempfile.gettempdir()) / f"boostplug-numba-cache-{uid}"
    with contextlib.suppress(OSError):
        path.mkdir(mode=0o700)
    st = path.lstat()  # OSError when it could not be created
    why = "a symbolic link" if stat.S_ISLNK(st.st_mode) else judge(path)
    if why is not None:
        if not why.startswith("not a folder"):
            warn_refused(path, path, why)
        raise PermissionError(f"{path} is {why}")
    return path


def decide(is_writable: Callable[[Path], bool] = usable,
           refused: list[tuple[Path, str]] | None = None) -> tuple[str, str | None]:
    """``(how, folder)``: ``("numba", None)`` when numba finds a place itself (the user's
    ``NUMBA_CACHE_DIR``, every kernel folder's ``__pycache__``, or the user cache folder),
    ``("temp", folder)`` for the fallback folder, ``("off", None)`` for no cache. A place counts
    when ``is_writable`` (default :func:`usable`: safe, then writable) says so. The user's own
    folder refused is warned of; the usual places refused go into ``refused``, ``(folder, why)``."""
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    if user_dir and is_writable(Path(user_dir)):
        return "numba", None
    _cache_folders.held = [] if refused is None else refused
    try:
        return _usual_places(is_writable)
    finally:
        _cache_folders.held = None


def _usual_places(is_writable: Callable[[Path], bool]) -> tuple[str, str | None]:
    if all(is_writable(f / "__pycache__") for f in KERNEL_FOLDERS) or is_writable(_user_cache_dir()):
        return "numba", None
    try:
        folder = _temp_cache_dir()
    except OSError:
        return "off", None
    return ("temp", str(folder)) if is_writable(folder) else ("off", None)


class RandomIds:
    """Unique ids for numba's ``FunctionIdentity``: 64 random bits each (from ``os.urandom``, so
    forked processes draw differently too), never the same twice in one process."""

    def __init__(self) -> None:
        self._issued: set[int] = set()

    def __iter__(self) -> "RandomIds":
        return self

    def __next__(self) -> int:
        while True:
            uid = secrets.randbits(64)
            if uid not in self._issued:
                self._issued.add(uid)
                return uid


def _patch_numba() -> None:
    """From now on, numba gives every function it compiles a random id instead of the next count
    (:class:`RandomIds`: the names in one process's cached machine code are not reused by another
    process for other code), caches only in folders that
    pass :func:`folder_problem` (its locators' ``ensure_cache_path``, which every cache folder goes
    through, refuses the others as if they could not be written; a save refused so, or failing, is
    skipped: the kernel runs uncached), loads a cache file only when :func:`_file_problem` finds
    none right before (else one warning, and the kernel is compiled), sets aside a cache file it
    cannot load and compiles the kernel again (:func:`_set_aside`) instead of raising, saves under
    the folder's lock (module docstring), and stamps boostplug's cache files with :func:`package_digest`."""
    from numba.core import bytecode, caching

    if not isinstance(getattr(bytecode.FunctionIdentity, "_unique_ids", None), RandomIds):
        bytecode.FunctionIdentity._unique_ids = RandomIds()
    locator, index, cache = caching._CacheLocator, caching.IndexDataCacheFile, caching.Cache
    if getattr(locator.ensure_cache_path, "_boostplug_guard", False):
        return
    ensure, load_index, load_data, save = (locator.ensure_cache_path, index._load_index, index._load_data,
                                           index.save)
    load_overload, save_overload = cache._load_overload, cache._save_overload
    source_stamp = caching._SourceFileBackedLocatorMixin.get_source_stamp

    def ensure_cache_path(self: object) -> None:
        folder = os.path.abspath(self.get_cache_path())  # type: ignore[attr-defined]
        why = refusal(Path(folder))
        if why is not None:
            raise _Refused(errno.EACCES, f"not a safe cache folder: {why}", folder)
        ensure(self)

    def _load_index(self: object) -> dict[object, object]:
        if not _loadable(Path(self._index_path)):  # type: ignore[attr-defined]
            return {}
        try:
            return load_index(self)
        except Exception as e:  # the index is read by every load and save: never let a damaged one raise
            _set_aside(Path(self._index_path), e)  # type: ignore[attr-defined]
            return {}

    def save_locked(self: object, key: object, data: object) -> None:
        try:
            import fcntl
        except ImportError:  # Windows: numba's own save
            return save(self, key, data)
        lock = os.path.join(self._cache_path, "boostplug.lock")  # type: ignore[attr-defined]
        if not _loadable(Path(lock)):  # a FIFO, socket, device or link there: one warning, the kernel uncached
            raise _Refused(errno.EINVAL, "not a safe lock file", lock)
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, 0o600)  # a FIFO put there since: ENXIO
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            overloads = self._load_index()  # type: ignore[attr-defined]
            if key in overloads:  # a kernel compiled again: its data file is rewritten, the index stays
                self._save_data(overloads[key], data)  # type: ignore[attr-defined]
                return
            taken = set(overloads.values())
            overloads[key] = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)  # type: ignore[attr-defined]
            self._save_data(overloads[key], data)  # type: ignore[attr-defined]
            self._save_index(overloads)  # type: ignore[attr-defined]
        finally:
            os.close(fd)  # releases the lock

    def _load_data(self: object, name: str) -> object:
        path = self._data_path(name)  # type: ignore[attr-defined]
        if not _loadable(Path(path)):  # numba's load takes this for a file removed meanwhile: it compiles
            raise _Refused(errno.EACCES, "not a safe cache file", path)
        return load_data(self, name)

    def _load_overload(self: object, sig: object, target_context: object) -> object:
        try:
            return load_overload(self, sig, target_context)
        except Exception as e:
            data = _data_file(self, sig, target_context)
            if data is None:  # not a cache file's fault
                raise
            _set_aside(data, e)
            return None  # numba compiles the kernel (and caches it again)

    def _save_overload(self: object, sig: object, data: object) -> None:
        try:
            save_overload(self, sig, data)
        except _Refused:  # named when refused
            pass
        except OSError as e:  # not writable (any more): the kernel runs, uncached
            _warn_once(f"boostplug: numba cannot write its cache in {self._cache_path} "  # type: ignore[attr-defined]
                       f"({e.strerror or e}); the kernel runs without a cache")

    def get_source_stamp(self: object) -> object:
        stamp = source_stamp(self)
        ours = os.path.realpath(self._py_file).startswith(str(_PACKAGE) + os.sep)  # type: ignore[attr-defined]
        return (stamp, package_digest()) if ours else stamp

    patches = ((locator, "ensure_cache_path", ensure_cache_path), (index, "_load_index", _load_index),
               (index, "save", save_locked),
               (index, "_load_data", _load_data), (cache, "_load_overload", _load_overload),
               (cache, "_save_overload", _save_overload),
               (caching._SourceFileBackedLocatorMixin, "get_source_stamp", get_source_stamp))
    for owner, name, fn in patches:
        fn._boostplug_guard = True  # type: ignore[attr-defined]
        setattr(owner, name, fn)


class _Refused(PermissionError):
    """A cache folder or file refused by :func:`_patch_numba` (already named in a warning)."""


def _file_problem(path: Path) -> tuple[Path, str] | None:
    """Why numba must not load the cache file ``path``, checked right before it does (its folder
    may have been replaced since it was chosen), as ``(what fails, why)``: its folder fails
    :func:`folder_problem`, or the file is a link, not this user's, or writable by others; ``None``
    when it may be loaded (or is not there)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return path, f"not examinable ({e.strerror or e})"
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):  # a FIFO, socket or device: open() could block
        return path, "not a regular file"
    if not hasattr(os, "getuid"):
        return None
    why = judge(path.parent)
    if why is not None:
        return path.parent, why
    if stat.S_ISLNK(st.st_mode):
        return path, "a symbolic link"
    if st.st_uid != os.getuid():
        return path, f"owned by uid {st.st_uid}"
    if st.st_mode & stat.S_IWOTH:
        return path, f"writable by others (mode {oct(stat.S_IMODE(st.st_mode))})"
    return None


def _loadable(path: Path) -> bool:
    """Whether numba may load the cache file ``path`` (:func:`_file_problem`; one warning per file
    or folder that fails)."""
    found = _file_problem(path)
    if found is None:
        return True
    where, why = found
    if where == path.parent:
        warn_refused(where, where, why)
    else:
        _warn_once(f"boostplug: numba's cache file {path} is {why}: not loaded (whoever can write it can run code "
                   "as you through it); the kernel is compiled")
    return False


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _data_file(cache: object, sig: object, target_context: object) -> Path | None:
    """The data file (``.nbc``) numba's ``cache`` holds for ``sig``, or ``None``."""
    try:
        key = cache._index_key(sig, target_context.codegen())  # type: ignore[attr-defined]
        name = cache._cache_file._load_index().get(key)  # type: ignore[attr-defined]
        return None if name is None else Path(cache._cache_file._data_path(name))  # type: ignore[attr-defined]
    except Exception:
        return None


_set_aside_files: set[str] = set()

#: What a cache file that cannot be loaded is renamed to: ``<name>`` + this.
UNREADABLE = ".unreadable"


def _set_aside(path: Path, error: BaseException) -> None:
    """Rename the cache file ``path`` that numba could not load (``error``) to ``<name>.unreadable``
    (or remove it), so that numba compiles its kernel again and writes a new one; one warning
    naming the file."""
    aside = path.with_name(path.name + UNREADABLE)
    try:
        os.replace(path, aside)
        done = f"set aside as {aside.name}"
    except FileNotFoundError:
        done = "already gone"  # another process set it aside meanwhile
    except OSError as e:
        try:
            os.unlink(path)
            done = "removed"
        except OSError:
            done = f"left in place: it could not be set aside ({e.strerror or e})"
    if str(path) in _set_aside_files:
        return
    _set_aside_files.add(str(path))
    text = " ".join(str(error).split())[:200]
    warnings.warn(f"boostplug: numba's cache file {path} cannot be loaded ({type(error).__name__}: {text}); "
                  f"{done}, the kernel is compiled again", RuntimeWarning, stacklevel=2)


class _OnNumbaImport(importlib.abc.MetaPathFinder):
    """Runs :func:`_patch_numba` right after ``import numba``
    completes (then leaves ``sys.meta_path``)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if fullname != "numba":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec("numba")
        if spec is not None and spec.loader is not None:
            exec_module = spec.loader.exec_module

            def exec_then_patch(module: object) -> None:
                exec_module(module)  # type: ignore[arg-type]
                _patch_numba()

            spec.loader.exec_module = exec_then_patch  # type: ignore[method-assign]
        return spec


def configure(is_writable: Callable[[Path], bool] = usable) -> tuple[str, str | None]:
    """Apply :func:`decide` once per process (later calls return the first decision) and
    :func:`_patch_numba`."""
    global _decision
    if _decision is not None:
        return _decision
    if "numba" in sys.modules:
        _patch_numba()
    elif not any(isinstance(f, _OnNumbaImport) for f in sys.meta_path):  # when numba loads: not by import boostplug
        sys.meta_path.insert(0, _OnNumbaImport())
    if os.environ.get(_OFF) == "off":  # a worker of a process that found no place and said so
        _decision = ("off", None)
        _without_cache()
        return _decision
    refused: list[tuple[Path, str]] = []  # the usual places that fail, named in the one warning below
    how, folder = _decision = decide(is_writable, refused)
    if how == "numba":
        return _decision
    first, why = refused[0] if refused else (_user_cache_dir(), "not writable")
    outside = why.split(", which is")[0][len("inside "):] if why.startswith("inside ") else first
    fix = (f"chmod go-w {outside}" if "writable by" in why else
           "mkdir -m 700 DIR && export NUMBA_CACHE_DIR=DIR (a folder of yours)")
    if how == "temp":
        assert folder is not None
        os.environ["NUMBA_CACHE_DIR"] = folder  # read when numba loads; spawned workers inherit it
        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = folder
        where = f"they are cached in {folder} instead"
    else:
        os.environ[_OFF] = "off"  # spawned workers do the same without a word
        _without_cache()
        where = "they are compiled in memory, again in every process"
    warnings.warn(f"boostplug: numba cannot cache its compiled kernels beside boostplug or in {_user_cache_dir()} "
                  f"({first} is {why}): {where}. To cache them: {fix}", RuntimeWarning, stacklevel=3)
    return _decision


#: The environment variable that tells a worker process its parent found no place to cache kernels.
_OFF = "BOOSTPLUG_NUMBA_CACHE"


def _without_cache() -> None:
    """``cache=True`` kernels compile without a cache instead of failing at import: the
    dispatcher keeps its null cache when numba finds no place for one."""
    from numba.core import dispatcher

    enable = dispatcher.Dispatcher.enable_caching
    if getattr(enable, "_boostplug_fallback", False):
        return

    def enable_caching(self: object) -> None:
        try:
            enable(self)
        except RuntimeError as e:
            if "no locator available" not in str(e):
                raise

    enable_caching._boostplug_fallback = True  # type: ignore[attr-defined]
    dispatcher.Dispatcher.enable_caching = enable_caching  # type: ignore[method-assign]
