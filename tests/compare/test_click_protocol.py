"""The click protocol (boostplug.compare.click_protocol): every method trains on the same clicks, is
evaluated on the true labels, and the same seed gives the same results; a real log keyed by
index within the query trains exactly as the simulated log it came from; the methods' training
sets against brute force; bad settings refused by name; a small run on MQ2008."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import clicks, metrics
from boostplug.compare import (
    CLICK_METHODS, ClickMethod, ClickSettings, TrainingPart, click_method, prepare, run_click_method, run_clicks,
)
from boostplug.groups import index_within_query
from boostplug.data import RankingData, make_ranking, train_test_split_by_query


def _fold(seed: int = 0) -> tuple[RankingData, RankingData, RankingData]:
    data = make_ranking(n_queries=48, docs_per_query=10, n_features=5, n_informative=3, seed=seed)
    rest, test = train_test_split_by_query(data, test_size=0.25, seed=seed)
    train, vali = train_test_split_by_query(rest, test_size=0.25, seed=seed)
    return train, vali, test


SMALL = ClickSettings(n_sessions=1500, labeled_fraction=0.25, production_rounds=10)


@pytest.fixture(scope="module")
def fold() -> tuple[RankingData, RankingData, RankingData]:
    return _fold()


@pytest.fixture(scope="module")
def every_method(fold):
    return run_clicks(*fold, SMALL, rounds=4, threads=1)


def test_every_method_trains_on_the_same_clicks_and_is_tested_on_true_labels(fold, every_method) -> None:
    train, vali, test = fold
    # the inverse-propensity methods need a log that shows documents at several positions
    assert [r.method for r in every_method] == [n for n, m in CLICK_METHODS.items() if not m.ips]
    shas = {r.info["clicks"]["log"]["sha256"] for r in every_method}
    assert len(shas) == 1  # one log for all
    qids = test.qid[test.group_ptr[:-1]].tolist()
    for r in every_method:
        assert r.test_qids == qids
        per_query = np.asarray(r.test_per_query["ndcg@10"])
        assert per_query.shape == (test.n_queries,) and np.all((per_query >= 0) & (per_query <= 1))
        assert r.test["ndcg@10"] == pytest.approx(per_query.mean())
        assert 1 <= r.best_round <= r.rounds_trained <= 4
        # 25% of 9 validation queries is 2, below min_vali_queries (30): all 9 choose the round
        assert r.info["clicks"]["selection"] == {"on": "labels", "queries": 9}
        assert r.info["clicks"]["labeled_queries"] == 7  # 25% of 27 training queries


def test_test_metrics_are_those_of_the_chosen_round_on_the_true_labels(fold) -> None:
    """labeled-only retrained by hand: the result's test NDCG@10 per query is the chosen round's
    on the test part's true labels."""
    import lightgbm as lgb

    from boostplug import lightgbm as bpl
    from boostplug.compare.methods import TREE_PARAMS

    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)
    r = run_click_method("labeled-only", f, rounds=4, threads=1)
    params = {**TREE_PARAMS, "objective": "lambdarank", "verbose": -1, "seed": 0, "deterministic": True,
              "num_threads": 1}
    b = lgb.train(params, bpl.dataset(f.labeled.X, f.labeled.y, group_ptr=f.labeled.group_ptr), 4)
    vali_curve = [metrics.ndcg(b.predict(f.selection.X, num_iteration=t), f.selection.y, f.selection.group_ptr, k=10)
                  for t in range(1, 5)]
    best = int(np.argmax(vali_curve)) + 1
    assert r.best_round == best
    expected = metrics.ndcg(b.predict(test.X, num_iteration=best), test.y, test.group_ptr, k=10, per_query=True)
    np.testing.assert_allclose(r.test_per_query["ndcg@10"], expected, rtol=1e-12)


def test_the_same_seed_gives_the_same_results_another_seed_other_clicks(fold) -> None:
    methods = ["lgb-position", "qbrank-PL", "rankboost-P"]
    a = run_clicks(*fold, SMALL, methods=methods, rounds=3, seed=4, threads=1)
    b = run_clicks(*fold, SMALL, methods=methods, rounds=3, seed=4, threads=1)
    c = run_clicks(*fold, SMALL, methods=methods, rounds=3, seed=5, threads=1)
    for x, y in zip(a, b):
        assert x.test_per_query == y.test_per_query and x.vali_curve == y.vali_curve
        assert x.info["clicks"]["log"] == y.info["clicks"]["log"]
    assert a[0].info["clicks"]["log"]["sha256"] != c[0].info["clicks"]["log"]["sha256"]


