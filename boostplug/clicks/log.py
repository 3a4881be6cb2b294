"""Click logs in: one row per shown document, validated into impressions.

A click log is a table with one row per document shown in a result list. Its columns, by
role (the default column name is the role; ``columns={"session": "sid", ...}`` renames; the
user's guide: docs/clicks.md, "From a click log to a model"):

* ``session``: session or impression id;
* ``query``: query id (an impression is one ``(session, query)``: a session that issued
  several queries holds several impressions);
* ``doc``: document key (a row index into a feature matrix, or any id joined to one);
* ``position``: shown position, 1-based;
* ``clicked``: 0/1 (or ``False``/``True``);
* ``order`` (optional): time or sequence number of the click (read on clicked rows only;
  needed by ``last-click>skip-above`` and ``click>earlier-click``);
* ``dwell`` (optional): dwell time of the click (read on clicked rows only).

The optional columns are used when ``columns=`` names them or the table has a column of
that default name. Ids and keys may be integers or strings.

Every impression is checked (docs/reliability.md, "click logs"); a bad one is a ``ValueError``
naming its session, query and log row (0-based), or, with ``on_bad="skip"``, it is dropped whole,
counted by reason in the result's ``dropped`` report and announced by one warning. The refusals:

* positions not exactly ``1..n`` within an impression (gaps, repeats, 0, fractions, missing);
* a document shown twice in one impression;
* a click that is not 0 or 1 (or missing);
* a missing document key; a clicked row without its order (dwell) value when the log has
  an order (dwell) column, or a negative dwell;
* a row without a session or query id (that row alone is dropped under ``"skip"``).

Example:
    >>> from boostplug import clicks
    >>> log = clicks.read_log({"session": [1, 1, 1], "query": ["q", "q", "q"],
    ...                        "doc": ["a", "b", "c"], "position": [2, 1, 3], "clicked": [0, 0, 1]})
    >>> log.doc.tolist(), log.position.tolist(), log.n_impressions
    (['b', 'a', 'c'], [1, 2, 3], 1)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, show
from ..groups import group_ptr_from_sizes
from . import _sources
from ._sources import Batch

__all__ = ["ClickLog", "Dropped", "read_log", "ON_BAD"]

ON_BAD = ("raise", "skip")

# The refusal codes of boostplug.clicks._kernels.check_impressions, worded.
_REASONS = {
    1: "a missing document key",
    2: "positions not 1..n within the impression",
    3: "a document shown twice in the impression",
    4: "a click value that is not 0 or 1",
    5: "a click without its order/time",
    6: "a click without a valid dwell time",
}
_MISSING_ID = "a row without a session or query id"


class Table:
    """A table of columns by name (``columns()``)."""

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame, one column per entry of ``columns()`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns())  # type: ignore[attr-defined]


@dataclass
class Dropped:
    """What ``on_bad="skip"`` left out, by reason: impressions and rows dropped, and the first
    case of each reason in words (its session, query and row)."""

    impressions: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)

    @property
    def n_impressions(self) -> int:
        """Impressions dropped."""
        return sum(self.impressions.values())

    @property
    def n_rows(self) -> int:
        """Log rows dropped (those of the dropped impressions, and rows without an id)."""
        return sum(self.rows.values())

    def __bool__(self) -> bool:
        return self.n_rows > 0

    def add(self, reason: str, impressions: int, rows: int, example: str) -> None:
        """Count ``impressions`` and ``rows`` dropped for ``reason``."""
        self.impressions[reason] = self.impressions.get(reason, 0) + impressions
        self.rows[reason] = self.rows.get(reason, 0) + rows
        self.examples.setdefault(reason, example)

    def merge(self, other: "Dropped") -> None:
        """Add another report's counts to this one."""
        for reason in other.rows:
            self.add(reason, other.impressions.get(reason, 0), other.rows[reason], other.examples[reason])

    def __str__(self) -> str:
        if not self:
            return "nothing dropped"
        parts = [f"{self.impressions.get(r, 0)} impressions ({self.rows[r]} rows) with {r}, first: {self.examples[r]}"
                 for r in self.rows]
        return (f"dropped {self.n_impressions} impressions and {self.n_rows} rows of the click log: "
                + "; ".join(parts))


