"""The registered ``lambdarank``: LightGBM's lambdarank through the plugin path grows the built-in's
trees (split features and thresholds equal, leaf values to 1e-12 relative) over 100 rounds, at
LightGBM's defaults and with its parameters set; it trains on XGBoost; bad settings are refused
naming the value. Its gradients against a loop over the pairs are in test_pairwise_base.py's
style here too (LightGBM's float32 arithmetic emulated in numpy)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug import objectives
from boostplug.data import load_example
from boostplug.objectives.lambdarank import DEFAULT_LABEL_GAIN, LambdaRank, sigmoid_table
from tests._helpers import MQ2008, need_data
from tests.objectives._same_trees import assert_same_trees

lgb = pytest.importorskip("lightgbm")
from boostplug import lightgbm as bpl  # noqa: E402  (needs lightgbm)

#: LightGBM's parameters of the comparison: one thread (its sums are then in one order) and no metric
BASE = {"verbose": -1, "num_threads": 1, "metric": "None", "deterministic": True}


def _train_both(train, params: dict, rounds: int, *, weight=None, tree: dict | None = None,
                builtin: str = "lambdarank", plugin: str = "lambdarank"):
    """LightGBM's ``builtin`` and the registered ``plugin`` with the objective's ``params``, each on
    a new Dataset with the tree parameters ``tree``."""
    def fit(objective, own):
        ds = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr, weight=weight)
        return lgb.train({**BASE, **(tree or {}), **own, "objective": objective}, ds, rounds)

    return fit(builtin, params), fit(bpl.objective(plugin, **params), {})


@pytest.fixture(scope="module")
def example():
    return load_example()[0]


@pytest.fixture(scope="module")
def at_defaults(example):
    """The built-in and the plugin at LightGBM's defaults, 100 rounds."""
    return _train_both(example, {}, 100)


def test_default_settings_grow_lightgbms_trees(at_defaults) -> None:
    """LightGBM's defaults, 100 rounds: the same trees (a test that fails if one threshold moves:
    test_a_hessian_floor_would_not)."""
    builtin, plugin = at_defaults
    assert_same_trees(builtin, plugin)
    assert builtin.num_trees() == 100


@pytest.mark.parametrize("params", [
    {"lambdarank_truncation_level": 5, "sigmoid": 1.7, "label_gain": [0.0, 1.0, 3.0, 6.0, 15.0]},
    {"lambdarank_norm": False, "num_leaves": 15},
], ids=["truncation-sigmoid-label_gain", "no-norm"])
def test_lightgbms_parameters_grow_its_trees(example, params) -> None:
    tree = {k: v for k, v in params.items() if k == "num_leaves"}
    mine = {k: v for k, v in params.items() if k != "num_leaves"}
    assert_same_trees(*_train_both(example, mine, 100, tree=tree))


def test_query_weights_grow_lightgbms_trees(example) -> None:
    """Row weights (one per query, as LightGBM's ranking expects): LightGBM multiplies the float32
    lambdas by them; the plugin hands it the products, which it rounds the same way."""
    rng = np.random.default_rng(0)
    per_query = rng.choice([0.5, 1.0, 1.7, 3.0], size=example.n_queries)
    builtin, plugin = _train_both(example, {}, 30, weight=np.repeat(per_query, np.diff(example.group_ptr)))
    assert_same_trees(builtin, plugin)


def test_mq2008_fold1_grows_lightgbms_trees() -> None:
    need_data(MQ2008)
    from boostplug.data import load_letor_folds

    train = load_letor_folds(MQ2008, "letor4")[0][0]
    builtin, plugin = _train_both(train, {}, 100, tree={"learning_rate": 0.05})
    assert_same_trees(builtin, plugin)


def test_a_hessian_floor_would_not(example, at_defaults) -> None:
    """What the copy must match, shown to matter: with the library's Hessian floor the trees
    differ within 100 rounds."""
    builtin, _ = at_defaults
    floored = lgb.train({**BASE, "objective": bpl.objective("lambdarank", hessian_floor=True)},
                        bpl.dataset(example.X, example.y, group_ptr=example.group_ptr), 100)
    with pytest.raises(AssertionError):
        assert_same_trees(builtin, floored)


