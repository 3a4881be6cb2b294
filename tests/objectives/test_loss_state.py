"""The state the base Loss keeps for every objective: pair weights held at other scores
(``held``, ``weights_at=``, ``weights_from``) and the count of rounds (``rounds``,
``current_round``), with small objectives defined here that have no code of their own for it."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import objectives
from boostplug.objectives._rounds import RandomRounds
from boostplug.objectives import Hessian, Loss
from boostplug.testing import check_objective


class OrderWeightedPairs(Loss):
    """``sum_q W_q sum_{y_i > y_j} w_ij log(1 + exp(-(s_i - s_j)))`` with ``w_ij = 1 / (1 + r_i) +
    1 / (1 + r_j)``, ``r`` the positions in the query's order of ``weights_from(scores)``: pair
    weights that follow the order, held by the base class alone."""

    name = "order_weighted_pairs"
    summary = "pairwise logistic loss weighted by the pair's positions (test objective)"
    hessians = {"exact": Hessian("exact", "the held-weights diagonal", gradient="lambda")}

    def _terms(self, scores):
        at = self.weights_from(scores)
        loss, grad, hess = 0.0, np.zeros(self.n_docs), np.zeros(self.n_docs)
        for q, (a, b) in enumerate(zip(self.group_ptr[:-1], self.group_ptr[1:])):
            rank = np.empty(b - a)
            rank[np.argsort(-at[a:b], kind="stable")] = np.arange(b - a)
            for i in range(a, b):
                for j in range(a, b):
                    if self.labels[i] <= self.labels[j]:
                        continue
                    w = self.query_weights[q] * (1.0 / (1.0 + rank[i - a]) + 1.0 / (1.0 + rank[j - a]))
                    d = scores[i] - scores[j]
                    p = 1.0 / (1.0 + np.exp(d))
                    loss += w * np.logaddexp(0.0, -d)
                    grad[i] -= w * p
                    grad[j] += w * p
                    hess[i] += w * p * (1.0 - p)
                    hess[j] += w * p * (1.0 - p)
        return loss, grad, hess

    def _loss(self, scores):
        return self._terms(scores)[0]

    def _grad_hess(self, scores):
        return self._terms(scores)[1:]


def _data():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, 12).astype(float)
    group_ptr = np.array([0, 5, 12])
    return labels, group_ptr, rng.normal(size=12), rng.normal(size=12)


def test_a_new_objective_gets_held_weights_from_the_base() -> None:
    """``loss``/``grad_hess`` with ``weights_at=t`` are those of ``held(t)``, a copy that takes its
    weights from ``t`` (the original keeps following its own scores), and equal the plain calls
    at ``t = scores``; the contract's gradient and Hessian checks hold the weights through them."""
    labels, group_ptr, scores, other = _data()
    obj = OrderWeightedPairs(labels, group_ptr, weights=[1.0, 2.0])
    held = obj.held(other)
    assert held.weights_held and not obj.weights_held
    np.testing.assert_array_equal(held.weights_from(scores), other)
    np.testing.assert_array_equal(obj.weights_from(scores), scores)
    assert obj.loss(scores, weights_at=other) == held.loss(scores) != obj.loss(scores)
    for a, b in zip(obj.grad_hess(scores, weights_at=other), held.grad_hess(scores)):
        np.testing.assert_array_equal(a, b)
    assert obj.loss(scores, weights_at=scores) == obj.loss(scores)
    np.testing.assert_array_equal(obj.grad_hess(scores, weights_at=scores)[0], obj.grad_hess(scores)[0])
    with pytest.raises(ValueError, match="3 scores"):
        obj.loss(scores, weights_at=np.zeros(3))
    assert {r.check for r in check_objective(OrderWeightedPairs, checks=["gradient", "hessian"])} == \
        {"gradient", "hessian"}


def test_an_objective_whose_weights_do_not_follow_the_order_refuses_weights_at() -> None:
    """Without a ``"lambda"`` gradient there are no pair weights to hold: ``weights_at=`` is a
    ``TypeError`` naming the objective, not silently ignored."""
    labels, group_ptr, scores, other = _data()
    prep = objectives.get("listnet").prepare(labels, group_ptr)
    for call in (lambda: prep.loss(scores, weights_at=other), lambda: prep.grad_hess(scores, weights_at=other),
                 lambda: prep.held(other)):
        with pytest.raises(TypeError, match="listnet.*takes no weights_at"):
            call()


