r"""The Yandex Relevance Prediction Challenge click log (WSCD 2012): tab-separated lines, each a
query action ``SessionID TimePassed Q QueryID RegionID URLID URLID ...`` (the result list, one
URLID per field) or a click action ``SessionID TimePassed C URLID``, a session's lines together
and in time order (the layout PyClick's ``YandexRelPredChallengeParser`` reads). TimePassed is
the time since the session started, in the log's units.

Read into a :class:`~boostplug.clicks.ClickLog` (one impression per query action; which field
gives each column, and which lines are refused: docs/clicks.md, "Reading real logs"). Bad lines:
``on_bad="raise"``, a ``ValueError`` naming the file and line; ``"skip"``, left out and counted in
the log's ``dropped`` report. A last line without its line end is a file cut short.

Example:
    >>> import pathlib, tempfile
    >>> from boostplug import clicks
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "clicklog.txt"
    >>> _ = path.write_text("7\t0\tQ\t174\t0\t1625\t1627\n7\t11\tC\t1627\n7\t15\tC\t1627\n")
    >>> log = clicks.read_yandex(path)
    >>> log.doc.tolist(), log.clicked.tolist(), log.order.tolist()
    ([1625, 1627], [False, True], [nan, 11.0])
    >>> clicks.preferences(clicks.YandexRelPred(path), "click>skip-above").preferred.tolist()  # streamed
    [1627]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .._sources import FILE_BATCH_ROWS, Batch, Report
from ..log import ClickLog, read_log
from ._lines import MALFORMED, FileLog, Lines, Rows, check_ended, integer, numbered_lines

__all__ = ["YandexRelPred", "read_yandex"]

UNSHOWN = "a click on a URL its session did not show"
REPEATED = "a query repeated in its session with other results"


@dataclass
class _Impression:
    query: int
    urls: list[int]
    dropped: bool = False
    first_click: dict[int, float] = field(default_factory=dict)  # URLID -> TimePassed of its first click


def _time(token: bytes) -> float:
    try:
        t = float(token)
    except ValueError:
        t = float("nan")
    if not abs(t) < float("inf"):
        raise ValueError(f"TimePassed {token!r} is not a number")
    return t


class _Session:
    """One session's impressions while its lines are read."""

    def __init__(self, sid: int) -> None:
        self.sid = sid
        self.impressions: list[_Impression] = []
        self.by_query: dict[int, int] = {}  # QueryID -> its impression
        self.showing: dict[int, int] = {}  # URLID -> the latest impression that showed it

    def add_rows(self, rows: Rows) -> None:
        for imp in (i for i in self.impressions if not i.dropped):
            for k, url in enumerate(imp.urls, 1):
                t = imp.first_click.get(url)
                rows.add(session=self.sid, query=imp.query, doc=url, position=k, clicked=t is not None,
                         order=float("nan") if t is None else t)


class YandexRelPred(FileLog):
    """The Yandex Relevance Prediction Challenge click log as a click-log source:
    :func:`boostplug.clicks.read_log` reads it whole, :func:`boostplug.clicks.preferences`
    streams it in batches of whole sessions.

    Args:
        paths: the log file (gzipped or plain text), or several read one after the other.
        batch_rows: rows per streamed batch (default: that of files).
    """

    what = "Yandex log"

    def __init__(self, paths: Any, *, batch_rows: int | None = None) -> None:
        super().__init__(paths, batch_rows)
        self.roles = {"session": "SessionID", "query": "QueryID", "doc": "URLID", "position": "place in the URL list",
                      "clicked": "click action", "order": "TimePassed"}

    def __repr__(self) -> str:
        return f"YandexRelPred({len(self.paths)} files)"

    def read(self, batch_rows: int = FILE_BATCH_ROWS, on_bad: str = "raise",
             report: Report = lambda *_: None) -> Iterator[Batch]:
        limit, lines = self._start(batch_rows, on_bad, report)
        rows = Rows({"session": np.int64, "query": np.int64, "doc": np.int64, "position": np.int64,
                     "clicked": np.int8, "order": np.float64})
        session: _Session | None = None
        for path in self.paths:
            for n, line, ended in numbered_lines(path):
                if not line:
                    continue
                try:
                    check_ended(ended)
                    fields = line.split(b"\t")
                    sid, action = self._head(fields)
                    t = _time(fields[1])
                    if action == b"Q":
                        query, urls = integer(fields[3], "QueryID"), [integer(u, "URLID") for u in fields[5:]]
                        integer(fields[4], "RegionID")
                    else:
                        url = integer(fields[3], "URLID")
                except ValueError as exc:
                    lines.bad(path, n, MALFORMED, str(exc), rows=1)
                    continue
                if session is None or sid != session.sid:
                    if session is not None:
                        session.add_rows(rows)
                        if len(rows) >= limit:
                            yield rows.batch()
                    session = _Session(sid)
                if action == b"Q":
                    self._query(session, query, urls, lines, path, n)
                else:
                    self._click(session, url, t, lines, path, n)
        if session is not None:
            session.add_rows(rows)
        yield rows.batch()  # the rest (an empty batch when there is none: an empty log)

    @staticmethod
    def _head(fields: list[bytes]) -> tuple[int, bytes]:
        action = fields[2] if len(fields) > 2 else b""
        if action == b"Q" and len(fields) >= 5 or action == b"C" and len(fields) == 4:
            return integer(fields[0], "SessionID"), action
        if action in (b"Q", b"C"):
            need = "at least 5" if action == b"Q" else "4"
            raise ValueError(f"a {action.decode()} line has {need} tab-separated fields, this one has {len(fields)}")
        raise ValueError(f"expected 'SessionID TimePassed Q QueryID RegionID URLID...' or 'SessionID TimePassed C "
                         f"URLID' (tab-separated), got {len(fields)} fields with action {action!r}")

    @staticmethod
    def _query(session: _Session, query: int, urls: list[int], lines: Lines, path: Path, n: int) -> None:
        if not urls:
            return  # nothing shown: no impression
        i = session.by_query.get(query)
        if i is not None and session.impressions[i].urls != urls:
            lines.bad(path, n, REPEATED, f"session {session.sid} shows query {query} again with other results",
                      impressions=1, rows=len(urls))
            i = None
            session.impressions.append(_Impression(query, urls, dropped=True))  # its clicks go with it
        elif i is None:
            session.by_query[query] = len(session.impressions)
            session.impressions.append(_Impression(query, urls))
        session.showing.update(dict.fromkeys(urls, len(session.impressions) - 1 if i is None else i))

    @staticmethod
    def _click(session: _Session, url: int, t: float, lines: Lines, path: Path, n: int) -> None:
        i = session.showing.get(url)
        if i is None:
            lines.bad(path, n, UNSHOWN, f"a click on URL {url}, which no earlier query of session {session.sid} "
                                        "showed", rows=1)
            return
        session.impressions[i].first_click.setdefault(url, t)


def read_yandex(paths: Any, *, on_bad: str = "raise") -> ClickLog:
    """The Yandex Relevance Prediction Challenge click log read whole into a
    :class:`~boostplug.clicks.ClickLog` (to stream it, give :class:`YandexRelPred` to
    :func:`boostplug.clicks.preferences`).

    Args:
        paths: the log file (gzipped or plain) or several.
        on_bad: ``"raise"``: a bad line is a ``ValueError`` naming its file and line, a bad
            impression one naming its session and query; ``"skip"``: left out and reported in
            ``.dropped``.
    """
    return read_log(YandexRelPred(paths), on_bad=on_bad)
