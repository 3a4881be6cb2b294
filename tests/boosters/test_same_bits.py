"""Faster kernels of the reference boosters, the same numbers bit for bit.

Each speed-up here keeps every floating-point operation of the code it replaced, in the same order:
the earlier code is kept below as the reference (verbatim), and the fits made with it and without it
are compared bit for bit (rankers, weights, predictions and every history field).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.special import logsumexp
from tests.boosters._helpers import assert_identical_fit, dependent_data, graded_data, letor_like

import boostplug.boosters._stump_sums as stump_sums
import boostplug.boosters.rankboost as rankboost
from boostplug._core import dispatch
from boostplug.boosters import MPBoost, RankBoost
from boostplug.boosters._rankboost_kernels import DEPENDENT_RTOL
from boostplug.boosters._stump_sums import cumsum_both


# ---- the earlier kernels: one feature per pass over the pairs ------------------------------------
# (their prefix sums are the module's own cumsum_both, unchanged since)

@nb.njit(cache=True)
def _pair_split_feature(codes, pairs, values, k, c, r):
    for p in range(pairs.shape[0]):
        ca = codes[pairs[p, 0], k]
        cb = codes[pairs[p, 1], k]
        v = values[p]
        if ca > cb:
            c[cb] += v
            c[ca] -= v
        elif cb > ca:
            r[ca] += v
            r[cb] -= v
    cumsum_both(c, r)


@nb.njit(cache=True)
def old_pair_split_sums(codes, pairs, values, width):
    correct = np.zeros((codes.shape[1], width))
    reverse = np.zeros((codes.shape[1], width))
    for k in range(codes.shape[1]):
        _pair_split_feature(codes, pairs, values, k, correct[k], reverse[k])
    return correct, reverse


@nb.njit(cache=True)
def _pair_fit_feature(codes, pairs, weights, values, k, sg, sp):
    for p in range(pairs.shape[0]):
        ca = codes[pairs[p, 0], k]
        cb = codes[pairs[p, 1], k]
        if ca == cb:
            continue
        v = values[p]
        w = weights[p]
        sg[cb] += v
        sg[ca] -= v
        if ca > cb:
            sp[cb] += w
            sp[ca] -= w
        else:
            sp[ca] += w
            sp[cb] -= w
    cumsum_both(sg, sp)


@nb.njit(cache=True)
def old_pair_fit_sums(codes, pairs, weights, values, width):
    signed = np.zeros((codes.shape[1], width))
    split = np.zeros((codes.shape[1], width))
    for k in range(codes.shape[1]):
        _pair_fit_feature(codes, pairs, weights, values, k, signed[k], split[k])
    return signed, split


@nb.njit(cache=True)
def old_pair_sums(codes, pairs, weights, values, width, sides):
    """The module's one pair kernel (``_pair_sums``) by the earlier two."""
    if sides:
        return old_pair_split_sums(codes, pairs, values, width)
    return old_pair_fit_sums(codes, pairs, weights, values, width)


def old_log_sum_exp(a, b=None):
    return float(np.asarray(logsumexp(a, b=b)))


def old_pair_losses(pairs, F, w1, ell):
    """The pair list's R1, R2, E1, E2 with numpy's sums and scipy's logsumexp (before
    ``_rankboost_kernels.pair_losses`` made them in one pass in pair order: the same up to rounding)."""
    import math

    margin = F[pairs[:, 0]] - F[pairs[:, 1]]
    if w1 is not None:
        with np.errstate(over="ignore"):
            e1 = float(w1 @ np.exp(-margin))
        out = {"R1": float(w1[margin <= 0].sum()), "R2": float(w1[margin < 0].sum() + 0.5 * w1[margin == 0].sum()),
               "E1": e1}
        if ell.shape[0]:
            out["E2"] = float(np.exp(old_log_sum_exp(ell, w1)))
        return out
    m = margin.shape[0]
    with np.errstate(over="ignore"):
        e1 = float(np.mean(np.exp(-margin)))
    out = {"R1": float(np.count_nonzero(margin <= 0) / m),
           "R2": float((np.count_nonzero(margin < 0) + 0.5 * np.count_nonzero(margin == 0)) / m), "E1": e1}
    if ell.shape[0]:
        out["E2"] = float(np.exp(old_log_sum_exp(ell) - math.log(m)))
    return out


