"""Click simulation on labeled ranking data, for evaluating learning from clicks.

The protocol of Joachims, Swaminathan and Schnabel (WSDM 2017): a production
ranker's scores fix, for each query, the list it shows (its ``top_k`` documents by score,
ties in row order); each session draws a query (uniformly, or by ``query_weights``) and a
click model draws clicks on that list from the documents' true grades.

Attractiveness (probability of a click on an examined document of grade ``g``), with
``g_max`` the largest grade (``max_grade``, default: the data's)::

    a(g) = eps_minus + (eps_plus - eps_minus) * (2^g - 1) / (2^g_max - 1)

so that on binary grades a relevant document is clicked with ``eps_plus`` and an irrelevant
one with ``eps_minus`` (the WSDM 2017 click noise), and graded labels interpolate as in
their gains. ``click_prob`` (one probability per integer grade) replaces the formula.

Click models (Chuklin, Markov, de Rijke, *Click Models for Web Search*, 2015), at position
``r = 1..k``:

* ``"pbm"``, position-based: examined with ``(1/r)^eta`` (or the given ``examination``
  probability of each position), independently of the rest; clicked with ``a(g)`` when examined
  (WSDM 2017);
* ``"cascade"``: the user scans down from the top, clicks with ``a(g)``, and stops after the
  first click (Craswell et al., WSDM 2008);
* ``"dcm"``, dependent click model: as the cascade, but after a click at ``r`` goes on
  with probability ``continue_prob`` (one number, or one per position) (Guo, Liu, Wang,
  WSDM 2009).

The log's ``order`` column numbers each session's clicks top-down (the cascade and DCM
scan in that order; under the PBM it is the usual top-down assumption). Documents are
keyed by their row in the data (``doc``), queries by the data's ``qid``, sessions by
``0..n_sessions-1``: ``boostplug.clicks.to_rows(prefs, data.qid)`` maps preferences back.

Presentation (``presentation``): ``"fixed"`` shows every session of a query the same list;
``"shuffle"`` shows the ``top_k`` documents in a uniformly random order (randomised traffic);
``"swap"`` is FairPairs (Radlinski and Joachims, AAAI 2006): each session pairs the list's
neighbours from position 1 or 2 (at random) and swaps each pair with probability 1/2, so every
document moves at most one place, and documents shown at two positions let the propensities be
estimated (:func:`boostplug.clicks.estimate_propensity`) from an otherwise fixed list.
What a shuffle does to every strategy's pairs under the PBM, the cascade and the DCM: docs/clicks.md,
"The protocol".

Presets (:data:`CLICK_PRESETS`, :func:`preset`): the field's reference settings by name, each as
docs/compare.md ("Learning from clicks", step 2) gives it; ULTRA's PBM on a set whose top grade
``G`` is below 4 reads grade ``g`` as ``4 g / G`` on its 0..4 scale, interpolated.

Sampling is vectorised over blocks of sessions and seeded (``seed``: an int or a
``numpy.random.Generator``): the same arguments give the same log.

Example:
    >>> import numpy as np
    >>> from boostplug import clicks
    >>> from boostplug.data import make_ranking
    >>> data = make_ranking(n_queries=5, docs_per_query=8, seed=1)
    >>> log = clicks.simulate(data, data.y, n_sessions=3, top_k=4, model="cascade", seed=0)
    >>> log.n_impressions, len(log)
    (3, 12)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_count, check_labels, check_real, check_rng, check_scores, show
from ..groups import group_ptr_from_sizes, index_within_query, qid_from_group_ptr
from .log import ClickLog

__all__ = ["CLICK_MODELS", "PRESENTATIONS", "CLICK_PRESETS", "ULTRA_EXAMINATION", "ULTRA_CLICK_PROB", "simulate",
           "attractiveness", "examination", "grade_click_prob", "preset", "shown_lists"]

CLICK_MODELS = ("pbm", "cascade", "dcm")
#: How each session orders the production ranker's top k (module docstring).
PRESENTATIONS = ("fixed", "shuffle", "swap")
#: Sessions drawn per vectorised block (bounds the temporaries at a few hundred MB).
_BLOCK = 1 << 18


def attractiveness(labels: ArrayLike, *, eps_plus: float = 1.0, eps_minus: float = 0.1,
                   max_grade: float | None = None, click_prob: ArrayLike | None = None) -> NDArray[np.float64]:
    """Click probability of an examined document, per row (module docstring).

    ``click_prob``: one probability per integer grade ``0..G`` instead of the formula (every
    label must then be an integer in that range)."""
    y = check_labels(labels)
    if click_prob is not None:
        p = check_scores(click_prob, name="click_prob")
        if p.size == 0 or p.min() < 0 or p.max() > 1:
            raise ValueError(f"click_prob must hold one probability in [0, 1] per grade, got {p.tolist()}")
        bad = np.flatnonzero((y != np.round(y)) | (y >= p.shape[0]))
        if bad.size:
            raise ValueError(f"click_prob has {p.shape[0]} grades (0..{p.shape[0] - 1}) but row {int(bad[0])} has "
                             f"label {float(y[bad[0]])}")
        return p[y.astype(np.int64)]
    hi = check_real("eps_plus", eps_plus, 0.0, 1.0, lo_open=False)
    lo = check_real("eps_minus", eps_minus, 0.0, 1.0, lo_open=False)
    if max_grade is None:
        top = float(y.max()) if y.size else 0.0
    else:
        top = check_real("max_grade", max_grade, 0.0, 1e3, lo_open=False)
        if y.size and y.max() > top:
            raise ValueError(f"max_grade={show(max_grade)} is below the largest label {float(y.max())}")
    if top == 0.0:
        return np.full(y.shape[0], lo)
    return lo + (hi - lo) * np.expm1(y * np.log(2.0)) / np.expm1(top * np.log(2.0))


def examination(top_k: int, eta: float) -> NDArray[np.float64]:
    """The position-based model's examination probabilities ``(1/r)^eta``, ``r = 1..top_k``."""
    return (1.0 / np.arange(1, top_k + 1)) ** eta


