"""What the reference boosters share (boostplug/boosters/_estimator.py, _fit_data.py,
_weak_rankers.py, stumps.py, _stump_sums.py, the RankBoost+ pruning): staged vs. final prediction
bit for bit, the JSON model file (fitted attributes, lazy class import, bad files), early stopping
direction, serial vs. parallel kernels, input validation, and the blocked independent-subset
selection against a brute-force rank test."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from boostplug import metrics
from boostplug._core import dispatch, parallel_threshold
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost, load
from boostplug.boosters import _stump_sums as ss
from boostplug.boosters._rankboost_kernels import PairSpan, select_independent
from boostplug.boosters.stumps import argmax_first, argmax_scan, make_candidates
from boostplug.groups import group_ptr_from_qid
from boostplug.pairs import critical_pairs


def data(seed: int, n_queries: int = 6, max_docs: int = 12, n_feat: int = 4, nan_prob: float = 0.1):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_docs + 1, size=n_queries)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, n_feat)), 1)
    X[rng.random((n, n_feat)) < nan_prob] = np.nan
    y = rng.integers(0, 3, size=n).astype(np.float64)
    return X, y, np.repeat(np.arange(n_queries), sizes)


BOOSTERS = {
    "rb-d": lambda: RankBoost(variant="rb-d", n_rounds=25),
    "rb-c": lambda: RankBoost(variant="rb-c", n_rounds=25),
    "rankboost+": lambda: RankBoost(variant="rankboost+", n_rounds=25, random_state=0),
    "adarank": lambda: AdaRank(measure="ndcg@5", n_rounds=25, tolerance=None, update="multiplicative"),
    "mpboost": lambda: MPBoost(ddf="logdd", n_rounds=25),
    "ndcgboost": lambda: NDCGBoost(n_rounds=25),
}


# ---- prediction ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(BOOSTERS))
def test_predict_is_the_last_staged_prediction_bit_for_bit(name: str) -> None:
    X, y, qid = data(1, n_queries=10)
    Xv, yv, qv = data(2)
    X[:, 0] *= 1 / 3   # irrational-ish values: a different summation order shows in the last bit
    model = BOOSTERS[name]().fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    assert len(model.rankers_) > 3
    staged = list(model.staged_predict(Xv))
    assert len(staged) == len(model.rankers_)
    assert np.array_equal(staged[-1], model.predict(Xv))
    # the recorded validation metric is that of the staged scores (same sums as training)
    gv = group_ptr_from_qid(qv)
    ndcg10 = metrics.by_name("ndcg@10")
    for s, h in zip(staged, model.history_):
        assert h["valid_0_ndcg@10"] == ndcg10(s, yv, gv)
    # a loop over the weighted rankers, in round order, is what predict computes
    ref = np.zeros(Xv.shape[0])
    for r, w in zip(model.rankers_, model.weights_):
        col = Xv[:, r["feature"]]
        if r["kind"] == "feature":
            ref = ref + w * np.nan_to_num(col)
        else:  # a complement stump is [x <= t], 1 on NaN
            ref = ref + w * ((col > r["threshold"]) != bool(r.get("complement")))
    assert np.array_equal(ref, model.predict(Xv))


def test_predict_without_rounds_and_unfitted() -> None:
    X, y, qid = data(3)
    model = RankBoost(n_rounds=5).fit(X, np.zeros_like(y), qid=qid)
    assert model.rankers_ == [] and np.array_equal(model.predict(X), np.zeros(X.shape[0]))
    assert list(model.staged_predict(X)) == []
    with pytest.raises(ValueError, match="not fitted"):
        MPBoost().predict(X)
    with pytest.raises(ValueError, match="3 features but the model was fitted with 4"):
        model.predict(X[:, :3])


# ---- JSON model file ----------------------------------------------------------------------------
def roundtrip(model, path):
    model.save(path)
    return load(path)


def test_rankboost_fitted_attributes_survive_save_load(tmp_path) -> None:
    # efficient RankBoost+ that prunes R (pruned_round_ set), on data where that happens
    for seed in range(10):
        X, y, qid = data(seed, n_queries=4, max_docs=7, n_feat=3)
        model = RankBoost(variant="rankboost+", n_rounds=20, thresholds="all", random_state=seed).fit(X, y, qid=qid)
        if model.pruned_round_ is not None:
            break
    else:  # pragma: no cover - the data above prunes for some seed
        pytest.fail("no seed pruned R")
    back = roundtrip(model, tmp_path / "plus.json")
    for a in ("undefined_round_", "span_size_", "pruned_round_", "stop_reason_", "best_iteration_",
              "n_features_in_", "rankers_", "weights_", "history_"):
        assert getattr(back, a) == getattr(model, a), a
    assert back.span_size_ > 0 and back.pruned_round_ >= 1
    assert np.array_equal(back.predict(X), model.predict(X))
    # Rb-d stopped by an undefined Eq. 14 (a feature that orders every pair: eps- = 0)
    x = np.arange(6.0)
    rbd = RankBoost(variant="rb-d", n_rounds=5, thresholds="all").fit(x[:, None], x, qid=np.zeros(6))
    assert rbd.undefined_round_ is not None and rbd.undefined_round_["eps_minus"] == 0.0
    back = roundtrip(rbd, tmp_path / "rbd.json")
    assert back.undefined_round_ == rbd.undefined_round_ and back.stop_reason_ == rbd.stop_reason_
    assert json.loads((tmp_path / "rbd.json").read_text())["fitted"]["undefined_round_"]["ranker"]["kind"] == "stump"


def test_load_imports_only_the_named_class(tmp_path) -> None:
    X, y, qid = data(4)
    path = tmp_path / "mp.json"
    MPBoost(n_rounds=3).fit(X, y, qid=qid).save(path)
    code = ("import sys; from boostplug.boosters import load; m = load(sys.argv[1]); "
            "print(type(m).__name__, sorted(k.rsplit('.', 1)[1] for k in sys.modules "
            "if k.startswith('boostplug.boosters.')))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
    name, mods = out.split(" ", 1)
    assert name == "MPBoost" and "mpboost" in mods
    for other in ("rankboost", "adarank", "ndcg_boost"):
        assert f"'{other}'" not in mods


def _saved(tmp_path, **changes):
    X, y, qid = data(5)
    path = tmp_path / "m.json"
    MPBoost(n_rounds=3).fit(X, y, qid=qid).save(path)
    d = json.loads(path.read_text())
    d.update(changes)
    path.write_text(json.dumps(d))
    return path


def test_only_the_bases_load_any_booster(tmp_path) -> None:
    """RankingBooster (and the ModelFile mixin) read any booster; a booster class and a user's
    subclass of one read only their own class: the bases' rule is not inherited."""
    from boostplug.boosters import RankingBooster
    from boostplug.boosters._model_file import ModelFile

    path = _saved(tmp_path)
    assert type(RankingBooster.load(path)) is MPBoost and type(ModelFile.load(path)) is MPBoost
    assert type(MPBoost.load(path)) is MPBoost

    class MyMPBoost(MPBoost):
        pass

    with pytest.raises(ValueError, match="holds a MPBoost, not a MyMPBoost"):
        MyMPBoost.load(path)
    with pytest.raises(ValueError, match="holds a MPBoost, not a MyMPBoost"):
        MyMPBoost.from_dict(json.loads(path.read_text()))


