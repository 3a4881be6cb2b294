"""The default Hessian of a JaxLoss, ``"stochastic"``: Hutchinson's estimate of the diagonal,
``|mean_p z_p * (H z_p)|`` over Rademacher probes drawn per row and round, the exact |diagonal| on the
shortest buckets. Exact where the Hessian is diagonal, unbiased where it is not (the mean over rounds
of the signed estimate), the gradient the exact one, the probes a row's own (a query's Hessian does
not depend on the other queries) and the same in every process."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

from boostplug.autodiff import JaxLoss, loss as jax_loss  # noqa: E402
from boostplug.testing import check_objective  # noqa: E402

from .losses import JaxApproxNDCG  # noqa: E402


class Separable(JaxLoss):
    """A loss whose Hessian is diagonal: sum_i c_i (s_i - y_i)^4, c_i = 1 + i."""

    name = "separable_test_loss"
    summary = "a separable quartic, for the tests"

    @staticmethod
    def query_loss(s, y, mask):
        import jax.numpy as jnp

        return jnp.sum(jnp.where(mask, (1.0 + jnp.arange(s.shape[0])) * (s - y) ** 4, 0.0))


def _data(sizes, seed=0):
    rng = np.random.default_rng(seed)
    group_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    labels = rng.integers(0, 4, size=group_ptr[-1]).astype(float)
    return labels, group_ptr, rng.normal(size=group_ptr[-1])


def test_the_default_is_stochastic_and_its_estimate_is_exact_for_a_diagonal_hessian() -> None:
    labels, group_ptr, scores = _data([3, 12, 20, 40])  # buckets 8 (exact), 16, 32, 64 (probes)
    loss = Separable(labels, group_ptr, weights=np.array([1.0, 0.5, 2.0, 1.5]))
    assert loss.hessian == "stochastic"
    g, h = loss.grad_hess(scores)
    ge, he = Separable(labels, group_ptr, weights=np.array([1.0, 0.5, 2.0, 1.5]), hessian="exact").grad_hess(scores)
    np.testing.assert_allclose(g, ge, rtol=1e-12)
    np.testing.assert_allclose(h, np.abs(he), rtol=1e-12)  # z_i^2 = 1: no off-diagonal term to estimate


def test_the_estimate_is_unbiased_and_the_shortest_buckets_get_the_exact_diagonal(monkeypatch) -> None:
    labels, group_ptr, scores = _data([5, 14, 30], seed=3)
    exact = JaxApproxNDCG(labels, group_ptr, hessian="exact")._grad_hess(scores)[1]
    monkeypatch.setattr(jax_loss, "PROBES", 64)
    loss = JaxApproxNDCG(labels, group_ptr)
    estimates = [loss.grad_hess(scores)[1] for _ in range(6)]  # 384 probes per row
    short = slice(0, 5)
    for h in estimates:  # a bucket of 8: the exact |diagonal|, every round
        np.testing.assert_allclose(h[short], np.abs(exact[short]), rtol=1e-12)
    mean = np.mean(estimates, axis=0)[5:]
    big = np.abs(exact[5:]) > 0.1 * np.abs(exact[5:]).max()
    assert np.all(np.abs(mean[big] - np.abs(exact[5:][big])) < 0.35 * np.abs(exact[5:][big]))
    assert not np.array_equal(estimates[0], estimates[1])  # new probes each round


def test_a_query_s_probes_are_its_rows_own_and_the_same_in_a_new_instance() -> None:
    labels, group_ptr, scores = _data([20, 25, 18], seed=5)
    weights = np.ones(3)
    h_all = JaxApproxNDCG(labels, group_ptr, weights=weights).grad_hess(scores)[1]
    weights[[0, 2]] = 0.0  # the other queries weighted 0: the middle one's rows keep their probes
    h_one = JaxApproxNDCG(labels, group_ptr, weights=weights).grad_hess(scores)[1]
    rows = slice(group_ptr[1], group_ptr[2])
    np.testing.assert_allclose(h_one[rows], h_all[rows], rtol=1e-12)
    np.testing.assert_array_equal(h_all, JaxApproxNDCG(labels, group_ptr, weights=np.ones(3)).grad_hess(scores)[1])


def test_the_stochastic_default_passes_the_objective_checks() -> None:
    check_objective(JaxApproxNDCG)