#: History entries the pair list sums in another order now (``pair_losses``): equal to ``E2_RTOL``.
LOSS_KEYS = ("R1", "R2", "E1", "E2")


@pytest.fixture
def earlier_code(monkeypatch):
    """A function that puts the earlier kernels back (for the rest of the test)."""
    def put_back() -> None:
        monkeypatch.setattr(stump_sums, "_pair_sums", old_pair_sums)
        monkeypatch.setattr(rankboost, "pair_losses", old_pair_losses)
    return put_back


# ---- the kernels themselves -------------------------------------------------------------------------

@pytest.mark.parametrize("n_features", [1, 7, 8, 9, 23])
@pytest.mark.parametrize("parallel", [False, True])
def test_blocked_pair_sums_equal_one_feature_at_a_time(n_features: int, parallel: bool) -> None:
    rng = np.random.default_rng(n_features)
    n, width = 300, 17
    codes = np.asfortranarray(rng.integers(0, width, size=(n, n_features)).astype(np.int32))
    pairs = rng.integers(0, n, size=(5000, 2)).astype(np.int64)
    v, w = rng.normal(size=5000), rng.random(5000) * 1e-3
    kernel = stump_sums._pair_sums if parallel else dispatch.serial_twin(stump_sums._pair_sums)
    for got, ref in ((kernel(codes, pairs, v, v, width, True), old_pair_split_sums(codes, pairs, v, width)),
                     (kernel(codes, pairs, w, v, width, False), old_pair_fit_sums(codes, pairs, w, v, width))):
        assert all(np.array_equal(g, r) for g, r in zip(got, ref))


# ---- whole fits ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("params", [{"variant": "rankboost+"}, {"variant": "rankboost+", "efficient": False},
                                    {"variant": "rb-c"}, {"variant": "rb-d"}])
def test_rankboost_pair_list_fits_as_before(earlier_code, seed: int, params: dict) -> None:
    rng = np.random.default_rng(seed)
    X, y, qid = letor_like(rng, n_queries=15) if seed else graded_data(rng)
    sw = None if seed != 2 else rng.choice([0.5, 1.0, 2.0], size=np.unique(qid).size)
    new = RankBoost(pairwise="pairs", n_rounds=40, random_state=seed, **params).fit(X, y, qid=qid, sample_weight=sw)
    earlier_code()
    old = RankBoost(pairwise="pairs", n_rounds=40, random_state=seed, **params).fit(X, y, qid=qid, sample_weight=sw)
    assert_identical_fit(new, old, X, approx=LOSS_KEYS)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("ddf", ["binary", "logdd"])
def test_mpboost_pair_list_fits_as_before(earlier_code, seed: int, ddf: str) -> None:
    X, y, qid = letor_like(np.random.default_rng(40 + seed), n_queries=15)
    new = MPBoost(ddf=ddf, pairwise="pairs", n_rounds=40, random_state=seed).fit(X, y, qid=qid)
    earlier_code()
    old = MPBoost(ddf=ddf, pairwise="pairs", n_rounds=40, random_state=seed).fit(X, y, qid=qid)
    assert_identical_fit(new, old, X)


# ---- RankBoost+'s coordinate step on the pair list: one pass over the pairs --------------------------