def test_load_rejects_what_is_not_a_booster_file(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(ValueError, match="not a boostplug booster JSON file"):
        load(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="format 'list'"):
        load(bad)
    with pytest.raises(ValueError, match="format 'lightgbm'"):
        load(_saved(tmp_path, format="lightgbm"))
    with pytest.raises(ValueError, match="version 7"):
        load(_saved(tmp_path, version=7))
    with pytest.raises(ValueError, match="unknown booster class 'XGBRanker'"):
        load(_saved(tmp_path, **{"class": "XGBRanker"}))
    with pytest.raises(ValueError, match="holds a MPBoost, not a RankBoost"):
        RankBoost.load(_saved(tmp_path))
    with pytest.raises(ValueError, match="3 rankers but 1 weights"):
        load(_saved(tmp_path, weights=[0.5]))
    with pytest.raises(ValueError, match="'params' must be a JSON dict"):
        load(_saved(tmp_path, params=None))
    X, y, qid = data(6)
    path = tmp_path / "rb.json"
    RankBoost(n_rounds=2).fit(X, y, qid=qid).save(path)
    d = json.loads(path.read_text())
    del d["fitted"]["span_size_"]
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"lacks the fitted attributes \['span_size_'\]"):
        load(path)
    assert isinstance(MPBoost.load(_saved(tmp_path)), MPBoost)


# ---- early stopping direction -------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["r2", "r1", "ndcg@5"])
def test_early_stopping_follows_the_metric_direction(metric: str) -> None:
    X, y, qid = data(7, n_queries=12)
    Xv, yv, qv = data(8, n_queries=10)
    full = MPBoost(n_rounds=40, eval_metric=metric).fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    vals = np.array([h[f"valid_0_{metric}"] for h in full.history_])
    best = int(np.argmin(vals) if metric in ("r1", "r2") else np.argmax(vals)) + 1
    assert full.best_iteration_ == best
    assert len(full.rankers_) == len(vals)  # no early stopping asked: every round kept
    es = MPBoost(n_rounds=40, eval_metric=metric, early_stopping_rounds=4).fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    # stopped 4 rounds after the running best, kept up to it
    seen = vals[: len(es.history_)]
    run_best = int(np.argmin(seen) if metric in ("r1", "r2") else np.argmax(seen)) + 1
    assert es.best_iteration_ == run_best == len(es.rankers_)
    assert len(es.history_) == 40 or len(es.history_) - run_best == 4


# ---- shared stump helpers -----------------------------------------------------------------------
def test_argmax_helpers_tie_order() -> None:
    s = np.array([[0.0, 2.0, 2.0 - 1e-14, -np.inf], [2.0, 1.0, 2.0, 0.0]])
    assert argmax_first(s.ravel(), 1e-12) == 1               # lowest flat index
    assert argmax_scan(s, 1e-12)[:2] == (0, 2)                # feature 0, highest threshold within tol
    assert argmax_scan(s, 0.0)[:2] == (0, 1)
    assert argmax_scan(np.full((2, 2), -np.inf), 1e-12)[:2] == (-1, -1)


def test_candidates_carry_the_float32_flag_and_masks() -> None:
    X, _, _ = data(9)
    c = make_candidates(X, "ranklib", n_thresholds=3)
    assert c.float32 and c.stump(1, 2)["float32"] is True and c.codes.flags.f_contiguous
    assert c.n_thr.tolist() == [4] * 4 and c.width == 5 and c.exists[:, :4].all() and not c.exists[:, 4].any()
    s = make_candidates(X, "all")
    assert "float32" not in s.stump(0, 0)
    for k in range(X.shape[1]):
        for j in range(s.n_thr[k]):
            assert np.array_equal(s.vector(k, j), np.nan_to_num(X[:, k], nan=-np.inf) > s.thresholds[k][j])


