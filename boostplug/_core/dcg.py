"""Gains, discounts, DCG and ideal DCG: the one computation behind the NDCG metrics, the
NDCG_Boost objective and the boosters that use its ideal DCGs.

* :func:`gains_of`: ``exp2`` 2^r - 1, ``linear`` r, or a ``label_gain`` table indexed by label;
* :func:`discounts`: ``log2`` 1/log2(rank + 1), ``letor`` 1 for ranks 1-2 then 1/log2(rank);
* :func:`cutoff`, :func:`dcg_at`, :func:`ideal_dcg_at`: numba helpers for kernels that rank
  one query at a time (``k <= 0`` or ``k > n``: the whole list);
* :func:`ideal_dcg`: the ideal DCG@k of every query; :func:`delta_ndcg`: |Delta NDCG| of a swap.
"""

from __future__ import annotations

import math
from typing import Union

import numba as nb
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import plain
from . import dispatch
from .sorting import stable_argsort_descending

__all__ = ["GainSpec", "GAINS", "DISCOUNTS", "RANK_DOC_WORK", "gains_of", "check_label_gain", "discounts",
           "inverse_ideal_dcgs", "max_query_size", "delta_ndcg", "delta_ndcg_by_swap", "position_discounts", "cutoff",
           "dcg_at", "ideal_dcg_at", "ideal_dcg"]

GainSpec = Union[str, ArrayLike]
GAINS = ("exp2", "linear")
DISCOUNTS = ("log2", "letor")

#: Dispatch work (:mod:`.dispatch`) of ranking one document of a query (sort, gather, sum):
#: ranking kernels go parallel from 20,000 documents, below which starting the thread pool
#: costs more than a call (docs/results/metrics_bench/README.md).
RANK_DOC_WORK = 250


def gains_of(labels: NDArray[np.float64], gain: GainSpec, who: str = "") -> NDArray[np.float64]:
    """Per-document gains: ``exp2`` 2^r - 1, ``linear`` r, or ``label_gain[r]``.

    Raises ``ValueError`` for an unknown gain name, a gain that overflows, or, with a
    ``label_gain`` array (see :func:`check_label_gain`), a label that is not an integer
    index into it; ``who`` (an objective's name) starts the message.
    """
    at = f"{who}: " if who else ""
    if isinstance(gain, str):
        if gain == "exp2":
            with np.errstate(over="ignore"):
                g = np.exp2(labels) - 1.0  # exact for integer labels
            bad = ~np.isfinite(g)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"{at}the gain 2^r - 1 of label {float(labels[i])!r} (row {i}) overflows float64; "
                    "labels must be below 1024, or pass a label_gain table"
                )
            return g
        if gain == "linear":
            return labels.copy()
        raise ValueError(
            f"{at}gain must be one of {', '.join(repr(x) for x in GAINS)} or a label_gain array; got {gain!r}"
        )
    lg = check_label_gain(gain)
    bad = (labels != np.floor(labels)) | (labels >= lg.shape[0])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{at}with label_gain of length {lg.shape[0]} labels must be integers in 0..{lg.shape[0] - 1}; "
            f"row {i} has label {float(labels[i])!r}"
        )
    return lg[labels.astype(np.int64)]


def check_label_gain(label_gain: ArrayLike) -> NDArray[np.float64]:
    """A gain table indexed by label (LightGBM's ``label_gain``) as float64: 1-D, non-empty,
    numeric (else ``TypeError``), finite and non-negative (a negative gain makes NDCG leave
    [0, 1])."""
    if isinstance(label_gain, (str, bytes)) or np.ndim(label_gain) != 1:
        raise ValueError(f"label_gain must be a 1-D sequence of gains indexed by label; got {plain(label_gain)!r}")
    arr = np.asarray(label_gain)
    if arr.shape[0] == 0:
        raise ValueError("label_gain must not be empty")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"label_gain must be numeric; got dtype {arr.dtype}")
    lg = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(lg) | (lg < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"label_gain must be finite and >= 0; label_gain[{i}] = {lg[i]:g}")
    return lg


def discounts(discount: str, n: int) -> NDArray[np.float64]:
    """Discount of ranks 1..n: ``log2`` 1/log2(rank + 1); ``letor`` 1 for ranks 1-2, then 1/log2(rank)."""
    if not isinstance(discount, str) or discount not in DISCOUNTS:
        raise ValueError(f"discount must be one of {', '.join(repr(x) for x in DISCOUNTS)}; got {plain(discount)!r}")
    rank = np.arange(1, max(n, 1) + 1, dtype=np.float64)
    if discount == "log2":
        return 1.0 / np.log2(rank + 1.0)
    d = np.ones_like(rank)
    d[2:] = 1.0 / np.log2(rank[2:])
    return d


