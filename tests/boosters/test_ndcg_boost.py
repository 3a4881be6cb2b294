"""Stump NDCG_Boost (Valizadegan et al. 2009) against a slow pure-Python Algorithm 1, M's decrease, and the
estimator contract."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import boostplug.boosters.ndcg_boost as nb_mod
from boostplug.boosters import NDCGBoost
from tests.boosters._helpers import assert_estimator_contract, small_data

HAVE_OBJECTIVE = importlib.util.find_spec("boostplug.objectives.ndcg_boost") is not None


# ---- the paper's quantities, written out (Eq. 10, 11, 14, 16) ---------------------------------------
def slow_gains(y, label_gain):
    return [2.0 ** r - 1.0 if label_gain is None else float(label_gain[int(r)]) for r in y]


def slow_ideal_dcg(g):
    return sum(v / math.log2(i + 2) for i, v in enumerate(sorted(g, reverse=True)))


def slow_gamma(x):
    return math.exp(x) / (1.0 + math.exp(x)) ** 2


class SlowNDCGBoostObjective:
    """Eq. 10-16 by loops over documents; ``F = sigma * scores``; sums over queries (no 1/n_queries)."""

    def __init__(self, labels, group_ptr, sigma=2.0, label_gain=None):
        self.g = slow_gains(labels, label_gain)
        self.gp = [int(v) for v in group_ptr]
        self.sigma = sigma
        self.z = [slow_ideal_dcg(self.g[a:b]) for a, b in zip(self.gp[:-1], self.gp[1:])]

    def ideal_dcg(self):
        return np.array(self.z)

    def _queries(self):
        for q, (a, b) in enumerate(zip(self.gp[:-1], self.gp[1:])):
            if self.z[q] > 0:
                yield a, b, self.z[q]

    def loss(self, scores):
        F = [self.sigma * s for s in scores]
        m = 0.0
        for a, b, z in self._queries():
            for i in range(a, b):
                A = sum(1.0 / (1.0 + math.exp(F[i] - F[j])) for j in range(a, b) if j != i)
                m += self.g[i] * A / z
        return m

    def descent_weights(self, scores):
        F = [self.sigma * s for s in scores]
        w = np.zeros(len(F))
        for a, b, z in self._queries():
            for i in range(a, b):
                w[i] = sum((self.g[i] - self.g[j]) / z * slow_gamma(F[i] - F[j]) for j in range(a, b))
        return w


@pytest.fixture(autouse=True)
def objective_or_slow(monkeypatch):
    """Use the library's NDCG_Boost objective when it exists, else the slow one above."""
    if not HAVE_OBJECTIVE:
        monkeypatch.setattr(nb_mod, "_prepare_objective",
                            lambda y, gp, sigma, label_gain: SlowNDCGBoostObjective(y, gp, sigma, label_gain))


# ---- a slow, obviously-correct Algorithm 1 --------------------------------------------------------------
def fires(x, theta):
    return 0 if math.isnan(x) else int(x > theta)


def slow_thresholds(col):
    vals = sorted({float(v) for v in col if not math.isnan(v)})
    return ([-math.inf] if np.isnan(col).any() else []) + vals


def finite_step(obj, f):
    """Eq. 15's denominator is > 0: a document with positive gain is left out where another is picked."""
    return any(obj.g[i] > 0 and f[i] == 0 and f[j] == 1
               for a, b, z in obj._queries() for i in range(a, b) for j in range(a, b))


def slow_ndcg_boost(X, y, group_ptr, sigma, label_gain, n_rounds):
    """Every stump and its complement with a finite step, eta by Eq. 17, alpha by Eq. 15 with double loops,
    F <- F + alpha f."""
    obj = SlowNDCGBoostObjective(y, group_ptr, sigma, label_gain)
    n = len(y)
    F = [0.0] * n  # the paper's F (= sigma * score)
    out = []
    for _ in range(n_rounds):
        w = obj.descent_weights([v / sigma for v in F])
        cands = []
        for k in range(X.shape[1]):
            for theta in slow_thresholds(X[:, k]):
                h = [fires(X[i, k], theta) for i in range(n)]
                for comp in (False, True):
                    f = [1 - v for v in h] if comp else h
                    eta = sum(abs(w[i]) * f[i] * np.sign(w[i]) for i in range(n))
                    if finite_step(obj, f):
                        cands.append((eta, k, theta, comp, f))
        best = max(c[0] for c in cands)
        eta, k, theta, comp, f = next(c for c in cands if c[0] >= best - 1e-10 * float(np.abs(w).sum()))
        if eta <= 0:
            break
        num = den = 0.0
        for a, b, z in obj._queries():
            for i in range(a, b):
                for j in range(a, b):
                    if i != j:
                        t = obj.g[i] / z * slow_gamma(F[i] - F[j])
                        num += t * (f[j] < f[i])
                        den += t * (f[j] > f[i])
        assert den > 0
        alpha = 0.5 * math.log(num / den)
        F = [F[i] + alpha * f[i] for i in range(n)]
        out.append((k, theta, comp, alpha, eta, obj.loss([v / sigma for v in F])))
    return out


