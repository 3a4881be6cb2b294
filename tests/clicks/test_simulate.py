"""Click simulation: click-through rates by position and grade within sampling error of each
click model's own probabilities (and far from those of a wrong model), the shown lists, the
log's form, seeding, and the parameter refusals."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import clicks
from boostplug.clicks import simulation as sim
from boostplug.data import RankingData, make_ranking

#: |z| bound of every cell (some 50-200 cells per test: a false alarm has probability ~1e-4).
Z = 4.5


def graded_data(n_queries: int = 12, seed: int = 0) -> RankingData:
    return make_ranking(n_queries=n_queries, docs_per_query=(3, 12), n_labels=5, seed=seed)


def z_scores(clicks_: np.ndarray, shown: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Binomial z of clicks in each cell (cells with some expected clicks and non-clicks only)."""
    ok = (shown * p > 5) & (shown * (1 - p) > 5)
    return (clicks_[ok] - shown[ok] * p[ok]) / np.sqrt(shown[ok] * p[ok] * (1 - p[ok]))


def pbm_cells(log: clicks.ClickLog, y: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Impressions and clicks per (position, grade)."""
    grade = y[log.doc].astype(int)
    shown = np.zeros((top_k, 5))
    clicked = np.zeros((top_k, 5))
    np.add.at(shown, (log.position - 1, grade), 1)
    np.add.at(clicked, (log.position - 1, grade), log.clicked)
    return shown, clicked


@pytest.mark.parametrize("eta, eps_plus, eps_minus", [(1.0, 1.0, 0.1), (2.0, 0.9, 0.05), (0.5, 0.7, 0.2)])
def test_pbm_ctr_by_position_and_grade(eta: float, eps_plus: float, eps_minus: float) -> None:
    data = graded_data()
    top_k = 8
    scores = np.random.default_rng(1).normal(size=data.n_docs)
    log = clicks.simulate(data, scores, 120_000, model="pbm", top_k=top_k, eta=eta, eps_plus=eps_plus,
                          eps_minus=eps_minus, seed=3)
    shown, clicked = pbm_cells(log, data.y, top_k)
    g = np.arange(5)
    attr = eps_minus + (eps_plus - eps_minus) * (2.0 ** g - 1) / (2.0 ** 4 - 1)
    p = (1.0 / np.arange(1, top_k + 1))[:, None] ** eta * attr[None, :]
    z = z_scores(clicked, shown, p)
    assert z.size > 20 and np.abs(z).max() < Z
    # the test can tell: another position bias is far outside sampling error
    wrong = (1.0 / np.arange(1, top_k + 1))[:, None] ** (eta * 1.2) * attr[None, :]
    assert np.abs(z_scores(clicked, shown, wrong)).max() > 3 * Z


def test_pbm_with_given_examination_and_grade_click_prob() -> None:
    """ULTRA's preset: examination by rank and click probability by grade, read on a set whose top
    grade is 4 as given; the CTR of every (position, grade) cell within sampling error."""
    data = graded_data()
    top_k = 10
    kw = sim.preset("ultra-pbm")
    scores = np.random.default_rng(1).normal(size=data.n_docs)
    log = clicks.simulate(data, scores, 120_000, top_k=top_k, seed=3, **kw)
    shown, clicked = pbm_cells(log, data.y, top_k)
    p = np.asarray(sim.ULTRA_EXAMINATION)[:, None] * np.asarray(sim.ULTRA_CLICK_PROB)[None, :]
    z = z_scores(clicked, shown, p)
    assert z.size > 20 and np.abs(z).max() < Z
    wrong = (1.0 / np.arange(1, top_k + 1))[:, None] * np.asarray(sim.ULTRA_CLICK_PROB)[None, :]
    assert np.abs(z_scores(clicked, shown, wrong)).max() > 3 * Z


def test_grade_click_prob_reads_lower_grades_proportionally() -> None:
    assert sim.grade_click_prob(sim.ULTRA_CLICK_PROB, 4).tolist() == list(sim.ULTRA_CLICK_PROB)
    assert sim.grade_click_prob(sim.ULTRA_CLICK_PROB, 2).tolist() == [0.1, 0.28, 1.0]
    assert sim.grade_click_prob(sim.ULTRA_CLICK_PROB, 1).tolist() == [0.1, 1.0]
    assert sim.grade_click_prob(sim.ULTRA_CLICK_PROB, 3) == pytest.approx([0.1, 0.2, 0.44, 1.0])


def test_examination_refusals() -> None:
    data = graded_data()
    with pytest.raises(ValueError, match="examination has 3 probabilities but top_k is 5"):
        clicks.simulate(data, data.y, 10, top_k=5, examination=[1.0, 0.5, 0.3])
    with pytest.raises(ValueError, match="examination must hold probabilities in"):
        clicks.simulate(data, data.y, 10, top_k=2, examination=[1.0, 1.5])
    with pytest.raises(ValueError, match="examination is the position-based model's"):
        clicks.simulate(data, data.y, 10, top_k=2, model="cascade", examination=[1.0, 0.5])


def _chain_probabilities(attr: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """P(click at r) of one list under the DCM (lam = 0: the cascade), by the recursion
    P(E_1) = 1, P(E_{r+1}) = P(E_r) (1 - a_r + a_r lam_r)."""
    p, examined = np.zeros(attr.shape[0]), 1.0
    for r, a in enumerate(attr):
        p[r] = examined * a
        examined *= 1.0 - a + a * lam[r]
    return p


def _chain_z(log: clicks.ClickLog, data: RankingData, scores: np.ndarray, top_k: int, attr: np.ndarray,
             lam: np.ndarray) -> np.ndarray:
    """Binomial z of the clicks at each position of each query's list against the chain's
    probabilities (:func:`_chain_probabilities`) of the documents it shows."""
    shown_rows = sim.shown_lists(scores, data.group_ptr, top_k)
    zs = []
    for q in range(data.n_queries):
        rows = shown_rows[q][shown_rows[q] >= 0]
        expected = _chain_probabilities(attr[rows], lam[:rows.shape[0]])
        in_q = np.isin(log.doc, rows)
        sessions = np.unique(log.session[in_q]).shape[0]
        counts = np.bincount(log.position[in_q & log.clicked] - 1, minlength=rows.shape[0])[:rows.shape[0]]
        zs.append(z_scores(counts.astype(float), np.full(rows.shape[0], float(sessions)), expected))
    return np.concatenate(zs)


@pytest.mark.parametrize("model, continue_prob", [("cascade", 0.5), ("dcm", 0.6), ("dcm", [0.9, 0.8, 0.5, 0.3, 0.2])])
def test_cascade_and_dcm_ctr_per_position(model: str, continue_prob) -> None:
    data = graded_data(n_queries=6, seed=4)
    top_k = 5
    scores = np.random.default_rng(2).normal(size=data.n_docs)
    log = clicks.simulate(data, scores, 60_000, model=model, top_k=top_k, continue_prob=continue_prob,
                          eps_plus=0.8, eps_minus=0.1, seed=5)
    attr = sim.attractiveness(data.y, eps_plus=0.8, eps_minus=0.1)
    lam = np.zeros(top_k) if model == "cascade" else np.broadcast_to(np.asarray(continue_prob, float), (top_k,))
    z = _chain_z(log, data, scores, top_k, attr, lam)
    assert z.size >= 12 and np.abs(z).max() < Z
    if model == "cascade":  # at most one click per session, the first attractive document scanned
        assert np.bincount(log.session[log.clicked]).max(initial=0) <= 1


def test_dcm_preset_goes_on_after_a_click_half_the_time() -> None:
    """The DCM preset: the chain's click-through rates with continuation 0.5 and noise 1.0/0.1,
    far from the cascade's (no continuation) on the same list."""
    kw = sim.preset("dcm")
    assert kw == {"model": "dcm", "continue_prob": 0.5, "eps_plus": 1.0, "eps_minus": 0.1}
    data = graded_data(n_queries=6, seed=4)
    top_k = 5
    scores = np.random.default_rng(2).normal(size=data.n_docs)
    log = clicks.simulate(data, scores, 60_000, top_k=top_k, seed=6, **kw)
    attr = sim.attractiveness(data.y, eps_plus=1.0, eps_minus=0.1)
    z = _chain_z(log, data, scores, top_k, attr, np.full(top_k, 0.5))
    assert z.size >= 12 and np.abs(z).max() < Z
    assert np.abs(_chain_z(log, data, scores, top_k, attr, np.zeros(top_k))).max() > 3 * Z


def test_order_numbers_clicks_top_down() -> None:
    data = graded_data()
    log = clicks.simulate(data, data.y, 2000, model="dcm", continue_prob=0.9, top_k=6, seed=0)
    assert log.order is not None
    assert np.isnan(log.order[~log.clicked]).all()
    for i in range(log.n_impressions):
        a, b = log.group_ptr[i], log.group_ptr[i + 1]
        o = log.order[a:b][log.clicked[a:b]]
        assert o.tolist() == list(range(1, o.size + 1))


def test_shown_lists_and_log_form() -> None:
    data = RankingData(np.zeros((7, 1)), np.array([0, 1, 2, 0, 1, 2, 3.0]), group_ptr=np.array([0, 2, 7]),
                       qid=np.array([40, 40, 9, 9, 9, 9, 9]))
    scores = np.array([0.0, 1.0, 0.5, 2.0, 0.5, -1.0, 3.0])
    shown = sim.shown_lists(scores, data.group_ptr, 3)
    assert shown.tolist() == [[1, 0, -1], [6, 3, 2]]  # ties (rows 2 and 4) in row order
    log = clicks.simulate(data, scores, 50, top_k=3, seed=0)
    assert clicks.read_log(log.columns()).n_impressions == 50  # a valid log
    for i in range(50):
        a, b = log.group_ptr[i], log.group_ptr[i + 1]
        q = log.query[a]
        assert log.doc[a:b].tolist() == ([1, 0] if q == 40 else [6, 3, 2])
        assert log.position[a:b].tolist() == list(range(1, b - a + 1))
    assert set(log.session.tolist()) == set(range(50))


def test_seeded() -> None:
    data = graded_data()
    a = clicks.simulate(data, data.y, 500, seed=7)
    b = clicks.simulate(data, data.y, 500, seed=np.random.default_rng(7))
    c = clicks.simulate(data, data.y, 500, seed=8)
    for name, col in a.columns().items():
        np.testing.assert_array_equal(col, b.columns()[name])
    assert not np.array_equal(a.clicked, c.clicked)


def test_query_weights_and_click_prob() -> None:
    data = graded_data(n_queries=4)
    log = clicks.simulate(data, data.y, 3000, query_weights=[0, 1, 3, 0], seed=0)
    counts = {q: int((log.query[log.group_ptr[:-1]] == q).sum()) for q in range(4)}
    assert counts[0] == counts[3] == 0 and 0.2 < counts[1] / 3000 < 0.3
    # click_prob replaces the formula: grade 0 never clicked, grade 4 always when examined (eta = 0)
    log = clicks.simulate(data, data.y, 300, eta=0.0, click_prob=[0, 0.5, 0.5, 0.5, 1.0], seed=0)
    grade = data.y[log.doc]
    assert not log.clicked[grade == 0].any() and log.clicked[grade == 4].all()


def test_parameter_refusals() -> None:
    data = graded_data(n_queries=3)
    y = data.y
    with pytest.raises(ValueError, match="scores has 3 values but the data has"):
        clicks.simulate(data, [0.0, 1.0, 2.0], 10)
    with pytest.raises(ValueError, match="model must be one of"):
        clicks.simulate(data, y, 10, model="ubm")
    with pytest.raises(ValueError, match="n_sessions must be >= 1"):
        clicks.simulate(data, y, 0)
    with pytest.raises(TypeError, match="top_k must be an integer"):
        clicks.simulate(data, y, 10, top_k=2.5)
    with pytest.raises(ValueError, match="eps_plus must be a finite number in"):
        clicks.simulate(data, y, 10, eps_plus=1.5)
    with pytest.raises(ValueError, match=r"continue_prob must be one number or one per position \(10\)"):
        clicks.simulate(data, y, 10, model="dcm", continue_prob=[0.5, 0.5])
    with pytest.raises(ValueError, match="continue_prob must be a finite number"):
        clicks.simulate(data, y, 10, model="dcm", continue_prob=2.0)
    with pytest.raises(ValueError, match="click_prob has 2 grades"):
        clicks.simulate(data, y, 10, click_prob=[0.1, 0.9])
    with pytest.raises(ValueError, match="max_grade=2 is below the largest label 4"):
        clicks.simulate(data, y, 10, max_grade=2)
    with pytest.raises(ValueError, match="query_weights must hold 3"):
        clicks.simulate(data, y, 10, query_weights=[1, 1])
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, None or a numpy.random.Generator, got -1$"):
        clicks.simulate(data, y, 10, seed=-1)  # numpy's "expected non-negative integer" before


def _ranks_in_fixed_list(log: clicks.ClickLog, fixed: np.ndarray, q_index: dict) -> list[list[int]]:
    """Each impression's documents as their 0-based ranks in the fixed (production) list."""
    out = []
    for i in range(log.n_impressions):
        a, b = log.group_ptr[i], log.group_ptr[i + 1]
        row = fixed[q_index[int(log.query[a])]]
        where = {int(d): r for r, d in enumerate(row) if d >= 0}
        out.append([where[int(d)] for d in log.doc[a:b]])
    return out


def test_shuffle_shows_every_document_at_every_position() -> None:
    data = make_ranking(n_queries=2, docs_per_query=(8, 10), n_labels=3, seed=5)
    scores = np.random.default_rng(1).normal(size=data.n_docs)
    top_k = 5
    fixed = sim.shown_lists(scores, data.group_ptr, top_k)
    q_index = {int(q): i for i, q in enumerate(data.qid[data.group_ptr[:-1]])}
    log = clicks.simulate(data, scores, 6000, top_k=top_k, presentation="shuffle", seed=2)
    at = np.zeros((top_k, top_k))
    for ranks in _ranks_in_fixed_list(log, fixed, q_index):
        assert sorted(ranks) == list(range(top_k))
        at[np.arange(top_k), ranks] += 1
    z = (at - 6000 / top_k) / np.sqrt(6000 * (1 / top_k) * (1 - 1 / top_k))
    assert np.abs(z).max() < Z


@pytest.mark.parametrize("model", ["pbm", "cascade"])
def test_shuffle_unbiases_net_preferences(model: str) -> None:
    """Two documents of the same grade: a fixed list makes the net count favour one of them (Click >
    Skip Above: the lower-shown one); a shuffled one leaves no net preference beyond sampling error,
    and between grades the net count has the grades' sign."""
    data = RankingData(np.zeros((4, 1)), np.array([1.0, 1.0, 0.0, 0.0]), group_ptr=np.array([0, 4]))
    scores = np.array([3.0, 2.0, 1.0, 0.0])
    n = 40_000

    def directed(pres: str) -> tuple[int, int, int]:
        """Sessions preferring doc 1 to doc 0, doc 0 to doc 1, and the net count of doc 2 over doc 0."""
        log = clicks.simulate(data, scores, n, model=model, top_k=4, eta=1.0, eps_plus=0.6, presentation=pres,
                              seed=3)
        t = clicks.preferences(log, "click>skip-above", weight="count").to_pandas()

        def count(a: int, b: int) -> tuple[int, int]:  # (a over b, b over a)
            for p, o, flip in ((a, b, False), (b, a, True)):
                r = t[(t.preferred == p) & (t.other == o)]
                if len(r):
                    ab = (int(r["count"].iloc[0]), int(r["against"].iloc[0]))
                    return ab[::-1] if flip else ab
            return 0, 0

        n20, n02 = count(2, 0)
        return (*count(1, 0), n20 - n02)

    fixed_10, fixed_01, _ = directed("fixed")
    assert fixed_10 > 1000 and fixed_01 == 0  # only ever the lower-shown one
    r10, r01, low_over_high = directed("shuffle")
    assert low_over_high < -1000
    # equal grades: no net preference beyond sampling error (|net| within Z standard deviations)
    assert r10 + r01 > 1000 and abs(r10 - r01) < Z * np.sqrt(r10 + r01), (r10, r01)


def test_presentation_refused_and_fixed_unchanged() -> None:
    data = graded_data(n_queries=3)
    with pytest.raises(ValueError, match="presentation must be one of"):
        clicks.simulate(data, data.y, 10, presentation="random")
    a = clicks.simulate(data, data.y, 300, seed=4)
    b = clicks.simulate(data, data.y, 300, presentation="fixed", seed=4)
    for name, col in a.columns().items():
        np.testing.assert_array_equal(col, b.columns()[name])


def test_swap_moves_documents_by_at_most_one_place_in_fair_pairs() -> None:
    """FairPairs (Radlinski and Joachims, AAAI 2006): disjoint neighbour pairs from rank 0 or 1,
    each swapped with probability 1/2: each neighbour pair is swapped in a quarter of the sessions."""
    data = make_ranking(n_queries=2, docs_per_query=(8, 10), n_labels=3, seed=5)
    scores = np.random.default_rng(1).normal(size=data.n_docs)
    top_k, n = 6, 8000
    fixed = sim.shown_lists(scores, data.group_ptr, top_k)
    q_index = {int(q): i for i, q in enumerate(data.qid[data.group_ptr[:-1]])}
    log = clicks.simulate(data, scores, n, top_k=top_k, presentation="swap", seed=2)
    swapped = np.zeros(top_k - 1)
    for ranks in _ranks_in_fixed_list(log, fixed, q_index):
        ranks = np.asarray(ranks)
        assert sorted(ranks) == list(range(top_k)) and np.abs(ranks - np.arange(top_k)).max() <= 1
        moved = np.flatnonzero(ranks[:-1] > ranks[1:])  # a neighbour pair shown the other way round
        assert np.all(np.diff(moved) >= 2)  # disjoint pairs
        swapped[moved] += 1
    z = (swapped - n / 4) / np.sqrt(n * 0.25 * 0.75)
    assert np.abs(z).max() < Z


def test_swap_lets_the_propensities_be_estimated() -> None:
    data = make_ranking(n_queries=60, docs_per_query=12, seed=0)
    log = clicks.simulate(data, data.X[:, 0], 20_000, eta=1.0, presentation="swap", seed=0)
    est = clicks.estimate_propensity(log, n_bootstrap=0)
    assert est.method == "em"
    np.testing.assert_allclose(est.propensity, 1.0 / np.arange(1, 11), atol=0.06)
    with pytest.raises(ValueError, match="no .query, document. of the click log was shown at more than one"):
        clicks.estimate_propensity(clicks.simulate(data, data.X[:, 0], 2000, presentation="fixed", seed=0),
                                   n_bootstrap=0)