def test_clicks_as_labels_are_the_impressions_with_a_click_in_shown_order(fold) -> None:
    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)
    d = f.impressions
    log = f.log
    expected_rows, expected_ptr, expected_pos = [], [0], []
    for i in range(log.n_impressions):  # brute force, impression by impression
        a, b = log.group_ptr[i], log.group_ptr[i + 1]
        if log.clicked[a:b].any():
            expected_rows += list(range(a, b))
            expected_ptr.append(expected_ptr[-1] + b - a)
            expected_pos += list(log.position[a:b] - 1)
    rows = np.asarray(expected_rows)
    np.testing.assert_array_equal(d.group_ptr, expected_ptr)
    np.testing.assert_array_equal(d.X, train.X[log.doc[rows]])
    np.testing.assert_array_equal(d.y, log.clicked[rows].astype(float))
    np.testing.assert_array_equal(d.position, expected_pos)
    for g in range(d.n_queries):  # shown order: XGBoost reads the position from it
        np.testing.assert_array_equal(d.position[d.group_ptr[g]:d.group_ptr[g + 1]], np.arange(d.sizes[g]))
    assert d.group_ptr.shape[0] - 1 == f.info["log"]["impressions_with_click"] < log.n_impressions


def test_only_lgb_position_gets_positions_and_they_change_the_model(fold) -> None:
    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)
    _, plain = click_method("lgb-clicks").build(f)
    _, with_pos = click_method("lgb-position").build(f)
    _, xgb = click_method("xgb-unbiased").build(f)
    assert plain.position is None and xgb.position is None and with_pos.position is not None
    assert plain.X is with_pos.X  # the same rows, not a copy
    a = run_click_method("lgb-clicks", f, rounds=3, threads=1)
    b = run_click_method("lgb-position", f, rounds=3, threads=1)
    assert a.test_curve != b.test_curve


@pytest.mark.parametrize("builtin, setting, other", [
    ("xgb-unbiased", "lambdarank_bias_norm=0.5", "xgb-unbiased-plugin"),
    ("lgb-position", "lambdarank_position_bias_regularization=0.5", "lgb-clicks"),
])
def test_the_debiased_copies_score_as_the_builtins_on_the_same_clicks(fold, builtin, setting, other) -> None:
    """``<builtin>-plugin`` grows the built-in's trees through boostplug's copy of its objective: the
    same test metrics round for round and the same chosen round, with the default and another
    setting (which changes them: it reaches the copy); and not ``other``'s curve."""
    f = prepare(*fold, SMALL)
    for spec in ("", f"[{setting}]"):
        reference = run_click_method(f"{builtin}{spec}", f, rounds=5, threads=1)
        plugin = run_click_method(f"{builtin}-plugin{spec}", f, rounds=5, threads=1)
        assert plugin.test_curve == reference.test_curve and plugin.test == reference.test
        assert plugin.best_round == reference.best_round
    assert plugin.test_curve != run_click_method(other, f, rounds=5, threads=1).test_curve
    assert CLICK_METHODS[f"{builtin}-plugin"].reproduces == builtin


def test_the_plugin_methods_fix_what_the_builtins_fix() -> None:
    with pytest.raises(ValueError, match="lambdarank_unbiased is set by the click protocol"):
        click_method("xgb-unbiased-plugin[lambdarank_unbiased=false]")


