"""The linear baselines of ``boostplug compare`` (``linear-ridge``, ``linear-ranksvm``): listed, trained
under the protocol, tuned over valid spaces, RankSVM's pairs against brute force, and the verdict's
note when a linear method is within noise of the best boosted one."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.compare import METHODS, REPORT_METRICS, Result, get_method, method_names, significance
from boostplug.compare.data import example_split
from boostplug.compare.protocol import run_method
from boostplug.compare.report import verdict
from boostplug.compare.training import ranksvm_pairs
from boostplug.data import make_ranking
from tests._child import run_child

LINEAR = ("linear-ridge", "linear-ranksvm")


@pytest.fixture(scope="module")
def example():
    return example_split()


def test_listed_as_linear_with_their_references() -> None:
    assert method_names(["linear"]) == list(LINEAR)
    assert "Joachims 2002" in METHODS["linear-ranksvm"].summary and "Herbrich" in METHODS["linear-ranksvm"].summary


def test_ridge_is_sklearns_ridge_on_standardised_features(example) -> None:
    """One round; its test scores are scikit-learn's standardise-then-ridge pipeline's, up to the
    intercept (a constant shift ranks nothing), on the embedded example."""
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train, vali, test = example
    m = get_method("linear-ridge[alpha=3]")
    t = m.train(train, vali, test, rounds=300, tree_params={}, seed=0, threads=1)
    assert len(t.vali_scores) == len(t.test_scores) == 1
    ref = make_pipeline(StandardScaler(), Ridge(alpha=3.0)).fit(train.to_dense().X, train.y).predict(test.to_dense().X)
    np.testing.assert_allclose(t.test_scores[0] - t.test_scores[0].mean(), ref - ref.mean(), rtol=1e-9, atol=1e-9)
    r = run_method("linear-ridge", train, vali, test, rounds=300, threads=1)
    assert r.framework == "linear" and r.best_round == r.rounds_trained == 1 and 0.5 < r.test["ndcg@10"] <= 1.0


@pytest.mark.slow
def test_ranksvm_orders_its_training_pairs_and_the_seed_fixes_it(example) -> None:
    """Most sampled training pairs are ordered by the learned scores (a linear model cannot order all),
    the test NDCG@10 is a ranking's, and the same seed gives the same scores."""
    train, vali, test = example
    m = get_method("linear-ranksvm[max_pairs=10]")
    t = m.train(train, train, test, rounds=5, tree_params={}, seed=3, threads=1)
    pairs = ranksvm_pairs(train.y, train.group_ptr, 10, 3)
    s = t.vali_scores[0]
    assert np.mean(s[pairs[:, 0]] > s[pairs[:, 1]]) > 0.7
    again = m.train(train, train, test, rounds=5, tree_params={}, seed=3, threads=1)
    np.testing.assert_array_equal(again.test_scores[0], t.test_scores[0])
    r = run_method("linear-ranksvm[max_pairs=10]", train, vali, test, rounds=5, threads=1)
    assert 0.5 < r.test["ndcg@10"] <= 1.0


def test_ranksvm_pairs_against_brute_force() -> None:
    """Without a bound: every (i, j) of one query with y[i] > y[j], none else; with one: at most
    ``max_pairs`` per query, all of them such pairs, none twice, all of a query with fewer."""
    rng = np.random.default_rng(0)
    sizes = [1, 4, 7, 12, 3]
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    y = rng.integers(0, 3, ptr[-1]).astype(np.float64)
    y[ptr[1]:ptr[2]] = 2.0  # a query with one grade: no pair
    brute = {(a + i, a + j) for a, b in zip(ptr[:-1], ptr[1:]) for i in range(b - a) for j in range(b - a)
             if y[a + i] > y[a + j]}
    assert set(map(tuple, ranksvm_pairs(y, ptr, 10**6, 0).tolist())) == brute
    bounded = ranksvm_pairs(y, ptr, 5, 1)
    got = list(map(tuple, bounded.tolist()))
    assert len(set(got)) == len(got) and set(got) <= brute
    for a, b in zip(ptr[:-1], ptr[1:]):
        mine = sum(1 for i, _ in got if a <= i < b)
        assert mine == min(5, sum(1 for i, _ in brute if a <= i < b))
    np.testing.assert_array_equal(bounded, ranksvm_pairs(y, ptr, 5, 1))
    assert ranksvm_pairs(np.zeros(3), np.array([0, 3]), 5, 0).shape == (0, 2)