@pytest.mark.parametrize("mode", ["sample", "quantile"])
def test_max_thresholds_caps_every_candidate_including_the_missing_value_split(mode: str) -> None:
    from boostplug.boosters.stumps import candidate_thresholds

    rng = np.random.default_rng(12)
    base = rng.permutation(300).astype(np.float64)          # 300 distinct values
    cols = {"300 + NaN": base.copy(), "300": base.copy(), "255 + NaN": base.copy(), "254 + NaN": base.copy(),
            "3 + NaN": base.copy()}
    cols["300 + NaN"][:5] = np.nan
    cols["255 + NaN"][255:] = np.nan
    cols["254 + NaN"][254:] = np.nan
    cols["3 + NaN"][3:] = np.nan
    X = np.column_stack(list(cols.values()))
    th = candidate_thresholds(X, mode, max_thresholds=255, rng=np.random.default_rng(0))
    assert [t.size for t in th] == [255, 255, 255, 255, 4]
    for name, t in zip(cols, th):
        col = cols[name]
        known = np.unique(col[~np.isnan(col)])
        if np.isnan(col).any():
            assert t[0] == -np.inf and np.isfinite(t[1:]).all()
        assert np.isin(t[np.isfinite(t)], known).all() and np.all(np.diff(t) > 0)
    assert np.array_equal(th[3][1:], np.sort(base[:254]))    # 254 values + NaN: every value kept
    tiny = candidate_thresholds(X, mode, max_thresholds=1, rng=np.random.default_rng(0))
    assert [t.tolist() for t in tiny[:1] + tiny[2:]] == [[-np.inf]] * 4 and tiny[1].size == 1
    assert [t.size for t in candidate_thresholds(X, "all")] == [296, 300, 256, 255, 4]   # "all": no cap


# ---- serial and parallel kernels ------------------------------------------------------------------
@pytest.mark.parametrize("order", ["C", "F"])
def test_stump_sum_kernels_serial_equals_parallel_equals_loops(order: str, monkeypatch) -> None:
    rng = np.random.default_rng(10)
    n, F, width = 60, 5, 9
    codes = np.array(rng.integers(0, width, size=(n, F)), dtype=np.int32, order=order)
    pairs = rng.integers(0, n, size=(200, 2)).astype(np.int64)
    v = rng.random(200)
    pot = rng.normal(size=n)
    n_thr = np.full(F, width - 1)
    ref_doc = np.array([[pot[codes[:, k] > j].sum() for j in range(width)] for k in range(F)])
    ca, cb = codes[pairs[:, 0]], codes[pairs[:, 1]]
    ref_cor = np.array([[v[(cb[:, k] <= j) & (j < ca[:, k])].sum() for j in range(width)] for k in range(F)])
    ref_rev = np.array([[v[(ca[:, k] <= j) & (j < cb[:, k])].sum() for j in range(width)] for k in range(F)])
    wd = v * rng.normal(size=200)
    ref_signed = np.array([[wd[(cb[:, k] <= j) & (j < ca[:, k])].sum() - wd[(ca[:, k] <= j) & (j < cb[:, k])].sum()
                            for j in range(width)] for k in range(F)])
    outs = {}
    for mode, threshold in (("serial", 10**12), ("parallel", 0)):
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", threshold)
        outs[mode] = (ss.doc_sums_above(codes, pot, n_thr), *ss.pair_split_sums(codes, pairs, v, n_thr),
                      *ss.pair_fit_sums(codes, pairs, v, wd, n_thr))
    refs = (ref_doc, ref_cor, ref_rev, ref_signed, ref_cor + ref_rev)
    for a, b, ref in zip(outs["serial"], outs["parallel"], refs, strict=True):
        assert np.array_equal(a, b)
        np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("width, n_pairs, budget", [(9, 203, None), (300, 203, None), (9, 203, 1),
                                                    (300, 203, 2 * 203 * 2), (9, 0, None)])
def test_pair_min_codes_sums_equal_loops(width: int, n_pairs: int, budget: int | None, monkeypatch) -> None:
    """RankBoost+'s per-round sums from the pairs' kept lower codes: ``correct - reverse`` and
    ``correct + reverse`` of every stump, serial = parallel, kept codes = codes made per feature block."""
    from boostplug.boosters._pair_mins import PairMinCodes

    rng = np.random.default_rng(11 + width + n_pairs)
    n, F = 60, 5
    codes = np.asfortranarray(rng.integers(0, width, size=(n, F)), dtype=np.int32)
    codes[:, 2] = 0                                    # a feature no stump of which splits a pair
    pairs = rng.integers(0, n, size=(n_pairs, 2)).astype(np.int64)
    v = rng.random(n_pairs)
    n_thr = np.array([width - 1, width - 2, 0, 3, width - 1])
    ca, cb = codes[pairs[:, 0]], codes[pairs[:, 1]]
    cor = np.array([[v[(cb[:, k] <= j) & (j < ca[:, k])].sum() for j in range(width)] for k in range(F)])
    rev = np.array([[v[(ca[:, k] <= j) & (j < cb[:, k])].sum() for j in range(width)] for k in range(F)])
    outs = {}
    for mode, threshold in (("serial", 10**12), ("parallel", 0)):
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", threshold)
        kept = PairMinCodes(codes, pairs, n_thr)
        assert kept.kept is not None and kept.kept.dtype == (np.uint8 if width <= 256 else np.uint16)
        outs[mode] = kept.sums(v)
        if budget is not None:                       # blocks of features, their lower codes made each round
            blocks = PairMinCodes(codes, pairs, n_thr, budget=budget)
            assert blocks.kept is None and blocks.block < F
            for a, b in zip(blocks.sums(v), outs[mode], strict=True):
                assert np.array_equal(a, b)
        for made in [kept] + ([blocks] if budget is not None else []):   # split of some features only
            for features in ([0, 3], [4], []):
                signed, split = made.sums(v, features=np.array(features, dtype=np.int64))
                assert np.array_equal(signed, outs[mode][0])
                rest = np.setdiff1d(np.arange(F), features)
                assert np.array_equal(split[features], outs[mode][1][features]) and np.isnan(split[rest]).all()
    for a, b, ref in zip(outs["serial"], outs["parallel"], (cor - rev, cor + rev), strict=True):
        assert a.shape == (F, width) and np.array_equal(a, b)
        np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12)