def random_data(rng, n_queries=5, max_docs=8, n_feat=3, n_labels=4, nan_prob=0.1):
    """Small data with ties, missing values, a one-document and an all-zero query: ``(X, y, qid, group_ptr)``."""
    X, y, qid, sizes = small_data(rng, n_queries, max_docs, n_feat, n_labels, nan_prob, one_grade=0.0)
    return X, y, qid, np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


# ---- against the slow version ----------------------------------------------------------------------------
@pytest.mark.parametrize("sigma, label_gain, seed", [
    (2.0, None, 0), (2.0, None, 1), (1.0, None, 2), (2.0, [0.0, 1.0, 2.0, 5.0], 3),
])
def test_matches_slow_algorithm(sigma, label_gain, seed) -> None:
    X, y, qid, gp = random_data(np.random.default_rng(seed))
    model = NDCGBoost(n_rounds=20, sigma=sigma, label_gain=label_gain, thresholds="all").fit(X, y, qid=qid)
    ref = slow_ndcg_boost(X, y, gp, sigma, label_gain, 20)
    assert len(ref) == len(model.rankers_) > 5
    for (k, theta, comp, alpha, eta, M), r, w, h in zip(ref, model.rankers_, model.weights_, model.history_):
        assert (r["feature"], r["threshold"], h["complement"]) == (k, theta, comp)
        assert h["alpha"] == pytest.approx(alpha, rel=1e-8)
        assert w == pytest.approx((-alpha if comp else alpha) / sigma, rel=1e-8)
        assert h["eta"] == pytest.approx(eta, rel=1e-8)
        assert h["M"] == pytest.approx(M, rel=1e-9)


def test_m_decreases_every_round() -> None:
    rng = np.random.default_rng(11)
    X, y, qid, gp = random_data(rng, n_queries=10, max_docs=12, n_feat=5, n_labels=3)
    model = NDCGBoost(n_rounds=30, random_state=0).fit(X, y, qid=qid)
    assert len(model.history_) > 10
    m0 = nb_mod._prepare_objective(y, gp, 2.0, None).loss(np.zeros(len(y)))
    ms = [m0] + [h["M"] for h in model.history_]
    assert all(b < a for a, b in zip(ms, ms[1:])), ms
    assert all(h["alpha"] > 0 and h["eta"] > 0 for h in model.history_)
    # M of the model's scores (the complement's dropped constant changes nothing)
    assert nb_mod._prepare_objective(y, gp, 2.0, None).loss(model.predict(X)) == pytest.approx(ms[-1], rel=1e-10)


def test_complement_stump_for_a_reversed_feature() -> None:
    """A feature that is high on irrelevant documents: the classifier labels its low side 1."""
    x = np.array([0.1, 0.2, 0.3, 0.9, 1.0, 0.0, 0.5, 0.6])
    y = np.array([2.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    qid = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    model = NDCGBoost(n_rounds=1, thresholds="all").fit(x[:, None], y, qid=qid)
    h = model.history_[0]
    assert h["complement"] and model.weights_[0] < 0 and h["alpha"] > 0
    s = model.predict(x[:, None])
    assert s[0] > s[[3, 4]].max() and s[5] > s[7]


def test_infinite_steps_left_out() -> None:
    """Feature 0 splits query 0 perfectly (Eq. 15's denominator 0, infinite alpha): not a candidate.
    Feature 1 has the larger eta among the rest."""
    X = np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 2.0], [0.0, 1.0], [0.0, 0.0]])
    y = np.array([1.0, 0.0, 2.0, 1.0, 0.0])
    qid = np.array([0, 0, 1, 1, 1])
    model = NDCGBoost(n_rounds=1, thresholds="all").fit(X, y, qid=qid)
    assert model.rankers_[0]["feature"] == 1 and np.isfinite(model.history_[0]["alpha"])
    alone = NDCGBoost(n_rounds=3, thresholds="all").fit(X[:2, :1], y[:2], qid=qid[:2])
    assert alone.rankers_ == [] and "finite step" in alone.stop_reason_


def test_finite_step_mask_matches_brute_force() -> None:
    rng = np.random.default_rng(8)
    X, y, qid, gp = random_data(rng, n_queries=6)
    from boostplug.boosters.stumps import make_candidates

    cands = make_candidates(X, "all")
    obj = SlowNDCGBoostObjective(y, gp)
    pos = np.array([obj.g[i] > 0 and obj.z[np.searchsorted(gp, i, side="right") - 1] > 0 for i in range(len(y))])
    width = max(len(t) for t in cands.thresholds) + 1
    mask = nb_mod.finite_step_stumps(cands.codes, pos, gp, width)
    for k, th in enumerate(cands.thresholds):
        for j in range(len(th)):
            h = [int(v) for v in cands.codes[:, k] > j]
            assert mask[k, j, 0] == finite_step(obj, h)
            assert mask[k, j, 1] == finite_step(obj, [1 - v for v in h])


