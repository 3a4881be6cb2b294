"""A JaxLoss that draws at random: ``query_loss`` declares ``key`` and gets a JAX key per query and round (a hash of
the round and the query's identity: its labels by position, and how many queries with the same labels came before
it), so a training is the same in every run, a training resumed at
``first_round`` is one uninterrupted training, and a query's draws are its own. STListNet (Gumbel noise on the
scores) is written with it, and RankCosine (not shift-invariant): each checked against PT-Ranking's own formula
(wildltr/ptranking, ltr_adhoc/listwise/st_listnet.py and rank_cosine.py), transcribed in NumPy here."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from boostplug import objectives  # noqa: E402
from boostplug.autodiff import JaxLoss  # noqa: E402
from boostplug.autodiff._jax import float64  # noqa: E402
from boostplug.autodiff.pt_ranking import RankCosine, STListNet  # noqa: E402
from boostplug.testing import check_objective  # noqa: E402

EPS = 1e-20  # PT-Ranking's st_listnet.EPS


def _data(sizes, seed=0):
    rng = np.random.default_rng(seed)
    group_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return rng.integers(0, 4, size=group_ptr[-1]).astype(float), group_ptr, rng.normal(size=group_ptr[-1])


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def test_st_listnet_is_pt_rankings_formula_with_the_same_noise() -> None:
    """PT-Ranking's STListNet.custom_loss_function per query, with its uniform draws ``unif`` being the ones the query's
    key gives: ``gumbel = -log(-log(unif + EPS) + EPS)``, ``preds = (s + gumbel) / temperature``, loss ``-sum(softmax(y)
    * log_softmax(preds))``; its gradient (torch's backward of that) ``(softmax(preds) - softmax(y)) / temperature``.
    Checked: the loss and the gradient of every query, at round 0 and round 3, temperature 0.5."""
    labels, group_ptr, scores = _data([5, 9, 13, 30], seed=1)
    loss = STListNet(labels, group_ptr, temperature=0.5)
    for round_ in range(4):
        g, _ = loss.grad_hess(scores)  # starts round round_
        if round_ not in (0, 3):
            continue
        keys, value, expected = loss._keys(), loss.loss(scores), 0.0
        for q, (a, b) in enumerate(zip(group_ptr[:-1], group_ptr[1:])):
            with float64():
                unif = np.asarray(jax.random.uniform(jax.random.wrap_key_data(keys[q], impl="threefry2x32"), (b - a,),
                                                     np.float64))
            preds = (scores[a:b] - np.log(-np.log(unif + EPS) + EPS)) / 0.5
            log_p = preds - preds.max() - np.log(np.exp(preds - preds.max()).sum())
            expected += -np.sum(_softmax(labels[a:b]) * log_p)
            np.testing.assert_allclose(g[a:b], (_softmax(preds) - _softmax(labels[a:b])) / 0.5, rtol=1e-10, atol=1e-14)
        assert value == pytest.approx(expected, rel=1e-12)


def test_queries_with_the_same_labels_and_scores_draw_their_own_noise_and_probes() -> None:
    """Keys (and the stochastic Hessian's probes) hashed from the round and the labels alone were shared by every query
    with the same labels (on MQ2008 Fold1, 173 of 471 queries): the second and later of them mix how many came before."""
    from boostplug.autodiff.neural_ndcg import NeuralNDCG

    labels, group_ptr = np.array([2.0, 1, 0, 0, 1, 0, 2, 1, 0, 0] * 3 + [1.0, 0]), np.array([0, 10, 20, 30, 32])
    scores = np.tile(np.linspace(1.0, -1.0, 10), 3).tolist() + [0.0, 1.0]
    loss = STListNet(labels, group_ptr)
    assert len({tuple(k) for k in loss._keys()}) == 4
    g = loss.grad_hess(np.array(scores))[0]
    assert not np.allclose(g[:10], g[10:20]) and not np.allclose(g[10:20], g[20:30])
    probes = NeuralNDCG(labels, group_ptr, hessian="stochastic")._probes()[:, 0]
    assert not np.array_equal(probes[:10], probes[10:20]) and not np.array_equal(probes[10:20], probes[20:30])
    resumed = STListNet(labels, group_ptr, first_round=1).grad_hess(np.array(scores))[0]
    np.testing.assert_array_equal(resumed, loss.grad_hess(np.array(scores))[0])


def test_the_key_is_the_same_in_every_binding_new_each_round_and_a_querys_own() -> None:
    labels, group_ptr, scores = _data([6, 20, 11, 17], seed=2)
    first, again = STListNet(labels, group_ptr), STListNet(labels, group_ptr)
    rounds = [first.grad_hess(scores)[0] for _ in range(3)]
    np.testing.assert_array_equal(again.grad_hess(scores)[0], rounds[0])
    assert not np.allclose(rounds[0], rounds[1]) and not np.allclose(rounds[1], rounds[2])
    np.testing.assert_array_equal(STListNet(labels, group_ptr, first_round=2).grad_hess(scores)[0], rounds[2])
    a, b = group_ptr[2], group_ptr[3]  # query 2 alone, and after other queries than these: the same draws
    alone = STListNet(labels[a:b], np.array([0, b - a])).grad_hess(scores[a:b])[0]
    np.testing.assert_allclose(alone, rounds[0][a:b], rtol=1e-14, atol=1e-15)
    moved = np.concatenate([labels[a:b], labels[:a]]), np.array([0, b - a, b - a + group_ptr[1], b]), \
        np.concatenate([scores[a:b], scores[:a]])
    np.testing.assert_allclose(STListNet(*moved[:2]).grad_hess(moved[2])[0][:b - a], rounds[0][a:b], rtol=1e-14,
                               atol=1e-15)


def test_a_training_resumed_at_first_round_is_one_training() -> None:
    lgb = pytest.importorskip("lightgbm")
    from boostplug import lightgbm as bpl
    from boostplug.data import load_example

    train, _ = load_example()

    def fit(rounds, first_round=0, init=None):
        params = {"verbose": -1, "num_threads": 1, "metric": "None", "deterministic": True,
                  "objective": bpl.objective("st_listnet", first_round=first_round, hessian="constant")}
        return lgb.train(params, bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), rounds, init_model=init)

    once = fit(8).predict(train.X)
    np.testing.assert_array_equal(fit(8).predict(train.X), once)  # the same in every run
    np.testing.assert_allclose(fit(4, 4, fit(4)).predict(train.X), once, rtol=1e-9, atol=1e-12)
    assert np.abs(fit(4, 0, fit(4)).predict(train.X) - once).max() > 1e-6  # the noise of rounds 0-3 again differs


def test_the_key_is_declared_after_the_parameters() -> None:
    with pytest.raises(TypeError, match=r"Misplaced\.query_loss must take \(scores, labels, mask\) and the declared "
                                        r"parameters \['t'\] in order \(4 arguments\), then key if it draws"):
        class Misplaced(JaxLoss):
            name = "misplaced_key"
            summary = "key before the parameters"
            params = {"t": objectives.Param(1.0, "real", "t")}

            @staticmethod
            def query_loss(s, y, mask, key, t):
                return jax.numpy.sum(s)


def test_rank_cosine_is_pt_rankings_formula() -> None:
    """PT-Ranking's RankCosine.custom_loss_function per query: ``(1 - cos(s, y)) / 0.5`` with torch's
    ``CosineSimilarity`` (``x1 / max(||x1||, 1e-8) . x2 / max(||x2||, 1e-8)``); its gradient (torch's backward)
    ``-2 (y_hat - cos s_hat) / ||s||``. Checked: every query's loss and gradient, a query of zero labels included,
    and at all-zero scores, where torch's gradient is ``-2 y_hat / 1e-8``."""
    labels, group_ptr, scores = _data([4, 7, 12, 3], seed=4)
    labels[11:23] = 0.0  # query 2: every label 0
    loss = RankCosine(labels, group_ptr)
    assert loss.hessian == "mean_abs_gradient"
    for s in (scores, 100.0 * scores, np.zeros_like(scores)):
        g, expected = loss.grad_hess(s)[0], 0.0
        for a, b in zip(group_ptr[:-1], group_ptr[1:]):
            x, y = s[a:b], labels[a:b]
            nx, ny = max(np.linalg.norm(x), 1e-8), max(np.linalg.norm(y), 1e-8)
            cos = (x / nx) @ (y / ny)
            expected += (1.0 - cos) / 0.5
            want = -2.0 * (y / ny - (cos * x / nx if nx > 1e-8 else 0.0)) / nx
            np.testing.assert_allclose(g[a:b], want, rtol=1e-10, atol=1e-14 * np.abs(want).max(initial=1.0))
        assert loss.loss(s) == pytest.approx(expected, rel=1e-12)
    assert loss.loss(scores + 5.0) != pytest.approx(loss.loss(scores), rel=1e-6)  # not shift-invariant


@pytest.mark.slow  # every check, mode and setting: JAX compiles each
@pytest.mark.parametrize("name", ["st_listnet", "rank_cosine"])
def test_they_pass_the_contract_checks(name) -> None:
    assert check_objective(name)


def test_sum_over_queries_takes_a_query_alone_to_a_few_ulps() -> None:
    """A query alone (the others weighted 0) runs in a batch of one, which XLA compiles apart from a batch of several:
    approx_ap's exact Hessian of these 12 queries differed there by up to 18 ulps of the query's largest value, and
    the check, bitwise, blamed the loss ("query 1's Hessians differ")."""
    rng = np.random.default_rng(0)
    for _ in range(2):
        sizes = rng.integers(2, 30, size=12)
        group_ptr = np.concatenate([[0], np.cumsum(sizes)])
        labels, _ = rng.integers(0, 4, size=group_ptr[-1]).astype(float), rng.standard_normal(group_ptr[-1])
    assert check_objective("approx_ap", params={"hessian": "exact"}, checks=["sum_over_queries"], data=(labels, group_ptr))
