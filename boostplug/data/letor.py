"""Read and write LETOR / SVMlight ranking files.

Format, one document per line::

    <label> qid:<int> <index>:<value> <index>:<value> ... # <comment>

Feature indices are 1-based and strictly increasing within a line. A feature
that is absent from a line is **zero** (the SVMlight convention: there is no
"missing value" in this format; absent means 0.0). LETOR's trailing comment
(``#docid = GX... inc = ... prob = ...``) is optional. Files without ``qid:``
(LightGBM's examples) give the query sizes in a sidecar ``<file>.query``,
one size per line.

Numbers are plain decimals: a label or value is ``[+-]digits[.digits][e[+-]digits]``
(a value may also be ``nan``, LightGBM's and XGBoost's missing value), an index is
digits, a qid is digits with an optional ``-``. Python's ``int``/``float`` also accept
``1_0``, ``+3`` and ``inf``: such tokens are refused, as are values too large for a
float64.

Parsing uses a numba parser (:mod:`boostplug.data._letor_fast`) over the whole
file's bytes, which accepts only files entirely in this grammar and gives what
scikit-learn's reader gives, bit for bit (numbers correctly rounded, as ``float``; in a
dense ``X`` a written ``-0`` stays ``-0.0``, whichever parser read it).
Any other file goes to scikit-learn's C-implemented
:func:`sklearn.datasets.load_svmlight_file`, fed block by block through a cheap
scan for the characters that its lenient number parsing would let through; a slow
line-by-line pass runs only when that scan or the parse flags something, to name
the offending line (or to clear a false alarm, e.g. ``_`` in a comment). So the
errors are the same whichever parser reads a file.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import math
import os
import re
import stat
import zlib
from pathlib import Path
from typing import IO, Callable, Iterator

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.datasets import load_svmlight_file

from .._atomic import atomic_write, write_bytes, write_text
from .._memory import available_memory
from .._validation import check_finite, check_labels, first_infinite
from ..groups import first_noncontiguous, group_ptr_from_qid, group_ptr_from_sizes
from .dataset import RankingData

__all__ = ["load_letor", "write_letor", "read_query_file"]

PathLike = str | os.PathLike

_COMPRESSED = {".gz": "gzip", ".bz2": "bz2"}
_BLOCK_BYTES = 1 << 22


class _ReadError(ValueError):
    """A file that cannot be read or decompressed (not a malformed line)."""


def _regular_file(path: PathLike, what: str = "file") -> Path:
    """``path`` as a Path, refused unless it is a regular file (checked before opening:
    a FIFO would block ``open`` and could not be read twice)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such {what}") from None
    except NotADirectoryError:
        raise FileNotFoundError(f"{p}: no such {what} (a parent in the path is not a folder)") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{p}: is a folder, not a {what}")
    if not stat.S_ISREG(mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise ValueError(f"{p}: is {kind}, not a regular {what}; the reader needs a file it can read "
                         "twice (copy the stream to a file first)")
    return p


def _open_read(path: Path) -> IO[bytes]:
    """Open plain, ``.gz`` or ``.bz2`` files for reading (as scikit-learn does, by suffix)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")  # noqa: SIM115


def _read_error(path: Path, exc: BaseException) -> Exception:
    """A one-line error naming the file for a failure while reading or decompressing it."""
    kind = _COMPRESSED.get(path.suffix)
    if kind is None:
        if isinstance(exc, OSError):
            return OSError(exc.errno, f"{path}: cannot read: {exc.strerror or exc}")
        return _ReadError(f"{path}: cannot read: {exc}")  # pragma: no cover - plain reads raise OSError
    if isinstance(exc, EOFError):
        return _ReadError(f"{path}: the {kind} data is truncated (the file ends inside the compressed "
                          "stream); the file is incomplete or damaged")
    detail = str(exc) or type(exc).__name__
    return _ReadError(f"{path}: not valid {kind} data ({detail}); the name ends in {path.suffix}, so it is "
                      f"read as {kind}: the file is damaged or not {kind}-compressed")


def _blocks(path: Path) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines (the last block may end without a newline)."""
    try:
        f = _open_read(path)
    except OSError as e:
        raise _read_error(path, e) from None
    with f:
        while True:
            try:
                block = f.read(_BLOCK_BYTES)
                if block and not block.endswith(b"\n"):
                    block += f.readline()
            except (OSError, EOFError, zlib.error) as e:
                raise _read_error(path, e) from None
            if not block:
                return
            yield block


def _lines(path: Path) -> Iterator[bytes]:
    for block in _blocks(path):
        yield from io.BytesIO(block)


# What scikit-learn's int()/float()/np.int64() parsing accepts but the format does not:
# digit separators, NUL (its C comment search stops there), a qid: prefix with junk or
# a qid value with '+', an index with '+'. A hit only triggers the exact slow check.
_SUSPECT_QID = re.compile(rb"qid(?!:-?[0-9])")
_SUSPECT_PLUS = re.compile(rb"\+[0-9]*:")


def _suspect(block: bytes) -> bool:
    return (b"_" in block or b"\x00" in block or _SUSPECT_QID.search(block) is not None
            or (b"+" in block and _SUSPECT_PLUS.search(block) is not None))


class _Feed:
    """The lines of a file for scikit-learn's reader, with the cheap scan on the way."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.suspect = False

    def read(self, size: int = -1) -> bytes:  # scikit-learn only checks that it exists
        raise io.UnsupportedOperation("read")

    def __iter__(self) -> Iterator[bytes]:
        for block in _blocks(self.path):
            if not self.suspect and _suspect(block):
                self.suspect = True
            yield from io.BytesIO(block)


def _data_lines(path: Path) -> Iterator[tuple[int, bytes, bytes | None]]:
    """``(line_number, data_part, comment)`` of every data line (1-based numbers).

    Like scikit-learn's parser, a line is cut at its first ``#``; lines with
    nothing before it (blank or comment-only lines) are not data lines.
    ``comment`` is None when the line has no ``#``.
    """
    for number, line in enumerate(_lines(path), start=1):
        hash_at = line.find(b"#")
        if hash_at < 0:
            data, comment = line, None
        else:
            data, comment = line[:hash_at], line[hash_at + 1:]
        if data.split():
            yield number, data, comment


def _line_numbers(path: Path) -> NDArray[np.int64]:
    """1-based line number of every data row."""
    return np.fromiter((n for n, _, _ in _data_lines(path)), dtype=np.int64)


def _data_line(path: Path, row: int) -> tuple[int, bytes]:
    """Line number and data part of data row ``row`` (0-based)."""
    for r, (number, data, _) in enumerate(_data_lines(path)):
        if r == row:
            return number, data
    raise IndexError(row)  # pragma: no cover - callers pass rows of the parsed file


def _read_comments(path: Path) -> list[str]:
    return [
        "" if c is None else c.decode("utf-8", errors="replace").strip()
        for _, _, c in _data_lines(path)
    ]


# scikit-learn's reader holds feature indices as C ints and query ids as int64.
_MAX_FEATURE_INDEX = 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DECIMAL = rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_LABEL_RX = re.compile(_DECIMAL)
_VALUE_RX = re.compile(_DECIMAL + rb"|[+-]?[nN][aA][nN]")
_INDEX_RX = re.compile(rb"[0-9]+")
_QID_RX = re.compile(rb"qid:(-?[0-9]+)")


def _show(token: bytes) -> str:
    return repr(token.decode(errors="replace"))


def _line_problem(tokens: list[bytes], n_features: int | None) -> tuple[str, bool]:
    """What is wrong with one data line ('' if nothing), and whether it has a qid."""
    label = tokens[0]
    if not _LABEL_RX.fullmatch(label):
        try:
            float(label)
        except ValueError:
            return f"label {_show(label)} is not a number", False
        if label.strip(b"+-").lower() in (b"nan", b"inf", b"infinity"):
            return f"label {_show(label)} is not a finite number", False
        return f"label {_show(label)} is not a plain decimal number (digits, '.', 'e' and a sign only)", False
    if not math.isfinite(float(label)):
        return f"label {_show(label)} is not a finite number (too large for a 64-bit float)", False
    if float(label) < 0:
        return f"label {_show(label)} is negative (relevance grades are 0 or more)", False
    rest = tokens[1:]
    has_qid = bool(rest) and rest[0].startswith(b"qid")
    if has_qid:
        m = _QID_RX.fullmatch(rest[0])
        if m is None:
            return f"bad query id {_show(rest[0])} (expected qid:<integer>, plain digits)", True
        qid = int(m.group(1))
        if not _INT64_MIN <= qid <= _INT64_MAX:
            return f"query id {qid} does not fit in a 64-bit integer", True
        rest = rest[1:]
    previous = 0
    for tok in rest:
        shown = _show(tok)
        index, colon, value = tok.partition(b":")
        if not colon or not _INDEX_RX.fullmatch(index):
            return f"bad token {shown} (expected <index>:<value> with an integer index >= 1)", has_qid
        i = int(index)
        if i < 1:
            return f"bad token {shown}: feature indices start at 1", has_qid
        if i > _MAX_FEATURE_INDEX:
            return f"bad token {shown}: feature index {i} is larger than {_MAX_FEATURE_INDEX}", has_qid
        if i <= previous:
            return f"bad token {shown}: feature indices must be strictly increasing", has_qid
        if n_features is not None and i > n_features:
            return f"feature index {i} is larger than n_features={n_features}", has_qid
        if not _VALUE_RX.fullmatch(value) and value.strip(b"+-").lower() not in (b"inf", b"infinity"):
            return f"bad token {shown}: {_show(value)} is not a plain decimal number (or nan)", has_qid
        if math.isinf(float(value)):
            return (f"bad token {shown}: the value is not finite (infinite feature values are refused; "
                    "write nan for a missing value)"), has_qid
        previous = i
    return "", has_qid


_SPACE = rb"[ \t\r\x0b\x0c]"
_LINE_RX = re.compile(
    _SPACE + rb"*(?:" + _DECIMAL + rb")(?:" + _SPACE + rb"+qid:-?[0-9]+)?(?:" + _SPACE + rb"+[0-9]+:(?:"
    + _VALUE_RX.pattern + rb"))*" + _SPACE + rb"*\n?"
)


def _find_bad_syntax(path: Path) -> tuple[int, str] | None:
    """:func:`_find_bad_line` after a successful parse flagged by the scan: only the syntax
    can be wrong then, so lines are matched whole and only a mismatch is looked into."""
    for _, data, _ in _data_lines(path):
        if not _LINE_RX.fullmatch(data):
            return _find_bad_line(path, None)  # the file's first problem, maybe an earlier one
    return None


def _find_bad_line(path: Path, n_features: int | None) -> tuple[int, str] | None:
    """The first malformed line (slow pass, runs only after a failure or a flag)."""
    if path.suffix in _COMPRESSED:
        for _ in _blocks(path):  # damaged compressed data is the cause, not the garbled line it gave
            pass
    first_has_qid: bool | None = None
    for number, data, _ in _data_lines(path):
        problem, has_qid = _line_problem(data.split(), n_features)
        if problem:
            return number, problem
        if first_has_qid is None:
            first_has_qid = has_qid
        elif has_qid != first_has_qid:
            where = "has no qid: but earlier lines have one" if first_has_qid else "has a qid: but earlier lines do not"
            return number, f"this line {where} (qid must be on every line or on none)"
    return None


def _error(path: Path, number: int, message: str) -> ValueError:
    return ValueError(f"{path}, line {number}: {message}")


_SIZE_RX = re.compile(rb"[0-9]+")


def read_query_file(path: PathLike, n_docs: int | None = None) -> NDArray[np.int64]:
    """Group sizes from a LightGBM ``.query`` file (one positive integer per line).

    Returns the ``group_ptr``; with ``n_docs``, the sizes must sum to it.
    """
    p = _regular_file(path, "query file")
    sizes: list[int] = []
    for number, line in enumerate(_lines(p), start=1):
        text = line.strip()
        if not text:
            continue
        if not _SIZE_RX.fullmatch(text):
            raise _error(p, number, f"{_show(text)} is not a group size (a positive integer, plain digits)")
        size = int(text)
        if size <= 0:
            raise _error(p, number, f"group size {size} must be positive")
        if size > _INT64_MAX:
            raise _error(p, number, f"group size {size} does not fit in a 64-bit integer")
        sizes.append(size)
    try:
        return group_ptr_from_sizes(np.asarray(sizes, dtype=np.int64), n_docs=n_docs)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None


@contextlib.contextmanager
def _write_stream(path: Path, before_replace: Callable[[], None] | None = None) -> Iterator[IO[bytes]]:
    """An atomic binary stream to ``path``, compressed by suffix as the reader expects.

    ``before_replace`` runs once the content is complete and on disk, just before it replaces
    ``path`` (an exception from it leaves ``path`` as it was)."""
    with atomic_write(path, "wb") as raw:
        if path.suffix == ".gz":
            with gzip.GzipFile(filename=path.name, mode="wb", fileobj=raw) as gz:
                yield gz  # type: ignore[misc]
        elif path.suffix == ".bz2":
            with bz2.BZ2File(raw, "wb") as bz:
                yield bz  # type: ignore[misc]
        else:
            yield raw
        if before_replace is not None:
            # On disk now, so that what is left between the two renames is the rename itself.
            raw.flush()
            os.fsync(raw.fileno())
            before_replace()


def _query_text(group_ptr: NDArray[np.int64]) -> str:
    """Group sizes, one per line (LightGBM's ``.query`` format)."""
    return "".join(f"{int(s)}\n" for s in np.diff(np.asarray(group_ptr, dtype=np.int64)))


def _write_pair(path: Path, write_lines: Callable[[IO[bytes]], None], sizes: str) -> None:
    """Write the data file ``path`` and its ``<path>.query`` so that both are the new files or
    both the old ones (or both absent) after any failure or signal.

    The data goes to its temporary file first (the long part); once it is complete and on disk,
    the ``.query`` replaces the old one, then the data replaces its old file. If that last step
    fails, the old ``.query`` (kept in memory: one short line per query) is written back, or the
    new one removed when there was none.
    """
    query = Path(str(path) + ".query")
    old: bytes | None = None
    try:
        mode = query.stat().st_mode
        if stat.S_ISREG(mode):
            old = query.read_bytes()
        elif not stat.S_ISDIR(mode):  # a folder in the way makes the .query write fail first
            raise ValueError(f"{query} is not a regular file (a FIFO, socket or device), which writing the "
                             f".query beside {path.name} would replace; nothing was written")
    except FileNotFoundError:
        pass  # no previous .query: a failure removes the new one
    except OSError as exc:
        raise OSError(exc.errno, f"could not write {path}: {query} cannot be read ({exc.strerror or exc}), "
                      "so it could not be put back if the write failed; nothing was changed") from exc
    replaced = False

    def replace_query() -> None:
        nonlocal replaced
        write_text(query, sizes)
        replaced = True

    try:
        with _write_stream(path, replace_query) as f:
            write_lines(f)
    except BaseException as exc:
        if replaced:
            _put_back(query, old, path, exc)
        raise


def _put_back(query: Path, old: bytes | None, path: Path, cause: BaseException) -> None:
    """Restore ``query`` to ``old`` (None: remove what was written) after the data file ``path``
    failed to replace."""
    try:
        if old is None:
            # The file written: the target of a dangling link the write followed, not the link.
            Path(os.path.realpath(query)).unlink(missing_ok=True)
        else:
            write_bytes(query, old)
    except OSError as exc:
        why = str(cause) or type(cause).__name__
        raise OSError(exc.errno, f"could not write {path} ({why}), and the previous {query} could not be put "
                      f"back ({exc.strerror or exc}): it holds the new group sizes beside the previous data file; "
                      "write both again") from cause


def _file_bytes(path: Path) -> bytes:
    """The whole file's bytes (decompressed by suffix), read errors named as :func:`_blocks` names them."""
    try:
        f = _open_read(path)
    except OSError as e:
        raise _read_error(path, e) from None
    with f:
        try:
            return f.read()
        except (OSError, EOFError, zlib.error) as e:
            raise _read_error(path, e) from None


def _parse(path: Path, n_features: int | None,
           dense: bool = False) -> tuple[sp.csr_matrix | NDArray[np.float64], NDArray[np.float64], NDArray]:
    """``(X, y, qid)`` as scikit-learn's reader gives them: by the numba parser when the file
    is entirely in the strict grammar, else by :func:`_parse_sklearn` (which names the line).
    ``dense``: the numba parser fills a dense ``X`` directly when :func:`_dense_room` allows it
    (otherwise ``X`` is CSR and :func:`_dense` converts or refuses it)."""
    from . import _letor_fast  # numba loads with the first file read, not with boostplug.data

    parsed = _letor_fast.parse(_file_bytes(path), n_features,
                               (lambda rows, width, nnz: not _dense_room(rows, width, nnz)) if dense else None)
    return parsed if parsed is not None else _parse_sklearn(path, n_features)


def _parse_sklearn(path: Path, n_features: int | None) -> tuple[sp.csr_matrix, NDArray[np.float64], NDArray]:
    """scikit-learn's reader behind the cheap scan, and the slow pass naming a bad line."""
    feed = _Feed(path)
    try:
        X, y, q = load_svmlight_file(feed, n_features=n_features, dtype=np.float64, query_id=True,
                                     zero_based=False)
    except _ReadError:
        raise
    except (ValueError, OverflowError) as e:  # OverflowError: an index or qid beyond C's integers
        bad = _find_bad_line(path, n_features)
        if bad is not None:
            raise _error(path, *bad) from None
        raise ValueError(f"{path}: {e}") from None
    if feed.suspect:
        bad = _find_bad_syntax(path)
        if bad is not None:
            raise _error(path, *bad)
    return X, y, q


def _check_values(path: Path, X: sp.csr_matrix, y: NDArray[np.float64]) -> None:
    """Refuse an infinite feature value or a label that is not finite (``inf`` spelled out, or a
    number beyond float64 that the parser rounded to it) or negative, naming the line (negative
    grades would otherwise fail later, in each fold that holds them, by a row of that fold)."""
    rows = []
    bad_y = np.flatnonzero(~((y >= 0) & (y < np.inf)))  # NaN, infinite or negative
    if bad_y.size:
        rows.append(int(bad_y[0]))
    cell = first_infinite(X)
    if cell is not None:
        rows.append(cell[0])
    if not rows:
        return
    bad = _find_bad_line(path, None)  # the file's first problem, which may come before this row
    if bad is None:  # pragma: no cover - the slow pass checks these too
        number, _ = _data_line(path, min(rows))
        bad = number, "a label is negative or a label or value is not finite"
    raise _error(path, *bad)


#: Bytes this process can still allocate (the one probe, :func:`boostplug._memory.available_memory`;
#: a module name of its own so that tests can stand in for the machine).
_available_memory = available_memory


#: A dense X larger than this that would be mostly zeros (more than ``_SPARSE_RATIO`` times
#: the CSR bytes) is refused even when memory is there: a stray huge feature index would turn
#: a two-line file into gigabytes of zeros.
DENSE_OF_SPARSE_LIMIT = 2**30
_SPARSE_RATIO = 100


def _dense_room(n: int, m: int, nnz: int) -> str:
    """Why an ``n x m`` dense float64 X of ``nnz`` stored values must not be made ("" if it may):
    more than the memory available, or a huge matrix of almost only zeros."""
    need = n * m * 8
    sparse_bytes = nnz * 16 + (n + 1) * 8  # CSR: float64 values, int64 indices and row pointers
    available = _available_memory()
    if available is not None and need > available:
        return f"more than the {available / 2**30:.2f} GiB of memory available"
    if need > DENSE_OF_SPARSE_LIMIT and need > _SPARSE_RATIO * sparse_bytes:
        return f"for only {nnz:,} non-zero values ({sparse_bytes / 2**20:.1f} MiB as CSR)"
    return ""


def _with_negative_zeros(dense: NDArray[np.float64], X: sp.csr_matrix) -> NDArray[np.float64]:
    """``dense`` (``X.toarray()``, which adds every value onto +0.0) with ``X``'s stored ``-0.0``
    put back, as the file wrote them and as the numba parser's dense fill keeps them."""
    negative_zero = (X.data == 0) & np.signbit(X.data)
    if negative_zero.any():
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        dense[rows[negative_zero], X.indices[negative_zero]] = -0.0
    return dense


def _dense(path: Path, X: sp.csr_matrix) -> NDArray[np.float64]:
    """``X.toarray()``, refused with the width's cause when it would not fit in memory or
    would be a huge matrix of almost only zeros."""
    n, m = X.shape
    need = n * m * 8
    room = _dense_room(n, m, X.nnz)
    if not room:
        try:
            return _with_negative_zeros(X.toarray(), X)
        except MemoryError:
            room = "which could not be allocated"
    if X.nnz:
        k = int(np.argmax(X.indices))
        widest = int(X.indices[k]) + 1
        number = int(_line_numbers(path)[int(np.searchsorted(X.indptr, k, side="right")) - 1])
        where = f"{path}, line {number}: feature index {widest}"
        if m > widest:
            where += f" (and n_features={m})"
    else:
        where = f"{path}: n_features={m}"
    raise ValueError(
        f"{where} makes the dense X {n} rows x {m} columns = {need / 2**30:.2f} GiB, {room}; "
        "pass dense=False for a scipy CSR matrix (only the non-zero values), or check the file's indices"
    )


def _groups_from_qid(path: Path, q: NDArray, n: int, n_features: int | None) -> NDArray[np.int64]:
    if q.shape[0] != n:
        # scikit-learn silently drops the qid of rows that lack one: find the line.
        bad = _find_bad_line(path, n_features)
        if bad is None:  # pragma: no cover - the slow pass always finds it
            raise ValueError(f"{path}: qid: is on some lines but not on others")
        raise _error(path, *bad)
    bad_rows = first_noncontiguous(q)
    if bad_rows is not None:
        row, first_row = bad_rows
        lines = _line_numbers(path)
        raise _error(
            path,
            int(lines[row]),
            f"qid {int(q[row])} is not contiguous: it already appeared at line {int(lines[first_row])} "
            "and other queries came in between (rows of one query must be adjacent)",
        )
    return group_ptr_from_qid(q)  # type: ignore[return-value]


def load_letor(
    path: PathLike,
    *,
    with_comments: bool = False,
    dense: bool = True,
    n_features: int | None = None,
    query_file: PathLike | None = None,
) -> RankingData:
    """Load a LETOR / SVMlight ranking file.

    Query ids must be contiguous (all rows of a query adjacent); they need not
    be sorted, and the file order is kept (MQ2008's ids are unsorted). Absent
    features are 0.0: the format has no missing values. ``nan`` written
    explicitly as a value is kept (LightGBM and XGBoost treat it as missing);
    ``inf`` is refused (XGBoost refuses it, and it is mostly an overflow).

    Args:
        path: the file; ``.gz`` and ``.bz2`` are decompressed.
        with_comments: keep each line's trailing comment (the text after
            ``#``, surrounding whitespace stripped; ``""`` when a line has none).
        dense: return ``X`` as a dense float64 array (else scipy CSR).
        n_features: width of ``X`` (so that train/vali/test agree); a feature
            index above it is an error. Default: the largest index in the file.
        query_file: sidecar group sizes for files without ``qid:``; default
            ``<path>.query``. When the file has qids and a query file is given,
            or ``<path>.query`` exists, both must agree.

    Returns:
        :class:`RankingData` with ``qid`` as read (int64; for files without
        ``qid:``, ``0..n_queries-1``).

    Raises:
        FileNotFoundError: the file (or the needed ``.query`` file) is absent.
        IsADirectoryError: the path is a folder.
        ValueError: a malformed line (bad token, a number in a syntax other
            than plain decimal, a label that is negative or not finite, an
            infinite feature value, ``qid:`` on some lines but not on others,
            a qid whose rows are not contiguous), naming the file and 1-based
            line; group sizes of the ``.query`` file that do not sum to the
            rows or contradict the qids; a FIFO or other special file; damaged
            ``.gz``/``.bz2`` data; a dense ``X`` larger than the memory
            available (use ``dense=False``).
    """
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)):
            raise TypeError(f"n_features must be a positive integer, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be a positive integer, got {int(n_features)}")
        n_features = int(n_features)
    p = _regular_file(path)
    X, y, q = _parse(p, n_features, dense)
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"{p}: no data lines")
    _check_values(p, X, y)
    if q.shape[0] == 0:
        qf = Path(query_file) if query_file is not None else Path(str(p) + ".query")
        if not qf.exists():
            raise FileNotFoundError(
                f"{p}: the lines have no qid: and there is no query file {qf}; put qid:<id> on every line, or "
                "group sizes (one per line) in that file or in a file passed as query_file="
            )
        group_ptr = read_query_file(qf, n_docs=n)
        qid = np.repeat(np.arange(group_ptr.shape[0] - 1, dtype=np.int64), np.diff(group_ptr))
    else:
        group_ptr = _groups_from_qid(p, q, n, n_features)
        qid = q
        beside = Path(str(p) + ".query")
        if query_file is not None or beside.exists():
            # LightGBM reads <file>.query whenever it is there: one that contradicts the qids
            # (a stale or half-written pair) is refused rather than left for it to find.
            qf = Path(query_file) if query_file is not None else beside
            sidecar = read_query_file(qf, n_docs=n)
            if not np.array_equal(sidecar, group_ptr):
                why = "" if query_file is not None else " (the .query file beside it, which LightGBM reads too: rewrite or remove it)"
                raise ValueError(f"{qf}: the group sizes disagree with the qid: values in {p}{why}")
    comments = _read_comments(p) if with_comments else None
    if comments is not None and len(comments) != n:  # pragma: no cover - same line rule as sklearn
        raise ValueError(f"{p}: read {len(comments)} comments for {n} rows")
    Xout = _dense(p, X) if dense and sp.issparse(X) else X
    return RankingData(Xout, y, qid, group_ptr, comments)