def test_no_useful_stump_stops() -> None:
    X = np.ones((6, 2))
    model = NDCGBoost(n_rounds=5).fit(X, np.array([0.0, 1, 2, 0, 1, 0]), qid=np.repeat([0, 1], 3))
    assert model.rankers_ == [] and "eta" in model.stop_reason_


def test_alpha_sums_kernel_and_extremes() -> None:
    rng = np.random.default_rng(5)
    _, y, _, gp = random_data(rng, n_queries=4)
    F = rng.normal(size=len(y)) * 3
    f = (rng.random(len(y)) < 0.5).astype(float)
    obj = SlowNDCGBoostObjective(y, gp)
    z = np.repeat(obj.ideal_dcg(), np.diff(gp))
    c = np.divide(np.array(obj.g), z, out=np.zeros(len(y)), where=z > 0)
    num = den = 0.0
    for a, b in zip(gp[:-1], gp[1:]):
        for i in range(a, b):
            for j in range(a, b):
                t = c[i] * slow_gamma(F[i] - F[j])
                num += t * (f[i] > f[j])
                den += t * (f[i] < f[j])
    assert nb_mod.alpha_sums(F, f, c, gp) == pytest.approx((num, den), rel=1e-12)
    assert nb_mod.alpha_sums(F, np.ones(len(y)), c, gp) == (0.0, 0.0)     # no pair across the split
    assert nb_mod.alpha_sums(F, np.zeros(len(y)), c, gp) == (0.0, 0.0)
    big = nb_mod.alpha_sums(F * 1e4, f, c, gp)
    assert all(np.isfinite(big)) and min(big) >= 0


# ---- the library objective, when it has landed --------------------------------------------------------------
@pytest.mark.skipif(not HAVE_OBJECTIVE, reason="boostplug.objectives.ndcg_boost not written yet")
def test_library_objective_matches_slow() -> None:
    rng = np.random.default_rng(9)
    _, y, _, gp = random_data(rng)
    s = rng.normal(size=len(y))
    for sigma, lg in [(2.0, None), (1.5, [0.0, 1.0, 2.0, 5.0])]:
        prep = nb_mod._prepare_objective(y, gp, sigma, lg)
        slow = SlowNDCGBoostObjective(y, gp, sigma, lg)
        np.testing.assert_allclose(prep.descent_weights(s), slow.descent_weights(s), rtol=1e-10, atol=1e-14)
        assert prep.loss(s) == pytest.approx(slow.loss(s), rel=1e-10)
        np.testing.assert_allclose(prep.ideal_dcg(), slow.ideal_dcg(), rtol=1e-12)


# ---- estimator contract -----------------------------------------------------------------------------------------
def test_save_load_staged_clone(tmp_path) -> None:
    X, y, qid, _ = random_data(np.random.default_rng(4), n_queries=6)
    model = NDCGBoost(n_rounds=10, sigma=1.5, random_state=2).fit(X, y, qid=qid)
    assert_estimator_contract(model, X, y, qid, tmp_path / "nb.json")


@pytest.mark.parametrize("params, exc, needle", [
    ({"sigma": 0.0}, ValueError, "sigma"),
    ({"sigma": float("inf")}, ValueError, "sigma"),
    ({"sigma": "2"}, TypeError, "sigma"),
    ({"thresholds": "bogus"}, ValueError, "thresholds"),
    ({"n_thresholds": 0, "thresholds": "ranklib"}, ValueError, "n_thresholds"),
    ({"n_rounds": -3}, ValueError, "n_rounds"),
])
def test_bad_parameters(params, exc, needle) -> None:
    X, y, qid, _ = random_data(np.random.default_rng(0))
    with pytest.raises(exc, match=needle):
        NDCGBoost(**params).fit(X, y, qid=qid)


def test_eval_set_records_metric() -> None:
    X, y, qid, _ = random_data(np.random.default_rng(1), n_queries=6)
    Xv, yv, qv, _ = random_data(np.random.default_rng(2), n_queries=4)
    model = NDCGBoost(n_rounds=8, eval_metric="map").fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    assert all(0.0 <= h["valid_0_map"] <= 1.0 for h in model.history_)
    assert model.best_iteration_ is not None


def test_explicit_pairs_rejected() -> None:
    X, y, qid, _ = random_data(np.random.default_rng(0))
    with pytest.raises(ValueError, match="pairs"):
        NDCGBoost().fit(X, y, qid=qid, pairs=[[1, 2]])


# ---- real data (one quick check) ------------------------------------------------------------------------------------
@pytest.mark.skipif(not HAVE_OBJECTIVE, reason="needs the library's fast NDCG_Boost objective")
def test_mq2008_part(mq2008_dir) -> None:
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    model = NDCGBoost(n_rounds=10, random_state=0).fit(X.toarray(), y, qid=qid)
    ms = [h["M"] for h in model.history_]
    assert len(ms) == 10 and all(b < a for a, b in zip(ms, ms[1:]))
