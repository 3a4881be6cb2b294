"""Preferences over sessions: counts per (query, preferred, other), contradictions resolved by
their net count, a minimum support, and a confidence weight.

For one query and two documents ``a``, ``b``, let ``n_ab`` be the number of impressions
whose extracted preferences hold ``a > b`` (each impression counts a pair once). The table
keeps the direction with the larger count, when its **net count** ``n_ab - n_ba`` reaches
``min_support``; an even split yields no pair. Weights (``weight=``, :data:`WEIGHTS`):

* ``"unit"``: 1 per pair;
* ``"count"``: ``n_ab``;
* ``"net"`` (default): ``n_ab - n_ba``;
* ``"wilson"``: a lower confidence bound of the net preference ``2 p - 1``, with
  ``p = n_ab / (n_ab + n_ba)`` bounded below by the Wilson score interval at one-sided level
  ``confidence``: ``2 L - 1`` with
  ``L = (p + z^2/2n - z sqrt(p (1 - p)/n + z^2/4n^2)) / (1 + z^2/n)``, ``n = n_ab + n_ba``,
  ``z`` the normal quantile of ``confidence``. Pairs whose bound is not above 0 (not
  preferred with that confidence: with ``confidence=0.95``, ``z^2 = 2.7`` and a pair needs at
  least 3 unanimous impressions) are left out. ``confidence=0.5`` gives ``z = 0``, the observed net fraction.

Example:
    >>> import numpy as np
    >>> from boostplug.clicks.aggregate import wilson_net
    >>> round(float(wilson_net(np.array([10]), np.array([0]), 0.95)[0]), 4)
    0.5741
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_real, show
from ..keyed_pairs import KeyedPairs
from .log import Dropped, Table

__all__ = ["WEIGHTS", "Preferences", "PairCounts", "Encoder", "wilson_net"]

WEIGHTS = ("unit", "count", "net", "wilson")

_LOW = np.int64(0xFFFFFFFF)
#: Distinct (query, document) keys the packed pair keys can hold (two per int64).
MAX_KEYS = 1 << 31


class Encoder:
    """Dense int64 codes for values (ints, strings, ...) seen over several batches: a value keeps
    the code it got first. ``values[code]`` decodes."""

    def __init__(self) -> None:
        self.values: np.ndarray | None = None
        self._sorted: np.ndarray | None = None  # the values in sorted order ...
        self._codes = np.zeros(0, dtype=np.int64)  # ... and their codes

    def __len__(self) -> int:
        return 0 if self.values is None else int(self.values.shape[0])

    def encode(self, x: np.ndarray) -> NDArray[np.int64]:
        """The code of every element of ``x`` (new values get the next codes)."""
        u, inv = np.unique(x, return_inverse=True)
        inv = inv.reshape(-1)
        if self.values is None or self._sorted is None:
            self.values = self._sorted = u
            self._codes = np.arange(u.shape[0], dtype=np.int64)
            return inv.astype(np.int64)
        pos = np.searchsorted(self._sorted, u)
        pos_c = np.minimum(pos, self._sorted.shape[0] - 1)
        found = self._sorted[pos_c] == u
        code_u = np.empty(u.shape[0], dtype=np.int64)
        code_u[found] = self._codes[pos_c[found]]
        if not found.all():
            new = u[~found]
            new_codes = len(self) + np.arange(new.shape[0], dtype=np.int64)
            code_u[~found] = new_codes
            self.values = np.concatenate((self.values, new))
            # merge the sorted new values into the sorted view: linear, not a new sort
            at = pos[~found]
            self._sorted = np.insert(self._sorted, at, new)
            self._codes = np.insert(self._codes, at, new_codes)
        return code_u[inv]


class PairCounts:
    """Counts per packed pair key (``qd_preferred << 32 | qd_other``), added batch by batch.
    Runs of sorted unique keys merge when a newer run grows to half an older one's size, so
    memory stays within a few times the distinct keys and each key is merged O(log) times."""

    def __init__(self) -> None:
        self._runs: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []

    def add(self, keys: NDArray[np.int64], counts: NDArray[np.int64] | NDArray[np.float64] | None = None) -> None:
        """Add one count per key (or ``counts``: whole, or inverse-propensity weights)."""
        if not keys.size:
            return
        self._runs.append(_reduce(keys, counts))
        while len(self._runs) > 1 and 2 * self._runs[-1][0].size >= self._runs[-2][0].size:
            b = self._runs.pop()
            a = self._runs.pop()
            self._runs.append(_reduce(np.concatenate((a[0], b[0])), np.concatenate((a[1], b[1]))))

    def total(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Sorted unique keys and their counts."""
        if not self._runs:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        keys = np.concatenate([r[0] for r in self._runs])
        counts = np.concatenate([r[1] for r in self._runs])
        self._runs = [_reduce(keys, counts)]
        return self._runs[0]


