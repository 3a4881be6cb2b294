"""The kernels of the softmax cross-entropy losses (ListNet's top-one loss, XE-NDCG): one pass per
query over its documents, and the random generator of LightGBM's ``rank_xendcg``.

Per query ``q`` (weight ``W``) with scores ``s`` and non-negative targets ``phi`` (the objective's:
``exp(label)``, gains, ``2^label - gamma``)::

    rho_i = exp(s_i - max s) / sum_j exp(s_j - max s)        the softmax of the scores
    p_i   = phi_i / max(EPSILON, sum_j phi_j)                  the target distribution
    loss  = -W sum_i p_i log rho_i
    grad  = W (rho_i - p_i),   hess = W rho_i (1 - rho_i)      (the Hessian's exact diagonal)

A query of one document, of weight 0 or whose targets sum to 0 contributes nothing. With ``lightgbm`` the
gradient is LightGBM's ``RankXENDCG`` lambdas instead: ``rho_i - p_i`` plus its second- and
third-order terms (``rho_i sum_{j != i} t_j / (1 - rho_j)``, twice), each term rounded to float32
and summed in float32 in LightGBM's order, the Hessian rounded to float32 too.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["EPSILON", "softmax_ce", "lcg_draws"]

#: LightGBM's ``kEpsilon`` (``1e-15f``, a float32): the smallest denominator of the targets' sum.
EPSILON = float(np.float32(1e-15))

_MASK32 = 0xFFFFFFFF


@nb.njit(cache=True, parallel=True, error_model="numpy")
def softmax_ce(scores: np.ndarray, group_ptr: np.ndarray, phi: np.ndarray, query_weights: np.ndarray,
               lightgbm: bool, want_loss: bool, grad: np.ndarray, hess: np.ndarray, loss: np.ndarray) -> None:
    """The loss of each query into ``loss`` (``want_loss``), else the gradient and Hessian of each
    document into ``grad`` and ``hess`` (zeros on entry); the module docstring says what they are."""
    for q in nb.prange(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        n = b - a
        w = query_weights[q]
        if n <= 1 or w == 0.0:  # a query of weight 0 adds nothing (not 0 * inf at extreme scores)
            continue
        total = 0.0
        for i in range(a, b):
            total += phi[i]
        if not total > 0.0:
            continue
        inv = 1.0 / max(EPSILON, total)
        # Common::Softmax: the largest score first, then the exponentials and their sum in order
        top = scores[a]
        for i in range(a + 1, b):
            top = max(scores[i], top)
        rho = np.empty(n)
        norm = 0.0
        for k in range(n):
            rho[k] = math.exp(scores[a + k] - top)
            norm += rho[k]
        if want_loss:
            log_norm = math.log(norm)
            value = 0.0
            for k in range(n):
                if phi[a + k] != 0.0:
                    value -= phi[a + k] * inv * ((scores[a + k] - top) - log_norm)
            loss[q] = w * value
            continue
        for k in range(n):
            rho[k] /= norm
        if not lightgbm:
            for k in range(n):
                grad[a + k] = w * (rho[k] - phi[a + k] * inv)
                hess[a + k] = w * (rho[k] * (1.0 - rho[k]))
            continue
        # RankXENDCG::GetGradientsForOneQuery, term by term; where rho = 1 (one document holds the
        # whole softmax) its t / (1 - rho) is t / 0: that term is left out instead of handing on inf
        lam = np.empty(n, dtype=np.float32)
        terms = np.empty(n)
        first = 0.0
        for k in range(n):
            t = -phi[a + k] * inv + rho[k]
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
            grad[a + k] = float(lam[k]) * w
            hess[a + k] = float(np.float32(rho[k] * (1.0 - rho[k]))) * w


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
