"""A boostplug metric by name for the frameworks' evaluation hooks: :class:`MetricSpec` (the value,
weighted over queries as asked) and :class:`MetricCallable` (what every framework's metric
callable shares)."""

from __future__ import annotations

import weakref
from contextlib import suppress
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from .. import metrics as _metrics
from ._bound_objective import _same_arrays
from ._query_info import check_set_weights, metric_query_weights

__all__ = ["WEIGHTINGS", "MetricSpec", "MetricCallable"]


#: How a weighted metric averages queries: see :class:`MetricSpec`.
WEIGHTINGS = ("query", "framework")


class MetricSpec:
    """A boostplug metric by name (``"ndcg@10"``, ``"map@10"``, ...) for the frameworks' eval hooks.

    With per-query weights ``w_q`` the value is, by ``weighting``:

    * ``"query"`` (default): the weighted mean over queries, ``sum_q w_q m_q / sum_q w_q``
      (queries a convention skips are left out of both sums);
    * ``"framework"`` (NDCG only): what LightGBM's and XGBoost's own weighted ``ndcg@k`` compute.
      A query without a relevant document (ideal DCG 0, NDCG 1 by their convention) adds 1 to
      the numerator but ``w_q`` to the denominator:
      ``(sum_{q relevant} w_q m_q + #{q not relevant}) / sum_q w_q``. With weights above 1 on
      average this is lower than the weighted mean, and the gap grows with the share of such
      queries (a third of MQ2008's queries).
    """

    def __init__(self, name: str, display_name: str | None = None, weighting: str = "query") -> None:
        self.fn: Callable[..., Any] = _metrics.by_name(name)
        self.name = name
        self.display_name = display_name or name
        self.higher_is_better = _metrics.higher_is_better(name)
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}")
        if weighting == "framework" and _metrics.parse_name(name)[0] != "ndcg":
            raise ValueError(f"weighting='framework' reproduces the frameworks' weighted ndcg@k; {name!r} is not an "
                             "NDCG (LightGBM's weighted map@k already weights every query, as weighting='query' does)")
        self.weighting = weighting

    def __getstate__(self) -> dict[str, Any]:
        # By name: the metric function itself may be a closure or a compiled kernel.
        return {"name": self.name, "display_name": self.display_name, "weighting": self.weighting}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["display_name"], state.get("weighting", "query"))

    def prepare(self, labels: NDArray, group_ptr: NDArray[np.int64],
                query_weights: NDArray[np.float64] | None = None) -> tuple[Any, ...]:
        """What every value on one set reads besides the scores: ``(labels, group_ptr,
        query_weights, irrelevant)`` (``irrelevant``: the queries without a relevant document,
        for ``weighting="framework"``; else ``None``)."""
        irrelevant = None
        if query_weights is not None and self.weighting == "framework":
            y = np.asarray(labels, dtype=np.float64).reshape(-1)
            sizes = np.diff(group_ptr)
            best = np.full(sizes.size, -np.inf)
            best[sizes > 0] = np.maximum.reduceat(y, group_ptr[:-1][sizes > 0])
            irrelevant = best <= 0
        return labels, group_ptr, query_weights, irrelevant

    def sums(self, preds: NDArray, prepared: tuple[Any, ...]) -> NDArray[np.float64]:
        """``[numerator, denominator]`` of the weighted value on a set :meth:`prepare` prepared (no
        weights: 1 each), so that sums over disjoint sets of queries (workers) add up to the value
        of their union; queries a convention skips (NaN) are in neither."""
        labels, group_ptr, query_weights, irrelevant = prepared
        scores = np.asarray(preds, dtype=np.float64).reshape(-1)
        per_q = np.asarray(self.fn(scores, labels, group_ptr, per_query=True), dtype=np.float64)
        w = np.ones(per_q.shape[0]) if query_weights is None else query_weights
        kept = ~np.isnan(per_q)
        total = float(w[kept].sum())
        # "framework" weighting: a query without a relevant document adds 1 to the numerator, not w_q m_q
        none = kept & irrelevant if irrelevant is not None and per_q.size else np.zeros_like(kept)
        return np.array([float(np.dot(w[kept & ~none], per_q[kept & ~none]) + none.sum()), total])

    def value(self, preds: NDArray, prepared: tuple[Any, ...]) -> float:
        """The metric of ``preds`` on a set :meth:`prepare` prepared."""
        labels, group_ptr, query_weights, _ = prepared
        if query_weights is None:
            return float(self.fn(np.asarray(preds, dtype=np.float64).reshape(-1), labels, group_ptr))
        top, total = self.sums(preds, prepared)
        return float(top / total) if total > 0 else float("nan")

    def __call__(self, preds: NDArray, labels: NDArray, group_ptr: NDArray[np.int64],
                 query_weights: NDArray[np.float64] | None = None) -> float:
        return self.value(preds, self.prepare(labels, group_ptr, query_weights))


class MetricCallable:
    """What the frameworks' metric callables share: a :class:`MetricSpec` by name, the
    ``__name__`` frameworks print, and pickling by name (a module-level class, not a closure,
    so joblib, multiprocessing and Dask can ship it). Subclasses add ``__call__``."""

    def __init__(self, name: str, display_name: str | None = None, weighting: str = "query") -> None:
        self.spec = MetricSpec(name, display_name, weighting)
        self.__name__ = f"boostplug_{name}"
        self._sets: dict[int, tuple[weakref.ref[Any], tuple[Any, ...], tuple[Any, ...]]] = {}

    def prepared(self, key: Any, seen: tuple[Any, ...], derive: Callable[[], tuple[Any, ...]]) -> tuple[Any, ...]:
        """``derive()`` (a set's checks, then :meth:`MetricSpec.prepare` of its labels, groups and
        weights) the first time ``key`` (a framework's set, or the array it hands every round) is
        seen, and again when what the framework hands each round (``seen``) changed, as
        :meth:`BoundObjective.prepared` does for objectives; every time for a key that cannot be
        weakly referenced."""
        entry = self._sets.get(id(key))
        if entry is not None and entry[0]() is key and _same_arrays(entry[1], seen):
            return entry[2]
        value = derive()
        with suppress(TypeError):
            self._sets[id(key)] = (weakref.ref(key, lambda _, k=id(key): self._sets.pop(k, None)), seen, value)
        return value

    def set_value(self, preds: NDArray, key: Any, labels: Any, groups: Any, weights: Any, *, framework: str,
                  to_group_ptr: Callable[[Any, int], NDArray[np.int64]], who: str,
                  check: Callable[[], None] | None = None) -> float:
        """The metric of ``preds`` on the set ``key`` holding ``labels``, ``groups`` (the framework's
        form, ``to_group_ptr(groups, n_docs)`` converts it) and row or query ``weights``; the first
        time the set is seen (:meth:`prepared`), ``check()`` and the weights' check
        (:func:`~._query_info.check_set_weights`, errors naming ``who``) run."""
        def derive() -> tuple[Any, ...]:
            gp = to_group_ptr(groups, len(labels))
            if check is not None:
                check()
            check_set_weights(weights, gp, framework, who)
            return self.spec.prepare(labels, gp, metric_query_weights(weights, gp, framework))

        return self.spec.value(preds, self.prepared(key, (labels, groups, weights), derive))

    def __getstate__(self) -> dict[str, Any]:
        return self.spec.__getstate__()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["display_name"], state.get("weighting", "query"))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.spec.name!r}, display_name={self.spec.display_name!r}, "
                f"weighting={self.spec.weighting!r})")
