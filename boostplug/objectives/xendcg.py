"""LightGBM's ``rank_xendcg``, reproduced: the same trees through the plugin path as the built-in.

XE-NDCG (Bruch, "An Alternative Cross Entropy Loss for Learning-to-Rank", WWW 2021) is the
softmax cross-entropy (:mod:`.softmax_ce`) against targets ``phi_i = 2^y_i - gamma_i`` with a
fresh ``gamma_i ~ U[0, 1)`` per document every round. LightGBM's ``RankXENDCG``
(src/objective/rank_objective.hpp), operation for operation:

* the gammas: query ``q``'s own generator (utils/random.h, ``Random(objective_seed + q)``: the
  linear congruential ``x = 214013 x + 2531011 mod 2^32``, ``gamma = ((x >> 16) & 0x7FFF) /
  32768``) draws one per document, in order, every round; queries of one document draw none;
* the gradient is not the loss's ``rho_i - p_i`` but LightGBM's lambdas: that term plus
  ``rho_i sum_{j != i} t_j / (1 - rho_j)`` twice (the first two terms of a Neumann series of the
  inverse Hessian: the Hessian's diagonal times an approximate Newton step, gradient kind
  ``"newton"``), each term rounded to float32 and summed in float32; the Hessian is
  ``rho_i (1 - rho_i)`` in float32; both then times the query's weight;
* no Hessian floor (``hessian_floor=False``).

Where LightGBM divides by ``1 - rho_j = 0`` (one document holds the whole softmax in float64,
score gaps beyond about 37) it computes inf or NaN; the plugin leaves that term out instead.

The random state lives in the instance bound to one data set (the adapters bind one per
training set, so each ``lgb.cv`` fold draws its own, as LightGBM's per-fold objectives do):
each ``grad_hess`` call is one round (the rounds :class:`~._rounds.RandomRounds` counts) and
advances every query's generator; ``loss`` uses the gammas of the last round (before any round,
the first round's).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .._validation import INT32_MAX
from ._contract import Hessian, Param
from ._rounds import RandomRounds
from .softmax_ce import EPSILON, SoftmaxCrossEntropy, _targets_sum, softmax

__all__ = ["XENDCG", "LIGHTGBM_OBJECTIVE_SEED", "MAX_LABEL", "objective_seed_from_seed"]

#: LightGBM's default ``objective_seed``.
LIGHTGBM_OBJECTIVE_SEED = 5

#: The largest label: LightGBM computes ``2^label`` in a 32-bit int (``Common::Pow(2, int(label))``).
MAX_LABEL = 30

_INT32_MIN = -INT32_MAX - 1


def objective_seed_from_seed(seed: int) -> int:
    """The ``objective_seed`` LightGBM derives from its ``seed`` parameter when ``objective_seed``
    is not given (``Config::Set``: the fifth ``NextShort(0, 32767)`` of ``Random(seed)``)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or not _INT32_MIN <= seed <= INT32_MAX:
        raise ValueError(f"seed must be a 32-bit integer, got {seed!r}")
    x = int(seed) & 0xFFFFFFFF
    value = 0
    for _ in range(5):
        x = (214013 * x + 2531011) & 0xFFFFFFFF
        value = ((x >> 16) & 0x7FFF) % 32767
    return value


_MASK32 = 0xFFFFFFFF


