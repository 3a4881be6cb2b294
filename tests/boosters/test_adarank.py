"""AdaRank (Xu and Li 2007) against a slow pure-Python AdaRank (the paper's Figure 1 and a
line-by-line transliteration of RankLib's AdaRank.java), Theorem 1, and the estimator contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone

from boostplug import metrics
from boostplug.boosters import AdaRank, load

TIE = 1e-12  # the library's documented feature tie rule: within 1e-12 of the best -> lowest index


# ---- brute-force measures (ties keep input order: Python's sort is stable) ------------------
def slow_order(scores: list[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def slow_ndcg(scores: list[float], labels: list[float], k: int | None, empty: float) -> float:
    order = slow_order(scores)
    cut = len(order) if k is None else min(k, len(order))
    dcg = sum((2.0 ** labels[order[r]] - 1.0) / math.log2(r + 2) for r in range(cut))
    ideal = sorted(labels, reverse=True)
    idcg = sum((2.0 ** ideal[r] - 1.0) / math.log2(r + 2) for r in range(cut))
    return empty if idcg == 0 else dcg / idcg


def slow_ap(scores: list[float], labels: list[float], empty: float) -> float:
    order = slow_order(scores)
    hits, total = 0, 0.0
    for r, i in enumerate(order):
        if labels[i] >= 1:
            hits += 1
            total += hits / (r + 1)
    return empty if hits == 0 else total / hits


def make_measure(name: str, empty: float):
    if name == "map":
        return lambda s, l: slow_ap(s, l, empty)
    k = int(name.split("@")[1]) if "@" in name else None
    return lambda s, l: slow_ndcg(s, l, k, empty)


# ---- slow AdaRank: RankLib's learn() structure, the paper's or RankLib's update ---------------
def slow_adarank(X, y, sizes, *, measure="ndcg@5", empty=0.0, n_rounds=20, tolerance=None,
                 update="paper", enqueue=False, max_sel=None):
    """Returns the kept (feature, alpha, phi, train, delta_min) and the final iteration count."""
    E = make_measure(measure, empty)
    Xz = [[0.0 if math.isnan(v) else float(v) for v in row] for row in X]
    queries, start = [], 0
    for n in sizes:
        queries.append(list(range(start, start + n)))
        start += n
    m, F = len(queries), len(Xz[0])

    def e_feature(k, q):
        return E([Xz[r][k] for r in q], [y[r] for r in q])

    def ens_score(rankers, r):
        f = 0.0
        for k, a in rankers:
            f = f + a * Xz[r][k]
        return f

    def e_model(rankers, q):
        return E([ens_score(rankers, r) for r in q], [y[r] for r in q])

    st = {"w": [1.0 / m] * m, "rankers": [], "info": [], "last": -1, "count": 0, "used": set(),
          "queue": [], "backup_w": [1.0 / m] * m, "backup_train": -math.inf, "last_train": -math.inf,
          "E_prev": [0.0] * m}

    def choose():
        best, best_k = None, None
        scores = []
        for k in range(F):
            if k in st["queue"] or k in st["used"]:
                continue
            s = sum(st["w"][i] * e_feature(k, q) for i, q in enumerate(queries)) / sum(st["w"])
            scores.append((k, s))
        if not scores:
            return None
        best = max(s for _, s in scores)
        return next(k for k, s in scores if s >= best - TIE * max(abs(best), 1.0))

    def learn(t, with_enqueue):
        while t <= n_rounds:
            k = choose()
            if k is None:
                break
            if with_enqueue:
                if k == st["last"]:
                    st["queue"].append(k)
                    st["rankers"].pop()
                    st["info"].pop()
                    st["w"] = list(st["backup_w"])
                    st["last_train"] = st["backup_train"]
                    st["E_prev"] = st["backup_E"]
                    t += 1
                    continue
                st["last"] = k
                st["backup_w"] = list(st["w"])
                st["backup_train"] = st["last_train"]
                st["backup_E"] = list(st["E_prev"])
            num = sum(st["w"][i] * (1.0 + e_feature(k, q)) for i, q in enumerate(queries))
            den = sum(st["w"][i] * (1.0 - e_feature(k, q)) for i, q in enumerate(queries))
            phi = sum(st["w"][i] * e_feature(k, q) for i, q in enumerate(queries)) / sum(st["w"])
            alpha = 0.5 * math.log(num / den)
            st["rankers"].append((k, alpha))
            e_new = [e_model(st["rankers"], q) for q in queries]
            train = sum(e_new) / m
            dmin = min(e_new[i] - st["E_prev"][i] - alpha * e_feature(k, q) for i, q in enumerate(queries))
            st["info"].append((k, alpha, phi, train, dmin))
            if not with_enqueue and max_sel is not None:
                if train != st["last_train"]:
                    st["count"] = 0
                    st["used"].clear()
                elif st["last"] == k:
                    st["count"] += 1
                    if st["count"] == max_sel:
                        st["count"] = 0
                        st["used"].add(k)
                else:
                    st["count"] = 0
                    st["used"].clear()
            if not with_enqueue:
                st["last"] = k
            if tolerance is not None and not train - st["last_train"] > tolerance:
                st["rankers"].pop()
                st["info"].pop()
                break
            st["last_train"] = train
            st["E_prev"] = e_new
            if update == "paper":
                u = [math.exp(-v) for v in e_new]
                st["w"] = [v / sum(u) for v in u]
            else:  # "multiplicative": RankLib's literal rule, normaliser without the P_t factor
                total = sum(math.exp(-alpha * v) for v in e_new)
                st["w"] = [st["w"][i] * math.exp(-alpha * e_new[i]) / total for i in range(m)]
            t += 1
        return t

    if enqueue:
        t = learn(1, True)
        for i in range(len(st["queue"]) - 1, -1, -1):
            del st["queue"][i]
            t = learn(t, False)
    else:
        learn(1, False)
    return st["info"]


# ---- data ---------------------------------------------------------------------------------------
def small_data(seed: int, n_queries: int = 7, n_features: int = 5, max_docs: int = 8):
    """Integer-valued features (many ties), NaNs, graded labels, an all-zero query, a 1-doc query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_docs + 1, size=n_queries)
    sizes[-1] = 1
    n = int(sizes.sum())
    X = rng.integers(0, 4, size=(n, n_features)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 3, size=n).astype(np.float64)
    y[: sizes[0]] = 0.0
    qid = np.repeat(np.arange(n_queries), sizes)
    return X, y, sizes, qid


