"""Preference pairs keyed by (query, document): pairs that travel with their rows.

Row-index pairs (``pairs=[[i, j], ...]``) belong to one matrix: a cross-validation fold, a
subset or a Dask partition renumbers the rows and the pairs read other documents. A
:class:`KeyedPairs` table names each pair's query and its two documents instead, and every
training set carries one ``(qid, doc)`` key per row; the pairs are mapped onto whatever rows a
set holds (:meth:`KeyedPairs.rows`), so any subset of whole queries trains on its own pairs.

Which pairs a set keeps, and which keys are refused: docs/clicks.md, "Cross-validation,
GridSearchCV and early stopping on click pairs". Keys are compared exactly, whatever their integer
types (uint64 ids with int64 ones, ids above 2**53: :func:`exact_common`).

Example:
    >>> import numpy as np
    >>> kp = KeyedPairs(query=["a", "a", "b"], better=[10, 11, 20], worse=[11, 12, 21])
    >>> qid = np.array(["a", "a", "a"]); doc = np.array([12, 11, 10])
    >>> kp.rows(qid, doc)[0]          # query "b" has no row here: its pair is left out
    array([[2, 1],
           [1, 0]])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import INT64_MAX, show

__all__ = ["KeyedPairs", "pair_rows", "row_index", "row_keys", "join_keys", "codes_together", "exact_common",
           "given_row_params", "given_keyed_params", "params_on_rows", "NO_KEYS"]

#: Distinct query ids (and document keys) one join can pack into an int64 key (31 bits each).
_MAX_CODES = 1 << 31
#: The largest integer below which every integer is exact in float64.
_FLOAT_EXACT = 1 << 53
_NUMBERS = (int, float, np.integer, np.floating)


def _kind(a: np.ndarray) -> str:
    """The comparable family of an id array: numbers (an object array of Python or numpy numbers
    too: ids beyond 64 bits, or mixed in :func:`exact_common`), text or Python objects."""
    if a.dtype.kind == "O" and a.size and all(isinstance(x, _NUMBERS) for x in a.ravel().tolist()):
        return "number"
    return "number" if a.dtype.kind in "biuf" else "text" if a.dtype.kind in "US" else "object"


def exact_common(*arrays: np.ndarray) -> list[np.ndarray]:
    """Number arrays of ids in one dtype that holds every value exactly, where numpy's common type
    would not: uint64 with a signed integer type (numpy's float64 rounds ids above 2**53, so that
    distinct ids compare equal) goes to int64 when the unsigned ids fit, to uint64 when the signed
    ones are all >= 0, else to Python ints; integers with floats go to Python numbers unless every
    integer is exact in float64 (Python compares an int with a float exactly). Other arrays are
    returned as they are."""
    full = [a for a in arrays if a.size]
    if len({a.dtype for a in full}) < 2 or any(_kind(a) != "number" for a in full):
        return list(arrays)
    common = np.result_type(*full)
    ints = [a for a in full if a.dtype.kind in "biu"]
    if len(ints) == len(full):
        if common.kind in "biu":
            return list(arrays)  # numpy's own promotion is exact
        if all(int(a.max()) <= INT64_MAX for a in ints if a.dtype.kind == "u"):
            return [a.astype(np.int64) for a in arrays]
        if all(int(a.min()) >= 0 for a in ints if a.dtype.kind != "u"):
            return [a.astype(np.uint64) for a in arrays]
    elif common.kind == "f" and common.itemsize >= 8 and all(-_FLOAT_EXACT <= int(a.min()) and int(a.max()) <= _FLOAT_EXACT for a in ints):
        return [a.astype(common) for a in arrays]
    return [a.astype(object) for a in arrays]


def codes_together(*arrays: np.ndarray, what: str) -> list[NDArray[np.int64]]:
    """Shared dense codes of several arrays of ids (equal ids get equal codes, compared exactly:
    :func:`exact_common`); a ``TypeError`` when they are of different families (numbers against
    text: numpy would compare them as text)."""
    kinds = {_kind(a) for a in arrays if a.size}
    if len(kinds) > 1:
        dtypes = sorted({a.dtype.name for a in arrays if a.size})
        raise TypeError(f"the {what} cannot be compared (dtypes {dtypes}); give both the same type of id")
    try:
        _, inv = np.unique(np.concatenate(exact_common(*arrays)), return_inverse=True)
    except TypeError:
        raise TypeError(f"the {what} cannot be compared (mixed Python types); give both the same type of id") from None
    inv = inv.reshape(-1).astype(np.int64)
    if inv.size and int(inv.max()) >= _MAX_CODES:
        raise ValueError(f"more than {_MAX_CODES - 1} distinct {what}")
    return np.split(inv, np.cumsum([a.shape[0] for a in arrays[:-1]]))


def row_keys(qid: ArrayLike, doc: ArrayLike, n_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(qid, doc)`` as 1-d arrays of one key per row (``n_rows`` of them when given)."""
    q, d = np.asarray(qid), np.asarray(doc)
    if q.ndim != 1:
        raise ValueError(f"qid must be one-dimensional (one query id per row), got shape {q.shape}")
    if d.ndim != 1 or d.shape != q.shape:
        raise ValueError(f"doc must hold one document key per row ({q.shape[0]}), got shape {d.shape}")
    if n_rows is not None and q.shape[0] != n_rows:
        raise ValueError(f"qid and doc have {q.shape[0]} keys but the data has {n_rows} rows")
    return q, d


