"""Preferences onto a feature matrix (row indices, or a join on (qid, doc) keys), the refusal of
keys without features, and QBRank's training set: its rows, groups and pairs, and the risk
the objective computes on it against the paper's formula written out."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from boostplug import clicks, objectives
from boostplug.data import RankingData, make_ranking


@pytest.fixture(scope="module")
def simulated() -> tuple[RankingData, clicks.Preferences]:
    data = make_ranking(n_queries=25, docs_per_query=(4, 12), seed=3)
    log = clicks.simulate(data, np.random.default_rng(0).normal(size=data.n_docs), 3000, top_k=6, seed=1)
    return data, clicks.preferences(log, "all")


def test_keys_that_are_row_indices(simulated) -> None:
    data, prefs = simulated
    rows = clicks.to_rows(prefs, data.qid)
    assert len(rows) == len(prefs) > 50 and rows.n_missing == 0
    np.testing.assert_array_equal(rows.pairs[:, 0], prefs.preferred)
    np.testing.assert_array_equal(rows.pairs[:, 1], prefs.other)
    np.testing.assert_array_equal(data.qid[rows.pairs[:, 0]], prefs.query)
    np.testing.assert_array_equal(rows.weights, prefs.weight)


def test_join_on_query_and_document_keys(simulated, rng: np.random.Generator) -> None:
    data, prefs = simulated
    # the same table with string keys, against feature rows in another order with their own keys
    named = clicks.Preferences(np.char.add("q", prefs.query.astype(str)), np.char.add("u", prefs.preferred.astype(str)),
                               np.char.add("u", prefs.other.astype(str)), prefs.count, prefs.against, prefs.weight)
    perm = rng.permutation(data.n_docs)
    qid = np.char.add("q", data.qid[perm].astype(str))
    doc = np.char.add("u", perm.astype(str))
    rows = clicks.to_rows(named, qid, doc)
    np.testing.assert_array_equal(perm[rows.pairs[:, 0]], prefs.preferred)
    np.testing.assert_array_equal(perm[rows.pairs[:, 1]], prefs.other)


def test_keys_without_features_are_refused_or_skipped(simulated) -> None:
    data, prefs = simulated
    keep = np.ones(data.n_docs, bool)
    gone = int(prefs.other[3])
    keep[gone] = False
    qid, doc = data.qid[keep], np.flatnonzero(keep)
    names_it = (prefs.preferred == gone) | (prefs.other == gone)
    k = int(np.flatnonzero(names_it)[0])
    side = "preferred" if prefs.preferred[k] == gone else "other"
    with pytest.raises(ValueError, match=rf"preference {k} \(query {prefs.query[k]}\): {side} document {gone} has no "
                                         rf"feature row \(no row has qid {prefs.query[k]} and doc {gone}\)"):
        clicks.to_rows(prefs, qid, doc)
    n_lost = int(names_it.sum())
    with pytest.warns(UserWarning, match=f"left out {n_lost} of {len(prefs)} preferences"):
        rows = clicks.to_rows(prefs, qid, doc, on_missing="skip")
    assert rows.n_missing == n_lost and len(rows) == len(prefs) - n_lost
    # row indices: a key past the matrix
    with pytest.raises(ValueError, match="is not a row index of the feature matrix"):
        clicks.to_rows(prefs, data.qid[:gone])


def test_row_index_keys_of_another_matrix_are_refused(simulated) -> None:
    data, prefs = simulated
    shifted = np.roll(data.qid, 1)
    with pytest.raises(ValueError, match="whose qid is .*the keys are not row indices of this matrix"):
        clicks.to_rows(prefs, shifted)
    named = clicks.Preferences(prefs.query, prefs.preferred.astype(str), prefs.other.astype(str), prefs.count,
                               prefs.against, prefs.weight)
    with pytest.raises(TypeError, match="must be row indices"):
        clicks.to_rows(named, data.qid)


def test_ambiguous_join_is_refused(simulated) -> None:
    data, prefs = simulated
    doc = np.arange(data.n_docs)
    doc[1] = doc[0]  # rows 0 and 1 are one query's rows
    with pytest.raises(ValueError, match=r"rows 0 and 1 have the same \(qid, doc\)"):
        clicks.to_rows(prefs, data.qid, doc)


def test_repeated_pairs() -> None:
    rows = clicks.PairRows(np.array([[0, 1], [2, 3]]), np.array([2.0, 1.0]))
    assert rows.repeated().tolist() == [[0, 1], [0, 1], [2, 3]]
    with pytest.raises(ValueError, match="pair 0 has weight 0.5"):
        clicks.PairRows(np.array([[0, 1]]), np.array([0.5])).repeated()


@pytest.mark.parametrize("sparse", [False, True])
def test_training_set_rows_groups_and_pairs(simulated, sparse: bool) -> None:
    data, prefs = simulated
    rows = clicks.to_rows(prefs, data.qid)
    X = sp.csr_matrix(data.X) if sparse else data.X
    labeled = data.subset([0, 5])
    ts = clicks.training_set(rows, X, data.group_ptr, labeled=labeled)
    used = np.unique(rows.pairs)
    assert ts.n_click_rows == used.size
    dense = ts.X.toarray() if sparse else ts.X
    np.testing.assert_array_equal(dense[:used.size], data.X[used])
    np.testing.assert_array_equal(dense[used.size:], labeled.X)
    # the pairs index the same feature rows as before
    np.testing.assert_array_equal(dense[ts.pairs], data.X[rows.pairs])
    # click rows grouped by their query, then the labeled queries
    q_of = np.searchsorted(data.group_ptr, used, side="right") - 1
    sizes = np.diff(ts.group_ptr)
    assert sizes[:np.unique(q_of).size].tolist() == np.bincount(q_of)[np.unique(q_of)].tolist()
    assert sizes[np.unique(q_of).size:].tolist() == labeled.sizes.tolist()
    assert ts.labeled.tolist() == [False] * used.size + [True] * labeled.n_docs
    np.testing.assert_array_equal(ts.y[used.size:], labeled.y)
    assert not ts.y[:used.size].any()
    assert ts.qid.shape == (ts.X.shape[0],)
    with pytest.raises(ValueError, match="labeled has 3 features"):
        clicks.training_set(rows, X, data.group_ptr, labeled=RankingData(np.zeros((2, 3)), [0, 1], group_ptr=[0, 2]))


def _risk(scores: np.ndarray, pairs: np.ndarray, weights: np.ndarray, w: float, tau: float) -> float:
    """Zheng et al.'s R(h) of the explicit pairs alone, written out."""
    m = np.maximum(0.0, scores[pairs[:, 1]] - scores[pairs[:, 0]] + tau)
    return 0.5 * w * float(weights @ (m * m))


