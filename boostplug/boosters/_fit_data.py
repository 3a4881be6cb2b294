"""The data of one booster fit: the validated arrays its hooks get (:class:`FitData`), with
the query weights, the preference pairs and the candidate stumps derived from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._features import check_features
from .._validation import check_labels
from ..groups import group_ptr_of, qid_from_group_ptr
from ..keyed_pairs import KeyedPairs, row_keys
from ..pairs import PAIR_BYTES, check_pair_memory, check_pairs, critical_pairs
from .stumps import StumpCandidates, make_candidates

__all__ = ["FitData", "check_X", "check_query_weights"]


@dataclass
class FitData:
    """Validated training data handed to a booster's hooks."""

    X: NDArray[np.float64]            # (n_docs, n_features), NaN = missing
    y: NDArray[np.float64]            # (n_docs,) grades >= 0
    group_ptr: NDArray[np.int64]      # (n_queries + 1,)
    pairs: NDArray[np.int64] | None   # (n_pairs, 2) explicit preferences, preferred first
    rng: np.random.Generator
    query_weights: NDArray[np.float64] | None = None  # (n_queries,) > 0, not all equal; None = unweighted

    @classmethod
    def prepare(cls, X: ArrayLike, y: ArrayLike, *, qid: ArrayLike | None, group: ArrayLike | None,
                pairs: ArrayLike | KeyedPairs | None, sample_weight: ArrayLike | None, random_state: Any,
                doc: ArrayLike | None = None, caller: str = "fit") -> "FitData":
        """The arguments of ``fit`` validated; keyed ``pairs`` mapped onto the rows keyed
        ``(qid, doc)``; queries of weight 0 removed (see :func:`check_query_weights`); ``rng``
        seeded by ``random_state``."""
        Xa = check_X(X)
        ya = check_labels(y, name="y")
        if ya.shape[0] != Xa.shape[0]:
            raise ValueError(f"y has length {ya.shape[0]} but X has {Xa.shape[0]} rows")
        gp = group_ptr_of(Xa.shape[0], qid, group, caller=caller)
        if isinstance(pairs, KeyedPairs):
            pairs = _keyed_rows(pairs, qid, gp, doc)
        elif doc is not None:
            raise ValueError("doc= (document keys) maps KeyedPairs onto the rows; pairs is not a KeyedPairs table")
        pa = None if pairs is None else check_pairs(pairs, Xa.shape[0], f"{caller}: pairs", outside=_ROUTED_PAIRS)
        qw = None
        if sample_weight is not None:
            Xa, ya, gp, pa, qw = _apply_query_weights(Xa, ya, gp, pa, check_query_weights(sample_weight, gp))
        return cls(Xa, ya, gp, pa, np.random.default_rng(random_state), qw)

    def preference_pairs(self, bytes_per_pair: int = PAIR_BYTES, who: str = "critical pairs") -> NDArray[np.int64]:
        """The explicit ``pairs``, else the critical pairs of the grades within each query.
        ``bytes_per_pair``: what the booster allocates per pair; above
        ``boostplug.pairs.PAIR_MEMORY_LIMIT`` in all, a ``ValueError`` before any allocation."""
        if self.pairs is not None:
            check_pair_memory([self.pairs.shape[0]], None, bytes_per_pair, who=who)
            return self.pairs
        return critical_pairs(self.y, self.group_ptr, bytes_per_pair=bytes_per_pair, who=who, limit_name=None)

    def pair_weights(self, pairs: NDArray[np.int64]) -> NDArray[np.float64] | None:
        """The weight of each pair's query (``None`` when unweighted); ``prepare`` checked that
        weighted pairs lie within one query."""
        if self.query_weights is None:
            return None
        return self.query_weights[qid_from_group_ptr(self.group_ptr)[pairs[:, 0]]]

    def stump_candidates(self, est: Any) -> StumpCandidates:
        """Stump candidates of ``X`` from a booster's ``thresholds``, ``max_thresholds`` and
        ``n_thresholds`` parameters (seeded by ``rng``)."""
        return make_candidates(self.X, est.thresholds, max_thresholds=est.max_thresholds,
                               n_thresholds=est.n_thresholds, rng=self.rng)