@pytest.mark.parametrize("seed", range(4))
def test_one_pass_step_kernels_equal_the_numpy_steps_bit_for_bit(seed: int) -> None:
    """``outcomes_eps`` is the stump's pair outcomes and Eq. 8's sums, each added pair by pair in order; ``step_outcomes`` is the log ratio of a
    new member (``lr = -alpha o``, ``ln cosh alpha`` on ties) or a moved one (``ln cosh(eta + alpha) -
    ln cosh eta`` on ties) added to ``ell`` and ``w * np.exp(lr)``, as the round made them before."""
    from boostplug.boosters._rankboost_kernels import ln_cosh, outcomes_eps, step_outcomes

    rng = np.random.default_rng(seed)
    n, P = 50, 3001
    codes = rng.integers(0, 9, size=(n, 3)).astype(np.int32)
    pairs = rng.integers(0, n, size=(P, 2)).astype(np.int64)
    w = rng.random(P)
    w /= w.sum()
    ell = rng.normal(size=P)
    for k, j in ((0, 3), (2, 0), (1, 8)):
        o, eps = outcomes_eps(codes, k, j, pairs, w)
        ref_o = (codes[pairs[:, 0], k] > j).astype(np.int8) - (codes[pairs[:, 1], k] > j).astype(np.int8)
        assert np.array_equal(o, ref_o) and o.dtype == np.int8
        assert eps == tuple(float(np.cumsum(np.where(m, w, 0.0))[-1]) for m in (ref_o > 0, ref_o == 0, ref_o < 0))
        alpha = float(rng.normal()) * 10 ** float(rng.integers(-3, 2))
        eta = np.float64(rng.normal())
        for ref_lr, tied in ((np.where(o != 0, -alpha * o, ln_cosh(eta + alpha) - ln_cosh(eta)),   # a member
                              ln_cosh(eta + alpha) - ln_cosh(eta)),
                             (None, ln_cosh(alpha))):                                                # a new one
            if ref_lr is None:
                ref_lr = -alpha * o.astype(np.float64)
                ref_lr[o == 0] = ln_cosh(alpha)
            got_ell = ell.copy()
            u = step_outcomes(o, w, got_ell, alpha, tied)
            assert np.array_equal(got_ell, ell + ref_lr)
            assert np.array_equal(u, w * np.exp(ref_lr))


@pytest.mark.parametrize("weighted", [False, True])
def test_pair_losses_equal_numpys_sums_to_rounding(weighted: bool) -> None:
    from boostplug.boosters._rankboost_kernels import pair_losses

    rng = np.random.default_rng(3)
    n, P = 40, 5000
    pairs = rng.integers(0, n, size=(P, 2)).astype(np.int64)
    F = np.round(rng.normal(size=n), 1)          # tied scores: margins of exactly 0
    ell = rng.normal(scale=30.0, size=P)
    w1 = None
    if weighted:
        w1 = rng.choice([0.0, 0.5, 1.0, 2.0], size=P)
        w1 /= w1.sum()
    for with_ell in (True, False):
        e = ell if with_ell else np.zeros(0)
        got, ref = pair_losses(pairs, F, w1, e), old_pair_losses(pairs, F, w1, e)
        assert got.keys() == ref.keys() == ({"R1", "R2", "E1", "E2"} if with_ell else {"R1", "R2", "E1"})
        for key in ref:
            assert got[key] == pytest.approx(ref[key], rel=1e-12, abs=1e-300), key
        if not weighted:   # counts: exact
            assert got["R1"] == ref["R1"] and got["R2"] == ref["R2"]
    p0 = 0 if w1 is None else int(np.flatnonzero(w1)[0])     # a pair of weight > 0 (0 * inf is NaN)
    a, b = pairs[p0]
    if a != b:                 # exp(-margin) overflows: E1 is inf on both
        F[a], F[b] = -800.0, 800.0
    else:
        pairs[p0, 1] = (a + 1) % n
        F[a], F[(a + 1) % n] = -800.0, 800.0
    with np.errstate(over="ignore", invalid="ignore"):
        assert pair_losses(pairs, F, w1, ell)["E1"] == np.inf
        # numpy's sum made it NaN when a pair of weight 0 overflowed too (0 * inf)
        old_e1 = old_pair_losses(pairs, F, w1, ell)["E1"]
        assert old_e1 == np.inf or (weighted and np.isnan(old_e1))


# ---- RankBoost+'s one pruning: the earlier blocked Gram-Schmidt of document vectors -------------------
# (verbatim but for the names and annotations: it held the basis Q and L Q as document vectors)


def _project_out(U: np.ndarray, Q: np.ndarray, LQ: np.ndarray) -> None:
    """``U -= (U LQ^T) Q`` twice (classical Gram-Schmidt with one re-orthogonalisation), in place;
    vectors are rows (of ``U``, ``Q`` and ``LQ``)."""
    if Q.shape[0]:
        for _ in range(2):
            U -= (U @ LQ.T) @ Q