@pytest.mark.parametrize("weight", ["unit", "count", "net"])
def test_qbrank_params_train_on_the_click_pairs(simulated, weight: str, rng: np.random.Generator) -> None:
    data, _ = simulated
    log = clicks.simulate(data, np.random.default_rng(0).normal(size=data.n_docs), 3000, top_k=6, seed=1)
    rows = clicks.to_rows(clicks.preferences(log, weight=weight), data.qid)
    ts = clicks.training_set(rows, data.X, data.group_ptr)
    params = ts.qbrank_params(w=0.7, pair_tau=0.5)
    assert params["labeled"] == "none" and params["label_pairs"] is False
    scores = rng.normal(size=ts.X.shape[0])
    got = objectives.get("qbrank").loss(scores, ts.y, ts.group_ptr, **params)
    assert got == pytest.approx(_risk(scores, ts.pairs, ts.pair_weights, 0.7, 0.5), rel=1e-12)


def test_wilson_weights_need_per_pair_weights(simulated) -> None:
    data, _ = simulated
    log = clicks.simulate(data, data.y, 3000, top_k=6, seed=1)
    rows = clicks.to_rows(clicks.preferences(log, weight="wilson"), data.qid)
    ts = clicks.training_set(rows, data.X, data.group_ptr)
    if "pair_weights" in objectives.get("qbrank").defaults:
        params = ts.qbrank_params()
        scores = np.zeros(ts.X.shape[0])
        got = objectives.get("qbrank").loss(scores, ts.y, ts.group_ptr, **params)
        assert got == pytest.approx(_risk(scores, ts.pairs, ts.pair_weights, 0.5, 1.0), rel=1e-12)
    else:
        with pytest.raises(ValueError, match="whole numbers"):
            ts.qbrank_params()