def _fmt(value: float) -> str:
    """Shortest text that parses back to exactly ``value`` (``repr``), ``1`` for ``1.0``,
    ``-0`` for ``-0.0`` and ``-nan`` for a NaN with its sign bit set (the reader keeps both signs)."""
    text = repr(value)
    if text == "nan":
        return "-nan" if math.copysign(1.0, value) < 0 else text
    return text[:-2] if text.endswith(".0") else text


def _check_writable_qid(data: RankingData) -> NDArray[np.int64]:
    qid = np.asarray(data.qid)
    if qid.dtype.kind not in "iu":
        raise TypeError(
            f"qid must be integers to be written as qid:<int>, got dtype {qid.dtype}; "
            "renumber with RankingData(X, y, None, group_ptr) or pass write_qid=False"
        )
    if qid.dtype.kind == "u" and qid.size and int(qid.max()) > _INT64_MAX:
        row = int(np.argmax(qid > _INT64_MAX))
        raise ValueError(
            f"qid {int(qid[row])} (row {row}) is larger than {_INT64_MAX}: the reader holds query ids as "
            "64-bit signed integers, so it would not read back; renumber with RankingData(X, y, None, "
            "group_ptr) or pass write_qid=False with write_query_file=True"
        )
    heads = qid[data.group_ptr[:-1]]
    values, counts = np.unique(heads, return_counts=True)
    if np.any(counts > 1):
        dup = int(values[counts > 1][0])
        raise ValueError(
            f"qid {dup} is used by more than one query (e.g. after concat); the file could not be read "
            "back as written: renumber with RankingData(X, y, None, group_ptr) or pass write_qid=False "
            "with write_query_file=True"
        )
    return qid.astype(np.int64)


