"""Where numba caches boostplug's compiled kernels, decided before any kernel module loads.

The kernels are ``@numba.njit(cache=True)``. Numba writes their cache beside the source
(``__pycache__``), else under the user's cache folder (``~/.cache/numba``), and fails at import
(``cannot cache function ...: no locator available``) when it can write in neither: a read-only
install with a read-only home. :func:`configure` (run by ``import boostplug``) checks the same
places numba would and, only when none works, points numba at ``NUMBA_CACHE_DIR`` = a per-user
folder in the temporary directory, or, if that cannot be written either, compiles without a
cache; either way with one warning. A ``NUMBA_CACHE_DIR`` the user set is left alone when it
can be written.

:func:`configure` also makes numba's function ids random (:class:`RandomIds`): numba names
compiled functions by qualified name, argument types and a per-process counter, so a kernel
cached by one process can call, by the same name, a different function that this process
compiled (numba's own sorts are closures with one name per comparator), and LLVM links the
wrong body: NDCG silently came out as 1.0 (numba issue #10486).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import secrets
import stat
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Callable

__all__ = ["KERNEL_FOLDERS", "RandomIds", "configure", "decide", "random_function_ids", "user_cache_base"]

_PACKAGE = Path(__file__).resolve().parent
#: The folders of the modules with ``cache=True`` kernels (a test keeps this list complete).
KERNEL_FOLDERS = (_PACKAGE, _PACKAGE / "metrics", _PACKAGE / "objectives", _PACKAGE / "boosters",
                  _PACKAGE / "_core", _PACKAGE / "data", _PACKAGE / "clicks")

_decision: tuple[str, str | None] | None = None


def writable(folder: Path) -> bool:
    """numba's own test (``_CacheLocator.ensure_cache_path``): create the folder, write a file in it."""
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def user_cache_base() -> Path:
    """The user's cache folder: ``~/Library/Caches``, ``%LOCALAPPDATA%``, else ``XDG_CACHE_HOME`` or ``~/.cache``."""
    if sys.platform == "darwin":
        return Path("~/Library/Caches").expanduser()
    if sys.platform.startswith("win"):
        return Path(os.environ.get("LOCALAPPDATA", "~")).expanduser()
    return Path(os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")))


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
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
        raise PermissionError(f"{path} is not a folder of this user's")
    return path


def decide(is_writable: Callable[[Path], bool] = writable) -> tuple[str, str | None]:
    """``(how, folder)``: ``("numba", None)`` when numba finds a place itself (the user's
    ``NUMBA_CACHE_DIR``, every kernel folder's ``__pycache__``, or the user cache folder),
    ``("temp", folder)`` for the fallback folder, ``("off", None)`` for no cache."""
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    if user_dir and is_writable(Path(user_dir)):
        return "numba", None
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


def random_function_ids() -> None:
    """Give every function numba compiles from now on a random id instead of the next count, so
    that the names in one process's cached machine code are not reused by another process for
    other code (module docstring). Without numba loaded yet, this happens when it loads, so
    that ``import boostplug`` does not load numba."""
    if "numba" not in sys.modules:
        if not any(isinstance(f, _OnNumbaImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _OnNumbaImport())
        return
    from numba.core import bytecode

    if not isinstance(getattr(bytecode.FunctionIdentity, "_unique_ids", None), RandomIds):
        bytecode.FunctionIdentity._unique_ids = RandomIds()


class _OnNumbaImport(importlib.abc.MetaPathFinder):
    """Runs :func:`random_function_ids` right after ``import numba`` completes (then leaves
    ``sys.meta_path``)."""

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
                random_function_ids()

            spec.loader.exec_module = exec_then_patch  # type: ignore[method-assign]
        return spec


def configure(is_writable: Callable[[Path], bool] = writable) -> tuple[str, str | None]:
    """Apply :func:`decide` once per process (later calls return the first decision), and
    :func:`random_function_ids`."""
    global _decision
    if _decision is not None:
        return _decision
    random_function_ids()
    how, folder = _decision = decide(is_writable)
    if how == "temp":
        assert folder is not None
        os.environ["NUMBA_CACHE_DIR"] = folder  # read when numba loads; spawned workers inherit it
        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = folder
        warnings.warn(f"boostplug: numba cannot write its cache beside boostplug nor in {_user_cache_dir()}; "
                      f"compiled kernels are cached in {folder} (set NUMBA_CACHE_DIR to choose)",
                      RuntimeWarning, stacklevel=3)
    elif how == "off":
        _without_cache()
        warnings.warn("boostplug: numba can write its cache nowhere (read-only install, home and temporary "
                      "folder); kernels are compiled on every run (set NUMBA_CACHE_DIR to a writable folder)",
                      RuntimeWarning, stacklevel=3)
    return _decision


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
