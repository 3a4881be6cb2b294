"""The loop of :class:`~.pairwise.PairwiseLoss` (the sums its docstring states), a closure over
one class's compiled functions (cached on disk: :mod:`boostplug._core.class_kernels`). A query's
pairs are visited in ``order``: by the scores the weights come from (descending, ties in input
order; ``i < top_k``, then ``j > i``: LightGBM's order), or by label (``by_label``: document ``i``'s
pairs from ``next_lower[a + i]``, the first position of a lower label). The document at position
``i``'s sums stay in registers across its ``j``. Pairs never cross queries: a query's sums do not
depend on the number of threads. ``done[q]`` is set when query ``q``'s iteration ends without a
negative weight (an exception on a worker thread never reaches the caller). Its inputs come in named records (:class:`Queries`,
:class:`Docs`, :class:`Visit`, :class:`Scratch`, :class:`Sums`); a pair's term is summed once, as its
loss or as its gradient and Hessian; what one loss needs (a metric's weight, its per-query prefix)
comes from the loss's functions, never a branch of the loop.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numba as nb
import numpy as np

from .._core.sorting import stable_argsort_descending

__all__ = ["Pair", "Queries", "Docs", "Visit", "Scratch", "Sums", "FUNCTIONS", "leading", "pair_kernel", "query_orders"]

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


class Queries(NamedTuple):
    """Per query: its rows ``group_ptr[q]:group_ptr[q + 1]``, its ``weights[q]``, 1 / its ideal DCG."""

    group_ptr: np.ndarray
    weights: np.ndarray
    inv_max_dcg: np.ndarray


class Docs(NamedTuple):
    """Per document (row): the pair functions' ``labels`` and ``gains``; per position: ``discounts``."""

    labels: np.ndarray
    gains: np.ndarray
    discounts: np.ndarray


class Visit(NamedTuple):
    """Which pairs, in which order: each query's rows in ``order``; by label, document ``i``'s pairs
    from ``next_lower[a + i]`` (the first position of a lower label); else ``i < top_k``, ``j > i``."""

    order: np.ndarray
    next_lower: np.ndarray
    top_k: int


class Scratch(NamedTuple):
    """The query prefix's inputs and output (``prefix_width`` columns): labels and gains in order."""

    labels: np.ndarray
    gains: np.ndarray
    prefix: np.ndarray


class Sums(NamedTuple):
    """What the loop writes: the sums (zeros on entry) or each query's loss, and ``done``."""

    grad: np.ndarray
    hess: np.ndarray
    loss: np.ndarray
    done: np.ndarray


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
                by_label: bool, note: Any = None) -> Callable[..., None]:
    """The loop (module docstring) around one class's compiled functions (``weight_fn``, ``prefix_fn``:
    ``None`` for none); with ``want_loss`` it writes each query's loss into ``sums.loss`` instead of
    the sums into ``sums.grad`` and ``sums.hess``. The choices are constants of the closure: numba
    compiles only the branches taken (``by_label`` without a weight: every pair weighs 1 and ``i``
    is the preferred document, no label test, no view). ``note(ri, rj, up)``, before each pair's
    calls: for the loop run as Python, which names a failing function (never compiled)."""
    weighted = weight_fn is not None
    with_prefix = prefix_fn is not None
    noting = note is not None
    plain = by_label and not weighted and not noting

    def pair_sums(scores, at, docs, queries, visit, want_loss, args, scratch, sums):  # type: ignore[no-untyped-def]
        # each field read into a local once (numba 0.68's parallel loops lose writes through a record
        # unpacked as a tuple, or indexed inside the loop)
        labels = docs.labels
        gains = docs.gains
        discounts = docs.discounts
        group_ptr = queries.group_ptr
        query_weights = queries.weights
        inv_max_dcg = queries.inv_max_dcg
        order = visit.order
        next_lower = visit.next_lower
        top_k = visit.top_k
        olabels = scratch.labels
        ogains = scratch.gains
        prefix = scratch.prefix
        grad = sums.grad
        hess = sums.hess
        loss = sums.loss
        done = sums.done
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
            inv = inv_max_dcg[q]
            acc = 0.0
            negative = False
            for i in range(min(n - 1, top_k)):
                ri = np.uint64(order[np.uint64(a + i)])  # unsigned: no wraparound of negative indices to emit
                ui = np.uint64(i)
                label_i = labels[ri]
                s_i = scores[ri]
                g_i = grad[ri] if not want_loss else 0.0
                h_i = hess[ri] if not want_loss else 0.0
                for j in range(next_lower[a + i] - a if by_label else i + 1, n):
                    rj = np.uint64(order[np.uint64(a + j)])
                    up = True
                    w = 1.0
                    if plain:  # a constant of the closure: every pair weighs 1, i is the preferred one
                        d = s_i - scores[rj]
                    else:
                        uj = np.uint64(j)
                        label_j = labels[rj]
                        if label_i == label_j:
                            continue
                        up = label_i > label_j
                        if noting:
                            note(ri, rj, up)
                        d = s_i - scores[rj] if up else scores[rj] - s_i
                        if weighted:
                            if up:
                                view = Pair(at[ri] - at[rj], i, j, label_i, label_j, gains[ri], gains[rj],
                                            discounts[ui], discounts[uj], inv)
                            else:
                                view = Pair(at[rj] - at[ri], j, i, label_j, label_i, gains[rj], gains[ri],
                                            discounts[uj], discounts[ui], inv)
                            w = weight_fn(view, pre, *args) if with_prefix else weight_fn(view, *args)
                            if w == 0.0:  # adds nothing (MRR's weight is 0 for most pairs, MAP's within a class)
                                continue
                            if w < 0.0:  # the query is left undone: _naming.pair_failure names the pair
                                negative = True  # (a raise here, in the inner loop, made it 1.6-2x slower)
                    # the pair's term: its loss, or its gradient and Hessian (one accumulation for both)
                    if want_loss:
                        acc += loss_fn(d, *args) if plain else w * loss_fn(d, *args)
                        continue
                    g = grad_fn(d, *args) if plain else w * grad_fn(d, *args)
                    h = hess_fn(d, *args) if plain else w * hess_fn(d, *args)
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
            if want_loss:
                loss[q] = w_q * acc
            elif w_q != 1.0:  # times 1 changes no bit: no pass for it
                for r in range(a, b):
                    grad[r] = grad[r] * w_q
                    hess[r] = hess[r] * w_q
            done[q] = not negative

    return pair_sums
