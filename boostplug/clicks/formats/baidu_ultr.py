r"""Baidu-ULTR's raw training parts (``part-00000.gz``, ...): tab-separated lines, a query line
(``Qid, Query, Query Reformulation``: at most 3 fields) followed by one line per shown document
(``Pos, URL MD5, Title, Abstract, Multimedia Type, Click, -, -, Skip, SERP Height, Displayed Time,
..., Dwelling Time (field 17), ...``), as the dataset's README lays them out; lines are told
apart by their field count, as the dataset's own loader and baidu-ultr-parser do.

Read into a :class:`~boostplug.clicks.ClickLog`: one impression per query line (``session`` its
number among the parts read, from 0); which field gives each column, and which lines are refused:
docs/clicks.md, "Reading real logs". Ids are read as UTF-8 text, strictly (replacement characters
would merge distinct ids), and a part cut inside its last line is refused: a document line cut in
its first three fields reads as a query line.

Example:
    >>> import gzip, pathlib, tempfile
    >>> from boostplug import clicks
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> def document(pos, url, click, dwell):  # 32 fields; titles and abstracts are token ids
    ...     return "\t".join([str(pos), url, "1\x012", "3", "0", str(click)] + ["0"] * 10 + [str(dwell)] + ["0"] * 15)
    >>> with gzip.open(folder / "part-00001.gz", "wt") as f:
    ...     _ = f.write("\n".join(["1001\t5\x016\t", document(1, "a3f1", 0, 0), document(2, "9c2e", 1, 41.5)]) + "\n")
    >>> log = clicks.read_baidu_ultr(folder)
    >>> log.doc.tolist(), log.clicked.tolist(), log.dwell.tolist()
    (['a3f1', '9c2e'], [False, True], [nan, 41.5])
    >>> clicks.preferences(clicks.BaiduULTR(folder), "click>skip-above").preferred.tolist()  # streamed
    ['9c2e']
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..._validation import check_choice
from .._sources import FILE_BATCH_ROWS, Batch, Report
from ..log import ClickLog, read_log
from ._lines import CUT_SHORT, MALFORMED, FileLog, Lines, Rows, check_ended, integer, numbered_lines, text

__all__ = ["BaiduULTR", "read_baidu_ultr", "QUERY_KEYS"]

#: What identifies a query: the format's Qid, or the query's token ids.
QUERY_KEYS = ("qid", "tokens")

# 0-based fields of a document line (the dataset README's column table)
_POS, _URL, _CLICK, _DWELL = 0, 1, 5, 16
_QUERY_FIELDS = 3  # a line of at most this many fields is a query line


def _query_hash(tokens: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(tokens, digest_size=8).digest(), "little", signed=True)


class BaiduULTR(FileLog):
    """Baidu-ULTR's raw parts as a click-log source: :func:`boostplug.clicks.read_log` reads it
    whole, :func:`boostplug.clicks.preferences` streams it in batches of whole impressions.

    Args:
        paths: a part file (gzipped or plain text), a folder of parts (read in name order) or a
            list of either.
        query: ``"qid"`` (default): the query line's Qid; ``"tokens"``: a 64-bit hash of its
            query token ids, the same for every session of the same query text.
        batch_rows: rows per streamed batch (default: that of files).
    """

    what = "Baidu-ULTR part"

    def __init__(self, paths: Any, *, query: str = "qid", batch_rows: int | None = None) -> None:
        super().__init__(paths, batch_rows)
        self.query = check_choice("query", query, QUERY_KEYS)
        self.roles = {"session": "query line", "query": "Qid" if self.query == "qid" else "Query",
                      "doc": "URL MD5", "position": "Pos", "clicked": "Click", "dwell": "Dwelling Time"}

    def __repr__(self) -> str:
        return f"BaiduULTR({len(self.paths)} files, query={self.query!r})"

    def read(self, batch_rows: int = FILE_BATCH_ROWS, on_bad: str = "raise",
             report: Report = lambda *_: None) -> Iterator[Batch]:
        limit, lines = self._start(batch_rows, on_bad, report)
        rows = Rows({"session": np.int64, "query": str if self.query == "qid" else np.int64, "doc": str,
                     "position": np.int64, "clicked": np.int8, "dwell": np.float64})
        session = -1
        for path in self.paths:
            block: list[tuple[int, str, int, float]] | None = None  # (pos, url, click, dwell) of the query line
            query: object = None
            broken: tuple[int, str] | None = None  # the first malformed document line of the block
            for n, line, ended in numbered_lines(path):
                if not line:
                    continue
                fields = line.split(b"\t", _DWELL + 1)
                # A line cut short (the file's last, without its line end) may be a document line cut
                # in its first fields: it is refused as one of the open block's lines.
                if len(fields) <= _QUERY_FIELDS and ended:
                    self._close(block, broken, session, query, rows, lines, path)
                    if len(rows) >= limit:
                        yield rows.batch()
                    session += 1
                    block, broken = [], None
                    try:
                        query = text(fields[0], "Qid") if self.query == "qid" \
                            else _query_hash(fields[1] if len(fields) > 1 else b"")
                    except ValueError as exc:  # its documents go with it
                        broken = (n, str(exc))
                        if on_bad == "raise":
                            lines.bad(path, n, MALFORMED, str(exc))
                    continue
                if block is None:
                    lines.bad(path, n, MALFORMED, CUT_SHORT if not ended else "a document line before any query line",
                              rows=1)
                    continue
                try:
                    check_ended(ended)
                    block.append(self._document(fields))
                except ValueError as exc:
                    if broken is None:
                        broken = (n, str(exc))
                    block.append((0, "", 0, 0.0))  # counted with its impression
                    if on_bad == "raise":
                        lines.bad(path, n, MALFORMED, str(exc))
            self._close(block, broken, session, query, rows, lines, path)
        yield rows.batch()  # the rest (an empty batch when there is none: an empty log)

    @staticmethod
    def _document(fields: list[bytes]) -> tuple[int, str, int, float]:
        if len(fields) <= _DWELL:
            raise ValueError(f"a document line needs at least {_DWELL + 1} tab-separated fields, this one has "
                             f"{len(fields)}")
        pos = integer(fields[_POS], "Pos")
        click = fields[_CLICK]
        if click not in (b"0", b"1"):
            raise ValueError(f"Click {click!r} is not 0 or 1")
        dwell = float("nan")
        if click == b"1":
            try:
                dwell = float(fields[_DWELL])
            except ValueError:
                dwell = -1.0
            if not 0.0 <= dwell < float("inf"):
                raise ValueError(f"Dwelling Time {fields[_DWELL]!r} of a click is not a number >= 0")
        return pos, text(fields[_URL], "URL MD5"), int(click == b"1"), dwell

    @staticmethod
    def _close(block: list | None, broken: tuple[int, str] | None, session: int, query: object, rows: Rows,
               lines: Lines, path: Path) -> None:
        """Add the finished query line's documents (a block with a malformed line, its query line's
        included, is left out whole)."""
        if broken is not None:
            lines.bad(path, broken[0], MALFORMED, broken[1], impressions=int(bool(block)), rows=len(block))
            return
        for pos, url, click, dwell in block or ():
            rows.add(session=session, query=query, doc=url, position=pos, clicked=click, dwell=dwell)


def read_baidu_ultr(paths: Any, *, query: str = "qid", on_bad: str = "raise") -> ClickLog:
    """Baidu-ULTR's raw parts read whole into a :class:`~boostplug.clicks.ClickLog` (to stream
    them, give :class:`BaiduULTR` to :func:`boostplug.clicks.preferences`).

    Args:
        paths: a part file (gzipped or plain), a folder of parts or a list of either.
        query: ``"qid"`` or ``"tokens"`` (:class:`BaiduULTR`).
        on_bad: as in :func:`~boostplug.clicks.read_yandex`.
    """
    return read_log(BaiduULTR(paths, query=query), on_bad=on_bad)
