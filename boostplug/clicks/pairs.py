"""Preferences onto a feature matrix: row-index pairs, and QBRank's training set P ∪ L.

:func:`to_rows` finds the feature row of every (query, document) of a
:class:`~boostplug.clicks.Preferences` table: either the document key *is* the row index
(simulated logs, ``doc=None``), or the rows carry their own ``(qid, doc)`` keys and the
table is joined on them. A key with no feature row is a ``ValueError`` naming it, or, with
``on_missing="skip"``, its preferences are left out, counted and announced by a warning.

:func:`training_set` builds what QBRank trains on (Zheng et al., NIPS 2007, Section 3): the
rows the click pairs touch (the preference part P, with per-pair weights), optionally
followed by a labeled data set L (the squared-error part; its critical pairs too with
``label_pairs=True``). :meth:`TrainingSet.qbrank_params` gives the objective's parameters;
the paper's ``w`` weighs P against L.

Example:
    >>> import numpy as np
    >>> from boostplug import clicks
    >>> from boostplug.data import make_ranking
    >>> data = make_ranking(n_queries=30, docs_per_query=10, seed=0)
    >>> log = clicks.simulate(data, np.zeros(data.n_docs), n_sessions=300, seed=0)
    >>> rows = clicks.to_rows(clicks.preferences(log), data.qid)
    >>> ts = clicks.training_set(rows, data.X, data.group_ptr)
    >>> params = ts.qbrank_params(w=0.5)
    >>> params["labeled"], params["label_pairs"]
    ('none', False)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_flag, check_real, show
from ..groups import check_group_ptr, group_ptr_of_runs, qid_from_group_ptr
from ..keyed_pairs import codes_together, join_keys, row_keys
from .aggregate import Preferences
from .log import ClickLog

__all__ = ["PairRows", "TrainingSet", "log_rows", "to_rows", "training_set"]


@dataclass(eq=False)
class PairRows:
    """Preferences as row indices of a feature matrix.

    Attributes:
        pairs: ``(n_pairs, 2)`` int64, preferred row first (QBRank's ``pairs=``, a booster's
            ``fit(pairs=...)``).
        weights: ``(n_pairs,)`` float64, the table's ``weight`` column.
        n_missing: preferences left out because a key had no feature row (``on_missing="skip"``).
    """

    pairs: NDArray[np.int64]
    weights: NDArray[np.float64]
    n_missing: int = 0

    def __len__(self) -> int:
        return int(self.pairs.shape[0])

    def repeated(self) -> NDArray[np.int64]:
        """The pairs, each repeated ``weight`` times: for a learner without per-pair weights,
        whose loss is a sum over pairs, identical to weighting. ``ValueError`` unless every
        weight is a whole number (``weight="unit"``, ``"count"`` or ``"net"``)."""
        return _repeat(self.pairs, self.weights)


def _repeat(pairs: NDArray[np.int64], weights: NDArray[np.float64]) -> NDArray[np.int64]:
    whole = np.round(weights)
    bad = np.flatnonzero((whole != weights) | (weights < 0))
    if bad.size:
        raise ValueError(f"pair weights must be whole numbers to repeat pairs; pair {int(bad[0])} has weight "
                         f"{float(weights[bad[0]])} (use weight='unit', 'count' or 'net')")
    return np.repeat(pairs, whole.astype(np.int64), axis=0)


def _check_features_keys(qid: ArrayLike, doc: ArrayLike | None) -> tuple[np.ndarray, np.ndarray | None]:
    if doc is not None:
        return row_keys(qid, doc)
    q_rows = np.asarray(qid)
    if q_rows.ndim != 1:
        raise ValueError(f"qid must be one-dimensional (one id per feature row), got shape {q_rows.shape}")
    return q_rows, None


def _feature_rows(q_rows: np.ndarray, d_rows: np.ndarray | None, query: np.ndarray, keys: np.ndarray,
                  who: Callable[[int], str]) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """``(found, rows)``, both shaped like ``keys`` (``(k, m)``: ``m`` document keys of query
    ``query[i]`` on line ``i``): the feature row of each key, joined on ``(q_rows, d_rows)``, or
    the key itself as a row index (``d_rows=None``; then the row's qid must be the query, else a
    ``ValueError`` naming ``who(i)``)."""
    n = q_rows.shape[0]
    if d_rows is None:
        q_code_rows, q_code = codes_together(q_rows, query, what="query ids")
        if keys.size and keys.dtype.kind not in "iu":
            raise TypeError(f"with doc=None the document keys must be row indices (integers), got dtype "
                            f"{keys.dtype}; pass doc= (one key per feature row) to join on keys")
        k64 = keys.astype(np.int64)
        found = (k64 >= 0) & (k64 < n)
        rows = np.where(found, k64, 0)
        for side in range(keys.shape[1]):
            wrong = np.flatnonzero(found[:, side] & (q_code_rows[rows[:, side]] != q_code))
            if wrong.size:
                i = int(wrong[0])
                r = int(rows[i, side])
                raise ValueError(f"{who(i)}: document key {r} of query {show(query[i])} is row {r} of the feature "
                                 f"matrix, whose qid is {show(q_rows[r])}: the keys are not row indices of this "
                                 "matrix (pass doc= to join on keys)")
        return found, rows
    return join_keys(q_rows, d_rows, query, keys)[:2]


def _no_row(key: object, query: object, by_index: bool) -> str:
    return ("is not a row index of the feature matrix" if by_index else
            f"has no feature row (no row has qid {show(query)} and doc {show(key)})")


def to_rows(prefs: Preferences, qid: ArrayLike, doc: ArrayLike | None = None, *,
            on_missing: str = "raise") -> PairRows:
    """Row indices of the preferences' documents in a feature matrix.

    Args:
        prefs: :func:`~boostplug.clicks.preferences`'s table.
        qid: query id of every row of the feature matrix (``RankingData.qid``).
        doc: document key of every row, joined with ``qid`` to the table's keys; ``None``:
            the table's document keys are row indices (each row's ``qid`` must then be the
            preference's query, else ``ValueError``).
        on_missing: ``"raise"`` (default) or ``"skip"`` preferences whose document has no row.
    """
    on_missing = check_choice("on_missing", on_missing, ("raise", "skip"))
    if not isinstance(prefs, Preferences):
        raise TypeError(f"to_rows takes a boostplug.clicks.Preferences table, got {type(prefs).__name__}")
    q_rows, d_rows = _check_features_keys(qid, doc)
    keys = np.stack((np.asarray(prefs.preferred), np.asarray(prefs.other)), axis=1)
    found, rows = _feature_rows(q_rows, d_rows, np.asarray(prefs.query), keys, lambda i: f"preference {i}")
    lost = np.flatnonzero(~found.all(axis=1))
    if lost.size:
        k = int(lost[0])
        side = "preferred" if not found[k, 0] else "other"
        key = keys[k, 0] if side == "preferred" else keys[k, 1]
        message = (f"{side} document {show(key)} {_no_row(key, prefs.query[k], d_rows is None)}; {lost.size} "
                   "preferences name documents without features")
        if on_missing == "raise":
            raise ValueError(f"preference {k} (query {show(prefs.query[k])}): {message}; on_missing='skip' "
                             "leaves such preferences out")
        warnings.warn(f"boostplug.clicks.to_rows: left out {lost.size} of {len(prefs)} preferences: first, "
                      f"preference {k}: {message}", UserWarning, stacklevel=2)
    keep = found.all(axis=1)
    return PairRows(np.ascontiguousarray(rows[keep]), prefs.weight[keep].astype(np.float64), int(lost.size))


def log_rows(log: ClickLog, qid: ArrayLike, doc: ArrayLike | None = None, *,
             on_missing: str = "raise") -> tuple[ClickLog, NDArray[np.int64]]:
    """The feature row of every row of a click log, for learners that train on the impressions
    themselves: ``X[rows]`` with labels ``log.clicked``, groups ``log.group_ptr`` and
    ``log.position`` (clicks as labels; LightGBM's ``position``; XGBoost's ``lambdarank_unbiased``).

    Args:
        log: a :class:`~boostplug.clicks.ClickLog`.
        qid, doc: as in :func:`to_rows` (``doc=None``: the log's document keys are row indices).
        on_missing: ``"raise"`` (default): a document without a feature row is a ``ValueError``
            naming its session, query and position; ``"skip"``: its impressions are left out
            (counted in a warning).

    Returns:
        ``(log, rows)``: the log (without the skipped impressions) and its feature rows.
    """
    on_missing = check_choice("on_missing", on_missing, ("raise", "skip"))
    if not isinstance(log, ClickLog):
        raise TypeError(f"log_rows takes a boostplug.clicks.ClickLog (read_log, simulate), got {type(log).__name__}")
    q_rows, d_rows = _check_features_keys(qid, doc)

    def who(i: int) -> str:
        return f"session {show(log.session[i])}, query {show(log.query[i])}, position {int(log.position[i])}"

    found, rows = _feature_rows(q_rows, d_rows, np.asarray(log.query), np.asarray(log.doc)[:, None], who)
    found, rows = found[:, 0], rows[:, 0]
    if found.all():
        return log, rows
    lost = np.flatnonzero(~found)
    i = int(lost[0])
    message = (f"{who(i)}: document {show(log.doc[i])} {_no_row(log.doc[i], log.query[i], d_rows is None)}; "
               f"{lost.size} log rows name documents without features")
    if on_missing == "raise":
        raise ValueError(f"{message}; on_missing='skip' leaves their impressions out")
    imp = np.repeat(np.arange(log.n_impressions), np.diff(log.group_ptr))
    bad = np.zeros(log.n_impressions, dtype=bool)
    bad[imp[lost]] = True
    warnings.warn(f"boostplug.clicks.log_rows: left out {int(bad.sum())} of {log.n_impressions} impressions: "
                  f"{message}", UserWarning, stacklevel=2)
    return log.select(~bad), rows[~bad[imp]]


@dataclass(eq=False)
class TrainingSet:
    """QBRank's training data from click pairs (P) and an optional labeled set (L).

    Rows ``0:n_click_rows`` are the feature rows the click pairs touch (label 0, in the
    squared-error term never), grouped by their query; then the labeled set's rows.

    Attributes:
        X: features (dense or CSR, as given); y: labels (0 on the click rows).
        group_ptr: query offsets.
        pairs: ``(n_pairs, 2)`` rows of this set, preferred first; pair_weights: per pair.
        n_click_rows: rows of the click part.
        labeled: bool per row, True on the labeled set's rows (those after ``n_click_rows``).
    """

    X: Any
    y: NDArray[np.float64]
    group_ptr: NDArray[np.int64]
    pairs: NDArray[np.int64]
    pair_weights: NDArray[np.float64]
    n_click_rows: int

    @property
    def labeled(self) -> NDArray[np.bool_]:
        """True on the labeled set's rows, the rows after the click part's."""
        return np.arange(self.y.shape[0]) >= self.n_click_rows

    @property
    def qid(self) -> NDArray[np.int64]:
        """Query index of every row (the boosters' and scikit-learn rankers' ``qid=``)."""
        return qid_from_group_ptr(self.group_ptr)

    def repeated(self) -> NDArray[np.int64]:
        """The pairs, each repeated ``weight`` times (:meth:`PairRows.repeated`)."""
        return _repeat(self.pairs, self.pair_weights)

    def qbrank_params(self, *, w: float = 0.5, pair_tau: float = 1.0, label_pairs: bool = False) -> dict[str, Any]:
        """Parameters of the ``"qbrank"`` objective that train on this set.

        The click pairs are QBRank's explicit pairs (margin ``pair_tau``, the paper's 1.0), weighted by
        ``pair_weights`` (passed as the objective's per-pair weights when it has them, else as
        repeated pairs: whole-number weights only). Without a labeled set the objective sees the
        pairs alone (``label_pairs=False``, ``labeled="none"``). With one, its rows enter the
        squared-error term (weight ``1 - w`` against the pairs' ``w``), and with ``label_pairs=True``
        its critical pairs join the preference part too (the click rows' equal labels make none).
        """
        w = check_real("w", w, 0.0, 1.0, lo_open=False)
        check_flag(label_pairs, "label_pairs")
        params: dict[str, Any] = {"w": w, "pair_tau": pair_tau, "pairs": self.pairs, "pair_weights": self.pair_weights}
        if not self.labeled.any():
            return dict(params, label_pairs=False, labeled="none")
        return dict(params, label_pairs=bool(label_pairs), labeled_rows=np.flatnonzero(self.labeled))


def training_set(rows: PairRows, X: Any, group_ptr: ArrayLike, labeled: Any = None) -> TrainingSet:
    """QBRank's training set P ∪ L (module docstring).

    Args:
        rows: :func:`to_rows`'s pairs, row indices of ``X``.
        X: the feature matrix the pairs index (dense or scipy CSR), with its query offsets
            ``group_ptr`` (:mod:`boostplug.groups`).
        labeled: ``None``, or a :class:`~boostplug.data.RankingData` of judged queries (the
            labeled part L; its features must have ``X``'s columns).

    Returns:
        :class:`TrainingSet`: the rows of ``X`` the pairs touch (whole-query order kept, the
        other rows left out), then ``labeled``'s rows.
    """
    import scipy.sparse as sp

    if not isinstance(rows, PairRows):
        raise TypeError(f"training_set takes boostplug.clicks.to_rows(...)'s PairRows, got {type(rows).__name__}")
    n = X.shape[0]
    gp = check_group_ptr(group_ptr, n_docs=n)
    if rows.pairs.size and (rows.pairs.min() < 0 or rows.pairs.max() >= n):
        raise ValueError(f"the pairs index rows up to {int(rows.pairs.max())} but X has {n} rows")
    used = np.unique(rows.pairs)
    click_ptr = group_ptr_of_runs(np.searchsorted(gp, used, side="right") - 1)  # used is sorted: one run per query
    pairs = np.searchsorted(used, rows.pairs).astype(np.int64).reshape(-1, 2)
    Xc = X[used]
    yc = np.zeros(used.shape[0])
    if labeled is None:
        return TrainingSet(Xc, yc, click_ptr, pairs, rows.weights.copy(), int(used.shape[0]))
    if not all(hasattr(labeled, attr) for attr in ("X", "y", "group_ptr")):
        raise TypeError(f"labeled must be a boostplug.data.RankingData, got {type(labeled).__name__}")
    if labeled.X.shape[1] != X.shape[1]:
        raise ValueError(f"labeled has {labeled.X.shape[1]} features but X has {X.shape[1]}")
    if sp.issparse(Xc) or sp.issparse(labeled.X):
        Xall = sp.vstack([sp.csr_matrix(Xc), sp.csr_matrix(labeled.X)], format="csr")
    else:
        Xall = np.vstack([np.asarray(Xc), np.asarray(labeled.X)])
    ptr = np.concatenate((click_ptr, click_ptr[-1] + np.asarray(labeled.group_ptr[1:], dtype=np.int64)))
    return TrainingSet(Xall, np.concatenate((yc, np.asarray(labeled.y, dtype=np.float64))), ptr, pairs,
                       rows.weights.copy(), int(used.shape[0]))