_eta_examination = examination  # simulate's own argument of that name shadows the function


def _examination(values: ArrayLike, top_k: int) -> NDArray[np.float64]:
    """Given examination probabilities: at least ``top_k`` of them (the first ``top_k`` used), in [0, 1]."""
    e = check_scores(values, name="examination")
    if e.shape[0] < top_k:
        raise ValueError(f"examination has {e.shape[0]} probabilities but top_k is {top_k}: give one per shown "
                         "position")
    if e.size and (e.min() < 0 or e.max() > 1):
        raise ValueError(f"examination must hold probabilities in [0, 1], got {e.tolist()}")
    return e[:top_k]


#: ULTRA's position-based model: examination by rank 1..10, click probability by grade 0..4.
ULTRA_EXAMINATION = (0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06)
ULTRA_CLICK_PROB = (0.1, 0.16, 0.28, 0.52, 1.0)

#: The field's reference click models by name (module docstring): :func:`simulate`'s settings of each.
CLICK_PRESETS: dict[str, dict[str, Any]] = {
    "pbm-eta0.5": {"model": "pbm", "eta": 0.5, "eps_plus": 1.0, "eps_minus": 0.1},
    "pbm-eta1": {"model": "pbm", "eta": 1.0, "eps_plus": 1.0, "eps_minus": 0.1},
    "pbm-eta2": {"model": "pbm", "eta": 2.0, "eps_plus": 1.0, "eps_minus": 0.1},
    "cascade": {"model": "cascade", "eps_plus": 1.0, "eps_minus": 0.1},
    "dcm": {"model": "dcm", "continue_prob": 0.5, "eps_plus": 1.0, "eps_minus": 0.1},
    "ultra-pbm": {"model": "pbm", "examination": ULTRA_EXAMINATION, "click_prob": ULTRA_CLICK_PROB},
}


def preset(name: str) -> dict[str, Any]:
    """:func:`simulate`'s settings of the preset ``name`` (:data:`CLICK_PRESETS`), a new dict."""
    return dict(CLICK_PRESETS[check_choice("preset", name, tuple(CLICK_PRESETS))])