def _check_comments(comments: list[str]) -> None:
    """Comments the reader gives back exactly: one line, no surrounding whitespace (the
    reader strips it, as LETOR's ``#docid = ...`` comments need)."""
    for i, c in enumerate(comments):
        if "\n" in c or "\r" in c:
            raise ValueError(f"comment of row {i} contains a line break: {c!r}")
        if c != c.strip():
            raise ValueError(f"comment of row {i} has leading or trailing whitespace, which reading "
                             f"strips: {c!r} (write {c.strip()!r})")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Rows formatted at a time by :func:`write_letor`: its memory stays that of one block of
#: lines (Python strings cost some 60 bytes per value), whatever the file's size.
_WRITE_BLOCK_ROWS = 20_000


def _csr_of_cells(rows: NDArray[np.intp], cols: NDArray[np.intp], values: NDArray[np.float64],
                  shape: tuple[int, int]) -> sp.csr_matrix:
    """The CSR matrix of cells given in row-major order, every value stored (zeros included)."""
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return sp.csr_matrix((values, cols, indptr), shape=shape)


def _listed(block: object) -> sp.csr_matrix:
    """Rows of ``X`` as the values their lines list: canonical (indices sorted, a CSR's duplicates
    summed, as ``toarray()`` adds them), every value but ``+0.0``; ``-0.0`` is listed, as ``-0``,
    so that it reads back with its sign."""
    if sp.issparse(block):
        X = sp.csr_matrix(block, dtype=np.float64, copy=True)
        X.sum_duplicates()
        listed = (X.data != 0) | np.signbit(X.data)
        if listed.all():
            return X
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return _csr_of_cells(rows[listed], X.indices[listed], X.data[listed], X.shape)
    arr = np.asarray(block, dtype=np.float64)
    rows, cols = np.nonzero((arr != 0) | np.signbit(arr))
    return _csr_of_cells(rows, cols, arr[rows, cols], arr.shape)


