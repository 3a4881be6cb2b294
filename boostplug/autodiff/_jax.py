"""JAX, imported at first use, and the compiled functions of one loss: per Hessian mode, non-numeric settings and
what ``query_loss`` reads (its trace key), one ``jax.jit`` of the query function looped over a batch of padded
queries (JAX compiles it once per batch shape and process: no compiled code is read from disk; the process keeps the
``TRACE_CACHE_SIZE`` most recently used), always run with float64 switched on for the call only (the user's own JAX
settings stay as they are)."""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
import os
import sys
import sysconfig
import types
from collections import OrderedDict
from types import NoneType
from typing import Any, Callable, ContextManager, Hashable

import numpy as np

from .._extras import installed

__all__ = ["require_jax", "float64", "compiled", "trace_key", "TRACE_CACHE_SIZE", "KEY_ITEMS"]


def require_jax() -> None:
    """``ModuleNotFoundError`` saying what to install, when jax is missing."""
    if not installed("jax"):
        raise ModuleNotFoundError('boostplug.autodiff needs JAX, which is not installed: pip install "boostplug[jax]"',
                                  name="jax")


def float64() -> ContextManager[Any]:
    """A context in which JAX computes in float64, restoring the user's setting on exit."""
    from jax.experimental import enable_x64

    return enable_x64(True)


#: Tangents (basis vectors) per pass of the exact diagonal, at most (its greatest common divisor with a
#: bucket's length): their intermediates are computed together, the blocks one after another.
TANGENT_BLOCK = 16

