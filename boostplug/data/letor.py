"""Read and write LETOR / SVMlight ranking files.

Format, one document per line::

    <label> qid:<int> <index>:<value> <index>:<value> ... # <comment>

Feature indices are 1-based and strictly increasing within a line. A feature
that is absent from a line is **zero** (the SVMlight convention: there is no
"missing value" in this format; absent means 0.0). LETOR's trailing comment
(``#docid = GX... inc = ... prob = ...``) is optional. Files without ``qid:``
(LightGBM's examples) give the query sizes in a sidecar ``<file>.query``,
one size per line.

Parsing uses scikit-learn's C-implemented
:func:`sklearn.datasets.load_svmlight_file`; a second, light pass reads the
comments when asked for, and a slow line-by-line pass runs only when the file
is malformed, to name the offending line.
"""

from __future__ import annotations

import bz2
import gzip
import os
from pathlib import Path
from typing import IO, Iterator

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.datasets import load_svmlight_file

from ..groups import first_noncontiguous, group_ptr_from_qid, group_ptr_from_sizes
from .dataset import RankingData

__all__ = ["load_letor", "write_letor", "read_query_file"]

PathLike = str | os.PathLike


def _open(path: Path, mode: str) -> IO[bytes]:
    """Open plain, ``.gz`` or ``.bz2`` files (as scikit-learn does, by suffix)."""
    if path.suffix == ".gz":
        return gzip.open(path, mode)  # type: ignore[return-value]
    if path.suffix == ".bz2":
        return bz2.open(path, mode)  # type: ignore[return-value]
    return open(path, mode)  # noqa: SIM115


def _data_lines(path: Path) -> Iterator[tuple[int, bytes, bytes | None]]:
    """``(line_number, data_part, comment)`` of every data line (1-based numbers).

    Like scikit-learn's parser, a line is cut at its first ``#``; lines with
    nothing before it (blank or comment-only lines) are not data lines.
    ``comment`` is None when the line has no ``#``.
    """
    with _open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
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


def _read_comments(path: Path) -> list[str]:
    return [
        "" if c is None else c.decode("utf-8", errors="replace").strip()
        for _, _, c in _data_lines(path)
    ]


# scikit-learn's reader holds feature indices as C ints and query ids as int64.
_MAX_FEATURE_INDEX = 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _line_problem(tokens: list[bytes], n_features: int | None) -> tuple[str, bool]:
    """What is wrong with one data line ('' if nothing), and whether it has a qid."""
    try:
        float(tokens[0])
    except ValueError:
        return f"label {tokens[0].decode(errors='replace')!r} is not a number", False
    rest = tokens[1:]
    has_qid = bool(rest) and rest[0].startswith(b"qid:")
    if has_qid:
        try:
            qid = int(rest[0][4:])
        except ValueError:
            return f"bad query id {rest[0].decode(errors='replace')!r} (expected qid:<integer>)", True
        if not _INT64_MIN <= qid <= _INT64_MAX:
            return f"query id {qid} does not fit in a 64-bit integer", True
        rest = rest[1:]
    previous = 0
    for tok in rest:
        shown = tok.decode(errors="replace")
        index, colon, value = tok.partition(b":")
        try:
            i = int(index)
            float(value)
            if not colon:
                raise ValueError
        except ValueError:
            return f"bad token {shown!r} (expected <index>:<value> with an integer index >= 1)", has_qid
        if i < 1:
            return f"bad token {shown!r}: feature indices start at 1", has_qid
        if i > _MAX_FEATURE_INDEX:
            return f"bad token {shown!r}: feature index {i} is larger than {_MAX_FEATURE_INDEX}", has_qid
        if i <= previous:
            return f"bad token {shown!r}: feature indices must be strictly increasing", has_qid
        if n_features is not None and i > n_features:
            return f"feature index {i} is larger than n_features={n_features}", has_qid
        previous = i
    return "", has_qid


def _find_bad_line(path: Path, n_features: int | None) -> tuple[int, str] | None:
    """The first malformed line (slow pass, runs only after a failure)."""
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


def read_query_file(path: PathLike, n_docs: int | None = None) -> NDArray[np.int64]:
    """Group sizes from a LightGBM ``.query`` file (one positive integer per line).

    Returns the ``group_ptr``; with ``n_docs``, the sizes must sum to it.
    """
    p = Path(path)
    sizes: list[int] = []
    with _open(p, "rb") as f:
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text:
                continue
            try:
                size = int(text)
            except ValueError:
                raise _error(p, number, f"{text.decode(errors='replace')!r} is not a group size") from None
            if size <= 0:
                raise _error(p, number, f"group size {size} must be positive")
            sizes.append(size)
    try:
        return group_ptr_from_sizes(np.asarray(sizes, dtype=np.int64), n_docs=n_docs)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None


def _write_query_file(path: PathLike, group_ptr: NDArray[np.int64]) -> None:
    """Write group sizes, one per line (LightGBM's ``.query`` format)."""
    sizes = np.diff(np.asarray(group_ptr, dtype=np.int64))
    with _open(Path(path), "wb") as f:
        f.write("".join(f"{int(s)}\n" for s in sizes).encode())