def _letor_lines(data: RankingData, qid: NDArray[np.int64] | None, comments: list[str] | None,
                 r0: int, r1: int) -> bytes:
    """Rows ``r0:r1`` of ``data`` as LETOR lines (UTF-8)."""
    X = _listed(data.X[r0:r1])
    cell = first_infinite(X)
    if cell is not None:
        row, col, v = cell
        raise ValueError(f"X[{row + r0}, {col}] is {v!r}; the reader refuses infinite "
                         "feature values (nan, a missing value, is kept)")
    tokens = [f"{i}:{_fmt(v)}" for i, v in zip((X.indices + 1).tolist(), X.data.tolist())]
    labels = [_fmt(v) for v in data.y[r0:r1].tolist()]
    indptr = X.indptr.tolist()
    qids = qid[r0:r1].tolist() if qid is not None else None
    lines = []
    for r in range(r1 - r0):
        parts = [labels[r]]
        if qids is not None:
            parts.append(f"qid:{qids[r]}")
        parts.extend(tokens[indptr[r]:indptr[r + 1]])
        line = " ".join(parts)
        if comments is not None:
            line += " #" + comments[r0 + r]
        lines.append(line + "\n")
    try:
        return "".join(lines).encode("utf-8")
    except UnicodeEncodeError as e:
        row = next(r0 + i for i, c in enumerate(comments[r0:r1] if comments else []) if not _encodable(c))
        raise ValueError(f"comment of row {row} cannot be written as UTF-8: {e.reason}") from None