def kept(model: AdaRank) -> list[tuple]:
    return [(h["feature"], h["alpha"], h["phi"], h["train_measure"], h["delta_min"]) for h in model.history_]


def assert_same(model: AdaRank, slow: list[tuple], check_phi: bool = True) -> None:
    got = kept(model)
    assert [g[0] for g in got] == [s[0] for s in slow]
    for g, s in zip(got, slow):
        assert g[1] == pytest.approx(s[1], rel=1e-9, abs=1e-12)
        if check_phi:
            assert g[2] == pytest.approx(s[2], rel=1e-9, abs=1e-12)
        assert g[3] == pytest.approx(s[3], rel=1e-9, abs=1e-12)
        assert g[4] == pytest.approx(s[4], rel=1e-9, abs=1e-9)
    assert [r["feature"] for r in model.rankers_] == [s[0] for s in slow]
    np.testing.assert_allclose(model.weights_, [s[1] for s in slow], rtol=1e-9)


# ---- against the slow version -------------------------------------------------------------------
@pytest.mark.parametrize("measure,empty", [("ndcg@5", 0.0), ("map", 0.0), ("ndcg@3", 1.0), ("ndcg", 0.0)])
@pytest.mark.parametrize("update", ["paper", "multiplicative"])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_slow_20_rounds(measure, empty, update, seed):
    X, y, sizes, qid = small_data(seed)
    model = AdaRank(measure=measure, empty=empty, update=update, tolerance=None, n_rounds=20).fit(X, y, qid=qid)
    slow = slow_adarank(X, y, sizes, measure=measure, empty=empty, update=update, n_rounds=20)
    assert len(slow) == 20
    assert_same(model, slow)
    assert model.stop_reason_ == "n_rounds reached"


@pytest.mark.parametrize("seed", [2, 3, 4])
@pytest.mark.parametrize("update", ["paper", "multiplicative"])
def test_enqueue_and_max_match_ranklib_transliteration(seed, update):
    X, y, sizes, qid = small_data(seed, n_features=4)
    for tol in (None, -0.002, 0.0):
        for mc in (None, 1, 2):
            model = AdaRank(measure="ndcg@5", update=update, enqueue=True, max_consecutive=mc,
                            tolerance=tol, n_rounds=20).fit(X, y, qid=qid)
            slow = slow_adarank(X, y, sizes, update=update, enqueue=True, max_sel=mc, tolerance=tol, n_rounds=20)
            assert_same(model, slow)


