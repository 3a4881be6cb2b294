"""Raw click-log formats: Baidu-ULTR's parts and the Yandex relevance-prediction log, written in
their own layout into small files (plain and gzipped), read against hand-built logs, streamed in
small batches to the same preferences as read whole, and every bad line named by file and line
(or skipped and reported)."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest
from tests.clicks._logs import same

from boostplug import clicks
from boostplug.clicks.formats import baidu_ultr, yandex


def write(path: Path, lines: list[str], gz: bool) -> Path:
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def assert_log(log: clicks.ClickLog, expected: dict[str, list]) -> None:
    """``log`` holds exactly the rows of ``expected`` (NaN where an order/dwell is absent)."""
    assert log.n_impressions == clicks.read_log(expected).n_impressions
    got = log.columns()
    assert sorted(got) == sorted(expected)
    for name, want in expected.items():
        np.testing.assert_array_equal(np.asarray(got[name]), np.asarray(want), err_msg=name)


def quiet_skip(read, *args, **kwargs):
    with pytest.warns(UserWarning, match="dropped"):
        return read(*args, on_bad="skip", **kwargs)


# ---- Baidu-ULTR -----------------------------------------------------------------------------------------

def bq(qid: str, tokens: str = "7\x018") -> str:
    """A query line: Qid, Query (token ids), Query Reformulation."""
    return f"{qid}\t{tokens}\t9\x0110"


def bd(pos: int, url: str, click: int, dwell: float | str = 0) -> str:
    """A document line with all 32 fields of the README (tokens and display fields filled in)."""
    f = ["0"] * 32
    f[0], f[1], f[2], f[3], f[4], f[5] = str(pos), url, "11\x0112\x0113", "14\x0115", "-", str(click)
    f[6] = f[7] = f[22] = f[27] = f[31] = "-"
    f[10], f[16] = "3.5", str(dwell)
    return "\t".join(f)


BAIDU = [bq("101"), bd(1, "u1", 0), bd(2, "u2", 1, 30.5), bd(3, "u3", 0, 99),
         bq("109"),  # a query line with no documents
         bq("102", "5"), bd(1, "u2", 1, 4), bd(2, "u4", 0),
         bq("103"), bd(1, "u2", 0), bd(2, "u1", 1, 0)]
BAIDU_LOG = {"session": [0, 0, 0, 2, 2, 3, 3], "query": ["101"] * 3 + ["102"] * 2 + ["103"] * 2,
             "doc": ["u1", "u2", "u3", "u2", "u4", "u2", "u1"], "position": [1, 2, 3, 1, 2, 1, 2],
             "clicked": [False, True, False, True, False, False, True],
             "dwell": [np.nan, 30.5, np.nan, 4.0, np.nan, np.nan, 0.0]}


@pytest.mark.parametrize("gz", [True, False])
def test_baidu_reads_the_hand_built_log(tmp_path: Path, gz: bool) -> None:
    log = clicks.read_baidu_ultr(write(tmp_path / "part-00001.gz", BAIDU, gz))
    assert_log(log, BAIDU_LOG)
    assert log.order is None and not log.dropped


def test_baidu_query_tokens_join_sessions_of_one_query(tmp_path: Path) -> None:
    path = write(tmp_path / "part-00001", BAIDU, gz=False)
    log = clicks.read_baidu_ultr(path, query="tokens")
    keys = log.query[log.group_ptr[:-1]]
    assert keys[0] == keys[2] != keys[1] and keys.dtype == np.int64  # qids 101 and 103 share "7 8"
    # session 0 (qid 101) prefers u2 to u1, session 3 (qid 103, the same tokens) u1 to u2
    prefs = clicks.preferences(clicks.BaiduULTR(path, query="tokens"), "click>skip-above")
    assert len(prefs) == 0  # one query: an even split, no pair
    by_qid = clicks.preferences(clicks.BaiduULTR(path), "click>skip-above")
    assert by_qid.query.tolist() == ["101", "103"] and by_qid.preferred.tolist() == ["u2", "u1"]


def test_baidu_parts_folder_continues_the_sessions(tmp_path: Path) -> None:
    write(tmp_path / "part-00000.gz", BAIDU[:5], gz=True)
    write(tmp_path / "part-00001", BAIDU[5:], gz=False)
    assert_log(clicks.read_baidu_ultr(tmp_path), BAIDU_LOG)
    assert_log(clicks.read_baidu_ultr([tmp_path / "part-00000.gz", tmp_path / "part-00001"]), BAIDU_LOG)


def random_baidu(rng: np.random.Generator, n_blocks: int) -> tuple[list[str], dict[str, list]]:
    """Blocks of a few queries over a small pool of urls, and the log they must give."""
    lines: list[str] = []
    cols: dict[str, list] = {c: [] for c in ("session", "query", "doc", "position", "clicked", "dwell")}
    for s in range(n_blocks):
        qid = str(int(rng.integers(3)))
        lines.append(bq(qid))
        n = int(rng.integers(0, 6))
        for k, u in enumerate(rng.choice(8, size=n, replace=False), 1):
            click = int(rng.random() < 0.4)
            dwell = float(rng.integers(0, 60))
            lines.append(bd(k, f"u{u}", click, dwell))
            for c, v in zip(cols, (s, qid, f"u{u}", k, bool(click), dwell if click else np.nan)):
                cols[c].append(v)
    return lines, cols


@pytest.mark.parametrize("batch_rows", [1, 3, 16])
def test_baidu_streams_to_the_same_preferences(tmp_path: Path, rng: np.random.Generator, batch_rows: int) -> None:
    lines, cols = random_baidu(rng, 80)
    cut = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].count("\t") == 2)  # a query line
    write(tmp_path / "part-00000.gz", lines[:cut], gz=True)  # parts end with a whole block
    write(tmp_path / "part-00001.gz", lines[cut:], gz=True)
    whole = clicks.read_baidu_ultr(tmp_path)
    assert_log(whole, cols)
    strategies = ["click>skip-above", "click>skip-previous", "click>no-click-next"]
    ref = clicks.preferences(cols, strategies, min_dwell=10)
    assert len(ref)
    same(ref, clicks.preferences(whole, strategies, min_dwell=10))
    same(ref, clicks.preferences(clicks.BaiduULTR(tmp_path, batch_rows=batch_rows), strategies, min_dwell=10))


@pytest.mark.parametrize("gz", [True, False])
def test_baidu_empty_file(tmp_path: Path, gz: bool) -> None:
    path = write(tmp_path / "part-00000.gz", [], gz)
    log = clicks.read_baidu_ultr(path)
    assert log.n_impressions == 0 and len(log) == 0
    assert len(clicks.preferences(clicks.BaiduULTR(path))) == 0


@pytest.mark.parametrize("gz", [True, False])
def test_baidu_truncated_last_line(tmp_path: Path, gz: bool) -> None:
    cut = bd(3, "u9", 1, 5)[:20]  # the file ends inside a document line
    path = write(tmp_path / "part-00003.gz", BAIDU[:-1] + [bd(2, "u1", 1, 0), cut], gz)
    with pytest.raises(ValueError, match=r"part-00003\.gz, line 12: a document line needs at least 17"):
        clicks.read_baidu_ultr(path)
    log = quiet_skip(clicks.read_baidu_ultr, path)
    assert_log(log, {k: v[:5] for k, v in BAIDU_LOG.items()})  # the last impression is left out whole
    assert log.dropped.impressions == {"a malformed line": 1} and log.dropped.rows == {"a malformed line": 3}


def test_baidu_truncated_gzip_stream(tmp_path: Path) -> None:
    path = tmp_path / "part-00000.gz"
    path.write_bytes(gzip.compress("".join(x + "\n" for x in BAIDU * 50).encode())[:-30])
    with pytest.raises(ValueError, match="part-00000.gz: the gzip stream breaks off .* truncated"):
        clicks.read_baidu_ultr(path)


@pytest.mark.parametrize("line, message", [
    (bd(1, "u1", 2), r"Click b'2' is not 0 or 1"),
    (bd("x", "u1", 0), r"Pos b'x' is not an integer"),  # type: ignore[arg-type]
    (bd(1, "u1", 1, "-"), r"Dwelling Time b'-' of a click"),
    (bd(1, "u1", 1, -3), r"Dwelling Time b'-3' of a click"),
    # numpy's OverflowError named no file or line; Python's int() reads '1_0' as 10 and ' 1' as 1
    (bd(99999999999999999999, "u1", 0), r"Pos 99999999999999999999 does not fit in 64 bits"),
    (bd("1_0", "u1", 0), r"Pos b'1_0' is not an integer"),  # type: ignore[arg-type]
    (bd(" 1", "u1", 0), r"Pos b' 1' is not an integer"),  # type: ignore[arg-type]
], ids=["click", "pos", "dwell-missing", "dwell-negative", "pos-huge", "pos-underscore", "pos-space"])
def test_baidu_bad_values_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path / "p.txt", [bq("1"), bd(1, "u0", 0), bq("2"), line], gz=False)
    with pytest.raises(ValueError, match=rf"p\.txt, line 4: {message}"):
        clicks.read_baidu_ultr(path)
    log = quiet_skip(clicks.read_baidu_ultr, path)
    assert log.n_impressions == 1 and log.dropped.n_impressions == 1


def test_baidu_text_that_is_not_utf8_is_refused_not_merged(tmp_path: Path) -> None:
    # decoded with replacement characters, Qids b'\xff01' and b'\xfe01' were both '\ufffd01': one query
    lines = [b"\xff01\t7\x018\t9", bd(1, "u1", 1, 5).encode(), b"\xfe01\t7\x018\t9", bd(1, "u2", 1, 5).encode(),
             bq("3").encode(), bd(1, "u3", 0).encode(), bd(2, "u9", 0).encode().replace(b"u9", b"\xffu"),
             bq("4").encode(), bd(1, "u4", 0).encode()]
    path = tmp_path / "p.txt"
    path.write_bytes(b"".join(x + b"\n" for x in lines))
    with pytest.raises(ValueError, match=r"p\.txt, line 1: Qid b'\\xff01' is not UTF-8 text \(byte 0\)"):
        clicks.read_baidu_ultr(path)
    log = quiet_skip(clicks.read_baidu_ultr, path)
    assert log.doc.tolist() == ["u4"] and log.dropped.impressions == {"a malformed line": 3}
    assert log.dropped.rows == {"a malformed line": 4}
    # query="tokens" reads no Qid: only the impression of the URL that is not UTF-8 is left out
    with pytest.raises(ValueError, match=r"p\.txt, line 7: URL MD5 b'\\xffu' is not UTF-8 text \(byte 0\)"):
        clicks.read_baidu_ultr(path, query="tokens")
    assert quiet_skip(clicks.read_baidu_ultr, path, query="tokens").doc.tolist() == ["u1", "u2", "u4"]


def test_baidu_document_before_query_and_bad_impressions(tmp_path: Path) -> None:
    path = write(tmp_path / "p.txt", [bd(1, "u1", 0)] + BAIDU, gz=False)
    with pytest.raises(ValueError, match=r"p\.txt, line 1: a document line before any query line"):
        clicks.read_baidu_ultr(path)
    assert_log(quiet_skip(clicks.read_baidu_ultr, path), BAIDU_LOG)
    gap = write(tmp_path / "gap.txt", [bq("5"), bd(1, "u1", 0), bd(3, "u2", 1, 1)], gz=False)
    with pytest.raises(ValueError, match=r"session 0, query '5'.*positions must be 1..n"):
        clicks.read_baidu_ultr(gap)


def test_baidu_arguments(tmp_path: Path) -> None:
    path = write(tmp_path / "p.txt", BAIDU, gz=False)
    with pytest.raises(ValueError, match=r"query must be one of \['qid', 'tokens'\], got 'text'"):
        clicks.BaiduULTR(path, query="text")
    with pytest.raises(ValueError, match="batch_rows must be a positive integer or None, got 0"):
        clicks.BaiduULTR(path, batch_rows=0)
    with pytest.raises(ValueError, match="no such file or folder: .*missing"):
        clicks.BaiduULTR(tmp_path / "missing")
    with pytest.raises(TypeError, match="expected a path or a list of paths, got int"):
        clicks.BaiduULTR(3)
    with pytest.raises(ValueError, match="columns= does not apply to a BaiduULTR log"):
        clicks.read_log(clicks.BaiduULTR(path), columns={"doc": "url"})


# ---- Yandex relevance prediction ------------------------------------------------------------------------

def yq(sid: int, t: int, qid: int, urls: list[int], region: int = 213) -> str:
    return "\t".join(map(str, [sid, t, "Q", qid, region, *urls]))


def yc(sid: int, t: int, url: int) -> str:
    return f"{sid}\t{t}\tC\t{url}"


YANDEX = [yq(1, 0, 10, [100, 101, 102]), yc(1, 5, 101), yc(1, 9, 101), yc(1, 12, 100),
          yq(1, 20, 11, [200, 101]), yc(1, 25, 101),  # 101 is the latest query's now
          yq(2, 0, 10, [101, 100, 103]), yc(2, 3, 103), yq(2, 8, 12, [])]
YANDEX_LOG = {"session": [1] * 5 + [2] * 3, "query": [10, 10, 10, 11, 11, 10, 10, 10],
              "doc": [100, 101, 102, 200, 101, 101, 100, 103], "position": [1, 2, 3, 1, 2, 1, 2, 3],
              "clicked": [True, True, False, False, True, False, False, True],
              "order": [12.0, 5.0, np.nan, np.nan, 25.0, np.nan, np.nan, 3.0]}


@pytest.mark.parametrize("gz", [True, False])
def test_yandex_reads_the_hand_built_log(tmp_path: Path, gz: bool) -> None:
    log = clicks.read_yandex(write(tmp_path / "log.txt", YANDEX, gz))
    assert_log(log, YANDEX_LOG)
    assert log.dwell is None and not log.dropped


def test_yandex_unshown_click_is_refused_or_dropped(tmp_path: Path) -> None:
    lines = YANDEX[:2] + [yc(1, 6, 999)] + YANDEX[2:] + [yc(3, 1, 100)]  # 999 never shown; session 3 has no query
    path = write(tmp_path / "log.gz", lines, gz=True)
    with pytest.raises(ValueError, match=r"Yandex log .*log\.gz, line 3: a click on URL 999, which no earlier "
                                         r"query of session 1 showed"):
        clicks.read_yandex(path)
    log = quiet_skip(clicks.read_yandex, path)
    assert_log(log, YANDEX_LOG)
    assert log.dropped.rows == {yandex.UNSHOWN: 2} and log.dropped.n_impressions == 0
    assert "line 3" in log.dropped.examples[yandex.UNSHOWN]


def test_yandex_repeated_query(tmp_path: Path) -> None:
    again = YANDEX[:4] + [yq(1, 15, 10, [100, 101, 102]), yc(1, 16, 102)] + YANDEX[4:]
    expected = dict(YANDEX_LOG, clicked=list(YANDEX_LOG["clicked"]), order=list(YANDEX_LOG["order"]))
    expected["clicked"][2], expected["order"][2] = True, 16.0  # the same list again: the same impression
    assert_log(clicks.read_yandex(write(tmp_path / "same.txt", again, gz=False)), expected)
    other = YANDEX[:4] + [yq(1, 15, 10, [102, 100]), yc(1, 16, 102)] + YANDEX[4:]
    path = write(tmp_path / "other.txt", other, gz=False)
    with pytest.raises(ValueError, match=r"other\.txt, line 5: session 1 shows query 10 again with other results"):
        clicks.read_yandex(path)
    log = quiet_skip(clicks.read_yandex, path)
    assert_log(log, YANDEX_LOG)  # the other list and its click are left out
    assert log.dropped.impressions == {yandex.REPEATED: 1} and log.dropped.rows == {yandex.REPEATED: 2}


@pytest.mark.parametrize("gz", [True, False])
@pytest.mark.parametrize("last, message", [
    ("2\t9\tC", r"a C line has 4 tab-separated fields, this one has 3"),
    ("2\t9", r"expected 'SessionID TimePassed Q .* got 2 fields"),
    ("2\t9\tQ\t14", r"a Q line has at least 5 tab-separated fields, this one has 4"),
    ("2\t9\tC\t10x", r"URLID b'10x' is not an integer"),
    ("2\tlate\tC\t103", r"TimePassed b'late' is not a number"),
    ("2\t9\tC\t99999999999999999999", r"URLID 99999999999999999999 does not fit in 64 bits"),
    ("2\t9\tC\t16_25", r"URLID b'16_25' is not an integer"),  # Python's int() reads it as 1625
], ids=["cut-click", "cut-head", "cut-query", "bad-url", "bad-time", "huge-url", "underscore-url"])
def test_yandex_truncated_or_malformed_last_line(tmp_path: Path, gz: bool, last: str, message: str) -> None:
    path = write(tmp_path / "log", YANDEX + [last], gz)
    with pytest.raises(ValueError, match=rf"log, line 10: {message}"):
        clicks.read_yandex(path)
    log = quiet_skip(clicks.read_yandex, path)
    assert_log(log, YANDEX_LOG)
    assert log.dropped.rows == {"a malformed line": 1}


@pytest.mark.parametrize("gz", [True, False])
def test_yandex_empty_file(tmp_path: Path, gz: bool) -> None:
    path = write(tmp_path / "log", [], gz)
    assert clicks.read_yandex(path).n_impressions == 0
    assert len(clicks.preferences(clicks.YandexRelPred(path), "all")) == 0


def random_yandex(rng: np.random.Generator, n_sessions: int) -> tuple[list[str], dict[str, list]]:
    """Sessions of distinct queries over a small pool of urls, clicks (some repeated) in time
    order, and the log they must give, built from what was clicked first and when."""
    lines: list[str] = []
    cols: dict[str, list] = {c: [] for c in ("session", "query", "doc", "position", "clicked", "order")}
    for s in range(n_sessions):
        sid = 1000 + 7 * s
        t = 0
        for q in rng.choice(5, size=int(rng.integers(1, 4)), replace=False):
            urls = [int(u) for u in rng.choice(9, size=int(rng.integers(1, 7)), replace=False)]
            lines.append(yq(sid, t, int(q), urls))
            first: dict[int, int] = {}
            for _ in range(int(rng.integers(0, 4))):
                t += int(rng.integers(0, 3))  # ties in time happen
                u = urls[int(rng.integers(len(urls)))]
                lines.append(yc(sid, t, u))
                first.setdefault(u, t)
            t += 1
            for k, u in enumerate(urls, 1):
                for c, v in zip(cols, (sid, int(q), u, k, u in first, float(first.get(u, np.nan)))):
                    cols[c].append(v)
    return lines, cols


@pytest.mark.parametrize("batch_rows", [1, 5, 40])
def test_yandex_streams_to_the_same_preferences(tmp_path: Path, rng: np.random.Generator, batch_rows: int) -> None:
    lines, cols = random_yandex(rng, 60)
    path = write(tmp_path / "clicklog.gz", lines, gz=True)
    whole = clicks.read_yandex(path)
    assert_log(whole, cols)
    ref = clicks.preferences(cols, "all")
    assert len(ref)
    same(ref, clicks.preferences(whole, "all"))
    same(ref, clicks.preferences(clicks.YandexRelPred(path, batch_rows=batch_rows), "all"))


def test_yandex_split_session_is_refused_when_streamed(tmp_path: Path) -> None:
    path = write(tmp_path / "log", YANDEX + [yq(1, 40, 13, [300, 301]), yc(1, 41, 300)], gz=False)
    with pytest.raises(ValueError, match="session 1 reappears"):
        clicks.preferences(clicks.YandexRelPred(path, batch_rows=2))


@pytest.mark.parametrize("fmt", ["baidu", "yandex"])
def test_every_cut_point_of_a_file_reads_whole_lines_or_names_the_cut_line(tmp_path: Path, fmt: str) -> None:
    """A file cut at a line end is a shorter log; cut inside a line, a ValueError naming that line.
    A cut field still reads (a number as a shorter number; the first three fields of Baidu's last
    document line as a query line, which dropped the document without a word): so a last line
    without its line end is refused whatever it holds."""
    lines, read = (BAIDU, clicks.read_baidu_ultr) if fmt == "baidu" else (YANDEX, clicks.read_yandex)
    data = "".join(x + "\n" for x in lines).encode()
    path = tmp_path / "part"
    for cut in range(1, len(data)):
        path.write_bytes(data[:cut])
        if data[cut - 1:cut] == b"\n":
            read(path)
            continue
        line = data[:cut].count(b"\n") + 1
        with pytest.raises(ValueError, match=rf"part, line {line}: the file ends inside this line \(it has no line "
                                             r"end\): the file is cut short"):
            read(path)


@pytest.mark.parametrize("gz", [True, False])
def test_baidu_part_cut_in_the_first_fields_of_its_last_document(tmp_path: Path, gz: bool) -> None:
    for keep in (1, 2, 3):  # the cut document line keeps 1 to 3 fields: it looks like a query line
        cut = "\t".join(bd(3, "u9", 1, 5).split("\t")[:keep])
        path = tmp_path / "part-00003.gz"
        data = "".join(x + "\n" for x in BAIDU).encode() + cut.encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        with pytest.raises(ValueError, match=r"part-00003\.gz, line 12: the file ends inside this line"):
            clicks.read_baidu_ultr(path)
        log = quiet_skip(clicks.read_baidu_ultr, path)
        # it cannot tell a query line from a document line cut short: the impression it may end goes with it
        assert_log(log, {k: v[:5] for k, v in BAIDU_LOG.items()})
        assert log.dropped.impressions == {"a malformed line": 1} and log.dropped.rows == {"a malformed line": 3}
        assert "line 12" in log.dropped.examples["a malformed line"]


def test_no_warning_when_nothing_is_dropped(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clicks.read_yandex(write(tmp_path / "y", YANDEX, gz=False), on_bad="skip")
        clicks.read_baidu_ultr(write(tmp_path / "b", BAIDU, gz=False), on_bad="skip")
    assert baidu_ultr.QUERY_KEYS == ("qid", "tokens")


def test_the_docs_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "clicks.md").read_text(encoding="utf-8")
    section = page[page.index("## Reading real logs"):]
    code = section[section.index("```python\n") + len("```python\n"):section.index("\n```\n")]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/clicks.md", "exec"), {})
    out = capsys.readouterr().out
    assert "1623   1625" in out and "1623   1627" in out and "1627   1625" in out  # the three pairs the page names
    assert "9c2e         2     True   41.5" in out
    assert_log(clicks.read_yandex(tmp_path / "clicklog.txt"),
               {"session": [7, 7, 7, 8, 8, 8], "query": [174] * 6, "doc": [1625, 1627, 1623, 1627, 1625, 1623],
                "position": [1, 2, 3] * 2, "clicked": [False, True, False, False, False, True],
                "order": [np.nan, 11.0, np.nan, np.nan, np.nan, 5.0]})