def _reduce(keys: NDArray[np.int64], counts: NDArray[np.int64] | None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Sorted unique keys with their summed counts."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.concatenate(([0], np.flatnonzero(k[1:] != k[:-1]) + 1))
    c = (np.diff(np.append(starts, k.shape[0])).astype(np.int64) if counts is None
         else np.add.reduceat(counts[order], starts))
    return k[starts], c


def wilson_net(count: NDArray[np.int64], against: NDArray[np.int64], confidence: float) -> NDArray[np.float64]:
    """Lower bound of the net preference ``2 p - 1`` (module docstring), at one-sided level
    ``confidence``, for ``count`` impressions for and ``against`` impressions against."""
    z = NormalDist().inv_cdf(confidence)
    n = (count + against).astype(np.float64)
    p = count / n
    z2 = z * z
    low = (p + z2 / (2 * n) - z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))) / (1 + z2 / n)
    return 2.0 * low - 1.0


def check_weight(weight: object, confidence: object) -> tuple[str, float]:
    """``weight`` one of :data:`WEIGHTS`, ``confidence`` in [0.5, 1)."""
    w = check_choice("weight", weight, WEIGHTS)
    c = check_real("confidence", confidence, 0.5, 1.0, lo_open=False)
    if c >= 1.0:
        raise ValueError(f"confidence must be below 1 (a bound at level 1 is infinite), got {show(confidence)}")
    return w, c


@dataclass(eq=False)
class Preferences(Table):
    """Click preferences aggregated over sessions: one row per (query, preferred, other).

    Rows are sorted by query, preferred document and other document. Columns (numpy arrays):

    * ``query``: query id; ``preferred``, ``other``: document keys, as in the log;
    * ``count``: impressions whose preferences hold ``preferred > other``;
    * ``against``: impressions that held the opposite (``count - against >= min_support``);
      both float64 sums of inverse propensities with ``preferences(..., propensity=...)``;
    * ``weight``: float64 (``boostplug.clicks.aggregate``).

    Also: ``strategies`` (the names used), ``weighting`` (the ``weight=`` option),
    ``n_impressions`` (impressions read) and ``dropped`` (what ``on_bad="skip"`` left out).
    """

    query: np.ndarray
    preferred: np.ndarray
    other: np.ndarray
    count: NDArray[np.int64]
    against: NDArray[np.int64]
    weight: NDArray[np.float64]
    strategies: tuple[str, ...] = ()
    weighting: str = "net"
    n_impressions: int = 0
    dropped: Dropped = field(default_factory=Dropped)

    def __len__(self) -> int:
        return int(self.count.shape[0])

    def __repr__(self) -> str:
        return (f"Preferences(n_pairs={len(self)}, n_queries={np.unique(self.query).size if len(self) else 0}, "
                f"strategies={list(self.strategies)}, weight={self.weighting!r}, n_impressions={self.n_impressions})")

    def columns(self) -> dict[str, np.ndarray]:
        """The columns by name."""
        return {c: getattr(self, c) for c in ("query", "preferred", "other", "count", "against", "weight")}

    def keyed(self) -> KeyedPairs:
        """The pairs as a :class:`~boostplug.keyed_pairs.KeyedPairs` table (``query``, ``better`` =
        ``preferred``, ``worse`` = ``other``, ``weight``): what QBRank's ``pairs=`` and the boosters'
        ``fit(pairs=...)`` take to train on any subset of whole queries (cross-validation folds,
        ``GridSearchCV``), each training set keyed by its rows' ``qid`` and ``doc``."""
        return KeyedPairs(self.query, self.preferred, self.other, self.weight)

def resolve(keys: NDArray[np.int64], counts: NDArray[np.int64], *, min_support: int, weight: str,
            confidence: float) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64],
                                        NDArray[np.int64]]:
    """``(count, against, weight, preferred key, other key)`` of the kept pairs, from the summed
    counts per directed pair key (sorted, unique): net-count resolution, minimum support, weights."""
    pref = keys >> 32
    other = keys & _LOW
    reverse = (other << 32) | pref
    pos_c = np.minimum(np.searchsorted(keys, reverse), keys.shape[0] - 1)  # no key: -1 indexes nothing
    against = np.where(keys[pos_c] == reverse, counts[pos_c], 0)
    keep = counts - against >= min_support
    count, against, pref, other = counts[keep], against[keep], pref[keep], other[keep]
    if weight == "unit":
        w = np.ones(count.shape[0])
    elif weight == "count":
        w = count.astype(np.float64)
    elif weight == "net":
        w = (count - against).astype(np.float64)
    else:
        w = wilson_net(count, against, confidence)
        ok = w > 0.0
        count, against, pref, other, w = count[ok], against[ok], pref[ok], other[ok], w[ok]
    return count, against, w, pref, other