@dataclass(eq=False)
class ClickLog(Table):
    """A validated click log: columns of one row per shown document, sorted by impression, then
    by position. Built by :func:`read_log` (or :func:`boostplug.clicks.simulate`).

    Attributes:
        session, query, doc: ids and keys as given (one per row).
        position: int64, ``1..n`` within each impression.
        clicked: bool.
        order, dwell: float64 (NaN on rows without a click), or ``None`` without such a column.
        group_ptr: int64 offsets: impression ``i`` is rows ``group_ptr[i]:group_ptr[i+1]`` (each
            impression a query group, the offsets of :mod:`boostplug.groups`).
        dropped: what ``on_bad="skip"`` left out (:class:`Dropped`).
    """

    session: np.ndarray
    query: np.ndarray
    doc: np.ndarray
    position: NDArray[np.int64]
    clicked: NDArray[np.bool_]
    order: NDArray[np.float64] | None
    dwell: NDArray[np.float64] | None
    group_ptr: NDArray[np.int64]
    dropped: Dropped = field(default_factory=Dropped)

    def __len__(self) -> int:
        return int(self.clicked.shape[0])

    @property
    def n_impressions(self) -> int:
        """Number of impressions."""
        return int(self.group_ptr.shape[0] - 1)

    def __repr__(self) -> str:
        extra = "".join(f", {c}" for c in ("order", "dwell") if getattr(self, c) is not None)
        return (f"ClickLog(n_impressions={self.n_impressions}, n_rows={len(self)}, "
                f"clicks={int(self.clicked.sum())}{extra})")

    def columns(self) -> dict[str, np.ndarray]:
        """The columns by role (``order``/``dwell`` only when present): what :func:`read_log` takes."""
        return {c: getattr(self, c) for c in _sources.ROLES if getattr(self, c) is not None}

    def select(self, impressions: NDArray[np.bool_] | NDArray[np.integer]) -> "ClickLog":
        """The log of the chosen impressions (a boolean mask over impressions, or their indices,
        kept in log order), e.g. to hold sessions out for validation."""
        idx = np.asarray(impressions)
        if idx.dtype == bool:
            if idx.shape != (self.n_impressions,):
                raise ValueError(f"an impression mask needs shape ({self.n_impressions},), got {idx.shape}")
            idx = np.flatnonzero(idx)
        elif idx.dtype.kind not in "iu":
            raise TypeError(f"impressions must be a boolean mask or integer indices, got dtype {idx.dtype}")
        idx = np.unique(idx.astype(np.int64))
        if idx.size and (idx[0] < 0 or idx[-1] >= self.n_impressions):
            raise ValueError(f"impression index out of range [0, {self.n_impressions}): "
                             f"{int(idx[0] if idx[0] < 0 else idx[-1])}")
        ptr = self.group_ptr
        sizes = ptr[idx + 1] - ptr[idx]
        new_ptr = group_ptr_from_sizes(sizes)
        rows = np.repeat(ptr[idx] - new_ptr[:-1], sizes) + np.arange(int(new_ptr[-1]))
        cols = {c: None if getattr(self, c) is None else getattr(self, c)[rows] for c in _sources.ROLES}
        return ClickLog(**cols, group_ptr=new_ptr)


def _a_number(value: object) -> bool:
    """A number, or text that spells one (a CSV column pyarrow read as text because of another value)."""
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def _float(values: np.ndarray, nulls: NDArray[np.bool_] | None, role: str, column: str,
           rows: NDArray[np.int64]) -> NDArray[np.float64]:
    if values.dtype.kind not in "biuf":
        at = next((k for k, v in enumerate(values.tolist()) if not _a_number(v)), None)
        where = "" if at is None else f"; log row {int(rows[at])} has {show(values[at])}, not a number"
        raise TypeError(f"the {role} column {column!r} must be numeric, got dtype {values.dtype}{where}")
    out = values.astype(np.float64)
    if nulls is not None:
        out[nulls] = np.nan
    return out


def _codes(values: np.ndarray, role: str, column: str) -> NDArray[np.int64]:
    try:
        return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values[:1000]})
        raise TypeError(f"the {role} column {column!r} mixes kinds of ids ({', '.join(kinds)}) that cannot be "
                        f"compared; give every id the same type") from None


def _changes(session: np.ndarray, query: np.ndarray) -> NDArray[np.bool_]:
    """Where consecutive rows belong to different (session, query) impressions (length n - 1)."""
    return (session[1:] != session[:-1]) | (query[1:] != query[:-1])