@pytest.mark.parametrize("seed", [5, 6])
def test_max_consecutive_matches_slow_and_removes_a_stuck_feature(seed):
    X, y, sizes, qid = small_data(seed)
    for mc in (1, 2, 3):
        model = AdaRank(measure="map", max_consecutive=mc, tolerance=None, n_rounds=20).fit(X, y, qid=qid)
        assert_same(model, slow_adarank(X, y, sizes, measure="map", max_sel=mc, n_rounds=20))
        # never more than mc repeats of one feature with an unchanged training measure
        run, prev = 0, None
        for h in model.history_:
            same = prev is not None and h["feature"] == prev["feature"] and h["train_measure"] == prev["train_measure"]
            run = run + 1 if same else 0
            assert run <= mc
            prev = h


@pytest.mark.parametrize("tol", [0.0, 0.002, 0.05, -0.002])
@pytest.mark.parametrize("seed", [7, 8])
def test_tolerance_stop(tol, seed):
    X, y, sizes, qid = small_data(seed)
    model = AdaRank(measure="ndcg@5", update="multiplicative", tolerance=tol, n_rounds=20).fit(X, y, qid=qid)
    slow = slow_adarank(X, y, sizes, update="multiplicative", tolerance=tol, n_rounds=20)
    assert_same(model, slow)
    free = AdaRank(measure="ndcg@5", update="multiplicative", tolerance=None, n_rounds=20).fit(X, y, qid=qid)
    T = len(model.history_)
    assert kept(model) == kept(free)[:T]  # a prefix of the unstopped run
    trains = [-math.inf] + [h["train_measure"] for h in free.history_]
    assert all(trains[t + 1] - trains[t] > tol for t in range(T))
    if T < 20:
        assert trains[T + 1] - trains[T] <= tol
        assert "tolerance" in model.stop_reason_


def test_update_multiplicative_is_ranklibs_rule_and_its_former_name_is_refused():
    """``"multiplicative"`` differs from the paper's update on this data; ``"ranklib"``, its name before 0.1.0, is no
    alias (CHANGELOG.md)."""
    X, y, sizes, qid = small_data(3)
    a = AdaRank(measure="map", update="multiplicative", tolerance=None, n_rounds=12).fit(X, y, qid=qid)
    paper = AdaRank(measure="map", tolerance=None, n_rounds=12).fit(X, y, qid=qid)
    assert kept(a) != kept(paper)                        # the options differ on this data
    with pytest.raises(ValueError, match="update"):
        AdaRank(measure="map", update="ranklib").fit(X, y, qid=qid)


# ---- behaviour of the options ------------------------------------------------------------------------
def test_enqueue_rolls_back_a_feature_chosen_twice():
    """Build data where the best feature wins twice: the first round is rolled back, the feature
    queued, and the next pick (iteration 3) is the second best feature under the uniform P_1."""
    for seed in range(40):
        X, y, sizes, qid = small_data(seed)
        paper = AdaRank(measure="ndcg@5", tolerance=None, n_rounds=3).fit(X, y, qid=qid)
        f = [h["feature"] for h in paper.history_]
        if f[0] == f[1]:
            break
    else:  # pragma: no cover - data generator changed
        pytest.fail("no data set with a repeated first feature")
    model = AdaRank(measure="ndcg@5", tolerance=None, enqueue=True, n_rounds=3).fit(X, y, qid=qid)
    E = np.stack([metrics.ndcg(np.nan_to_num(X[:, k]), y, np.r_[0, np.cumsum(sizes)], 5, empty=0.0, per_query=True)
                  for k in range(X.shape[1])])
    phi = E.mean(axis=1)
    phi[f[0]] = -1.0
    second = int(np.flatnonzero(phi >= phi.max() - 1e-12)[0])
    assert model.history_[0]["feature"] == second != f[0]
    assert model.history_[0]["iteration"] == 3


def test_paper_update_fixed_point():
    """Paper rule: P_{t+1} depends only on E(f_t); once f_t ranks like f_{t-1} (the same feature
    again, alpha > 0) the distribution no longer changes and the same feature is chosen forever."""
    for seed in range(10):
        X, y, sizes, qid = small_data(seed)
        model = AdaRank(measure="map", tolerance=None, n_rounds=12).fit(X, y, qid=qid)
        f = [h["feature"] for h in model.history_]
        a = [h["alpha"] for h in model.history_]
        for t in range(1, len(f)):
            if f[t] == f[t - 1] and a[t] > 0 and a[t - 1] > 0 and all(x == f[t] for x in f[:t]):
                assert all(x == f[t] for x in f[t:])
                assert all(h["train_measure"] == model.history_[t]["train_measure"] for h in model.history_[t:])


