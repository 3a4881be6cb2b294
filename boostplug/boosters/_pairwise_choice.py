"""What ``pairwise="auto"`` chooses: the pair list (``"pairs"``, memory ``O(P)``) or the pair-free
sums (``"levels"``), which train the same model up to rounding, by their cost. One rule
(:func:`choose_pairwise`, each path's work per round counted from the data's shape and weighted by
its measured nanoseconds :data:`NS`; :data:`QUICK_FIT_NS`), which docs/boosters.md ("How
``pairwise="auto"`` chooses") states with its table.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .. import pairs as pairs_mod
from .._validation import check_choice
from ..pairs import count_critical_pairs
from ._fit_data import FitData
from ._level_sums import PAIRWISE

__all__ = ["NS", "QUICK_FIT_NS", "choose_pairwise", "fixed_pairwise", "round_costs"]

#: A fit whose pair list is estimated under this many nanoseconds in all (its rounds times the
#: pair list's cost per round) takes the pair list whatever the levels cost: it compiles about half
#: the kernels on a first use (what such a fit waits for) and is what small data takes by default.
QUICK_FIT_NS = 20e6

#: Nanoseconds per unit of work, from ``benchmarks/booster_speed.py``'s times of both paths on OHSUMED
#: and MQ2008 Fold1 train and single queries of 300 and 100,000 documents (docs/studies/performance.md).
#: Keys: ``"<booster>_<path>_<work>"``. Where the two paths' times come close (MPBoost on MQ2008),
#: either choice costs little.
NS = {
    "rb_pairs_pair": 12.0,         # per critical pair, the per-round passes over the pair list
    "rb_levels_doc": 25.0,         # per document and level: level sums, potentials, eps, R1/R2 (a merge)
    "rb_e2_pairs_pair": 5.5,       # E2 record, per critical pair: its log-weight
    "rb_e2_levels_doc": 20.0,      # E2 record, per document and level: the span test
    "rb_e2_levels_entry": 3.0,     # E2 record, per pair of signature groups holding pairs (<= P)
    # RankBoost+'s pair list: fitted to its earlier, slower kernel; kept because the levels' bound
    # G_q <= 2^t over-counts their groups about as much (docs/studies/performance.md, auto for RankBoost+)
    "plus_pairs_visit": 2.0,       # per pair and feature (the stump sums over the pairs)
    "plus_pairs_pair": 10.0,       # per pair, the rest of the round on the pair list
    "plus_levels_visit": 0.6,      # per document, feature and group of its query (the sweep)
    "plus_levels_block": 1.0,      # per group pair and member (the group pairs' weights)
    "mp_pairs_visit": 3.0,         # per pair and feature (N and D over the pairs)
    "mp_levels_visit": 1.75,       # per document, feature and squared level count (the level sweep)
}


def _rbplus_groups(sizes: NDArray[np.int64], n_rounds: int) -> tuple[float, float]:
    """Averages over rounds ``t = 1..T`` of ``sum_q n_q G_q(t)`` and ``sum_q G_q(t)^2 t`` with
    ``G_q(t) = min(n_q, 2^t)``."""
    n_q = sizes.astype(np.float64)
    t_full = math.ceil(math.log2(max(float(n_q.max()), 1.0))) if n_q.size else 0   # every G_q = n_q from here
    visits = blocks = 0.0
    for t in range(1, min(n_rounds, t_full) + 1):
        g = np.minimum(n_q, 2.0 ** t)
        visits += float(n_q @ g)
        blocks += float(g @ g) * t
    if n_rounds > t_full:
        rest = n_rounds - t_full
        visits += float(n_q @ n_q) * rest
        blocks += float(n_q @ n_q) * (t_full + 1 + n_rounds) * rest / 2.0
    return visits / n_rounds, blocks / n_rounds


def round_costs(booster: str, *, sizes: NDArray[np.int64], n_pairs: int, n_levels: int, n_features: int,
                n_rounds: int) -> dict[str, float]:
    """Estimated nanoseconds per round of each path (``{"pairs": ..., "levels": ...}``) for
    ``booster`` (``"rb"``: Rb-d/Rb-c, ``"rb_e2"``: with the ``E2`` record, ``"rankboost+"``,
    ``"mpboost"``), averaged over ``n_rounds``."""
    n = float(sizes.sum())
    P, F, L = float(n_pairs), float(n_features), float(n_levels)
    if booster in ("rb", "rb_e2"):
        cost = {"pairs": NS["rb_pairs_pair"] * P, "levels": NS["rb_levels_doc"] * n * L}
        if booster == "rb_e2":
            cost["pairs"] += NS["rb_e2_pairs_pair"] * P
            cost["levels"] += NS["rb_e2_levels_doc"] * n * L + NS["rb_e2_levels_entry"] * P
        return cost
    if booster == "rankboost+":
        visits, blocks = _rbplus_groups(sizes, max(int(n_rounds), 1))
        return {"pairs": NS["plus_pairs_visit"] * P * F + NS["plus_pairs_pair"] * P,
                "levels": NS["plus_levels_visit"] * F * (visits + n * L) + NS["plus_levels_block"] * blocks}
    if booster == "mpboost":
        return {"pairs": NS["mp_pairs_visit"] * P * F, "levels": NS["mp_levels_visit"] * F * n * L * L}
    raise ValueError(f"unknown booster {booster!r}; expected 'rb', 'rb_e2', 'rankboost+' or 'mpboost'")


def fixed_pairwise(pairwise: str, data: FitData) -> str | None:
    """A booster's ``pairwise`` setting for a fit on ``data``, checked: ``"levels"`` or ``"pairs"`` as set
    (``"levels"`` refused for explicit pairs), ``None`` for ``"auto"`` (then :func:`choose_pairwise`)."""
    check_choice("pairwise", pairwise, PAIRWISE)
    if data.pairs is not None and pairwise == "levels":
        raise ValueError("pairwise='levels' is not available: explicit pairs were given to fit; "
                         "use pairwise='auto' or 'pairs'")
    return None if pairwise == "auto" else pairwise


def choose_pairwise(booster: str, data: FitData, n_rounds: int, bytes_per_pair: int) -> str:
    """``"levels"`` or ``"pairs"`` for a fit of ``booster`` (see :func:`round_costs`) on ``data``
    with ``n_rounds`` rounds: the rule of ``pairwise="auto"`` (module docstring).
    ``bytes_per_pair``: what the booster's pair path allocates per pair."""
    if data.pairs is not None:
        return "pairs"
    n_pairs = int(count_critical_pairs(data.y, data.group_ptr).sum())
    if n_pairs * bytes_per_pair > pairs_mod.pair_memory_limit():
        return "levels"
    cost = round_costs(booster, sizes=np.diff(data.group_ptr), n_pairs=n_pairs, n_levels=int(np.unique(data.y).size),
                       n_features=data.X.shape[1], n_rounds=n_rounds)
    return "pairs" if cost["pairs"] * n_rounds < QUICK_FIT_NS or cost["pairs"] <= cost["levels"] else "levels"
