"""The pair loops of :class:`~.pairwise.PairwiseLoss`, :class:`~.lambda_weighted.LambdaWeightedLoss`
and LambdaLoss's NDCG-Loss1 (private): the source that :func:`._pairwise_kernels.pair_loops`
compiles once per objective class.

The functions here call the class's pair functions by the global names ``loss_fn``, ``grad_fn``,
``hess_fn``, ``weight_fn`` and ``terms_fn``, and read the global ``BOUND``: whether the Hessian
terms are bounds (each term's twice absolute value), a constant numba compiles into the loops.
They are not compiled from this module: :func:`._pairwise_kernels.pair_loops` copies this file's
text to a file of its own per class and Hessian kind (named by a fingerprint of the class's
functions, of ``BOUND`` and of this text), runs it with those names bound to the class's compiled
functions and its ``BOUND``, and compiles the loops with ``cache=True``: numba's disk cache then
keys each class's loops on a real file, and a new process loads them instead of compiling them
again. The placeholders below only name what each function receives.

Every loop adds a pair's gradient term to the preferred document's sum and subtracts it from the
other's, and adds its Hessian term (``BOUND``: twice its absolute value) to both; the sums of the
document a run of pairs shares stay in registers over the run (the same additions in the same
order as one update per pair). Rows are indexed as unsigned integers, so that numba emits no
wraparound of negative indices. A pairwise loss visits its critical pairs, listed once per data
set, with fixed weights (:func:`listed_loss_sums`, :func:`listed_grad_hess_sums`); a
lambda-weighted loss visits the pairs of each query's current order, with weights that see it
(:func:`lambda_sums`, float32 sums when the objective's are). LambdaLoss's NDCG-Loss1 weighs each
document's terms against every other document, equal labels included, by a weight of its own: its
loop visits every ordered pair of a query's documents (:func:`ordered_pair_sums`) and adds each
pair's terms times the query's weight, in float64.

Pairs never cross queries and the queries' iterations write disjoint rows, so a query's sums do
not depend on the number of threads. Each loop sets ``done[q]`` when query ``q``'s iteration
ends: an exception a pair function raises on one of numba's worker threads ends that iteration
but never reaches the caller, so a ``done`` left unset is how the caller learns that one raised.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ._pairwise_kernels import NORM_OFFSET, Pair, sum_type

__all__ = ["listed_loss_sums", "listed_grad_hess_sums", "lambda_sums", "ordered_pair_sums"]


def loss_fn(d, *args):  # type: ignore[no-untyped-def]  # pragma: no cover - the class's pair_loss
    raise NotImplementedError


def grad_fn(d, *args):  # type: ignore[no-untyped-def]  # pragma: no cover - the class's pair_grad
    raise NotImplementedError


def hess_fn(d, *args):  # type: ignore[no-untyped-def]  # pragma: no cover - the class's pair_hess
    raise NotImplementedError


def weight_fn(pair, *args):  # type: ignore[no-untyped-def]  # pragma: no cover - the class's pair_weight
    raise NotImplementedError


#: Whether the Hessian terms are bounds, ``2 |h|`` (the class's Hessian kind "bound"); set per build.
BOUND = False


def terms_fn(d, w, *args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled when not the class's
    """The default ``pair_terms``: ``(w pair_grad(d), w pair_hess(d))``."""
    return w * grad_fn(d, *args), w * hess_fn(d, *args)


def listed_loss_sums(scores, above, below, weight, pair_ptr, args, out, done):  # type: ignore[no-untyped-def]
    """``out[q] = sum_p weight[p] pair_loss(s_above - s_below, *args)`` over query ``q``'s listed
    pairs ``pair_ptr[q]:pair_ptr[q + 1]``."""
    for q in nb.prange(pair_ptr.shape[0] - 1):
        acc = 0.0
        for p in range(pair_ptr[q], pair_ptr[q + 1]):
            acc += weight[p] * loss_fn(scores[above[p]] - scores[below[p]], *args)
        out[q] = acc
        done[q] = True


def listed_grad_hess_sums(scores, above, below, weight, pair_ptr, args, grad, hess, done):  # type: ignore[no-untyped-def]
    """Each listed pair's terms ``terms_fn(s_above - s_below, weight[p], *args)`` added as
    the module docstring says (``grad`` and ``hess`` start at zero).

    The pairs of one preferred row are consecutive (listed by query, then by preferred row, never a
    row with itself): over such a run that row's score is read once and its sums are kept in local
    variables, stored when the run ends. No other pair of the run writes that row, so its sums
    take the same additions in the same order as one update per pair: the same bits."""
    for q in nb.prange(pair_ptr.shape[0] - 1):
        p = pair_ptr[q]
        end = pair_ptr[q + 1]
        while p < end:
            i = above[p]
            r = np.uint64(i)  # rows index unsigned: no wraparound of negative indices to emit
            s_i = scores[r]
            g_i = grad[r]
            h_i = hess[r]
            while p < end and above[np.uint64(p)] == i:
                u = np.uint64(p)
                j = np.uint64(below[u])
                g, h = terms_fn(s_i - scores[j], weight[u], *args)
                if BOUND:
                    h = 2.0 * abs(h)
                grad[j] -= g
                hess[j] += h
                g_i += g
                h_i += h
                p += 1
            grad[r] = g_i
            hess[r] = h_i
        done[q] = True


def lambda_sums(scores, at, order, frozen, labels, gains, group_ptr, inv_max_dcg,  # type: ignore[no-untyped-def]
                query_weights, discounts, top_k, normalize, want_loss, args, sums_g, sums_h, grad, hess,
                loss, done):
    """A lambda-weighted loss (``want_loss``: ``loss[q]`` per query) or its gradient and Hessian
    (written to ``grad`` and ``hess``, which start at zero).

    ``order`` holds each query's rows by the scores the weights are taken from, ``at`` (``scores``
    itself unless ``frozen``), descending, ties in input order (:func:`._pairwise_kernels.query_orders`).
    The pairs are those of documents with different labels of which at least one is among the
    first ``top_k`` positions, visited by position (``i`` among the first ``top_k``, then ``j > i``:
    LightGBM's order). A pair's weight is ``weight_fn(Pair(...), *args)``, divided by ``NORM_OFFSET
    + |at_i - at_j|`` when ``normalize`` and the query's ``at`` are not all equal; its terms are
    ``terms_fn(s_i - s_j, weight, *args)``: the gradient term added to the preferred document's sum
    and subtracted from the other's, the Hessian term (``BOUND``: twice its absolute value) added to
    both. The sums run in ``sums_g`` and ``sums_h`` (zeros), in their dtype: float32 arrays for
    float32 sums (each term and each sum rounded to float32, LightGBM's ``score_t``), else ``grad``
    and ``hess`` themselves; the document at position ``i``'s in registers across its ``j`` (the
    same additions in the same order). With ``normalize``, the query's sums are then multiplied by
    ``log2(1 + S) / S``, ``S`` minus twice the sum of the gradient terms at ``at`` (LightGBM's
    ``lambdarank_norm``), rounded to the sums' dtype, and finally by the query's weight into
    ``grad`` and ``hess``."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a = group_ptr[q]
        b = group_ptr[q + 1]
        n = b - a
        w_q = query_weights[q]
        if n < 2 or w_q == 0.0:
            done[q] = True
            continue
        varied = at[order[a]] != at[order[b - 1]]
        inv = inv_max_dcg[q]
        total = 0.0
        acc = 0.0
        for i in range(min(n - 1, top_k)):
            ri = np.uint64(order[np.uint64(a + i)])  # unsigned: no wraparound of negative indices to emit
            ui = np.uint64(i)
            label_i = labels[ri]
            gain_i = gains[ri]
            discount_i = discounts[ui]
            s_i = scores[ri]
            at_i = at[ri]
            g_i = sum_type(0.0, sums_g)  # the document at position i's sums, in registers across its j
            h_i = sum_type(0.0, sums_h)
            if not want_loss:
                g_i = sums_g[ri]
                h_i = sums_h[ri]
            for j in range(i + 1, n):
                rj = np.uint64(order[np.uint64(a + j)])
                uj = np.uint64(j)
                label_j = labels[rj]
                if label_i == label_j:
                    continue
                up = label_i > label_j
                if up:
                    d_at = at_i - at[rj]
                    w = weight_fn(Pair(d_at, i, j, gain_i, gains[rj], discount_i, discounts[uj], inv), *args)
                    d = s_i - scores[rj]
                else:
                    d_at = at[rj] - at_i
                    w = weight_fn(Pair(d_at, j, i, gains[rj], gain_i, discounts[uj], discount_i, inv), *args)
                    d = scores[rj] - s_i
                if normalize and varied:
                    w = w / (NORM_OFFSET + abs(d_at))
                g, h = terms_fn(d, w, *args)
                if normalize:
                    total -= 2.0 * (terms_fn(d_at, w, *args)[0] if frozen else g)
                if want_loss:
                    if w != 0.0:  # a pair of weight 0 adds nothing, even where its loss overflows
                        acc += w * loss_fn(d, *args)
                    continue
                if BOUND:
                    h = 2.0 * abs(h)
                g = sum_type(g, sums_g)  # float32 sums add in float32
                h = sum_type(h, sums_h)
                if up:
                    sums_g[rj] -= g
                    g_i += g
                else:
                    sums_g[rj] += g
                    g_i -= g
                sums_h[rj] += h
                h_i += h
            if not want_loss:
                sums_g[ri] = g_i
                sums_h[ri] = h_i
        factor = math.log2(1.0 + total) / total if normalize and total > 0.0 else 1.0
        if want_loss:
            loss[q] = w_q * (factor * acc)
        else:
            for r in range(a, b):
                grad[r] = np.float64(sum_type(sums_g[r] * factor, sums_g)) * w_q
                hess[r] = np.float64(sum_type(sums_h[r] * factor, sums_h)) * w_q
        done[q] = True


def ordered_pair_sums(scores, order, gains, group_ptr, inv_max_dcg,  # type: ignore[no-untyped-def]
                      query_weights, discounts, top_k, want_loss, args, grad, hess, loss, done):
    """LambdaLoss's NDCG-Loss1 (:class:`~.lambdaloss.NDCGLoss1`): ``loss[q] = W_q sum_{a != b} w_ab
    loss_fn(s_a - s_b, *args)`` over the ordered pairs of each query, equal labels included
    (``want_loss``), or its gradient and Hessian with the weights held (added to ``grad`` and
    ``hess``, which start at zero): ``terms_fn(s_a - s_b, w_ab, *args)``'s gradient term added to
    ``a`` and subtracted from ``b``, its Hessian term (``BOUND``: twice its absolute value) added to
    both, each times ``W_q``. The weight belongs to the pair's first document ``a``: ``w_ab = w_a =
    weight_fn(Pair(0, r_a, r_a, g_a, g_a, D_a, D_a, 1 / ideal DCG), *args)``, asked once per
    document, whose pair view shows ``a`` as both ``i`` and ``j``: its position in ``order`` (each
    query's rows by descending score of those the weights are taken from, ties in input order), its
    gain and discount. A document of weight 0 has no terms of its own (it is still the ``b`` of the
    others'). Only the pairs with a document among the first ``top_k`` positions count."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        lo = group_ptr[q]
        n = group_ptr[q + 1] - lo
        w_q = query_weights[q]
        if n < 2 or w_q == 0.0:
            done[q] = True
            continue
        acc = 0.0
        for i in range(n):
            ra = order[lo + i]
            w = weight_fn(Pair(0.0, i, i, gains[ra], gains[ra], discounts[i], discounts[i], inv_max_dcg[q]), *args)
            if w == 0.0:
                continue
            s_a = scores[ra]
            last = n if i < top_k else min(n, top_k)
            if want_loss:
                for j in range(last):
                    if j != i:
                        acc += w * loss_fn(s_a - scores[order[lo + j]], *args)
                continue
            # document a's sums in local variables over its pairs (no other pair of them writes a's
            # row: the same additions in the same order as one update per pair, the same bits)
            g_a = grad[ra]
            h_a = hess[ra]
            for j in range(last):
                if j == i:
                    continue
                rb = np.uint64(order[np.uint64(lo + j)])  # unsigned: no wraparound of negative indices to emit
                g, h = terms_fn(s_a - scores[rb], w, *args)
                if BOUND:
                    h = 2.0 * abs(h)
                g_a += w_q * g
                grad[rb] -= w_q * g
                h_a += w_q * h
                hess[rb] += w_q * h
            grad[ra] = g_a
            hess[ra] = h_a
        if want_loss:
            loss[q] = w_q * acc
        done[q] = True
