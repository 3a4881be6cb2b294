"""``Loss.loss`` and ``Loss.grad_hess`` refuse a non-finite result with a :class:`NonFiniteError`
that tells the objective's own NaN or inf (moderate inputs: a bug in it) from an overflow of
the data (scores, labels or weights too large: named), and names the first offending row or query."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.objectives import Hessian, Loss
from boostplug.objectives._contract import NonFiniteError
from boostplug.objectives._non_finite import MODERATE_SCORE


class ExpPairs(Loss):
    """``sum_k W_k sum_{y_i > y_j} exp(s_j - s_i) * 2^(y_i - y_j)``, written without care for
    overflow; ``broken_query``: that query's terms take the log of ``0.4 - score`` (a bug: NaN
    where a score exceeds 0.4); ``broken_everywhere``: every term is 0 / 0."""

    name = "exp_pairs"
    summary = "exponential pairwise loss (test objective)"
    hessians = {"exact": Hessian("exact", "the diagonal of the loss's Hessian")}
    broken_query: int | None = None
    broken_everywhere = False

    def _terms(self, scores: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
        out = []
        for q, (a, b) in enumerate(zip(self.group_ptr[:-1], self.group_ptr[1:])):
            y, s = self.labels[a:b], scores[a:b]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                t = (y[:, None] > y[None, :]) * np.exp(s[None, :] - s[:, None]) * 2.0 ** (y[:, None] - y[None, :])
                t = self.query_weights[q] * t
                if q == self.broken_query:
                    t = t + 0.0 * np.log(0.4 - s[:, None])
                if self.broken_everywhere:
                    t = t * (np.zeros_like(t) / 0.0)
            out.append((int(a), int(b), t))
        return out

    def _loss(self, scores: np.ndarray) -> float:
        with np.errstate(over="ignore", invalid="ignore"):
            return float(sum(t.sum() for _, _, t in self._terms(scores)))

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g, h = np.zeros(self.n_docs), np.zeros(self.n_docs)
        with np.errstate(over="ignore", invalid="ignore"):
            for a, b, t in self._terms(scores):
                g[a:b] = t.sum(axis=0) - t.sum(axis=1)
                h[a:b] = t.sum(axis=0) + t.sum(axis=1)
        return g, h


Y = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 3.0, 0.0, 1.0])
GP = np.array([0, 2, 5, 8])


def _broken(query: int | None = None, everywhere: bool = False) -> type[ExpPairs]:
    return type("Broken", (ExpPairs,), {"broken_query": query, "broken_everywhere": everywhere})


def test_finite_results_pass_through() -> None:
    obj = ExpPairs(Y, GP)
    s = np.linspace(-1.0, 1.0, 8)
    assert np.isfinite(obj.loss(s))
    g, h = obj.grad_hess(s)
    assert np.isfinite(g).all() and np.isfinite(h).all()


def test_the_objectives_own_nan_in_the_loss_is_called_a_bug_naming_the_first_query() -> None:
    obj = _broken(1)(Y, GP, weights=[1.0, 2.0, 0.5])
    with pytest.raises(NonFiniteError, match=r"exp_pairs: _loss returned nan in query 1 \(rows 2\.\.4\), from "
                                             r"moderate inputs \(the query's scores -0\.5 \.\. 0\.5, labels 0\.0 "
                                             r"\.\. 2\.0, weight 2\.0; .*\): a bug in exp_pairs's _loss, not an "
                                             r"overflow") as e:
        obj.loss(np.array([0.0, 0.0, -0.5, 0.5, 0.0, 0.1, 0.2, 0.3]))
    assert (e.value.cause, e.value.method, e.value.query, e.value.row) == ("objective", "loss", 1, 2)
    assert np.isnan(e.value.value) and isinstance(e.value, ValueError)


def test_the_objectives_own_nan_in_the_gradient_is_called_a_bug_naming_the_row() -> None:
    obj = _broken(2)(Y, GP)
    with pytest.raises(NonFiniteError, match=r"exp_pairs: _grad_hess returned a non-finite value at row 5 "
                                             r"\(query 2, 3 such rows\): grad nan, hess nan, from moderate inputs .*"
                                             r"a bug in exp_pairs's _grad_hess") as e:
        obj.grad_hess(np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0]))
    assert (e.value.cause, e.value.method, e.value.query, e.value.row) == ("objective", "grad_hess", 2, 5)


def test_a_loss_non_finite_at_any_scores_says_so() -> None:
    with pytest.raises(NonFiniteError, match=r"exp_pairs: _loss returned nan, and does at all-zero scores too "
                                             r"\(so no one query's scores cause it\), from moderate inputs \(all "
                                             r"scores 0, labels 0\.0 \.\. 3\.0, weights up to 1\.0; .*a bug in "
                                             r"exp_pairs's _loss") as e:
        _broken(everywhere=True)(Y, GP).loss(np.ones(8))
    assert (e.value.cause, e.value.query, e.value.row) == ("objective", None, None)


def test_an_overflow_of_the_scores_names_them() -> None:
    obj = ExpPairs(Y, GP)
    s = np.zeros(8)
    s[5:8] = [-400.0, 400.0, 1.0]  # exp(800) in query 2 only
    with pytest.raises(NonFiniteError, match=r"exp_pairs: the loss overflows float64 \(inf\) in query 2 "
                                             r"\(rows 5\.\.7\); the query's scores span -400\.0 \.\. 400\.0: "
                                             r"too large") as e:
        obj.loss(s)
    assert (e.value.cause, e.value.query, e.value.value) == ("data", 2, np.inf)
    with pytest.raises(NonFiniteError, match=r"exp_pairs: the gradient or Hessian overflows float64 at row 5 "
                                             r"\(query 2, \d such rows\): grad -?inf, hess inf; the query's scores "
                                             r"span -400\.0 \.\. 400\.0") as e:
        obj.grad_hess(s)
    assert e.value.cause == "data"


def test_an_overflow_of_the_labels_or_weights_names_them() -> None:
    big_label = Y.copy()
    big_label[3] = 1100.0  # 2^1100 overflows at any scores
    with pytest.raises(NonFiniteError, match=r"the loss overflows float64 \(inf\), and does at all-zero scores too "
                                             r"\(so no one query.s scores cause it\); the data set.s largest label "
                                             r"is 1100\.0") as e:
        ExpPairs(big_label, GP).loss(np.zeros(8))
    assert (e.value.cause, e.value.query, e.value.row) == ("data", None, None)
    with pytest.raises(NonFiniteError, match=r"at row 2 \(query 1, 3 such rows\).*the query's largest label is "
                                             r"1100\.0"):
        ExpPairs(big_label, GP).grad_hess(np.zeros(8))
    with pytest.raises(NonFiniteError, match=r"all-zero scores too .*; the data set's largest weight is 1e\+308"):
        ExpPairs(Y, GP, weights=[1.0, 1.0, 1e308]).loss(np.zeros(8))
    with pytest.raises(NonFiniteError, match=r"at row 5 \(query 2, .*; its weight is 1e\+308") as e:
        ExpPairs(Y, GP, weights=[1.0, 1.0, 1e308]).grad_hess(np.zeros(8))
    assert e.value.cause == "data"


def test_the_boundary_of_moderate_scores_decides_the_cause() -> None:
    """The same bug at scores just beyond the moderate bound is reported as the data's."""
    obj = _broken(0)(Y, GP)
    for edge, cause in ((MODERATE_SCORE, "objective"), (np.nextafter(MODERATE_SCORE, np.inf), "data")):
        with pytest.raises(NonFiniteError) as e:
            obj.loss(np.array([edge, 0.0, 0, 0, 0, 0, 0, 0]))
        assert e.value.cause == cause and e.value.query == 0


def test_queries_finite_alone_whose_sum_overflows_are_an_overflow_of_the_scores() -> None:
    """Each query's loss finite (about 1e308 at scores 1e308 apart), their sum inf: the data's."""
    obj = ExpPairs(np.array([1.0, 0.0, 1.0, 0.0]), np.array([0, 2, 4]))
    s = np.array([0.0, 709.0, 0.0, 709.0])   # 2 exp(709) = 1.6e308 per query
    with pytest.raises(NonFiniteError, match=r"exp_pairs: the loss overflows float64 \(inf\): each query's loss is "
                                             r"finite, their sum is not; the scores span 0\.0 \.\. 709\.0") as e:
        obj.loss(s)
    assert (e.value.cause, e.value.query) == ("data", None)
