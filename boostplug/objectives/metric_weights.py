"""LambdaMART's pair weights for other metrics than NDCG: how much a metric changes when two
documents of the current order swap places (Burges 2010; Donmez, Svore and Burges 2009), for a
:class:`~.pairwise.PairwiseLoss`'s ``pair_weight`` and ``query_prefix``.

Each ``delta_*`` is ``|metric(order with i and j swapped) - metric(order)|`` of the pair's query, in
O(1) from the pair's view (:class:`~.pairwise.Pair`: positions, labels, gains) and, for the metrics
whose change depends on the documents between the two (MAP, ERR, MRR), the per-query quantities its
``*_prefix`` function writes once per query and round from the labels in the current order. The
metrics are :mod:`boostplug.metrics`' (the same conventions; ``cutoff`` is their ``k``, ``NO_CUTOFF``
the whole list). A LambdaMART for MAP written on them: docs/objectives/custom.md ("Weights that see
the order"); the registered ones: :mod:`.lambdamart`.

Definitions (positions ``m = 0, 1, ...`` of the current order, ``f(m) = 1`` while ``m < cutoff``):

* NDCG (gains ``G``, discounts ``D(m) = 1 / log2(2 + m)``, ideal DCG ``Z``): ``|G_i - G_j| |D(r_i) -
  D(r_j)| / Z`` (:func:`delta_ndcg`; LambdaRank's weight; the cutoff is the pair base's truncation);
* MAP (relevant: ``label >= threshold``; ``R`` relevant documents): ``AP = sum_m rel_m C_m f(m) / (m + 1)
  / min(cutoff, R)``, ``C_m`` the relevant documents in positions ``0..m``; prefix ``C_m`` and
  ``S_m = sum_{l <= m} rel_l f(l) / (l + 1)``;
* ERR (``R(g) = (2^g - 1) / 2^max_grade``, the class's gains: :func:`err_stops`): ``sum_m f(m) R_m
  P_m / (m + 1)``, ``P_m = prod_{l < m} (1 - R_l)``; prefix ``P_m`` and ``Q_m = sum_{l <= m} f(l) R_l
  P_l / (l + 1)``;
* MRR: ``1 / (first relevant position + 1)`` while it is below the cutoff, else 0; prefix: the
  first two relevant positions (in the first row);
* RBP (Moffat and Zobel 2008, persistence ``p``): ``(1 - p) sum_m rel_m p^m f(m)``, ``rel`` the label
  over ``max_grade`` (graded) or ``label >= threshold`` (``max_grade = 0``); no prefix.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._core import dcg

__all__ = ["NO_CUTOFF", "MAP_WIDTH", "ERR_WIDTH", "MRR_WIDTH", "delta_ndcg", "map_prefix", "delta_map",
           "err_stops", "err_prefix", "delta_err", "mrr_prefix", "delta_mrr", "delta_rbp"]

#: A cutoff beyond every position: the whole list.
NO_CUTOFF = np.iinfo(np.int64).max
#: Columns of each prefix.
MAP_WIDTH, ERR_WIDTH, MRR_WIDTH = 2, 2, 2


@nb.njit(cache=True)
def delta_ndcg(p):  # type: ignore[no-untyped-def]
    """|Delta NDCG| of swapping the pair: ``|G_i - G_j| |D(r_i) - D(r_j)| / Z`` (:func:`.dcg.delta_ndcg`)."""
    return abs(dcg.delta_ndcg(p.gain_i, p.gain_j, p.discount_i, p.discount_j, p.inv_max_dcg))


@nb.njit(cache=True)
def map_prefix(labels, out, threshold, cutoff):  # type: ignore[no-untyped-def]
    """``out[m] = (C_m, S_m)`` of the labels in order (module docstring)."""
    count = 0.0
    total = 0.0
    for m in range(labels.shape[0]):
        if labels[m] >= threshold:
            count += 1.0
            if m < cutoff:
                total += 1.0 / (m + 1.0)
        out[m, 0] = count
        out[m, 1] = total


@nb.njit(cache=True)
def delta_map(p, prefix, threshold, cutoff):  # type: ignore[no-untyped-def]
    """|Delta AP| of swapping the pair (0 unless one of the two is relevant and the other is not)."""
    if (p.label_i >= threshold) == (p.label_j >= threshold):
        return 0.0
    a, b = min(p.rank_i, p.rank_j), max(p.rank_i, p.rank_j)
    fa = 1.0 / (a + 1.0) if a < cutoff else 0.0
    fb = 1.0 / (b + 1.0) if b < cutoff else 0.0
    c_a, c_b, between = prefix[a, 0], prefix[b, 0], prefix[b - 1, 1] - prefix[a, 1]
    if p.rank_i < p.rank_j:  # the relevant one (i) above: it moves down to b
        delta = c_b * fb - c_a * fa - between
    else:  # it moves up from b to a
        delta = (c_a + 1.0) * fa - c_b * fb + between
    relevant = prefix[prefix.shape[0] - 1, 0]
    return abs(delta) / min(float(cutoff), relevant)


def err_stops(labels, max_grade):  # type: ignore[no-untyped-def]
    """Each document's stop probability ``R(g) = (2^g - 1) / 2^max_grade``: ERR's gains, computed
    once per data set (a class's ``gains()``), which :func:`err_prefix` and :func:`delta_err` read."""
    return (2.0 ** np.asarray(labels, dtype=np.float64) - 1.0) / 2.0 ** max_grade


@nb.njit(cache=True)
def err_prefix(stops, out, cutoff):  # type: ignore[no-untyped-def]
    """``out[m] = (P_m, Q_m)`` of the stop probabilities in order (module docstring)."""
    stay = 1.0
    total = 0.0
    for m in range(stops.shape[0]):
        r = stops[m]
        out[m, 0] = stay
        if m < cutoff:
            total += r * stay / (m + 1.0)
        out[m, 1] = total
        stay *= 1.0 - r


@nb.njit(cache=True)
def delta_err(p, prefix, cutoff):  # type: ignore[no-untyped-def]
    """|Delta ERR| of swapping the pair, from ``P`` and ``Q`` at its two positions; the pair's gains
    are the stop probabilities (:func:`err_stops`)."""
    if p.rank_i < p.rank_j:  # x, y: the stop probabilities at a and at b
        a, b, x, y = p.rank_i, p.rank_j, p.gain_i, p.gain_j
    else:
        a, b, x, y = p.rank_j, p.rank_i, p.gain_j, p.gain_i
    fa = 1.0 / (a + 1.0) if a < cutoff else 0.0
    fb = 1.0 / (b + 1.0) if b < cutoff else 0.0
    ratio = (1.0 - y) / (1.0 - x)  # the factor (1 - x) of every later P becomes (1 - y)
    between = prefix[b - 1, 1] - prefix[a, 1]
    return abs(fa * prefix[a, 0] * (y - x) + (ratio - 1.0) * between + fb * prefix[b, 0] * (ratio * x - y))


@nb.njit(cache=True)
def mrr_prefix(labels, out, threshold, cutoff):  # type: ignore[no-untyped-def]
    """``out[0] = (first, second)`` relevant positions of the labels in order (their count if none)."""
    n = labels.shape[0]
    first, second = n, n
    for m in range(n):
        if labels[m] >= threshold:
            if first == n:
                first = m
            else:
                second = m
                break
    out[0, 0] = first
    out[0, 1] = second


@nb.njit(cache=True)
def _rr(m, cutoff):  # type: ignore[no-untyped-def]
    return 1.0 / (m + 1.0) if m < cutoff else 0.0


@nb.njit(cache=True)
def delta_mrr(p, prefix, threshold, cutoff):  # type: ignore[no-untyped-def]
    """|Delta RR| of swapping the pair: only a swap that moves the first relevant document matters."""
    if (p.label_i >= threshold) == (p.label_j >= threshold):
        return 0.0
    first, second = int(prefix[0, 0]), int(prefix[0, 1])
    if p.rank_i < p.rank_j:  # the relevant one moves down
        if p.rank_i != first:
            return 0.0
        return abs(_rr(first, cutoff) - _rr(min(second, p.rank_j), cutoff))
    if p.rank_j < first:  # it moves up above the first relevant one
        return abs(_rr(p.rank_j, cutoff) - _rr(first, cutoff))
    return 0.0


@nb.njit(cache=True)
def delta_rbp(p, persistence, max_grade, threshold, cutoff):  # type: ignore[no-untyped-def]
    """|Delta RBP| of swapping the pair: ``(1 - p) |rel_i - rel_j| |p^r_i - p^r_j|``."""
    if max_grade > 0.0:
        gap = (p.label_i - p.label_j) / max_grade
    else:
        gap = (1.0 if p.label_i >= threshold else 0.0) - (1.0 if p.label_j >= threshold else 0.0)
    wi = persistence ** p.rank_i if p.rank_i < cutoff else 0.0
    wj = persistence ** p.rank_j if p.rank_j < cutoff else 0.0
    return (1.0 - persistence) * abs(gap) * abs(wi - wj)

