"""objectives.metric_weights: each |Delta metric| against brute force (swap the two documents'
scores, recompute the metric with boostplug.metrics, take the difference), pair by pair and summed
through the pair base's kernel; and LambdaLoss's weight against the paper's formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import metrics
from boostplug.objectives import PairwiseLoss, Param
from boostplug.objectives import metric_weights as W
from boostplug.objectives.lambdaloss import position_gap_discount
from boostplug.objectives.lambdamart import LambdaERR, LambdaMAP, LambdaMRR
from boostplug.objectives.pairwise import LAMBDA_EXACT, Pair

NO_CUT = W.NO_CUTOFF


def _query(seed: int, n: int, levels: int = 5):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, levels, n).astype(float)
    scores = rng.permutation(n).astype(float) + rng.uniform(0, 0.5, n)  # distinct: no ties to settle
    return labels, scores


def _view(labels, scores, x, y, gains, inv):
    """The pair base's view of rows x, y (x the higher label) in the order of ``scores``."""
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(len(scores), int)
    rank[order] = np.arange(len(scores))
    disc = lambda r: 1.0 / math.log2(2.0 + r)  # noqa: E731
    return Pair(float(scores[x] - scores[y]), int(rank[x]), int(rank[y]), float(labels[x]), float(labels[y]),
                float(gains[x]), float(gains[y]), disc(rank[x]), disc(rank[y]), inv), order


def _swapped(scores, x, y):
    s = scores.copy()
    s[x], s[y] = s[y], s[x]
    return s


def _brute(metric, labels, scores, x, y):
    ptr = np.array([0, len(labels)])
    return abs(metric(_swapped(scores, x, y), labels, ptr) - metric(scores, labels, ptr))


def _pairs(labels):
    n = len(labels)
    return [(x, y) for x in range(n) for y in range(n) if labels[x] > labels[y]]


CASES = {
    # name: (metric recomputed by boostplug.metrics, weight from (view, labels in order), prefix width)
    "ndcg": (lambda s, y, g: metrics.ndcg(s, y, g), None),
    "map": (lambda s, y, g: metrics.average_precision(s, y, g, threshold=2.0), "map"),
    "map@3": (lambda s, y, g: metrics.average_precision(s, y, g, k=3, threshold=1.0), "map"),
    "err": (lambda s, y, g: metrics.err(s, y, g), "err"),
    "err@4": (lambda s, y, g: metrics.err(s, y, g, k=4, max_grade=5.0), "err"),
    "mrr": (lambda s, y, g: metrics.reciprocal_rank(s, y, g, threshold=3.0), "mrr"),
    "mrr@2": (lambda s, y, g: metrics.reciprocal_rank(s, y, g, k=2, threshold=2.0), "mrr"),
    "rbp": (lambda s, y, g: metrics.rbp(s, y, g, persistence=0.7), None),
    "rbp-graded@5": (lambda s, y, g: metrics.rbp(s, y, g, k=5, persistence=0.9, max_grade=4.0), None),
}


def _weight(case, view, labels_in_order):
    """The shipped weight of ``case`` for ``view``, its prefix computed from the labels in order."""
    n = len(labels_in_order)
    prefix = np.zeros((n, 2))
    if case == "ndcg":
        return W.delta_ndcg(view)
    if case.startswith("map"):
        cut = 3 if case == "map@3" else NO_CUT
        thr = 1.0 if case == "map@3" else 2.0
        W.map_prefix(labels_in_order, prefix, thr, cut)
        return W.delta_map(view, prefix, thr, cut)
    if case.startswith("err"):  # ERR's view carries the stop probabilities as its gains
        cut, top = (4, 5.0) if case == "err@4" else (NO_CUT, 4.0)
        stops = W.err_stops(np.array([view.label_i, view.label_j]), top)
        view = view._replace(gain_i=stops[0], gain_j=stops[1])
        W.err_prefix(W.err_stops(labels_in_order, top), prefix, cut)
        return W.delta_err(view, prefix, cut)
    if case.startswith("mrr"):
        cut, thr = (2, 2.0) if case == "mrr@2" else (NO_CUT, 3.0)
        W.mrr_prefix(labels_in_order, prefix, thr, cut)
        return W.delta_mrr(view, prefix, thr, cut)
    if case == "rbp":
        return W.delta_rbp(view, 0.7, 0.0, 1.0, NO_CUT)
    return W.delta_rbp(view, 0.9, 4.0, 1.0, 5)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("seed", range(6))