def grade_click_prob(click_prob: ArrayLike, top_grade: float) -> NDArray[np.float64]:
    """Click probabilities on the grades ``0..G`` of a set whose top grade is ``G``, from
    ``click_prob`` given on a scale ``0..len-1``: grade ``g`` reads as ``g (len - 1) / G`` on that
    scale, interpolated linearly (the same list when ``G = len - 1``)."""
    p = check_scores(click_prob, name="click_prob")
    top = int(round(float(top_grade)))
    if top < 1 or p.shape[0] < 2:
        return p
    return np.interp(np.arange(top + 1) * (p.shape[0] - 1) / top, np.arange(p.shape[0]), p)


def shown_lists(scores: NDArray[np.float64], group_ptr: NDArray[np.int64], top_k: int) -> NDArray[np.int64]:
    """``(n_queries, top_k)`` rows each query shows, best score first (ties: lower row first);
    ``-1`` pads queries with fewer documents."""
    n_q = group_ptr.shape[0] - 1
    q_of_row = qid_from_group_ptr(group_ptr)
    order = np.lexsort((-scores, q_of_row))  # by query, then score descending, stable
    rank = index_within_query(group_ptr)
    keep = rank < top_k
    shown = np.full((n_q, top_k), -1, dtype=np.int64)
    shown[q_of_row[order][keep], rank[keep]] = order[keep]
    return shown


def _present(lists: NDArray[np.int64], presentation: str, rng: np.random.Generator) -> NDArray[np.int64]:
    """Each session's list (one row of ``lists``, ``-1`` padding last) reordered by ``presentation``."""
    if presentation == "fixed":
        return lists
    if presentation == "swap":  # FairPairs: disjoint neighbour pairs, each swapped with probability 1/2
        shown = (lists >= 0).sum(axis=1)
        start = rng.integers(0, 2, size=len(lists))
        flip = rng.random(lists.shape) < 0.5
        out = lists.copy()
        for k in range(lists.shape[1] - 1):
            do = ((k - start) % 2 == 0) & (k + 1 < shown) & flip[:, k]
            out[do, k], out[do, k + 1] = lists[do, k + 1], lists[do, k]
        return out
    keys = rng.random(lists.shape)
    keys[lists < 0] = np.inf  # padding stays last
    return np.take_along_axis(lists, np.argsort(keys, axis=1, kind="stable"), axis=1)


def _continue(model: str, continue_prob: Any, top_k: int) -> NDArray[np.float64]:
    if model == "cascade":
        return np.zeros(top_k)
    lam = np.asarray(continue_prob, dtype=np.float64)
    if lam.ndim == 0:
        lam = np.full(top_k, check_real("continue_prob", float(lam), 0.0, 1.0, lo_open=False))
    elif lam.shape != (top_k,):
        raise ValueError(f"continue_prob must be one number or one per position ({top_k}), got shape {lam.shape}")
    elif not (np.all(lam >= 0) and np.all(lam <= 1)):
        raise ValueError(f"continue_prob must lie in [0, 1], got {lam.tolist()}")
    return lam


