"""The loop of :class:`~.pairwise.PairwiseLoss` (the sums its docstring states), a closure over
one class's compiled functions (cached on disk: :mod:`boostplug._core.class_kernels`). A query's
pairs are visited in ``order``: by the scores the weights come from (descending, ties in input
order; ``i < top_k``, then ``j > i``: LightGBM's order), or by label (``by_label``: document ``i``'s
pairs from ``next_lower[a + i]``, the first position of a lower label). The document at position
``i``'s sums stay in registers across its ``j``. Pairs never cross queries: a query's sums do not
depend on the number of threads. ``done[q]`` is set when query ``q``'s iteration ends (an exception
on a worker thread never reaches the caller).
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numba as nb
import numpy as np

from .._core.sorting import stable_argsort_descending

__all__ = ["Pair", "NORM_OFFSET", "FUNCTIONS", "leading", "pair_kernel", "query_orders"]

#: The functions a pair class may define, in the loop's order, with their leading arguments (then
#: ``pair_args()``).
FUNCTIONS = {"pair_loss": ("d",), "pair_grad": ("d",), "pair_hess": ("d",), "pair_weight": ("pair",),
             "query_prefix": ("labels", "gains", "out")}


def leading(cls: type, name: str) -> tuple[str, ...]:
    """The leading arguments of ``cls``'s function ``name`` (a weight reads the prefix when there is one)."""
    return ("pair", "prefix") if name == "pair_weight" and cls.query_prefix is not None else FUNCTIONS[name]


class Pair(NamedTuple):
    """What a pair weight sees of one pair in its query's current order: ``i`` is the preferred
    document (the higher label); ``d`` the difference of the scores the weights come from; ranks,
    positions in the order (0: the top); gains (``gains()``: ``2^label - 1``); discounts
    ``1 / log2(2 + rank)``; ``inv_max_dcg``, 1 / the query's ideal DCG (0 when it is 0)."""

    d: float
    rank_i: int
    rank_j: int
    label_i: float
    label_j: float
    gain_i: float
    gain_j: float
    discount_i: float
    discount_j: float
    inv_max_dcg: float


#: LightGBM's ``0.01f``: with score-gap normalisation a pair's weight is divided by this plus |s_i - s_j|.
NORM_OFFSET = float(np.float32(0.01))


