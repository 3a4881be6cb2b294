"""Stump MPBoost (Zhu et al. 2009) against a slow pure-Python Algorithm 1, Theorem 1, and the estimator contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug.boosters import MPBoost
from boostplug.pairs import critical_pairs
from tests.boosters._helpers import assert_estimator_contract, slow_pairs, small_data

PARAMS = {"binary": 0.0, "ldd": 0.2, "logdd": 3.0, "logitdd": 0.5}


# ---- a slow, obviously-correct Algorithm 1 ------------------------------------------
def slow_dist(delta: float, ddf: str, p: float) -> float:
    """Eq. 2, 6, 7, 8 written out."""
    s = 1.0 if delta > 0 else (-1.0 if delta < 0 else 0.0)
    if ddf == "binary":
        return s
    if ddf == "ldd":
        return p * delta
    if ddf == "logdd":
        return s * math.log(1.0 + p * abs(delta))
    return s / (1.0 + math.exp(-p * abs(delta)))


def fires(x: float, theta: float) -> int:
    return 0 if math.isnan(x) else int(x > theta)


def slow_thresholds(col: np.ndarray) -> list[float]:
    """Every distinct known value, and -inf when a value is missing (the "all" candidates)."""
    vals = sorted({float(v) for v in col if not math.isnan(v)})
    return ([-math.inf] if np.isnan(col).any() else []) + vals


def slow_mpboost(X, y, sizes, ddf, p, n_rounds):
    """Algorithm 1 with the appendix's stumps: every stump, every pair, J_wse summed directly."""
    pairs = slow_pairs(y, sizes)
    d = [slow_dist(y[i] - y[j], ddf, p) for i, j in pairs]
    w = [1.0 / len(pairs)] * len(pairs)
    rounds = []
    for _ in range(n_rounds):
        c = sum(wp * dp * dp for wp, dp in zip(w, d))
        cands = []
        for k in range(X.shape[1]):
            for theta in slow_thresholds(X[:, k]):
                num = den = 0.0
                for (i, j), wp, dp in zip(pairs, w, d):
                    hi, hj = fires(X[i, k], theta), fires(X[j, k], theta)
                    if hi and not hj:      # A1
                        num += wp * dp
                        den += wp
                    elif hj and not hi:    # B2
                        num -= wp * dp
                        den += wp
                a = num / den if den > 0 else 0.0
                J = sum(wp * (dp - a * (fires(X[i, k], theta) - fires(X[j, k], theta))) ** 2
                        for (i, j), wp, dp in zip(pairs, w, d))
                cands.append((J, k, theta, a))
        jmin = min(cd[0] for cd in cands)
        J, k, theta, a = next(cd for cd in cands if cd[0] <= jmin + 1e-10 * c)
        if J >= c - 1e-10 * c:
            break
        u = [wp * math.exp(-dp * a * (fires(X[i, k], theta) - fires(X[j, k], theta)))
             for (i, j), wp, dp in zip(pairs, w, d)]
        z = sum(u)
        w = [v / z for v in u]
        rounds.append((k, theta, a, z, J))
    return rounds


def normalised_loss(scores, y, qid, d_fn) -> tuple[float, float]:
    """(normalised mis-ordering, sum_I w1 exp(-d (F_i - F_j))) over the critical pairs."""
    gp = np.concatenate(([0], np.cumsum(np.bincount(qid))))
    P = critical_pairs(y, gp)
    d = d_fn(y[P[:, 0]] - y[P[:, 1]])
    diff = scores[P[:, 0]] - scores[P[:, 1]]
    return float(np.mean(diff <= 0)), float(np.mean(np.exp(-d * diff)))