class NoisyTargets(RandomRounds, Loss):
    """``0.5 sum_q W_q sum_i (s_i - y_i - e_i)^2``, ``e`` drawn anew each round from
    ``default_rng([7, current_round])``: an objective that draws at random, its rounds counted by
    the mixin alone."""

    name = "noisy_targets"
    summary = "squared error on noisy grades (test objective)"
    hessians = {"exact": Hessian("exact", "W_q")}

    def noise(self, round: int) -> np.ndarray:
        return np.random.default_rng([7, round]).normal(size=self.n_docs)

    def _residual(self, scores):
        w = np.repeat(self.query_weights, np.diff(self.group_ptr))
        with np.errstate(over="ignore"):
            return w, w * (scores - self.labels - self.noise(self.current_round))

    def _loss(self, scores):
        w, r = self._residual(scores)
        return 0.5 * float(r @ (r / w))

    def _grad_hess(self, scores):
        w, r = self._residual(scores)
        return r, w.copy()


def test_a_new_objective_gets_the_round_counter_from_the_mixin() -> None:
    """Every ``grad_hess(scores)`` starts the next round and uses its draws; ``loss``, the private
    methods and a call that raises start none; ``round_offset`` moves the first round."""
    labels, group_ptr, scores, _ = _data()
    obj = NoisyTargets(labels, group_ptr, weights=[1.0, 2.0])
    w = np.repeat([1.0, 2.0], [5, 7])
    assert obj.rounds == 0 and obj.current_round == 0
    first_loss = obj.loss(scores)
    for k in range(3):
        g, _ = obj.grad_hess(scores)
        np.testing.assert_allclose(g, w * (scores - labels - obj.noise(k)), rtol=1e-15)
        assert obj.rounds == k + 1 and obj.current_round == k
        assert obj.loss(scores) == obj.loss(scores)                 # the current round's draws, again
        np.testing.assert_array_equal(obj._grad_hess(scores)[0], g)
    assert obj.rounds == 3
    assert first_loss == NoisyTargets(labels, group_ptr, weights=[1.0, 2.0]).loss(scores)
    huge = scores.copy()
    huge[6] = 1.5e308                                                # 2 * 1.5e308 overflows: refused
    with pytest.raises(objectives.NonFiniteError):
        obj.grad_hess(huge)
    assert obj.rounds == 3 and obj.current_round == 2

    class Resumed(NoisyTargets):
        def round_offset(self) -> int:
            return 5

    later = Resumed(labels, group_ptr, weights=[1.0, 2.0])
    assert later.current_round == 5
    np.testing.assert_allclose(later.grad_hess(scores)[0], w * (scores - labels - obj.noise(5)), rtol=1e-15)
    assert later.current_round == 5
    later.grad_hess(scores)
    assert later.current_round == 6


def test_an_objective_without_random_draws_counts_no_rounds() -> None:
    """The base class carries no round counter: only the objectives that draw at random have one."""
    labels, group_ptr, scores, _ = _data()
    prep = objectives.get("ranknet").prepare(labels, group_ptr)
    prep.grad_hess(scores)
    assert not prep.random_draws and not hasattr(prep, "rounds") and not hasattr(prep, "current_round")
    assert all(issubclass(objectives.get(n).loss_class, RandomRounds) == objectives.get(n).loss_class.random_draws
               for n in objectives.names())


def test_held_calls_start_no_round() -> None:
    """A held copy's ``grad_hess`` (``weights_at=``) uses the current round and starts none, in
    the copy and in the original (YetiRank, whose draws and weights both move)."""
    labels, group_ptr, scores, other = _data()
    prep = objectives.get("yetirank").prepare(labels, group_ptr)
    g0 = prep.grad_hess(scores)[0]
    held = prep.held(other)
    for _ in range(2):
        prep.grad_hess(scores, weights_at=other)
        held.grad_hess(scores)
    assert prep.rounds == 1 and held.rounds == 1 and prep.current_round == 0
    np.testing.assert_array_equal(prep.grad_hess(scores, weights_at=scores)[0], g0)