def test_pair_methods_train_on_the_preferences_of_the_log(fold) -> None:
    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)
    prefs = clicks.preferences(f.log, SMALL.strategies, weight=SMALL.weight)
    rows = clicks.to_rows(prefs, train.qid)
    # QBRank on P: the pairs, weights scaled to mean 1, no labeled rows
    m, data = click_method("qbrank-P").build(f)
    used = np.unique(rows.pairs)
    np.testing.assert_array_equal(used[m.loss_params["pairs"]], rows.pairs)
    np.testing.assert_allclose(m.loss_params["pair_weights"], rows.weights / rows.weights.mean())
    assert m.loss_params["labeled"] == "none" and m.loss_params["label_pairs"] is False
    np.testing.assert_array_equal(data.X, train.X[used])
    # QBRank on P ∪ L: the labeled queries follow, and only their rows are in the squared error
    m, data = click_method("qbrank-PL[w=0.3]").build(f)
    lab = m.loss_params["labeled_rows"]
    assert m.loss_params["w"] == 0.3 and "labeled" not in m.loss_params
    np.testing.assert_array_equal(lab, np.arange(used.size, used.size + f.labeled.n_docs))
    np.testing.assert_array_equal(data.y[lab], f.labeled.y)
    np.testing.assert_array_equal(data.X[lab], f.labeled.X)
    # the boosters: each pair repeated by its (net count) weight
    m, data = click_method("mpboost-P").build(f)
    assert isinstance(data, TrainingPart) and m.framework == "booster"
    assert data.pairs.shape[0] == int(rows.weights.sum())
    np.testing.assert_array_equal(np.unique(used[data.pairs], axis=0), np.unique(rows.pairs, axis=0))


def test_ips_methods_weight_clicks_and_pairs_by_the_propensities_estimated_from_the_log(fold) -> None:
    train, vali, test = fold
    settings = ClickSettings(n_sessions=3000, labeled_fraction=0.25, production_rounds=10, presentation="shuffle")
    f = prepare(train, vali, test, settings)
    est = clicks.estimate_propensity(f.log, n_bootstrap=0)
    assert est.method == "randomized"  # a shuffled log: clicks at k against clicks at 1
    # clicks as labels: each click weighted by 1 / propensity of its position (clipped at 10), the rest 1
    m, data = click_method("lgb-ips").build(f)
    plain = f.impressions
    np.testing.assert_array_equal(data.X, plain.X)
    np.testing.assert_array_equal(data.y, plain.y)
    expected = np.where(plain.y > 0, np.minimum(1.0 / est.propensity[plain.position], 10.0), 1.0)
    np.testing.assert_allclose(data.weight, expected)
    assert data.position is None and plain.weight is None  # the plain impressions are left as they were
    assert np.ptp(data.weight) > 0
    # pairs: counted by the inverse propensity of the clicked position, then scaled to mean 1
    rows = clicks.to_rows(clicks.preferences(f.log, settings.strategies, propensity=est), train.qid)
    m, data = click_method("qbrank-P-ips").build(f)
    used = np.unique(rows.pairs)
    np.testing.assert_array_equal(used[m.loss_params["pairs"]], rows.pairs)
    np.testing.assert_allclose(m.loss_params["pair_weights"], rows.weights / rows.weights.mean())
    plain_weights = click_method("qbrank-P").build(f)[0].loss_params["pair_weights"]
    assert plain_weights.shape != rows.weights.shape or not np.allclose(plain_weights, m.loss_params["pair_weights"])
    # the weights change the model, and the results record the estimate
    a = run_click_method("lgb-ips", f, rounds=3, threads=1)
    b = run_click_method("lgb-clicks", f, rounds=3, threads=1)
    assert a.test_curve != b.test_curve
    np.testing.assert_allclose(a.info["clicks"]["trained_on"]["propensity"], est.propensity)
    assert run_click_method("qbrank-P-ips", f, rounds=3, threads=1).info["clicks"]["trained_on"]["pairs"] == len(rows)