# ---- against the slow version ---------------------------------------------------------
@pytest.mark.parametrize("ddf", list(PARAMS))
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_slow_algorithm(ddf: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    X, y, qid, sizes = small_data(rng)
    model = MPBoost(ddf=ddf, n_rounds=20, thresholds="all").fit(X, y, qid=qid)
    ref = slow_mpboost(X, y, sizes, ddf, PARAMS[ddf], 20)
    assert len(ref) == len(model.rankers_) > 0
    for (k, theta, a, z, J), r, w, h in zip(ref, model.rankers_, model.weights_, model.history_):
        assert (r["feature"], r["threshold"]) == (k, theta)
        assert w == pytest.approx(a, rel=1e-9, abs=1e-12)
        assert h["Z"] == pytest.approx(z, rel=1e-10)
        assert h["wse"] == pytest.approx(J, rel=1e-8, abs=1e-14)


def test_choice_is_least_squares_not_largest_a() -> None:
    """The criterion is N^2 / D (Eq. 19 at its optimum), not |a| = |N| / D; worked by hand.

    One query, five relevant then five irrelevant documents, 25 pairs, BINARY (d = 1).
    Feature 0 fires on document 0 only: A1 = 5 pairs, a = 1, N^2/D = (5/25)^2/(5/25) = 0.2.
    Feature 1 fires on 0, 1, 2, 3 and the irrelevant 5: A1 = 4 x 4 = 16, B2 = {(4, 5)},
    a = 15/17 < 1 but N^2/D = (15/25)^2 / (17/25) = 0.529: feature 1 wins.
    """
    X = np.zeros((10, 2))
    X[0, 0] = 1.0
    X[[0, 1, 2, 3, 5], 1] = 1.0
    y = np.array([1.0] * 5 + [0.0] * 5)
    model = MPBoost(ddf="binary", n_rounds=1, thresholds="all").fit(X, y, qid=np.zeros(10))
    assert model.rankers_[0] == {"kind": "stump", "feature": 1, "threshold": 0.0}
    assert model.weights_[0] == pytest.approx(15 / 17, rel=1e-14)
    assert model.history_[0]["wse"] == pytest.approx(1.0 - 225 / (25 * 17), rel=1e-12)


# ---- Theorem 1 ----------------------------------------------------------------------------
@pytest.mark.parametrize("ddf", list(PARAMS))
def test_theorem1_bound_every_round(ddf: str) -> None:
    from boostplug.objectives.ddf import ddf_values

    rng = np.random.default_rng(7)
    X, y, qid, _ = small_data(rng, n_queries=8, max_docs=12, n_feat=4, n_labels=5)
    model = MPBoost(ddf=ddf, n_rounds=25, random_state=0).fit(X, y, qid=qid)
    assert len(model.history_) > 5
    for scores, h in zip(model.staged_predict(X), model.history_):
        mis, loss = normalised_loss(scores, y, qid, lambda dl: ddf_values(dl, ddf, PARAMS[ddf]))
        assert h["misorder"] == pytest.approx(mis, abs=1e-15)
        # prod Z_t is exactly the normalised loss Eq. 10 of the ensemble (proof of Theorem 1) ...
        assert h["bound"] == pytest.approx(loss, rel=1e-10)
        # ... and bounds the normalised mis-ordering
        assert h["misorder"] <= h["bound"] + 1e-12
    bounds = [h["bound"] for h in model.history_]
    assert bounds[-1] < bounds[0]


def nearly_separable_data(seed: int):
    """The audit's generator: 1-3 queries of 2-6 documents, grades 0-2, 1-3 features that are the
    grade plus noise (rounded: ties), 10% missing. Most seeds are separable by stumps, so pair
    weights fall below 1e-30 within a few hundred rounds."""
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 4))
    sizes = rng.integers(2, 7, size=nq)
    n = int(sizes.sum())
    y = rng.integers(0, 3, size=n).astype(np.float64)
    nf = int(rng.integers(1, 4))
    X = np.round(y[:, None] + rng.normal(scale=rng.choice([0.1, 0.5, 1.0]), size=(n, nf)), 1)
    X[rng.random((n, nf)) < 0.1] = np.nan
    return X, y, np.repeat(np.arange(nq), sizes)


@pytest.mark.parametrize("ddf", ["logdd", "binary"])
@pytest.mark.parametrize("seed", [10, 22, 0, 2])
def test_theorem1_over_hundreds_of_rounds(ddf: str, seed: int) -> None:
    """300 rounds: the pair weights fall far below 1e-30 (prod Z_t reaches 1e-250) and a = N / D
    must stay the least-squares value (|a| <= max d), finite, with Theorem 1 every round. With N
    from per-document potentials, rounding noise of ~1e-16 made seed 22 take a = 7.7e17 in round
    164 (mis-ordering 0.45 above a bound of 1.6e-23) and seed 10 overflow to NaN weights."""
    from boostplug.objectives.ddf import ddf_values

    X, y, qid = nearly_separable_data(seed)
    d_fn = lambda dl: ddf_values(dl, ddf, PARAMS[ddf])  # noqa: E731
    with np.errstate(over="raise", divide="raise", invalid="raise"):   # no overflow, no 0/0 in the fit
        model = MPBoost(ddf=ddf, n_rounds=300, thresholds="all").fit(X, y, qid=qid)
    assert len(model.history_) == 300 and model.stop_reason_ == "n_rounds reached"
    d_max = float(d_fn(np.array([2.0]))[0])
    for scores, h in zip(model.staged_predict(X), model.history_):
        assert np.isfinite(scores).all() and math.isfinite(h["Z"]) and 0.0 < h["Z"]
        assert abs(h["a"]) <= d_max * (1 + 1e-9)
        mis, loss = normalised_loss(scores, y, qid, d_fn)
        assert h["misorder"] == mis
        assert h["misorder"] <= h["bound"]
        assert h["bound"] == pytest.approx(loss, rel=1e-9)
    assert model.history_[-1]["bound"] < 1e-8 and model.history_[-1]["misorder"] == 0.0


def test_ranklib_candidates_predict_what_was_trained(rng: np.random.Generator) -> None:
    from boostplug.objectives.ddf import ddf_values

    X, y, qid, _ = small_data(rng, n_queries=6, max_docs=10, n_feat=3)
    X = X * 1.1  # values not representable in float32
    model = MPBoost(ddf="logitdd", n_rounds=10, thresholds="ranklib", n_thresholds=5).fit(X, y, qid=qid)
    assert all(r.get("float32") for r in model.rankers_)
    _, loss = normalised_loss(model.predict(X), y, qid, lambda dl: ddf_values(dl, "logitdd", 0.5))
    assert model.history_[-1]["bound"] == pytest.approx(loss, rel=1e-10)