#: Compiled functions (a trace key, the settings, a Hessian mode) the process keeps, the least recently used dropped.
TRACE_CACHE_SIZE = 32
_COMPILED: OrderedDict[Hashable, Callable[..., Any]] = OrderedDict()
#: Items of lists, tuples, sets and dicts a key reads one by one, at most (arrays and lists of numbers of one type:
#: a hash of their bytes, whatever their size).
KEY_ITEMS = 10_000
#: Where the standard library and boostplug live (and site-packages, dist-packages folders): what is there is a library.
_LIBRARIES = (*{os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")},
              os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep)


def compiled(query_loss: Callable[..., Any], statics: tuple[tuple[int, Any], ...], keyed: bool,
             who: str) -> Callable[[str], Callable[..., Any]]:
    """Hessian mode ``what`` -> ``f(S, Y, M, W, Z, K, *numbers)`` on padded queries (``(B, L)`` scores, labels, mask;
    ``(B,)`` weights; probes ``(B, P, L)``; key data ``(B, 2)``; numeric parameters): ``W loss`` (``"loss"``) or
    ``(W loss, W g, W h)``. ``statics``: the other parameters, ``(position, value)``, fixed in the code; ``keyed``:
    ``query_loss`` takes ``key=``. Found by :func:`trace_key`, read here (once per binding) and at each trace."""
    key, mine = (trace_key(query_loss, who), statics, keyed), {}

    def current() -> None:
        if trace_key(query_loss, who) != key[0]:
            raise ValueError("a value it reads changed after the loss was bound: bind it again (a new objective, "
                             "lgb.train, xgb.train) to train with it")  # (raised while tracing: the caller names who)

    def of(what: str) -> Callable[..., Any]:
        if what not in mine:
            mine[what] = _COMPILED.pop((key, what), None) or _build(query_loss, what, dict(statics), keyed, current)
            _COMPILED[key, what] = mine[what]  # the most recently used last
            while len(_COMPILED) > TRACE_CACHE_SIZE:
                _COMPILED.popitem(last=False)
        return mine[what]

    return of


@functools.lru_cache(maxsize=1024)
def _library(module: str | None) -> bool:
    """Whether ``module`` is a library's, by where it lives: built in, or in a site-packages or dist-packages folder,
    the standard library's or boostplug's; whatever its name (a ``code.py`` of yours is yours)."""
    file = getattr(sys.modules.get(module or ""), "__file__", None)
    if file is None:  # built in; else made in code, or a REPL's __main__: the user's
        return module in sys.builtin_module_names
    path = os.path.realpath(file)
    return path.startswith(_LIBRARIES) or not {"site-packages", "dist-packages"}.isdisjoint(path.split(os.sep))


def _names(fn: Any) -> frozenset[str]:
    """The names a user's function (and those defined in it) reads: globals, attributes, strings (``globals()[X]``)."""
    names, stack = set(), [fn.__code__] if isinstance(fn, types.FunctionType) else []
    while stack:
        code = stack.pop()
        names.update(code.co_names, (c for c in code.co_consts if isinstance(c, str)))
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(names)


def trace_key(query_loss: Callable[..., Any], who: str) -> Hashable:
    """What a trace of ``query_loss`` bakes in, as a key: the code, defaults and closure of the user's functions it
    reaches (through ``functools.partial`` and methods too), the globals they name and the named attributes of the
    modules, classes and objects reached (a library's module, class or function: by identity, and the numbers, strings,
    arrays and containers named in a library's module by value; the installed package ``query_loss`` is defined in,
    boostplug's catalogue excepted, is read through as the user's); numbers by their
    bits (-0.0 is not 0.0), arrays and lists of numbers of one type by a hash of their bytes, other containers item
    by item (``KEY_ITEMS`` at most). ``ValueError`` naming ``who`` and what it cannot key."""
    counted, own = [0], (getattr(query_loss, "__module__", None) or "").partition(".")[0]  # installed with the loss: its

    def library(module: str) -> bool:  # package is read through, as the user's own (boostplug's catalogue excepted)
        return _library(module) and (module.partition(".")[0] != own or own == "boostplug")

    def refuse(path: str, why: str) -> None:
        raise ValueError(f"{who} reads {path}, {why}")

    def key(value: Any, names: frozenset[str], path: str, seen: frozenset[int]) -> Hashable:
        kind = type(value)
        if kind in (float, complex) or isinstance(value, np.generic):
            return kind, np.asarray(value).tobytes()
        if value is None or kind in (bool, int, str, bytes, range):
            return kind, value
        if id(value) in seen or len(seen) > 100:  # a cycle (a list holding itself), or nesting beyond any sane value
            return kind, "(cycle)" if id(value) in seen else refuse(path, "nested more than 100 deep")
        seen |= {id(value)}
        one_type = kind in (list, tuple) and {type(v) for v in value} in ({float}, {int}, {bool})  # numbers of one type
        if (hasattr(kind, "__array__") or one_type) and (a := np.asarray(value)).dtype != object:  # and arrays
            return kind, a.dtype.str, a.shape, hashlib.blake2b(np.ascontiguousarray(a).tobytes()).digest()
        if isinstance(value, (list, tuple, set, frozenset, dict)):
            counted[0] += len(value)
            if counted[0] > KEY_ITEMS:
                refuse(path, f"a {kind.__name__} of {len(value):,} items (a key reads {KEY_ITEMS:,} one by one): make "
                       "it a NumPy array, or of numbers of one type (keyed by their bytes)")
            parts = [(key(k, names, path, seen), key(v, names, f"{path}[{k!r}]", seen)) for k, v in
                     (value.items() if isinstance(value, dict) else enumerate(value))]
            return kind, frozenset(p[1] for p in parts) if isinstance(value, (set, frozenset)) else tuple(parts)
        if isinstance(value, (functools.partial, staticmethod, classmethod, property, types.MethodType)):
            inner = value.fget if isinstance(value, property) else getattr(value, "__func__", getattr(value, "func", 0))
            names |= _names(inner)  # and the object, the arguments of a method, a partial: what the function reads
            return kind, *(key(getattr(value, a, None), names, path, seen) for a in ("__self__", "args", "keywords")), \
                key(inner, names, path, seen)
        if isinstance(value, types.BuiltinMethodType) and not isinstance(value.__self__, (types.ModuleType, NoneType)):
            return kind, value.__name__, key(value.__self__, names, path, seen)  # a method of an object: its data
        named = isinstance(value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType))
        owner = value.__name__ if isinstance(value, types.ModuleType) else (value if named else kind).__module__
        if library(owner) and (named or not hasattr(value, "__dict__")):  # a library's module, class, function, value
            if kind.__hash__ is None:
                refuse(path, f"a {kind.__module__}.{kind.__qualname__}, which a trace key cannot read: pass it as a "
                       "parameter, or make it a number, an array or a container")
            data = [(n, a) for n in sorted(names) if isinstance(value, types.ModuleType) and isinstance(
                a := inspect.getattr_static(value, n, None), (int, float, complex, str, bytes, list, tuple, dict, set,
                                                              frozenset, np.ndarray, np.generic))]
            return kind, value, tuple((n, key(a, names, f"{value.__name__}.{n}", seen)) for n, a in data)  # by value
        if isinstance(value, types.FunctionType):  # the user's: code, defaults, closure, and the globals it names
            own, glob = _names(value), value.__globals__
            return (kind, value.__code__, key((value.__defaults__, value.__kwdefaults__), own, path, seen),
                    key([c.cell_contents for c in value.__closure__ or ()], own, f"{path}'s closure", seen),
                    tuple((n, key(glob[n], own, n, seen)) for n in sorted(own) if n in glob))
        attrs = [(n, a) for n in sorted(names) if (a := inspect.getattr_static(value, n, None)) is not None]
        return (kind, (owner, getattr(value, "__qualname__", None)) if named else key(kind, names, path, seen),
                tuple((n, key(a, names, f"{path}.{n}", seen)) for n, a in attrs))  # a module, class, object: by name

    return key(query_loss, _names(query_loss), "query_loss", frozenset())


