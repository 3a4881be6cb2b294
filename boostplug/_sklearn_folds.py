"""Refusing to score a ranker on queries it was fitted on, which is what a scikit-learn
cross-validation split that cuts queries does (``KFold``, ``ShuffleSplit``... on ranking rows):
the validation score is inflated, with no warning.

No estimator or scorer sees both sides of a split, so boostplug's rankers and boosters record the
query ids they were fitted on (:func:`record_fitted_queries`: each id and its row count, and a
digest of the ids and labels in row order), and their ``score`` and
:func:`boostplug.metrics.make_scorer`'s scorer refuse rows whose query ids are among them
(:func:`check_scored_queries`), unless they are the fitted rows themselves (a training score).
The check runs with scikit-learn's metadata routing on, the only way ``qid`` reaches ``score`` or
a scorer; an estimator that records nothing (``xgboost.XGBRanker``, a model loaded from a file,
one fitted with ``group=`` sizes) is not checked. What it cannot see: docs/reliability.md.
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import show
from .keyed_pairs import codes_together

__all__ = ["record_fitted_queries", "check_scored_queries", "QuerySplitWarning", "SPLIT_BY_QUERY"]

#: How to split by query instead, for messages.
SPLIT_BY_QUERY = (
    "split by query: cv=GroupKFold(n_splits) (or GroupShuffleSplit, LeaveOneGroupOut) with groups=qid, "
    "e.g. GridSearchCV(...).fit(X, y, qid=qid, groups=qid) or cross_validate(..., params={'qid': qid, "
    "'groups': qid}), with sklearn.set_config(enable_metadata_routing=True)"
)


class QuerySplitWarning(UserWarning):
    """Issued (once, by Python's default filter) beside the ``ValueError`` that refuses to score
    queries the model was fitted on: some callers catch that error and hide it, such as Optuna's
    ``OptunaSearchCV``, which records the trial as failed, or ``error_score=nan`` searches
    (scikit-learn's default) whose only sign would otherwise be NaN scores."""


_WARNING = (
    "rows scored share query ids with the rows the model was fitted on (a cross-validation split that cuts "
    "queries?), which inflates the score, so boostplug refused them with a ValueError; " + SPLIT_BY_QUERY
)

#: Where an estimator keeps the query ids of its fit: ``(distinct ids, rows of each, digest of the
#: rows)`` or ``None``.
_FITTED = "_boostplug_fitted_queries"


def _digest(codes: np.ndarray, y: ArrayLike) -> bytes | None:
    """A digest of the rows' query codes and labels in row order (``None``: labels that are no numbers)."""
    try:
        labels = np.asarray(y, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return None
    return hashlib.blake2b(codes.astype(np.int64).tobytes() + labels.tobytes(), digest_size=16).digest()


def record_fitted_queries(estimator: Any, qid: ArrayLike | None, y: ArrayLike) -> None:
    """Record on ``estimator`` the query ids of the rows it is fitted on, with labels ``y``
    (``qid`` ``None``: queries given as sizes, no ids: nothing to check later)."""
    fitted = None
    if qid is not None:
        try:
            ids, codes, counts = np.unique(np.asarray(qid).reshape(-1), return_inverse=True, return_counts=True)
            fitted = (ids, counts, _digest(codes, y))
        except TypeError:  # ids numpy cannot order (mixed Python types): unchecked
            pass
    setattr(estimator, _FITTED, fitted)


def check_scored_queries(estimator: Any, qid: ArrayLike | None, y: ArrayLike, who: str) -> None:
    """Raise ``ValueError`` (and issue a :class:`QuerySplitWarning`) when rows with the query ids
    ``qid`` (and labels ``y``) are scored by ``estimator``, which was fitted on rows with some of
    those ids, unless they are the fitted rows themselves; do nothing for an estimator that
    recorded no ids (:func:`record_fitted_queries`), or with scikit-learn's metadata routing off
    (see the module notes).

    Args:
        qid: the query id of each row scored (``None``: nothing to check).
        who: the caller, for the message (``"LGBMRanker.score"``).
    """
    import sklearn

    fitted = getattr(estimator, _FITTED, None)
    if fitted is None or qid is None or not sklearn.get_config().get("enable_metadata_routing", False):
        return
    ids, counts, digest = fitted
    q = np.asarray(qid).reshape(-1)
    try:
        fit_codes, row_codes = codes_together(ids, q, what="query ids")
    except (TypeError, ValueError):  # ids of another type than the fitted ones: other queries
        return
    shared = np.isin(row_codes, fit_codes)
    if not shared.any():
        return
    scored_codes, inverse, scored_counts = np.unique(row_codes, return_inverse=True, return_counts=True)
    if (np.array_equal(scored_codes, fit_codes) and np.array_equal(scored_counts, counts) and digest is not None
            and _digest(inverse, y) == digest):
        return  # the fitted rows themselves: a training score
    row = int(np.argmax(shared))
    at = int(np.searchsorted(fit_codes, row_codes[row]))
    n_scored = int(np.sum(row_codes == row_codes[row]))
    n_shared = int(np.isin(scored_codes, fit_codes).sum())
    # One text wherever it comes from, so that the default filter shows it once.
    warnings.warn(_WARNING, QuerySplitWarning, stacklevel=3)
    raise ValueError(
        f"{who}: the rows scored share query ids with the rows this model was fitted on: query id {show(q[row])} "
        f"has {int(counts[at])} rows in the data the model was fitted on and {n_scored} in the data scored "
        f"({n_shared} of {scored_codes.shape[0]} scored query ids are training ids), so documents of one query sit "
        "in both training and validation and the validation score is inflated. In model "
        "selection, splitters that ignore groups (KFold, ShuffleSplit, StratifiedKFold...) split rows and cut "
        f"queries: {SPLIT_BY_QUERY}. A separate test set whose query ids repeat the training set's (both numbered "
        "from 0) names other queries by the same ids: renumber its ids so that they differ from the training ids"
    )
