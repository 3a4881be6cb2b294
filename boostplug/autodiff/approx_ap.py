"""ApproxAP (Qin, Liu and Li, "A general approximation framework for direct optimization of
information retrieval measures", Information Retrieval 13(4), 2010): average precision with each
document's position, and whether one document is above another, replaced by sigmoids of the
scores, maximised directly. The AP counterpart of :mod:`boostplug.objectives.approx_ndcg`,
written as a :class:`~.loss.JaxLoss`: its derivatives are JAX's.

Per query (weight ``W``), with ``r_x = 1`` for a relevant document (label > 0), ``R = sum_x r_x``
and ``alpha`` the smoothing's sharpness::

    sigma_xy = sigmoid(alpha (s_y - s_x))                         y above x, smoothed
    pi_x = 1 + sum_{y != x} sigma_xy                              the approximate position of x
    loss = W (1 - (1 / R) sum_x r_x (1 + sum_{y != x} r_y sigma_xy) / pi_x)     1 - ApproxAP

A query without a relevant document, or with only relevant ones (AP 1 in any order), has loss 0.
"""

from __future__ import annotations

from typing import Any

from ..objectives._contract import Param
from .loss import JaxLoss

__all__ = ["ApproxAP"]


class ApproxAP(JaxLoss):
    """ApproxAP: 1 - AP with sigmoid-smoothed positions (module docstring); ``alpha`` in [1e-3, 1e3]."""

    name = "approx_ap"
    summary = "ApproxAP: average precision with sigmoid-smoothed positions, maximised directly (Qin, Liu and Li 2010)"
    # not searched by --tune, as approx_ndcg's alpha: with Newton leaves it trades against the L2 term
    params = {"alpha": Param(1.0, "real", "sharpness of the smoothed positions, 1 / temperature", low=1e-3, high=1e3)}

    @staticmethod
    def query_loss(s: Any, y: Any, mask: Any, alpha: float) -> Any:
        import jax
        import jax.numpy as jnp

        relevant = jnp.where(mask & (y > 0.0), 1.0, 0.0)
        others = mask[None, :] & ~jnp.eye(s.shape[0], dtype=bool)
        above = jnp.where(others, jax.nn.sigmoid(alpha * (s[None, :] - s[:, None])), 0.0)  # [x, y]: y above x
        positions = 1.0 + jnp.sum(above, axis=1)
        hits = relevant + above @ relevant  # relevant documents at or above x, smoothed
        n_relevant = jnp.sum(relevant)
        ap = jnp.sum(relevant * hits / positions) / jnp.maximum(n_relevant, 1.0)
        ranked = (n_relevant > 0.0) & (n_relevant < jnp.sum(mask))  # else AP is 1 in any order (or undefined)
        return jnp.where(ranked, 1.0 - ap, 0.0)
