"""Click-log sources as batches of numpy columns: pandas, polars and pyarrow tables, mappings of
arrays, Parquet and CSV files (read in batches). pandas, polars and pyarrow are imported only
when a source of theirs is given.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

__all__ = ["ROLES", "REQUIRED", "Batch", "RawLog", "resolve_columns", "batches", "kind_of"]

#: The columns of a click log, by role (the default column name is the role's name).
ROLES = ("session", "query", "doc", "position", "clicked", "order", "dwell")
REQUIRED = ("session", "query", "doc", "position", "clicked")
#: Rows per batch read from a file.
FILE_BATCH_ROWS = 1 << 21


@dataclass
class Batch:
    """Consecutive rows of a log: ``values[role]`` (numpy, one per row; a missing value replaced by
    a valid one of the column), ``nulls[role]`` (bool mask or ``None``), ``first_row`` (the
    0-based number of the batch's first row in the whole log)."""

    values: dict[str, np.ndarray]
    nulls: dict[str, NDArray[np.bool_] | None]
    first_row: int

    def __len__(self) -> int:
        return int(self.values["session"].shape[0])

    def take(self, rows: NDArray[np.int64] | slice, first_row: int) -> "Batch":
        return Batch({k: v[rows] for k, v in self.values.items()},
                     {k: (None if m is None else m[rows]) for k, m in self.nulls.items()}, first_row)

    @staticmethod
    def concat(parts: list["Batch"]) -> "Batch":
        if len(parts) == 1:
            return parts[0]
        values = {k: np.concatenate([p.values[k] for p in parts]) for k in parts[0].values}
        nulls = {k: None if all(p.nulls[k] is None for p in parts) else
                 np.concatenate([np.zeros(len(p), bool) if p.nulls[k] is None else p.nulls[k] for p in parts])
                 for k in parts[0].values}
        return Batch(values, nulls, parts[0].first_row)


#: ``report(reason, impressions, rows, example)``: how a raw-format reader counts what it skipped.
Report = Callable[[str, int, int, str], None]


class RawLog:
    """A click log in a published raw format (:mod:`boostplug.clicks.formats`): it parses its own
    lines into batches of whole sessions, with fixed columns (``roles``: role -> the format's field)."""

    roles: dict[str, str]

    def read(self, batch_rows: int, on_bad: str, report: Report) -> Iterator[Batch]:
        """Batches of about ``batch_rows`` rows, each ending at a session's end; a bad line is a
        ``ValueError`` naming its file and line (``on_bad="raise"``) or skipped and ``report``-ed."""
        raise NotImplementedError


def kind_of(source: object) -> str:
    """``"mapping"``, ``"pandas"``, ``"polars"``, ``"arrow"``, ``"parquet"``, ``"csv"`` or
    ``"dask"``, ``"spark"``, or ``"raw"`` (a :class:`RawLog`); a ``TypeError`` / ``ValueError`` says what is accepted.
    Dask and Spark DataFrames are told by their module and attributes, without importing either."""
    if isinstance(source, RawLog):
        return "raw"
    if isinstance(source, (str, os.PathLike)):
        name = Path(source).name.lower()
        if name.endswith((".parquet", ".pq")):
            return "parquet"
        if name.endswith((".csv", ".csv.gz", ".csv.bz2", ".csv.zst")):
            return "csv"
        raise ValueError(f"click log file {str(source)!r}: expected a .parquet/.pq or .csv file (by its name)")
    mod = type(source).__module__.split(".")[0]
    if mod in ("dask", "dask_expr") and hasattr(source, "npartitions"):
        return "dask"
    if mod == "pyspark" and hasattr(source, "sparkSession") and hasattr(source, "mapInPandas"):
        return "spark"
    if mod == "pandas" and hasattr(source, "columns"):
        return "pandas"
    if mod == "polars":
        return "polars"
    if mod == "pyarrow" and hasattr(source, "column_names"):
        return "arrow"
    if isinstance(source, Mapping):
        return "mapping"
    raise TypeError(
        f"a click log must be a pandas, polars or pyarrow table, a mapping of column name to array, "
        f"a .parquet or .csv path, or a Dask or Spark DataFrame; got {type(source).__name__}")


def resolve_columns(columns: Mapping[str, str | None] | None, available: list[str]) -> dict[str, str]:
    """Role -> column name of the source. ``columns`` maps roles to names (a role left out has its
    default name; ``None`` for ``order``/``dwell`` says not to use one). ``ValueError`` for an
    unknown role or a required column the source lacks, listing the source's columns."""
    given = dict(columns or {})
    unknown = sorted(set(given) - set(ROLES))
    if unknown:
        raise ValueError(f"columns= has unknown roles {unknown}; the roles are {list(ROLES)}")
    out: dict[str, str] = {}
    for role in ROLES:
        name = given.get(role, role)
        if name is None:
            if role in REQUIRED:
                raise ValueError(f"columns[{role!r}] is None, but a click log needs a {role} column")
            continue
        if not isinstance(name, str):
            raise TypeError(f"columns[{role!r}] must be a column name (str), got {type(name).__name__}")
        if name in available:
            out[role] = name
        elif role in REQUIRED or role in given:
            raise ValueError(f"the click log has no {role} column {name!r}; its columns are {available} "
                             f"(name the {role} column with columns={{{role!r}: ...}})")
    return out


def _filled(values: np.ndarray, nulls: NDArray[np.bool_] | None) -> tuple[np.ndarray, NDArray[np.bool_] | None]:
    """Missing entries replaced by a present value of the column (or 0), so that every value
    sorts with the others; the mask says which they were."""
    if nulls is None or not nulls.any():
        return values, None
    values = np.array(values, copy=True)
    present = np.flatnonzero(~nulls)
    values[nulls] = values[present[0]] if present.size else (0 if values.dtype.kind != "U" else "")
    return values, nulls


def _numpy_column(arr: np.ndarray) -> tuple[np.ndarray, NDArray[np.bool_] | None]:
    a = np.asarray(arr)
    if a.ndim != 1:
        raise ValueError(f"a click-log column must be one-dimensional, got shape {a.shape}")
    if a.dtype.kind == "f":
        return _filled(a, np.isnan(a))
    if a.dtype.kind == "O":
        nulls = np.fromiter((v is None or (isinstance(v, float) and v != v) or _is_na(v) for v in a),
                            dtype=bool, count=a.shape[0])
        return _filled(a, nulls)
    return a, None


def _is_na(value: object) -> bool:
    """pandas.NA / NaT / numpy NaT without importing pandas."""
    name = type(value).__name__
    return name in ("NAType", "NaTType") or (isinstance(value, (np.datetime64, np.timedelta64)) and np.isnat(value))


def _pandas_column(series: Any) -> tuple[np.ndarray, NDArray[np.bool_] | None]:
    nulls = series.isna().to_numpy(dtype=bool)
    if nulls.any():
        present = series[~nulls]
        fill = present.iloc[0] if len(present) else 0
        series = series.where(~nulls, fill)
    try:  # a nullable extension dtype (Int64...) as its numpy dtype
        values = series.to_numpy(dtype=getattr(series.dtype, "numpy_dtype", None))
    except (TypeError, ValueError):
        values = series.to_numpy()
    return values, (nulls if nulls.any() else None)


def _arrow_column(col: Any) -> tuple[np.ndarray, NDArray[np.bool_] | None]:
    import pyarrow.compute as pc

    nulls = None
    if col.null_count:
        nulls = np.asarray(pc.is_null(col)).astype(bool)
        present = pc.drop_null(col)
        if len(present):  # keeps the column's type (an integer column with nulls stays integer)
            col = pc.fill_null(col, present[0])
    return _filled(col.to_numpy(zero_copy_only=False), nulls)  # all null: no value to fill with, 0


def _batch_from(table: Any, kind: str, roles: dict[str, str], first_row: int) -> Batch:
    read = {"pandas": lambda name: _pandas_column(table[name]),
            "arrow": lambda name: _arrow_column(table.column(name))}.get(kind, lambda name: _numpy_column(table[name]))
    columns = {role: read(name) for role, name in roles.items()}
    values = {role: v for role, (v, _) in columns.items()}
    nulls = {role: m for role, (_, m) in columns.items()}
    lengths = {role: v.shape[0] for role, v in values.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the click log's columns have different lengths: {lengths}")
    return Batch(values, nulls, first_row)


def _column_names(source: Any, kind: str) -> list[str]:
    """A table's column names (a pandas DataFrame's ``keys()`` are its columns, as a mapping's)."""
    return list(source.column_names) if kind == "arrow" else [str(k) for k in source.keys()]


def batches(source: Any, columns: Mapping[str, str | None] | None, batch_rows: int = FILE_BATCH_ROWS,
            on_bad: str = "raise", report: Report | None = None) -> tuple[dict[str, str], Iterator[Batch]]:
    """``(roles, iterator of batches)`` of any accepted source but a Dask or Spark DataFrame
    (:func:`boostplug.clicks.read_log` refuses those): a table or mapping is one batch; a file is
    read ``batch_rows`` rows at a time; a :class:`RawLog` reads itself (its skipped lines go to
    ``report``)."""
    kind = kind_of(source)
    if kind == "raw":
        if columns:
            raise ValueError(f"columns= does not apply to a {type(source).__name__} log: its fields are fixed")
        return dict(source.roles), source.read(batch_rows, on_bad, report or (lambda *_: None))
    if kind == "parquet":
        return _parquet(Path(source), columns, batch_rows)
    if kind == "csv":
        return _csv(Path(source), columns, batch_rows)
    if kind == "polars":  # read as the Arrow table of the role columns only (polars reads no other)
        roles = resolve_columns(columns, source.collect_schema().names())  # a DataFrame's or a LazyFrame's
        picked = source.lazy().select(list(dict.fromkeys(roles.values()))).collect()
        return roles, iter([_batch_from(picked.to_arrow(), "arrow", roles, 0)])
    roles = resolve_columns(columns, _column_names(source, kind))
    return roles, iter([_batch_from(source, kind, roles, 0)])


def _need_pyarrow(what: str) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:  # pragma: no cover - pyarrow is in the clicks extra
        raise ImportError(f"reading {what} click logs needs pyarrow (pip install 'boostplug[clicks]')") from None


def _parquet(path: Path, columns: Mapping[str, str | None] | None,
             batch_rows: int) -> tuple[dict[str, str], Iterator[Batch]]:
    _need_pyarrow("Parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    def damaged(exc: Exception, first: int | None) -> ValueError:
        at = "" if first is None else f" (reading the rows from log row {first})"
        return ValueError(f"click log file {str(path)!r} is not a readable Parquet file (truncated or damaged?): "
                          f"{exc}{at}")

    try:
        reader = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise damaged(exc, None) from None
    roles = resolve_columns(columns, list(reader.schema_arrow.names))
    names = sorted(set(roles.values()))
    return roles, _arrow_batches(lambda: reader.iter_batches(batch_size=batch_rows, columns=names), roles,
                                 lambda: reader.schema_arrow.empty_table().select(names),
                                 (pa.ArrowException, OSError), damaged)


def _csv(path: Path, columns: Mapping[str, str | None] | None,
         batch_rows: int) -> tuple[dict[str, str], Iterator[Batch]]:
    _need_pyarrow("CSV")
    import pyarrow as pa
    import pyarrow.csv as pcsv

    # block size in bytes: about batch_rows rows of a few dozen bytes
    options = pcsv.ReadOptions(block_size=max(1 << 20, min(batch_rows * 48, 1 << 30)))
    if path.is_file() and path.stat().st_size == 0:
        raise ValueError(f"click log file {str(path)!r} is empty: not even a header line naming the columns")
    try:
        reader = pcsv.open_csv(path, read_options=options)
    except pa.ArrowInvalid as exc:
        raise _csv_error(path, exc) from None
    roles = resolve_columns(columns, list(reader.schema.names))
    return roles, _arrow_batches(lambda: reader, roles, reader.schema.empty_table, pa.ArrowInvalid,
                                 lambda exc, _: _csv_error(path, exc))


def _arrow_batches(record_batches: Callable[[], Iterator[Any]], roles: dict[str, str], empty: Callable[[], Any],
                   errors: Any, error: Callable[[Exception, int], Exception]) -> Iterator[Batch]:
    """A file's Arrow ``record_batches()`` as :class:`Batch` es; ``error(exc, first_row)`` for a failed read;
    no row at all: the columns alone (``empty()``), so that an empty file reads as an empty log."""
    first = 0
    try:
        for rb in record_batches():
            b = _batch_from(rb, "arrow", roles, first)
            first += len(b)
            yield b
    except errors as exc:
        raise error(exc, first) from None
    if not first:
        yield _batch_from(empty(), "arrow", roles, 0)


_CONVERSION = re.compile(r"In CSV column #(\d+): CSV conversion error to \w+: invalid value '(.*)'", re.DOTALL)


def _csv_error(path: Path, exc: Exception) -> ValueError:
    """pyarrow's refusal of a CSV file with the file and the line it is about. The line is found
    by reading the file again (only now, on the way to an error): serially, for a row with the
    wrong number of fields; by its value, for one that does not convert to its column's type."""
    import pyarrow.csv as pcsv

    line: int | None = None
    message = str(exc)
    bad: list[Any] = []
    with contextlib.suppress(Exception):  # the second read only looks for the line; its error is the same
        serial = pcsv.open_csv(path, read_options=pcsv.ReadOptions(use_threads=False),
                               parse_options=pcsv.ParseOptions(invalid_row_handler=lambda row: bad.append(row) or "error"))
        for _ in serial:
            pass
    if bad and bad[0].number is not None:
        row = bad[0]
        line = int(row.number)
        message = (f"expected {row.expected_columns} fields, got {row.actual_columns}: {row.text!r} (a row cut "
                   "short, or a stray separator)")
    else:
        found = _CONVERSION.search(message)
        if found is not None:
            line = _line_of_value(path, int(found.group(1)), found.group(2))
            message = f"column {found.group(1)} (from 0) holds {found.group(2)!r}, not of the type its earlier rows have"
    where = f", line {line}" if line is not None else ""
    return ValueError(f"click log file {str(path)!r}{where}: {message}")


def _line_of_value(path: Path, column: int, value: str) -> int | None:
    """The first line (from 1) whose field ``column`` is ``value``."""
    import csv
    import io

    import pyarrow as pa

    with pa.input_stream(str(path), compression="detect") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text)
        for fields in reader:
            if len(fields) > column and fields[column] == value:
                return reader.line_num
    return None