# ---- pairs, degenerate data ------------------------------------------------------------------
def test_explicit_pairs(rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng, n_queries=6)
    gp = np.concatenate(([0], np.cumsum(np.bincount(qid))))
    a = MPBoost(ddf="ldd", n_rounds=8, thresholds="all", pairwise="pairs").fit(X, y, qid=qid)
    b = MPBoost(ddf="ldd", n_rounds=8, thresholds="all").fit(X, y, qid=qid, pairs=critical_pairs(y, gp))
    assert a.rankers_ == b.rankers_ and a.weights_ == b.weights_
    # a preference between equal grades counts as one grade apart: ldd gives d = 0.2, binary d = 1,
    # so the first stump is the same and its a scales by 0.2
    flat = np.zeros_like(y)
    c = MPBoost(ddf="ldd", n_rounds=1, thresholds="all").fit(X, flat, qid=qid, pairs=critical_pairs(y, gp))
    ones = MPBoost(ddf="binary", n_rounds=1, thresholds="all").fit(X, flat, qid=qid, pairs=critical_pairs(y, gp))
    assert c.rankers_ == ones.rankers_
    assert c.weights_[0] == pytest.approx(0.2 * ones.weights_[0], rel=1e-12)


def test_no_pairs_stops_with_reason(rng: np.random.Generator) -> None:
    X, _, qid, _ = small_data(rng)
    model = MPBoost(n_rounds=5).fit(X, np.ones(X.shape[0]), qid=qid)
    assert model.rankers_ == [] and "no preference pairs" in model.stop_reason_
    assert np.array_equal(model.predict(X), np.zeros(X.shape[0]))


def test_constant_features_stop(rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng)
    model = MPBoost(n_rounds=5).fit(np.ones_like(X), y, qid=qid)
    assert model.rankers_ == [] and "squared error" in model.stop_reason_


def test_extreme_feature_values(rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng)
    model = MPBoost(n_rounds=10).fit(X * 1e300, y, qid=qid)
    assert np.isfinite(model.predict(X * 1e300)).all() and len(model.rankers_) > 0


# ---- estimator contract ------------------------------------------------------------------------
def test_save_load_staged_clone(tmp_path, rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng, n_queries=6)
    model = MPBoost(ddf="logdd", lam=2.0, n_rounds=12, random_state=3).fit(X, y, qid=qid)
    assert_estimator_contract(model, X, y, qid, tmp_path / "mp.json")


def test_random_state_seeds_threshold_sampling(rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng, n_queries=8, max_docs=12)
    fits = [MPBoost(n_rounds=6, max_thresholds=3, random_state=s).fit(X, y, qid=qid) for s in (5, 5, 6, 7, 8)]
    assert fits[0].rankers_ == fits[1].rankers_ and fits[0].weights_ == fits[1].weights_
    assert any(f.rankers_ != fits[0].rankers_ for f in fits[2:])
    # only the sampled thresholds (at most 3 per feature, -inf for missing values among them) are used
    assert all(r["threshold"] == -np.inf or r["threshold"] in X[:, r["feature"]] for f in fits for r in f.rankers_)


@pytest.mark.parametrize("params, needle", [
    ({"ddf": "hinge"}, "hinge"),
    ({"ddf": "logdd", "lam": -1.0}, "lam"),
    ({"ddf": "ldd", "alpha": float("nan")}, "alpha"),
    ({"ddf": "logitdd", "beta": 0.0}, "beta"),
    ({"thresholds": "bogus"}, "thresholds"),
    ({"max_thresholds": 0}, "max_thresholds"),
    ({"n_rounds": 0}, "n_rounds"),
])
def test_bad_parameters(params, needle, rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng)
    with pytest.raises(ValueError, match=needle):
        MPBoost(**params).fit(X, y, qid=qid)


def test_eval_set_early_stopping(rng: np.random.Generator) -> None:
    X, y, qid, _ = small_data(rng, n_queries=8, max_docs=10)
    Xv, yv, qv, _ = small_data(np.random.default_rng(99), n_queries=6, max_docs=10)
    model = MPBoost(n_rounds=60, early_stopping_rounds=3, eval_metric="ndcg@5").fit(X, y, qid=qid,
                                                                                   eval_set=[(Xv, yv, qv)])
    vals = [h["valid_0_ndcg@5"] for h in model.history_]
    assert len(model.rankers_) == model.best_iteration_ == int(np.argmax(vals)) + 1
    assert len(vals) < 60 and "early stopping" in model.stop_reason_


# ---- real data (one quick check) ------------------------------------------------------------------
def test_mq2008_fold_part(mq2008_dir) -> None:
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    X = X.toarray()
    model = MPBoost(ddf="logdd", n_rounds=15, random_state=0).fit(X, y, qid=qid)
    h = model.history_
    assert len(h) == 15
    assert all(r["misorder"] <= r["bound"] for r in h)
    assert h[-1]["misorder"] < h[0]["misorder"]