def join_keys(q_rows: np.ndarray, d_rows: np.ndarray, query: np.ndarray,
              docs: np.ndarray) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.bool_]]:
    """``(found, rows, query_here)`` of the documents ``docs`` (``(k, m)``: ``m`` keys of query
    ``query[i]`` on line ``i``) among rows keyed ``(q_rows, d_rows)``: whether each has a row, that
    row (0 where not found), and whether line ``i``'s query has any row. Two rows with the same
    key are a ``ValueError`` naming them."""
    n = q_rows.shape[0]
    q_code_rows, q_code = codes_together(q_rows, query, what="query ids")
    d_code_rows, d_code = codes_together(d_rows, docs.reshape(-1), what="document keys")
    table = (q_code_rows << 32) | d_code_rows
    order = np.argsort(table, kind="stable")
    sorted_keys = table[order]
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if dup.size:
        r1, r2 = sorted(int(r) for r in order[dup[0]:dup[0] + 2])
        raise ValueError(f"rows {r1} and {r2} have the same (qid, doc) = ({show(q_rows[r1])}, {show(d_rows[r1])}): "
                         "each document must appear once per query")
    query_here = np.isin(q_code, q_code_rows)
    if not n:
        return np.zeros(docs.shape, bool), np.zeros(docs.shape, np.int64), query_here
    want = (np.repeat(q_code, docs.shape[1]) << 32) | d_code
    pos = np.minimum(np.searchsorted(sorted_keys, want), n - 1)
    found = sorted_keys[pos] == want
    rows = np.where(found, order[pos], 0)
    return found.reshape(docs.shape), rows.reshape(docs.shape), query_here


def _ids(value: ArrayLike, name: str) -> np.ndarray:
    a = np.array(value)
    if a.ndim != 1:
        raise ValueError(f"KeyedPairs {name} must be one-dimensional (one entry per pair), got shape {a.shape}")
    a.setflags(write=False)
    return a


