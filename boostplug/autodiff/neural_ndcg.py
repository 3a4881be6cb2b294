"""NeuralNDCG (Pobrotyn and Białobrzeski 2021; allRank's deterministic ``neuralNDCG``) as a
:class:`~.loss.JaxLoss`: NDCG of NeuralSort's relaxed sort, Sinkhorn-scaled. User guide:
docs/objectives/neural.md. Per query of ``n`` documents (weight ``W``), gains ``G_j = 2^y_j - 1``::

    P_ij = softmax_j(((n + 1 - 2i) s_j - sum_k |s_j - s_k|) / tau)      row i: position i = 1..n
    P <- P / column sums, then / row sums         up to ``sinkhorn`` times, until all are 1 +- 1e-6
    loss = W (1 - sum_{i <= k} (P G)_i / log2(1 + i) / IDCG@k)           (0 when IDCG = 0; k = 0: all)
"""

from __future__ import annotations

from typing import Any

from ..objectives._contract import Param
from .loss import JaxLoss

__all__ = ["NeuralNDCG"]


class NeuralNDCG(JaxLoss):
    """NeuralNDCG: 1 - NDCG of the relaxed, Sinkhorn-scaled sort (module docstring)."""

    name = "neural_ndcg"
    summary = "NeuralNDCG: NDCG of NeuralSort's relaxed sort, Sinkhorn-scaled (Pobrotyn and Białobrzeski 2021)"
    params = {"temperature": Param(1.0, "real", "NeuralSort's temperature tau", low=1e-3, high=1e3),
              "sinkhorn": Param(50, "int", "Sinkhorn's row and column scalings of the relaxed sort", low=0, high=1000),
              "k": Param(0, "int", "NDCG's cutoff: the first k positions (0: all)", low=0)}

    @staticmethod
    def query_loss(s: Any, y: Any, mask: Any, temperature: float, sinkhorn: int, k: int) -> Any:
        import jax
        import jax.numpy as jnp

        n, size = jnp.sum(mask), s.shape[0]
        both = mask[:, None] & mask[None, :]
        spread = jnp.sum(jnp.where(both, jnp.abs(s[:, None] - s[None, :]), 0.0), axis=1)
        scale = n + 1.0 - 2.0 * jnp.arange(1.0, size + 1.0)
        logits = jnp.where(both, (scale[:, None] * s[None, :] - spread[None, :]) / temperature,
                           jnp.where(~mask[:, None] & ~mask[None, :], 0.0, -jnp.inf))  # padding: its own block
        def scaled(_: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:  # allRank's sinkhorn_scaling: columns,
            p, done = carry  # then rows, to sum 1 (its clamp of the sums), until all sums are within 1e-6 of 1
            q = p / jnp.maximum(jnp.sum(p, axis=0), 1e-10)
            q = q / jnp.maximum(jnp.sum(q, axis=1, keepdims=True), 1e-10)
            near = jnp.maximum(*(jnp.abs(jnp.sum(q, axis=a) - 1.0).max() for a in (0, 1))) < 1e-6
            return jnp.where(done, p, q), done | near

        p = jax.lax.fori_loop(0, sinkhorn, scaled, (jax.nn.softmax(logits, axis=1), jnp.bool_(False)))[0]
        gains = jnp.where(mask, 2.0 ** y - 1.0, 0.0)
        positions = jnp.arange(size)
        discounts = jnp.where((positions < n) & ((k == 0) | (positions < k)), 1.0 / jnp.log2(2.0 + positions), 0.0)
        ideal = jnp.sum(jnp.sort(gains)[::-1] * discounts)
        dcg = jnp.sum(jnp.where(mask, p @ gains, 0.0) * discounts)
        loss = jnp.where(ideal > 0.0, 1.0 - dcg / jnp.where(ideal > 0.0, ideal, 1.0), 0.0)
        return jnp.where(jnp.isnan(loss), jnp.inf, loss)  # scores beyond float64's range: an overflow, not a NaN
