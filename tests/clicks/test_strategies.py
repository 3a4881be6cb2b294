"""boostplug.clicks.preferences against a brute-force reading of Joachims et al.'s definitions on
random sessions: every strategy alone and in combinations, the aggregation over sessions
(net counts, minimum support, weights) and its invariances (session order, duplicated logs)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from tests.clicks._logs import random_log

from boostplug import clicks
from boostplug.clicks import aggregate, strategies


def impressions(log: dict[str, np.ndarray]):
    """(query, docs in position order, clicked, times) of every impression, the slow way."""
    groups: dict[tuple, list[int]] = {}
    for r in range(log["session"].shape[0]):
        groups.setdefault((log["session"][r], log["query"][r]), []).append(r)
    for (_, q), rows in groups.items():
        rows.sort(key=lambda r: log["position"][r])
        yield (q, [log["doc"][r] for r in rows], [bool(log["clicked"][r]) for r in rows],
               [log["order"][r] for r in rows])


def brute_pairs(clicked: list[bool], times: list[float], names: tuple[str, ...]) -> set[tuple[int, int]]:
    """Joachims et al. (TOIS 2007) literally, on positions 0..n-1; clicks ordered by
    (time, position)."""
    n = len(clicked)
    C = [i for i in range(n) if clicked[i]]

    def later(i: int, j: int) -> bool:
        return (times[i], i) > (times[j], j)

    out: set[tuple[int, int]] = set()
    for name in names:
        if name == "click>skip-above":
            out |= {(i, j) for i in C for j in range(i) if j not in C}
        elif name == "last-click>skip-above" and C:
            last = max(C, key=lambda i: (times[i], i))
            out |= {(last, j) for j in range(last) if j not in C}
        elif name == "click>earlier-click":
            out |= {(i, j) for i in C for j in C if i != j and later(i, j)}
        elif name == "click>skip-previous":
            out |= {(i, i - 1) for i in C if i >= 1 and i - 1 not in C}
        elif name == "click>no-click-next":
            out |= {(i, i + 1) for i in C if i + 1 < n and i + 1 not in C}
    return out


def brute_counts(log: dict[str, np.ndarray], names: tuple[str, ...]) -> Counter:
    counts: Counter = Counter()
    for q, docs, clicked, times in impressions(log):
        for i, j in brute_pairs(clicked, times, names):
            counts[(q, docs[i], docs[j])] += 1
    return counts


def brute_table(counts: Counter, min_support: int = 1, weight: str = "net", confidence: float = 0.95) -> set:
    rows = set()
    for (q, a, b), c in counts.items():
        against = counts.get((q, b, a), 0)
        if c - against < min_support:
            continue
        w = {"unit": 1.0, "count": float(c), "net": float(c - against)}.get(weight)
        if weight == "wilson":
            w = float(aggregate.wilson_net(np.array([c]), np.array([against]), confidence)[0])
            if w <= 0:
                continue
        rows.add((q, a, b, c, against, round(w, 12)))
    return rows


def table(prefs: clicks.Preferences) -> set:
    return {(q, a, b, int(c), int(x), round(float(w), 12)) for q, a, b, c, x, w in
            zip(prefs.query.tolist(), prefs.preferred.tolist(), prefs.other.tolist(), prefs.count, prefs.against,
                prefs.weight)}


def test_bits_are_distinct_powers_of_two() -> None:
    # a mask is their union, so each strategy must own one bit of its own
    bits = list(strategies.BITS.values())
    assert all(b > 0 and b & (b - 1) == 0 for b in bits) and len(set(bits)) == len(bits)
    assert strategies.mask("all") == sum(bits)


@pytest.mark.parametrize("name", strategies.NAMES)
def test_each_strategy_against_brute_force(name: str, rng: np.random.Generator) -> None:
    for _ in range(3):
        log = random_log(rng)
        prefs = clicks.preferences(log, name, weight="count")
        assert table(prefs) == brute_table(brute_counts(log, (name,)), weight="count")
        assert prefs.strategies == (name,)


@pytest.mark.parametrize("names", [strategies.DEFAULT, ("click>skip-previous", "click>no-click-next"),
                                   ("last-click>skip-above", "click>earlier-click", "click>skip-above"),
                                   strategies.NAMES])
def test_combined_strategies_count_a_pair_once_per_impression(names: tuple[str, ...], rng: np.random.Generator) -> None:
    log = random_log(rng, p_click=0.5)
    assert table(clicks.preferences(log, names, weight="count")) == brute_table(brute_counts(log, names),
                                                                                weight="count")


def test_single_impression_by_hand() -> None:
    # shown d1..d5, clicks on d2 (t=5) and d4 (t=1): the user clicked d4 first
    log = {"session": [1] * 5, "query": ["q"] * 5, "doc": ["d1", "d2", "d3", "d4", "d5"],
           "position": [1, 2, 3, 4, 5], "clicked": [0, 1, 0, 1, 0], "order": [np.nan, 5, np.nan, 1, np.nan]}

    def pairs(name: str) -> set:
        p = clicks.preferences(log, name)
        return set(zip(p.preferred.tolist(), p.other.tolist()))

    assert pairs("click>skip-above") == {("d2", "d1"), ("d4", "d1"), ("d4", "d3")}
    assert pairs("last-click>skip-above") == {("d2", "d1")}  # d2 was clicked last
    assert pairs("click>earlier-click") == {("d2", "d4")}
    assert pairs("click>skip-previous") == {("d2", "d1"), ("d4", "d3")}
    assert pairs("click>no-click-next") == {("d2", "d3"), ("d4", "d5")}


def test_no_clicks_and_single_documents_give_nothing() -> None:
    log = {"session": [1, 1, 2], "query": [1, 1, 1], "doc": [1, 2, 1], "position": [1, 2, 1], "clicked": [0, 0, 1],
           "order": [np.nan, np.nan, 0.0]}
    prefs = clicks.preferences(log, "all")
    assert len(prefs) == 0 and prefs.n_impressions == 2
    assert prefs.to_pandas().shape == (0, 6)


@pytest.mark.parametrize("weight", aggregate.WEIGHTS)
@pytest.mark.parametrize("min_support", [1, 2, 3])
def test_aggregation_against_brute_force(weight: str, min_support: int, rng: np.random.Generator) -> None:
    log = random_log(rng, n_sessions=150, n_queries=2, pool=5, p_click=0.45)
    names = ("click>skip-above", "click>no-click-next", "click>earlier-click")
    prefs = clicks.preferences(log, names, min_support=min_support, weight=weight, confidence=0.8)
    expected = brute_table(brute_counts(log, names), min_support, weight, 0.8)
    assert table(prefs) == expected and expected
    # contradictions were resolved: never both directions of a pair
    seen = set(zip(prefs.query.tolist(), prefs.preferred.tolist(), prefs.other.tolist()))
    assert not any((q, b, a) in seen for q, a, b in seen)


def test_wilson_bound_by_formula() -> None:
    # n = 10 unanimous at z = 1.645: L = n / (n + z^2); bound 2L - 1
    z = 1.6448536269514722
    assert aggregate.wilson_net(np.array([10]), np.array([0]), 0.95)[0] == pytest.approx(2 * 10 / (10 + z * z) - 1)
    # confidence 0.5 (z = 0) is the observed net fraction
    assert aggregate.wilson_net(np.array([7]), np.array([3]), 0.5)[0] == pytest.approx(0.4)
    # at 0.95, 2 unanimous impressions are not enough, 3 are (n > z^2 = 2.7)
    assert aggregate.wilson_net(np.array([2, 3]), np.array([0, 0]), 0.95)[0] < 0 < \
        aggregate.wilson_net(np.array([2, 3]), np.array([0, 0]), 0.95)[1]


def test_session_order_does_not_matter(rng: np.random.Generator) -> None:
    log = random_log(rng, shuffle=False)
    ref = clicks.preferences(log, "all")
    # sessions in another order (rows of each impression kept together)
    for _ in range(3):
        sessions = np.unique(log["session"])
        rank = {s: r for r, s in enumerate(rng.permutation(sessions))}
        perm = np.argsort([rank[s] for s in log["session"]], kind="stable")
        other = clicks.preferences({k: v[perm] for k, v in log.items()}, "all")
        for a, b in zip(ref.columns().values(), other.columns().values()):
            np.testing.assert_array_equal(a, b)


def test_a_duplicated_log_doubles_the_counts(rng: np.random.Generator) -> None:
    log = random_log(rng)
    copy = dict(log)
    copy["session"] = np.char.add("copy-", log["session"].astype(str))  # the same sessions again
    both = {k: np.concatenate((log[k], copy[k])) for k in log}
    one = clicks.preferences(log, "all", weight="count")
    two = clicks.preferences(both, "all", weight="count")
    np.testing.assert_array_equal(two.count, 2 * one.count)
    np.testing.assert_array_equal(two.against, 2 * one.against)
    np.testing.assert_array_equal(two.weight, 2 * one.weight)
    np.testing.assert_array_equal(two.preferred, one.preferred)
    assert two.n_impressions == 2 * one.n_impressions


def test_min_dwell_turns_short_clicks_into_skips() -> None:
    log = {"session": [1, 1, 1], "query": [1, 1, 1], "doc": [1, 2, 3], "position": [1, 2, 3],
           "clicked": [1, 0, 1], "dwell": [3.0, np.nan, 60.0]}
    p = clicks.preferences(log, "click>skip-above", min_dwell=30)
    # d1's 3-second click is a skip: d3 > d1 and d3 > d2
    assert set(zip(p.preferred.tolist(), p.other.tolist())) == {(3, 1), (3, 2)}
    p = clicks.preferences(log, "click>skip-above")
    assert set(zip(p.preferred.tolist(), p.other.tolist())) == {(3, 2)}


def test_option_errors() -> None:
    log = {"session": [1, 1], "query": [1, 1], "doc": [1, 2], "position": [1, 2], "clicked": [0, 1]}
    with pytest.raises(ValueError, match="unknown click strategy 'skip-above'; did you mean 'click>skip-above' or "
                                         "'last-click>skip-above'\\?"):
        strategies.names(["skip-above"])
    with pytest.raises(ValueError, match="'click>skip-abve'; did you mean 'click>skip-above'"):
        strategies.names(["click>skip-abve"])
    with pytest.raises(ValueError, match="unknown click strategy 'click>skip'"):
        clicks.preferences(log, "click>skip")
    with pytest.raises(ValueError, match="strategies is empty"):
        clicks.preferences(log, [])
    with pytest.raises(ValueError, match=r"need the time or order of each click.*'order'"):
        clicks.preferences(log, "click>earlier-click")
    with pytest.raises(ValueError, match=r"min_dwell=10(\.0)? needs a dwell column"):
        clicks.preferences(log, min_dwell=10)
    with pytest.raises(ValueError, match="min_support must be >= 1"):
        clicks.preferences(log, min_support=0)
    with pytest.raises(TypeError, match="min_support must be an integer"):
        clicks.preferences(log, min_support=1.5)
    with pytest.raises(ValueError, match="weight must be one of"):
        clicks.preferences(log, weight="log")
    with pytest.raises(ValueError, match="confidence must be below 1"):
        clicks.preferences(log, weight="wilson", confidence=1.0)
    with pytest.raises(ValueError, match="on_bad must be one of"):
        clicks.preferences(log, on_bad="ignore")


def test_every_subset_of_strategies_on_one_log(rng: np.random.Generator) -> None:
    log = random_log(rng, n_sessions=25)
    for r in (2, 3, 4):
        for names in itertools.combinations(strategies.NAMES, r):
            assert table(clicks.preferences(log, names, weight="count")) == brute_table(brute_counts(log, names),
                                                                                        weight="count")