def _impression_order(values: dict[str, np.ndarray], position: NDArray[np.float64],
                      roles: dict[str, str]) -> NDArray[np.int64] | None:
    """The permutation sorting rows by (session, query, position), stable; ``None`` when the rows
    are already so grouped (each impression contiguous, positions ascending within it)."""
    s, q = values["session"], values["query"]
    if s.shape[0] < 2:
        return None
    cut = _changes(s, q)
    inside = ~cut
    if np.all(position[1:][inside] > position[:-1][inside]):
        starts = np.concatenate(([0], np.flatnonzero(cut) + 1))
        s_run = _codes(s[starts], "session", roles["session"])
        q_run = _codes(q[starts], "query", roles["query"])
        if np.unique((s_run << 32) | q_run).shape[0] == starts.shape[0]:
            return None
    s_code = _codes(s, "session", roles["session"])
    q_code = _codes(q, "query", roles["query"])
    return np.lexsort((position, q_code, s_code))  # stable: equal positions keep log order


def _validate(batch: Batch, roles: dict[str, str], on_bad: str, dropped: Dropped, streamed: bool = False) -> ClickLog:
    """One batch of rows (whole sessions) as a :class:`ClickLog`: sorted by (session, query,
    position), each impression checked; bad ones raise or are dropped (``dropped`` counts them).
    ``streamed``: the batch is part of a file read in batches (a refusal of positions then
    says that a session split across the file shows up that way)."""
    from . import _kernels as K

    values, nulls = batch.values, batch.nulls
    n = len(batch)
    rows = np.arange(batch.first_row, batch.first_row + n, dtype=np.int64)
    # rows without an id belong to no impression
    missing = np.zeros(n, dtype=bool)
    for role in ("session", "query"):
        if nulls[role] is not None:
            missing |= nulls[role]
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        what = "session" if nulls["session"] is not None and nulls["session"][first] else "query"
        message = f"log row {int(rows[first])} has no {what} id"
        if on_bad == "raise":
            raise ValueError(f"click log: {message} (on_bad='skip' drops such rows and reports them)")
        dropped.add(_MISSING_ID, 0, int(missing.sum()), message)
        batch = batch.take(np.flatnonzero(~missing), batch.first_row)
        values, nulls = batch.values, batch.nulls
        rows = rows[~missing]
        n = len(batch)

    if n == 0:  # no row (an empty table or a file with a header alone): no value to check, an empty log
        optional = {c: np.zeros(0) if c in values else None for c in ("order", "dwell")}
        return ClickLog(values["session"], values["query"], values["doc"], np.zeros(0, np.int64), np.zeros(0, bool),
                        **optional, group_ptr=np.zeros(1, np.int64), dropped=dropped)
    # the numeric columns as float64 (NaN where missing): position, clicked, and order/dwell when present
    num = {role: _float(values[role], nulls[role], role, roles[role], rows)
           for role in ("position", "clicked", "order", "dwell") if role in values}
    d_code = _codes(values["doc"], "doc", roles["doc"]) if values["doc"].dtype.kind not in "biu" \
        else values["doc"].astype(np.int64)
    d_null = np.zeros(n, dtype=bool) if nulls["doc"] is None else nulls["doc"]
    sort = _impression_order(values, num["position"], roles)  # None: already in order (simulated logs, most real ones)
    session, query, doc = values["session"], values["query"], values["doc"]
    if sort is not None:
        num = {role: v[sort] for role, v in num.items()}
        d_code, rows, d_null = d_code[sort], rows[sort], d_null[sort]
        session, query, doc = session[sort], query[sort], doc[sort]
    starts = np.flatnonzero(_changes(session, query)) + 1
    ptr = np.concatenate(([0], starts, [n])).astype(np.int64)
    n_imp = ptr.shape[0] - 1
    reason = np.empty(n_imp, dtype=np.int64)
    where = np.empty(n_imp, dtype=np.int64)
    empty = np.empty(0)
    K.check_impressions(ptr, num["position"], d_code, d_null, num["clicked"], num.get("order", empty),
                        num.get("dwell", empty), reason, where)
    bad = np.flatnonzero(reason != K.OK)
    sel: NDArray[np.bool_] | slice = slice(None)
    if bad.size:
        cols = dict(num, session=session, query=query, doc=doc)
        if on_bad == "raise":
            i = int(bad[np.argmin(rows[where[bad]])])  # the bad impression met first in the log
            hint = ("; the log is read in batches, so each session's rows must be together in the file (if they "
                    "are not, sort it by session or read it whole with read_log)"
                    if streamed and reason[i] == K.BAD_POSITIONS else "")
            raise ValueError("click log: " + _refusal(int(reason[i]), int(where[i]), ptr[i], ptr[i + 1], rows, cols)
                             + hint + " (on_bad='skip' drops such impressions and reports them)")
        for code in np.unique(reason[bad]):
            of = bad[reason[bad] == code]
            i = int(of[np.argmin(rows[where[of]])])
            dropped.add(_REASONS[int(code)], int(of.size), int((ptr[of + 1] - ptr[of]).sum()),
                        _refusal(int(code), int(where[i]), ptr[i], ptr[i + 1], rows, cols))
        good = reason == K.OK
        sel = np.repeat(good, np.diff(ptr))
        ptr = group_ptr_from_sizes(np.diff(ptr)[good])
    clicked = num["clicked"][sel] == 1.0
    return ClickLog(
        session=session[sel], query=query[sel], doc=doc[sel],
        position=num["position"][sel].astype(np.int64), clicked=clicked,
        **{c: np.where(clicked, num[c][sel], np.nan) if c in num else None for c in ("order", "dwell")},
        group_ptr=ptr, dropped=dropped)