# The old pruning's kernel, verbatim (the package's pruning no longer needs it)
@nb.njit(cache=True)
def _subtract_squared_sums_above(codes, pots, width, r2):
    n, n_feat = codes.shape
    B = pots.shape[1]
    hist = np.zeros((width + 1, B))
    acc = np.zeros(B)
    for k in range(n_feat):
        hist[:] = 0.0
        for i in range(n):
            row = hist[codes[i, k]]
            for b in range(B):
                row[b] += pots[i, b]
        acc[:] = 0.0
        for j in range(width - 1, -1, -1):
            for b in range(B):
                acc[b] += hist[j + 1, b]
            for b in range(B):
                r2[k, j] -= acc[b] * acc[b]


def subtract_squared_sums_above(codes: NDArray[np.int32], pots: NDArray[np.float64], n_thresholds: NDArray[np.int64],
                                r2: NDArray[np.float64]) -> None:
    """In place, for each row ``p`` of ``pots`` (``(B, n)``) in turn: ``r2 -= doc_sums_above(codes, p,
    n_thresholds) ** 2``, bit for bit (each bin adds its documents in row order, each square is taken
    off in row order), in one pass over the codes for all ``B`` rows instead of ``B`` passes."""
    width = stump_sums._width(n_thresholds)
    if r2.shape != (codes.shape[1], width) or pots.shape[1:] != (codes.shape[0],):
        raise ValueError(f"r2 {r2.shape} and pots {pots.shape} do not fit codes {codes.shape} and width {width}")
    _subtract_squared_sums_above(codes, np.ascontiguousarray(np.asarray(pots, dtype=np.float64).T), width, r2)


@pytest.mark.parametrize("n_rows", [0, 1, 5])
def test_subtract_squared_sums_above_is_doc_sums_above_row_by_row_bit_for_bit(n_rows: int) -> None:
    rng = np.random.default_rng(5)
    n, F = 70, 4
    n_thr = np.array([3, 8, 1, 5])
    codes = np.ascontiguousarray(rng.integers(0, n_thr + 1, size=(n, F)), dtype=np.int32)
    pots = rng.normal(size=(n_rows, n))
    r2 = rng.random((F, int(n_thr.max()) + 1)) * 50
    ref = r2.copy()
    for p in pots:
        ref -= stump_sums.doc_sums_above(codes, p, n_thr) ** 2
    subtract_squared_sums_above(codes, pots, n_thr, r2)
    assert np.array_equal(r2, ref)
    with pytest.raises(ValueError, match="do not fit"):
        subtract_squared_sums_above(codes, pots[:, :-1] if n_rows else np.zeros((1, n - 1)), n_thr, r2)


