"""Stump MPBoost refuses, before training, directed distances it cannot train with (issue 22
item 6): the parameters take the objective's ranges, and |dist| of the fit's preference pairs
must lie in [DIST_MIN, DIST_MAX] (boostplug.boosters._ddf_range). These values used to raise a
bare ZeroDivisionError, FloatingPointError or IndexError from inside the rounds."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from boostplug.boosters import MPBoost
from boostplug.boosters._ddf_range import DIST_MAX, DIST_MIN, grade_gap_range
from boostplug.boosters._fit_data import FitData
from boostplug.compare.methods import get_method
from boostplug.pairs import critical_pairs


def _data(scale: float = 1.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4))
    y = rng.integers(0, 3, 60).astype(np.float64) * scale
    return X, y, np.repeat(np.arange(6), 10)


def test_the_limits_are_where_float64_ends():
    assert math.isfinite(math.exp(DIST_MAX ** 2)) and DIST_MAX == pytest.approx(26.64, abs=0.01)
    with pytest.raises(OverflowError):
        math.exp((DIST_MAX * (1 + 1e-9)) ** 2)
    assert DIST_MIN ** 2 * 1e-10 == pytest.approx(np.finfo(np.float64).tiny)


# (parameters, label scale, the parameter and |dist| the message names)
CASES = [
    (dict(ddf="ldd", alpha=1e-300), 1.0, "alpha=1e-300 gives |dist| = 1e-300"),
    (dict(ddf="logdd", lam=1e-300), 1.0, "lam=1e-300 gives |dist| = 1e-300"),
    (dict(ddf="logdd", lam=1e15), 1.0, "lam=1000000000000000.0 gives |dist| = 34.53"),
    (dict(ddf="logdd", lam=1e300), 1.0, "lam=1e+300 gives |dist| = 690.77"),
    (dict(ddf="logdd"), 1e300, "lam=3.0 gives |dist| = 691.87"),
    (dict(ddf="ldd"), 1e300, "alpha=0.2 gives |dist| = 2e+299"),
    (dict(ddf="ldd", alpha=7.0), 2.0, "alpha=7.0 gives |dist| = 28.0"),  # labels 0, 2, 4: d = 14, 28
]


@pytest.mark.parametrize("pairwise", ["auto", "levels", "pairs", "explicit"])
@pytest.mark.parametrize("params, scale, named", CASES, ids=[c[2].split(" gives")[0] + f"-y*{c[1]:g}" for c in CASES])
def test_distances_the_booster_cannot_train_with_are_a_value_error_naming_the_parameter(params, scale, named,
                                                                                         pairwise):
    X, y, qid = _data(scale)
    kw = {}
    if pairwise == "explicit":
        kw["pairs"] = critical_pairs(y, np.arange(0, 61, 10))
        pairwise = "auto"
    with pytest.raises(ValueError, match=rf"^MPBoost: ddf='{params['ddf']}' with {re.escape(named)}.* for the grade "
                                         r"difference .*\|dist\| must be in \[1.49e-149, 26.64\].*exp\(max dist\^2\)"):
        MPBoost(n_rounds=5, pairwise=pairwise, **params).fit(X, y, qid=qid, **kw)


@pytest.mark.parametrize("pairwise", ["levels", "pairs"])
def test_just_inside_the_range_the_fit_is_finite(pairwise):
    """alpha just under DIST_MAX / 4 on grades 0-4 and just over DIST_MIN on grades 0-1 train."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, 200).astype(np.float64)
    X = np.column_stack([y + rng.normal(size=200), rng.normal(size=(200, 3))])
    qid = np.repeat(np.arange(10), 20)
    big = MPBoost(ddf="ldd", alpha=DIST_MAX / 4 * 0.999, n_rounds=30, pairwise=pairwise).fit(X, y, qid=qid)
    assert len(big.rankers_) == 30
    assert all(math.isfinite(h["Z"]) and math.isfinite(h["bound"]) for h in big.history_)
    assert np.isfinite(big.predict(X)).all()
    y01 = (y > 2).astype(np.float64)
    tiny = MPBoost(ddf="ldd", alpha=DIST_MIN * 1.01, n_rounds=3, pairwise=pairwise).fit(X, y01, qid=qid)
    usual = MPBoost(ddf="ldd", alpha=0.2, n_rounds=1, pairwise=pairwise).fit(X, y01, qid=qid)
    # the stump criterion N^2 / D scales with d^2: the first stump is the same at any alpha
    assert tiny.rankers_[0] == usual.rankers_[0]
    with pytest.raises(ValueError, match=r"alpha=1.4\d*e-149 gives"):
        MPBoost(ddf="ldd", alpha=DIST_MIN * 0.99, n_rounds=3, pairwise=pairwise).fit(X, y01, qid=qid)


def test_binary_and_logitdd_take_any_labels():
    X, y, qid = _data(1e300)
    for ddf in ("binary", "logitdd"):
        assert len(MPBoost(ddf=ddf, n_rounds=3).fit(X, y, qid=qid).rankers_) == 3


def test_parameter_ranges_are_the_objectives():
    X, y, qid = _data()
    with pytest.raises(ValueError, match=r"alpha for ddf='ldd' must be a positive finite number in \(0, 1e\+15\], "
                                         r"got 1e\+16"):
        MPBoost(ddf="ldd", alpha=1e16, n_rounds=2).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"lam for ddf='logdd' must be a positive finite number .* got inf"):
        MPBoost(ddf="logdd", lam=math.inf, n_rounds=2).fit(X, y, qid=qid)


def test_compare_refuses_the_setting_before_training():
    with pytest.raises(ValueError, match=r"mpboost-stumps.*lam=1000000000000000.0 gives \|dist\|"):
        get_method("mpboost-stumps[lam=1e15]")


def _brute_gaps(y, gp, pairs=None):
    if pairs is None:
        pairs = [(i, j) for a, b in zip(gp[:-1], gp[1:]) for i in range(a, b) for j in range(a, b) if y[i] > y[j]]
    d = [y[i] - y[j] if y[i] > y[j] else 1.0 for i, j in pairs]
    return [min(d), max(d)] if d else []


@pytest.mark.parametrize("seed", range(30))
def test_grade_gap_range_equals_the_pairs_brute_force(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=rng.integers(1, 5))
    gp = np.concatenate(([0], np.cumsum(sizes)))
    n = int(gp[-1])
    y = rng.choice([0.0, 0.5, 1.0, 3.0, 7.25], size=n) * (rng.random() < 0.8)
    X = rng.normal(size=(n, 2))
    data = FitData.prepare(X, y, qid=None, group=sizes, pairs=None, sample_weight=None, random_state=0)
    assert grade_gap_range(data).tolist() == _brute_gaps(y, gp)
    pairs = rng.integers(0, n, size=(rng.integers(0, 6), 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    data = FitData.prepare(X, y, qid=None, group=sizes, pairs=pairs, sample_weight=None, random_state=0)
    assert grade_gap_range(data).tolist() == _brute_gaps(y, gp, pairs.tolist())