def test_small_inputs_take_the_serial_path(monkeypatch) -> None:
    """The stump sums go parallel from 20 million document visits or 5 million pair visits."""
    chosen: list[tuple[str, int]] = []

    def spy(kernel, work):
        chosen.append((kernel.py_func.__name__, work))
        return dispatch.serial_twin(kernel)

    monkeypatch.setattr(dispatch, "kernel_for", spy)
    codes = np.zeros((100, 3), dtype=np.int32)
    ss.doc_sums_above(codes, np.zeros(100), np.array([1, 1, 1]))
    ss.pair_split_sums(codes, np.zeros((7, 2), dtype=np.int64), np.zeros(7), np.array([1, 1, 1]))
    assert chosen == [("_doc_sums_above", 75), ("_pair_sums", 21)]
    assert 20_000_000 // ss.DOC_VISITS_PER_WORK == parallel_threshold.DEFAULT_PARALLEL_MIN_WORK == 5_000_000


# ---- RankBoost+ pruning: blocked independent subset vs. a brute-force rank test --------------------------
def brute_force_drop(vecs, members, order, cap):
    """Greedy in order: drop a stump whose pair vector is in the span of those kept before it."""
    kept = [vecs[m] for m in members]
    drop = np.zeros(len(order), dtype=bool)
    for i, s in enumerate(order):
        M = np.array(kept + [vecs[s]])
        if np.linalg.matrix_rank(M) == len(kept):
            drop[i] = True
        elif len(kept) == cap:
            break
        else:
            kept.append(vecs[s])
    return drop


def pair_vectors(cands, pairs, shape):
    """The stumps that split a pair, their pair vectors ``D h`` and squared norms (``nsplit``)."""
    D = np.zeros((pairs.shape[0], shape[0]))
    D[np.arange(pairs.shape[0]), pairs[:, 0]] = 1.0
    D[np.arange(pairs.shape[0]), pairs[:, 1]] = -1.0
    stumps = [(k, j) for k in range(shape[1]) for j in range(cands.n_thr[k])]
    vecs = {s: D @ cands.vector(*s) for s in stumps}
    stumps = [s for s in stumps if np.any(vecs[s] != 0)]
    nsplit = np.zeros((shape[1], cands.width))
    for s in stumps:
        nsplit[s] = np.count_nonzero(vecs[s])
    return stumps, vecs, nsplit


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("block", [1, 3, 64])
def test_select_independent_matches_brute_force(seed: int, block: int) -> None:
    X, y, qid = data(seed, n_queries=4, max_docs=8, n_feat=3)
    gp = group_ptr_from_qid(qid)
    pairs = critical_pairs(y, gp)
    cands = make_candidates(X, "all")
    stumps, vecs, nsplit = pair_vectors(cands, pairs, X.shape)
    span = PairSpan(cands.codes, pairs)
    rng = np.random.default_rng(seed)
    members = []
    for i in rng.permutation(len(stumps))[:2]:
        h = cands.vector(*stumps[i])
        c, u, r2, norm2 = span.residual(h)
        if not span.is_dependent(r2, norm2):
            span.add(*stumps[i], c, u, r2, 0.0)
            members.append(stumps[i])
    rest = [s for s in stumps if s not in members]
    order = np.array([rest[i] for i in rng.permutation(len(rest))], dtype=np.int64)
    rank = np.linalg.matrix_rank(np.array([vecs[s] for s in stumps]))
    for cap in (len(members) + 2, rank + 5):
        got = select_independent(cands.codes, order, span, nsplit, cands.n_thr, cap, block=block)
        ref = brute_force_drop(vecs, members, [tuple(o) for o in order], cap)
        assert np.array_equal(got, ref)
        if cap > rank:   # everything beyond a basis is dropped
            assert np.count_nonzero(~got) == rank - len(members)


def pruning_case(X, y, qid, seed: int, n_members: int):
    """Candidates in a random order after ``n_members`` of them joined a span on the critical pairs:
    ``(cands, pairs, nsplit, order, span)``."""
    rng = np.random.default_rng(seed)
    pairs = critical_pairs(y, group_ptr_from_qid(qid))
    cands = make_candidates(X, "all")
    cor, rev = ss.pair_split_sums(cands.codes, pairs, np.ones(pairs.shape[0]), cands.n_thr)
    nsplit = np.where(cands.exists, cor + rev, 0.0)
    cand = np.argwhere(cands.exists & (nsplit > 0))
    order = cand[rng.permutation(cand.shape[0])]
    span = PairSpan(cands.codes, pairs)
    for k, j in order[:n_members]:
        c, u, r2, _ = span.residual(cands.vector(k, j))
        span.add(k, j, c, u, r2, 0.0)
    return cands, pairs, nsplit, order[n_members:], span


def test_select_independent_grows_its_arrays_and_windows(monkeypatch) -> None:
    """Room for 2 basis stumps at first (so the arrays grow block after block, and the window of
    products moves every 4 candidates): the same drops as one-at-a-time Gram-Schmidt."""
    from boostplug.boosters import _rankboost_kernels as rk

    X, y, qid = data(3, n_queries=10, max_docs=12, n_feat=4)
    cands, pairs, nsplit, order, span = pruning_case(np.round(X * 2) / 2, y, qid, 3, n_members=1)
    ref = sequential_gram_schmidt_drop(cands.codes, pairs, order, span, nsplit, cands.n_thr, order.shape[0] + 1)
    monkeypatch.setattr(rk, "first_capacity", lambda room, n: min(room, 2))
    for block in (1, 2, 5):
        got = select_independent(cands.codes, order, span, nsplit, cands.n_thr, order.shape[0] + 1, block=block)
        assert np.array_equal(got, ref)
    assert 0 < np.count_nonzero(ref) < ref.size - 5


