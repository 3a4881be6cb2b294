"""The bookkeeping that used to grow with the rounds, now kept incrementally, trains exactly as before.

* Rb-d / Rb-c pair-free: the ``E2`` record is kept round by round over pairs of signature groups
  (:class:`boostplug.boosters._group_e2.GroupE2`) instead of summed from scratch every round
  (:func:`boostplug.boosters._level_sums.level_e2`, the earlier code, which ``GroupE2`` still falls
  back to above ``ENTRY_LIMIT``). Everything a fit produces is bit for bit the same; ``E2`` itself is
  a product of per-round factors instead of a fresh sum of logarithms, equal to ``1e-12``.
* Rb-d / Rb-c without ``record_e2`` (the default) skip the span test and the ``E2`` record altogether:
  the same rankers, weights and history otherwise, bit for bit, on both paths.
* RankBoost+ pair-free: when a new member splits the signature groups, the group pairs' log weights
  are carried over from their parents plus the new member's term (the sum the earlier code made from
  scratch, one term later) instead of recomputed: the same fit, bit for bit, ``E2`` included.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.boosters._helpers import E2_RTOL, assert_identical_fit, dependent_data, graded_data, letor_like

import boostplug.boosters._group_e2 as group_e2
from boostplug.boosters import RankBoost
from boostplug.boosters._group_e2 import GroupE2
from boostplug.boosters._group_pairs import GroupPairs
from boostplug.boosters._level_sums import LevelPairs, level_e2
from boostplug.boosters.stumps import make_candidates
from boostplug.groups import group_ptr_from_qid

def fit_kept_and_from_scratch(monkeypatch, X, y, qid, sample_weight=None, limit=0, **params):
    """The same fit with ``E2`` kept round by round and computed from scratch (``ENTRY_LIMIT = limit``:
    from the first round, or from the round the entries pass ``limit``)."""
    params.setdefault("record_e2", True)
    kept = RankBoost(pairwise="levels", **params).fit(X, y, qid=qid, sample_weight=sample_weight)
    monkeypatch.setattr(group_e2, "ENTRY_LIMIT", limit)
    scratch = RankBoost(pairwise="levels", **params).fit(X, y, qid=qid, sample_weight=sample_weight)
    monkeypatch.undo()
    return kept, scratch


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("variant", ["rb-c", "rb-d"])
@pytest.mark.parametrize("data", [graded_data, letor_like, dependent_data])
def test_rb_kept_e2_trains_as_the_sum_from_scratch(monkeypatch, seed: int, variant: str, data) -> None:
    X, y, qid = data(np.random.default_rng(seed))
    kept, scratch = fit_kept_and_from_scratch(monkeypatch, X, y, qid, variant=variant, n_rounds=60,
                                              thresholds="all", random_state=seed)
    assert len(kept.rankers_) >= 5          # Rb-d may stop early (eps- = 0)
    assert_identical_fit(kept, scratch, X, approx=("E2",))


def test_rb_kept_e2_sees_every_kind_of_step(monkeypatch) -> None:
    """The data above reach member, new and dependent steps (so each update of the kept E2 is tested)."""
    steps = set()
    for seed in range(4):
        X, y, qid = dependent_data(np.random.default_rng(seed))
        m = RankBoost(variant="rb-c", n_rounds=60, thresholds="all", pairwise="levels", record_e2=True)
        m.fit(X, y, qid=qid)
        steps |= {h["step"] for h in m.history_}
    assert steps == {"new", "member", "dependent"}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", ["rb-c", "rb-d"])
def test_rb_kept_e2_with_query_weights(monkeypatch, seed: int, variant: str) -> None:
    rng = np.random.default_rng(50 + seed)
    X, y, qid = dependent_data(rng, n_queries=7)
    qw = rng.choice([0.0, 0.5, 1.0, 3.0], size=7)
    qw[1] = 2.5
    kept, scratch = fit_kept_and_from_scratch(monkeypatch, X, y, qid, sample_weight=qw, variant=variant,
                                              n_rounds=40, thresholds="all")
    assert_identical_fit(kept, scratch, X, approx=("E2",))


@pytest.mark.parametrize("limit", [300, 5000])
def test_rb_kept_e2_goes_back_to_the_sum_from_scratch_past_the_limit(monkeypatch, limit: int) -> None:
    """Entries beyond ENTRY_LIMIT mid-fit: from that round on E2 is summed from scratch; the same fit."""
    X, y, qid = letor_like(np.random.default_rng(9))
    monkeypatch.setattr(group_e2, "ENTRY_LIMIT", limit)
    seen = []
    real = GroupE2.value

    def spy(self, members, eta):
        out = real(self, members, eta)
        seen.append(self.exact)
        return out

    monkeypatch.setattr(GroupE2, "value", spy)
    mid = RankBoost(variant="rb-c", n_rounds=40, pairwise="levels", random_state=0,
                    record_e2=True).fit(X, y, qid=qid)
    monkeypatch.undo()
    assert not seen[0] and seen[-1]          # kept first, summed from scratch once past the limit
    monkeypatch.setattr(group_e2, "ENTRY_LIMIT", 0)
    scratch = RankBoost(variant="rb-c", n_rounds=40, pairwise="levels", random_state=0,
                        record_e2=True).fit(X, y, qid=qid)
    assert_identical_fit(mid, scratch, X, approx=("E2",))


def test_rb_kept_e2_perfect_first_ranker(monkeypatch) -> None:
    X = np.array([[0.0], [1.0], [2.0], [0.5], [3.0]])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    kept, scratch = fit_kept_and_from_scratch(monkeypatch, X, y, np.array([0, 0, 0, 1, 1]), variant="rb-c",
                                              thresholds="all")
    assert kept.history_[0]["alpha"] == math.inf
    assert_identical_fit(kept, scratch, X, approx=("E2",))


@pytest.mark.parametrize("seed", range(5))
def test_group_e2_equals_the_sum_from_scratch_for_any_sequence(seed: int) -> None:
    """Members joining one or several at a time, weights moving one or several at a time, large
    weights, a one-document query, query weights: E2 equals level_e2 at every step."""
    rng = np.random.default_rng(700 + seed)
    X, y, qid = graded_data(rng, n_queries=6, max_docs=25, n_labels=4)
    gp = group_ptr_from_qid(qid)
    qw = None if seed % 2 else rng.choice([0.5, 1.0, 3.0], size=gp.shape[0] - 1)
    lv = LevelPairs(y, gp, qw)
    codes = make_candidates(X, "all").codes
    stumps = np.argwhere(np.ones((X.shape[1], int(codes.max()) + 1), dtype=bool))
    tracker = GroupE2(lv, codes)
    members: list[tuple[int, int]] = []
    eta = np.zeros(0)
    for step in range(25):
        kind = rng.integers(3) if members else 0
        if kind == 0:                                   # one or two new members
            for _ in range(1 + rng.integers(2)):
                k, j = (int(v) for v in stumps[rng.integers(stumps.shape[0])])
                if (k, j) not in members:
                    members.append((k, j))
                    eta = np.append(eta, rng.normal(scale=2.0))
        elif kind == 1:                                 # one member moves
            eta[rng.integers(eta.size)] += rng.normal(scale=3.0)
        else:                                           # several move (a dependent step)
            eta = eta + rng.normal(size=eta.size) * (rng.random(eta.size) < 0.5)
        got = tracker.value(members, eta.copy())
        ref = level_e2(codes, members, eta, lv)
        assert math.isclose(got, ref, rel_tol=E2_RTOL), (step, got, ref)
    assert not tracker.exact


def test_group_e2_holds_fewer_entries_than_pairs() -> None:
    """The entries are pairs of groups holding critical pairs: at most the pairs, fewer while the
    groups are coarse."""
    X, y, qid = letor_like(np.random.default_rng(3))
    gp = group_ptr_from_qid(qid)
    lv = LevelPairs(y, gp, None)
    codes = make_candidates(X, "sample").codes
    tracker = GroupE2(lv, codes)
    tracker.value([(0, 3)], np.array([0.7]))
    assert 0 < tracker.pg.shape[0] < lv.n_pairs
    tracker.value([(0, 3), (1, 5), (2, 2), (4, 1), (5, 7)], np.array([0.7, -0.2, 0.4, 1.1, 0.3]))
    assert tracker.pg.shape[0] <= lv.n_pairs
    N = tracker.N[:tracker.pg.shape[0]]
    assert np.all(N > 0) and N.sum() == lv.n_pairs        # every critical pair in exactly one entry


# ---- RankBoost+: the group pairs' log weights carried over a split ------------------------------

def fit_carried_and_recomputed(monkeypatch, X, y, qid, sample_weight=None, **params):
    """RankBoost+ pair-free as it runs, and with every split recomputing the log weights (the earlier code)."""
    carried = RankBoost(variant="rankboost+", pairwise="levels", **params).fit(X, y, qid=qid,
                                                                              sample_weight=sample_weight)
    split, carries = GroupPairs._split, []

    def recompute(self, h, eta):
        carries.append(eta is not None)
        return split(self, h, None)

    monkeypatch.setattr(GroupPairs, "_split", recompute)
    recomputed = RankBoost(variant="rankboost+", pairwise="levels", **params).fit(X, y, qid=qid,
                                                                                 sample_weight=sample_weight)
    monkeypatch.undo()
    assert any(carries)                   # the fit did carry log weights over splits
    return carried, recomputed


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("efficient", [True, False])
def test_rbplus_carried_log_weights_train_as_recomputed(monkeypatch, seed: int, efficient: bool) -> None:
    rng = np.random.default_rng(80 + seed)
    X, y, qid = (letor_like(rng, n_queries=12), graded_data(rng), dependent_data(rng))[seed]
    sw = None if seed != 1 else rng.choice([0.5, 1.0, 2.0], size=np.unique(qid).size)
    carried, recomputed = fit_carried_and_recomputed(monkeypatch, X, y, qid, sample_weight=sw, n_rounds=40,
                                                     efficient=efficient, thresholds="all", random_state=seed)
    assert len(carried.rankers_) >= 10
    assert_identical_fit(carried, recomputed, X)


E2_RECORD = ("E2", "step", "span_size")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", ["rb-c", "rb-d"])
@pytest.mark.parametrize("pairwise", ["levels", "pairs"])
@pytest.mark.parametrize("data", [graded_data, dependent_data])
def test_rb_without_the_e2_record_trains_the_same(seed: int, variant: str, pairwise: str, data) -> None:
    X, y, qid = data(np.random.default_rng(seed))
    sw = np.random.default_rng(seed).choice([0.5, 1.0, 2.0], size=np.unique(qid).size) if seed == 2 else None
    params = {"variant": variant, "n_rounds": 40, "thresholds": "all", "pairwise": pairwise, "random_state": seed}
    kept = RankBoost(record_e2=True, **params).fit(X, y, qid=qid, sample_weight=sw)
    light = RankBoost(**params).fit(X, y, qid=qid, sample_weight=sw)
    assert len(light.rankers_) >= 5 and light.span_size_ is None and kept.span_size_ >= 1
    assert light.stop_reason_ == kept.stop_reason_ and light.undefined_round_ == kept.undefined_round_
    assert light.rankers_ == kept.rankers_ and light.weights_ == kept.weights_
    assert np.array_equal(light.predict(X), kept.predict(X))
    for hl, hk in zip(light.history_, kept.history_, strict=True):
        assert set(hk) - set(hl) == set(E2_RECORD)
        assert all(hl[key] == hk[key] for key in hl if key != "seconds"), hl["round"]


def test_rb_without_the_e2_record_perfect_first_ranker() -> None:
    X = np.array([[0.0], [1.0], [2.0], [0.5], [3.0]])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    for pairwise in ("levels", "pairs"):
        m = RankBoost(variant="rb-c", thresholds="all", pairwise=pairwise).fit(X, y, qid=[0, 0, 0, 1, 1])
        (h,) = m.history_
        assert h["alpha"] == math.inf and not set(E2_RECORD) & set(h) and m.span_size_ is None


def test_record_e2_is_a_flag_and_rankboost_plus_keeps_e2_always(tmp_path) -> None:
    X, y, qid = graded_data(np.random.default_rng(0))
    with pytest.raises(ValueError, match="record_e2"):
        RankBoost(record_e2="yes").fit(X, y, qid=qid)
    plus = RankBoost(variant="rankboost+", n_rounds=5, random_state=0).fit(X, y, qid=qid)
    assert all(set(E2_RECORD) <= set(h) for h in plus.history_) and plus.span_size_ >= 1
    light = RankBoost(n_rounds=5).fit(X, y, qid=qid)   # span_size_ None survives the model file
    light.save(tmp_path / "m.json")
    back = RankBoost.load(tmp_path / "m.json")
    assert back.span_size_ is None and back.record_e2 is False and back.rankers_ == light.rankers_