class KeyedPairs:
    """Preference pairs named by keys: in query ``query[k]``, document ``better[k]`` is preferred
    to document ``worse[k]``, with optional ``weight[k]`` (finite, non-negative).

    Query ids and document keys are whatever identifies them in your data (numbers or strings);
    each training set carries the same keys per row (``qid=`` and ``doc=``). Pass the table where
    row-index pairs go (QBRank's ``pairs=``, a booster's ``fit(pairs=...)``): its weights then
    become the per-pair weights (QBRank's ``pair_weights``). ``boostplug.clicks.Preferences.keyed()``
    gives the click preferences in this form.

    The table has no ``len()`` on purpose: scikit-learn slices any fit parameter whose length
    equals the number of rows, and a table must reach every fold whole (:attr:`n_pairs`).
    """

    __slots__ = ("query", "better", "worse", "weight")

    def __init__(self, query: ArrayLike, better: ArrayLike, worse: ArrayLike,
                 weight: ArrayLike | None = None) -> None:
        q, b, w = _ids(query, "query"), _ids(better, "better"), _ids(worse, "worse")
        if not q.shape == b.shape == w.shape:
            raise ValueError(f"KeyedPairs query, better and worse must have one entry per pair, got lengths "
                             f"{q.shape[0]}, {b.shape[0]} and {w.shape[0]}")
        code_b, code_w = codes_together(b, w, what="document keys of better and worse")  # exact: not b == w
        same = np.flatnonzero(code_b == code_w)
        if same.size:
            k = int(same[0])
            raise ValueError(f"KeyedPairs pair {k} prefers document {show(b[k])} of query {show(q[k])} to itself")
        wt = None
        if weight is not None:
            wt = np.array(weight, dtype=np.float64)
            if wt.shape != q.shape:
                raise ValueError(f"KeyedPairs weight must have one entry per pair ({q.shape[0]}), got shape {wt.shape}")
            bad = np.flatnonzero(~np.isfinite(wt) | (wt < 0))
            if bad.size:
                k = int(bad[0])
                raise ValueError(f"KeyedPairs weights must be finite and non-negative; weight[{k}] is {float(wt[k])!r}")
            wt.setflags(write=False)
        for name, value in (("query", q), ("better", b), ("worse", w), ("weight", wt)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("KeyedPairs is read-only; build a new table")

    @property
    def n_pairs(self) -> int:
        return int(self.query.shape[0])

    def __repr__(self) -> str:
        n_q = np.unique(self.query).size if self.n_pairs else 0
        return f"KeyedPairs(n_pairs={self.n_pairs}, n_queries={n_q}, weighted={self.weight is not None})"

    def __reduce__(self) -> tuple[Callable[..., "KeyedPairs"], tuple[Any, ...]]:
        return KeyedPairs, (self.query, self.better, self.worse, self.weight)

    def __deepcopy__(self, memo: dict[int, Any]) -> "KeyedPairs":
        return self  # read-only: scikit-learn's clone may share it

    def rows(self, qid: ArrayLike, doc: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.float64] | None]:
        """The pairs as row indices of the rows keyed ``(qid, doc)``, preferred row first, and their
        weights (``None`` when the table has none).

        Pairs of queries without a row here are left out; a document missing from its query's rows
        is a ``ValueError`` naming the pair (a document of another query: a pair across queries)."""
        q_rows, d_rows = row_keys(qid, doc)
        docs = (np.stack(exact_common(self.better, self.worse), axis=1) if self.n_pairs else  # not through float64
                np.zeros((0, 2), np.int64))
        found, rows, here = join_keys(q_rows, d_rows, self.query, docs)
        lost = np.flatnonzero(here & ~found.all(axis=1))
        if lost.size:
            k = int(lost[0])
            side = "better" if not found[k, 0] else "worse"
            key = docs[k, 0] if side == "better" else docs[k, 1]
            elsewhere = np.flatnonzero(d_rows == key) if d_rows.dtype.kind == docs.dtype.kind else np.zeros(0, int)
            hint = (f"; row {int(elsewhere[0])} has that document key in query {show(q_rows[elsewhere[0]])}: a pair "
                    "across two queries" if elsewhere.size else "")
            raise ValueError(f"KeyedPairs pair {k}: query {show(self.query[k])} has rows here but none with "
                             f"{side} document {show(key)}{hint} ({lost.size} such pairs); every document of a "
                             "pair must be a row of its query")
        pairs = np.ascontiguousarray(rows[here], dtype=np.int64).reshape(-1, 2)
        return pairs, (None if self.weight is None else self.weight[here].copy())