def simulate(
    data: Any,
    scores: ArrayLike,
    n_sessions: int,
    *,
    model: str = "pbm",
    top_k: int = 10,
    eta: float = 1.0,
    eps_plus: float = 1.0,
    eps_minus: float = 0.1,
    continue_prob: float | ArrayLike = 0.5,
    click_prob: ArrayLike | None = None,
    examination: ArrayLike | None = None,
    max_grade: float | None = None,
    query_weights: ArrayLike | None = None,
    presentation: str = "fixed",
    seed: int | np.random.Generator | None = None,
) -> ClickLog:
    """Simulated sessions on ``data`` shown in the order of ``scores`` (module docstring).

    Args:
        data: a :class:`~boostplug.data.RankingData` (its ``y`` are the true grades).
        scores: the production ranker's score of every row of ``data``.
        n_sessions: sessions to draw.
        model: ``"pbm"`` (default), ``"cascade"`` or ``"dcm"``.
        top_k: documents shown per session (fewer for a smaller query).
        eta: position bias of the PBM, ``>= 0`` (0: every position examined).
        eps_plus, eps_minus: click probability of an examined document of the highest and of
            grade 0.
        continue_prob: DCM: probability of going on after a click (one, or one per position).
        click_prob: click probability per integer grade, instead of ``eps_plus``/``eps_minus``.
        examination: PBM: the examination probability of each position ``1..top_k`` (at least
            ``top_k`` values), instead of ``(1/r)^eta``.
        max_grade: the grade that gets ``eps_plus`` (default: the data's largest label).
        query_weights: relative frequency of each query (default: uniform).
        presentation: ``"fixed"`` (default), ``"shuffle"`` or ``"swap"``: how each session orders
            the shown documents (module docstring).
        seed: int or ``numpy.random.Generator``.

    Returns:
        a :class:`~boostplug.clicks.ClickLog` with an ``order`` column (click sequence numbers).
    """
    y = np.asarray(data.y, dtype=np.float64)
    group_ptr = np.asarray(data.group_ptr, dtype=np.int64)
    qid = np.asarray(data.qid)
    s = check_scores(scores)
    if s.shape[0] != y.shape[0]:
        raise ValueError(f"scores has {s.shape[0]} values but the data has {y.shape[0]} rows")
    n_sessions = check_count(n_sessions, "n_sessions")
    top_k = check_count(top_k, "top_k")
    model = check_choice("model", model, CLICK_MODELS)
    eta = check_real("eta", eta, 0.0, 1e3, lo_open=False)
    presentation = check_choice("presentation", presentation, PRESENTATIONS)
    attr = attractiveness(y, eps_plus=eps_plus, eps_minus=eps_minus, max_grade=max_grade, click_prob=click_prob)
    lam = _continue(model, continue_prob, top_k)
    n_q = group_ptr.shape[0] - 1
    if n_q == 0:
        raise ValueError("the data has no queries to simulate sessions on")
    p = None
    if query_weights is not None:
        w = check_scores(query_weights, name="query_weights")
        if w.shape[0] != n_q or w.min() < 0 or w.sum() <= 0:
            raise ValueError(f"query_weights must hold {n_q} non-negative weights, not all zero")
        p = w / w.sum()
    rng = check_rng(seed)

    shown = shown_lists(s, group_ptr, top_k)
    n_shown = (shown >= 0).sum(axis=1)
    if examination is not None and model != "pbm":
        raise ValueError(f"examination is the position-based model's; model {model!r} examines top-down")
    exam = _eta_examination(top_k, eta) if examination is None else _examination(examination, top_k)
    attr_pad = np.append(attr, 0.0)  # row -1 (padding) is never clicked
    first_row = group_ptr[:-1]

    queries = rng.choice(n_q, size=n_sessions, p=p)
    parts: list[tuple[NDArray[np.int64], NDArray[np.bool_]]] = []
    for start in range(0, n_sessions, _BLOCK):
        q = queries[start:start + _BLOCK]
        lists = _present(shown[q], presentation, rng)
        a = attr_pad[lists]
        u = rng.random(lists.shape)
        if model == "pbm":
            click = u < exam * a
        else:
            would = u < a
            go_on = rng.random(lists.shape) < lam
            stop = would & ~go_on
            stopped_before: NDArray[np.int64] = np.cumsum(stop, axis=1) - stop  # stops at earlier positions
            click = would & (stopped_before == 0)
        click &= lists >= 0
        parts.append((lists, click))
    lists, click = (np.concatenate(column) for column in zip(*parts))
    order = np.where(click, np.cumsum(click, axis=1), np.nan)  # each session's clicks numbered top-down
    valid = lists >= 0
    rows = lists[valid]
    sizes = n_shown[queries]
    position = np.broadcast_to(np.arange(1, top_k + 1), valid.shape)[valid]
    return ClickLog(
        session=np.repeat(np.arange(n_sessions, dtype=np.int64), sizes),
        query=np.repeat(qid[first_row[queries]], sizes),
        doc=rows,
        position=position.astype(np.int64),
        clicked=click[valid],
        order=order[valid],
        dwell=None,
        group_ptr=group_ptr_from_sizes(sizes),
    )