@pytest.mark.parametrize("n_vecs", [1, 16, 21])
def test_stump_products_are_the_products_serial_and_parallel(monkeypatch, n_vecs: int) -> None:
    """``StumpProducts.fill``: ``h_i . v_b`` for the stumps in ``[lo, hi)`` of its list, the same bits
    serially and in parallel, to 1e-12 the products of the stumps' vectors; rows past ``hi - lo`` and
    columns past ``n_vecs`` of the buffer untouched."""
    from boostplug.boosters._rankboost_kernels import StumpProducts

    rng = np.random.default_rng(n_vecs)
    n, F = 60, 3
    n_thr = np.array([4, 9, 1])
    codes = np.asfortranarray(rng.integers(0, n_thr + 1, size=(n, F)).astype(np.int32))
    stumps = np.array([(k, j) for k in range(F) for j in range(n_thr[k])])[rng.permutation(int(n_thr.sum()))]
    vecs = rng.normal(size=(n_vecs, n))
    sp = StumpProducts(codes, int(n_thr.max()) + 1, stumps[:, 0], stumps[:, 1])
    lo, hi = 2, stumps.shape[0] - 1
    ref = np.array([[(codes[:, k] > j) @ v for v in vecs] for k, j in stumps[lo:hi]])
    outs = []
    for threshold in (0, 2**62):
        monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", threshold)
        out = np.full((hi - lo + 3, n_vecs + 2), -7.0)
        sp.fill(vecs, lo, hi, out)
        assert np.allclose(out[:hi - lo, :n_vecs], ref, rtol=1e-12, atol=1e-12)
        assert (out[hi - lo:] == -7.0).all() and (out[:, n_vecs:] == -7.0).all()
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])


def sequential_gram_schmidt_drop(codes, pairs, order, span, nsplit, n_thr, cap):
    """The previous one-candidate-at-a-time pruning (matrix-vector Gram-Schmidt twice)."""
    from boostplug.boosters._rankboost_kernels import DEPENDENT_RTOL, laplacian
    from boostplug.boosters._stump_sums import doc_sums_above

    n, m = codes.shape[0], span.size
    pad = np.zeros((n, cap - m))
    Q, LQ = np.hstack([span.Q, pad]), np.hstack([span.LQ, pad])
    # squared residual norms: what the members' coefficients leave of each candidate's norm
    r2 = nsplit - (np.square(span.all_coefficients(n_thr)).sum(axis=2) if m else 0.0)
    drop = np.zeros(len(order), dtype=bool)
    for i, (k, j) in enumerate(order):
        if r2[k, j] <= DEPENDENT_RTOL * nsplit[k, j]:
            drop[i] = True
            continue
        if m == cap:
            break
        h = (codes[:, k] > j).astype(float)
        u = h - Q[:, :m] @ (LQ[:, :m].T @ h)
        u -= Q[:, :m] @ (LQ[:, :m].T @ u)
        Lu = laplacian(pairs, u, n)
        rr = float(u @ Lu)
        if rr <= DEPENDENT_RTOL * nsplit[k, j]:
            drop[i] = True
            continue
        Q[:, m], LQ[:, m] = u / np.sqrt(rr), Lu / np.sqrt(rr)
        r2 -= doc_sums_above(codes, LQ[:, m], n_thr) ** 2
        m += 1
    return drop


def test_select_independent_matches_sequential_gram_schmidt_on_larger_data() -> None:
    """About 80 candidates, several blocks, ties and NaN: the blocked selection drops exactly
    what one-at-a-time Gram-Schmidt drops, with and without reaching the cap."""
    X, y, qid = data(11, n_queries=25, max_docs=20, n_feat=6, nan_prob=0.05)
    X = np.round(X * 2) / 2     # few distinct values: many dependent stumps
    X[:, 5] = X[:, 0] + (X[:, 1] > 0)   # a feature whose stumps mix two others
    cands, pairs, nsplit, order, span = pruning_case(X, y, qid, 11, n_members=3)
    for cap in (span.size + 10, order.shape[0] + span.size):
        ref = sequential_gram_schmidt_drop(cands.codes, pairs, order, span, nsplit, cands.n_thr, cap)
        for block in (1, 7, 64):
            got = select_independent(cands.codes, order, span, nsplit, cands.n_thr, cap, block=block)
            assert np.array_equal(got, ref)
    assert 0 < np.count_nonzero(ref) < ref.size - 10   # the full run drops many, keeps many



def test_select_independent_skips_unlinked_documents_on_both_metrics() -> None:
    """Queries of one label and pairs of weight 0 link no document: ``linked`` leaves those out
    (their rows of L are zero), and the pruning on the label levels, on the pair list and on a pair
    list with those queries' pairs weighted 0 drops what the brute-force rank test drops."""
    from boostplug.boosters._level_sums import LevelPairs, LevelSpan

    X, y, qid = data(4, n_queries=8, max_docs=10, n_feat=3)
    X = np.round(X)             # few distinct values: some stumps are dependent
    y[qid == 1] = 2.0           # two queries of one label: no pair
    y[qid == 5] = 0.0
    gp = group_ptr_from_qid(qid)
    pairs = critical_pairs(y, gp)
    cands = make_candidates(X, "all")
    lv = LevelPairs(y, gp, None)
    single = np.isin(qid, [1, 5])
    assert np.array_equal(LevelSpan(cands.codes, lv).linked(), ~single)
    assert np.array_equal(PairSpan(cands.codes, pairs).linked(), ~single)
    w = np.where(np.isin(qid[pairs[:, 0]], [2]), 0.0, 1.0)     # query 2's pairs weigh nothing
    assert np.array_equal(PairSpan(cands.codes, pairs, w).linked(), ~single & (qid != 2))
    for span, kept in ((LevelSpan(cands.codes, lv), np.ones(pairs.shape[0], bool)),
                       (PairSpan(cands.codes, pairs), np.ones(pairs.shape[0], bool)),
                       (PairSpan(cands.codes, pairs, w), w > 0)):
        stumps, vecs, nsplit = pair_vectors(cands, pairs[kept], X.shape)
        order = np.array([stumps[i] for i in np.random.default_rng(0).permutation(len(stumps))], dtype=np.int64)
        got = select_independent(cands.codes, order, span, nsplit, cands.n_thr, len(stumps) + 1, block=5)
        ref = brute_force_drop(vecs, [], [tuple(o) for o in order], len(stumps) + 1)
        assert np.array_equal(got, ref)
        assert ref.any() and not ref.all()


