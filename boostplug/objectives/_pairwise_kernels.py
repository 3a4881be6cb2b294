"""Numba kernels behind :mod:`boostplug.objectives.pairwise`, :mod:`.lambda_weighted` and
:mod:`.lambdaloss` (private): the pair loops compiled around each objective class's functions
(:func:`pair_loops`), what a lambda weight sees of a pair (:class:`Pair`), and each query's order
by score (:func:`query_orders`).

The pair loops' source is :mod:`._pair_loops`. :func:`pair_loops` compiles it once per class, with
the class's compiled pair functions as the loops' globals, from a copy of that source in a file
named by a fingerprint of those functions and of the loops' source: numba's disk cache keys the
machine code on that file, so a new process loads each class's loops instead of compiling them.
A class whose functions refer to something that cannot be fingerprinted (a global object that is
not a number, string, array, module, class or function), or to a function of a module this process
has not imported (a worker's copy of a class unpickled by value), gets loops compiled without a
disk cache; so does every class when numba can write its cache nowhere.

Each version of a class's functions gets a file of its own, so old ones accumulate. Every process
marks the files it uses (their access time; the modification time, which older numba versions
stamp their cache with, is kept), and writing a new file removes, in that folder, the files not
used for :data:`UNUSED_DAYS` days together with numba's cache files of them
(:func:`remove_unused`). A process that loses its file to a removal all the same (it had not
used it for that long and reached for it at that very moment) compiles its loops without a disk
cache, once.
"""

from __future__ import annotations

import contextlib
import dis
import hashlib
import os
import re
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, NamedTuple

import numba as nb
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.extending import overload

__all__ = ["Pair", "query_orders", "pair_loops", "NORM_OFFSET", "sum_type"]


class Pair(NamedTuple):
    """What a lambda weight sees of one pair in its query's current order (documents ``i``, the
    preferred one: the higher label, and ``j``), built in the kernel for each pair."""

    #: ``s_i - s_j``, the scores' difference
    d: float
    #: positions in the query's order by score, descending, ties in input order (0: the top)
    rank_i: int
    rank_j: int
    #: the documents' gains (``2^label - 1`` unless the objective says otherwise)
    gain_i: float
    gain_j: float
    #: the DCG discounts of their positions, ``1 / log2(2 + rank)``
    discount_i: float
    discount_j: float
    #: 1 / the query's ideal DCG (at the objective's truncation level), 0 when it is 0
    inv_max_dcg: float


#: LightGBM's ``0.01f``: with score-gap normalisation a pair's weight is divided by this plus |s_i - s_j|.
NORM_OFFSET = float(np.float32(0.01))


def sum_type(x: float, sums: np.ndarray) -> Any:  # pragma: no cover - compiled through its overload
    """``x`` as a number of ``sums``' dtype (float32 or float64), in compiled code: float32 sums then
    add in float32, with no conversion to float64 and back per addition."""
    raise NotImplementedError("sum_type is for compiled code")


@overload(sum_type, inline="always")
def _sum_type(x, sums):  # type: ignore[no-untyped-def]  # numba compares its arguments with the lambdas'
    if sums.dtype == nb.types.float32:
        return lambda x, sums: np.float32(x)
    return lambda x, sums: np.float64(x)


