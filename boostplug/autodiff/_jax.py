"""JAX, imported at first use, and the compiled functions of one loss: per Hessian mode and
non-numeric settings, one ``jax.jit`` of the query function looped over a batch of padded
queries (JAX compiles it once per batch shape), always run with float64 switched on for the
call only (the user's own JAX settings stay as they are)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, ContextManager

from .._extras import installed

__all__ = ["require_jax", "float64", "compiled", "persistent_cache"]


def require_jax() -> None:
    """``ModuleNotFoundError`` saying what to install, when jax is missing."""
    if not installed("jax"):
        raise ModuleNotFoundError('boostplug.autodiff needs JAX, which is not installed: pip install "boostplug[jax]"',
                                  name="jax")


def float64() -> ContextManager[Any]:
    """A context in which JAX computes in float64 (``jax.enable_x64`` in newer JAX,
    ``jax.experimental.enable_x64`` before), restoring the user's setting on exit."""
    import jax

    scoped = getattr(jax, "enable_x64", None)
    if not callable(scoped):
        from jax.experimental import enable_x64 as scoped
    return scoped(True)


#: Tangents (basis vectors) per pass of the exact diagonal, at most (its greatest common divisor with a
#: bucket's length): their intermediates are computed together, the blocks one after another.
TANGENT_BLOCK = 16

_COMPILED: dict[tuple[Any, ...], Callable[..., Any]] = {}


def compiled(query_loss: Callable[..., Any], what: str, statics: tuple[tuple[int, Any], ...]) -> Callable[..., Any]:
    """``f(S, Y, M, W, *numbers)`` on a batch of padded queries (``(B, L)`` scores, labels, mask;
    ``(B,)`` query weights; the numeric parameters): ``W * loss`` per query (``what="loss"``), or
    ``(W loss, W g, W h)`` with ``h`` the exact Hessian diagonal (``"exact"``), its absolute value
    (``"positive"``), 1 on the documents of a query whose gradient is not all zero (``"constant"``),
    the query's mean absolute gradient on each of its documents (``"scaled"``), or the absolute value
    of Hutchinson's estimate of the diagonal, ``mean_p z_p * (H z_p)``, over the probes ``Z``
    (``(B, P, L)``, given after ``W``: ``"stochastic"``). ``statics``: the non-numeric parameters, as
    ``(position, value)``, fixed in the compiled function."""
    key = (query_loss, what, statics)
    if key not in _COMPILED:
        persistent_cache()
        _COMPILED[key] = _build(query_loss, what, dict(statics))
    return _COMPILED[key]


_CACHE: list[Path | None] = []


def persistent_cache() -> Path | None:
    """JAX's persistent compilation cache in ``boostplug/jax`` of the user's cache folder (every
    compile kept, however short), decided once per process: unless the user set a folder
    (``JAX_COMPILATION_CACHE_DIR``, ``jax_compilation_cache_dir``), or the folder fails the numba
    cache's checks (:func:`boostplug._cache_folders.usable`, which warns once: another user could plant
    compiled code there). JAX reads the setting at a process's first compile."""
    if not _CACHE:
        import jax

        from .._cache_folders import usable, user_cache_base

        folder = user_cache_base() / "boostplug" / "jax"
        if jax.config.jax_compilation_cache_dir or not usable(folder):
            _CACHE.append(None)
        else:
            jax.config.update("jax_compilation_cache_dir", str(folder))
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
            _CACHE.append(folder)
    return _CACHE[0]


def _build(query_loss: Callable[..., Any], what: str, statics: dict[int, Any]) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def one(s: Any, y: Any, m: Any, numbers: tuple[Any, ...]) -> Any:
        it = iter(numbers)
        n_params = len(statics) + len(numbers)
        args = [statics[i] if i in statics else next(it) for i in range(n_params)]
        out = query_loss(s, y, m, *args)
        if jnp.shape(out) != () or not jnp.issubdtype(jnp.result_type(out), jnp.floating):
            raise TypeError(f"must return one float (the query's loss), not {jnp.result_type(out)} {jnp.shape(out)}")
        return out

    grad = jax.value_and_grad(one)

    def derivatives(s: Any, y: Any, m: Any, z: Any, numbers: tuple[Any, ...]) -> tuple[Any, Any]:
        if what == "stochastic":  # P Hessian-vector products along Rademacher probes (Hutchinson 1990)
            (v, g), (_, hz) = jax.vmap(lambda t: jax.jvp(lambda x: grad(x, y, m, numbers), (s,), (t,)))(z)
            return v[0], g[0], jnp.abs(jnp.mean(z * hz, axis=0))
        if what in ("constant", "scaled"):  # one gradient pass, no Hessian pass
            v, g = grad(s, y, m, numbers)
            size = jnp.abs(jnp.where(m, g, 0.0))
            level = jnp.sum(size) / jnp.sum(m) if what == "scaled" else jnp.where(jnp.any(size != 0.0), 1.0, 0.0)
            return v, g, level * jnp.ones_like(g)
        # forward over reverse: the gradient, and its derivative along each basis vector (L passes), in
        # blocks of TANGENT_BLOCK tangents at a time (a pairwise loss's L x L intermediates per tangent)
        (v, g), hvp = jax.linearize(lambda x: grad(x, y, m, numbers), s)
        n = s.shape[0]
        block = math.gcd(n, TANGENT_BLOCK)
        basis = jnp.eye(n, dtype=s.dtype).reshape(n // block, block, n)
        columns = jax.lax.map(jax.vmap(lambda t: hvp(t)[1]), basis).reshape(n, n)
        diagonal = jnp.diagonal(columns)
        return v, g, (jnp.abs(diagonal) if what == "positive" else diagonal)

    def batch(S: Any, Y: Any, M: Any, W: Any, Z: Any, *numbers: Any) -> Any:
        # a loop over the queries (lax.map), not vmap: the same code computes every query, so a query's
        # derivatives do not depend on which others share its batch (vmap's vector lanes round differently)
        if what == "loss":
            return W * jax.lax.map(lambda q: one(*q, numbers), (S, Y, M))
        v, g, h = jax.lax.map(lambda q: derivatives(*q, numbers), (S, Y, M, Z))
        return W * v, g * W[:, None], h * W[:, None]

    return jax.jit(batch)
