"""Metrics by LightGBM-style name ("ndcg@10", "map", "p@5", ...), with the default conventions.

Used by the framework eval hooks, the boosters' early stopping and the compare CLI:
the names and the returned call shape ``fn(scores, labels, group_ptr, per_query=False)``
(or ``fn(scores, labels, qid=..., per_query=False)``) are stable.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import INT64_MAX, plain
from ._ndcg import dcg, ndcg
from ._pairwise import rank_loss
from ._binary import average_precision, err, precision, reciprocal_rank

__all__ = ["MetricFn", "NamedMetric", "parse_name", "by_name", "evaluate", "higher_is_better", "NAMES"]


class MetricFn(Protocol):
    def __call__(self, scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None,
                 per_query: bool = False, *, qid: ArrayLike | None = None) -> float | NDArray[np.float64]: ...


# canonical base -> (accepts @k, needs @k)
_BASES: dict[str, tuple[bool, bool]] = {
    "ndcg": (True, False), "dcg": (True, False), "map": (True, False), "precision": (True, True),
    "mrr": (True, False), "err": (True, False), "r1": (False, False), "r2": (False, False),
}
_ALIASES = {"p": "precision", "pre": "precision", "ap": "map", "rr": "mrr"}
#: Valid name forms, for messages and documentation.
NAMES = ("ndcg", "ndcg@k", "dcg", "dcg@k", "map", "map@k", "precision@k", "p@k", "mrr", "mrr@k",
         "err", "err@k", "r1", "r2")
_PATTERN = re.compile(r"^([a-z0-9]+?)(?:@(\d+))?$", re.ASCII)  # k: ASCII digits only (not ٥)


def _invalid(name: object, why: str = "") -> ValueError:
    extra = f" ({why})" if why else ""
    return ValueError(f"unknown metric name {plain(name)!r}{extra}; valid names: {', '.join(NAMES)} (k an integer >= 1)")


def parse_name(name: str) -> tuple[str, int | None]:
    """``"ndcg@10"`` -> ``("ndcg", 10)``, ``"p@5"`` -> ``("precision", 5)``, ``"map"`` -> ``("map", None)``.

    Case and surrounding spaces are ignored. ``ValueError`` listing the valid names otherwise.
    """
    if not isinstance(name, str):
        raise _invalid(name, "not a string")
    m = _PATTERN.match(name.strip().lower())
    if m is None:
        raise _invalid(name)
    base = _ALIASES.get(m.group(1), m.group(1))
    if base not in _BASES:
        raise _invalid(name)
    digits = m.group(2)
    # the length first: int() refuses more digits than Python's int-from-text limit
    if digits is not None and (len(digits.lstrip("0")) > len(str(INT64_MAX)) or int(digits) > INT64_MAX):
        raise _invalid(name, f"k = {digits.lstrip('0')} does not fit in int64")
    k = int(digits) if digits is not None else None
    takes_k, needs_k = _BASES[base]
    if k is not None and not takes_k:
        raise _invalid(name, f"{base} takes no cut-off")
    if k is None and needs_k:
        raise _invalid(name, f"{base} needs a cut-off, e.g. {base}@10")
    if k is not None and k < 1:
        raise _invalid(name, "k must be >= 1")
    return base, k


def higher_is_better(name: str) -> bool:
    """False for the losses ``r1``/``r2``, True for every other metric name."""
    return parse_name(name)[0] not in ("r1", "r2")


_LISTWISE: dict[str, Callable[..., float | NDArray[np.float64]]] = {
    "ndcg": ndcg, "dcg": dcg, "map": average_precision, "precision": precision,
    "mrr": reciprocal_rank, "err": err,
}


def evaluate(base: str, k: int | None, scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None,
             *, qid: ArrayLike | None = None, per_query: bool = False,
             **conventions: Any) -> float | NDArray[np.float64]:
    """The metric ``base`` (a canonical name of :func:`parse_name`) at cut-off ``k``, with
    ``conventions`` (the metric function's keyword options) over the defaults."""
    if base in ("r1", "r2"):
        return rank_loss(scores, labels, group_ptr, qid=qid, kind=base, per_query=per_query, **conventions)
    return _LISTWISE[base](scores, labels, group_ptr, k, qid=qid, per_query=per_query, **conventions)


class NamedMetric:
    """A metric by name with boostplug's default conventions: what :func:`by_name` returns.

    ``fn(scores, labels, group_ptr, per_query=False, *, qid=None)``. It holds only its name,
    so it pickles (joblib, spawn pools, a saved search that keeps it).
    """

    def __init__(self, name: str) -> None:
        self._base, self._k = parse_name(name)
        self.__name__ = self.__qualname__ = name.strip().lower()

    def __call__(self, scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike | None = None,
                 per_query: bool = False, *, qid: ArrayLike | None = None) -> float | NDArray[np.float64]:
        return evaluate(self._base, self._k, scores, labels, group_ptr, qid=qid, per_query=per_query)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return NamedMetric, (self.__name__,)

    def __repr__(self) -> str:
        return f"boostplug.metrics.by_name({self.__name__!r})"


def by_name(name: str) -> MetricFn:
    """The metric called ``name`` with boostplug's default conventions.

    Returns ``fn(scores, labels, group_ptr, per_query=False, *, qid=None)`` (pass exactly one
    of ``group_ptr`` and ``qid``): the mean over queries
    (or, for ``r1``/``r2``, over all critical pairs), or the per-query array. It pickles.
    """
    return NamedMetric(name)