@pytest.mark.parametrize("metric", ["pairs", "weighted", "levels"])
def test_span_from_products_answers_as_gram_schmidt(metric: str) -> None:
    """``use_products``: a stump's coefficients, squared residual and norm from the stumps' products
    with the members equal (1e-9 of the norm) those of Gram-Schmidt over the document vectors, on the
    three pair metrics, member after member, dependent stumps included; so do ``R`` and
    ``all_coefficients``. A span with members refuses the switch."""
    from boostplug.boosters._level_sums import LevelPairs, LevelSpan

    X, y, qid = data(7, n_queries=8, max_docs=12, n_feat=3)
    X = np.round(X, 1)
    gp = group_ptr_from_qid(qid)
    pairs = critical_pairs(y, gp)
    cands = make_candidates(X, "all")
    w = np.random.default_rng(7).choice([0.0, 0.5, 2.0], size=pairs.shape[0]) if metric == "weighted" else None

    def make() -> PairSpan:
        return LevelSpan(cands.codes, LevelPairs(y, gp, None)) if metric == "levels" else PairSpan(cands.codes, pairs, w)

    vec, prod = make(), make()
    nsplit = np.zeros((X.shape[1], cands.width))
    for k in range(X.shape[1]):
        for j in range(cands.n_thr[k]):
            h = cands.vector(k, j)
            nsplit[k, j] = h @ vec._laplacian(h)
    prod.use_products(nsplit, cands.n_thr)
    stumps = [(k, j) for k in range(X.shape[1]) for j in range(cands.n_thr[k]) if nsplit[k, j] > 0]
    seen_dependent = 0
    for k, j in [stumps[i] for i in np.random.default_rng(1).permutation(len(stumps))]:
        h = cands.vector(k, j)
        c, u, r2, n2 = vec.stump_residual(k, j, h)
        c_p, u_p, r2_p, n2_p = prod.stump_residual(k, j, h)
        assert u_p is None and n2_p == pytest.approx(n2, rel=1e-12)
        assert np.allclose(c_p, c, rtol=0, atol=1e-9 * np.sqrt(n2))
        assert abs(r2_p - r2) <= 1e-9 * n2
        assert prod.is_dependent(r2_p, n2_p) == vec.is_dependent(r2, n2)
        if vec.is_dependent(r2, n2):
            seen_dependent += 1
            continue
        vec.add(k, j, c, u, r2, 0.0)
        prod.add(k, j, c_p, None, r2_p, 0.0)
    assert seen_dependent > 0 and prod.size == vec.size > 3
    assert np.allclose(prod.R, vec.R, rtol=0, atol=1e-9 * np.sqrt(nsplit.max()))
    assert np.allclose(prod.all_coefficients(cands.n_thr), vec.all_coefficients(cands.n_thr), rtol=0,
                       atol=1e-9 * np.sqrt(nsplit.max()))
    with pytest.raises(ValueError, match=f"needs an empty span, this one has {prod.size} members"):
        prod.use_products(nsplit, cands.n_thr)


# ---- fit: eval_set, callback, verbose, Ctrl-C, parameter checks ---------------------------------
@pytest.mark.parametrize("name", sorted(BOOSTERS))
def test_eval_set_is_checked_against_the_x_of_this_fit(name: str) -> None:
    X, y, qid = data(1, n_queries=10)           # 4 features
    Xv, yv, qv = data(2)
    with pytest.raises(ValueError, match=r"eval_set\[0\] X has 3 features but the training X has 4"):
        BOOSTERS[name]().fit(X, y, qid=qid, eval_set=[(Xv[:, :3], yv, qv)])
    model = BOOSTERS[name]().fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    # a refit on 3 features validates its eval_set against those 3, not the previous fit's 4
    model.fit(X[:, :3], y, qid=qid, eval_set=[(Xv[:, :3], yv, qv)])
    assert model.n_features_in_ == 3 and len(model.history_) > 0
    assert all(r["feature"] < 3 for r in model.rankers_)
    assert model.history_[-1]["valid_0_ndcg@10"] == metrics.by_name("ndcg@10")(
        model.predict(Xv[:, :3]), yv, group_ptr_from_qid(qv))
    with pytest.raises(ValueError, match=r"eval_set\[1\] X has 4 features but the training X has 3"):
        model.fit(X[:, :3], y, qid=qid, eval_set=[(Xv[:, :3], yv, qv), (Xv, yv, qv)])


def test_callback_is_called_every_round_and_true_stops() -> None:
    X, y, qid = data(1, n_queries=10)
    seen = []

    def stop_at_5(t, rec):
        seen.append((t, rec))
        return t == 5

    model = MPBoost(n_rounds=25).fit(X, y, qid=qid, callback=stop_at_5)
    assert [t for t, _ in seen] == [1, 2, 3, 4, 5]
    assert [rec for _, rec in seen] == model.history_          # the round's full record
    assert len(model.rankers_) == 5 and model.stop_reason_ == "stopped by callback"
    # a callback returning None, False or 0 does not stop training
    for value in (None, False, 0):
        m = MPBoost(n_rounds=8).fit(X, y, qid=qid, callback=lambda t, rec, v=value: v)
        assert len(m.rankers_) == 8 and m.stop_reason_ == "n_rounds reached"
    with pytest.raises(TypeError, match="callback must be callable"):
        MPBoost(n_rounds=2).fit(X, y, qid=qid, callback="print")


@pytest.mark.parametrize("verbose, shown", [(0, []), (False, []), (True, [1, 2, 3, 4, 5, 6]), (1, [1, 2, 3, 4, 5, 6]),
                                            (2, [1, 2, 4, 6]), (4, [1, 4])])
