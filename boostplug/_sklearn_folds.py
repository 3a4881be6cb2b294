"""Refusing scikit-learn cross-validation splits that cut queries.

A ranker fitted on part of a query and scored on the rest of it is scored on documents whose
query it has already seen: the validation score is inflated (KFold(shuffle=True) on a LETOR-like
set gives NDCG@10 well above GroupKFold's, with no warning). Splitters that ignore groups
(``KFold``, ``ShuffleSplit``, ``StratifiedKFold``, ``TimeSeriesSplit``...) do that to almost
every query.

What an estimator sees cannot tell it: ``fit(X, y, qid=...)`` gets the training rows of a
split and their query ids, whose queries may look whole (a sorted ``KFold`` fold keeps what is
left of each query contiguous), and a test set numbered from 0 like the training set is
legitimate. Where it is certain is the function of scikit-learn that runs one split: it holds
the split's training and test row indices (``train``, ``test``) and the routed metadata of
both sides (``qid[train]``, ``qid[test]``). Every model selection tool goes through it
(``cross_validate``, ``cross_val_score``, ``GridSearchCV``, ``RandomizedSearchCV``, the halving
searches, ``learning_curve``, ``validation_curve``; ``permutation_test_score`` has its own, also
covered; Optuna's ``OptunaSearchCV`` calls ``cross_validate``), in the main process and in joblib
workers alike. :func:`check_split_keeps_queries`, called from ``fit`` and from a scorer, finds
that function's frame up the call stack, puts both sides' query ids back in row order, and
refuses when two adjacent rows of one query are on different sides.

It refuses only then: outside model selection, on splits by query (``GroupKFold``,
``GroupShuffleSplit``, ``LeaveOneGroupOut`` with ``groups=qid``), or when the ids it is called
with are not that split's (an estimator fitted on other data inside a split), it does nothing.
It needs ``qid`` routed to the scorer as well as to ``fit``, which the boostplug rankers'
``score`` and :func:`boostplug.metrics.make_scorer` request by default.
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike

from ._validation import show
from .groups import cut_queries, group_ptr_of_runs

__all__ = ["check_split_keeps_queries", "QuerySplitWarning", "SPLIT_BY_QUERY"]

#: How to split by query instead, for messages.
SPLIT_BY_QUERY = (
    "split by query: cv=GroupKFold(n_splits) (or GroupShuffleSplit, LeaveOneGroupOut) with groups=qid, "
    "e.g. GridSearchCV(...).fit(X, y, qid=qid, groups=qid) or cross_validate(..., params={'qid': qid, "
    "'groups': qid}), with sklearn.set_config(enable_metadata_routing=True)"
)



class QuerySplitWarning(UserWarning):
    """Issued (once, by Python's default filter) beside the ``ValueError`` that refuses a split
    cutting queries: some callers catch that error and hide it, such as Optuna's
    ``OptunaSearchCV``, which records the trial as failed, or ``error_score=nan`` searches
    whose only sign would otherwise be NaN scores."""


_WARNING = (
    "a cross-validation split cuts queries (rows of one query in both its training and test part), which "
    "inflates its score, so boostplug refused it with a ValueError; " + SPLIT_BY_QUERY
)

#: scikit-learn's functions that fit and score one split: name -> (where the training side's
#: routed metadata is, where the test side's is). Both have ``train`` and ``test`` row indices.
_SPLIT_RUNNERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "_fit_and_score": (("fit_params", "score_params_train"), ("score_params_test",)),
    "_permutation_test_score": (("fit_params_train",), ("score_params_test",)),
}
_VALIDATION_MODULE = "sklearn.model_selection._validation"

#: Frames searched above the caller: fit -> _fit_and_score is one, a scorer under
#: scikit-learn's multi-metric scorer or a Pipeline a few more.
_SEARCH_DEPTH = 16


def _runner_codes() -> dict[Any, tuple[tuple[str, ...], tuple[str, ...]]]:
    # Not imported here: if scikit-learn's model selection is not loaded, no split is running.
    module = sys.modules.get(_VALIDATION_MODULE)
    if module is None:
        return {}
    codes = {}
    for name, sides in _SPLIT_RUNNERS.items():
        fn = getattr(module, name, None)
        code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
        if code is not None:
            codes[code] = sides
    return codes


def _routed_qid(frame_locals: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        params = frame_locals.get(name)
        if isinstance(params, Mapping) and params.get("qid") is not None:
            return params["qid"]
    return None


def _same_ids(a: Any, b: Any) -> bool:
    return a is b or bool(np.array_equal(np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)))


def _split_runner(frame: FrameType | None) -> tuple[FrameType, tuple[tuple[str, ...], tuple[str, ...]]] | None:
    codes = _runner_codes()
    if not codes:
        return None
    for _ in range(_SEARCH_DEPTH):
        if frame is None:
            return None
        sides = codes.get(frame.f_code)
        if sides is not None:
            return frame, sides
        frame = frame.f_back
    return None


def check_no_row_pairs_in_split(pairs: Any, who: str) -> None:
    """``ValueError`` when row-index ``pairs`` reach ``fit`` inside a scikit-learn split: routing
    hands a ``(n_pairs, 2)`` array to every fold whole (it slices only per-row arrays), so its row
    numbers would name other rows of the fold. Keyed pairs follow the fold's rows; nothing to do
    for them, nor outside model selection."""
    from .keyed_pairs import KeyedPairs

    if pairs is None or isinstance(pairs, KeyedPairs) or _split_runner(sys._getframe(1)) is None:
        return
    raise ValueError(f"{who}: pairs are row indices of the whole data set, and scikit-learn passes them to every "
                     "fold unchanged, where those numbers name other rows; pass them as "
                     "boostplug.keyed_pairs.KeyedPairs with doc= (one key per row), which each fold maps onto its "
                     "own rows")


def check_split_keeps_queries(qid: ArrayLike | None, who: str) -> None:
    """Raise ``ValueError`` when called (from ``fit`` or a scorer, with the ``qid`` it got)
    within a scikit-learn cross-validation split that puts rows of one query in both its
    training and its test part; do nothing anywhere else (see the module notes).

    Args:
        qid: the query ids the caller got (``None``: nothing to check).
        who: the caller, for the message (``"LGBMRanker.fit"``).
    """
    if qid is None:
        return
    found = _split_runner(sys._getframe(1))
    if found is None:
        return
    frame, (train_names, test_names) = found
    scope = frame.f_locals
    train, test = scope.get("train"), scope.get("test")
    train_qid, test_qid = _routed_qid(scope, train_names), _routed_qid(scope, test_names)
    if train is None or test is None or train_qid is None or test_qid is None:
        return  # the scorer does not request qid: the test side's queries are unknown
    train, test = np.asarray(train).reshape(-1), np.asarray(test).reshape(-1)
    train_qid, test_qid = np.asarray(train_qid).reshape(-1), np.asarray(test_qid).reshape(-1)
    if train_qid.shape != train.shape or test_qid.shape != test.shape:
        return
    if not (_same_ids(qid, train_qid) or _same_ids(qid, test_qid)):
        return  # called on other data than this split's (a model fitted inside the estimator)
    _refuse_cut_queries(train, test, train_qid, test_qid, who)


def _refuse_cut_queries(train: np.ndarray, test: np.ndarray, train_qid: np.ndarray, test_qid: np.ndarray,
                        who: str) -> None:
    """Refuse when two adjacent rows of the data (row indices ``i`` and ``i + 1``) with the same
    query id are on different sides, or one row is on both.

    Adjacent rows with the same id belong to one query for certain (a query's rows are
    adjacent). Rows the split leaves out are unknown, so a query id seen on both sides of
    such a gap may be two queries (two files concatenated, each numbered from 0) and is not
    refused: splitters that ignore groups cut so many queries that some cut lies between
    adjacent rows.
    """
    rows = np.concatenate([train, test])
    order = np.argsort(rows, kind="stable")
    rows, ids = rows[order], np.concatenate([train_qid, test_qid])[order]
    # Stretches of adjacent rows with one id: each lies within one query.
    breaks = (ids[1:] != ids[:-1]) | (np.diff(rows) > 1)
    gp = group_ptr_of_runs(np.cumsum(np.r_[0, breaks]))
    cut, held = cut_queries(gp, np.flatnonzero(order < train.shape[0]))
    if not cut.size:
        return
    q = int(cut[0])
    lo, hi = int(gp[q]), int(gp[q + 1])
    in_train = int(held[0])
    # One text wherever it comes from, so that the default filter shows it once.
    warnings.warn(_WARNING, QuerySplitWarning, stacklevel=3)
    every_row = rows[-1] - rows[0] + 1 == np.unique(rows).shape[0]  # no gaps: stretches are whole queries
    count = f"; {cut.size} of {gp.shape[0] - 1} queries cut in all" if every_row else ""
    raise ValueError(
        f"{who}: this cross-validation split cuts queries: query id {show(ids[lo])} has {in_train} rows in the "
        f"training part and {hi - lo - in_train} in the test part (rows {int(rows[lo])} to {int(rows[hi - 1])} "
        f"of the data{count}), so documents of one query sit in both training and validation and the validation "
        "score is inflated. Splitters that ignore groups (KFold, ShuffleSplit, StratifiedKFold...) split rows; "
        f"{SPLIT_BY_QUERY}"
    )
