"""Stump MPBoost's pair-free path made faster, the same numbers as before.

Each speed-up keeps the floating-point operations of the code it replaced, in the same order (or, for
the history's ``misorder``, counts the same integers): the earlier code is kept below as the
reference (verbatim), and the fits made with it and without it are compared bit for bit (rankers,
weights, predictions and every history field), as in ``test_same_bits.py``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import pytest
from tests.boosters._helpers import assert_identical_fit, graded_data, letor_like, small_data

import boostplug.boosters._level_sums as level_sums
from boostplug.boosters._estimator import Round
from boostplug.boosters._stump_sums import best_fit_stump, pair_fit_sums
from boostplug.boosters.mpboost import SPLIT_RTOL
from boostplug.boosters.stumps import TIE_RTOL, argmax_first
from boostplug._core import dispatch
from boostplug.boosters import MPBoost
from boostplug.boosters._level_sums import DirectedLevelPairs, LevelPairs, _static
from boostplug.boosters._stump_sums import cumsum_both


# ---- the earlier kernels -------------------------------------------------------------------------

@nb.njit(cache=True)
def old_directed_fit_sums(scodes, order, group_ptr, lev, R, coef, width, levels):
    """Per feature, the unnormalised ``N`` (signed) and ``D`` (split) of every stump: each
    query's documents in code order (``order``; ``scodes`` their codes) move below the threshold one
    by one; each adds its :func:`_directed_terms` ``g`` to ``N`` and ``h - 2 coef_q sum_m e_m
    B[m, l]`` to ``D``, with ``B[m, l]`` the sums of ``E[:, l]`` over the level-``m`` documents
    already below, so a document costs ``O(L)`` and a code nothing more. The sums are constant from
    one code of the query to the next: a difference array over the thresholds gets their change at
    each code (one write per code and sum). The sweep stops at the query's highest code: thresholds
    at or above it split nothing, so its documents are not visited. ``R`` from
    :func:`_directed_terms`; ``levels``: :func:`_static` of ``L``, which unrolls the loop over
    the levels (about a quarter of the sweep's time)."""
    nf = scodes.shape[1]
    L = len(levels)
    signed = np.zeros((nf, width + 1))
    split = np.zeros((nf, width + 1))
    for k in range(nf):
        below = np.zeros((L, L))
        for q in range(group_ptr.shape[0] - 1):
            start, stop = group_ptr[q], group_ptr[q + 1]
            if stop - start < 2:
                continue
            c = scodes[start, k]
            top = scodes[stop - 1, k]
            if c == top:           # one code: no threshold splits the query
                continue
            below[:, :] = 0.0
            twice = 2.0 * coef[q]
            sg = 0.0
            sp = 0.0
            prev_g = 0.0
            prev_p = 0.0
            p = start
            while True:
                # unsigned: row and level index the arrays with no negative-index test
                x = nb.uint64(order[p, k])
                lx = nb.uint64(lev[x])
                cross = 0.0
                for m in range(L):     # E[x, lx] = 0: the m = lx term adds nothing
                    e = R[x, m]
                    cross += e * below[m, lx]
                    below[lx, m] += e
                sg += R[x, L]
                sp += R[x, L + 1] - twice * cross
                p += 1
                c2 = scodes[p, k]
                if c2 == c:
                    continue
                signed[k, c] += sg - prev_g
                split[k, c] += sp - prev_p
                prev_g = sg
                prev_p = sp
                c = c2
                if c == top:
                    break
            signed[k, c] -= prev_g
            split[k, c] -= prev_p
        cumsum_both(signed[k], split[k])
    return signed[:, :width], split[:, :width]


@nb.njit(cache=True)
def old_directed_terms(F, group_ptr, lev, dd, coef):
    """``(R, tot)`` of the scores ``F``, one query at a time.

    ``R[:, :L] = E``: ``E[x, m] = exp(-d_{l m} (F_x - s_q))`` for a lower level ``m < l = lev[x]``,
    ``exp(d_{m l} (F_x - s_q))`` for a higher one (0 at ``m = l``), so a pair's weight
    ``exp(-d_ab (F_i - F_j))`` is ``E[i, b] * E[j, a]`` (the shift ``s_q`` cancels).
    ``tot[q, l, m]``: the sums of ``E[:, m]`` over the query's level-``l`` documents (``T = tot[q]``).
    ``R[x, L]`` and ``R[x, L + 1]``: what moving ``x`` below a threshold adds to its query's sums,
    the part that does not depend on the other documents below:
    ``g[x] = coef_q (sum_{m > l} d_ml T_ml e_m - sum_{m < l} d_lm T_ml e_m)`` to ``N`` (all of it:
    ``N``'s pair term ``T_ab B_ba - B_ab T_ba`` is linear in the running sums ``B``) and
    ``h[x] = coef_q sum_m T_ml e_m`` to ``D`` (whose term ``T_ab B_ba + B_ab T_ba - 2 B_ab B_ba``
    also has a product of running sums). One row per document: the sweep gathers a document's
    whole record from one place."""
    L = dd.shape[0]
    R = np.zeros((F.shape[0], L + 2))
    tot = np.zeros((group_ptr.shape[0] - 1, L, L))
    for q in range(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        if b == a:
            continue
        lo, hi = level_sums._range(F, a, b)
        s = 0.5 * (lo + hi)
        tq = tot[q]
        for i in range(a, b):
            l = lev[i]
            g = F[i] - s
            for m in range(l):
                R[i, m] = math.exp(-dd[l, m] * g)
            for m in range(l + 1, L):
                R[i, m] = math.exp(dd[m, l] * g)
            for m in range(L):
                tq[l, m] += R[i, m]
        cq = coef[q]
        for x in range(a, b):
            l = lev[x]
            sg = 0.0
            sp = 0.0
            for m in range(l):
                v = R[x, m] * tq[m, l]
                sg -= dd[l, m] * v
                sp += v
            for m in range(l + 1, L):
                v = R[x, m] * tq[m, l]
                sg += dd[m, l] * v
                sp += v
            R[x, L] = cq * sg
            R[x, L + 1] = cq * sp
    return R, tot


def old_terms(self, F, out=None):
    return old_directed_terms(np.ascontiguousarray(F, dtype=np.float64), self.group_ptr, self.lev, self.dd, self.coef)


def old_fit_sums(self, R, sorted_codes, order, width):
    return old_directed_fit_sums(sorted_codes, order, self.group_ptr, self.lev, R, self.coef, width,
                                 _static(self.n_levels))


def old_stump_sums(self, s):
    """``(N, D)`` of every stump: ``N = sum_A1 w d - sum_B2 w d``, ``D = sum_A1 w + sum_B2 w``,
    both summed over the pairs the stump splits (one pass over the pairs, or over the
    documents in code order per level pair when pair-free)."""
    if s.lv is not None:
        N, D = s.lv.fit_sums(s.R, s.sorted_codes, s.order, s.cands.width)
        return N / s.W, D / s.W
    return pair_fit_sums(s.cands.codes, s.pairs, s.w, s.w * s.d, s.cands.n_thr)

def old_fit_round(self, s, t):
    if s.n_pairs == 0:
        self._stop_reason = "no preference pairs in the training data"
        return None
    N, D = old_stump_sums(self, s)
    c = s.C / s.W if s.lv is not None else float(s.w @ (s.d * s.d))
    w_sum = 1.0 if s.lv is not None else float(s.w.sum())
    # a stump splitting less weight than this cannot reach the stopping threshold, or its
    # N and D are within rounding of their size (module docstring)
    floor = max(TIE_RTOL * c / s.d2_max, SPLIT_RTOL * w_sum)
    ok = s.cands.exists & (D > floor)
    gain = np.where(ok, N * N / np.where(ok, D, 1.0), 0.0)  # J_wse = sum w d^2 - N^2 / D
    idx = argmax_first(gain.ravel(), TIE_RTOL * c)
    k, j = np.unravel_index(idx, gain.shape)
    if gain[k, j] <= TIE_RTOL * c:
        self._stop_reason = "no stump reduces the weighted squared error (Eq. 12)"
        return None
    a = float(N[k, j] / D[k, j])
    f = a * s.cands.vector(int(k), int(j))
    z = self._reweight(s, f)
    if s.lv is not None:
        # the history's misorder as MPBoost took it before: R1 of the rates RankBoost's levels give
        misorder = LevelPairs.rates(s.lv, s.F, f != 0.0)[0]
    else:
        wrong = s.F[s.pairs[:, 0]] <= s.F[s.pairs[:, 1]]
        misorder = float(np.mean(wrong)) if s.w1 is None else float(s.w1[wrong].sum())
    rec = {"a": a, "Z": z, "bound": math.exp(s.log_bound), "misorder": misorder,
           "wse": c - float(gain[k, j])}
    return Round(s.cands.stump(int(k), int(j)), a, rec)


#: What the earlier code was, as (owner, name, earlier function).
EARLIER = [(DirectedLevelPairs, "fit_sums", old_fit_sums), (DirectedLevelPairs, "terms", old_terms),
           (MPBoost, "_fit_round", old_fit_round)]


@pytest.fixture
def earlier_code(monkeypatch):
    """A function that puts the earlier code back (for the rest of the test)."""
    return lambda: [monkeypatch.setattr(owner, name, fn) for owner, name, fn in EARLIER]


def _data(seed: int):
    """Data with the cases the sweeps skip or special-case: a one-document query, a query of one
    grade, tied and missing values (graded_data), or LETOR-shaped queries with few grades."""
    rng = np.random.default_rng(seed)
    if seed % 3 == 0:
        return graded_data(rng, n_queries=12)
    if seed % 3 == 1:
        X, y, qid = letor_like(rng, n_queries=25)
        y[qid == qid[0]] = 0.0            # a query of one grade (MQ2008 has many)
        return X, y, qid
    X, y, qid, _ = small_data(rng, n_queries=10, max_docs=15, n_feat=5, n_labels=3)
    return X, y, qid


# ---- the kernels themselves -------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("parallel", [False, True])
def test_fit_sums_equal_the_earlier_sweep_bit_for_bit(seed: int, parallel: bool) -> None:
    X, y, qid = _data(seed)
    model = MPBoost(pairwise="levels", n_rounds=3, random_state=seed)
    from boostplug.boosters._fit_data import FitData

    data = FitData.prepare(X, y, qid=qid, group=None, pairs=None, sample_weight=None, random_state=seed)
    s = model._fit_init(data)
    rng = np.random.default_rng(seed)
    R, _ = s.lv.terms(rng.normal(size=X.shape[0]))
    kernel = level_sums._directed_fit_sums if parallel else dispatch.serial_twin(level_sums._directed_fit_sums)
    lv = s.lv
    got = kernel(s.sorted_codes, s.order, lv.group_ptr, lv.paired, lv.lev, R, lv.coef, s.cands.width,
                 _static(lv.n_levels))
    ref = old_fit_sums(lv, R, s.sorted_codes, s.order, s.cands.width)
    assert all(np.array_equal(g, r) for g, r in zip(got, ref))
    assert np.any(got[1] != 0.0)


@pytest.mark.parametrize("seed", range(6))
def test_terms_equal_the_earlier_ones_where_they_are_used(seed: int) -> None:
    """``R`` on the queries with pairs (the only rows the sweep reads) and ``W``, ``C`` bit for bit,
    written into a fresh ``R`` or an earlier one; a one-level query whose factors overflow still
    makes ``W`` not finite, as before (the fit then leaves the levels)."""
    X, y, qid = _data(seed)
    group_ptr = np.concatenate(([0], np.cumsum(np.unique(qid, return_counts=True)[1])))
    lv = DirectedLevelPairs(y, group_ptr, None, lambda dl: np.log1p(3.0 * dl))
    rng = np.random.default_rng(seed)
    rows = np.isin(lv.query, lv.paired)
    assert rows.any() and not rows.all()      # queries with pairs and without
    earlier = None
    for scale in (1.0, 30.0, 1e3):
        F = rng.normal(size=y.shape[0]) * scale
        new_R, new_tot = lv.terms(F, out=earlier)
        old_R, old_tot = old_terms(lv, F)
        assert np.array_equal(new_R[rows], old_R[rows], equal_nan=True)
        got, ref = lv.weight_sums(new_tot), lv.weight_sums(old_tot)
        assert got == ref or (np.isnan(got).any() and np.isnan(ref).any())
        earlier = new_R
    one = np.flatnonzero(~np.isin(np.arange(group_ptr.shape[0] - 1), lv.paired))
    q = one[np.diff(group_ptr)[one] >= 2][0]
    F = np.zeros(y.shape[0])
    F[group_ptr[q]] = 2000.0                   # only a pairless query's scores span beyond exp's range
    got, ref = lv.weight_sums(lv.terms(F)[1]), lv.weight_sums(old_terms(lv, F)[1])
    assert not np.isfinite(got[0]) and not np.isfinite(ref[0])


@pytest.mark.parametrize("seed", range(4))
def test_query_code_order_is_the_lexsort(seed: int) -> None:
    """The one-key stable sort gives numpy's ``lexsort((codes, query))`` per feature (query, then code,
    then row), also with queries not in contiguous rows, empty queries and one feature."""
    rng = np.random.default_rng(seed)
    n, nf = int(rng.integers(1, 300)), int(rng.integers(1, 6))
    codes = np.asfortranarray(rng.integers(0, [3, 40, 256, 1][seed], size=(n, nf)).astype(np.int32))
    query = rng.integers(0, 9, size=n) if seed % 2 else np.sort(rng.integers(0, 9, size=n))
    got = level_sums.query_code_order(codes, query)
    assert got.dtype == np.int32 and got.flags.f_contiguous
    for k in range(nf):
        assert np.array_equal(got[:, k], np.lexsort((codes[:, k], query)))


@pytest.mark.parametrize("seed", range(8))
def test_best_fit_stump_is_the_numpy_choice(seed: int) -> None:
    """The kernel's stump, ``N``, ``D`` and gain are those of the numpy expressions it replaced, on
    sums with ties (equal and within ``tol``), stumps below the floor and entries past ``n_thr``."""
    rng = np.random.default_rng(seed)
    nf, width = 7, 12
    scale = [1.0, 3.7, 1e-200][seed % 3]
    N = np.round(rng.normal(size=(nf, width)), 1) * scale
    D = np.round(rng.random((nf, width)), 1) * scale
    n_thr = rng.integers(0, width, size=nf)
    floor = 0.15
    tol = [0.0, 1e-12, 0.05][seed % 3]
    Nn, Dn = N / scale, D / scale
    exists = np.arange(width)[None, :] < n_thr[:, None]
    ok = exists & (Dn > floor)
    gain = np.where(ok, Nn * Nn / np.where(ok, Dn, 1.0), 0.0)
    k, j = np.unravel_index(argmax_first(gain.ravel(), tol), gain.shape)
    got = np.full((nf, width), np.nan)
    assert best_fit_stump(N, D, n_thr, scale, floor, tol, got) == k * width + j
    assert np.array_equal(got, gain)


# ---- whole fits ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ddf", ["binary", "logdd", "ldd"])
@pytest.mark.parametrize("pairwise", ["levels", "pairs"])
def test_mpboost_fits_as_before(earlier_code, seed: int, ddf: str, pairwise: str) -> None:
    """Both paths (the pair list shares the choice of the stump), weighted queries on odd seeds."""
    X, y, qid = _data(seed)
    sw = None if seed % 2 == 0 else np.random.default_rng(seed).choice([0.5, 1.0, 2.0], size=np.unique(qid).size)
    params = {"ddf": ddf, "pairwise": pairwise, "n_rounds": 40, "random_state": seed}
    new = MPBoost(**params).fit(X, y, qid=qid, sample_weight=sw)
    earlier_code()
    old = MPBoost(**params).fit(X, y, qid=qid, sample_weight=sw)
    assert len(new.history_) > 5
    assert_identical_fit(new, old, X)
