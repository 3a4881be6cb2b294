"""Click logs in: every accepted source gives the same preferences, files stream in batches of
whole sessions, and every refusal of a bad impression names its session, query and row (or,
with on_bad="skip", drops it and says so)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from tests.clicks._logs import _impressions, _with, random_log, same

from boostplug import clicks
from boostplug.clicks import _sources


@pytest.fixture
def log(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return random_log(rng, n_sessions=40)


RENAMED = {"session": "sid", "query": "qid", "doc": "url", "position": "rank", "clicked": "click", "order": "time"}


def test_sources_agree(log: dict[str, np.ndarray], tmp_path: Path) -> None:
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    ref = clicks.preferences(log, "all")
    assert len(ref)
    renamed = {RENAMED[k]: v for k, v in log.items()}
    df = pd.DataFrame(renamed)
    same(ref, clicks.preferences(df, "all", columns=RENAMED))
    same(ref, clicks.preferences(pl.from_pandas(df), "all", columns=RENAMED))
    same(ref, clicks.preferences(pa.Table.from_pandas(df), "all", columns=RENAMED))
    pq.write_table(pa.Table.from_pandas(df), tmp_path / "log.parquet")
    df.sort_values("sid", kind="stable").to_csv(tmp_path / "log.csv", index=False)  # files stream: sessions together
    pq.write_table(pa.Table.from_pandas(df.sort_values("sid", kind="stable")), tmp_path / "sorted.parquet")
    same(ref, clicks.preferences(tmp_path / "sorted.parquet", "all", columns=RENAMED))
    same(ref, clicks.preferences(str(tmp_path / "log.csv"), "all", columns=RENAMED))
    # read_log reads a file whole, in any row order
    same(ref, clicks.preferences(clicks.read_log(tmp_path / "log.parquet", columns=RENAMED), "all"))


def test_read_log_sorts_and_round_trips(log: dict[str, np.ndarray]) -> None:
    read = clicks.read_log(log)
    ptr = read.group_ptr
    assert ptr[-1] == len(read) == log["session"].shape[0]
    for i in range(read.n_impressions):
        a, b = ptr[i], ptr[i + 1]
        assert read.position[a:b].tolist() == list(range(1, b - a + 1))
        assert len(set(read.session[a:b])) == 1 and len(set(read.query[a:b])) == 1
    again = clicks.read_log(read.columns())
    for name, col in read.columns().items():
        np.testing.assert_array_equal(col, again.columns()[name])
    same(clicks.preferences(read, "all"), clicks.preferences(log, "all"))
    assert read.to_pandas().shape == (len(read), 6)


def test_select_keeps_chosen_impressions(log: dict[str, np.ndarray]) -> None:
    read = clicks.read_log(log)
    mask = np.arange(read.n_impressions) % 3 == 0
    part = read.select(mask)
    assert part.n_impressions == int(mask.sum())
    rest = read.select(~mask)
    both = clicks.preferences({k: np.concatenate((part.columns()[k], rest.columns()[k]))
                               for k in part.columns()}, "all")
    same(both, clicks.preferences(read, "all"))
    with pytest.raises(ValueError, match="out of range"):
        read.select([read.n_impressions])


def test_columns_resolution(log: dict[str, np.ndarray]) -> None:
    with pytest.raises(ValueError, match=r"no doc column 'doc'; its columns are \['session', 'query', 'url'"):
        clicks.read_log({"session": log["session"], "query": log["query"], "url": log["doc"],
                         "position": log["position"], "clicked": log["clicked"]})
    with pytest.raises(ValueError, match="unknown roles"):
        clicks.read_log(log, columns={"sesion": "session"})
    with pytest.raises(ValueError, match="has no dwell column 'dw'"):
        clicks.read_log(log, columns={"dwell": "dw"})
    # order used when present under its default name, left out with None
    assert clicks.read_log(log).order is not None
    assert clicks.read_log(log, columns={"order": None}).order is None
    with pytest.raises(TypeError, match="a click log must be"):
        clicks.read_log([1, 2, 3])
    with pytest.raises(ValueError, match=r"expected a \.parquet/\.pq or \.csv file"):
        clicks.read_log("log.json")
    with pytest.raises(TypeError, match="the position column 'position' must be numeric"):
        clicks.read_log({**log, "position": log["position"].astype(str)})


def test_import_boostplug_clicks_loads_no_optional_package() -> None:
    code = ("import sys, numpy as np; import boostplug; from boostplug import clicks; "
            "assert not [m for m in ('pandas', 'polars', 'pyarrow', 'dask', 'numba') if m in sys.modules], "
            "sorted(m for m in ('pandas', 'polars', 'pyarrow', 'dask', 'numba') if m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---- the refusals: one test per reason, raise and skip ---------------------------------------------
BAD = {
    "gap": (dict(position={6: 3}), r"session 2, query 'b' \(log rows 5, 6\): positions must be 1\.\.n.*\[1, 3\].*"
                                   r"log row 6 has 3 where 2 was expected",
            "positions not 1..n"),
    "repeat": (dict(position={2: 2}), r"session 1, query 'a' .*positions must be 1\.\.n.*\[1, 2, 2\]", "positions"),
    "zero": (dict(position={3: 0, 4: 1}), r"session 2, query 'a' .*\[0, 1\]", "positions"),
    "fraction": (dict(position={1: 1.5}), r"session 1, query 'a' .*log row 1 has 1\.5", "positions"),
    "missing position": (dict(position={6: np.nan}), r"session 2, query 'b' .*\(log row 6 has no position\)",
                         "positions"),
    # a missing position sorts last: the row named was the one after it
    "missing first position": (dict(position={5: np.nan}), r"session 2, query 'b' .*\[2, None\] \(log row 5 has no "
                                                           r"position\)", "positions"),
    "shown twice": (dict(doc={2: 10}), r"session 1, query 'a' .*document 10 is shown twice \(again at log row 2\)",
                    "shown twice"),
    "click 2": (dict(clicked={4: 2}), r"session 2, query 'a' .*log row 4 has clicked = 2; clicks must be 0 or 1",
                "not 0 or 1"),
    "click -1": (dict(clicked={0: -1}), r"log row 0 has clicked = -1", "not 0 or 1"),
    "click nan": (dict(clicked={6: np.nan}), r"log row 6 has clicked = nan", "not 0 or 1"),
    "missing doc": (dict(doc={5: None}), r"session 2, query 'b' .*log row 5 has no document key", "document key"),
    "click without time": (dict(order={1: np.nan}), r"log row 1 is a click without an order/time value", "order"),
    "negative dwell": (dict(dwell={6: -1.0}), r"log row 6 is a click with dwell -1", "dwell"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_impression_is_refused_by_name(case: str) -> None:
    changes, message, _ = BAD[case]
    log = _with(**changes)
    with pytest.raises(ValueError, match=message):
        clicks.read_log(log)
    with pytest.raises(ValueError, match=r"on_bad='skip'"):
        clicks.preferences(log)


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_impression_is_skipped_and_reported(case: str) -> None:
    changes, _, reason = BAD[case]
    log = _with(**changes)
    with pytest.warns(UserWarning, match=r"dropped 1 impressions and \d rows"):
        read = clicks.read_log(log, on_bad="skip")
    assert read.n_impressions == 2 and read.dropped.n_impressions == 1
    (why,) = read.dropped.impressions
    assert reason in why
    assert read.dropped.n_rows == 7 - len(read)
    with pytest.warns(UserWarning):
        prefs = clicks.preferences(log, on_bad="skip")
    assert prefs.dropped.n_impressions == 1 and prefs.n_impressions == 2


def test_first_bad_impression_in_log_order_is_named() -> None:
    log = _with(position={6: 5, 2: 7})
    with pytest.raises(ValueError, match="session 1, query 'a'"):
        clicks.read_log(log)
    with pytest.warns(UserWarning):
        read = clicks.read_log(log, on_bad="skip")
    assert read.dropped.impressions == {"positions not 1..n within the impression": 2}


def test_rows_without_ids() -> None:
    log = _with(session={3: None})
    with pytest.raises(ValueError, match="log row 3 has no session id"):
        clicks.read_log(log)
    with pytest.warns(UserWarning, match="1 rows"):
        read = clicks.read_log(log, on_bad="skip")
    # the row is gone, and with it position 1 of session 2's impression of query 'a'
    assert read.dropped.rows == {"a row without a session or query id": 1,
                                 "positions not 1..n within the impression": 1}
    assert read.n_impressions == 2


def test_pandas_nulls_are_missing_values() -> None:
    import pandas as pd

    df = pd.DataFrame(_impressions())
    df["clicked"] = pd.array([0, 1, 0, None, 0, 0, 1], dtype="Int64")
    with pytest.raises(ValueError, match="log row 3 has clicked = nan"):
        clicks.read_log(df)
    df = pd.DataFrame(_impressions())
    df["query"] = pd.array(["a", "a", "a", None, "a", "b", "b"], dtype="string")
    with pytest.raises(ValueError, match="log row 3 has no query id"):
        clicks.read_log(df)
    import pyarrow as pa

    table = pa.table({**_impressions(), "doc": pa.array([10, 11, 12, 10, None, 20, 21])})
    with pytest.raises(ValueError, match="log row 4 has no document key"):
        clicks.read_log(table)


def test_nothing_dropped_no_warning(log: dict[str, np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = clicks.read_log(log, on_bad="skip")
    assert not read.dropped and str(read.dropped) == "nothing dropped"


# ---- streaming files -----------------------------------------------------------------------------
def _sessions_together(log: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    order = np.argsort(log["session"], kind="stable")
    return {k: v[order] for k, v in log.items()}


@pytest.mark.parametrize("batch_rows", [1, 5, 64])
def test_files_stream_in_batches_of_whole_sessions(log: dict[str, np.ndarray], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, batch_rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ref = clicks.preferences(log, "all")
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table(_sessions_together(log)), path, row_group_size=7)
    monkeypatch.setattr(_sources, "FILE_BATCH_ROWS", batch_rows)
    same(ref, clicks.preferences(path, "all"))


def test_a_streamed_session_must_be_contiguous(log: dict[str, np.ndarray], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ordered = _sessions_together(log)
    first = ordered["session"][0]
    n_first = int((ordered["session"] == first).sum())
    # move the first session's last row to the end of the file
    perm = np.r_[0:n_first - 1, n_first:len(ordered["session"]), n_first - 1]
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({k: v[perm] for k, v in ordered.items()}), path)
    monkeypatch.setattr(_sources, "FILE_BATCH_ROWS", 1 << 20)  # within one batch: seen before validating
    with pytest.raises(ValueError, match=f"session '{first}' reappears at log row {len(perm) - 1}"):
        clicks.preferences(path, "all")
    # across batches the first part is read before the rest is seen: its impression lacks a position
    monkeypatch.setattr(_sources, "FILE_BATCH_ROWS", 4)
    with pytest.raises(ValueError, match=f"session '{first}'.*positions must be.*read in batches"):
        clicks.preferences(path, "all")
    with pytest.raises(ValueError, match=f"session '{first}' reappears"):
        clicks.preferences(path, "all", on_bad="skip")
    # read whole, the same file is fine
    same(clicks.preferences(log, "all"), clicks.preferences(clicks.read_log(path), "all"))


def test_streamed_bad_impressions_are_counted_over_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    log = _with(position={2: 4, 6: 3})
    pq.write_table(pa.table({k: (v.astype(str) if k == "query" else v) for k, v in log.items()
                             if k not in ("doc", "session")} | {"doc": log["doc"].astype(np.int64),
                                                                 "session": log["session"].astype(np.int64)}),
                   tmp_path / "log.parquet")
    monkeypatch.setattr(_sources, "FILE_BATCH_ROWS", 2)
    with pytest.warns(UserWarning, match="dropped 2 impressions and 5 rows"):
        prefs = clicks.preferences(tmp_path / "log.parquet", on_bad="skip")
    assert prefs.n_impressions == 1 and prefs.dropped.n_impressions == 2
    with pytest.raises(ValueError, match=r"session 1, query 'a' .*log rows 0, 1, 2"):
        clicks.preferences(tmp_path / "log.parquet")


def test_skipping_every_impression_is_an_error_from_every_source(tmp_path: Path) -> None:
    """on_bad="skip" that leaves nothing is a ValueError with the report, not an empty result."""
    bad = {"session": [1, 1, 2, 2], "query": ["q", "q", "r", "r"], "doc": ["a", "a", "b", "c"],
           "position": [1, 2, 1, 1], "clicked": [0, 1, 1, 0]}
    path = tmp_path / "bad.csv"
    path.write_text("session,query,doc,position,clicked\n" +
                    "".join(f"{s},{q},{d},{p},{c}\n" for s, q, d, p, c in zip(*bad.values())))
    for source in (bad, path):
        with pytest.raises(ValueError, match="dropped every impression of the log.*2 impressions"):
            clicks.read_log(source, on_bad="skip")
        with pytest.raises(ValueError, match="dropped every impression of the log"):
            clicks.preferences(source, on_bad="skip")
    # one good impression left: a warning and a result
    good = {k: [*v, g] for (k, v), g in zip(bad.items(), [3, "s", "x", 1, 1])}
    with pytest.warns(UserWarning, match="2 impressions"):
        assert clicks.read_log(good, on_bad="skip").n_impressions == 1


def test_an_empty_log_is_an_empty_result_from_every_source(tmp_path: Path) -> None:
    """A log with its columns but no row reads as an empty log and gives no preference, whatever
    holds it; a file without even a header is refused naming it."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = ["session", "query", "doc", "position", "clicked"]
    (tmp_path / "empty.csv").write_text(",".join(columns) + "\n")
    pq.write_table(pa.table({c: pa.array([], pa.int64()) for c in columns}), tmp_path / "empty.parquet")
    pd.DataFrame({c: [] for c in columns}).to_parquet(tmp_path / "pandas.parquet")
    sources = [pd.DataFrame({c: pd.Series([], dtype="int64") for c in columns}), {c: [] for c in columns},
               tmp_path / "empty.csv", str(tmp_path / "empty.parquet"), tmp_path / "pandas.parquet"]
    for source in sources:
        log = clicks.read_log(source)
        assert (log.n_impressions, len(log)) == (0, 0), source
        prefs = clicks.preferences(source, "click>skip-above")
        assert (len(prefs), prefs.n_impressions) == (0, 0), source
    (tmp_path / "blank.csv").write_text("")
    for read in (clicks.read_log, clicks.preferences):
        with pytest.raises(ValueError, match=r"click log file '.*blank\.csv' is empty: not even a header line"):
            read(tmp_path / "blank.csv")


