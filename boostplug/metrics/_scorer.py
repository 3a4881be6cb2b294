"""A scikit-learn scorer for ranking metrics, receiving ``qid`` through metadata routing."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._sklearn_folds import QuerySplitWarning, check_scored_queries
from .._validation import check_weights
from ..groups import first_per_query, resolve_group_ptr
from ..pairs import count_critical_pairs
from ._registry import evaluate, parse_name

__all__ = ["make_scorer", "RankingScorer", "QuerySplitWarning"]

# Set by the scorer itself (from the name and the routed metadata), never by the user.
_RESERVED = ("k", "qid", "group_ptr", "per_query", "pairs", "kind")
_ROUTED = ("qid", "sample_weight")


class RankingScorer:
    """``scorer(estimator, X, y, *, qid, sample_weight=None)``: ``sign * metric(estimator.predict(X), y, qid)``.

    Made by :func:`make_scorer`. It requests ``qid`` and ``sample_weight`` from
    scikit-learn's metadata routing by default (no ``set_score_request`` needed);
    :meth:`set_score_request` changes that, as on scikit-learn's own scorers. It holds only
    the metric's name, conventions and requests, so it pickles (a fitted ``GridSearchCV``
    keeps it as ``scorer_``; joblib and spawn pools ship it to their workers).
    """

    def __init__(self, name: str, conventions: dict[str, Any]) -> None:
        self._base, self._k = parse_name(name)
        self.name = name.strip().lower()
        self._conventions = dict(conventions)
        self._requests: dict[str, bool | None | str] = {"qid": True, "sample_weight": True}

    @property
    def _pairwise(self) -> bool:
        return self._base in ("r1", "r2")

    @property
    def _sign(self) -> float:
        return -1.0 if self._pairwise else 1.0  # scikit-learn maximises: losses are negated

    def _metric(self, scores: Any, y: Any, g: Any, **kw: Any) -> Any:
        return evaluate(self._base, self._k, scores, y, g, **kw)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self._conventions.items())
        neg = "  # negated loss" if self._sign < 0 else ""
        return f"make_scorer({self.name!r}{extra}){neg}"

    # --- scikit-learn's metadata routing --------------------------------------------------------

    def get_metadata_routing(self) -> Any:
        """The score request (``qid``, ``sample_weight``), as scikit-learn's routers read it."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=self)
        for param, alias in self._requests.items():
            request.score.add_request(param=param, alias=alias)
        return request

    def set_score_request(self, **requests: bool | None | str) -> "RankingScorer":
        """Change what the scorer asks the router for: ``qid`` / ``sample_weight`` set to
        ``True`` (pass it if given), ``False`` (never), ``None`` (error if given) or an alias."""
        for param, alias in requests.items():
            if param not in _ROUTED:
                raise TypeError(f"the ranking scorer routes only {', '.join(_ROUTED)}; got {param!r}")
            self._requests[param] = alias
        return self

    def _accept_sample_weight(self) -> bool:
        # scikit-learn's multi-metric scorer asks every scorer this when routing is off
        return True

    # --- scoring ------------------------------------------------------------------------------

    def __call__(self, estimator: Any, X: Any, y_true: ArrayLike, qid: ArrayLike | None = None,
                 sample_weight: ArrayLike | None = None) -> float:
        if qid is None:
            import sklearn

            if not sklearn.get_config().get("enable_metadata_routing", False):
                raise ValueError(
                    f"the ranking scorer {self.name!r} needs the query id of every row, and scikit-learn "
                    "passes them to a scorer only through metadata routing: call "
                    "sklearn.set_config(enable_metadata_routing=True) and pass qid=... to "
                    "GridSearchCV.fit(X, y, qid=qid) or cross_validate(..., params={'qid': qid}) "
                    "(scoring the whole set as one query would be wrong)"
                )
            raise ValueError(
                f"the ranking scorer {self.name!r} got no qid: pass qid=... (one query id per row) to "
                "GridSearchCV.fit(X, y, qid=qid) or cross_validate(..., params={'qid': qid})"
            )
        check_scored_queries(estimator, qid, y_true, f"make_scorer({self.name!r})")
        y = np.asarray(y_true)
        q = np.asarray(qid)
        try:
            g = resolve_group_ptr(None, q, y.shape[0], caller=f"the scorer {self.name!r}")
        except ValueError as exc:
            raise ValueError(f"{exc} (split with GroupKFold or GroupShuffleSplit and groups=qid so that "
                             "every query stays whole and in order within a fold)") from None
        scores = np.asarray(estimator.predict(X), dtype=np.float64).reshape(-1)
        w = _query_weights(sample_weight, g, y.shape[0])
        if w is None:
            return self._sign * float(self._metric(scores, y, g, **self._conventions))
        per_query = np.asarray(self._metric(scores, y, g, per_query=True, **self._conventions))
        if self._pairwise:  # every pair weighted by its query's weight
            w = w * count_critical_pairs(y, g).astype(np.float64)
        keep = ~np.isnan(per_query)  # a query a convention skips is in neither sum
        total = float(w[keep].sum())
        return self._sign * (float(np.dot(per_query[keep], w[keep]) / total) if total > 0 else math.nan)


