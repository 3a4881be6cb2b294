"""numba kernels built around one class's own functions, cached on disk under a digest of them.

A pair or listwise loss supplies small functions (a pair loss and its derivatives, a weight, a
per-query loss) that its base's loops call. The loops are closures over those functions, compiled
by numba once per class. numba's own disk cache cannot key such a closure (it hashes the closure's
contents by pickling them, and a function pickles differently in every process), so
:func:`compile_closure` gives each one a cache of its own, keyed by :func:`digest`: the loop's code
and everything the class's functions read (their bytecode, constants, defaults, closures and the
globals they load, and what they reach through a module, ``helpers.square`` or ``helpers.SCALE``:
recursively, across modules, boostplug's own included), with numba's and boostplug's versions. An
edited function, helper or constant gets a new digest, so its loops compile again; nothing is
written beside the package's sources. A closure over something that cannot be digested
(an object other than a number, string, array, module, class or function, or a function of a
module this process has not imported) is compiled in memory, every process.
"""

from __future__ import annotations

import contextlib
import dis
import hashlib
import os
import sys
import types
from pathlib import Path
from typing import Any, Callable, Iterator

import numba as nb
from numba.core.caching import CompileResultCacheImpl, FunctionCache, _CacheLocator
from numba.core.dispatcher import Dispatcher
from numba.core.registry import CPUDispatcher
from numba.core.types import Type as NumbaType

__all__ = ["BOUNDSCHECK_ENV", "bounds_checked", "bounds_checking", "digest", "compile_closure", "cache_folder",
           "cached_like", "renamed_copy"]


class _Unstable(Exception):
    """A value whose identity cannot be written into a digest."""


def digest(fn: Callable[..., Any]) -> str | None:
    """A digest of what the machine code numba compiles from ``fn`` depends on (module
    docstring), or ``None`` when something it reads cannot be digested."""
    from .. import __version__

    h = hashlib.sha256(f"numba {nb.__version__} boostplug {__version__}".encode())
    try:
        _feed(fn, h, set())
    except _Unstable:
        return None
    return h.hexdigest()[:32]


def _feed(value: Any, h: Any, seen: set[int]) -> None:
    if id(value) in seen:
        h.update(b"<seen>")
        return
    if isinstance(value, Dispatcher):
        seen.add(id(value))
        h.update(_stable_repr(value.targetoptions).encode())
        value = value.py_func
    if isinstance(value, types.FunctionType):
        if value.__module__ not in sys.modules:  # a by-value copy of a class of another process
            raise _Unstable(value.__qualname__)
        seen.add(id(value))
        h.update(f"function {value.__module__}.{value.__qualname__}".encode())
        cells = tuple(c.cell_contents for c in value.__closure__ or ())
        _feed_code(value.__code__, h, seen, value.__globals__, dict(zip(value.__code__.co_freevars, cells)))
        _feed(tuple(value.__defaults__ or ()), h, seen)
        _feed(cells, h, seen)
    elif isinstance(value, types.ModuleType):
        h.update(f"module {value.__name__}".encode())
    elif isinstance(value, NumbaType):  # numba's names its types uniquely (nb.float64)
        h.update(f"numba type {value}".encode())
    elif isinstance(value, type):
        h.update(f"class {value.__module__}.{value.__qualname__}".encode())
    elif hasattr(value, "dtype") and hasattr(value, "tobytes") and getattr(value, "ndim", 0) > 0:  # an array
        h.update(f"array {value.dtype} {value.shape}".encode() + hashlib.sha256(value.tobytes()).digest())
    elif value is None or isinstance(value, (bool, int, float, complex, str, bytes)) or (
            hasattr(value, "dtype") and not hasattr(value, "shape")):  # a number, or a numpy scalar
        h.update(f"{type(value).__name__} {value!r}".encode())
    elif isinstance(value, tuple):
        h.update(f"tuple {len(value)}".encode())
        for v in value:
            _feed(v, h, seen)
    elif callable(value) and hasattr(value, "__module__") and hasattr(value, "__qualname__"):
        h.update(f"callable {value.__module__}.{value.__qualname__}".encode())  # a numpy ufunc, a builtin
    else:
        raise _Unstable(repr(value))