@nb.njit(cache=True)
def lcg_draws(states: np.ndarray, group_ptr: np.ndarray, out: np.ndarray) -> None:
    """One round of LightGBM's ``Random::NextFloat`` for each document of a query of two or more
    documents (each query its own generator, ``states[q]``, advanced in place), into ``out``:
    ``x = 214013 x + 2531011 (mod 2^32)``, then ``((x >> 16) & 0x7FFF) / 32768``; 0 for the others."""
    for q in range(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        if b - a <= 1:
            for i in range(a, b):
                out[i] = 0.0
            continue
        x = states[q]
        for i in range(a, b):
            x = (np.uint64(214013) * x + np.uint64(2531011)) & np.uint64(_MASK32)
            out[i] = float((x >> np.uint64(16)) & np.uint64(0x7FFF)) / 32768.0
        states[q] = x


@nb.njit(error_model="numpy")
def _lightgbm_lambdas(s, doc, query, grad, hess):  # type: ignore[no-untyped-def]
    """LightGBM's ``RankXENDCG::GetGradientsForOneQuery``, term by term; where rho = 1 (one document
    holds the whole softmax) its t / (1 - rho) is t / 0: that term is left out instead of inf."""
    n = s.shape[0]
    total = _targets_sum(doc)
    if not total > 0.0:
        return
    inv = 1.0 / max(EPSILON, total)
    rho, _, norm = softmax(s)
    for k in range(n):
        rho[k] /= norm
    lam = np.empty(n, dtype=np.float32)
    terms = np.empty(n)
    first = 0.0
    for k in range(n):
        t = -doc[k, 0] * inv + rho[k]
        lam[k] = np.float32(t)
        terms[k] = t / (1.0 - rho[k]) if rho[k] < 1.0 else 0.0
        first += terms[k]
    second = 0.0
    for k in range(n):
        t = rho[k] * (first - terms[k])
        lam[k] = np.float32(lam[k] + np.float32(t))
        terms[k] = t / (1.0 - rho[k]) if rho[k] < 1.0 else 0.0
        second += terms[k]
    for k in range(n):
        lam[k] = np.float32(lam[k] + np.float32(rho[k] * (second - terms[k])))
        grad[k] = float(lam[k])
        hess[k] = float(np.float32(rho[k] * (1.0 - rho[k])))


class XENDCG(RandomRounds, SoftmaxCrossEntropy):
    """LightGBM's ``rank_xendcg`` through the plugin path: its trees, bit for bit (module docstring).

    Labels must be integers in 0..30 (LightGBM's ``2^label`` in a 32-bit int): others are a
    ``ValueError`` naming the row and the label.
    """

    name = "xendcg"
    summary = "LightGBM's rank_xendcg (XE-NDCG, Bruch et al. 2021), reproduced (on LightGBM: the built-in's trees)"
    params = {
        "objective_seed": Param(LIGHTGBM_OBJECTIVE_SEED, "int", "seed of the gammas (LightGBM's objective_seed: "
                                "query q draws from Random(objective_seed + q))", low=_INT32_MIN, high=INT32_MAX),
    }
    hessians = {"lightgbm": Hessian(
        "fitting", "LightGBM's rho_i (1 - rho_i), the diagonal of the cross-entropy's Hessian, with the gradient its "
        "lambdas: the gradient plus two Neumann terms of the inverse Hessian (a Newton step times that diagonal)",
        gradient="newton")}
    hessian_floor = False
    list_grad_hess = staticmethod(_lightgbm_lambdas)
    #: What LightGBM's ``rank_xendcg`` reads from the training's parameters, taken from them when not
    #: given to the objective: ``objective_seed``, else the one LightGBM derives from ``seed``.
    framework_params = {"lightgbm": {"objective_seed": "objective_seed", **{
        k: ("objective_seed", objective_seed_from_seed) for k in ("seed", "random_seed", "random_state")}}}

    objective_seed: int

    def setup(self) -> None:
        y = self.labels
        bad = (y != np.floor(y)) | (y > MAX_LABEL)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self.name}: labels must be integers in 0..{MAX_LABEL} (LightGBM's rank_xendcg takes "
                             f"2^label in a 32-bit int); row {i} has label {float(y[i])!r}")
        self._powers = np.exp2(y)
        seeds = (self.objective_seed + np.arange(self.n_queries, dtype=np.int64)) & 0xFFFFFFFF
        self._states = seeds.astype(np.uint64)
        self._gammas = np.empty(self.n_docs)
        self._drawn = -1  # the round whose gammas self._gammas holds
        super().setup()

    def gammas(self) -> NDArray[np.float64]:
        """The gammas of the current round (``current_round``): each round's are drawn once, the
        generators advancing one round at a time."""
        while self._drawn < self.current_round:
            self._gammas = np.empty(self.n_docs)
            lcg_draws(self._states, self.group_ptr, self._gammas)
            self._drawn += 1
        return self._gammas

    def round_targets(self) -> NDArray[np.float64]:
        return self._powers - self.gammas()
