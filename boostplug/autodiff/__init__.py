"""Ranking losses written in JAX, trained on LightGBM and XGBoost trees (the ``jax`` extra:
``pip install "boostplug[jax]"``). User guide: docs/objectives/autodiff.md.

A :class:`JaxLoss` subclass writes one static function in ``jax.numpy``, the loss of one query
padded to a bucket's length, ``query_loss(scores, labels, mask, *params)``; the base takes its
gradient with ``jax.grad`` in float64 and its Hessian diagonal with forward-over-reverse passes (by
default the absolute value of Hutchinson's estimate; exact on request). :func:`from_rax` makes one of a rax loss.

JAX itself is imported at the first computation, not here: ``import boostplug`` stays as fast
with the extra installed (the registry lists ``approx_ap`` then).
"""

from __future__ import annotations

from ._jax import require_jax

require_jax()

from ._rax import from_rax  # noqa: E402 - after the check, which names the extra to install
from .loss import JaxLoss  # noqa: E402

__all__ = ["JaxLoss", "from_rax"]
