"""What a RankBoost fit keeps between rounds: one state per variant and path (the pair list or
the label levels), so that each round function reads only the fields its variant has."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ._group_e2 import GroupE2
from ._group_pairs import GroupPairs
from ._level_sums import LevelPairs
from ._pair_mins import PairMinCodes
from ._rankboost_kernels import PairSpan, outcomes_eps
from .stumps import StumpCandidates

__all__ = ["State", "PairState", "LevelState", "Search", "RbLevels", "PlusPairs", "PlusLevels",
           "stump_eps"]


@dataclass
class State:
    """What every variant keeps on either path."""

    cands: StumpCandidates
    valid: NDArray[np.bool_]         # (F, width) existing stumps that split at least one pair
    F: NDArray[np.float64]           # (n,) ensemble scores on the training documents
    span: PairSpan | None            # S_t and eta (None: Rb-d/Rb-c without the E2 record)
    n_pairs: int
    log_prod_z: float
    bound_log: float                 # log of the theorem bound


@dataclass
class PairState(State):
    """The pair list: ``D_t`` per pair."""

    pairs: NDArray[np.int64]         # (P, 2), preferred row first
    w: NDArray[np.float64]           # (P,) D_t
    w1: NDArray[np.float64] | None   # (P,) D_1 when fit was given query weights (else uniform)
    ell: NDArray[np.float64]         # (P,) sum_s ln omega*_2(i, f_s, eta_s): E2 = mean exp(ell) (empty without S_t)
    loss_levels: LevelPairs | None   # the label levels, when the history's R1/R2/E1 come from them (else None)


@dataclass
class LevelState(State):
    """Pair-free: ``D_t`` from the scores and the label levels."""

    lv: LevelPairs


@dataclass
class Search:
    """RankBoost+'s candidates: Algorithm 2's set ``R`` and what its one pruning needs."""

    nsplit: NDArray[np.float64]      # (F, width) pairs each stump splits (|D h|^2); 0 for non-stumps
    alive: NDArray[np.bool_]         # (F, width) Algorithm 2's candidate set R
    pruned: bool
    rng: np.random.Generator


@dataclass
class RbLevels(LevelState):
    """Rb-d/Rb-c pair-free."""

    e2: GroupE2 | None               # the E2 record, kept round by round (None without record_e2)


@dataclass
class PlusPairs(PairState):
    """RankBoost+ on the pair list."""

    search: Search
    lower: PairMinCodes              # the pairs' lower codes


@dataclass
class PlusLevels(LevelState):
    """RankBoost+ pair-free."""

    search: Search
    gp: GroupPairs | None            # D_t over pairs of signature groups (None: no pair, no round runs)


def stump_eps(s: State, k: int, j: int) -> tuple[NDArray[np.int8] | None, tuple[float, float, float]]:
    """The outcomes ``o`` of the stump ``[x_k > theta_j]`` on every listed pair (``None`` pair-free)
    and its Eq. 8 ``(eps+, eps0, eps-)`` under ``D_t``, from whichever form of ``D_t`` ``s`` keeps."""
    if isinstance(s, PlusLevels):       # over pairs of signature groups
        return None, s.gp.eps(s.cands.codes[:, k] > j)
    if isinstance(s, LevelState):
        return None, s.lv.eps(s.F, s.cands.codes[:, k] > j)
    return outcomes_eps(s.cands.codes, k, j, s.pairs, s.w)