def test_search_spaces_are_valid_and_bad_settings_are_refused() -> None:
    """Each tunes its regularisation over a log range holding the default; a fixed one is not searched;
    every value of the range configures; zero, negative and unknown settings are refused by name."""
    for name, knob in (("linear-ridge", "alpha"), ("linear-ranksvm", "C")):
        m = get_method(name)
        space = m.search_space()
        assert list(space) == [knob] and space[knob].log
        assert space[knob].low < m.parameters()[knob] < space[knob].high
        for v in (space[knob].low, space[knob].high):
            assert m.configure({knob: v}).loss_params[knob] == v
        assert get_method(f"{name}[{knob}=2]").search_space() == {}
        with pytest.raises(ValueError, match=f"{knob}=0.*> 0"):
            get_method(f"{name}[{knob}=0]")
        with pytest.raises(ValueError, match="no parameter 'num_leaves'"):
            get_method(f"{name}[num_leaves=7]")
    with pytest.raises(ValueError, match="max_pairs=0"):
        get_method("linear-ranksvm[max_pairs=0]")


def test_tuning_searches_the_linear_knob() -> None:
    d = make_ranking(n_queries=30, seed=1)
    train, vali, test = d.subset(np.arange(10)), d.subset(np.arange(10, 20)), d.subset(np.arange(20, 30))
    r = run_method("linear-ridge", train, vali, test, rounds=10, threads=1, tune=3)
    record = r.info["tuning"]
    assert record["space"] == {"alpha": "0.001..1000.0 (log)"} and len(record["trials"]) == 3
    assert 1e-3 <= record["chosen"]["alpha"] <= 1e3


def test_a_feature_too_large_to_standardise_is_refused_naming_it() -> None:
    """A feature holding -1e300 and 1e300: on main linear-ranksvm never returned (liblinear spun on what the
    scaler left) and linear-ridge said only "array must not contain infs or NaNs". In a child with a time limit."""
    script = """if True:
        import json
        import numpy as np
        from boostplug.compare import get_method
        from boostplug.data import make_ranking
        d = make_ranking(n_queries=20, docs_per_query=(5, 10), n_features=6, seed=1)
        d.X[0, 2], d.X[1, 2] = -1e300, 1e300
        said = []
        for name in ("linear-ridge", "linear-ranksvm"):
            try:
                get_method(name).train(d, d, d, rounds=1, tree_params={}, seed=0, threads=1)
            except ValueError as e:
                said.append(str(e))
        print(json.dumps(said))"""
    said = run_child(script, timeout=120)
    assert said == ["feature 3 (column 2) of the training part cannot be standardised: its values (-1e+300 to 1e+300) "
                    "overflow float64 in its variance; rescale or drop it"] * 2


def _result(method: str, framework: str, ndcg10) -> Result:
    per_query = {m: list(ndcg10) for m in REPORT_METRICS}
    return Result(method=method, framework=framework, fold=0, best_round=1, rounds_trained=1, seconds=1.0,
                  select_metric="ndcg@10", test={m: float(np.mean(v)) for m, v in per_query.items()},
                  test_per_query=per_query)


@pytest.mark.parametrize("shift, noted", [(-0.2, False), (-0.002, True), (0.05, True)])
def test_the_verdict_notes_a_linear_method_within_noise_of_the_best_boosted(shift: float, noted: bool) -> None:
    """Clearly below the best boosted method (paired t-test p < 0.05): no note; within noise or above:
    the note, with the difference and p(t) of the verdict's test."""
    rng = np.random.default_rng(2)
    base = rng.uniform(0.3, 0.7, 60)
    results = [_result("lambdarank", "lightgbm", base),
               _result("regression", "lightgbm", base - 0.05 + rng.normal(0, 0.03, 60)),
               _result("linear-ridge", "linear", np.clip(base + shift + rng.normal(0, 0.03, 60), 0, 1))]
    text = " ".join(verdict(results, "regression").split())
    assert ("this set may not need trees" in text) is noted
    if noted:
        t = significance(results, "lambdarank")["linear-ridge"]
        assert (t.t_pvalue >= 0.05) or t.mean_diff > 0
        assert f"linear-ridge, a linear model, is {'above' if shift > 0 else 'within noise of'} the best boosted method, " \
               f"lambdarank ({t.mean_diff:+.4f}" in text
    only_linear = [_result("linear-ridge", "linear", base), _result("linear-ranksvm", "linear", base - 0.1 + rng.normal(0, 0.03, 60))]
    assert "need trees" not in verdict(only_linear, "linear-ridge")
