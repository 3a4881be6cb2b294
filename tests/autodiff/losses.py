"""The losses of docs/objectives/autodiff.md written as JaxLosses (importable: the pickling tests
find their classes by reference). Each is at most 15 lines, as on the page."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from boostplug.autodiff import JaxLoss
from boostplug.objectives import Param, Search


class JaxApproxNDCG(JaxLoss):
    name = "jax_approx_ndcg"
    summary = "ApproxNDCG (Qin, Liu and Li 2010) in JAX"
    params = {"alpha": Param(1.0, "real", "sharpness of the smoothed positions", low=1e-3, high=1e3)}

    @staticmethod
    def query_loss(s, y, mask, alpha):
        gains = jnp.where(mask, 2.0 ** y - 1.0, 0.0)
        others = mask[None, :] & ~jnp.eye(s.shape[0], dtype=bool)
        pi = 1.0 + jnp.sum(jnp.where(others, jax.nn.sigmoid(alpha * (s[None, :] - s[:, None])), 0.0), axis=1)
        ideal = jnp.sum(jnp.sort(gains)[::-1] / jnp.log2(2.0 + jnp.arange(s.shape[0])))
        dcg = jnp.sum(gains / jnp.log2(1.0 + pi))
        return jnp.where(ideal > 0.0, 1.0 - dcg / jnp.where(ideal > 0.0, ideal, 1.0), 0.0)


class JaxListNet(JaxLoss):
    name = "jax_listnet"
    summary = "ListNet's top-one cross-entropy (Cao et al. 2007) in JAX"

    @staticmethod
    def query_loss(s, y, mask):
        target = jax.nn.softmax(jnp.where(mask, y, -jnp.inf))
        log_rho = jax.nn.log_softmax(jnp.where(mask, s, -jnp.inf))
        return -jnp.sum(jnp.where(mask, target * log_rho, 0.0))


class JaxListMLE(JaxLoss):
    name = "jax_listmle"
    summary = "ListMLE (Xia et al. 2008) in JAX, tied labels ordered by score"

    @staticmethod
    def query_loss(s, y, mask):
        order = jnp.lexsort((-s, jnp.where(mask, -y, jnp.inf)))  # by label, then score; padding last
        s, mask = s[order], mask[order]
        n = s.shape[0]
        later = (jnp.arange(n)[None, :] >= jnp.arange(n)[:, None]) & mask[None, :] | jnp.eye(n, dtype=bool)
        log_z = jax.nn.logsumexp(jnp.where(later, s[None, :], -jnp.inf), axis=1)
        return jnp.sum(jnp.where(mask, log_z - s, 0.0))


class JaxRankNet(JaxLoss):
    name = "jax_ranknet"
    summary = "RankNet's pairwise logistic loss (Burges et al. 2005) in JAX"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=1e-3, high=1e3,
                             search=Search(0.5, 4.0, log=True))}  # what --tune searches

    @staticmethod
    def query_loss(s, y, mask, sigma):
        pairs = mask[:, None] & mask[None, :] & (y[:, None] > y[None, :])
        return jnp.sum(jnp.where(pairs, jax.nn.softplus(-sigma * (s[:, None] - s[None, :])), 0.0))