def test_each_pair_weight_is_the_metric_change_of_swapping_the_pair(case, seed) -> None:
    n = [2, 5, 9, 14, 20, 31][seed]
    labels, scores = _query(seed, n)
    gains = 2.0 ** labels - 1.0
    ideal = sum(g / math.log2(2.0 + r) for r, g in enumerate(np.sort(gains)[::-1]))
    inv = 1.0 / ideal if ideal > 0 else 0.0
    metric = CASES[case][0]
    checked = 0
    for x, y in _pairs(labels):
        view, order = _view(labels, scores, x, y, gains, inv)
        expected = _brute(metric, labels, scores, x, y)
        got = _weight(case, view, labels[order])
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12), (case, x, y, view)
        checked += expected > 0
    assert checked or n == 2  # the brute force saw non-zero changes


class _Summed(PairwiseLoss):
    """A pair loss of 1 per pair: its loss is the sum of the pairs' weights, through the kernel."""

    summary = "sum of the pair weights (test)"
    params = {"sigma": Param(1.0, "real", "unused")}
    hessians = {"exact": LAMBDA_EXACT}
    name = "test_ndcg_sum"

    @staticmethod
    def pair_loss(d, *args):
        return 1.0

    @staticmethod
    def pair_grad(d, *args):
        return 0.0

    @staticmethod
    def pair_hess(d, *args):
        return 0.0

    @staticmethod
    def pair_weight(p, sigma):
        return W.delta_ndcg(p)


def _summed(shipped):
    """The shipped LambdaMART objective ``shipped`` with :class:`_Summed`'s pair loss of 1."""
    hooks = {f: vars(_Summed)[f] for f in ("pair_loss", "pair_grad", "pair_hess")}
    return type(f"{shipped.__name__}Sum", (shipped,), {"name": f"test_{shipped.name}_sum", **hooks})


@pytest.mark.parametrize("cls, case, settings", [(_summed(LambdaMAP), "map", {"threshold": 2.0}),
                                                 (_summed(LambdaERR), "err", {}),
                                                 (_summed(LambdaMRR), "mrr", {"threshold": 3.0}),
                                                 (_Summed, "ndcg", {})])
def test_the_kernel_sums_the_weights_the_brute_force_gives(cls, case, settings) -> None:
    rng = np.random.default_rng(11)
    sizes = [1, 6, 2, 12, 9, 17]
    labels = np.concatenate([rng.integers(0, 5, n) for n in sizes]).astype(float)
    scores = rng.permutation(labels.size) + rng.uniform(0, 0.5, labels.size)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    weights = rng.uniform(0.5, 2.0, len(sizes))
    expected = 0.0
    for q in range(len(sizes)):
        y, s = labels[ptr[q]:ptr[q + 1]], scores[ptr[q]:ptr[q + 1]]
        expected += weights[q] * sum(_brute(CASES[case][0], y, s, x, z) for x, z in _pairs(y))
    assert cls(labels, ptr, weights=weights, **settings).loss(scores) == pytest.approx(expected, rel=1e-10)


def test_lambdalosss_weights_are_the_papers_formula() -> None:
    # delta_ij = |1/D(|i-j|) - 1/D(|i-j|+1)|, D(r) = log2(1 + r), 1-based positions (Wang et al. 2018, eq. 12)
    for i in range(1, 40):
        for j in range(1, 40):
            gap = abs(i - j)
            paper = 0.0 if gap == 0 else abs(1.0 / math.log2(1.0 + gap) - 1.0 / math.log2(2.0 + gap))
            assert position_gap_discount(i - 1, j - 1) == pytest.approx(paper, rel=1e-15)
    assert position_gap_discount(0, 5000) == pytest.approx(1 / math.log2(5001) - 1 / math.log2(5002), rel=1e-14)