def max_query_size(group_ptr: NDArray[np.int64]) -> int:
    """The most documents of any query (0 without queries): the length of the discount table."""
    return int(np.diff(group_ptr).max()) if group_ptr.shape[0] > 1 else 0


def position_discounts(group_ptr: NDArray[np.int64]) -> NDArray[np.float64]:
    """``1 / log2(2 + i)`` for the positions ``i`` from 0 of the longest query, with the C library's
    ``log2`` (``math.log2``, as LightGBM and XGBoost compute it; numpy's may differ in the last bit)."""
    return np.array([1.0 / math.log2(2.0 + i) for i in range(max_query_size(group_ptr))])


@nb.njit(cache=True, inline="always")
def cutoff(k: int, n: int) -> int:
    """How many ranks of an ``n``-document query count at ``k`` (``k <= 0``: all)."""
    return n if (k <= 0 or k > n) else k


@nb.njit(cache=True, inline="always")
def dcg_at(ranked_gains: np.ndarray, discount: np.ndarray, kk: int) -> float:
    """``sum_{i < kk} ranked_gains[i] * discount[i]`` (gains in ranked order)."""
    d = 0.0
    for i in range(kk):
        d += ranked_gains[i] * discount[i]
    return d


@nb.njit(cache=True, inline="always")
def ideal_dcg_at(gains: np.ndarray, discount: np.ndarray, kk: int) -> float:
    """The DCG of the top ``kk`` of one query's ``gains`` (finite) sorted in decreasing order."""
    return dcg_at(gains[stable_argsort_descending(gains)[:kk]], discount, kk)


@nb.njit(cache=True, parallel=True)
def _ideal_dcg_queries(gains: np.ndarray, group_ptr: np.ndarray, discount: np.ndarray, k: int,
                       out: np.ndarray) -> None:
    for q in nb.prange(group_ptr.shape[0] - 1):
        a, b = group_ptr[q], group_ptr[q + 1]
        out[q] = ideal_dcg_at(gains[a:b], discount, cutoff(k, b - a))


def ideal_dcg(gains: NDArray[np.float64], group_ptr: NDArray[np.int64], discount: str = "log2",
              k: int | None = None) -> NDArray[np.float64]:
    """Ideal DCG@k of every query (``k`` None: the whole list), shape ``(n_queries,)``.

    ``gains``: per-document gains (:func:`gains_of`), contiguous float64; ``group_ptr``: a
    valid int64 query offset array (the public API checks both).
    """
    out = np.zeros(group_ptr.shape[0] - 1)
    d = discounts(discount, max_query_size(group_ptr))
    run = dispatch.kernel_for(_ideal_dcg_queries, gains.shape[0] * RANK_DOC_WORK)
    run(gains, group_ptr, d, 0 if k is None else int(k), out)
    return out


def inverse_ideal_dcgs(gains: NDArray[np.float64], group_ptr: NDArray[np.int64], discounts: NDArray[np.float64],
                       top_k: int | None = None, order_by: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Each query's ``1 / ideal DCG`` at ``top_k`` (``None``: the whole list; 0 where it is 0): its
    gains in decreasing order of ``order_by`` (``None``: the gains; LightGBM's ``CalMaxDCGAtK``: the
    labels, whose ``label_gain`` need not grow with them), summed by position as LightGBM sums them."""
    key, out = (gains if order_by is None else order_by), np.zeros(group_ptr.shape[0] - 1)
    for q, (a, b) in enumerate(zip(group_ptr[:-1], group_ptr[1:])):
        total = 0.0
        for r, g in enumerate(gains[a + np.argsort(-key[a:b], kind="stable")[:top_k]]):
            total += float(discounts[r]) * float(g)
        out[q] = 1.0 / total if total > 0.0 else 0.0
    return out


@nb.njit(cache=True, inline="always")
def delta_ndcg(g_high: float, g_low: float, d_high: float, d_low: float, inv_max_dcg: float) -> float:
    """|Delta NDCG| of two documents' swap, LightGBM's form: ``(G_high - G_low) |D_high - D_low| / Z`` (the
    gain gap keeps its sign: a ``label_gain`` may fall; a discount is 0 past a truncation; ``1 / Z`` 1: DCG)."""
    return (g_high - g_low) * abs(d_high - d_low) * inv_max_dcg


@nb.njit(cache=True, inline="always")
def delta_ndcg_by_swap(g_high: float, g_low: float, d_high: float, d_low: float, inv_max_dcg: float) -> float:
    """The same, XGBoost's form (``DeltaNDCG``, for its bits): the two places' DCG before the swap minus after."""
    return ((g_high * d_high + g_low * d_low) - (g_low * d_high + g_high * d_low)) * inv_max_dcg