def _build(query_loss: Callable[..., Any], what: str, statics: dict[int, Any], keyed: bool,
           current: Callable[[], None]) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def one(s: Any, y: Any, m: Any, k: Any, numbers: tuple[Any, ...]) -> Any:
        it = iter(numbers)
        args = [statics[i] if i in statics else next(it) for i in range(len(statics) + len(numbers))]
        key = {"key": jax.random.wrap_key_data(k, impl="threefry2x32")} if keyed else {}
        out = query_loss(s, y, m, *args, **key)
        if jnp.shape(out) != () or not jnp.issubdtype(jnp.result_type(out), jnp.floating):
            raise TypeError(f"must return one float (the query's loss), not {jnp.result_type(out)} {jnp.shape(out)}")
        return out

    grad = jax.value_and_grad(one)

    def derivatives(s: Any, y: Any, m: Any, z: Any, k: Any, numbers: tuple[Any, ...]) -> tuple[Any, Any]:
        if what == "stochastic":  # P Hessian-vector products along Rademacher probes (Hutchinson 1990)
            (v, g), (_, hz) = jax.vmap(lambda t: jax.jvp(lambda x: grad(x, y, m, k, numbers), (s,), (t,)))(z)
            return v[0], g[0], jnp.abs(jnp.mean(z * hz, axis=0))
        if what in ("constant", "mean_abs_gradient"):  # one gradient pass, no Hessian pass
            v, g = grad(s, y, m, k, numbers)
            size = jnp.abs(jnp.where(m, g, 0.0))
            level = jnp.sum(size) / jnp.sum(m) if what == "mean_abs_gradient" else jnp.where(jnp.any(size != 0.0), 1.0, 0.0)
            return v, g, level * jnp.ones_like(g)
        # forward over reverse: the gradient, and its derivative along each basis vector (L passes), in
        # blocks of TANGENT_BLOCK tangents at a time (a pairwise loss's L x L intermediates per tangent)
        (v, g), hvp = jax.linearize(lambda x: grad(x, y, m, k, numbers), s)
        n, block = s.shape[0], math.gcd(s.shape[0], TANGENT_BLOCK)
        basis = jnp.eye(n, dtype=s.dtype).reshape(n // block, block, n)
        columns = jax.lax.map(jax.vmap(lambda t: hvp(t)[1]), basis).reshape(n, n)
        diagonal = jnp.diagonal(columns)
        return v, g, (jnp.abs(diagonal) if what == "exact_abs" else diagonal)

    def batch(S: Any, Y: Any, M: Any, W: Any, Z: Any, K: Any, *numbers: Any) -> Any:
        current()  # (Python here runs only while JAX traces: the values read now are those of the key)
        # a loop over the queries (lax.map), not vmap: the same code computes every query, so a query's
        # derivatives do not depend on which others share its batch (vmap's vector lanes round differently)
        if what == "loss":
            return W * jax.lax.map(lambda q: one(*q, numbers), (S, Y, M, K))
        v, g, h = jax.lax.map(lambda q: derivatives(*q, numbers), (S, Y, M, Z, K))
        return W * v, g * W[:, None], h * W[:, None]

    return jax.jit(batch)