def test_lambdas_against_lightgbms_loop() -> None:
    """The gradient and Hessian of one round against a transcription of LambdarankNDCG's loop in
    Python, float32 sums emulated with numpy: equal to the bit."""
    rng = np.random.default_rng(3)
    gp = np.array([0, 9, 10, 25, 33], dtype=np.int64)
    y = rng.integers(0, 4, 33).astype(np.float64)
    s = np.round(rng.normal(size=33), 1)   # ties
    s[25:33] = 0.5                          # one query of equal scores: no score-gap normalisation
    w = np.array([1.0, 2.0, 1.5, 0.75])
    obj = LambdaRank(y, gp, weights=w, lambdarank_truncation_level=6)
    g, h = obj.grad_hess(s)
    table, low, high, factor = sigmoid_table(1.0)
    gain = np.array(DEFAULT_LABEL_GAIN)
    disc = [1.0 / math.log2(2.0 + i) for i in range(40)]
    f32 = np.float32
    for q in range(4):
        a, b = gp[q], gp[q + 1]
        lab, sc = y[a:b], s[a:b]
        cnt = b - a
        idx = sorted(range(cnt), key=lambda i: -sc[i])
        top = sorted(lab, reverse=True)[:6]
        maxdcg = sum(disc[j] * gain[int(t)] for j, t in enumerate(top))
        inv = 1.0 / maxdcg if maxdcg > 0 else 0.0
        lam, hes = [f32(0)] * cnt, [f32(0)] * cnt
        best, worst = sc[idx[0]], sc[idx[-1]]
        total = 0.0
        for i in range(min(cnt - 1, 6)):
            for j in range(i + 1, cnt):
                if lab[idx[i]] == lab[idx[j]]:
                    continue
                hr, lr = (i, j) if lab[idx[i]] > lab[idx[j]] else (j, i)
                hi, lo = idx[hr], idx[lr]
                ds = sc[hi] - sc[lo]
                delta = (gain[int(lab[hi])] - gain[int(lab[lo])]) * abs(disc[hr] - disc[lr]) * inv
                if best != worst:
                    delta /= float(f32(0.01)) + abs(ds)
                p = table[0] if ds <= low else table[-1] if ds >= high else table[int((ds - low) * factor)]
                ph = p * (1.0 - p)
                p *= -1.0 * delta
                ph *= 1.0 * 1.0 * delta
                lam[lo] = f32(lam[lo] - f32(p))
                hes[lo] = f32(hes[lo] + f32(ph))
                lam[hi] = f32(lam[hi] + f32(p))
                hes[hi] = f32(hes[hi] + f32(ph))
                total -= 2 * p
        c = math.log2(1 + total) / total if total > 0 else 1.0
        expect_g = [float(f32(float(v) * c)) * w[q] for v in lam]
        expect_h = [float(f32(float(v) * c)) * w[q] for v in hes]
        np.testing.assert_array_equal(g[a:b], expect_g, err_msg=f"query {q}")
        np.testing.assert_array_equal(h[a:b], expect_h, err_msg=f"query {q}")
    assert np.all(h[9:10] == 0.0) and np.all(g[9:10] == 0.0)   # one document: no pair, no floor


def test_trains_on_xgboost(example) -> None:
    """The same objective through XGBoost: it trains (the validation NDCG rises above the first round's)."""
    xgb = pytest.importorskip("xgboost")
    from boostplug import metrics
    from boostplug import xgboost as bpx

    test = load_example()[1]
    dm = bpx.dmatrix(example.X, example.y, group_ptr=example.group_ptr)
    booster = xgb.train(bpx.params(max_depth=4, eta=0.1, nthread=1), dm, 20, obj=bpx.objective("lambdarank"))
    dt = xgb.DMatrix(test.X)
    first = metrics.ndcg(booster.predict(dt, iteration_range=(0, 1)), test.y, test.group_ptr, k=10)
    last = metrics.ndcg(booster.predict(dt), test.y, test.group_ptr, k=10)
    assert last > first and last > 0.6


@pytest.mark.parametrize("params, message", [
    ({"lambdarank_truncation_level": 0}, r"lambdarank_truncation_level must be an integer in \[1, 2147483647\], got 0"),
    # LightGBM's is a 32-bit int: 2^31 wrapped around to a negative level and crashed it
    ({"lambdarank_truncation_level": 2**31}, r"must be an integer in \[1, 2147483647\], got 2147483648"),
    ({"sigmoid": 0.0}, r"sigmoid must be .*got 0\.0"),
    ({"sigmoid": -1.0}, r"sigmoid must be .*got -1\.0"),
    ({"label_gain": [0.0, -1.0]}, r"label_gain.*-1"),
])
def test_bad_settings_name_the_value(params, message) -> None:
    with pytest.raises(ValueError, match=message):
        bpl.objective("lambdarank", **params)


def test_a_label_beyond_label_gain_is_refused() -> None:
    y = np.array([0.0, 1.0, 3.0, 0.0])
    with pytest.raises(ValueError, match=r"lambdarank: .*length 3.*row 2 has label 3\.0"):
        LambdaRank(y, [0, 4], label_gain=[0.0, 1.0, 3.0])
    with pytest.raises(ValueError, match=r"lambdarank: .*row 1 has label 1\.5"):
        LambdaRank(np.array([0.0, 1.5]), [0, 2])
    with pytest.raises(ValueError, match=r"lambdarank: .*row 0 has label 31\.0"):
        LambdaRank(np.array([31.0, 1.0]), [0, 2])


def test_registered_without_a_hessian_floor() -> None:
    entry = objectives.get("lambdarank")
    assert entry.loss_class is LambdaRank and entry.defaults["hessian_floor"] is False
    assert entry.defaults["lambdarank_truncation_level"] == 30 and entry.defaults["sigmoid"] == 1.0
    assert entry.defaults["lambdarank_norm"] is True and entry.defaults["label_gain"] is None
    assert list(entry.methods) == ["lambdarank-plugin"]   # compare's "lambdarank" is LightGBM's built-in


def test_the_rankers_name_lightgbms_own_lambdarank(example) -> None:
    """LGBMRanker(objective="lambdarank") stays LightGBM's built-in (as before the copy was
    registered); XGBoost has no objective of that name, so XGBRanker's is the copy."""
    ranker = bpl.LGBMRanker(objective="lambdarank", n_estimators=2, verbose=-1, n_jobs=1)
    ranker.fit(example.X, example.y, group=example.sizes)
    assert ranker.booster_.params["objective"] == "lambdarank" and ranker._objective == "lambdarank"
    assert "lambdarank_norm" not in ranker.get_params()
    pytest.importorskip("xgboost")
    from boostplug import xgboost as bpx

    xranker = bpx.XGBRanker(objective="lambdarank", lambdarank_truncation_level=10, n_estimators=2, n_jobs=1)
    assert xranker.get_params()["lambdarank_truncation_level"] == 10
    xranker.fit(example.X, example.y, group=example.sizes)
    assert xranker.predict(example.X).shape == (example.n_docs,)