def _query_weights(sample_weight: ArrayLike | None, g: NDArray[np.int64], n: int) -> NDArray[np.float64] | None:
    """One weight per query from per-row ``sample_weight`` that must be equal within each query."""
    w = check_weights(sample_weight, n, name="sample_weight")
    if w is None:
        return None
    return first_per_query(w, g, "sample_weight must be one weight per query (equal on all rows of a query)", "")


def make_scorer(name: str, **conventions: Any) -> RankingScorer:
    """A scikit-learn scorer for the ranking metric ``name`` (``"ndcg@10"``, ``"map"``, ``"r2"``, ...).

    Example:
        >>> import sklearn
        >>> from sklearn.model_selection import GridSearchCV, GroupKFold
        >>> from boostplug.lightgbm import LGBMRanker
        >>> ranker, grid = LGBMRanker(objective="mpboost", n_jobs=1, verbose=-1), {"n_estimators": [10, 30]}
        >>> search = GridSearchCV(ranker, grid, cv=GroupKFold(3),
        ...                       scoring=make_scorer("ndcg@10", empty=0.0))
        >>> with sklearn.config_context(enable_metadata_routing=True):
        ...     search.fit(X, y, groups=qid, qid=qid)  # doctest: +ELLIPSIS
        GridSearchCV(...)
        >>> 0.0 <= float(search.best_score_) <= 1.0
        True

    ``scorer(estimator, X, y, qid=..., sample_weight=None)`` is ``metric(estimator.predict(X), y,
    qid=qid, **conventions)``, the metric of :func:`by_name` (the cut-off from the name; the losses
    ``r1``/``r2`` negated, as scikit-learn maximises), ``sample_weight`` weighting the queries. It
    needs ``sklearn.set_config(enable_metadata_routing=True)`` and splits that keep queries whole
    (it refuses rows a boostplug ranker or booster was fitted on: :mod:`boostplug._sklearn_folds`):
    docs/metrics.md, "Tuning with scikit-learn".

    Args:
        name: a metric name of :func:`by_name`.
        **conventions: keyword options of that metric function (validated here).
    """
    reserved = sorted(set(conventions) & set(_RESERVED))
    if reserved:
        raise TypeError(f"make_scorer: {', '.join(reserved)} cannot be set here (the cut-off comes from "
                        "the name, the queries and weights from the routed qid/sample_weight)")
    scorer = RankingScorer(name, conventions)
    scorer._metric(np.zeros(2), np.zeros(2), np.array([0, 2]), **conventions)  # bad conventions fail now, not in CV
    return scorer