def test_verbose_prints_progress_to_stderr(verbose, shown, capsys) -> None:
    X, y, qid = data(1, n_queries=10)
    Xv, yv, qv = data(2)
    model = RankBoost(variant="rb-c", n_rounds=6, verbose=verbose).fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    assert len(model.history_) == 6
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert [int(line.split("round ")[1].split(":")[0]) for line in lines] == shown
    for line, t in zip(lines, shown):
        h = model.history_[t - 1]
        assert line.startswith(f"[RankBoost] round {t}: ")
        assert f"alpha={h['alpha']:.5g}" in line and f"valid_0_ndcg@10={h['valid_0_ndcg@10']:.5g}" in line


def check_whole_rounds(model, X, tmp_path, n: int) -> None:
    """After an interrupt: n whole rounds, predict = last staged prediction, save/load round trip."""
    assert len(model.rankers_) == len(model.weights_) == len(model.history_) == n
    assert [h["round"] for h in model.history_] == list(range(1, n + 1))
    assert [h["weight"] for h in model.history_] == model.weights_
    assert model.stop_reason_ == "interrupted"
    staged = list(model.staged_predict(X))
    assert len(staged) == n and np.array_equal(staged[-1], model.predict(X))
    back = roundtrip(model, tmp_path / "interrupted.json")
    assert back.stop_reason_ == "interrupted" and back.history_ == model.history_
    assert np.array_equal(back.predict(X), model.predict(X))


@pytest.mark.parametrize("name", sorted(BOOSTERS))
def test_ctrl_c_inside_a_round_keeps_the_rounds_done(name: str, tmp_path, monkeypatch, capsys) -> None:
    X, y, qid = data(1, n_queries=10)
    model = BOOSTERS[name]()
    fit_round = model._fit_round

    def interrupted_at_round_4(state, t):
        if t == 3:
            raise KeyboardInterrupt
        return fit_round(state, t)

    monkeypatch.setattr(model, "_fit_round", interrupted_at_round_4)
    model.fit(X, y, qid=qid)
    check_whole_rounds(model, X, tmp_path, 3)
    assert f"[{type(model).__name__}] interrupted: keeping 3 rounds" in capsys.readouterr().err


def test_ctrl_c_in_the_callback_keeps_that_round(tmp_path) -> None:
    X, y, qid = data(1, n_queries=10)

    def ctrl_c_at_3(t, rec):
        if t == 3:
            raise KeyboardInterrupt

    model = MPBoost(n_rounds=25).fit(X, y, qid=qid, callback=ctrl_c_at_3)
    check_whole_rounds(model, X, tmp_path, 3)     # the callback runs after the round is recorded


@pytest.mark.parametrize("name", sorted(BOOSTERS))
@pytest.mark.parametrize("n_sets, call", [(1, 4), (2, 8)])
def test_ctrl_c_inside_the_validation_metric_drops_the_partial_round(name: str, n_sets: int, call: int,
                                                                      tmp_path, monkeypatch) -> None:
    """The interrupt hits while round 4 is being evaluated (its only or its second eval set):
    round 4 is not kept at all, rounds 1-3 are kept whole."""
    X, y, qid = data(1, n_queries=10)
    Xv, yv, qv = data(2)
    ndcg10 = metrics.by_name("ndcg@10")
    calls = []

    def metric(scores, labels, group_ptr):
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return ndcg10(scores, labels, group_ptr)

    model = BOOSTERS[name]()
    monkeypatch.setattr(model, "_eval_scorer", lambda labels, group_ptr: lambda scores: metric(scores, labels, group_ptr))
    model.fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)] * n_sets)
    check_whole_rounds(model, X, tmp_path, 3)
    assert model.best_iteration_ is not None and model.best_iteration_ <= 3


@pytest.mark.parametrize("params, needle", [
    ({"early_stopping_rounds": 0}, "early_stopping_rounds must be an integer >= 1 or None, got 0"),
    ({"early_stopping_rounds": -1}, "early_stopping_rounds must be an integer >= 1 or None, got -1"),
    ({"early_stopping_rounds": 1.5}, "early_stopping_rounds must be an integer >= 1 or None, got 1.5"),
    ({"early_stopping_rounds": True}, "early_stopping_rounds must be an integer >= 1 or None, got True"),
    ({"early_stopping_rounds": "3"}, "early_stopping_rounds must be an integer >= 1 or None, got '3'"),
    ({"verbose": "yes"}, "verbose must be a bool or an integer >= 0.*got 'yes'"),
    ({"verbose": -1}, "verbose must be a bool or an integer >= 0.*got -1"),
    ({"verbose": 2.5}, "verbose must be a bool or an integer >= 0.*got 2.5"),
    ({"verbose": None}, "verbose must be a bool or an integer >= 0.*got None"),
])
@pytest.mark.parametrize("name", ["rb-c", "mpboost"])
def test_bad_common_parameters(name: str, params, needle) -> None:
    X, y, qid = data(1)
    Xv, yv, qv = data(2)
    with pytest.raises(ValueError, match=needle):
        BOOSTERS[name]().set_params(**params).fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])


@pytest.mark.parametrize("name", sorted(BOOSTERS))
def test_x_without_features_is_refused(name: str) -> None:
    X, y, qid = data(1)
    with pytest.raises(ValueError, match=r"X has no features \(shape \(\d+, 0\)\)"):
        BOOSTERS[name]().fit(X[:, :0], y, qid=qid)
    with pytest.raises(ValueError, match="no features"):
        BOOSTERS[name]().fit(X, y, qid=qid, eval_set=[(X[:, :0], y, qid)])