# ---- Theorem 1 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("measure", ["ndcg@5", "map", "ndcg@2"])
@pytest.mark.parametrize("seed", range(6))
def test_theorem1_bound(measure, seed):
    X, y, sizes, qid = small_data(seed + 20, n_queries=9)
    model = AdaRank(measure=measure, tolerance=None, n_rounds=20, enqueue=seed % 2 == 1).fit(X, y, qid=qid)
    prod = 1.0
    for h in model.history_:
        prod *= math.exp(-h["delta_min"]) * math.sqrt(max(0.0, 1.0 - h["phi"] ** 2))
        assert h["bound"] == pytest.approx(1.0 - prod, rel=1e-9, abs=1e-12)
        assert h["train_measure"] >= h["bound"] - 1e-12
    # the quantity Theorem 1 bounds is the training measure of the model as it predicts
    gp = np.r_[0, np.cumsum(sizes)]
    fn = metrics.average_precision if measure == "map" else metrics.ndcg
    k = None if measure == "map" else int(measure.split("@")[1])
    got = fn(model.predict(X), y, gp, k, empty=0.0)
    assert got == pytest.approx(model.history_[-1]["train_measure"], abs=1e-12)


# ---- measures, conventions, degenerate data ----------------------------------------------------------
def test_callable_measure_equals_builtin_and_is_checked():
    X, y, sizes, qid = small_data(11)

    def ndcg5(s, l, g):
        return metrics.ndcg(s, l, g, 5, empty=0.0, per_query=True)

    a = AdaRank(measure=ndcg5, tolerance=None, n_rounds=10).fit(X, y, qid=qid)
    b = AdaRank(measure="ndcg@5", tolerance=None, n_rounds=10).fit(X, y, qid=qid)
    assert kept(a) == kept(b)
    bad = {
        "shape": (lambda s, l, g: np.zeros(3), "shape"),
        "range": (lambda s, l, g: np.full(g.shape[0] - 1, 1.5), r"\[0, 1\]"),
        "nan": (lambda s, l, g: np.full(g.shape[0] - 1, np.nan), r"\[0, 1\]"),
        "negative": (lambda s, l, g: np.full(g.shape[0] - 1, -0.1), r"\[0, 1\]"),
        "strings": (lambda s, l, g: np.array(["a"] * (g.shape[0] - 1)), "numbers"),
    }
    for fn, msg in bad.values():
        with pytest.raises(ValueError, match=msg):
            AdaRank(measure=fn, n_rounds=3).fit(X, y, qid=qid)


def test_empty_skip_equals_removing_the_empty_queries():
    X, y, sizes, qid = small_data(12)
    has_rel = np.array([y[qid == q].max() >= 1 for q in range(len(sizes))])
    rows = has_rel[qid]
    a = AdaRank(measure="map", empty="skip", tolerance=None, n_rounds=10).fit(X, y, qid=qid)
    b = AdaRank(measure="map", tolerance=None, n_rounds=10).fit(X[rows], y[rows], qid=qid[rows])
    assert not has_rel.all() and kept(a) == kept(b)
    c = AdaRank(measure="map", empty=1.0, tolerance=None, n_rounds=10).fit(X, y, qid=qid)
    # empty=1 counts the empty queries as perfectly ranked: a different phi (and train measure)
    assert c.history_[0]["phi"] != pytest.approx(a.history_[0]["phi"])
    first = next(c.staged_predict(X))
    gp = np.r_[0, np.cumsum(sizes)]
    assert c.history_[0]["train_measure"] == pytest.approx(metrics.average_precision(first, y, gp, empty=1.0))


def test_perfect_feature_stops_with_weight_one():
    """phi = 1 makes alpha infinite: round 1 keeps the feature with weight 1 and training stops.
    (With empty=0 a query without relevant documents scores 0 for every ranking, so phi < 1.)"""
    X, y, sizes, qid = small_data(13)
    X = np.column_stack([X, y])  # the last feature ranks every query perfectly
    gp = np.r_[0, np.cumsum(sizes)]
    model = AdaRank(measure="ndcg@5", empty=1.0, tolerance=None, n_rounds=10).fit(X, y, qid=qid)
    assert [r["feature"] for r in model.rankers_] == [X.shape[1] - 1]
    assert model.weights_ == [1.0] and "perfectly" in model.stop_reason_
    assert metrics.ndcg(model.predict(X), y, gp, 5, empty=1.0) == 1.0
    zero = AdaRank(measure="ndcg@5", empty=0.0, tolerance=None, n_rounds=3).fit(X, y, qid=qid)
    assert [r["feature"] for r in zero.rankers_] == [X.shape[1] - 1] * 3
    assert all(h["alpha"] < math.inf for h in zero.history_)


