"""The LETOR writer: :func:`write_letor` (what it writes and why: docs/data.md, "LETOR / SVMlight
files"), atomic, with ``<path>.query`` replaced as a pair with the data file."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import math
import os
import stat
from pathlib import Path
from typing import IO, Callable, Iterator

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._atomic import atomic_write, write_bytes, write_text
from .._features import first_infinite
from .._validation import INT64_MAX, check_labels
from ._letor_files import PathLike
from .dataset import RankingData

__all__ = ["write_letor"]

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
    if qid.dtype.kind == "u" and qid.size and int(qid.max()) > INT64_MAX:
        row = int(np.argmax(qid > INT64_MAX))
        raise ValueError(
            f"qid {int(qid[row])} (row {row}) is larger than {INT64_MAX}: the reader holds query ids as "
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
    heads = labels if qid is None else [f"{label} qid:{q}" for label, q in zip(labels, qid[r0:r1].tolist())]
    tails = [""] * (r1 - r0) if comments is None else [" #" + c for c in comments[r0:r1]]
    text = "".join(" ".join([heads[r], *tokens[indptr[r]:indptr[r + 1]]]) + tails[r] + "\n" for r in range(r1 - r0))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        row = r0 + text.count("\n", 0, e.start)  # one line per row: comments hold no line break (checked)
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

    Written atomically (with ``write_query_file=True``, the data file and ``<path>.query`` are
    replaced as a pair), so that ``load_letor(path, n_features=data.n_features, with_comments=True)``
    gives back ``X``, ``y``, ``qid`` and ``comments`` exactly, signs of zeros and NaNs included;
    what could not be read back so is refused. The guarantees and the refusals: docs/data.md,
    "LETOR / SVMlight files".

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
    check_labels(data.y, "LETOR labels", noun="label")  # the reader refuses negative grades

    def write_lines(f: IO[bytes]) -> None:
        for r0 in range(0, data.n_docs, _WRITE_BLOCK_ROWS):
            f.write(_letor_lines(data, qid, comments, r0, min(r0 + _WRITE_BLOCK_ROWS, data.n_docs)))

    if write_query_file:
        _write_pair(p, write_lines, "".join(f"{int(s)}\n" for s in np.diff(data.group_ptr)))  # LightGBM's .query
    else:
        with _write_stream(p) as f:
            write_lines(f)
