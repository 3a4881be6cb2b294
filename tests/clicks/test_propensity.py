"""Position bias from the click log: each method recovers the simulated (1/k)^eta within its
bootstrap uncertainty (which is itself checked: not vacuous, and covering the truth in most
seeds); randomised traffic and the EM agree; harvesting works on two rankers' logs; degenerate
logs are refused by name; inverse-propensity weights of rows and of pairs equal a hand count."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import clicks
from boostplug.clicks import propensity as P
from boostplug.data import make_ranking
from tests.clicks._logs import random_log

TOP_K = 6


def truth(eta: float, k: int = TOP_K) -> np.ndarray:
    return (1.0 / np.arange(1, k + 1)) ** eta


def data(seed: int = 0):
    return make_ranking(n_queries=30, docs_per_query=8, n_labels=3, seed=seed)


def two_rankers(eta: float, n_sessions: int, seed: int) -> clicks.ClickLog:
    """Half the sessions shown in one ranker's order, half in another's (fixed presentation each)."""
    d = data()
    rng = np.random.default_rng(seed)
    logs = [clicks.simulate(d, d.y + rng.normal(0, 1.0, d.n_docs), n_sessions // 2, top_k=TOP_K, eta=eta,
                            seed=seed + i) for i in range(2)]
    cols = {}
    for role in logs[0].columns():
        a, b = logs[0].columns()[role], logs[1].columns()[role]
        cols[role] = np.concatenate((a, b + n_sessions if role == "session" else b))
    return clicks.read_log(cols)


def within(est: clicks.Propensity, eta: float, z: float = 4.0, max_se: float = 0.06) -> None:
    """The truth lies within ``z`` standard errors at every position, and the errors are small
    enough for that to mean something."""
    t = truth(eta, est.propensity.shape[0])
    assert est.propensity[0] == 1.0
    se = est.std_error[1:]
    assert np.all(se > 0) and np.all(se < max_se), se
    err = np.abs(est.propensity[1:] - t[1:]) / se
    assert np.all(err < z), (est.method, est.propensity.round(3), t.round(3), err.round(1))


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_randomized_recovers_the_simulated_propensities(eta: float) -> None:
    log = clicks.simulate(data(), data().y, 6000, top_k=TOP_K, eta=eta, presentation="shuffle", seed=1)
    est = clicks.estimate_propensity(log, n_bootstrap=80, seed=2)
    assert est.method == "randomized"  # auto: a shuffled log is randomised
    within(est, eta)
    assert est.impressions.tolist() == np.bincount(log.position - 1).tolist()
    assert est.clicks.tolist() == np.bincount(log.position - 1, log.clicked).astype(int).tolist()


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_em_agrees_with_randomized_on_shuffled_traffic(eta: float) -> None:
    log = clicks.simulate(data(), data().y, 6000, top_k=TOP_K, eta=eta, presentation="shuffle", seed=3)
    rand = clicks.estimate_propensity(log, method="randomized", n_bootstrap=60)
    em = clicks.estimate_propensity(log, method="em", n_bootstrap=60)
    within(em, eta)
    # the same clicks: two estimators of the same propensities, within two standard errors of each other
    assert np.all(np.abs(em.propensity - rand.propensity) <= 2 * rand.std_error + 1e-12), (em.propensity,
                                                                                           rand.propensity)
    assert em.iterations > 1


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_harvest_and_em_on_two_rankers(eta: float) -> None:
    log = two_rankers(eta, 8000, seed=4)
    assert P._association(P._reduce(log, None)) > 0.3  # far from randomised
    harvest = clicks.estimate_propensity(log, method="harvest", n_bootstrap=60)
    within(harvest, eta, max_se=0.1)
    em = clicks.estimate_propensity(log, n_bootstrap=60)
    assert em.method == "em"
    within(em, eta, max_se=0.1)
    # only documents the two rankers showed at different positions are behind the estimate
    assert 0 < em.impressions.sum() < len(log)
    np.testing.assert_array_equal(em.impressions, harvest.impressions)


def test_the_randomized_estimator_is_biased_on_a_ranker_s_order() -> None:
    """A check that the recovery tests can fail: on a fixed order, click rates by position mix
    position with relevance, and "randomized" (forced) is far off."""
    d = data()
    log = two_rankers(1.0, 6000, seed=5)
    forced = clicks.estimate_propensity(log, method="randomized", n_bootstrap=40)
    err = np.abs(forced.propensity[1:] - truth(1.0)[1:]) / forced.std_error[1:]
    assert err.max() > 6, err
    assert d.n_docs > 0


def test_the_interval_covers_the_truth_in_most_seeds() -> None:
    covered, widths = [], []
    for seed in range(8):
        log = clicks.simulate(data(), data().y, 3000, top_k=TOP_K, eta=1.0, presentation="shuffle", seed=seed)
        est = clicks.estimate_propensity(log, method="randomized", n_bootstrap=100, seed=seed)
        t = truth(1.0)
        covered.append((est.lower[1:] <= t[1:]) & (t[1:] <= est.upper[1:]))
        widths.append(est.upper[1:] - est.lower[1:])
        assert np.all(est.lower <= est.propensity + 1e-12) and np.all(est.propensity <= est.upper + 1e-12)
    rate = np.mean(covered)
    assert rate >= 0.8, rate  # 40 intervals at 95%: fewer than 32 covering has probability < 1e-6
    assert 0.01 < np.mean(widths) < 0.3, np.mean(widths)


def test_estimates_are_deterministic_and_seeded() -> None:
    log = two_rankers(1.0, 2000, seed=6)
    a = clicks.estimate_propensity(log, method="em", n_bootstrap=10, seed=7)
    b = clicks.estimate_propensity(log, method="em", n_bootstrap=10, seed=7)
    for name, col in a.columns().items():
        np.testing.assert_array_equal(col, b.columns()[name], err_msg=name)
    c = clicks.estimate_propensity(log, method="em", n_bootstrap=10, seed=8)
    np.testing.assert_array_equal(a.propensity, c.propensity)
    assert not np.array_equal(a.std_error, c.std_error)
    none = clicks.estimate_propensity(log, method="em", n_bootstrap=0)
    assert np.isnan(none.std_error).all() and np.isnan(none.lower).all()
    np.testing.assert_array_equal(none.propensity, a.propensity)


def test_ids_of_any_kind_give_the_same_estimate() -> None:
    log = two_rankers(1.0, 2000, seed=9)
    cols = log.columns()
    renamed = dict(cols, session=np.char.add("s", cols["session"].astype(str)),
                   doc=np.char.add("d", cols["doc"].astype(str)), query=np.char.add("q", cols["query"].astype(str)))
    for method in ("em", "harvest", "randomized"):
        a = clicks.estimate_propensity(log, method=method, n_bootstrap=5)
        b = clicks.estimate_propensity(clicks.read_log(renamed), method=method, n_bootstrap=5)
        np.testing.assert_allclose(a.propensity, b.propensity, rtol=1e-12, err_msg=method)


def test_max_position_leaves_deeper_rows_out() -> None:
    log = clicks.simulate(data(), data().y, 3000, top_k=TOP_K, eta=1.0, presentation="shuffle", seed=10)
    full = clicks.estimate_propensity(log, method="randomized", n_bootstrap=0)
    cut = clicks.estimate_propensity(log, method="randomized", n_bootstrap=0, max_position=3)
    assert cut.propensity.shape == (3,)
    np.testing.assert_allclose(cut.propensity, full.propensity[:3])


def _log(position, clicked, doc, session=None):
    n = len(position)
    return clicks.read_log({"session": session if session is not None else [0] * n, "query": [0] * n,
                            "doc": doc, "position": position, "clicked": clicked})


def test_degenerate_logs_are_refused() -> None:
    d = data()
    no_clicks = clicks.simulate(d, d.y, 200, top_k=4, eps_plus=0.0, eps_minus=0.0, seed=0)
    with pytest.raises(ValueError, match="no clicks"):
        clicks.estimate_propensity(no_clicks)
    one = clicks.simulate(d, d.y, 200, top_k=1, seed=0)
    with pytest.raises(ValueError, match="at least two results"):
        clicks.estimate_propensity(one)
    fixed = clicks.simulate(d, d.y, 500, top_k=4, seed=0)
    for method in ("em", "harvest", "auto"):
        with pytest.raises(ValueError, match="more than one position"):
            clicks.estimate_propensity(fixed, method=method)
    # documents a and b swap between positions 1 and 2; c is always at 3: position 3 is not linked
    swap = _log([1, 2, 3, 1, 2, 3], [1, 0, 1, 0, 1, 0], ["a", "b", "c", "b", "a", "c"], [0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match=r"positions \[3\] are not linked.*max_position=2"):
        clicks.estimate_propensity(swap, method="harvest")
    np.testing.assert_allclose(clicks.estimate_propensity(swap, method="em", max_position=2, n_bootstrap=0)
                               .propensity[0], 1.0)
    no_top = _log([1, 2, 1, 2], [0, 1, 0, 1], ["a", "b", "b", "a"], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="no clicks at position 1"):
        clicks.estimate_propensity(no_top, method="harvest")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"method": "swap"}, ValueError, "method"),
    ({"n_bootstrap": -1}, ValueError, "n_bootstrap"),
    ({"level": 1.0}, ValueError, "level"),
    ({"max_position": 1}, ValueError, "max_position"),
    ({"max_position": 2.5}, TypeError, "max_position"),
    ({"max_iter": 0}, ValueError, "max_iter"),
    # numpy's errors before: a MemoryError allocating the replicates, "expected non-negative integer"
    ({"n_bootstrap": 10**10}, ValueError, r"^n_bootstrap must be at most 1,000,000 .*got 10000000000$"),
    ({"seed": -1}, ValueError, r"^seed must be an integer >= 0, None or a numpy.random.Generator, got -1$"),
    ({"seed": 1.5}, ValueError, r"^seed must be an integer >= 0, None or a numpy.random.Generator, got 1.5$"),
])
def test_bad_arguments(kwargs, error, match) -> None:
    log = clicks.simulate(data(), data().y, 50, top_k=3, presentation="shuffle", seed=0)
    with pytest.raises(error, match=match):
        clicks.estimate_propensity(log, **kwargs)


def test_row_weights() -> None:
    p = np.array([1.0, 0.5, 0.25, 0.05])
    pos = np.array([1, 2, 3, 4, 2])
    np.testing.assert_array_equal(clicks.ips_weights(pos, p), [1, 2, 4, 10, 2])  # 1/0.05 clipped at 10
    np.testing.assert_array_equal(clicks.ips_weights(pos, p, clip=float("inf")), [1, 2, 4, 20, 2])
    np.testing.assert_array_equal(clicks.ips_weights(pos, p, clicked=[0, 1, 0, 1, 0]), [1, 2, 1, 10, 1])
    est = clicks.Propensity(p, p, p, p, np.zeros(4, np.int64), np.zeros(4, np.int64), "em", 0.95, 0)
    np.testing.assert_array_equal(est.weights(pos, clip=3.0), [1, 2, 3, 3, 2])
    with pytest.raises(ValueError, match="row 0 has position 5"):
        clicks.ips_weights([5], p)
    with pytest.raises(ValueError, match="position 2 has -0.5"):
        clicks.ips_weights([1], [1.0, -0.5])
    with pytest.raises(ValueError, match="clip"):
        clicks.ips_weights([1], p, clip=0.5)


def _hand_ips(log: dict, inv: np.ndarray, pick) -> dict:
    """(query, preferred, other) -> summed 1/p of the preferred position, over impressions, by hand."""
    out: dict = {}
    imps: dict = {}
    for i in range(len(log["session"])):
        imps.setdefault((log["session"][i], log["query"][i]), []).append(i)
    for (_, q), rows in imps.items():
        rows = sorted(rows, key=lambda r: log["position"][r])
        c = [bool(log["clicked"][r]) for r in rows]
        pairs = {(a, b) for a in range(len(rows)) for b in range(len(rows)) if pick(a, b, c)}
        for a, b in pairs:
            key = (q, log["doc"][rows[a]], log["doc"][rows[b]])
            out[key] = out.get(key, 0.0) + inv[log["position"][rows[a]] - 1]
    return out


@pytest.mark.parametrize("weight", ["net", "count", "unit"])
def test_ips_pair_weights_equal_a_hand_count(rng: np.random.Generator, weight: str) -> None:
    log = random_log(rng, n_sessions=50)
    p = np.array([1.0, 0.7, 0.4, 0.3, 0.2, 0.12, 0.05])
    inv = np.minimum(1 / p, 10.0)
    def adjacent(a: int, b: int, c: list[bool]) -> bool:  # the default strategies
        return c[a] and not c[b] and abs(a - b) == 1

    hand = _hand_ips(log, inv, adjacent)
    prefs = clicks.preferences(log, propensity=p, weight=weight)
    got = {(q, a, b): (n, m, w) for q, a, b, n, m, w in zip(prefs.query, prefs.preferred, prefs.other, prefs.count,
                                                             prefs.against, prefs.weight)}
    expect = {}
    for (q, a, b), n in hand.items():
        m = hand.get((q, b, a), 0.0)
        if n - m >= 1 - 1e-9:
            expect[(q, a, b)] = (n, m, {"net": n - m, "count": n, "unit": 1.0}[weight])
    assert got.keys() == expect.keys()
    for key, values in expect.items():
        np.testing.assert_allclose(got[key], values, rtol=1e-12, err_msg=str(key))
    # a propensity of 1 everywhere is the unweighted table
    flat = clicks.preferences(log, propensity=np.ones(7), weight=weight)
    plain = clicks.preferences(log, weight=weight)
    np.testing.assert_array_equal(flat.count, plain.count)
    np.testing.assert_array_equal(flat.weight, plain.weight)


def test_ips_pairs_small_example() -> None:
    """Session 1 clicks position 2 (pairs 11>10 and 11>12, weight 1/0.5 each); session 2 clicks
    position 1 (10>11, weight 1)."""
    log = {"session": [1, 1, 1, 2, 2, 2], "query": [7] * 6, "doc": [10, 11, 12, 10, 11, 12],
           "position": [1, 2, 3, 1, 2, 3], "clicked": [0, 1, 0, 1, 0, 0]}
    prefs = clicks.preferences(log, propensity=[1.0, 0.5, 0.25])
    assert prefs.preferred.tolist() == [11, 11] and prefs.other.tolist() == [10, 12]
    assert prefs.count.tolist() == [2.0, 2.0] and prefs.against.tolist() == [1.0, 0.0]
    assert prefs.weight.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="wilson"):
        clicks.preferences(log, propensity=[1.0, 0.5, 0.25], weight="wilson")
    with pytest.raises(ValueError, match="position 2 is below the 1 positions"):
        clicks.preferences(log, propensity=[1.0])


def test_ips_pairs_from_dask_partitions_agree(rng: np.random.Generator) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    log = random_log(rng, n_sessions=80)
    p = np.array([1.0, 0.6, 0.4, 0.3, 0.2, 0.1, 0.1])
    ref = clicks.preferences(log, propensity=p)
    got = clicks.preferences(dd.from_pandas(pd.DataFrame(log), npartitions=3).shuffle(on="session"), propensity=p)
    assert ref.preferred.astype(str).tolist() == got.preferred.astype(str).tolist()
    np.testing.assert_allclose(got.weight, ref.weight, rtol=1e-12)
    np.testing.assert_allclose(got.count, ref.count, rtol=1e-12)
