"""JAX, imported at first use, and the compiled functions of one loss: per Hessian mode and
non-numeric settings, one ``jax.jit`` of the query function looped over a batch of padded
queries (JAX compiles it once per batch shape and process: no compiled code is read from disk),
always run with float64 switched on for the call only (the user's own JAX settings stay as they are)."""

from __future__ import annotations

import math
import sys
import types
from typing import Any, Callable, ContextManager, Hashable

from .._extras import installed

__all__ = ["require_jax", "float64", "compiled", "code_key"]


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

_COMPILED: dict[tuple[Any, ...], tuple[Callable[..., Any], list[Any]]] = {}
#: Modules whose functions a loss's key names by identity (not read through): libraries do not change.
LIBRARIES = {"jax", "jaxlib", "numpy", "scipy", "rax", "optax", "flax", "boostplug", *sys.stdlib_module_names}


def compiled(query_loss: Callable[..., Any], statics: tuple[tuple[int, Any], ...]) -> Callable[[str], Callable[..., Any]]:
    """Hessian mode ``what`` -> ``f(S, Y, M, W, Z, *numbers)`` on padded queries (``(B, L)`` scores, labels, mask;
    ``(B,)`` weights; probes ``(B, P, L)``; numeric parameters): ``W loss`` (``"loss"``) or ``(W loss, W g, W h)``.
    ``statics``: the other parameters, ``(position, value)``, fixed in the code. Traced once per process and
    :func:`code_key`, not per class object: a class pickled by value (a script's) finds the trace of the first."""
    keep: list[Any] = []
    key = (code_key(query_loss, keep), statics)

    def of(what: str) -> Callable[..., Any]:
        if (key, what) not in _COMPILED:
            _COMPILED[key, what] = (_build(query_loss, what, dict(statics)), keep)
        return _COMPILED[key, what][0]

    return of


def code_key(value: Any, keep: list[Any], seen: frozenset[int] = frozenset()) -> Hashable:
    """What a trace bakes in, as a key (its parts kept alive in ``keep``): a function's code, defaults, closure and
    the globals it names (into the user's own functions), containers by item, hashables by value, arrays by
    identity. A rebound module global is a new key: a new trace, for the loss and its derivatives alike."""
    mine = not seen or str(getattr(value, "__module__", None)).split(".")[0] not in LIBRARIES
    if isinstance(value, types.FunctionType) and mine and id(value) not in seen:
        names, stack = set(), [value.__code__]
        while stack:  # the names of the function and of the functions defined in it
            code = stack.pop()
            names.update(code.co_names)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        cells = [c.cell_contents for c in value.__closure__ or () if c.cell_contents is not value]
        read = {n: value.__globals__[n] for n in sorted(names) if n in value.__globals__}
        return "function", value.__code__, code_key((value.__defaults__, value.__kwdefaults__, cells, read), keep,
                                                    seen | {id(value)})
    if isinstance(value, (tuple, list, dict)):
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        return type(value).__name__, tuple((repr(k), code_key(v, keep, seen)) for k, v in pairs)
    keep.append(value)
    return ("value", type(value), value) if isinstance(value, Hashable) else ("object", id(value))


def _build(query_loss: Callable[..., Any], what: str, statics: dict[int, Any]) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def one(s: Any, y: Any, m: Any, numbers: tuple[Any, ...]) -> Any:
        it = iter(numbers)
        args = [statics[i] if i in statics else next(it) for i in range(len(statics) + len(numbers))]
        out = query_loss(s, y, m, *args)
        if jnp.shape(out) != () or not jnp.issubdtype(jnp.result_type(out), jnp.floating):
            raise TypeError(f"must return one float (the query's loss), not {jnp.result_type(out)} {jnp.shape(out)}")
        return out

    grad = jax.value_and_grad(one)

    def derivatives(s: Any, y: Any, m: Any, z: Any, numbers: tuple[Any, ...]) -> tuple[Any, Any]:
        if what == "stochastic":  # P Hessian-vector products along Rademacher probes (Hutchinson 1990)
            (v, g), (_, hz) = jax.vmap(lambda t: jax.jvp(lambda x: grad(x, y, m, numbers), (s,), (t,)))(z)
            return v[0], g[0], jnp.abs(jnp.mean(z * hz, axis=0))
        if what in ("constant", "mean_abs_gradient"):  # one gradient pass, no Hessian pass
            v, g = grad(s, y, m, numbers)
            size = jnp.abs(jnp.where(m, g, 0.0))
            level = jnp.sum(size) / jnp.sum(m) if what == "mean_abs_gradient" else jnp.where(jnp.any(size != 0.0), 1.0, 0.0)
            return v, g, level * jnp.ones_like(g)
        # forward over reverse: the gradient, and its derivative along each basis vector (L passes), in
        # blocks of TANGENT_BLOCK tangents at a time (a pairwise loss's L x L intermediates per tangent)
        (v, g), hvp = jax.linearize(lambda x: grad(x, y, m, numbers), s)
        n, block = s.shape[0], math.gcd(s.shape[0], TANGENT_BLOCK)
        basis = jnp.eye(n, dtype=s.dtype).reshape(n // block, block, n)
        columns = jax.lax.map(jax.vmap(lambda t: hvp(t)[1]), basis).reshape(n, n)
        diagonal = jnp.diagonal(columns)
        return v, g, (jnp.abs(diagonal) if what == "exact_abs" else diagonal)

    def batch(S: Any, Y: Any, M: Any, W: Any, Z: Any, *numbers: Any) -> Any:
        # a loop over the queries (lax.map), not vmap: the same code computes every query, so a query's
        # derivatives do not depend on which others share its batch (vmap's vector lanes round differently)
        if what == "loss":
            return W * jax.lax.map(lambda q: one(*q, numbers), (S, Y, M))
        v, g, h = jax.lax.map(lambda q: derivatives(*q, numbers), (S, Y, M, Z))
        return W * v, g * W[:, None], h * W[:, None]

    return jax.jit(batch)