def test_ips_methods_are_refused_where_the_log_cannot_tell_position_from_relevance(fold) -> None:
    train, vali, test = fold
    for name in ("lgb-ips", "qbrank-P-ips"):
        with pytest.raises(ValueError, match=f"{name} estimates position bias from the log, but a simulated fixed "
                                             "presentation"):
            click_method(name).check_with(SMALL)
        with pytest.raises(ValueError, match="inverse-propensity counts are not whole.*'wilson'"):
            click_method(name).check_with(ClickSettings(presentation="shuffle", weight="wilson"))
        click_method(name).check_with(ClickSettings(presentation="swap"))  # FairPairs: an estimate is possible
    swapped = prepare(train, vali, test, ClickSettings(n_sessions=3000, labeled_fraction=0.25, production_rounds=10,
                                                       presentation="swap"))
    assert swapped.propensity.method == "em"
    assert run_click_method("lgb-ips", swapped, rounds=2, threads=1).info["clicks"]["trained_on"]["propensity"]
    # a real log with one order per query: refused when built, saying why
    f = prepare(train, vali, test, SMALL)
    log = clicks.read_log({"session": f.log.session, "query": f.log.query,
                           "doc": index_within_query(train.group_ptr)[f.log.doc], "position": f.log.position,
                           "clicked": f.log.clicked.astype(int)})
    real = prepare(train, vali, test, SMALL, log=log)
    with pytest.raises(ValueError, match="need propensities estimated from the click log: .*no .query, document. "
                                         "of the click log was shown at more than one position"):
        click_method("lgb-ips").build(real)
    # row weights train with LightGBM only
    from boostplug.compare.methods import TREE_PARAMS, get_method

    part = TrainingPart(train.X, train.y, None, train.group_ptr, weight=np.ones(train.n_docs))
    with pytest.raises(ValueError, match="per-row weights and initial scores train with LightGBM only"):
        get_method("xgb-rank:ndcg").train(part, vali, test, rounds=2, tree_params=TREE_PARAMS, seed=0)


def test_the_pair_term_boosts_on_from_lgb_clicks_at_its_chosen_round(fold) -> None:
    """lgb-clicks+qbrank-P by hand: LightGBM lambdarank on the clicks as labels for lgb-clicks'
    chosen round, then QBRank on the click pairs from its scores (init_score); the result's test
    scores are the first model's plus the new trees'."""
    import lightgbm as lgb

    import boostplug.lightgbm as bpl
    from boostplug.compare.methods import TREE_PARAMS

    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)
    first = run_click_method("lgb-clicks", f, rounds=6, threads=1)
    both = run_click_method("lgb-clicks+qbrank-P", f, rounds=6, threads=1)  # both stages up to 6 rounds
    assert both.info["first_stage_round"] == first.best_round
    assert both.info["clicks"]["trained_on"]["data"] == "impressions+pairs"
    params = {**TREE_PARAMS, "verbose": -1, "seed": 0, "deterministic": True, "num_threads": 1}
    imp = f.impressions
    one = lgb.train({**params, "objective": "lambdarank"}, bpl.dataset(imp.X, imp.y, group_ptr=imp.group_ptr),
                    num_boost_round=first.best_round)
    m, data = click_method("qbrank-P").build(f)
    two = lgb.train({**params, "objective": bpl.objective("qbrank", **m.loss_params)},
                    bpl.dataset(data.X, data.y, group_ptr=data.group_ptr, init_score=one.predict(data.X)),
                    num_boost_round=both.best_round)
    expected = one.predict(test.X) + two.predict(test.X)
    by_hand = metrics.ndcg(expected, test.y, test.group_ptr, k=10, per_query=True)
    np.testing.assert_allclose(both.test_per_query["ndcg@10"], by_hand)
    assert not np.allclose(two.predict(test.X), 0.0)  # the pair term moved the scores


def test_qbrank_on_the_pairs_alone_grows_small_trees_unless_told_otherwise(fold) -> None:
    """The comparison's 31-leaf trees fit the few click pairs' noise (docs/studies/clicks.md): QBRank on
    the pairs alone trains trees of 3 leaves unless the method or the run sets num_leaves."""
    from boostplug.compare.methods import TREE_PARAMS

    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)

    def per_query(spec: str, **kw):
        return run_click_method(spec, f, rounds=8, threads=1, **kw).test_per_query["ndcg@10"]

    assert click_method("qbrank-P").build(f)[0].tree_params == {"num_leaves": 3}
    assert per_query("qbrank-P") == per_query("qbrank-P[num_leaves=3]")
    big = per_query("qbrank-P[num_leaves=31]")
    assert per_query("qbrank-P") != big
    assert per_query("qbrank-P", tree_params={"num_leaves": 15}) == per_query("qbrank-P[num_leaves=15]")
    # the shared defaults (as the command line passes them) are no setting of the run
    assert per_query("qbrank-P", tree_params=dict(TREE_PARAMS)) == per_query("qbrank-P")
    assert click_method("qbrank-P-ips").trees == {"num_leaves": 3}
    for name in ("lgb-clicks", "qbrank-PL", "labeled-only"):  # the others keep the comparison's trees
        assert click_method(name).build(f)[0].tree_params == {}


