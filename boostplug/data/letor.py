"""Read and write LETOR / SVMlight ranking files: :func:`load_letor`, :func:`read_query_file` and
:func:`write_letor`. The format, what is refused and why, and how the file is parsed:
docs/data.md ("LETOR / SVMlight files")."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .. import _memory
from .._features import first_infinite
from .._validation import INT64_MAX, check_int
from ..groups import first_noncontiguous, group_ptr_from_qid, group_ptr_from_sizes
from ._letor_files import PathLike, file_bytes, file_lines, regular_file
from ._letor_lines import find_bad_line, line_error, line_numbers, parse_lines, read_comments, show_token
from ._letor_write import write_letor
from .dataset import RankingData

__all__ = ["load_letor", "write_letor", "read_query_file"]


_SIZE_RX = re.compile(rb"[0-9]+")


def read_query_file(path: PathLike, n_docs: int | None = None) -> NDArray[np.int64]:
    """Group sizes from a LightGBM ``.query`` file (one positive integer per line).

    Returns the ``group_ptr``; with ``n_docs``, the sizes must sum to it.
    """
    p = regular_file(path, "query file")
    sizes: list[int] = []
    for number, line in enumerate(file_lines(p), start=1):
        text = line.strip()
        if not text:
            continue
        if not _SIZE_RX.fullmatch(text):
            raise line_error(p, number, f"{show_token(text)} is not a group size (a positive integer, plain digits)")
        size = int(text)
        if size <= 0:
            raise line_error(p, number, f"group size {size} must be positive")
        if size > INT64_MAX:
            raise line_error(p, number, f"group size {size} does not fit in a 64-bit integer")
        sizes.append(size)
    try:
        return group_ptr_from_sizes(np.asarray(sizes, dtype=np.int64), n_docs=n_docs)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None


def _parse(path: Path, n_features: int | None,
           dense: bool = False) -> tuple[sp.csr_matrix | NDArray[np.float64], NDArray[np.float64], NDArray]:
    """``(X, y, qid)``: by the numba parser when the file is entirely in the strict grammar,
    else by :func:`~._letor_lines.parse_lines` (which names the first malformed line).
    ``dense``: the numba parser fills a dense ``X`` directly when :func:`_dense_room` allows it
    (otherwise ``X`` is CSR and :func:`_dense` converts or refuses it)."""
    from . import _letor_fast  # numba loads with the first file read, not with boostplug.data

    parsed = _letor_fast.parse(file_bytes(path), n_features,
                               (lambda rows, width, nnz: not _dense_room(rows, width, nnz)) if dense else None)
    return parsed if parsed is not None else parse_lines(path, n_features)


def _check_values(path: Path, X: sp.csr_matrix, y: NDArray[np.float64]) -> None:
    """Refuse an infinite feature value or a label that is not finite (``inf`` spelled out, or a
    number beyond float64 that the parser rounded to it) or negative, naming the line (negative
    grades would otherwise fail later, in each fold that holds them, by a row of that fold)."""
    bad_y = np.flatnonzero(~((y >= 0) & (y < np.inf)))  # NaN, infinite or negative
    cell = first_infinite(X)
    rows = [int(r) for r in bad_y[:1]] + ([] if cell is None else [cell[0]])
    if not rows:
        return
    bad = find_bad_line(path, None)  # the file's first problem, which may come before this row
    if bad is None:  # pragma: no cover - the slow pass checks these too
        bad = int(line_numbers(path)[min(rows)]), "a label is negative or a label or value is not finite"
    raise line_error(path, *bad)


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
    available = _memory.available_memory()      # looked up at the call: tests stand in for the machine
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
        number = int(line_numbers(path)[int(np.searchsorted(X.indptr, k, side="right")) - 1])
        where = f"{path}, line {number}: feature index {widest}"
        if m > widest:
            where += f" (and n_features={m})"
    else:
        where = f"{path}: n_features={m}"
    raise ValueError(
        f"{where} makes the dense X {n} rows x {m} columns = {need / 2**30:.2f} GiB, {room}; "
        "pass dense=False for a scipy CSR matrix (only the non-zero values), or check the file's indices"
    )


def _groups_from_qid(path: Path, q: NDArray) -> NDArray[np.int64]:
    bad_rows = first_noncontiguous(q)
    if bad_rows is not None:
        row, first_row = bad_rows
        lines = line_numbers(path)
        raise line_error(
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
        n_features = check_int("n_features", n_features, 1, None)
    p = regular_file(path)
    X, y, q = _parse(p, n_features, dense)
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"{p}: no data lines")
    _check_values(p, X, y)
    qf = Path(query_file) if query_file is not None else Path(str(p) + ".query")
    if q.shape[0] == 0:
        if not qf.exists():
            raise FileNotFoundError(
                f"{p}: the lines have no qid: and there is no query file {qf}; put qid:<id> on every line, or "
                "group sizes (one per line) in that file or in a file passed as query_file="
            )
        group_ptr = read_query_file(qf, n_docs=n)
        q = None  # RankingData numbers the queries 0..n_queries-1
    else:
        group_ptr = _groups_from_qid(p, q)
        if query_file is not None or qf.exists():
            # LightGBM reads <file>.query whenever it is there: one that contradicts the qids
            # (a stale or half-written pair) is refused rather than left for it to find.
            sidecar = read_query_file(qf, n_docs=n)
            if not np.array_equal(sidecar, group_ptr):
                why = "" if query_file is not None else " (the .query file beside it, which LightGBM reads too: rewrite or remove it)"
                raise ValueError(f"{qf}: the group sizes disagree with the qid: values in {p}{why}")
    comments = read_comments(p) if with_comments else None  # one per row: RankingData checks the count
    Xout = _dense(p, X) if dense and sp.issparse(X) else X
    return RankingData(Xout, y, q, group_ptr, comments)
