"""Faster kernels of the reference boosters, the same numbers bit for bit.

Each speed-up here keeps every floating-point operation of the code it replaced, in the same order:
the earlier code is kept below as the reference (verbatim), and the fits made with it and without it
are compared bit for bit (rankers, weights, predictions and every history field).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest
from scipy.special import logsumexp
from tests.boosters._helpers import assert_identical_fit, graded_data, letor_like

import boostplug.boosters._stump_sums as stump_sums
import boostplug.boosters.rankboost as rankboost
from boostplug._core import dispatch
from boostplug.boosters import MPBoost, RankBoost
from boostplug.boosters._rankboost_kernels import log_sum_exp
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


def old_log_sum_exp(a, b=None):
    return float(np.asarray(logsumexp(a, b=b)))


@pytest.fixture
def earlier_code(monkeypatch):
    """A function that puts the earlier kernels back (for the rest of the test)."""
    def put_back() -> None:
        monkeypatch.setattr(stump_sums, "_pair_split_sums", old_pair_split_sums)
        monkeypatch.setattr(stump_sums, "_pair_fit_sums", old_pair_fit_sums)
        monkeypatch.setattr(rankboost, "log_sum_exp", old_log_sum_exp)
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
    split = stump_sums._pair_split_sums if parallel else dispatch.serial_twin(stump_sums._pair_split_sums)
    fit = stump_sums._pair_fit_sums if parallel else dispatch.serial_twin(stump_sums._pair_fit_sums)
    for got, ref in ((split(codes, pairs, v, width), old_pair_split_sums(codes, pairs, v, width)),
                     (fit(codes, pairs, w, v, width), old_pair_fit_sums(codes, pairs, w, v, width))):
        assert all(np.array_equal(g, r) for g, r in zip(got, ref))


def test_log_sum_exp_is_scipys_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    for trial in range(400):
        n = int(rng.integers(1, 3000))
        a = rng.normal(scale=rng.choice([0.1, 1.0, 30.0, 300.0]), size=n)
        if trial % 3 == 0:
            a = np.round(a, 1)                      # several maxima
        b = None if trial % 2 else rng.choice([0.0, 0.5, 1.0, 2.0], size=n) / 7.0
        if b is not None and not b.any():
            b[0] = 1.0
        assert log_sum_exp(a, b) == old_log_sum_exp(a, b), trial
    assert log_sum_exp(np.array([0.0, np.inf])) == old_log_sum_exp(np.array([0.0, np.inf]))


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
    assert_identical_fit(new, old, X)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("ddf", ["binary", "logdd"])
def test_mpboost_pair_list_fits_as_before(earlier_code, seed: int, ddf: str) -> None:
    X, y, qid = letor_like(np.random.default_rng(40 + seed), n_queries=15)
    new = MPBoost(ddf=ddf, pairwise="pairs", n_rounds=40, random_state=seed).fit(X, y, qid=qid)
    earlier_code()
    old = MPBoost(ddf=ddf, pairwise="pairs", n_rounds=40, random_state=seed).fit(X, y, qid=qid)
    assert_identical_fit(new, old, X)