def test_a_real_log_trains_exactly_as_the_simulated_log_it_came_from(fold) -> None:
    """The simulated log written as a real one (document keys: index within the query, string
    session ids, other column names) gives the same clicks, pairs and models."""
    train, vali, test = fold
    simulated = prepare(train, vali, test, SMALL)
    log = simulated.log
    real = clicks.read_log({"sid": np.char.add("s", log.session.astype(str)), "q": log.query,
                            "d": index_within_query(train.group_ptr)[log.doc], "pos": log.position,
                            "click": log.clicked.astype(int), "order": log.order},
                           columns={"session": "sid", "query": "q", "doc": "d", "position": "pos", "clicked": "click"})
    given = prepare(train, vali, test, SMALL, log=real)
    assert given.info["log"]["sha256"] == simulated.info["log"]["sha256"]
    assert given.info["log_source"] == "given" and given.info["impressions_of_other_queries"] == 0
    np.testing.assert_array_equal(given.pair_rows.pairs, simulated.pair_rows.pairs)
    for name in ("lgb-clicks", "qbrank-PL"):
        a = run_click_method(name, given, rounds=3, threads=1)
        b = run_click_method(name, simulated, rounds=3, threads=1)
        assert a.test_per_query == b.test_per_query


def test_a_real_log_leaves_out_other_queries_and_selects_on_validation_clicks(fold) -> None:
    train, vali, test = fold
    rng = np.random.default_rng(0)
    rows = {"session": [], "query": [], "doc": [], "position": [], "clicked": []}
    for s, part in enumerate([train, vali, test] * 20):
        q = int(rng.integers(part.n_queries))
        n = int(part.sizes[q])
        rows["session"] += [s] * n
        rows["query"] += [part.qid[part.group_ptr[q]]] * n
        rows["doc"] += list(rng.permutation(n))
        rows["position"] += list(range(1, n + 1))
        rows["clicked"] += list(rng.random(n) < 0.3)
    log = clicks.read_log(rows)
    f = prepare(train, vali, test, ClickSettings(select="clicks", labeled_fraction=0.25), log=log)
    assert f.info["impressions_of_other_queries"] == 40
    assert f.log.n_impressions == 20 and set(f.log.query) <= set(train.qid)
    assert f.info["selection"]["on"] == "clicks"
    assert set(f.selection.y) <= {0.0, 1.0} and f.selection.n_docs <= 20 * 10
    assert "production" not in f.info and "n_sessions" not in f.info["settings"]
    r = run_click_method("lgb-clicks", f, rounds=2, threads=1)
    assert len(r.vali_curve) == 2


def test_selection_on_simulated_validation_clicks(fold) -> None:
    train, vali, test = fold
    f = prepare(train, vali, test, ClickSettings(n_sessions=1800, labeled_fraction=0.25, select="clicks",
                                                 production_rounds=10))
    sel = f.info["selection"]
    # the same sessions per query as on the training part: 1800 * 9 / 27
    assert sel["on"] == "clicks" and sel["log"]["impressions"] == 600
    assert sel["impressions"] == sel["log"]["impressions_with_click"] == f.selection.n_queries
    assert set(np.unique(f.selection.y)) == {0.0, 1.0}