@nb.njit(parallel=True, cache=True)
def query_orders(scores: np.ndarray, group_ptr: np.ndarray, out: np.ndarray) -> None:
    """``out[a:b]``: the rows of each query ``a:b`` by descending score, ties in input order (a stable
    sort, as LightGBM's ``std::stable_sort``; boostplug's own, quick to compile)."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        r = stable_argsort_descending(scores[a:b])
        for k in range(b - a):  # a loop: an array expression costs a second to compile
            out[a + k] = a + r[k]


def pair_kernel(loss_fn: Any, grad_fn: Any, hess_fn: Any, weight_fn: Any, prefix_fn: Any, bound: bool,
                note: Any = None) -> Callable[..., None]:
    """The loop (module docstring) around one class's compiled functions (``weight_fn``, ``prefix_fn``:
    ``None`` for none); with ``want_loss`` it writes each query's loss into ``loss`` instead of the
    sums into ``grad`` and ``hess`` (zeros on entry). The choices are constants of the closure: numba
    compiles only the branches taken. ``note(ri, rj, up)``, before each pair's calls: for the loop
    run as Python, which names a failing function (never compiled)."""
    weighted = weight_fn is not None
    with_prefix = prefix_fn is not None
    noting = note is not None

    def pair_sums(scores, at, order, next_lower, by_label, labels, gains, group_ptr, inv_max_dcg,  # type: ignore[no-untyped-def]
                  query_weights, discounts, top_k, normalize, frozen, want_loss, args, olabels, ogains, prefix,
                  grad, hess, loss, done):
        for q in nb.prange(group_ptr.shape[0] - 1):
            a = group_ptr[q]
            b = group_ptr[q + 1]
            n = b - a
            w_q = query_weights[q]
            if n < 2 or w_q == 0.0:
                done[q] = True
                continue
            if with_prefix:
                for r in range(n):
                    olabels[a + r] = labels[order[a + r]]
                    ogains[a + r] = gains[order[a + r]]
                prefix_fn(olabels[a:b], ogains[a:b], prefix[a:b], *args)
            pre = prefix[a:b]
            varied = at[order[a]] != at[order[b - 1]]
            inv = inv_max_dcg[q]
            total = 0.0
            acc = 0.0
            if by_label and not weighted and not noting:  # every pair weighs 1: no label test, no view
                for i in range(n - 1):
                    ri = np.uint64(order[np.uint64(a + i)])
                    s_i = scores[ri]
                    g_i = grad[ri] if not want_loss else 0.0
                    h_i = hess[ri] if not want_loss else 0.0
                    for j in range(next_lower[a + i] - a, n):
                        rj = np.uint64(order[np.uint64(a + j)])
                        d = s_i - scores[rj]
                        if want_loss:
                            acc += loss_fn(d, *args)
                            continue
                        g = grad_fn(d, *args)
                        h = hess_fn(d, *args)
                        if bound:
                            h = 2.0 * abs(h)
                        grad[rj] -= g
                        hess[rj] += h
                        g_i += g
                        h_i += h
                    if not want_loss:
                        grad[ri] = g_i
                        hess[ri] = h_i
            else:
                for i in range(min(n - 1, top_k)):
                    ri = np.uint64(order[np.uint64(a + i)])  # unsigned: no wraparound of negative indices to emit
                    ui = np.uint64(i)
                    label_i = labels[ri]
                    gain_i = gains[ri]
                    discount_i = discounts[ui]
                    s_i = scores[ri]
                    at_i = at[ri]
                    g_i = grad[ri] if not want_loss else 0.0
                    h_i = hess[ri] if not want_loss else 0.0
                    for j in range(next_lower[a + i] - a if by_label else i + 1, n):
                        rj = np.uint64(order[np.uint64(a + j)])
                        uj = np.uint64(j)
                        label_j = labels[rj]
                        if label_i == label_j:
                            continue
                        up = label_i > label_j
                        if noting:
                            note(ri, rj, up)
                        if up:
                            d_at = at_i - at[rj]
                            d = s_i - scores[rj]
                            view = Pair(d_at, i, j, label_i, label_j, gain_i, gains[rj], discount_i, discounts[uj], inv)
                        else:
                            d_at = at[rj] - at_i
                            d = scores[rj] - s_i
                            view = Pair(d_at, j, i, label_j, label_i, gains[rj], gain_i, discounts[uj], discount_i, inv)
                        w = 1.0
                        if weighted:  # constants of the closure: numba compiles only the branch taken
                            if with_prefix:
                                w = weight_fn(view, pre, *args)
                            else:
                                w = weight_fn(view, *args)
                            if w == 0.0:  # adds nothing (MRR's weight is 0 for most pairs, MAP's within a class)
                                continue
                            if w < 0.0:  # named by _naming.pair_failure, which runs this loop as Python
                                raise ValueError("a pair_weight is negative")
                        if normalize and varied:
                            w = w / (NORM_OFFSET + abs(d_at))
                        if want_loss:
                            if normalize:
                                total -= 2.0 * (w * grad_fn(d_at if frozen else d, *args))
                            if w != 0.0:  # a pair of weight 0 adds nothing, even where its loss overflows
                                acc += w * loss_fn(d, *args)
                            continue
                        g = w * grad_fn(d, *args)
                        if normalize:
                            total -= 2.0 * (w * grad_fn(d_at, *args) if frozen else g)
                        h = w * hess_fn(d, *args)
                        if bound:
                            h = 2.0 * abs(h)
                        if up:
                            grad[rj] -= g
                            g_i += g
                        else:
                            grad[rj] += g
                            g_i -= g
                        hess[rj] += h
                        h_i += h
                    if not want_loss:
                        grad[ri] = g_i
                        hess[ri] = h_i
            factor = math.log2(1.0 + total) / total if normalize and total > 0.0 else 1.0
            if want_loss:
                loss[q] = w_q * (factor * acc)
            else:
                for r in range(a, b):
                    grad[r] = (grad[r] * factor) * w_q
                    hess[r] = (hess[r] * factor) * w_q
            done[q] = True

    return pair_sums