# ---- an objective's row parameters: row indices of one set, or keyed tables that follow the rows ----
def _frozen(rows: NDArray[np.int64]) -> NDArray[np.int64]:
    rows = np.array(rows)
    rows.setflags(write=False)
    return rows


def pair_rows(value: Any, what: str, n_docs: int | None) -> Any:
    """A ``"rows"`` parameter's ``convert`` (:class:`~boostplug.objectives.Param`): row-index pairs
    (preferred first) checked against ``n_docs`` rows (``None``: any), read-only, or a
    :class:`KeyedPairs` table before any data (a ``TypeError`` when an objective is bound to rows
    directly, ``n_docs`` given: a table names documents)."""
    if isinstance(value, KeyedPairs):
        if n_docs is None:
            return value
        raise TypeError(f"{what} is a KeyedPairs table, which names documents, not rows: bind the objective "
                        "through a boostplug adapter or ranker given each row's qid and doc keys, or pass "
                        "keyed.rows(qid, doc)'s row-index pairs")
    from .pairs import check_pairs  # numba's: loaded when pairs are given, not by ``import boostplug.clicks``

    return _frozen(check_pairs(value, INT64_MAX if n_docs is None else n_docs, name=what))


def row_index(value: Any, what: str, n_docs: int | None) -> NDArray[np.int64]:
    """A ``"row_index"`` parameter's ``convert``: distinct row indices below ``n_docs``, read-only."""
    from .pairs import check_rows

    return _frozen(check_rows(value, INT64_MAX if n_docs is None else n_docs, name=what))


def given_row_params(objective: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters in ``params`` that hold row indices of one training set, as the registered
    ``objective`` declares them (``boostplug.objectives.get(name).row_params``): they cannot follow
    the rows into another set (a cv fold, a subset, a Dask worker's share). Keyed tables
    (:func:`given_keyed_params`) are not among them: they follow the rows."""
    return {k: params[k] for k in objective.row_params
            if params.get(k) is not None and not isinstance(params[k], KeyedPairs)}


def given_keyed_params(objective: Any, params: dict[str, Any]) -> dict[str, KeyedPairs]:
    """The row parameters in ``params`` given as :class:`KeyedPairs`: they are mapped onto each
    training set's rows (:func:`params_on_rows`)."""
    return {k: params[k] for k in objective.row_params if isinstance(params.get(k), KeyedPairs)}


#: How to give a training set its rows' keys, for messages.
NO_KEYS = ("{who}: {param} is a KeyedPairs table, and this training set carries no (qid, doc) key per row to map it "
           "onto; {how}")


def params_on_rows(objective: Any, params: dict[str, Any], qid: Any, doc: Any) -> dict[str, Any]:
    """``params`` with every keyed table mapped onto the rows keyed ``(qid, doc)``: row-index pairs,
    and the table's weights in the parameter the objective declares for them (``weights_in``)."""
    out = dict(params)
    declared = objective.loss_class.declared_params()
    for k, table in given_keyed_params(objective, params).items():
        pairs, weights = table.rows(qid, doc)
        out[k] = pairs
        if table.weight is None:
            continue
        target = declared[k].weights_in
        if target is None:
            raise ValueError(f"{objective.name}: {k} is a weighted KeyedPairs table, but {objective.name} takes no "
                             "weights for it; build the table without weight=")
        if params.get(target) is not None:
            raise ValueError(f"{objective.name}: {k} is a weighted KeyedPairs table and {target} is given too; the "
                             f"table's weights are its {target} (one per pair, following the pairs into every fold): "
                             f"leave {target} unset")
        out[target] = weights
    return out
