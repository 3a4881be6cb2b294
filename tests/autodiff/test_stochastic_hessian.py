"""The default Hessian of a JaxLoss, ``"stochastic"``: Hutchinson's estimate of the diagonal,
``|mean_p z_p * (H z_p)|`` over Rademacher probes drawn per query (its labels, the row's position in it)
and round, the exact |diagonal| on the shortest buckets. Exact where the Hessian is diagonal, unbiased
where it is not (the mean over rounds of the signed estimate), the gradient the exact one, the probes a
query's own (its Hessian does not depend on the other queries, nor on the rows before it) and the same
in every process; a training resumed at ``first_round`` is one uninterrupted training."""

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


def test_a_query_s_hessian_does_not_depend_on_the_rows_before_it() -> None:
    labels, group_ptr, scores = _data([20, 25, 18, 30], seed=6)
    h_all = JaxApproxNDCG(labels, group_ptr).grad_hess(scores)[1]
    kept = slice(group_ptr[1], None)  # query 0 dropped: the others move to other rows
    h_rest = JaxApproxNDCG(labels[kept], group_ptr[1:] - group_ptr[1]).grad_hess(scores[kept])[1]
    np.testing.assert_allclose(h_rest, h_all[kept], rtol=1e-12)


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_resuming_at_first_round_is_one_uninterrupted_training(framework) -> None:
    from boostplug.data import load_example

    train, _ = load_example()
    if framework == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        from boostplug import lightgbm as bpl


        def fit(rounds, first_round=0, init=None):
            params = {"verbose": -1, "num_threads": 1, "metric": "None", "deterministic": True,
                      "objective": bpl.objective(JaxApproxNDCG, first_round=first_round)}
            return lgb.train(params, bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), rounds, init_model=init)
    else:
        xgb = pytest.importorskip("xgboost")
        from boostplug import xgboost as bpx

        data = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)

        def fit(rounds, first_round=0, init=None):
            return xgb.train({**bpx.params(), "nthread": 1}, data, rounds,
                             obj=bpx.objective(JaxApproxNDCG, first_round=first_round), xgb_model=init)
    predict = (lambda b: b.predict(train.X)) if framework == "lightgbm" else \
        (lambda b: b.predict(xgb.DMatrix(train.X), output_margin=True))
    once = predict(fit(20))
    np.testing.assert_allclose(predict(fit(10, 10, fit(10))), once, rtol=1e-9, atol=1e-12)
    assert np.abs(predict(fit(10, 0, fit(10))) - once).max() > 1e-6  # restarting the probes at round 0 differs


def test_the_stochastic_default_passes_the_objective_checks() -> None:
    check_objective(JaxApproxNDCG)