@nb.njit(parallel=True, cache=True)
def query_orders(scores: np.ndarray, group_ptr: np.ndarray, out: np.ndarray) -> None:
    """``out[a:b]``: the rows of each query ``a:b`` by descending score, ties in input order (a stable
    sort, as LightGBM's ``std::stable_sort``)."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        out[a:b] = a + np.argsort(-scores[a:b], kind="mergesort")


_LOOPS: dict[tuple[Any, ...], types.SimpleNamespace] = {}


def pair_loops(loss: Any, grad: Any, hess: Any, weight: Any = None, terms: Any = None, *,
               bound: bool = False) -> types.SimpleNamespace:
    """The loops of :mod:`._pair_loops` (``listed_loss_sums``, ``listed_grad_hess_sums``,
    ``lambda_sums``, ``ordered_pair_sums``: ``parallel=True`` dispatchers), compiled around one
    class's compiled pair functions (numba dispatchers): ``pair_loss``, ``pair_grad``,
    ``pair_hess`` and, for a lambda-weighted loss, ``pair_weight`` and its ``pair_terms``
    (``None``: ``(w pair_grad(d), w pair_hess(d))``); ``bound``: the Hessian terms are bounds
    (``2 |h|``), a constant of the loops' machine code. Built once per set of functions, ``bound``
    and process, cached on disk by numba (module docstring). numba compiles each loop when it is
    first called."""
    key = (loss, grad, hess, weight, terms, bool(bound))
    found = _LOOPS.get(key)
    if found is None:
        found = _LOOPS[key] = _build(dict(loss_fn=loss, grad_fn=grad, hess_fn=hess, weight_fn=weight,
                                          terms_fn=terms, BOUND=bool(bound)))
    return found


#: The source of the loops (read, not imported: it imports this module) and the loops it defines.
_LOOPS_SOURCE = Path(__file__).with_name("_pair_loops.py")
_KERNELS = ("listed_loss_sums", "listed_grad_hess_sums", "lambda_sums", "ordered_pair_sums")


def _build(functions: dict[str, Any]) -> types.SimpleNamespace:
    source = _LOOPS_SOURCE.read_text(encoding="utf-8")
    h = hashlib.sha256(source.encode())
    h.update(Path(__file__).read_bytes())  # Pair and the helpers the loops import
    h.update(nb.__version__.encode())
    try:
        for name in sorted(functions):
            h.update(name.encode())
            _fingerprint(functions[name], h, set())
        path = _source_file(source, h.hexdigest()[:32])
    except _Unstable:
        path = None
    # a module of its own in sys.modules: numba's cached code finds its globals by the module's name
    module = types.ModuleType(f"{__package__}._pair_loops_{h.hexdigest()[:16]}")
    module.__package__ = __package__
    module.__file__ = str(path) if path else None
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(compile(source, str(path) if path else f"<{module.__name__}>", "exec"), ns)
    ns.update({k: f for k, f in functions.items() if f is not None})
    try:
        compiled = _dispatchers(ns, functions, cache=path is not None)
    except (RuntimeError, OSError):
        if path is None or path.exists():
            raise
        # removed meanwhile (module docstring): numba finds no file to cache beside
        compiled = _dispatchers(ns, functions, cache=False)
    ns.update(compiled)  # the kernels: where boostplug warmup finds them (the module's globals)
    return types.SimpleNamespace(**{k: compiled[k] for k in _KERNELS})


def _dispatchers(ns: dict[str, Any], functions: dict[str, Any], cache: bool) -> dict[str, Any]:
    """The numba dispatchers of the loops' module ``ns``: its kernels and (when the class has none)
    the default ``terms_fn``."""
    out = {}
    if functions["terms_fn"] is None:
        out["terms_fn"] = nb.njit(cache=cache)(ns["terms_fn"])
    ns.update(out)  # the kernels call them by these names
    out.update({k: nb.njit(parallel=True, cache=cache)(ns[k]) for k in _KERNELS})
    return out


class _Unstable(Exception):
    """A function refers to something whose identity cannot be written into a fingerprint."""


def _fingerprint(value: Any, h: Any, seen: set[int]) -> None:
    """Feed ``h`` what the machine code numba compiles from ``value`` depends on: for a function
    (or a numba dispatcher and its options), its bytecode, constants, defaults, closure and the
    globals it reads, recursively; a number, string, array, module or class by value or name."""
    if id(value) in seen:
        h.update(b"<seen>")
        return
    if isinstance(value, Dispatcher):
        seen.add(id(value))
        h.update(repr(sorted(value.targetoptions.items())).encode())
        value = value.py_func
    if isinstance(value, types.FunctionType):
        if value.__module__ not in sys.modules:
            # numba's cached code imports the module of every function it calls, by name: a function
            # unpickled by value from a module this process lacks (a Dask or Spark worker's copy of
            # a driver's class) cannot be loaded from a cache, nor cached
            raise _Unstable(f"{value.__qualname__} of module {value.__module__}, not imported here")
        seen.add(id(value))
        h.update(f"function {value.__module__}.{value.__qualname__}".encode())
        _code(value.__code__, h, seen, value.__globals__)
        for part in (value.__defaults__ or ()), tuple(c.cell_contents for c in value.__closure__ or ()):
            _fingerprint(part, h, seen)
    elif isinstance(value, types.ModuleType):
        h.update(f"module {value.__name__}".encode())
    elif isinstance(value, type):
        h.update(f"class {value.__module__}.{value.__qualname__}".encode())
    elif isinstance(value, np.ndarray):
        h.update(f"array {value.dtype} {value.shape}".encode() + hashlib.sha256(value.tobytes()).digest())
    elif value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        h.update(f"{type(value).__name__} {value!r}".encode())
    elif isinstance(value, tuple):
        h.update(f"tuple {len(value)}".encode())
        for v in value:
            _fingerprint(v, h, seen)
    elif callable(value) and hasattr(value, "__module__") and hasattr(value, "__qualname__"):
        h.update(f"callable {value.__module__}.{value.__qualname__}".encode())  # a numpy ufunc, a builtin
    else:
        raise _Unstable(repr(value))


def _code(code: types.CodeType, h: Any, seen: set[int], globals_: dict[str, Any]) -> None:
    h.update(code.co_code + repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code(const, h, seen, globals_)
        else:
            h.update(repr(const).encode())
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in globals_:
            h.update(f"global {ins.argval}".encode())
            _fingerprint(globals_[ins.argval], h, seen)


def _source_file(source: str, digest: str) -> Path | None:
    """The file ``pair_loops_<digest>.py`` holding ``source``, written once, in the first folder
    numba can cache beside (``None`` when there is none): under ``NUMBA_CACHE_DIR`` when set, else
    this package's ``__pycache__``, else numba's user-wide cache folder."""
    from numba.core import config

    from .._numba_cache import _user_cache_dir, writable

    folders = ([Path(config.CACHE_DIR) / "boostplug_pair_loops"] if config.CACHE_DIR else
               [Path(__file__).parent / "__pycache__" / "pair_loops", _user_cache_dir() / "boostplug_pair_loops"])
    for folder in folders:
        if not writable(folder):
            continue
        path = folder / f"pair_loops_{digest}.py"
        try:
            _mark_used(path)  # before reading it: a removal running meanwhile then leaves it
            if not path.exists() or path.read_text(encoding="utf-8") != source:
                fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(source)
                os.replace(tmp, path)  # whole or not at all, for processes reading it meanwhile
                remove_unused(folder)
            return path
        except OSError:
            continue
    return None


#: A pair-loops file that no process used for this many days is removed, with numba's cache files
#: of it, when a new one is written beside it (module docstring).
UNUSED_DAYS = 30

_GROUP = re.compile(r"pair_loops_(?P<digest>[0-9a-f]{32})\.")


def _mark_used(path: Path) -> None:
    """Set ``path``'s access time to now, keeping its modification time (numba before 0.60 or so
    stamps the cache of a file with it); nothing when it does not exist or is not ours to touch."""
    with contextlib.suppress(OSError):
        os.utime(path, ns=(time.time_ns(), path.stat().st_mtime_ns))


def _last_use(path: Path) -> float:
    st = path.stat()
    return max(st.st_atime, st.st_mtime)


def _cache_folders(folder: Path) -> list[Path]:
    """Where numba writes its cache of the files of ``folder``: ``__pycache__`` beside them, or the
    folder numba names after ``folder`` under ``NUMBA_CACHE_DIR`` or its user-wide cache folder."""
    from numba.core import caching, config

    from .._numba_cache import _user_cache_dir

    out = [folder / "__pycache__"]
    with contextlib.suppress(AttributeError):  # numba's own naming, where this version of it has one
        sub = caching._CacheLocator.get_suitable_cache_subpath(str(folder / "pair_loops.py"))
        out += [Path(root) / sub for root in ([config.CACHE_DIR] if config.CACHE_DIR else []) + [_user_cache_dir()]]
    return out


def remove_unused(folder: Path, days: float = UNUSED_DAYS) -> list[Path]:
    """Remove, in ``folder``, the pair-loops files that no process used for ``days`` days (by their
    access and modification times), with numba's cache files of each, and numba's cache files of
    pair-loops files gone for as long; leftover temporary files too. A file used since it was
    found unused stays: each is checked again just before its removal, the source last. Returns
    what it removed; a file it cannot remove is left (another user's, say)."""
    cutoff = time.time() - days * 86400.0
    groups: dict[str, list[Path]] = {}
    leftovers = []
    for where in [folder, *_cache_folders(folder)]:
        with contextlib.suppress(OSError):
            for f in where.iterdir():
                m = _GROUP.match(f.name)
                if m:
                    groups.setdefault(m["digest"], []).append(f)
                elif where == folder and f.suffix == ".tmp":
                    leftovers.append(f)
    removed = []
    for f in [*(f for files in groups.values() if _unused(files, cutoff)
                for f in sorted(files, key=lambda f: f.suffix == ".py")), *leftovers]:
        with contextlib.suppress(OSError):
            if _last_use(f) < cutoff:
                f.unlink()
                removed.append(f)
    return removed


def _unused(files: list[Path], cutoff: float) -> bool:
    try:
        return max(_last_use(f) for f in files) < cutoff
    except OSError:  # one was removed meanwhile: left for the next time
        return False