def write_letor(
    path: PathLike,
    data: RankingData,
    *,
    with_comments: bool = True,
    write_query_file: bool = False,
    write_qid: bool = True,
) -> None:
    """Write ``data`` as a LETOR / SVMlight ranking file (``.gz``/``.bz2`` by suffix).

    The file is written atomically: a failed write (full disk, file-size limit,
    a signal) leaves the previous file whole. With ``write_query_file=True``
    the data file and ``<path>.query`` are replaced as a pair: after any
    failure both are the new files or both the previous ones. (Only a crash
    of the process or machine in the instant between the two renames can
    part them; ``load_letor`` then refuses a ``.query`` that does not match.)

    Values are written with the shortest round-trip representation, ``+0.0``
    is omitted (``-0.0`` is written ``-0``, a NaN with its sign bit ``-nan``)
    and a CSR ``X`` with unsorted or duplicate indices is written as
    ``X.toarray()`` means it (duplicates summed), so
    ``load_letor(path, n_features=data.n_features, with_comments=True)``
    gives back ``X``, ``y``, ``qid`` and ``comments`` exactly, signs of zeros
    and NaNs included (trailing all-zero columns are not in the file: hence
    ``n_features``). What could not be read back so is refused: infinite
    values, labels that are negative or not finite, a qid above the 64-bit
    signed range, two queries sharing a qid, comments with line breaks or
    surrounding whitespace.

    Args:
        with_comments: append ``# comment`` when ``data.comments`` is set.
        write_query_file: also write ``<path>.query`` (LightGBM's group sizes).
        write_qid: write ``qid:`` on each line (set False with
            ``write_query_file=True`` for LightGBM's own layout).
    """
    if not isinstance(data, RankingData):
        raise TypeError(f"data must be a RankingData, got {type(data).__name__}")
    if not write_qid and not write_query_file:
        raise ValueError("write_qid=False needs write_query_file=True, or the query groups would be lost")
    p = Path(path)
    qid = _check_writable_qid(data) if write_qid else None
    comments = data.comments if with_comments else None
    if comments is not None:
        _check_comments(comments)
    check_finite(data.y, "LETOR labels", noun="label")
    check_labels(data.y, "LETOR labels")  # the reader refuses negative grades

    def write_lines(f: IO[bytes]) -> None:
        for r0 in range(0, data.n_docs, _WRITE_BLOCK_ROWS):
            f.write(_letor_lines(data, qid, comments, r0, min(r0 + _WRITE_BLOCK_ROWS, data.n_docs)))

    if write_query_file:
        _write_pair(p, write_lines, _query_text(data.group_ptr))
    else:
        with _write_stream(p) as f:
            write_lines(f)