def _feed_code(code: types.CodeType, h: Any, seen: set[int], globals_: dict[str, Any],
               cells: dict[str, Any]) -> None:
    """``code``, the globals it loads and what it reaches through a module (``helpers.square``,
    ``np.linalg.norm``: each attribute of a chain of loads that starts at a module, until the
    chain leaves the modules)."""
    h.update(code.co_code + repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed_code(const, h, seen, globals_, {})
        else:
            h.update(_stable_repr(const).encode())
    module = None  # the module the last instruction loaded, whose attribute the next one may load
    for ins in dis.get_instructions(code):
        value = _MISSING
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in globals_:
            value = globals_[ins.argval]
        elif ins.opname == "LOAD_DEREF" and ins.argval in cells:
            value = cells[ins.argval]  # fed with the closure
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and module is not None:
            value = getattr(module, ins.argval, _MISSING)
        if value is not _MISSING and ins.opname != "LOAD_DEREF":
            h.update(f"{ins.opname} {ins.argval}".encode())
            _feed(value, h, seen)
        module = value if isinstance(value, types.ModuleType) else None


_MISSING = object()


def _stable_repr(value: Any) -> str:
    """``repr`` with sets and dicts in sorted order: a set of strings (numba's ``fastmath={"reassoc",
    "contract"}``, a ``frozenset`` constant of ``x in {"a", "b"}``) iterates in an order that differs
    between processes (string hashing is randomised), and a digest must not."""
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}({sorted(_stable_repr(v) for v in value)})"
    if isinstance(value, dict):
        return f"dict({sorted((_stable_repr(k), _stable_repr(v)) for k, v in value.items())})"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({[_stable_repr(v) for v in value]})"
    return repr(value)


_FOLDER: list[Path | None] = []


def cache_folder() -> Path | None:
    """Where the class kernels are cached: ``boostplug_kernels`` under ``NUMBA_CACHE_DIR`` when
    set, else ``boostplug/kernels`` in the user's cache folder; ``None`` (compiled in memory) when
    that folder cannot be written or is not this user's alone (another user could plant files
    there that numba would unpickle: :func:`boostplug._cache_folders.usable` warns once, naming it).
    Decided once per process."""
    if not _FOLDER:
        from numba.core import config

        from .._cache_folders import usable, user_cache_base

        folder = Path(config.CACHE_DIR) / "boostplug_kernels" if config.CACHE_DIR else \
            user_cache_base() / "boostplug" / "kernels"
        _FOLDER.append(folder if usable(folder) else None)
    return _FOLDER[0]


class _Locator(_CacheLocator):
    """The cache of one digest in :func:`cache_folder` (never chosen by numba's own search)."""

    def __init__(self, folder: Path, key: str) -> None:
        self._folder, self._key = folder, key

    def get_cache_path(self) -> str:
        return str(self._folder)

    def get_source_stamp(self) -> str:
        return self._key

    def get_disambiguator(self) -> str:
        return self._key

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> None:
        return None


class _Impl(CompileResultCacheImpl):
    def __init__(self, py_func: Any) -> None:  # the locator is the digest's, not found from a source file
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _Locator(py_func._boostplug_cache[0], py_func._boostplug_cache[1])
        self._filename_base = self.get_filename_base(f"{py_func.__module__}.{py_func.__qualname__}",
                                                     getattr(sys, "abiflags", ""))


class _DigestCache(FunctionCache):
    """numba's function cache, indexed by the digest instead of the closure's pickled contents."""

    _impl_class = _Impl

    def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
        return sig, codegen.magic_tuple(), self._py_func._boostplug_cache[1]


def compile_closure(fn: Callable[..., Any], **options: Any) -> Dispatcher:
    """``numba.njit(**options)(fn)`` for a closure over one class's functions, cached on disk
    under :func:`digest` of it (module docstring) when it has one and :func:`cache_folder` is
    usable, else compiled in memory. It and the class's functions it calls run their
    :func:`bounds_checked` twins while bounds checking is on."""
    for cell in fn.__closure__ or ():
        _switchable(cell.cell_contents)
    return _switchable(_compile(fn, **options))


