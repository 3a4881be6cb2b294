"""RankBoost Rb-d, Rb-c and RankBoost+ (Connamacher et al. 2020) against slow pure-Python
versions of Algorithm 1 / Algorithm 2, a transliteration of RankLib's RankBoost, the
paper's Appendix B counterexamples, its theorems, and the estimator contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

import boostplug.boosters.rankboost as rankboost_module
from boostplug.boosters import RankBoost, load
from tests.boosters._helpers import assert_estimator_contract, slow_pairs, small_data

TOL = 1e-12


# ---- helpers shared by the slow versions -------------------------------------------------------
def fires(x: float, theta: float) -> int:
    return 0 if math.isnan(x) else int(x > theta)


def slow_thresholds(col: np.ndarray) -> list[float]:
    """Every distinct known value, and -inf when a value is missing (the "all" candidates)."""
    vals = sorted({float(v) for v in col if not math.isnan(v)})
    return ([-math.inf] if np.isnan(col).any() else []) + vals


def scan_order(X) -> list[tuple[int, float]]:
    """Every stump, features in order and thresholds from high to low (RankLib's scan)."""
    return [(k, t) for k in range(X.shape[1]) for t in reversed(slow_thresholds(X[:, k]))]


def outcomes(X, pairs, k, t, comp=False) -> np.ndarray:
    """Pair outcomes of [x_k > t], or of its complement [x_k <= t] (1 on NaN: missing is below every value)."""
    o = np.array([fires(X[i, k], t) - fires(X[j, k], t) for i, j in pairs], dtype=float)
    return -o if comp else o


def first_best(scored: list[tuple[float, int, float]]) -> tuple[float, int, float]:
    best = max(sc[0] for sc in scored)
    return next(sc for sc in scored if sc[0] >= best - TOL)


def eps(D, o) -> tuple[float, float, float]:
    ep = sum(d for d, v in zip(D, o) if v > 0)
    e0 = sum(d for d, v in zip(D, o) if v == 0)
    em = sum(d for d, v in zip(D, o) if v < 0)
    return ep, e0, em


# ---- slow Rb-d / Rb-c (Algorithm 1, Eq. 8-19) -----------------------------------------------------
def slow_rb(X, y, sizes, variant, n_rounds, both=True):
    """Every stump [x > t] and (``both``) its complement [x <= t], scanned features first, thresholds
    from high to low, a stump before its complement; the first r within TOL of the best wins."""
    pairs = slow_pairs(y, sizes)
    D = [1.0 / len(pairs)] * len(pairs)
    out = []
    for _ in range(n_rounds):
        scored = []
        for k, t in scan_order(X):
            for comp in ((False, True) if both else (False,)):
                o = outcomes(X, pairs, k, t, comp)
                if np.any(o != 0):
                    scored.append((sum(d * v for d, v in zip(D, o)), k, t, comp))     # r, Eq. 17
        best = max(sc[0] for sc in scored)
        r, k, t, comp = next(sc for sc in scored if sc[0] >= best - TOL)
        if r <= TOL:
            return out, "r <= 0"
        o = outcomes(X, pairs, k, t, comp)
        ep, e0, em = eps(D, o)
        if variant == "rb-d":
            if em == 0:
                return out, "eps- = 0"
            alpha = 0.5 * math.log(ep / em)                                  # Eq. 14
        else:
            alpha = 0.5 * math.log((1 + (ep - em)) / (1 - (ep - em)))        # Eq. 19
        u = [d * math.exp(-alpha * v) for d, v in zip(D, o)]                 # Eq. 10
        z = sum(u)
        D = [v / z for v in u]
        out.append((k, t, comp, alpha, z, e0 + ep * math.exp(-alpha) + em * math.exp(alpha)))  # Eq. 11
    return out, "n_rounds"


LARGER = {"n_queries": 6, "max_docs": 12}


@pytest.mark.parametrize("variant, seed, shape, n_rounds, why", [
    ("rb-c", 0, {}, 20, "n_rounds"), ("rb-c", 1, {}, 20, "n_rounds"), ("rb-c", 2, {}, 20, "n_rounds"),
    # Rb-d stops at its undefined alpha (eps- = 0) after a few rounds on much small data; these
    # seeds run the full 20 rounds (most of them stopped within 3 rounds with one-sided stumps)
    ("rb-d", 5, {}, 20, "n_rounds"), ("rb-d", 7, {}, 20, "n_rounds"), ("rb-d", 2, LARGER, 20, "n_rounds"),
    ("rb-d", 5, LARGER, 20, "n_rounds"),
    # ... and these stop there: the stop and its round agree with the slow version too
    ("rb-d", 4, {}, 9, "eps- = 0"), ("rb-d", 1, LARGER, 6, "eps- = 0"), ("rb-d", 0, {}, 0, "eps- = 0"),
])
def test_rb_matches_slow_algorithm(variant: str, seed: int, shape: dict, n_rounds: int, why: str) -> None:
    X, y, qid, sizes = small_data(np.random.default_rng(seed), **shape)
    model = RankBoost(variant=variant, n_rounds=20, thresholds="all").fit(X, y, qid=qid)
    ref, ref_why = slow_rb(X, y, sizes, variant, 20)
    assert ref_why == why
    assert len(ref) == len(model.rankers_) == n_rounds
    if why == "eps- = 0":
        assert "eps- = 0" in model.stop_reason_ and model.undefined_round_ is not None
    else:
        assert model.stop_reason_ == "n_rounds reached"
    for (k, t, comp, a, z, z11), r, w, h in zip(ref, model.rankers_, model.weights_, model.history_):
        assert (r["feature"], r["threshold"], r.get("complement", False), h["complement"]) == (k, t, comp, comp)
        assert w == pytest.approx(a, rel=1e-9)
        assert h["Z"] == pytest.approx(z, rel=1e-12) and h["Z"] == pytest.approx(z11, rel=1e-12)


# ---- slow RankBoost+ (Eq. 22-34, Algorithm 2 and the exact variant) ---------------------------------
def omega2(o: np.ndarray, eta: float) -> np.ndarray:
    """Eq. 23 per pair."""
    return np.where(o > 0, math.exp(-eta), np.where(o < 0, math.exp(eta), math.cosh(eta)))


def f2(vecs: list[np.ndarray], eta: list[float]) -> np.ndarray:
    """Per-pair products of Eq. 22 (divide the sum by m for F2)."""
    out = np.ones(len(vecs[0])) if vecs else np.ones(0)
    for v, e in zip(vecs, eta):
        out = out * omega2(v, e)
    return out


def in_span(vecs, h) -> np.ndarray | None:
    """Least squares of h on the columns vecs: beta when the residual vanishes, else None."""
    if not vecs:
        return None
    S = np.stack(vecs, axis=1)
    beta = np.linalg.lstsq(S, h, rcond=None)[0]
    return beta if np.sum((S @ beta - h) ** 2) <= 1e-9 * np.sum(h * h) else None


def slow_rbplus(X, y, sizes, n_rounds, efficient, seed):
    pairs = slow_pairs(y, sizes)
    m = len(pairs)
    stumps = scan_order(X)
    vec = {s: outcomes(X, pairs, *s) for s in stumps}
    stumps = [s for s in stumps if np.any(vec[s] != 0)]
    row_major = sorted(stumps, key=lambda s: (s[0], s[1]))
    S: list[tuple[int, float]] = []
    eta: list[float] = []
    R = set(stumps)
    pruned = False
    out = []
    for _ in range(n_rounds):
        prod = f2([vec[s] for s in S], eta) if S else np.ones(m)
        D = prod / prod.sum()                                                  # Eq. 28
        g = []
        for s, e in zip(S, eta):
            ep, e0, em = eps(D, vec[s])
            g.append(em - ep + e0 * math.tanh(e))                              # Eq. 33
        g = np.array(g)
        while True:
            scored, betas = [], {}
            for s in stumps:
                ep, e0, em = eps(D, vec[s])
                if s in S:
                    scored.append((abs(g[S.index(s)]), *s))
                elif efficient:
                    if s in R:
                        scored.append((abs(em - ep), *s))
                else:
                    beta = in_span([vec[q] for q in S], vec[s])
                    if beta is None:
                        scored.append((abs(em - ep), *s))
                    else:
                        betas[s] = beta
                        scored.append((abs(g @ beta) / np.linalg.norm(beta), *s))
            best, k, t = first_best(scored)
            if best <= TOL:
                return out
            s = (k, t)
            if efficient and s not in S and in_span([vec[q] for q in S], vec[s]) is not None:
                R.discard(s)
                if not pruned:        # [S, permute(R)]: drop every column in the span of those before it
                    pruned = True
                    rest = [q for q in row_major if q in R]
                    kept = [vec[q] for q in S]
                    for i in np.random.default_rng(seed).permutation(len(rest)):
                        if in_span(kept, vec[rest[i]]) is None:
                            kept.append(vec[rest[i]])
                        else:
                            R.discard(rest[i])
                continue
            break
        f_before = prod.sum()
        if s in S or s not in betas:
            ap = eta[S.index(s)] if s in S else 0.0
            ep, e0, em = eps(D, vec[s])
            alpha = 0.5 * math.log((ep + e0 * math.exp(-ap) / (2 * math.cosh(ap)))
                                   / (em + e0 * math.exp(ap) / (2 * math.cosh(ap))))   # Eq. 34
            if s in S:
                eta[S.index(s)] += alpha
            else:
                S.append(s)
                eta.append(alpha)
                R.discard(s)
        else:
            beta = betas[s]
            vs = [vec[q] for q in S]
            res = minimize_scalar(lambda a: f2(vs, list(np.array(eta) + a * beta)).sum(),
                                  bracket=(0.0, -0.1 * np.sign(g @ beta)), tol=1e-12)
            alpha = float(res.x)
            eta = list(np.array(eta) + alpha * beta)
        z = f2([vec[q] for q in S], eta).sum() / f_before
        out.append((k, t, alpha, z, s in betas))
    return out


@pytest.mark.parametrize("efficient", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_rbplus_matches_slow_algorithm(efficient: bool, seed: int) -> None:
    X, y, qid, sizes = small_data(np.random.default_rng(seed), n_queries=4, max_docs=7)
    model = RankBoost(variant="rankboost+", efficient=efficient, n_rounds=20, thresholds="all",
                      random_state=seed).fit(X, y, qid=qid)
    ref = slow_rbplus(X, y, sizes, 20, efficient, seed)
    assert len(ref) == len(model.rankers_) > 0
    for (k, t, a, z, dep), r, w, h in zip(ref, model.rankers_, model.weights_, model.history_):
        assert (r["feature"], r["threshold"]) == (k, t)
        assert (h["step"] == "dependent") == dep
        # the slow line search (Brent, tol 1e-12) leaves ~1e-9 differences that later rounds carry
        rel = 1e-9 if efficient else 1e-6
        assert w == pytest.approx(a, rel=rel)
        assert h["Z"] == pytest.approx(z, rel=rel)


def test_rbplus_paths_are_exercised() -> None:
    """Over a few seeds, the efficient variant prunes R and the exact one takes dependent steps."""
    pruned = dependent = 0
    for seed in range(4):
        X, y, qid, _ = small_data(np.random.default_rng(seed), n_queries=4, max_docs=7)
        eff = RankBoost(variant="rankboost+", n_rounds=20, thresholds="all", random_state=seed).fit(X, y, qid=qid)
        ex = RankBoost(variant="rankboost+", efficient=False, n_rounds=20, thresholds="all").fit(X, y, qid=qid)
        pruned += eff.pruned_round_ is not None
        dependent += sum(h["step"] == "dependent" for h in ex.history_)
        assert {h["step"] for h in eff.history_} <= {"new", "member"}
    assert pruned > 0 and dependent > 0


# ---- RankLib's RankBoost, transliterated (RankBoost.java / RBWeakRanker.java) ---------------------
def ranklib_rankboost(X, y, sizes, n_iteration, n_threshold=10):
    f32 = X.astype(np.float32)
    samples, start = [], 0
    for m in sizes:                                    # getCorrectRanking: labels descending
        samples.append(sorted(range(start, start + m), key=lambda i: -y[i]))
        start += m
    nf = X.shape[1]
    total = sum(1 for rl in samples for j in range(len(rl)) for k in range(j + 1, len(rl)) if y[rl[j]] > y[rl[k]])
    sweight = [[[1.0 / total if y[rl[j]] > y[rl[k]] else 0.0 for k in range(len(rl))] for j in range(len(rl))]
               for rl in samples]
    fmax, fmin = [-1e6] * nf, [1e6] * nf
    for rl in samples:
        for i in rl:
            for f in range(nf):
                v = float(f32[i, f])
                fmax[f], fmin[f] = max(fmax[f], v), min(fmin[f], v)
    thresholds = []
    for f in range(nf):
        step = abs(fmax[f] - fmin[f]) / n_threshold
        t = [fmax[f]]
        for _ in range(1, n_threshold):
            t.append(t[-1] - step)
        thresholds.append(t + [fmin[f] - 1.0e8])
    t_sorted = [sorted(range(n_threshold + 1), key=lambda j: -thresholds[f][j]) for f in range(nf)]
    sorted_samples = [[sorted(range(len(rl)), key=lambda j: -float(f32[rl[j], f])) for rl in samples]
                      for f in range(nf)]
    Z_t = 1.0
    chosen = []
    for _ in range(n_iteration):
        potential = [[sum(sweight[q][j][k] for k in range(j + 1, len(rl))) - sum(sweight[q][k][j] for k in range(j))
                      for j in range(len(rl))] for q, rl in enumerate(samples)]
        best_fid, max_r, best_t = -1, -10.0, -1.0
        for f in range(nf):
            last = [-1] * len(samples)
            r = 0.0
            for idx in t_sorted[f]:
                t = thresholds[f][idx]
                for q, rl in enumerate(samples):
                    sk = sorted_samples[f][q]
                    for pos in range(last[q] + 1, len(rl)):
                        if float(f32[rl[sk[pos]], f]) > t:
                            r += potential[q][sk[pos]]
                            last[q] = pos
                        else:
                            break
                if r > max_r:
                    max_r, best_t, best_fid = r, t, f
        R_t = Z_t * max_r
        alpha = 0.5 * math.log((Z_t + R_t) / (Z_t - R_t))
        chosen.append((best_fid, best_t, alpha))
        score = lambda i: 1 if float(f32[i, best_fid]) > best_t else 0  # noqa: E731
        Z_t = 0.0
        for q, rl in enumerate(samples):
            for j in range(len(rl) - 1):
                for k in range(j + 1, len(rl)):
                    sweight[q][j][k] *= math.exp(alpha * (score(rl[k]) - score(rl[j])))
                    Z_t += sweight[q][j][k]
        for q, rl in enumerate(samples):
            for j in range(len(rl) - 1):
                for k in range(j + 1, len(rl)):
                    sweight[q][j][k] /= Z_t
    return chosen


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rbc_ranklib_is_ranklib_rankboost(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X, y, qid, sizes = small_data(rng, n_queries=6, max_docs=10, n_feat=4, nan_prob=0.0)
    X[:, 1] = np.round(X[:, 1] * 1e3 + 1 / 3, 7)     # values that are not exact in float32
    ref = ranklib_rankboost(X, y, sizes, 20)
    model = RankBoost(variant="rb-c", thresholds="ranklib", n_rounds=20).fit(X, y, qid=qid)
    assert len(model.rankers_) == 20
    for (f, t, a), r, w in zip(ref, model.rankers_, model.weights_):
        assert (r["feature"], r["threshold"], r["float32"]) == (f, t, True)
        assert w == pytest.approx(a, rel=1e-9)
    # the trained stumps compare 32-bit values: the model predicts what RankLib's eval() computes
    f32 = X.astype(np.float32)
    expect = [sum(a * (float(f32[i, f]) > t) for f, t, a in ref) for i in range(X.shape[0])]
    np.testing.assert_allclose(model.predict(X), expect, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_rbc_ranklib_scan_starts_from_plus_minus_1e6(seed: int) -> None:
    """RankBoost.java initialises fmax = -1E6, fmin = 1E6 before scanning the values: a feature
    whose values are all above 1e6 gets fmin = 1e6, one all below -1e6 gets fmax = -1e6, which
    changes its candidates (the steps s = (fmax - fmin)/n) and so the stumps chosen."""
    from boostplug.boosters.stumps import candidate_thresholds

    rng = np.random.default_rng(seed)
    X, y, qid, sizes = small_data(rng, n_queries=6, max_docs=10, n_feat=4, nan_prob=0.0)
    X[:, 1] = 2e6 + 1e5 * (X[:, 1] + 3)                     # a raw count-like feature, all > 1e6
    X[:, 2] = 5.0 * (y + rng.normal(scale=1.5, size=len(y)))
    X[:, 3] = -3e6 - 1e5 * (X[:, 3] + 3)                    # all < -1e6
    th = candidate_thresholds(X, "ranklib", n_thresholds=10)
    f32 = X.astype(np.float32).astype(np.float64)
    for k, fmax, fmin in ((1, f32[:, 1].max(), 1e6), (3, -1e6, f32[:, 3].min())):
        s = (fmax - fmin) / 10
        assert th[k][-1] == fmax and th[k][0] == fmin - 1e8
        np.testing.assert_allclose(th[k][1:], fmax - s * np.arange(9, -1, -1), rtol=1e-12)
    ref = ranklib_rankboost(X, y, sizes, 20)
    model = RankBoost(variant="rb-c", thresholds="ranklib", n_rounds=20).fit(X, y, qid=qid)
    assert len(model.rankers_) == 20
    for (f, t, a), r, w in zip(ref, model.rankers_, model.weights_):
        assert (r["feature"], r["threshold"]) == (f, t)
        assert w == pytest.approx(a, rel=1e-9)
    assert {1, 2} <= {f for f, _, _ in ref}           # the shifted feature is among the chosen ones


# ---- theorems and identities ------------------------------------------------------------------------
def pair_losses(scores, y, qid):
    sizes = np.bincount(qid)
    P = np.array(slow_pairs(y, sizes))
    mg = scores[P[:, 0]] - scores[P[:, 1]]
    return np.mean(mg <= 0), np.mean(mg < 0) + 0.5 * np.mean(mg == 0), np.mean(np.exp(-mg)), P


@pytest.mark.parametrize("pairwise", ["pairs", "pairs, losses from the levels", "levels"])
@pytest.mark.parametrize("variant, efficient", [("rb-d", True), ("rb-c", True), ("rankboost+", True),
                                                ("rankboost+", False)])
def test_losses_products_and_bounds_every_round(variant: str, efficient: bool, pairwise: str, monkeypatch) -> None:
    if pairwise == "pairs, losses from the levels":      # R1, R2, E1 of the pair list from the label levels
        monkeypatch.setattr(rankboost_module, "LEVEL_LOSSES_PAIRS_PER_DOC", 0)
        pairwise = "pairs"
    X, y, qid, _ = small_data(np.random.default_rng(7), n_queries=6, max_docs=9, n_feat=4)
    model = RankBoost(variant=variant, efficient=efficient, n_rounds=25, thresholds="all", record_e2=True,
                      pairwise=pairwise).fit(X, y, qid=qid)
    assert len(model.history_) > 3
    for scores, h in zip(model.staged_predict(X), model.history_):
        r1, r2, e1, _ = pair_losses(scores, y, qid)
        assert (h["R1"], h["R2"]) == (pytest.approx(r1), pytest.approx(r2))
        assert h["E1"] == pytest.approx(e1, rel=1e-10)
        assert h["R2"] <= h["E2"] * (1 + 1e-12)                        # Proposition 2
        if variant == "rankboost+":
            assert h["prod_Z"] == pytest.approx(h["E2"], rel=1e-10)    # Eq. 29
            assert h["R2"] <= h["bound"] + 1e-12                        # Theorem 2
            assert h["E2"] <= h["bound"] * (1 + 1e-12)
        else:
            assert h["prod_Z"] == pytest.approx(h["E1"], rel=1e-10)    # Eq. 12
            assert h["eps_plus"] + h["eps_zero"] + h["eps_minus"] == pytest.approx(1.0)
        if variant == "rb-d":
            assert h["R1"] <= h["bound"] + 1e-12                        # Theorem 1


@pytest.mark.parametrize("variant", ["rb-c", "rankboost+"])
def test_pair_list_losses_from_the_levels_or_the_pairs_agree(variant: str, monkeypatch) -> None:
    """The pair list's R1, R2, E1 (and E2) from the label levels (many pairs a document) or from a
    pass over the pairs: the same counts, the same means to rounding, the same model, with query weights."""
    rng = np.random.default_rng(12)
    X, y, qid, _ = small_data(rng, n_queries=7, max_docs=12, n_feat=4)
    sw = rng.choice([0.0, 0.5, 2.0], size=np.unique(qid).size)
    sw[1] = 1.0
    fits = {}
    for per_doc in (0, 10**9):
        monkeypatch.setattr(rankboost_module, "LEVEL_LOSSES_PAIRS_PER_DOC", per_doc)
        for weights in (None, sw):
            fits[per_doc, weights is None] = RankBoost(variant=variant, n_rounds=20, thresholds="all", pairwise="pairs",
                                                       record_e2=True).fit(X, y, qid=qid, sample_weight=weights)
    for unweighted in (True, False):
        a, b = fits[0, unweighted], fits[10**9, unweighted]
        assert a.rankers_ == b.rankers_ and a.weights_ == b.weights_ and len(a.history_) > 5
        for ha, hb in zip(a.history_, b.history_, strict=True):
            for key in ("R1", "R2", "E1", "E2"):
                if unweighted and key in ("R1", "R2"):
                    assert ha[key] == hb[key]
                else:
                    assert ha[key] == pytest.approx(hb[key], rel=1e-12, abs=1e-300), key


def test_e2_equals_eq22_over_distinct_rankers() -> None:
    """Efficient RankBoost+ only steps on distinct independent rankers: E2 is Eq. 22-24 with the
    cumulative weight of every distinct stump, written out here."""
    X, y, qid, sizes = small_data(np.random.default_rng(11), n_queries=6, max_docs=9, n_feat=4)
    model = RankBoost(variant="rankboost+", n_rounds=25, thresholds="all").fit(X, y, qid=qid)
    pairs = slow_pairs(y, sizes)
    cum: dict[tuple[int, float], float] = {}
    for r, w, h in zip(model.rankers_, model.weights_, model.history_):
        key = (r["feature"], r["threshold"])
        assert h["alpha_prime"] == pytest.approx(cum.get(key, 0.0), abs=1e-12)
        cum[key] = cum.get(key, 0.0) + w
        e2 = f2([outcomes(X, pairs, *s) for s in cum], list(cum.values())).mean()
        assert h["E2"] == pytest.approx(e2, rel=1e-10)
    assert any(h["step"] == "member" for h in model.history_)


def test_rbplus_chooses_by_abs_delta_with_negative_weight() -> None:
    """A stump that reverses most pairs is the best direction for RankBoost+ (argmax |delta|,
    negative alpha) while Rb-c, maximising r, never takes it."""
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    y = np.array([2.0, 2.0, 1.0, 0.0, 0.0, 1.0])
    plus = RankBoost(variant="rankboost+", n_rounds=1, thresholds="all").fit(X, y, qid=np.zeros(6))
    assert plus.weights_[0] < 0 and plus.rankers_[0]["threshold"] == 0.0
    rbc = RankBoost(variant="rb-c", n_rounds=1, thresholds="all", complements=False).fit(X, y, qid=np.zeros(6))
    assert rbc.rankers_ == [] and "r <= 0" in rbc.stop_reason_
    # with complements (the default) Rb-c takes [x <= 0] with a positive weight: the same direction
    both = RankBoost(variant="rb-c", n_rounds=1, thresholds="all").fit(X, y, qid=np.zeros(6))
    assert both.rankers_ == [{"kind": "stump", "feature": 0, "threshold": 0.0, "complement": True}]
    assert both.weights_[0] > 0 and both.history_[0]["complement"]
    np.testing.assert_array_equal(np.argsort(-both.predict(X), kind="stable"),
                                  np.argsort(-plus.predict(X), kind="stable"))


# ---- Appendix B: the paper's counterexamples for Rb-d ------------------------------------------------
def test_lemma1_rbd_stops_before_the_undefined_round() -> None:
    """Lemma 1 (n = 4, ten elements): Rb-d takes h1 with alpha = ln n, then h2 has eps- = 0.
    Stopping keeps Theorem 1; the 'infinite weight' patch would break it (R1 = n/(n+1) > U)."""
    n = 4
    a, b = np.arange(n + 1), np.arange(n + 1, 2 * n + 2)
    X = np.zeros((2 * n + 2, 2))
    X[a[:n], 0] = X[b[n], 0] = 1.0        # h1: a_1..a_n and b_{n+1}
    X[a[n], 1] = 1.0                      # h2: a_{n+1}
    y = np.r_[np.ones(n + 1), np.zeros(n + 1)]
    model = RankBoost(variant="rb-d", n_rounds=5, thresholds="all").fit(X, y, qid=np.zeros(2 * n + 2))
    assert model.rankers_ == [{"kind": "stump", "feature": 0, "threshold": 0.0}]
    assert model.weights_[0] == pytest.approx(math.log(n), rel=1e-12)
    assert model.history_[0]["Z"] == pytest.approx(4 * n / (n + 1) ** 2, rel=1e-12)
    und = model.undefined_round_
    assert und["ranker"]["feature"] == 1 and und["eps_minus"] == 0.0 and und["eps_plus"] == pytest.approx(0.5)
    assert "eps- = 0" in model.stop_reason_
    h = model.history_[-1]
    assert h["R1"] <= h["bound"]                                       # the returned ensemble keeps Theorem 1
    U2 = math.exp(-0.5 * (((n - 1) / (n + 1)) ** 2 + 0.25))             # Eq. 47
    patched = X[:, 1]          # the lemma's definition: (sum alpha_t h_t + inf h_T)(x) = (inf h_T)(x)
    r1_patched = pair_losses(patched, y, np.zeros(2 * n + 2, dtype=int))[0]
    assert r1_patched == pytest.approx(n / (n + 1)) and r1_patched > U2  # Eq. 48 > Eq. 47
    # Fig. 4's point: the returned ensemble is not at the minimum of E1 (adding h2 lowers it)
    base = model.predict(X)
    e1 = lambda s: pair_losses(s, y, np.zeros(2 * n + 2, dtype=int))[2]  # noqa: E731
    assert e1(base + X[:, 1]) < e1(base)


def test_lemma2_large_constant_patch_breaks_eq12() -> None:
    """Lemma 2 (n = 1): h1 already has eps- = 0, so Rb-d returns the empty ensemble. The patch
    'weight = large constant' gives E1 = R1 = 4/5 > Z1 Z2 = 4/25 and > U = exp(-17/50)."""
    n = 1
    X = np.zeros((10 * n, 2))
    X[: 4 * n, 0] = 1.0                                   # h1: a_1..a_4n
    X[4 * n: 5 * n, 1] = X[5 * n: 9 * n, 1] = 1.0          # h2: a_4n+1..a_5n and b_1..b_4n
    y = np.r_[np.ones(5 * n), np.zeros(5 * n)]
    q = np.zeros(10 * n, dtype=int)
    model = RankBoost(variant="rb-d", n_rounds=5, thresholds="all").fit(X, y, qid=q)
    assert model.rankers_ == [] and np.all(model.predict(X) == 0)
    und = model.undefined_round_
    assert und["ranker"]["feature"] == 0 and (und["eps_plus"], und["eps_zero"]) == (pytest.approx(0.8), pytest.approx(0.2))
    big = 50.0
    r1, _, e1, _ = pair_losses(big * X[:, 0] + big * X[:, 1], y, q)
    assert r1 == pytest.approx(0.8) and e1 == pytest.approx(0.8)
    assert r1 > math.exp(-17 / 50) and e1 > 4 / 25 + 0.5
    # Rb-c has no such gap: Eq. 19 is finite (alpha = ln 3) and training goes on
    rbc = RankBoost(variant="rb-c", n_rounds=5, thresholds="all").fit(X, y, qid=q)
    assert rbc.weights_[0] == pytest.approx(math.log(3.0), rel=1e-12) and len(rbc.rankers_) > 1


def test_lemma3_positive_alphas_miss_the_minimum() -> None:
    """Lemma 3: with r maximised (positive alpha) Rb-d stops after two rounds at E1 = .888387,
    above the minimum .88703 over the span of h1 and h2."""
    X = np.zeros((6, 2))
    X[[0, 1, 2, 5], 0] = 1.0                 # h1: {1, 2, 3, 6} above {4, 5}
    X[1, 1] = 1.0                            # h2: {2} above the rest
    y = np.arange(6, 0, -1, dtype=float)
    q = np.zeros(6, dtype=int)
    model = RankBoost(variant="rb-d", n_rounds=10, thresholds="all", complements=False).fit(X, y, qid=q)
    assert [r["feature"] for r in model.rankers_] == [0, 1]
    np.testing.assert_allclose(model.weights_, [0.5 * math.log(3), 0.5 * math.log((2 + 2 * math.sqrt(3)) / math.sqrt(3))],
                               rtol=1e-12)
    assert "r <= 0" in model.stop_reason_
    assert model.history_[-1]["E1"] == pytest.approx(0.888387, abs=1e-6)

    def e1(a):
        return pair_losses(a[0] * X[:, 0] + a[1] * X[:, 1], y, q)[2]

    res = minimize(e1, np.array(model.weights_), method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12})
    assert res.fun == pytest.approx(0.88703, abs=1e-5) and res.fun < model.history_[-1]["E1"] - 1e-3
    np.testing.assert_allclose(res.x, [0.46894, 0.58953], atol=1e-4)
    # the lemma's ranker set is {h1, h2}; with their complements (negative steps) Rb-d goes on below it
    both = RankBoost(variant="rb-d", n_rounds=10, thresholds="all").fit(X, y, qid=q)
    assert any(r.get("complement") for r in both.rankers_) and len(both.rankers_) > 2
    assert both.history_[-1]["E1"] < model.history_[-1]["E1"] - 1e-4


# ---- estimator contract -----------------------------------------------------------------------------
@pytest.mark.parametrize("variant, thresholds", [("rankboost+", "sample"), ("rb-c", "ranklib")])
def test_save_load_staged_clone(tmp_path, variant: str, thresholds: str) -> None:
    X, y, qid, _ = small_data(np.random.default_rng(3), n_queries=6)
    model = RankBoost(variant=variant, thresholds=thresholds, n_rounds=12, max_thresholds=4,
                      random_state=3).fit(X, y, qid=qid)
    assert_estimator_contract(model, X, y, qid, tmp_path / "rb.json")


def test_explicit_pairs_and_no_pairs() -> None:
    X, y, qid, sizes = small_data(np.random.default_rng(5))
    P = np.array(slow_pairs(y, sizes))
    a = RankBoost(n_rounds=8, thresholds="all").fit(X, y, qid=qid)
    b = RankBoost(n_rounds=8, thresholds="all").fit(X, np.zeros_like(y), qid=qid, pairs=P)
    assert a.rankers_ == b.rankers_ and np.allclose(a.weights_, b.weights_, rtol=1e-12)
    c = RankBoost(n_rounds=8).fit(X, np.zeros_like(y), qid=qid)
    assert c.rankers_ == [] and "no preference pairs" in c.stop_reason_


def test_extreme_feature_values() -> None:
    X, y, qid, _ = small_data(np.random.default_rng(6))
    for variant in ("rb-d", "rb-c", "rankboost+"):
        m = RankBoost(variant=variant, n_rounds=10).fit(X * 1e300, y, qid=qid)
        assert np.isfinite(m.predict(X * 1e300)).all() and len(m.rankers_) > 0


@pytest.mark.parametrize("params, needle", [
    ({"variant": "rb-x"}, "variant"),
    ({"variant": None}, "variant"),
    ({"thresholds": "bogus"}, "thresholds"),
    ({"efficient": "yes"}, "efficient"),
    ({"max_thresholds": 0}, "max_thresholds"),
    ({"n_thresholds": -2, "thresholds": "ranklib"}, "n_thresholds"),
    ({"n_rounds": 0}, "n_rounds"),
])
def test_bad_parameters(params, needle) -> None:
    X, y, qid, _ = small_data(np.random.default_rng(0))
    with pytest.raises(ValueError, match=needle):
        RankBoost(**params).fit(X, y, qid=qid)


def test_eval_set_early_stopping() -> None:
    X, y, qid, _ = small_data(np.random.default_rng(8), n_queries=8, max_docs=10)
    Xv, yv, qv, _ = small_data(np.random.default_rng(99), n_queries=6, max_docs=10)
    model = RankBoost(variant="rankboost+", n_rounds=60, early_stopping_rounds=3, eval_metric="ndcg@5").fit(
        X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    vals = [h["valid_0_ndcg@5"] for h in model.history_]
    assert len(model.rankers_) == model.best_iteration_ == int(np.argmax(vals)) + 1


# ---- real data (one quick check) ---------------------------------------------------------------------
def test_mq2008_fold_part(mq2008_dir) -> None:
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(mq2008_dir / "S1.txt"), query_id=True)
    X = X.toarray()
    for variant in ("rb-c", "rankboost+"):
        h = RankBoost(variant=variant, n_rounds=10, random_state=0).fit(X, y, qid=qid).history_
        assert len(h) == 10
        key = "E2" if variant == "rankboost+" else "E1"
        assert all(r["prod_Z"] == pytest.approx(r[key], rel=1e-9) for r in h)
        assert h[-1]["R2"] < h[0]["R2"] and h[-1][key] < h[0][key]


# ---- stump orientation: [x > theta] and its complement [x <= theta] ------------------------------------
def test_complement_stump_predicts_missing_as_below_and_round_trips(tmp_path) -> None:
    """A complement stump is 1 - [x > theta]: 1 on x <= theta and on NaN (missing is below every
    known value); the model file stores the orientation and validates it."""
    import json

    X = np.array([[3.0], [2.0], [1.0], [np.nan], [0.0], [5.0]])
    y = np.array([0.0, 1.0, 2.0, 3.0, 3.0, 0.0])       # the lower the value, the better; NaN best
    model = RankBoost(variant="rb-c", n_rounds=1, thresholds="all").fit(X, y, qid=np.zeros(6))
    r = model.rankers_[0]
    assert r.get("complement") is True and model.weights_[0] > 0
    Xt = np.array([[np.nan], [r["threshold"]], [r["threshold"] + 1.0]])
    s = model.predict(Xt)
    assert s[0] == s[1] > s[2]
    path = tmp_path / "rbc.json"
    model.save(path)
    assert json.loads(path.read_text())["rankers"][0]["complement"] is True
    back = load(path)
    assert back.rankers_ == model.rankers_ and np.array_equal(back.predict(X), model.predict(X))
    d = json.loads(path.read_text())
    d["rankers"][0]["complement"] = "yes"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"rankers\[0\]\.complement must be true or false, got a JSON str \('yes'\)"):
        load(path)


def test_complements_parameter() -> None:
    X, y, qid, _ = small_data(np.random.default_rng(0))
    one = RankBoost(variant="rb-c", n_rounds=15, thresholds="all", complements=False).fit(X, y, qid=qid)
    assert not any("complement" in r for r in one.rankers_)
    both = RankBoost(variant="rb-c", n_rounds=15, thresholds="all").fit(X, y, qid=qid)
    assert any(r.get("complement") for r in both.rankers_)
    rl = RankBoost(variant="rb-c", n_rounds=5, thresholds="ranklib").fit(X, y, qid=qid)
    assert not any("complement" in r for r in rl.rankers_)
    with pytest.raises(ValueError, match=r"complements must be True, False or None .*got 'yes'"):
        RankBoost(complements="yes").fit(X, y, qid=qid)


@pytest.mark.parametrize("variant, seed", [("rb-c", 0), ("rb-c", 1), ("rb-d", 5), ("rb-d", 7)])
def test_rb_e2_is_eq22_over_distinct_rankers(variant: str, seed: int) -> None:
    """Rb-d/Rb-c's E2 (paper Section 4) while the distinct rankers stay linearly independent: Eq. 22-24
    with eta' the summed weight of each distinct stump (a complement counts with a minus sign), a pair
    tied by a ranker contributing cosh(eta') from the round the ranker first joins."""
    X, y, qid, sizes = small_data(np.random.default_rng(seed))
    model = RankBoost(variant=variant, n_rounds=20, thresholds="all", record_e2=True).fit(X, y, qid=qid)
    pairs = slow_pairs(y, sizes)
    cum: dict[tuple[int, float], float] = {}
    checked = 0
    for r, w, h in zip(model.rankers_, model.weights_, model.history_):
        key = (r["feature"], r["threshold"])
        cum[key] = cum.get(key, 0.0) + (-w if r.get("complement") else w)
        vecs = [outcomes(X, pairs, *s) for s in cum]
        if np.linalg.matrix_rank(np.stack(vecs, axis=1)) < len(vecs):
            break
        assert h["E2"] == pytest.approx(f2(vecs, list(cum.values())).mean(), rel=1e-10)
        checked += 1
    assert checked >= 8 and any(h["eps_zero"] > 0 for h in model.history_[:checked])


@pytest.mark.parametrize("variant, thresholds, reverse", [
    ("rb-d", "all", False), ("rb-c", "all", False), ("rankboost+", "all", False),
    ("rb-c", "all", True), ("rankboost+", "all", True), ("rb-c", "ranklib", False), ("rankboost+", "sample", True),
])
def test_perfect_stump_in_round_one_is_kept(tmp_path, variant: str, thresholds: str, reverse: bool) -> None:
    """A stump that orders every training pair has an infinite weight (Eq. 14, 19, 34): the model keeps
    it with weight +-1 (not an empty model that predicts zeros) and says why it stopped."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(4), 5)
    y = rng.integers(0, 2, size=20).astype(float)
    y[::5], y[1::5] = 0.0, 1.0                             # every query has a pair
    X = np.column_stack([rng.normal(size=20), np.where(y > 0, -1.0, 1.0) if reverse else y * 2.0])
    model = RankBoost(variant=variant, thresholds=thresholds, n_rounds=5).fit(X, y, qid=qid)
    assert len(model.rankers_) == 1 and model.rankers_[0]["feature"] == 1
    assert abs(model.weights_[0]) == 1.0 and "perfect weak ranker in round 1" in model.stop_reason_
    h = model.history_[0]
    assert math.isinf(h["alpha"]) and h["Z"] == 0.0 and h["R1"] == 0.0 and h["R2"] == 0.0
    s = model.predict(X)
    assert all(s[i] > s[j] for i, j in slow_pairs(y, np.bincount(qid)))
    model.save(tmp_path / "m.json")
    assert np.array_equal(load(tmp_path / "m.json").predict(X), s)