def old_select_independent(
    codes: np.ndarray, order: np.ndarray, span,
    nsplit: np.ndarray, n_thr: np.ndarray, cap: int, block: int = 64,
) -> np.ndarray:
    """Greedy linearly independent subset of the stumps ``order`` (``(N, 2)`` rows ``(k, j)``),
    taken in that order, together with ``span``'s members: the QR of ``[S, order]`` built
    column by column in ``span``'s pair metric (:class:`PairSpan`: its pair list and ``weights``;
    :class:`~boostplug.boosters._level_sums.LevelSpan`: label levels, no pair listed), a column whose diagonal is zero (squared residual at most ``DEPENDENT_RTOL`` times
    its squared norm ``nsplit[k, j]``) being dropped.

    Returns ``drop`` (``(N,)``): the stumps found dependent on those before them. Stops once
    the basis holds ``cap`` columns: the stumps not yet reached are kept (not dropped).

    Each candidate's squared residual ``r2`` against the basis is kept for every stump at
    once (the squared :func:`doc_sums_above` of each new basis vector taken off, one pass over
    the codes per block: :func:`subtract_squared_sums_above`), so
    a dependent stump costs ``O(1)``. The Gram-Schmidt of the survivors is blocked: the next
    ``block`` candidates are projected on the basis together (matrix-matrix products,
    ``O(n m block)``), then taken in order, each projected only on the vectors its own block
    added; one that its own block's vectors make dependent is dropped by that projection's
    residual (``r2`` catches up at the next block). Same decisions as one-at-a-time
    Gram-Schmidt; about ``n m^2`` flops in BLAS-3 instead of matrix-vector products (``m``:
    final basis size).

    Only the documents the pair metric links (:meth:`PairSpan.linked`) are held: the others'
    entries of a vector change neither its products in that metric nor its Laplacian (on
    MQ2008, the 18% of documents in queries of one label). Basis vectors are rows (``(cap, n)``),
    so the vectors a block adds are contiguous for its own candidates' projections.
    """
    linked = span.linked()
    rows = np.flatnonzero(linked)
    n = rows.shape[0]
    sub = np.ascontiguousarray(codes[rows])
    full = np.zeros(codes.shape[0])

    def laplacian_rows(u: np.ndarray) -> np.ndarray:
        full[rows] = u
        return span._laplacian(full)[rows]   # the span's own pair metric (a pair list or label levels)

    Q = np.empty((cap, n))     # rows up to m are set before they are read
    LQ = np.empty((cap, n))
    m = span.size
    Q[:m], LQ[:m] = span.Q[rows].T, span.LQ[rows].T
    r2 = nsplit.copy()
    if m:
        C = span.all_coefficients(n_thr)
        r2 -= np.einsum("kjb,kjb->kj", C, C)
    tol = DEPENDENT_RTOL * nsplit
    drop = np.zeros(order.shape[0], dtype=bool)
    m0 = m
    for start in range(0, order.shape[0], block):
        # the previous block's new vectors leave r2 (one pass over the codes for all of them)
        if m > m0:
            subtract_squared_sums_above(sub, LQ[m0:m], n_thr, r2)
        blk = order[start:start + block]
        ks, js = blk[:, 0], blk[:, 1]
        # r2 only decreases: a stump at or below tol now is dropped when its turn comes
        live = np.flatnonzero(r2[ks, js] > tol[ks, js])
        U = (sub[:, ks[live]].T > js[live, None]).astype(np.float64)
        _project_out(U, Q[:m], LQ[:m])
        column = np.full(blk.shape[0], -1)
        column[live] = np.arange(live.size)
        m0 = m
        for i in range(blk.shape[0]):
            k, j = int(ks[i]), int(js[i])
            if r2[k, j] <= tol[k, j]:
                drop[start + i] = True
                continue
            if m == cap:
                return drop
            u = U[column[i]]
            _project_out(u[None, :], Q[m0:m], LQ[m0:m])
            Lu = laplacian_rows(u)
            rr = float(u @ Lu)
            if rr <= tol[k, j]:
                drop[start + i] = True
                continue
            rho = math.sqrt(rr)
            Q[m], LQ[m] = u / rho, Lu / rho
            m += 1
    return drop


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("pairwise", ["pairs", "levels"])
@pytest.mark.parametrize("capped", [False, True])
def test_rankboost_plus_pruning_fits_as_before(monkeypatch, seed: int, pairwise: str, capped: bool) -> None:
    """The span from the stumps' products and the pruning from ``R`` and the candidates' products (no
    document vector of the basis in either) answer what the Gram-Schmidt of document vectors answered:
    the same fits bit for bit, with ~600 candidates of which about a third are dependent, and with the
    basis stopped at 150 stumps (``PRUNE_BUDGET_BYTES``)."""
    import boostplug.boosters._rankboost_plus as plus

    rng = np.random.default_rng(seed)
    X, y, qid = dependent_data(rng, n_queries=30)
    X = np.column_stack([X, np.round(rng.random((X.shape[0], 6)), 2)])
    if capped:
        monkeypatch.setattr(plus, "PRUNE_BUDGET_BYTES", 16 * X.shape[0] * 150)
    calls = []
    spy = lambda *args, **kw: calls.append(args[5]) or plus_select(*args, **kw)   # noqa: E731
    plus_select = plus.select_independent
    monkeypatch.setattr(plus, "select_independent", spy)
    new = RankBoost(variant="rankboost+", pairwise=pairwise, n_rounds=60, random_state=seed).fit(X, y, qid=qid)
    plus_select = old_select_independent
    monkeypatch.setattr(RankBoost, "_span_products", lambda *args: None)   # the span's vectors, as before
    old = RankBoost(variant="rankboost+", pairwise=pairwise, n_rounds=60, random_state=seed).fit(X, y, qid=qid)
    assert new.pruned_round_ is not None and len(calls) == 2 and (calls[0] == 150) == capped
    assert_identical_fit(new, old, X)