def _compile(fn: Callable[..., Any], **options: Any) -> Dispatcher:
    kernel = nb.njit(**options)(fn)
    key, folder = digest(kernel), cache_folder()
    if key is not None and folder is not None:
        fn._boostplug_cache = (folder, key)  # type: ignore[attr-defined]
        kernel._cache = _DigestCache(fn)
    return kernel


# ---- bounds checking: the debug switch -------------------------------------------------------------------
#: Set to 1, every class's loops and functions run bounds-checked (:func:`bounds_checking`) in this process.
BOUNDSCHECK_ENV = "BOOSTPLUG_BOUNDSCHECK"


def _from_env() -> int:
    value = os.environ.get(BOUNDSCHECK_ENV, "0").strip() or "0"
    if value not in ("0", "1"):
        raise ValueError(f"{BOUNDSCHECK_ENV} must be 0 or 1, got {value!r}")
    return int(value)


_checking = [_from_env()]  # how many bounds_checking() are open (1 more with BOOSTPLUG_BOUNDSCHECK=1)


@contextlib.contextmanager
def bounds_checking() -> Iterator[None]:
    """For its duration (process-wide), the loops :func:`compile_closure` compiled and the class
    functions they call run compiled with numba's ``boundscheck``, serially: an index out of a
    query's arrays is an ``IndexError`` (the bases name the function that raised it) instead of a
    write into other memory or a crash. ``BOOSTPLUG_BOUNDSCHECK=1`` turns it on for a whole
    process. Slower (serial, checked, compiled once more per class)."""
    _checking[0] += 1
    try:
        yield
    finally:
        _checking[0] -= 1


class _Switching(CPUDispatcher):
    """A class kernel or class function: called from Python while :func:`bounds_checking` is on,
    it runs its :func:`bounds_checked` twin instead."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _checking[0]:
            return bounds_checked(self)(*args, **kwargs)
        return super().__call__(*args, **kwargs)


def _switchable(value: Any) -> Any:
    if type(value) is CPUDispatcher:
        value.__class__ = _Switching  # same layout: only its Python-level call changes
    return value


_CHECKED: dict[tuple[Any, ...], tuple[Any, Dispatcher]] = {}


def bounds_checked(kernel: Dispatcher) -> Dispatcher:
    """``kernel`` compiled serially with numba's ``boundscheck``, the class functions in its
    closure (each its own bounds-checked twin) too; one per code and closure (a loop and its
    serial twin share it), cached on disk as :func:`compile_closure`'s."""
    fn = kernel.py_func
    key = (fn.__code__, *map(id, fn.__closure__ or ()))
    if key not in _CHECKED:
        cells = tuple(types.CellType(bounds_checked(c.cell_contents) if isinstance(c.cell_contents, _Switching)
                                     else c.cell_contents) for c in fn.__closure__ or ())
        copy = renamed_copy(fn, "_checked", cells or None)
        options = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "nopython", "boundscheck")}
        _CHECKED[key] = fn.__closure__, _compile(copy, boundscheck=True, **options)
    return _CHECKED[key][1]


def renamed_copy(fn: Any, suffix: str, closure: tuple[Any, ...] | None) -> types.FunctionType:
    """``fn`` again, named ``<name><suffix>`` (numba's disk cache is indexed by qualified name and
    line, not by the compile options: a distinct name keeps the machine codes apart), over ``closure``."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, closure)
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__ + suffix, fn.__module__, fn.__doc__
    return copy


def cached_like(kernel: Dispatcher, twin: Dispatcher) -> None:
    """Give ``twin`` (a copy of ``kernel``'s function compiled with other options, e.g. its serial
    twin under another name) a disk cache like ``kernel``'s: a digest cache, numba's own, or none."""
    if isinstance(kernel, _Switching):
        _switchable(twin)
    if isinstance(kernel._cache, _DigestCache):
        twin.py_func._boostplug_cache = kernel.py_func._boostplug_cache
        twin._cache = _DigestCache(twin.py_func)
    elif type(kernel._cache).__name__ != "NullCache":
        twin.enable_caching()
