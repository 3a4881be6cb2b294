"""Compiled per-impression loops of the click package: validating impressions and listing the
preference pairs of Joachims et al.'s strategies.

Rows arrive sorted by impression, then by shown position; ``ptr`` holds the impression
offsets (like ``group_ptr``). Both loops touch each impression once, so a log is processed
in one pass whatever its size; listing an impression's pairs costs its length plus the pairs
(never clicks times length: a long impression with few pairs each click is fast).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .strategies import EARLIER_CLICK, LAST_SKIP_ABOVE, NO_CLICK_NEXT, SKIP_ABOVE, SKIP_PREVIOUS

# Why an impression is refused, in the order the checks run (boostplug.clicks.log words them).
OK = 0
MISSING_DOC = 1
BAD_POSITIONS = 2
SHOWN_TWICE = 3
NON_BINARY_CLICK = 4
NO_ORDER = 5
BAD_DWELL = 6


@nb.njit(cache=True)
def check_impressions(ptr: np.ndarray, position: np.ndarray, doc: np.ndarray, doc_null: np.ndarray,
                      clicked: np.ndarray, order: np.ndarray, dwell: np.ndarray, reason: np.ndarray,
                      where: np.ndarray) -> None:
    """``reason[i]`` (one of the codes above) and ``where[i]`` (the offending row) of impression i.

    ``position``, ``clicked``, ``order`` and ``dwell`` are float64 (NaN for a missing value);
    ``order`` / ``dwell`` are empty when the log has no such column."""
    for i in range(ptr.shape[0] - 1):
        reason[i], where[i] = _impression_problem(ptr[i], ptr[i + 1], position, doc, doc_null, clicked, order, dwell)


@nb.njit(cache=True)
def _impression_problem(a: int, b: int, position: np.ndarray, doc: np.ndarray, doc_null: np.ndarray,
                        clicked: np.ndarray, order: np.ndarray, dwell: np.ndarray) -> tuple[int, int]:
    """``(reason, row)`` of the impression of rows ``a:b``: the first check it fails, ``(OK, a)`` if none."""
    for k in range(a, b):
        if doc_null[k]:
            return MISSING_DOC, k
    for k in range(a, b):
        if not position[k] == k - a + 1:  # NaN fails too
            for m in range(k, b):  # a missing position sorts last: its row, not the one before it
                if position[m] != position[m]:
                    return BAD_POSITIONS, m
            return BAD_POSITIONS, k
    if b - a > 1:
        rank = np.argsort(doc[a:b], kind="mergesort")
        for k in range(1, b - a):
            if doc[a + rank[k]] == doc[a + rank[k - 1]]:
                return SHOWN_TWICE, a + max(rank[k], rank[k - 1])
    for k in range(a, b):
        if not (clicked[k] == 0.0 or clicked[k] == 1.0):
            return NON_BINARY_CLICK, k
    if order.shape[0] > 0:
        for k in range(a, b):
            if clicked[k] == 1.0 and not np.isfinite(order[k]):
                return NO_ORDER, k
    if dwell.shape[0] > 0:
        for k in range(a, b):
            if clicked[k] == 1.0 and not (np.isfinite(dwell[k]) and dwell[k] >= 0.0):
                return BAD_DWELL, k
    return OK, a


@nb.njit(cache=True, inline="always")
def _later(order: np.ndarray, i: int, j: int) -> bool:
    """Row ``i`` was clicked after row ``j``: by time/order, ties broken by position (rows are
    in position order within an impression)."""
    if order[i] != order[j]:
        return order[i] > order[j]
    return i > j


@nb.njit(cache=True)
def _impression_pairs(a: int, b: int, clicked: np.ndarray, order: np.ndarray, mask: int,
                      out_pref: np.ndarray, out_other: np.ndarray, at: int, write: bool,
                      clicks: np.ndarray, skips: np.ndarray) -> int:
    """The preference pairs of one impression (rows ``a:b``, in position order), each ordered
    pair at most once however many strategies yield it. Writes them from ``out[at]`` when
    ``write``; returns their number. ``clicks`` and ``skips`` are scratch of at least ``b - a``
    entries. The work is the impression's length plus the pairs it lists (with
    ``click>earlier-click``, the clicks squared: twice its pairs)."""
    n_clicks = 0
    last = -1
    for k in range(a, b):
        if clicked[k]:
            clicks[n_clicks] = k
            n_clicks += 1
            if (mask & LAST_SKIP_ABOVE) != 0 and (last < 0 or _later(order, k, last)):
                last = k
    n = 0
    n_skips = 0  # skips[:n_skips] are the unclicked rows above row i
    for i in range(a, b):
        if not clicked[i]:
            skips[n_skips] = i
            n_skips += 1
            continue
        # unclicked rows above i: all of them (skip-above), or the one just above (skip-previous)
        if (mask & SKIP_ABOVE) != 0 or ((mask & LAST_SKIP_ABOVE) != 0 and i == last):
            if write:
                for s in range(n_skips):
                    out_pref[at + n + s] = i
                    out_other[at + n + s] = skips[s]
            n += n_skips
        elif (mask & SKIP_PREVIOUS) != 0 and i > a and not clicked[i - 1]:
            if write:
                out_pref[at + n] = i
                out_other[at + n] = i - 1
            n += 1
        if (mask & NO_CLICK_NEXT) != 0 and i + 1 < b and not clicked[i + 1]:
            if write:
                out_pref[at + n] = i
                out_other[at + n] = i + 1
            n += 1
        if (mask & EARLIER_CLICK) != 0:
            for c in range(n_clicks):
                j = clicks[c]
                if j != i and _later(order, i, j):
                    if write:
                        out_pref[at + n] = i
                        out_other[at + n] = j
                    n += 1
    return n


@nb.njit(cache=True)
def impression_pairs(ptr: np.ndarray, clicked: np.ndarray, order: np.ndarray, mask: int, offsets: np.ndarray,
                     out_pref: np.ndarray, out_other: np.ndarray, counts: np.ndarray) -> None:
    """Every impression's (``ptr`` offsets) preference pairs: with ``out_pref`` empty, their number
    into ``counts`` (one pass over the rows, the pairs not listed), else their rows (preferred,
    other), impression ``i``'s from ``offsets[i]``. One kernel for both: one compile of the
    impression's loop, not one per use."""
    write = out_pref.shape[0] > 0
    m = 0  # the longest impression (a loop: np.diff and max compile some 40 functions more)
    for i in range(ptr.shape[0] - 1):
        m = max(m, ptr[i + 1] - ptr[i])
    clicks, skips = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    for i in range(ptr.shape[0] - 1):
        n = _impression_pairs(ptr[i], ptr[i + 1], clicked, order, mask, out_pref, out_other,
                              offsets[i] if write else 0, write, clicks, skips)
        if not write:
            counts[i] = n