def test_p_union_l_puts_only_the_labeled_rows_in_the_squared_error_term(simulated) -> None:
    data, prefs = simulated
    ts = clicks.training_set(clicks.to_rows(prefs, data.qid), data.X, data.group_ptr, labeled=data.subset([1, 2]))
    params = ts.qbrank_params(w=0.5, label_pairs=False)
    scores = np.zeros(ts.X.shape[0])
    lab = ts.labeled
    expected = _risk(scores, ts.pairs, ts.pair_weights, 0.5, 1.0) + 0.25 * float(((ts.y - scores)[lab] ** 2).sum())
    assert objectives.get("qbrank").loss(scores, ts.y, ts.group_ptr, **params) == pytest.approx(expected)


def test_training_set_refusals(simulated) -> None:
    data, prefs = simulated
    rows = clicks.to_rows(prefs, data.qid)
    with pytest.raises(TypeError, match="PairRows"):
        clicks.training_set(prefs, data.X, data.group_ptr)
    with pytest.raises(ValueError, match="the pairs index rows up to"):
        clicks.training_set(rows, data.X[:10], [0, 10])
    with pytest.raises(TypeError, match="RankingData"):
        clicks.training_set(rows, data.X, data.group_ptr, labeled=data.X)


def test_log_rows_maps_every_impression_row(simulated, rng: np.random.Generator) -> None:
    data, _ = simulated
    log = clicks.simulate(data, data.y, 400, top_k=5, seed=2)
    same_log, rows = clicks.log_rows(log, data.qid)
    assert same_log is log
    np.testing.assert_array_equal(rows, log.doc)
    # joined on string keys, against feature rows in another order
    perm = rng.permutation(data.n_docs)
    named = clicks.read_log({**log.columns(), "doc": np.char.add("u", log.doc.astype(str))})
    _, joined = clicks.log_rows(named, data.qid[perm], np.char.add("u", perm.astype(str)))
    np.testing.assert_array_equal(perm[joined], log.doc)


def test_log_rows_without_features(simulated) -> None:
    data, _ = simulated
    log = clicks.simulate(data, data.y, 400, top_k=5, seed=2)
    gone = int(log.doc[7])
    keep = np.arange(data.n_docs) != gone
    first = int(np.flatnonzero(log.doc == gone)[0])
    with pytest.raises(ValueError, match=rf"session {log.session[first]}, query {log.query[first]}, position "
                                         rf"{log.position[first]}: document {gone} has no feature row"):
        clicks.log_rows(log, data.qid[keep], np.flatnonzero(keep))
    hit = np.unique(np.repeat(np.arange(log.n_impressions), np.diff(log.group_ptr))[log.doc == gone])
    with pytest.warns(UserWarning, match=f"left out {hit.size} of {log.n_impressions} impressions"):
        kept, rows = clicks.log_rows(log, data.qid[keep], np.flatnonzero(keep), on_missing="skip")
    assert kept.n_impressions == log.n_impressions - hit.size and rows.shape == (len(kept),)
    np.testing.assert_array_equal(np.flatnonzero(keep)[rows], kept.doc)
    with pytest.raises(TypeError, match="log_rows takes a boostplug.clicks.ClickLog"):
        clicks.log_rows(log.columns(), data.qid)


def test_a_reference_booster_trains_on_the_click_pairs() -> None:
    from boostplug import boosters, metrics

    data = make_ranking(n_queries=40, docs_per_query=(5, 12), seed=0)
    log = clicks.simulate(data, np.random.default_rng(0).normal(size=data.n_docs), 3000, seed=0)
    ts = clicks.training_set(clicks.to_rows(clicks.preferences(log, weight="count"), data.qid), data.X,
                             data.group_ptr)
    model = boosters.RankBoost(n_rounds=30).fit(ts.X, ts.y, qid=ts.qid, pairs=ts.repeated())
    learned = metrics.ndcg(model.predict(data.X), data.y, data.group_ptr, k=10)
    random = metrics.ndcg(np.zeros(data.n_docs), data.y, data.group_ptr, k=10, ties="average")
    assert learned > random + 0.05
