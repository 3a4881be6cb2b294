"""Two listwise losses of PT-Ranking (wildltr/ptranking, ``ltr_adhoc/listwise``) as it computes them, per query:
STListNet (Bruch et al., WSDM 2020), ``-sum softmax(y) log softmax((s + g) / T)``, ``g`` Gumbel noise drawn from the
query's key; RankCosine (Qin et al., IP&M 2008), ``(1 - cos(s, y)) / 0.5``, not shift-invariant and linear at zero
scores (no curvature: its default Hessian is the mean |gradient|). User guide: docs/objectives/neural.md."""

from __future__ import annotations

from typing import Any

from ..objectives._contract import Param
from .loss import JaxLoss

__all__ = ["STListNet", "RankCosine"]


class STListNet(JaxLoss):
    name = "st_listnet"
    summary = "STListNet: ListNet's cross-entropy of the scores plus Gumbel noise drawn each round (Bruch et al. 2020)"
    params = {"temperature": Param(1.0, "real", "the noisy scores' temperature T", low=1e-3, high=1e3)}

    @staticmethod
    def query_loss(s: Any, y: Any, mask: Any, temperature: float, key: Any) -> Any:
        import jax
        import jax.numpy as jnp

        gumbel = -jnp.log(-jnp.log(jax.random.uniform(key, s.shape, s.dtype) + 1e-20) + 1e-20)
        s = s - jax.lax.stop_gradient(jnp.max(jnp.where(mask, s, -jnp.inf)))  # as softmax is: the noise kept exact
        log_p = jax.nn.log_softmax(jnp.where(mask, (s + gumbel) / temperature, -jnp.inf))
        return -jnp.sum(jnp.where(mask, jax.nn.softmax(jnp.where(mask, y, -jnp.inf)) * log_p, 0.0))


class RankCosine(JaxLoss):
    name = "rank_cosine"
    summary = "RankCosine: twice 1 - the cosine of the scores and the labels (Qin et al. 2008)"
    default_hessian = "mean_abs_gradient"
    shift_invariant = False

    @staticmethod
    def query_loss(s: Any, y: Any, mask: Any) -> Any:
        import jax.numpy as jnp

        def unit(x: Any) -> Any:  # x / max(|x|, 1e-8) from x / max|x_i|: no overflow, no NaN at 0
            scale = jnp.where(jnp.any(x != 0.0), jnp.max(jnp.abs(x)), 1.0)
            sq = jnp.sum((x / scale) ** 2)
            norm = jnp.where(sq > 0.0, jnp.sqrt(jnp.where(sq > 0.0, sq, 1.0)), 0.0)
            return x / scale / jnp.maximum(norm, 1e-8 / scale)

        return (1.0 - jnp.sum(unit(jnp.where(mask, s, 0.0)) * unit(jnp.where(mask, y, 0.0)))) / 0.5