def _refusal(code: int, k: int, a: int, b: int, rows: NDArray[np.int64], cols: dict[str, np.ndarray]) -> str:
    """Why impression rows ``a:b`` (sorted order) is refused, naming its session, query and rows
    (``cols``: the columns by role, sorted; the numeric ones as float64)."""
    position, clicked, dwell = cols["position"], cols["clicked"], cols.get("dwell")
    head = (f"session {show(cols['session'][k])}, query {show(cols['query'][k])} "
            f"(log rows {', '.join(str(int(r)) for r in np.sort(rows[a:b])[:12])}{', ...' if b - a > 12 else ''})")
    row = int(rows[k])
    if code == 1:
        detail = f"log row {row} has no document key"
    elif code == 2:
        shown = [None if np.isnan(p) else (int(p) if p == int(p) else float(p)) for p in position[a:b][:12]]
        which = (f"log row {row} has no position" if np.isnan(position[k]) else
                 f"log row {row} has {show(_number(position[k]))} where {k - a + 1} was expected")
        detail = f"positions must be 1..n within an impression; they are {shown}{' ...' if b - a > 12 else ''} ({which})"
    elif code == 3:
        detail = f"document {show(cols['doc'][k])} is shown twice (again at log row {row})"
    elif code == 4:
        detail = f"log row {row} has clicked = {show(_number(clicked[k]))}; clicks must be 0 or 1"
    elif code == 5:
        detail = f"log row {row} is a click without an order/time value"
    else:
        assert dwell is not None  # code 6 only comes from a dwell column
        detail = f"log row {row} is a click with dwell {show(_number(dwell[k]))}; dwell must be >= 0"
    return f"{head}: {detail}"


def _number(v: float) -> float | int:
    """A float that holds an integer as that integer (``4``, not ``4.0``), for messages."""
    return int(v) if np.isfinite(v) and v == int(v) else float(v)


def warn_dropped(dropped: Dropped, kept: int) -> None:
    """One warning saying what ``on_bad="skip"`` dropped (nothing is dropped silently), and a
    ``ValueError`` when it dropped every impression (``kept`` is 0): an empty result is no answer
    to a log in which nothing was valid."""
    if dropped and kept == 0:
        raise ValueError(f"boostplug.clicks: on_bad='skip' dropped every impression of the log, nothing is left: "
                         f"{dropped}")
    if dropped:
        warnings.warn(f"boostplug.clicks: {dropped}", UserWarning, stacklevel=3)