def _csv_log(path: Path, n_sessions: int = 400) -> list[str]:
    lines = ["session,query,doc,position,clicked"]
    lines += [f"{s},{s % 7},{d},{d + 1},{int(d == s % 3)}" for s in range(n_sessions) for d in range(3)]
    path.write_text("\n".join(lines) + "\n")
    return lines


@pytest.mark.parametrize("damage", ["cut mid-row", "extra field", "not a number"])
def test_a_damaged_csv_names_the_file_and_line(tmp_path: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.csv"
    # a value that is not a number is a conversion error only beyond the first block of 1 MiB
    lines = _csv_log(path, 40_000 if damage == "not a number" else 400)
    line = {"cut mid-row": 1000, "extra field": 517, "not a number": 100_001}[damage]  # the header is line 1
    if damage == "cut mid-row":
        path.write_text("\n".join(lines[:line - 1]) + "\n" + lines[line - 1][:4])
    elif damage == "extra field":
        lines[line - 1] += ",9"
        path.write_text("\n".join(lines) + "\n")
    else:
        lines[line - 1] = lines[line - 1].rsplit(",", 2)[0] + ",x,0"  # the position
        path.write_text("\n".join(lines) + "\n")
    if damage == "not a number":  # a TypeError naming the log row (line - 2) when the file is one block ...
        with pytest.raises(TypeError, match=rf"the position column 'position' must be numeric.* log row {line - 2} "
                                            "has 'x'"):
            clicks.read_log(path)
        monkeypatch.setattr(_sources, "FILE_BATCH_ROWS", 1)  # ... and pyarrow's conversion error in a later one
        with pytest.raises(ValueError, match=rf"click log file '.*log\.csv', line {line}: column 3 \(from 0\) holds "
                                             "'x'"):
            clicks.preferences(path)
        return
    for read in (clicks.read_log, clicks.preferences):
        with pytest.raises(ValueError, match=rf"click log file '.*log\.csv', line {line}: "):
            read(path)


def test_a_truncated_parquet_file_is_refused_naming_it(tmp_path: Path) -> None:
    import pandas as pd

    whole = tmp_path / "whole.parquet"
    pd.DataFrame({"session": np.repeat(np.arange(5000), 2), "query": 1, "doc": np.tile([1, 2], 5000),
                  "position": np.tile([1, 2], 5000), "clicked": np.tile([0, 1], 5000)}).to_parquet(whole)
    data = whole.read_bytes()
    for cut in (len(data) // 2, len(data) - 3, 10):
        path = tmp_path / f"cut{cut}.parquet"
        path.write_bytes(data[:cut])
        for read in (clicks.read_log, clicks.preferences):
            with pytest.raises(ValueError, match=rf"click log file '.*cut{cut}\.parquet' is not a readable Parquet "
                                                 r"file \(truncated or damaged\?\): "):
                read(path)