#: A likely cause of row-index pairs out of range, and the fix.
_ROUTED_PAIRS = ("; row-index pairs name rows of the data they were made for, and inside scikit-learn's model "
                 "selection (cross_validate, GridSearchCV...) routing passes the whole data set's pairs to every "
                 "fold unchanged, where those numbers name other rows: pass them as "
                 "boostplug.keyed_pairs.KeyedPairs with doc= (one key per row), which each fold maps onto its own "
                 "rows")


def _keyed_rows(pairs: KeyedPairs, qid: ArrayLike | None, group_ptr: NDArray[np.int64],
                doc: ArrayLike | None) -> NDArray[np.int64]:
    """Keyed pairs as row indices of this fit's rows, keyed by ``qid`` (or the query index, with
    ``group``) and ``doc``; the boosters weight no pair, so a weighted table is refused."""
    if doc is None:
        raise ValueError("pairs is a KeyedPairs table: pass fit(..., doc=doc), one document key per row, to map "
                         "it onto the rows (with GridSearchCV/cross_validate: params={'qid': qid, 'doc': doc, "
                         "'pairs': pairs, 'groups': qid})")
    if pairs.weight is not None:
        raise ValueError("the boosters take no pair weights, and pairs is a weighted KeyedPairs table: build it "
                         "without weight= (Preferences(weight='unit') counts each pair once)")
    q = qid_from_group_ptr(group_ptr) if qid is None else qid
    return pairs.rows(*row_keys(q, doc, int(group_ptr[-1])))[0]


def check_X(X: ArrayLike, n_features: int | None = None) -> NDArray[np.float64]:
    """``X`` as the boosters take it: dense, NaN = missing, no infinite value, a column at least;
    ``n_features``: the count the model was fitted with."""
    arr = check_features(X, dense=True, allow_inf=False, allow_empty=False)
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"X has {arr.shape[1]} features but the model was fitted with {n_features}")
    return arr


def check_query_weights(sample_weight: ArrayLike, group_ptr: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per-query weights from ``sample_weight`` (one per query, or one per row constant within
    each query), validated: finite, ``>= 0``, not all zero."""
    from ..frameworks._query_info import query_weights_from_rows  # imports the objectives: only when weights are given

    w = np.asarray(sample_weight)
    n_q, n = group_ptr.shape[0] - 1, int(group_ptr[-1])
    if w.ndim != 1 or w.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be a 1-d array of numbers (one per query or per row), "
                         f"got shape {w.shape} and dtype {w.dtype}")
    if w.shape[0] == 0 and n:
        raise ValueError(f"sample_weight is empty; give one weight per row ({n}) or per query ({n_q})")
    w = w.astype(np.float64)
    bad = np.flatnonzero(~(w >= 0.0) | np.isinf(w))  # ~(w >= 0) also catches NaN
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"sample_weight must be finite and >= 0; sample_weight[{i}] = {float(w[i])}")
    qw = query_weights_from_rows(w, group_ptr, "sample_weight")
    if qw is None or (n_q and not (qw > 0).any()):
        raise ValueError("sample_weight is zero for every query: nothing to learn from")
    return qw


def _apply_query_weights(
    X: NDArray[np.float64], y: NDArray[np.float64], group_ptr: NDArray[np.int64],
    pairs: NDArray[np.int64] | None, qw: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64] | None,
           NDArray[np.float64] | None]:
    """Training data for per-query weights ``qw``: zero-weight queries removed (rows and pairs),
    weights ``None`` when the rest are all equal (the unweighted fit, bit for bit)."""
    rq = qid_from_group_ptr(group_ptr)
    if pairs is not None:
        cross = np.flatnonzero(rq[pairs[:, 0]] != rq[pairs[:, 1]])
        if cross.size:
            a, b = (int(v) for v in pairs[cross[0]])
            raise ValueError(f"sample_weight weights queries, but pairs[{int(cross[0])}] = ({a}, {b}) joins rows of "
                             f"queries {int(rq[a])} and {int(rq[b])}: a pair across queries has no weight")
    keep = qw > 0
    if not keep.all():
        rows = keep[rq]
        if pairs is not None:
            pairs = pairs[rows[pairs[:, 0]]]
            pairs = (np.cumsum(rows) - 1)[pairs]  # old row index -> new row index
        X, y, qw = X[rows], y[rows], qw[keep]
        group_ptr = np.concatenate(([0], np.cumsum(np.diff(group_ptr)[keep]))).astype(np.int64)
    return X, y, group_ptr, pairs, (None if np.all(qw == qw[0]) else qw)