def _parse(path: Path, n_features: int | None) -> tuple[sp.csr_matrix, NDArray[np.float64], NDArray]:
    try:
        X, y, q = load_svmlight_file(
            str(path), n_features=n_features, dtype=np.float64, query_id=True, zero_based=False
        )
    except (ValueError, OverflowError) as e:  # OverflowError: an index or qid beyond C's integers
        bad = _find_bad_line(path, n_features)
        if bad is not None:
            raise _error(path, *bad) from None
        raise ValueError(f"{path}: {e}") from None
    return X, y, q


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
    explicitly as a value is kept (LightGBM and XGBoost treat it as missing).

    Args:
        path: the file; ``.gz`` and ``.bz2`` are decompressed.
        with_comments: keep each line's trailing comment (the text after
            ``#``, surrounding whitespace stripped; ``""`` when a line has none).
        dense: return ``X`` as a dense float64 array (else scipy CSR).
        n_features: width of ``X`` (so that train/vali/test agree); a feature
            index above it is an error. Default: the largest index in the file.
        query_file: sidecar group sizes for files without ``qid:``; default
            ``<path>.query`` if the file has no ``qid:``. When the file has
            qids and a query file is given, both must agree.

    Returns:
        :class:`RankingData` with ``qid`` as read (int64; for files without
        ``qid:``, ``0..n_queries-1``).

    Raises:
        FileNotFoundError: the file (or the needed ``.query`` file) is absent.
        ValueError: a malformed line (bad token, label that is not a number or
            not finite, ``qid:`` on some lines but not on others, a qid whose
            rows are not contiguous), naming the file and 1-based line.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such file")
    if n_features is not None and (isinstance(n_features, bool) or int(n_features) != n_features or n_features < 1):
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    X, y, q = _parse(p, n_features)
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"{p}: no data lines")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        line = int(_line_numbers(p)[bad[0]])
        raise _error(p, line, f"label {float(y[bad[0]])!r} is not a finite number")
    if q.shape[0] == 0:
        qf = Path(query_file) if query_file is not None else Path(str(p) + ".query")
        if not qf.is_file():
            raise FileNotFoundError(
                f"{p}: the lines have no qid: and there is no query file {qf}; put qid:<id> on every line, or "
                "group sizes (one per line) in that file or in a file passed as query_file="
            )
        group_ptr = read_query_file(qf, n_docs=n)
        qid = np.repeat(np.arange(group_ptr.shape[0] - 1, dtype=np.int64), np.diff(group_ptr))
    else:
        group_ptr = _groups_from_qid(p, q, n, n_features)
        qid = q
        if query_file is not None:
            sidecar = read_query_file(query_file, n_docs=n)
            if not np.array_equal(sidecar, group_ptr):
                raise ValueError(f"{query_file}: the group sizes disagree with the qid: values in {p}")
    comments = _read_comments(p) if with_comments else None
    if comments is not None and len(comments) != n:  # pragma: no cover - same line rule as sklearn
        raise ValueError(f"{p}: read {len(comments)} comments for {n} rows")
    Xout = X.toarray() if dense else X
    return RankingData(Xout, y, qid, group_ptr, comments)


def _fmt(value: float) -> str:
    """Shortest text that parses back to exactly ``value`` (``repr``), ``1`` for ``1.0``."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _check_writable_qid(data: RankingData) -> NDArray[np.int64]:
    qid = np.asarray(data.qid)
    if qid.dtype.kind not in "iu":
        raise TypeError(
            f"qid must be integers to be written as qid:<int>, got dtype {qid.dtype}; "
            "renumber with RankingData(X, y, None, group_ptr) or pass write_qid=False"
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


def _check_finite_labels(y: NDArray[np.float64]) -> None:
    bad = ~np.isfinite(y)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"label of row {i} is {float(y[i])!r}; a LETOR file needs finite labels")


def write_letor(
    path: PathLike,
    data: RankingData,
    *,
    with_comments: bool = True,
    write_query_file: bool = False,
    write_qid: bool = True,
) -> None:
    """Write ``data`` as a LETOR / SVMlight ranking file (``.gz``/``.bz2`` by suffix).

    Values are written with the shortest round-trip representation and zeros
    are omitted, so ``load_letor(path, n_features=data.n_features,
    with_comments=True)`` gives back ``X``, ``y``, ``qid`` and ``comments``
    exactly (trailing all-zero columns are not in the file: hence
    ``n_features``).

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
    _check_finite_labels(data.y)
    X = sp.csr_matrix(data.X, dtype=np.float64, copy=True)
    X.eliminate_zeros()
    tokens = [f"{i}:{_fmt(v)}" for i, v in zip((X.indices + 1).tolist(), X.data.tolist())]
    labels = [_fmt(v) for v in data.y.tolist()]
    indptr = X.indptr.tolist()
    qids = qid.tolist() if qid is not None else None
    lines = []
    for r in range(data.n_docs):
        parts = [labels[r]]
        if qids is not None:
            parts.append(f"qid:{qids[r]}")
        parts.extend(tokens[indptr[r]:indptr[r + 1]])
        line = " ".join(parts)
        if comments is not None:
            line += " #" + comments[r]
        lines.append(line + "\n")
    with _open(p, "wb") as f:
        f.write("".join(lines).encode("utf-8"))
    if write_query_file:
        _write_query_file(str(p) + ".query", data.group_ptr)