def read_log(source: Any, *, columns: Mapping[str, str | None] | None = None, on_bad: str = "raise") -> ClickLog:
    """A click log, validated and sorted, in memory.

    Args:
        source: a pandas, polars or pyarrow table, a mapping of column name to array, a
            ``.parquet`` / ``.csv`` file or a raw-format log (:mod:`boostplug.clicks.formats`),
            read whole (:func:`boostplug.clicks.preferences` streams files instead). A
            :class:`ClickLog` is returned as is.
        columns: role -> column name, for columns not named after their role (module docstring).
        on_bad: ``"raise"`` (default): a bad impression is a ``ValueError`` naming its session,
            query and row; ``"skip"``: it is dropped, counted in ``.dropped`` and announced by a
            warning (a ``ValueError`` when every impression is dropped).
    """
    if isinstance(source, ClickLog):
        return source
    on_bad = check_choice("on_bad", on_bad, ON_BAD)
    if _sources.kind_of(source) in ("dask", "spark"):
        raise TypeError("read_log reads a log into memory; pass a Dask or Spark DataFrame to "
                        "boostplug.clicks.preferences, which reads it partition by partition")
    dropped = Dropped()
    roles, parts = _sources.batches(source, columns, on_bad=on_bad, report=dropped.add)
    log = _validate(Batch.concat(list(parts)), roles, on_bad, dropped)
    warn_dropped(dropped, log.n_impressions)
    return log


def stream(source: Any, columns: Mapping[str, str | None] | None, on_bad: str,
           batch_rows: int | None = None) -> tuple[dict[str, str], Iterator[ClickLog], Dropped]:
    """``(roles, pieces, report)``: the log's columns by role, its validated pieces read in batches
    (each holding whole sessions), and the report the pieces add to. A file's sessions must each
    be contiguous (any session order): a session that reappears after other sessions is a
    ``ValueError`` naming it and the row."""
    dropped = Dropped()
    roles, parts = _sources.batches(source, columns, batch_rows or _sources.FILE_BATCH_ROWS, on_bad, dropped.add)

    def run() -> Iterator[ClickLog]:
        seen = np.zeros(0)  # sorted session ids of earlier pieces
        carry: Batch | None = None
        for part in parts:
            if not len(part):
                continue
            batch = part if carry is None else Batch.concat([carry, part])
            s = batch.values["session"]
            s_null = batch.nulls["session"]
            # the last session may go on in the next batch: hold its trailing run back
            tail = len(batch)
            while tail > 0 and s[tail - 1] == s[len(batch) - 1] and not (s_null is not None and s_null[tail - 1]):
                tail -= 1
            if tail == 0:
                carry = batch
                continue
            # the held-back tail is checked too (it may repeat a session of the head), not yet recorded
            seen = _check_contiguous(batch, seen, but_last=tail < len(batch))
            head = batch.take(slice(0, tail), batch.first_row)
            carry = batch.take(slice(tail, None), batch.first_row + tail)
            yield _validate(head, roles, on_bad, dropped, streamed=True)
        if carry is not None and len(carry):
            _check_contiguous(carry, seen)
            yield _validate(carry, roles, on_bad, dropped, streamed=True)

    return roles, run(), dropped


def _check_contiguous(batch: Batch, seen: np.ndarray, but_last: bool = False) -> np.ndarray:
    """``seen`` (sorted session ids) with this batch's sessions added (``but_last``: all but the
    session of its last row); a session already seen, or not contiguous within the batch, is a
    ``ValueError``."""
    s = batch.values["session"]
    ok = np.ones(len(batch), bool) if batch.nulls["session"] is None else ~batch.nulls["session"]
    idx = np.flatnonzero(ok)
    sv = s[idx]
    run_start = np.concatenate(([True], sv[1:] != sv[:-1])) if sv.size else np.zeros(0, bool)
    firsts = idx[run_start]
    ids = s[firsts]
    u, counts = np.unique(ids, return_counts=True)
    bad = np.flatnonzero(counts > 1)  # a session in two runs of this batch, else one of an earlier batch
    if not bad.size and seen.size:
        bad = np.flatnonzero(seen[np.minimum(np.searchsorted(seen, u), seen.size - 1)] == u)
    if bad.size:
        dup = u[bad[0]]
        at = batch.first_row + firsts[ids == dup]
        since = f" (its rows start at row {int(at[0])})" if at.size > 1 else ""
        raise ValueError(f"click log: session {show(dup)} reappears at log row {int(at[1] if since else at[0])} after "
                         f"other sessions{since}; a log read in batches must keep each session's rows together: sort "
                         "the file by session, or read it whole with boostplug.clicks.read_log(...)")
    new = u[u != ids[-1]] if but_last and ids.size else u
    if not seen.size:
        return new
    return np.insert(seen, np.searchsorted(seen, new), new)  # new ids, sorted: a linear merge keeps seen sorted