def test_explicit_pairs_rejected():
    """AdaRank boosts a query-level measure of the graded labels: preference pairs have no place in it."""
    X, y, sizes, qid = small_data(14)
    with pytest.raises(ValueError, match="AdaRank .* takes no explicit pairs"):
        AdaRank(n_rounds=3).fit(X, y, qid=qid, pairs=[[1, 0]])


def test_no_query_with_relevant_documents():
    X, y, sizes, qid = small_data(14)
    model = AdaRank(measure="map", empty="skip").fit(X, np.zeros_like(y), qid=qid)
    assert model.rankers_ == [] and "no training query" in model.stop_reason_
    np.testing.assert_array_equal(model.predict(X), 0.0)


# ---- estimator contract ------------------------------------------------------------------------------
def test_save_load_staged_clone(tmp_path):
    X, y, sizes, qid = small_data(15)
    Xe, ye, _, qe = small_data(16)
    model = AdaRank(measure="map", update="multiplicative", tolerance=None, n_rounds=15, enqueue=True,
                    max_consecutive=2).fit(X, y, qid=qid, eval_set=[(Xe, ye, qe)])
    path = tmp_path / "adarank.json"
    model.save(path)
    again = load(path)
    assert isinstance(again, AdaRank) and again.get_params() == model.get_params()
    np.testing.assert_array_equal(again.predict(Xe), model.predict(Xe))
    assert again.history_ == model.history_
    staged = list(model.staged_predict(Xe))
    assert len(staged) == len(model.rankers_)
    np.testing.assert_array_equal(staged[-1], model.predict(Xe))
    c = clone(model)
    assert c.get_params() == model.get_params() and not hasattr(c, "rankers_")
    assert kept(c.fit(X, y, qid=qid, eval_set=[(Xe, ye, qe)])) == kept(model)
    with pytest.raises(TypeError, match="callable"):
        AdaRank(measure=lambda s, l, g: np.zeros(g.shape[0] - 1), n_rounds=2).fit(X, y, qid=qid).save(path)


def test_early_stopping_on_eval_set():
    X, y, sizes, qid = small_data(17)
    Xe, ye, _, qe = small_data(18)
    model = AdaRank(update="multiplicative", tolerance=None, n_rounds=30, early_stopping_rounds=3).fit(
        X, y, qid=qid, eval_set=[(Xe, ye, qe)])
    vals = [h["valid_0_ndcg@10"] for h in model.history_]
    assert len(model.rankers_) == model.best_iteration_ == int(np.argmax(vals)) + 1


@pytest.mark.parametrize("kw,msg", [
    ({"update": "exact"}, "update"), ({"tolerance": "0.1"}, "tolerance"), ({"tolerance": math.nan}, "tolerance"),
    ({"tolerance": True}, "tolerance"), ({"enqueue": "yes"}, "enqueue"), ({"max_consecutive": 0}, "max_consecutive"),
    ({"max_consecutive": 2.5}, "max_consecutive"), ({"measure": "dcg@5"}, "measure"), ({"measure": 3}, "measure"),
    ({"measure": "ndcg@0"}, "measure"), ({"empty": 2.0}, "empty"), ({"empty": "none"}, "empty"),
    ({"n_rounds": 0}, "n_rounds"),
])
def test_bad_parameters(kw, msg):
    X, y, sizes, qid = small_data(19)
    with pytest.raises(ValueError, match=msg):
        AdaRank(**kw).fit(X, y, qid=qid)


# ---- real data ------------------------------------------------------------------------------------------
@pytest.mark.realdata
def test_mq2008_fold1(mq2008_dir):
    from boostplug.data.folds import folds_from_parts, load_letor_parts

    train, vali, test = folds_from_parts(load_letor_parts(mq2008_dir))[0]
    results = {}
    for name, measure in (("AdaRank.MAP", "map"), ("AdaRank.NDCG", "ndcg@5")):
        model = AdaRank(measure=measure, enqueue=True, n_rounds=100).fit(
            train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y, vali.qid)])
        tr = [h["train_measure"] for h in model.history_]
        assert len(tr) >= 2 and tr[-1] > tr[0]
        assert all(h["train_measure"] >= h["bound"] for h in model.history_)
        ndcg10 = metrics.ndcg(model.predict(test.X), test.y, test.group_ptr, 10, empty=0.0)
        assert 0.4 < ndcg10 < 0.6
        results[name] = (tr[0], tr[-1], ndcg10)
    print(results)
