"""What one impression costs: every strategy's work follows the pairs it makes (a long
impression with few pairs is fast), the pairs of long impressions equal a brute-force reading,
and an impression whose pairs cannot fit in memory is refused before they are listed."""

from __future__ import annotations

import time

import numpy as np
import pytest
from tests.clicks.test_strategies import brute_counts, brute_table, table

from boostplug import clicks, pairs
from boostplug.clicks import strategies


def _one_impression(clicked: np.ndarray, order: np.ndarray | None = None) -> dict[str, np.ndarray]:
    n = clicked.shape[0]
    log = {"session": np.zeros(n, np.int64), "query": np.zeros(n, np.int64), "doc": np.arange(n),
           "position": np.arange(1, n + 1), "clicked": clicked.astype(np.int64)}
    if order is not None:
        log["order"] = order
    return log


def _long_log(rng: np.random.Generator, n_impressions: int = 12) -> dict[str, np.ndarray]:
    """Impressions of up to 60 documents, click rates from none to all, click times with ties."""
    cols: dict[str, list] = {c: [] for c in ("session", "query", "doc", "position", "clicked", "order")}
    for s in range(n_impressions):
        n = int(rng.integers(1, 61))
        p = float(rng.choice([0.0, 0.1, 0.5, 0.9, 1.0]))
        clicked = rng.random(n) < p
        for k in range(n):
            cols["session"].append(s)
            cols["query"].append(s % 3)
            cols["doc"].append(k + 100 * (s % 2))
            cols["position"].append(k + 1)
            cols["clicked"].append(int(clicked[k]))
            cols["order"].append(float(rng.integers(0, 4)) if clicked[k] else np.nan)
    return {k: np.asarray(v) for k, v in cols.items()}


@pytest.mark.parametrize("names", [(n,) for n in strategies.NAMES] + [strategies.DEFAULT, strategies.NAMES])
def test_long_impressions_against_brute_force(names: tuple[str, ...], rng: np.random.Generator) -> None:
    log = _long_log(rng)
    assert table(clicks.preferences(log, names, weight="count")) == brute_table(brute_counts(log, names),
                                                                                weight="count")


# (strategies, clicked rows of a 100,000-document impression, its number of pairs): many clicks,
# few pairs each; the old loop visited clicks x documents (46 s for click>skip-previous).
N = 100_000
_HALF = np.arange(N) % 2 == 1  # every second document clicked
_ALL_BUT_TOP = np.arange(N) >= 3  # every document but the first three clicked
CASES = {
    "click>skip-previous": (("click>skip-previous",), _HALF, N // 2),
    "click>no-click-next": (("click>no-click-next",), _HALF, N // 2 - 1),
    "default": (strategies.DEFAULT, _HALF, N - 1),
    "click>skip-above": (("click>skip-above",), _ALL_BUT_TOP, 3 * (N - 3)),
    "last-click>skip-above": (("last-click>skip-above",), _ALL_BUT_TOP, 3),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_cost_follows_the_pairs(case: str) -> None:
    names, clicked, n_pairs = CASES[case]
    clicks.preferences(_one_impression(np.array([0, 1]), np.array([np.nan, 1.0])), names)  # compiled before the clock
    log = _one_impression(clicked, np.where(clicked, np.arange(N, dtype=float), np.nan))
    start = time.perf_counter()
    prefs = clicks.preferences(log, names, weight="count")
    elapsed = time.perf_counter() - start
    assert len(prefs) == n_pairs
    # complexity guard, not a timing: linear work takes milliseconds, the quadratic loop took 46 s
    assert elapsed < 10.0, f"{case}: {elapsed:.1f} s for {n_pairs} pairs of one {N}-document impression"


def test_earlier_click_pairs_of_a_long_impression() -> None:
    # 300 clicks among 100,000 documents: their 300 * 299 / 2 pairs, each the later click first
    rng = np.random.default_rng(5)
    clicked = np.zeros(N, bool)
    clicked[rng.choice(N, 300, replace=False)] = True
    order = np.where(clicked, rng.permutation(N).astype(float), np.nan)
    prefs = clicks.preferences(_one_impression(clicked, order), "click>earlier-click", weight="count")
    assert len(prefs) == 300 * 299 // 2
    assert np.all(order[prefs.preferred] > order[prefs.other])


def test_an_impression_whose_pairs_cannot_fit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # 60,000 documents, every second one clicked: click>skip-above lists 450,015,000 pairs
    monkeypatch.setattr(pairs, "PAIR_MEMORY_LIMIT", 2**30)
    n = 60_000
    log = _one_impression(np.arange(n) % 2 == 1)
    log["session"] = np.full(n, "s9")
    with pytest.raises(pairs.PairMemoryError, match=r"450,015,000 preference pairs .* above the limit of 1\.0 GiB "
                                                   r"\(set by boostplug\.pairs\.PAIR_MEMORY_LIMIT\).*session 's9', "
                                                   r"query 0 with 60,000 documents"):
        clicks.preferences(log, "click>skip-above")
    # the neighbour strategies on the same impression fit
    assert len(clicks.preferences(log)) == n - 1


def test_many_small_impressions_are_not_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # the limit bounds one impression's pairs; a log of many is counted piece by piece
    monkeypatch.setattr(pairs, "PAIR_MEMORY_LIMIT", 64 * 4000)
    n_imp, n = 400, 40
    clicked = np.tile(np.arange(n) % 2 == 1, n_imp)
    log = {"session": np.repeat(np.arange(n_imp), n), "query": np.zeros(n * n_imp, np.int64),
           "doc": np.tile(np.arange(n), n_imp), "position": np.tile(np.arange(1, n + 1), n_imp),
           "clicked": clicked.astype(np.int64)}
    prefs = clicks.preferences(log, "click>skip-above", weight="count")
    assert len(prefs) == (n // 2) * (n // 2 + 1) // 2 and np.all(prefs.count == n_imp)