@pytest.mark.parametrize("kwargs, match", [
    ({"n_sessions": 0}, "n_sessions must be >= 1, got 0"),
    ({"n_sessions": 2.5}, "n_sessions must be an integer"),
    ({"model": "ubm"}, "model must be one of .*'ubm'"),
    ({"labeled_fraction": 1.5}, "labeled_fraction .*got 1.5"),
    ({"vali_fraction": 0.0}, r"vali_fraction .*\(0, 1\].*got 0.0"),
    ({"select": "vali"}, "select must be one of .*'vali'"),
    ({"eta": -1}, "eta .*got -1"),
    ({"eps_minus": 2}, "eps_minus .*got 2"),
    ({"strategies": ["click>skip-below"]}, "unknown click strategy 'click>skip-below'"),
    ({"weight": "log"}, "weight must be one of .*'log'"),
    ({"min_support": 0}, "min_support must be >= 1"),
    ({"production_rounds": 0}, "production_rounds must be >= 1"),
    ({"min_vali_queries": 0}, "min_vali_queries must be >= 1"),
    ({"examination": [0.5, 1.2]}, r"examination\[1\] .*got 1.2"),
    ({"examination": [0.5] * 10, "model": "cascade"}, "examination is the position-based model's"),
    ({"examination": [0.5] * 3}, "examination has 3 probabilities but top_k is 10"),
    ({"click_prob": "high"}, "click_prob must be None or a non-empty sequence"),
])
def test_bad_settings_are_refused_naming_the_value(kwargs, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        ClickSettings(**kwargs)


@pytest.mark.parametrize("spec, match", [
    ("qbrank-X", r"unknown click method 'qbrank-X' \(did you mean qbrank-P"),
    ("qbrank-PL[ww=0.3]", "'qbrank-PL' has no parameter 'ww'; did you mean w"),
    ("qbrank-PL[w=2]", "w .*got 2"),
    ("qbrank-P[pairs=1]", "pairs is set by the click protocol"),
    ("xgb-unbiased[lambdarank_unbiased=false]", "lambdarank_unbiased is set by the click protocol"),
    ("lgb-position[lambdarank_position_bias_regularization=-1]", "lambdarank_position_bias_regularization .*got -1"),
    ("lgb-clicks[num_leaves=1]", "num_leaves=1: must be between 2"),
    ("mpboost-P[ddf=xx]", "ddf"),
    ("lgb-clicks[w", r"expected name\[key=value"),
])
def test_bad_methods_are_refused_naming_them(spec, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        click_method(spec)


def test_a_click_method_with_unknown_training_data_is_refused() -> None:
    with pytest.raises(ValueError, match="click method 'mine': trains_on must be one of .*got 'clicks'"):
        ClickMethod("mine", "lambdarank", "clicks", "a method of a plugin")


def test_settings_that_cannot_train_are_refused_before_training(fold) -> None:
    train, vali, test = fold
    with pytest.raises(ValueError, match="labeled_fraction must be above 0 for a click simulation .*got 0"):
        prepare(train, vali, test, ClickSettings(labeled_fraction=0.0))
    with pytest.raises(ValueError, match="vali_fraction .*must be above 0 to choose the round on judged"):
        prepare(train, vali, test, ClickSettings(labeled_fraction=0.0), log=clicks.read_log(
            {"session": [0], "query": [train.qid[0]], "doc": [0], "position": [1], "clicked": [1]}))
    f = prepare(train, vali, test, ClickSettings(n_sessions=500, labeled_fraction=0.25, weight="wilson",
                                                 confidence=0.5, production_rounds=5))
    with pytest.raises(ValueError, match="rankboost-P: the reference boosters take no per-pair weights .*pair 0 has "
                                         "weight"):
        click_method("rankboost-P").build(f)
    with pytest.raises(ValueError, match="mpboost-P: .*weight must be 'unit', 'count' or 'net', got 'wilson'"):
        run_clicks(train, vali, test, f.settings, methods=["lgb-clicks", "mpboost-P"])
    with pytest.raises(ValueError, match="qbrank-PL trains on labeled queries, but labeled_fraction is 0"):
        click_method("qbrank-PL").check_with(ClickSettings(labeled_fraction=0.0))
    with pytest.raises(TypeError, match="settings must be a boostplug.compare.ClickSettings"):
        prepare(train, vali, test, {"n_sessions": 10})
    with pytest.raises(ValueError, match="no impression of the click log is of a training query"):
        prepare(train, vali, test, SMALL, log=clicks.read_log({"session": [0], "query": [-5], "doc": [0],
                                                                "position": [1], "clicked": [1]}))


def test_round_selection_takes_at_least_min_vali_queries(fold) -> None:
    train, vali, test = fold
    few = prepare(train, vali, test, ClickSettings(n_sessions=300, labeled_fraction=0.25, production_rounds=5,
                                                   min_vali_queries=1))
    assert few.selection.n_queries == 2  # 25% of 9
    some = prepare(train, vali, test, ClickSettings(n_sessions=300, labeled_fraction=0.25, production_rounds=5,
                                                    min_vali_queries=5))
    assert some.selection.n_queries == 5 and set(vali.qid) >= set(some.selection.qid)


def test_production_and_random_rows_score_the_fixed_rankers(fold) -> None:
    train, vali, test = fold
    f = prepare(train, vali, test, SMALL)
    prod = run_click_method("production", f, rounds=5)
    assert prod.best_round == prod.rounds_trained == 1 and prod.seconds == 0.0
    # the production ranker's test NDCG@10 as the fold recorded it when it simulated the log
    assert prod.test["ndcg@10"] == pytest.approx(f.info["production"]["test_ndcg@10"])
    rand = run_click_method("random", f, rounds=5)
    again = run_click_method("random", prepare(train, vali, test, SMALL), rounds=5)
    assert rand.test_per_query == again.test_per_query  # seeded
    other = run_click_method("random", prepare(train, vali, test, SMALL, seed=1), rounds=5)
    assert rand.test_per_query != other.test_per_query
    with pytest.raises(ValueError, match="takes no parameters"):
        click_method("production[num_leaves=7]")
    with pytest.raises(ValueError, match="production is the ranker that showed a simulated log"):
        click_method("production").check_with(SMALL, simulated=False)


def test_presets_set_the_click_model() -> None:
    s = ClickSettings.from_preset("ultra-pbm", n_sessions=100)
    assert s.examination == clicks.simulation.ULTRA_EXAMINATION and s.click_prob == clicks.simulation.ULTRA_CLICK_PROB
    assert ClickSettings.from_preset("pbm-eta2").eta == 2.0
    assert ClickSettings.from_preset("cascade").model == "cascade"
    dcm = ClickSettings.from_preset("dcm", n_sessions=100)
    assert (dcm.model, dcm.continue_prob, dcm.eps_plus, dcm.eps_minus) == ("dcm", 0.5, 1.0, 0.1)
    with pytest.raises(ValueError, match="preset 'dcm' sets continue_prob"):
        ClickSettings.from_preset("dcm", continue_prob=0.9)
    with pytest.raises(ValueError, match="preset 'pbm-eta1' sets eta"):
        ClickSettings.from_preset("pbm-eta1", eta=0.5)
    with pytest.raises(ValueError, match="preset must be one of .*'pbm'"):
        ClickSettings.from_preset("pbm")


@pytest.mark.realdata
def test_small_end_to_end_on_mq2008(mq2008_dir) -> None:
    from boostplug.data import load_letor_folds

    train, vali, test = load_letor_folds(mq2008_dir, "letor4", folds=[0])[0]
    results = run_clicks(train, vali, test, ClickSettings(n_sessions=3000, production_rounds=20), rounds=8,
                         threads=1)
    assert [r.method for r in results] == [n for n, m in CLICK_METHODS.items() if not m.ips]  # a fixed list
    random = metrics.ndcg(np.zeros(test.n_docs), test.y, test.group_ptr, k=10, ties="average")
    info = results[0].info["clicks"]
    assert info["labeled_queries"] == 24 and info["log"]["impressions"] == 3000
    assert info["production"]["test_ndcg@10"] > random + 0.05
    for r in results:
        assert len(r.test_per_query["ndcg@10"]) == test.n_queries
    by = {r.method: r.test["ndcg@10"] for r in results}
    assert by["lgb-clicks"] > random + 0.05 and by["labeled-only"] > random + 0.05


def test_tuning_searches_only_what_changes_the_model(fold) -> None:
    space = {n: set(click_method(n).base_method().search_space()) for n in
             ("qbrank-P", "qbrank-PL", "qbrank-PL[w=0.3,label_pairs=true]", "lgb-position")}
    assert "w" not in space["qbrank-P"] and "tau" not in space["qbrank-P"]  # no labeled rows, no label pairs
    assert "w" in space["qbrank-PL"] and "tau" not in space["qbrank-PL"]
    assert "tau" in space["qbrank-PL[w=0.3,label_pairs=true]"] and "w" not in space["qbrank-PL[w=0.3,label_pairs=true]"]
    assert "learning_rate" in space["lgb-position"]
    pytest.importorskip("optuna")
    train, vali, test = fold
    r = run_click_method("qbrank-PL", prepare(train, vali, test, SMALL), rounds=3, tune=2, threads=1)
    trials = r.info["tuning"]["trials"]
    assert len(trials) == 2 and "w" in trials[1]["params"] and "pairs" not in trials[1]["params"]
    assert r.info["clicks"]["trained_on"]["data"] == "pairs+labeled"