# ---- input validation shared with the rest of the package (boostplug/_validation.py) ------------
@pytest.mark.parametrize("cls, param", [(RankBoost, "efficient"), (AdaRank, "enqueue")])
@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_non_bool_flag_is_both_a_type_and_a_value_error(cls, param: str, value) -> None:
    from boostplug._validation import FlagError

    X, y, qid = data(1)
    with pytest.raises(FlagError, match=f"{param} must be True or False; got {value!r}") as info:
        cls(**{param: value}).fit(X, y, qid=qid)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_check_flag_takes_numpy_bools_and_refuses_anything_else() -> None:
    from boostplug._validation import check_flag

    assert check_flag(np.bool_(True), "efficient") is True
    with pytest.raises(ValueError, match="efficient must be True or False"):
        check_flag("no", "efficient")


@pytest.mark.parametrize("name", ["rb-c", "adarank"])
def test_infinite_x_is_refused_naming_the_cell_and_sparse_x_is_densified(name: str) -> None:
    import scipy.sparse as sp

    X, y, qid = data(4, nan_prob=0.0)
    bad = X.copy()
    bad[3, 2] = -np.inf
    with pytest.raises(ValueError, match=r"X must not hold infinite values; X\[3, 2\] = -inf"):
        BOOSTERS[name]().fit(bad, y, qid=qid)
    model = BOOSTERS[name]().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"X must not hold infinite values; X\[3, 2\] = -inf"):
        model.predict(bad)
    sparse = BOOSTERS[name]().fit(sp.csr_matrix(X), y, qid=qid)
    assert sparse.rankers_ == model.rankers_ and sparse.weights_ == model.weights_
    assert np.array_equal(sparse.predict(sp.csr_matrix(X)), model.predict(X))
    with pytest.raises(TypeError, match="X must be numeric, got dtype <U1"):
        model.predict(np.full((2, 4), "a"))


def _blas_threads():
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


@pytest.mark.parametrize("parallel", [False, True])
def test_a_fit_bounds_its_blas_threads_and_restores_them(monkeypatch, parallel):
    """Idle OpenBLAS threads spin and take the cores a parallel numba kernel runs on: from the first
    parallel kernel of a fit on, BLAS has one thread; a fit whose kernels run serially keeps numba's
    count (one under limit_threads(1), as in compare --jobs); the counts come back after the fit."""
    import numba

    from boostplug._core.threads import limit_threads

    if numba.get_num_threads() < 2 or min(_blas_threads() or [1]) < 2:
        pytest.skip("needs two numba and two BLAS threads")
    monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", 0 if parallel else 2**62)
    X, y, qid = data(3)
    before = _blas_threads()
    for threads in (None, 1):
        seen = []
        with limit_threads(threads):
            RankBoost(variant="rankboost+", n_rounds=3).fit(X, y, qid=qid,
                                                              callback=lambda t, rec: seen.append(_blas_threads()))
        expected = 1 if parallel or threads == 1 else min(before)
        assert seen and all(counts and set(counts) == {expected} for counts in seen), (threads, seen)
        assert _blas_threads() == before


def _dense_laplacian_rank(pairs, n, weights=None):
    L = np.zeros((n, n))
    w = np.ones(pairs.shape[0]) if weights is None else weights
    for (a, b), v in zip(pairs, w):
        L[a, a] += v
        L[b, b] += v
        L[a, b] -= v
        L[b, a] -= v
    return np.linalg.matrix_rank(L)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metric_rank_is_the_rank_of_the_pair_metric(seed: int) -> None:
    """Linked documents less connected components: the rank of ``L`` on the pair list (pairs of
    weight 0 left out, several queries, queries of one label) and on the label levels."""
    from boostplug.boosters._level_sums import LevelPairs, LevelSpan

    X, y, qid = data(seed, n_queries=6, max_docs=9, n_feat=2)
    y[qid == 2] = 1.0                              # a query of one label: no pair
    gp = group_ptr_from_qid(qid)
    pairs = critical_pairs(y, gp)
    codes = make_candidates(X, "all").codes
    w = np.where(np.random.default_rng(seed).random(pairs.shape[0]) < 0.3, 0.0, 1.0)
    w[qid[pairs[:, 0]] == 0] = 0.0                 # one query's pairs all weigh nothing
    assert PairSpan(codes, pairs).metric_rank() == _dense_laplacian_rank(pairs, X.shape[0])
    assert PairSpan(codes, pairs, w).metric_rank() == _dense_laplacian_rank(pairs, X.shape[0], w)
    assert LevelSpan(codes, LevelPairs(y, gp, None)).metric_rank() == _dense_laplacian_rank(pairs, X.shape[0])
    assert PairSpan(codes, pairs[:0]).metric_rank() == 0


@pytest.mark.parametrize("level_metric", [False, True])
def test_pruning_stops_solving_once_the_basis_spans_the_metric(monkeypatch, level_metric: bool) -> None:
    """One query with many thresholds: the basis reaches the metric's rank early, the candidates after
    it are dropped unsolved, the same drops as without that stop (and as Gram-Schmidt)."""
    from boostplug.boosters._level_sums import LevelPairs, LevelSpan

    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 5))
    y = rng.integers(0, 4, 30).astype(float)
    qid = np.zeros(30, dtype=np.int64)
    cands, pairs, nsplit, order, span = pruning_case(X, y, qid, 7, n_members=0)
    if level_metric:
        span = LevelSpan(cands.codes, LevelPairs(y, group_ptr_from_qid(qid), None))
    cap = order.shape[0] + 1
    got = select_independent(cands.codes, order, span, nsplit, cands.n_thr, cap, block=16)
    assert np.count_nonzero(~got) == span.metric_rank() == 29
    monkeypatch.setattr(type(span), "metric_rank", lambda self: 10**9)
    assert np.array_equal(select_independent(cands.codes, order, span, nsplit, cands.n_thr, cap, block=16), got)
    if not level_metric:
        assert np.array_equal(sequential_gram_schmidt_drop(cands.codes, pairs, order, span, nsplit, cands.n_thr, cap),
                              got)
