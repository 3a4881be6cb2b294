"""boostplug.data: RankingData, LETOR read/write (round trip, malformed files, real files).

The numba LETOR parser (boostplug.data._letor_fast) against scikit-learn's reader.

Whatever the fast parser accepts must come out of scikit-learn's reader (the library's
previous path) bit for bit, and so must the slow line-by-line pass
(``_letor_lines.parse_lines``): the CSR arrays and their dtypes, ``y`` and ``qid``. Whatever
the fast parser declines goes to that pass, so ``load_letor`` gives the same data or the same
message either way. Numbers are compared with Python's ``float`` token by token.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import io
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from tests.data.test_letor_fuzz import Parsed, fuzzed_files, reference_parse
from tests.data.test_letor_fuzz import _check as check_against_reference

from boostplug import _memory
from boostplug.cli import info as info_cli
from boostplug.data import RankingData, concat, load_letor, read_query_file, write_letor
from boostplug.data import _letor_fast, _letor_write
from boostplug.data import letor as letor_module
from boostplug.data._letor_fast import parse
from boostplug.data._letor_lines import parse_lines
from boostplug.groups import group_ptr_from_sizes


def _random_data(rng: np.random.Generator, n_queries: int = 7, n_features: int = 6,
                 comments: bool = True) -> RankingData:
    sizes = rng.integers(1, 6, size=n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_features)) * 10.0 ** rng.integers(-8, 8, size=(n, n_features))
    X[rng.random((n, n_features)) < 0.4] = 0.0
    X[0, -1] = 1.0 / 3.0  # needs 17 significant digits
    y = rng.integers(0, 5, size=n).astype(np.float64)
    y[-1] = 0.5
    ids = rng.permutation(10_000)[:n_queries] + 1  # distinct, unsorted
    qid = np.repeat(ids, sizes)
    cmt = [f"docid = GX{i:03d}-{rng.integers(1e6)} inc = 1 # inner hash" for i in range(n)] if comments else None
    return RankingData(X, y, qid, None, cmt)


def _assert_same(a: RankingData, b: RankingData, comments: bool = True) -> None:
    Xa = a.X.toarray() if sp.issparse(a.X) else a.X
    Xb = b.X.toarray() if sp.issparse(b.X) else b.X
    assert Xa.shape == Xb.shape
    assert np.array_equal(Xa, Xb)  # exact, not approximate
    assert np.array_equal(a.y, b.y)
    assert np.array_equal(a.qid, b.qid)
    assert np.array_equal(a.group_ptr, b.group_ptr)
    if comments:
        assert a.comments == b.comments


# --- RankingData ------------------------------------------------------------------

def test_rankingdata_properties_and_fill_in():
    d = RankingData(np.zeros((5, 3)), [0, 1, 2, 0, 1], qid=[9, 9, 4, 4, 4])
    assert (d.n_docs, d.n_queries, d.n_features) == (5, 2, 3)
    assert d.group_ptr.tolist() == [0, 2, 5] and d.sizes.tolist() == [2, 3]
    assert d.y.dtype == np.float64 and d.X.dtype == np.float64
    d2 = RankingData(np.zeros((5, 3), dtype=np.float32), np.zeros(5), group_ptr=[0, 2, 5])
    assert d2.qid.tolist() == [0, 0, 1, 1, 1] and d2.X.dtype == np.float64


def test_rankingdata_validates_shapes():
    with pytest.raises(ValueError, match="y has 4 rows but X has 5"):
        RankingData(np.zeros((5, 2)), np.zeros(4), group_ptr=[0, 5])
    with pytest.raises(ValueError, match="two-dimensional"):
        RankingData(np.zeros(5), np.zeros(5), group_ptr=[0, 5])
    with pytest.raises(ValueError, match="ends at 4 but there are 5"):
        RankingData(np.zeros((5, 2)), np.zeros(5), group_ptr=[0, 4])
    with pytest.raises(ValueError, match=r"qid must have shape \(5,\)"):
        RankingData(np.zeros((5, 2)), np.zeros(5), qid=[1, 1, 1, 1], group_ptr=[0, 5])
    with pytest.raises(ValueError, match=r"qid is not constant within query 0 .* row 1 has qid 2"):
        RankingData(np.zeros((3, 2)), np.zeros(3), qid=[1, 2, 2], group_ptr=[0, 2, 3])
    with pytest.raises(ValueError, match="comments has 2 entries"):
        RankingData(np.zeros((3, 2)), np.zeros(3), group_ptr=[0, 3], comments=["a", "b"])
    with pytest.raises(ValueError, match="needs qid or group_ptr"):
        RankingData(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="qid 1 is not contiguous"):
        RankingData(np.zeros((3, 2)), np.zeros(3), qid=[1, 2, 1])
    with pytest.raises(TypeError, match="numeric"):
        RankingData(np.array([["a"]]), np.zeros(1), group_ptr=[0, 1])


def test_rankingdata_holds_what_the_boosters_refuse():
    """The container keeps inf, NaN and zero columns, CSR as CSR and a dense X in its memory
    order; the boosters' stricter rules are theirs (same validator, other parameters)."""
    X = np.asfortranarray([[np.inf, np.nan], [1.0, -np.inf], [0.0, 2.0]])
    d = RankingData(X, np.zeros(3), group_ptr=[0, 3])
    assert np.shares_memory(d.X, X) and np.array_equal(d.X, X, equal_nan=True)
    assert RankingData(np.zeros((3, 0)), np.zeros(3), group_ptr=[0, 3]).n_features == 0
    s = RankingData(sp.csc_matrix(np.nan_to_num(X, posinf=5.0, neginf=-5.0)), np.zeros(3), group_ptr=[0, 3])
    assert sp.isspmatrix_csr(s.X) and s.X.dtype == np.float64 and s.X[1, 1] == -5.0
    with pytest.raises(ValueError, match=r"X must be two-dimensional \(n_docs, n_features\), got shape \(2, 2, 1\)"):
        RankingData(np.zeros((2, 2, 1)), np.zeros(2), group_ptr=[0, 2])


def test_subset_and_concat(rng):
    d = _random_data(rng, n_queries=6)
    sub = d.subset([4, 1])
    g = d.group_ptr
    rows = list(range(g[4], g[5])) + list(range(g[1], g[2]))
    assert np.array_equal(sub.X, d.X[rows]) and np.array_equal(sub.y, d.y[rows])
    assert sub.qid.tolist() == d.qid[rows].tolist()
    assert sub.comments == [d.comments[r] for r in rows]
    assert sub.sizes.tolist() == [d.sizes[4], d.sizes[1]]
    # Concatenating all queries, split anyhow, gives the original back.
    _assert_same(concat(d.subset([0, 1, 2]), d.subset([3]), d.subset([4, 5])), d)
    assert d.subset([]).n_docs == 0
    with pytest.raises(ValueError, match="query index 6 is outside"):
        d.subset([6])
    with pytest.raises(ValueError, match="query index 2 is repeated"):
        d.subset([2, 2])
    with pytest.raises(ValueError, match="different numbers of features"):
        concat(d, d.with_n_features(8))
    with pytest.raises(TypeError, match="mixing dense and CSR"):
        concat(d, d.to_csr())


def test_concat_never_merges_queries_sharing_a_qid():
    a = RankingData(np.ones((2, 1)), [1, 0], qid=[5, 5])
    c = RankingData.concat(a, a)
    assert c.group_ptr.tolist() == [0, 2, 4] and c.qid.tolist() == [5, 5, 5, 5]


def test_concat_sparse_and_widen(rng):
    d = _random_data(rng).to_csr()
    c = concat(d, d)
    assert sp.issparse(c.X) and c.n_docs == 2 * d.n_docs
    w = d.with_n_features(9)
    assert w.n_features == 9 and np.array_equal(w.X.toarray()[:, :6], d.X.toarray())
    assert np.array_equal(d.to_dense().with_n_features(9).X, w.X.toarray())
    sub = d.subset([1, 0])
    assert sp.issparse(sub.X) and np.array_equal(sub.X.toarray(), d.to_dense().subset([1, 0]).X)


# --- write -> load round trip ---------------------------------------------------------

@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("trial", range(3))
def test_round_trip_exact(tmp_path, rng, dense, trial):
    d = _random_data(rng)
    if not dense:
        d = d.to_csr()
    path = tmp_path / "d.txt"
    write_letor(path, d)
    back = load_letor(path, with_comments=True, dense=dense, n_features=d.n_features)
    assert sp.issparse(back.X) != dense
    _assert_same(back, d)


def test_round_trip_without_comments_and_special_values(tmp_path, rng):
    d = _random_data(rng, comments=False)
    d.X[1, 0] = np.nan
    d.X[2, 1] = -1e-300
    d.X[3, 2] = 5e-324
    d.X[3, 3] = -1.7976931348623157e308
    path = tmp_path / "d.txt"
    write_letor(path, d)
    back = load_letor(path, n_features=d.n_features)
    assert back.comments is None
    assert np.array_equal(back.X, d.X, equal_nan=True)
    assert np.array_equal(back.y, d.y)


def test_written_text_is_shortest_and_sparse(tmp_path):
    d = RankingData(np.array([[0.0, 0.1, 1.0], [2.5, 0.0, 0.0]]), [2.0, 0.0], qid=[3, 3],
                    comments=["docid = a", ""])
    path = tmp_path / "d.txt"
    write_letor(path, d)
    assert path.read_text() == "2 qid:3 2:0.1 3:1 #docid = a\n0 qid:3 1:2.5 #\n"
    write_letor(path, d, with_comments=False)
    assert path.read_text() == "2 qid:3 2:0.1 3:1\n0 qid:3 1:2.5\n"


def test_lightgbm_layout_query_file_round_trip(tmp_path, rng):
    d = _random_data(rng, comments=False)
    d = RankingData(d.X, d.y, None, d.group_ptr)  # qid 0..n-1, as read from a .query file
    path = tmp_path / "rank.train"
    write_letor(path, d, write_query_file=True, write_qid=False)
    assert "qid:" not in path.read_text()
    assert read_query_file(str(path) + ".query").tolist() == d.group_ptr.tolist()
    _assert_same(load_letor(path, n_features=d.n_features), d, comments=False)
    # An explicit query_file elsewhere.
    other = tmp_path / "groups.txt"
    other.write_text((tmp_path / "rank.train.query").read_text())
    (tmp_path / "rank.train.query").unlink()
    _assert_same(load_letor(path, n_features=d.n_features, query_file=other), d, comments=False)
    with pytest.raises(FileNotFoundError, match=r"no qid: and there is no query file .*rank.train.query"):
        load_letor(path)


def test_query_file_must_agree_with_qids(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 1:2\n0 qid:2 1:3\n")
    good, bad = tmp_path / "good.query", tmp_path / "bad.query"
    good.write_text("2\n1\n")
    bad.write_text("1\n2\n")
    assert load_letor(path, query_file=good).group_ptr.tolist() == [0, 2, 3]
    with pytest.raises(ValueError, match="disagree"):
        load_letor(path, query_file=bad)


@pytest.mark.parametrize("text, message", [
    ("0\n1\n", r"bad\.query, line 1: group size 0 must be positive"),
    ("2\nx\n", r"bad\.query, line 2: 'x' is not a group size"),
    ("2\n2\n", r"bad\.query: group sizes sum to 4 but there are 3 documents"),
])
def test_bad_query_file(tmp_path, text, message):
    path = tmp_path / "d.txt"
    path.write_text("1 1:1\n0 1:2\n0 1:3\n")
    (tmp_path / "bad.query").write_text(text)
    with pytest.raises(ValueError, match=message):
        load_letor(path, query_file=tmp_path / "bad.query")


def test_gzip_round_trip(tmp_path, rng):
    d = _random_data(rng)
    path = tmp_path / "d.txt.gz"
    write_letor(path, d)
    with gzip.open(path, "rt") as f:
        assert f.readline().count("qid:") == 1
    _assert_same(load_letor(path, with_comments=True, n_features=d.n_features), d)


def test_write_refuses_what_cannot_be_read_back(tmp_path):
    a = RankingData(np.ones((2, 1)), [1, 0], qid=[5, 5])
    with pytest.raises(ValueError, match="qid 5 is used by more than one query"):
        write_letor(tmp_path / "x.txt", RankingData.concat(a, a))
    with pytest.raises(ValueError, match="line break"):
        write_letor(tmp_path / "x.txt", RankingData(np.ones((1, 1)), [1], group_ptr=[0, 1], comments=["a\nb"]))
    for comment in ("  lead", "trail  ", " "):
        with pytest.raises(ValueError, match="leading or trailing whitespace"):
            write_letor(tmp_path / "x.txt", RankingData(np.ones((1, 1)), [1], group_ptr=[0, 1], comments=[comment]))
    with pytest.raises(ValueError, match="LETOR labels must be finite; row 1 has label nan"):
        write_letor(tmp_path / "x.txt", RankingData(np.ones((2, 1)), [1, np.nan], group_ptr=[0, 2]))
    with pytest.raises(ValueError, match="LETOR labels must be non-negative relevance grades; row 1 has -1.0"):
        write_letor(tmp_path / "x.txt", RankingData(np.ones((2, 1)), [1, -1.0], group_ptr=[0, 2]))
    with pytest.raises(TypeError, match="qid must be integers"):
        write_letor(tmp_path / "x.txt", RankingData(np.ones((1, 1)), [1], qid=np.array(["q"])))
    with pytest.raises(ValueError, match="write_qid=False needs write_query_file=True"):
        write_letor(tmp_path / "x.txt", a, write_qid=False)


# --- reading details and malformed files ---------------------------------------------------

def test_file_order_blank_and_comment_lines(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("# header\n2 qid:30 1:0.5 3:1 #docid = a\n\n0 qid:30 2:1\r\n1 qid:4 # docid = c \n")
    d = load_letor(path, with_comments=True)
    assert d.qid.tolist() == [30, 30, 4]  # not sorted
    assert d.group_ptr.tolist() == [0, 2, 3]
    assert d.comments == ["docid = a", "", "docid = c"]
    assert d.X.tolist() == [[0.5, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    assert load_letor(path, n_features=5).n_features == 5


MALFORMED = [
    ("bad token", "1 qid:1 1:0.5\n0 qid:1 1:0.5 foo\n", 2, r"bad token 'foo'"),
    ("label", "1 qid:1 1:0.5\n\nabc qid:1 1:0.5\n", 3, r"label 'abc' is not a number"),
    ("nan label", "1 qid:1 1:0.5\nnan qid:1 1:0.5\n", 2, r"label 'nan' is not a finite number"),
    ("qid missing", "1 qid:1 1:0.5\n# c\n0 qid:1 1:1\n0 1:1\n", 4, r"this line has no qid: but earlier lines have one"),
    ("qid extra", "1 1:0.5\n0 qid:1 1:1\n", 2, r"this line has a qid: but earlier lines do not"),
    ("bad qid", "1 qid:1 1:0.5\n0 qid:x 1:1\n", 2, r"bad query id 'qid:x'"),
    ("index 0", "1 qid:1 0:0.5\n", 1, r"bad token '0:0.5': feature indices start at 1"),
    ("unsorted", "1 qid:1 2:0.5 1:3\n", 1, r"bad token '1:3': feature indices must be strictly increasing"),
    ("value", "1 qid:1 1:0.5\n1 qid:1 1:0,5\n", 2, r"bad token '1:0,5'"),
    ("not contiguous", "1 qid:1 1:1\n0 qid:2 1:1\n# comment\n0 qid:1 1:1\n", 4,
     r"qid 1 is not contiguous: it already appeared at line 1"),
    ("negative label", "1 qid:1 1:0.5\n# c\n-1 qid:1 1:0.5\n", 3, r"label '-1' is negative"),
    ("negative label first", "1 qid:1 1:0.5\n-0.5 qid:1 1:1\n0 qid:1 1:inf\n", 2, r"label '-0.5' is negative"),
]
# Lines that are well-formed: refused after parsing, by the checks on what was read.
WELL_FORMED = {"not contiguous", "negative label", "negative label first"}


@pytest.mark.parametrize("name, text, line, message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_names_file_and_line(tmp_path, name, text, line, message):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"broken\.txt, line {line}: {message}"):
        load_letor(path)


def test_too_many_features_and_other_errors(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 7:1\n")
    with pytest.raises(ValueError, match=r"wide\.txt, line 2: feature index 7 is larger than n_features=3"):
        load_letor(path, n_features=3)
    with pytest.raises(ValueError, match="n_features must be an integer >= 1, got 0"):
        load_letor(path, n_features=0)
    for bad in (2.5, float("nan"), "7", True):
        with pytest.raises(TypeError, match="n_features must be an integer >= 1"):
            load_letor(path, n_features=bad)
    assert load_letor(path, n_features=np.int64(9)).n_features == 9
    with pytest.raises(FileNotFoundError, match="nothere.txt: no such file"):
        load_letor(tmp_path / "nothere.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError, match=r"empty\.txt: no data lines"):
        load_letor(empty)


# --- writing canonical, atomic files -----------------------------------------------------------

def test_write_sorts_and_sums_csr_indices(tmp_path):
    X = sp.csr_matrix(([1.0, 2.0], [2, 0], [0, 2, 2]), shape=(2, 3))  # row 0 unsorted, as X[:, perm] leaves it
    path = tmp_path / "d.txt"
    write_letor(path, RankingData(X, [1.0, 0.0], qid=[1, 1]))
    assert path.read_text() == "1 qid:1 1:2 3:1\n0 qid:1\n"
    dup = sp.csr_matrix(([1.0, 2.0, 0.5, -0.5], [1, 1, 0, 0], [0, 4]), shape=(1, 3))  # 2:3, 1:0 dropped
    write_letor(path, RankingData(dup, [1.0], qid=[1]))
    assert path.read_text() == "1 qid:1 2:3\n"


@pytest.mark.parametrize("seed", range(4))
def test_round_trip_csr_with_unsorted_duplicate_and_zero_entries(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n, m = 12, 7
    nnz = int(rng.integers(5, 40))
    rows = np.sort(rng.integers(0, n, size=nnz))
    cols = rng.integers(0, m, size=nnz)  # repeats within a row are duplicates
    vals = rng.choice([0.0, 1.5, -2.25, 1e-3, 3.0], size=nnz)
    indptr = np.searchsorted(rows, np.arange(n + 1))
    X = sp.csr_matrix((vals, cols, indptr), shape=(n, m))
    X = X[:, rng.permutation(m)]  # column permutation leaves indices unsorted
    d = RankingData(X, rng.integers(0, 3, size=n).astype(float), qid=np.repeat([5, 2, 9], 4))
    path = tmp_path / "d.txt"
    write_letor(path, d)
    back = load_letor(path, n_features=m)
    assert np.array_equal(back.X, X.toarray())
    assert np.array_equal(back.y, d.y) and back.qid.tolist() == d.qid.tolist()


def test_write_refuses_infinite_values(tmp_path):
    X = np.ones((2, 3))
    X[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"X\[1, 2\] is inf; the reader refuses infinite"):
        write_letor(tmp_path / "d.txt", RankingData(X, [1.0, 0.0], qid=[1, 1]))
    assert not (tmp_path / "d.txt").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_write_at_file_size_limit_keeps_old_files(tmp_path):
    names = ["d.txt", "d.txt.gz"]
    small = RankingData(np.ones((2, 2)), [1.0, 0.0], qid=[1, 1])
    for name in names:
        write_letor(tmp_path / name, small, write_query_file=True)
    before = {f: (tmp_path / f).read_bytes() for f in os.listdir(tmp_path)}
    code = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        from boostplug.data import RankingData, write_letor
        rng = np.random.default_rng(0)
        big = RankingData(rng.random((3000, 40)), np.zeros(3000), group_ptr=np.arange(0, 3001, 3))
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        for name in {names!r}:
            try:
                write_letor({str(tmp_path)!r} + "/" + name, big, write_query_file=True)
            except OSError as e:
                print("ERR", e)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("ERR") and "could not write" in line for line in lines), r.stdout
    assert "d.txt:" in lines[0] and "d.txt.gz:" in lines[1]
    assert {f: (tmp_path / f).read_bytes() for f in os.listdir(tmp_path)} == before  # no temporary left
    assert load_letor(tmp_path / "d.txt.gz").n_docs == 2


def test_write_compressed_round_trip(tmp_path, rng):
    d = _random_data(rng)
    for name in ("d.txt.gz", "d.txt.bz2"):
        write_letor(tmp_path / name, d)
        _assert_same(load_letor(tmp_path / name, with_comments=True, n_features=d.n_features), d)
    assert bz2.open(tmp_path / "d.txt.bz2").readline().count(b"qid:") == 1
    assert sorted(os.listdir(tmp_path)) == ["d.txt.bz2", "d.txt.gz"]


# --- values that must come back exactly, or be refused ------------------------------------------

def _stored_dense(X: sp.csr_matrix) -> np.ndarray:
    """A CSR's stored values assigned in place (``toarray()`` adds them onto +0.0, losing -0.0's sign)."""
    out = np.zeros(X.shape)
    out[np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), X.indices] = X.data
    return out


@pytest.mark.parametrize("name", ["d.txt", "d.txt.gz"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_negative_zeros_and_signed_nans_round_trip_bit_for_bit(tmp_path, layout, name):
    X = np.array([[-0.0, 1.0, -np.nan, 0.0], [0.0, -0.0, np.nan, -2.5]])
    if layout == "csr":  # -0.0 stored explicitly (sp.csr_matrix(X) would drop it as a zero)
        rows, cols = np.nonzero((X != 0) | np.signbit(X))
        Xin = sp.csr_matrix((X[rows, cols], cols, [0, 3, 6]), shape=X.shape)
    else:
        Xin = X
    y = np.array([-0.0, 1.0])
    path = tmp_path / name
    write_letor(path, RankingData(Xin, y, qid=[3, 3]))
    text = (gzip.open(path, "rt") if name.endswith(".gz") else open(path)).read()
    assert text == "-0 qid:3 1:-0 2:1 3:-nan\n1 qid:3 2:-0 3:nan 4:-2.5\n"
    dense = load_letor(path, n_features=4)
    assert dense.X.view(np.int64).tolist() == X.view(np.int64).tolist()  # every bit, signs included
    assert dense.y.view(np.int64).tolist() == y.view(np.int64).tolist()
    csr = load_letor(path, n_features=4, dense=False)
    assert _stored_dense(csr.X).view(np.int64).tolist() == X.view(np.int64).tolist()


def test_the_slow_path_keeps_negative_zeros_in_a_dense_x_too(tmp_path, monkeypatch):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 1:-0 2:1\n0 qid:1 2:-0.0e3\n")
    monkeypatch.setattr(_letor_fast, "parse", lambda raw, n_features, dense_ok: None)  # declined: the slow path
    assert np.signbit(load_letor(path).X).tolist() == [[True, False], [False, True]]


def test_uint64_qids_are_written_exactly_or_refused(tmp_path):
    top = 2**63 - 1
    path = tmp_path / "d.txt"
    write_letor(path, RankingData(np.ones((2, 1)), [1.0, 0.0], qid=np.array([top, top], dtype=np.uint64)))
    assert load_letor(path).qid.tolist() == [top, top]
    too_big = np.array([5, 5, 2**63, 2**63], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"qid 9223372036854775808 \(row 2\) is larger than 9223372036854775807"):
        write_letor(tmp_path / "big.txt", RankingData(np.ones((4, 1)), [1.0, 0.0, 1.0, 0.0], qid=too_big))
    assert not (tmp_path / "big.txt").exists()
    # Written without qids, the groups survive in the .query file.
    write_letor(tmp_path / "big.txt", RankingData(np.ones((4, 1)), [1.0, 0.0, 1.0, 0.0], qid=too_big),
                write_qid=False, write_query_file=True)
    assert load_letor(tmp_path / "big.txt").group_ptr.tolist() == [0, 2, 4]


# --- a data file and its .query, replaced as a pair -------------------------------------------------

def _two_sets() -> tuple[RankingData, RankingData]:
    """An old set of 2 queries and a new one of 4 over the same 6 rows (so that the old .query
    beside the new data would still sum to the rows: nothing but the pair write can tell)."""
    X = np.arange(12.0).reshape(6, 2)
    return (RankingData(X, [1.0, 0, 0, 1, 0, 0], group_ptr=[0, 3, 6]),
            RankingData(X + 100, [2.0, 0, 1, 0, 2, 0], group_ptr=[0, 1, 3, 4, 6]))


def _state(path: Path) -> tuple[bytes | None, bytes | None]:
    return tuple(p.read_bytes() if p.exists() else None for p in (path, Path(f"{path}.query")))  # type: ignore[return-value]


_STEPS = ("replace", "rename", "fsync")  # the calls that finish files and move them into place


def _fail_at(monkeypatch, k: int | None, error: type[BaseException]) -> list[str]:
    """Make the ``k``-th call (0-based) of os.replace/os.rename/os.fsync raise ``error``; record every call."""
    calls: list[str] = []
    for name in _STEPS:
        real = getattr(os, name)

        def step(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            if len(calls) - 1 == k:
                raise error(28, "No space left on device") if error is OSError else error()
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, step)
    return calls


@pytest.mark.parametrize("error", [OSError, KeyboardInterrupt])
@pytest.mark.parametrize("old_query", [True, False], ids=["old-query", "no-old-query"])
@pytest.mark.parametrize("name", ["rank.train", "rank.train.gz"])
def test_a_failure_at_any_step_leaves_data_and_query_both_old(tmp_path, monkeypatch, name, old_query, error):
    old, new = _two_sets()
    path = tmp_path / name
    write_letor(path, old, write_query_file=old_query, write_qid=not old_query)
    before, listing = _state(path), sorted(os.listdir(tmp_path))
    with monkeypatch.context() as m:  # a successful write elsewhere, to count its steps
        counted = _fail_at(m, None, error)
        (tmp_path / "count").mkdir()
        write_letor(tmp_path / "count" / name, new, write_query_file=True, write_qid=False)
    shutil.rmtree(tmp_path / "count")
    steps = len(counted)
    assert steps >= 3
    for k in range(steps):
        with monkeypatch.context() as m:
            calls = _fail_at(m, k, error)
            with pytest.raises(error):
                write_letor(path, new, write_query_file=True, write_qid=False)
        assert len(calls) > k
        assert _state(path) == before, f"step {k} ({calls[k]}) left a mixed pair"
        assert sorted(os.listdir(tmp_path)) == listing  # no temporary file left
    if old_query:
        assert load_letor(path).group_ptr.tolist() == [0, 3, 6]
    write_letor(path, new, write_query_file=True, write_qid=False)
    assert load_letor(path).group_ptr.tolist() == [0, 1, 3, 4, 6]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_a_failed_pair_write_through_a_dangling_query_link_removes_what_it_created(tmp_path, monkeypatch):
    os.symlink("groups.txt", tmp_path / "d.txt.query")  # writes follow links: this one creates groups.txt
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("d.txt"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="could not write"):
        write_letor(tmp_path / "d.txt", _two_sets()[0], write_query_file=True)
    assert sorted(os.listdir(tmp_path)) == ["d.txt.query"] and os.path.islink(tmp_path / "d.txt.query")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_special_file_in_the_query_files_place_is_refused_before_writing(tmp_path):
    os.mkfifo(tmp_path / "d.txt.query")  # reading it to keep it would block
    with pytest.raises(ValueError, match=r"d\.txt\.query is not a regular file .*nothing was written"):
        write_letor(tmp_path / "d.txt", _two_sets()[0], write_query_file=True)
    assert sorted(os.listdir(tmp_path)) == ["d.txt.query"]


def test_a_query_file_beside_a_qid_file_must_agree_with_it(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 1:2\n0 qid:2 1:3\n")
    beside = tmp_path / "d.txt.query"
    beside.write_text("2\n1\n")
    assert load_letor(path).group_ptr.tolist() == [0, 2, 3]
    beside.write_text("1\n2\n")  # same rows, other queries: a stale or half-written pair
    with pytest.raises(ValueError, match=r"d\.txt\.query: the group sizes disagree with the qid: values in .*d\.txt "
                                         r"\(the \.query file beside it, which LightGBM reads too"):
        load_letor(path)
    beside.write_text("2\n2\n")
    with pytest.raises(ValueError, match=r"d\.txt\.query: group sizes sum to 4 but there are 3 documents"):
        load_letor(path)


# --- numbers in plain decimal syntax only --------------------------------------------------------

LENIENT = [  # what Python's int()/float() accept and the format does not
    ("underscore index", "1 qid:1 1_0:0.5\n", r"bad token '1_0:0\.5' \(expected <index>:<value>"),
    ("underscore label", "1_0 qid:1 1:0.5\n", r"label '1_0' is not a plain decimal number"),
    ("underscore value", "1 qid:1 1:0_5\n", r"bad token '1:0_5': '0_5' is not a plain decimal"),
    ("underscore qid", "1 qid:1_2 1:0.5\n", r"bad query id 'qid:1_2'"),
    ("qid prefix", "1 qidfoo:5 1:0.5\n", r"bad query id 'qidfoo:5'"),
    ("plus qid", "1 qid:+5 1:0.5\n", r"bad query id 'qid:\+5'"),
    ("plus index", "1 qid:1 +3:0.5\n", r"bad token '\+3:0\.5' \(expected <index>:<value>"),
    ("overflow value", "1 qid:1 1:1e400\n", r"bad token '1:1e400': the value is not finite"),
    ("inf value", "1 qid:1 1:0.5 2:-Infinity\n", r"bad token '2:-Infinity': the value is not finite"),
    ("overflow label", "1e400 qid:1 1:0.5\n", r"label '1e400' is not a finite number"),
    ("inf label", "-inf qid:1 1:0.5\n", r"label '-inf' is not a finite number"),
    ("nul", "1 qid:1 1:0.5\x00 # c 2:1\n", r"bad token '1:0\.5\\x00'"),
]


@pytest.mark.parametrize("name, line, message", LENIENT, ids=[c[0] for c in LENIENT])
def test_number_syntax_python_accepts_is_refused(tmp_path, name, line, message):
    path = tmp_path / "lenient.txt"
    path.write_bytes(("0 qid:1 1:1\n# c\n" + line).encode())
    with pytest.raises(ValueError, match=rf"lenient\.txt, line 3: {message}"):
        load_letor(path)


def test_plain_numbers_and_false_alarms_load(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("+1 qid:-7 1:1e+05 2:.5 3:-2.E-3 004:nan # qid_x +3:1 _ qidfoo\n"
                    "-0 qid:-7 2:NaN 3:1e-400 #\n")
    d = load_letor(path, with_comments=True)
    assert d.y.tolist() == [1.0, 0.0] and np.signbit(d.y[1]) and d.qid.tolist() == [-7, -7]
    assert d.X[0, :3].tolist() == [1e5, 0.5, -2e-3] and np.isnan(d.X[0, 3])
    assert np.isnan(d.X[1, 1]) and d.X[1, 2] == 0.0
    assert d.comments == ["qid_x +3:1 _ qidfoo", ""]


def test_index_beyond_int32_is_refused(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 2147483648:1\n")
    with pytest.raises(ValueError, match=r"wide\.txt, line 2: bad token '2147483648:1': feature index "
                                         r"2147483648 is larger than 2147483647"):
        load_letor(path)


# --- dense matrices that do not fit ---------------------------------------------------------

def _refused_densely(tmp_path, monkeypatch, text: str, memory: int, match: str):
    """``text`` as a file, loaded densely with ``memory`` bytes available: refused with ``match``."""
    path = tmp_path / "huge.txt"
    path.write_text(text)
    monkeypatch.setattr(_memory, "available_memory", lambda: memory)
    with pytest.raises(ValueError, match=match):
        load_letor(path)
    return path


def test_dense_larger_than_memory_is_refused_before_allocating(tmp_path, monkeypatch):
    path = _refused_densely(tmp_path, monkeypatch, "1 qid:1 1:1\n# c\n0 qid:1 300000000:1\n", 2**30,
                            r"huge\.txt, line 3: feature index 300000000 makes the dense X 2 rows x "
                            r"300000000 columns = 4\.47 GiB, more than the 1\.00 GiB of memory available; "
                            r"pass dense=False")
    assert load_letor(path, dense=False).X.shape == (2, 300000000)
    with pytest.raises(ValueError, match=r"feature index 300000000 \(and n_features=400000000\) makes"):
        load_letor(path, n_features=400_000_000)

    def no_memory(self):
        raise MemoryError
    monkeypatch.setattr(_memory, "available_memory", lambda: None)
    monkeypatch.setattr(letor_module, "DENSE_OF_SPARSE_LIMIT", 2**62)
    monkeypatch.setattr(sp.csr_matrix, "toarray", no_memory)
    monkeypatch.setattr(_letor_fast, "_dense_zeros", lambda rows, width: no_memory(None))
    with pytest.raises(ValueError, match=r"line 3: feature index 300000000 .* 4\.47 GiB, which could not be allocated"):
        load_letor(path)


def test_a_huge_dense_matrix_of_almost_only_zeros_is_refused_even_with_memory(tmp_path, monkeypatch):
    path = _refused_densely(tmp_path, monkeypatch, "1 qid:1 300000000:1\n0 qid:1 1:1\n", 2**40,
                            r"huge\.txt, line 1: feature index 300000000 makes the dense X 2 rows x "
                            r"300000000 columns = 4\.47 GiB, for only 2 non-zero values .*dense=False")
    # below the size limit a sparse matrix still loads densely
    path.write_text("1 qid:1 1000000:1\n0 qid:1 1:1\n")
    assert load_letor(path).X.shape == (2, 1000000)
    monkeypatch.setattr(letor_module, "DENSE_OF_SPARSE_LIMIT", 2**20)
    with pytest.raises(ValueError, match=r"line 1: feature index 1000000 .* for only 2 non-zero values"):
        load_letor(path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
def test_dense_estimate_sees_the_address_space_limit(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_text("1 qid:1 300000000:1\n0 qid:1 1:1\n")
    code = textwrap.dedent(f"""
        import resource, sys
        from boostplug.cli import main
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))
        sys.exit(main(["info", {str(path)!r}]))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "huge.txt, line 1: feature index 300000000" in r.stderr and "dense=False" in r.stderr


# --- unreadable files ------------------------------------------------------------------------

def _info(path: Path) -> tuple[int, str]:
    err = io.StringIO()
    code = info_cli.run(argparse.Namespace(path=str(path)), stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


def _damaged(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    text = b"".join(b"%d qid:%d 1:%d.25 2:3 # doc %d\n" % (i % 3, i // 4, i, i) for i in range(400))
    packed = gzip.compress(text)
    files = {
        "truncated gz": ("t.txt.gz", packed[: len(packed) // 2], r"gzip data is truncated"),
        "bad crc": ("c.txt.gz", packed[:-8] + bytes([packed[-8] ^ 0xFF]) + packed[-7:],
                    r"not valid gzip data \(CRC check failed"),
        "not gzip": ("n.txt.gz", text, r"not valid gzip data \(Not a gzipped file"),
        "bad deflate": ("d.txt.gz", packed[:10] + b"\xff" * 40 + packed[50:], r"not valid gzip data \("),
        "bad bz2": ("b.txt.bz2", b"BZh9" + b"\x00" * 64, r"not valid bz2 data \(Invalid data stream"),
        "truncated bz2": ("u.txt.bz2", bz2.compress(text)[:300], r"bz2 data is truncated"),
    }
    out = {}
    for key, (name, content, message) in files.items():
        (tmp_path / name).write_bytes(content)
        out[key] = (tmp_path / name, message)
    return out


DAMAGED = ["truncated gz", "bad crc", "not gzip", "bad deflate", "bad bz2", "truncated bz2"]


@pytest.mark.parametrize("kind", DAMAGED)
def test_damaged_compressed_file_is_one_clear_error(tmp_path, kind):
    path, message = _damaged(tmp_path)[kind]
    with pytest.raises(ValueError, match=message) as e:
        load_letor(path)
    assert str(path) in str(e.value)
    code, err = _info(path)
    assert code == 2 and err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_damage_found_after_a_garbled_line_blames_the_compression(tmp_path):
    text = b"".join(b"1 qid:1 1:%d\n" % i for i in range(50)) + b"1 qid:1 x:1\n" + b"0 qid:1 1:2\n" * 50
    packed = bytearray(gzip.compress(text))
    packed[-8] ^= 0xFF  # the CRC in the trailer
    path = tmp_path / "late.txt.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(ValueError, match=r"late\.txt\.gz: not valid gzip data \(CRC check failed"):
        load_letor(path)


def test_damaged_query_file_names_it(tmp_path):
    (tmp_path / "d.txt").write_text("1 1:1\n0 1:2\n")
    (tmp_path / "d.txt.query").write_text("2\n")
    (tmp_path / "g.gz").write_bytes(gzip.compress(b"2\n")[:-6])
    with pytest.raises(ValueError, match=r"g\.gz: the gzip data is truncated"):
        load_letor(tmp_path / "d.txt", query_file=tmp_path / "g.gz")


def test_folder_and_fifo_are_refused_before_opening(tmp_path):
    with pytest.raises(IsADirectoryError, match=r"is a folder, not a file"):
        load_letor(tmp_path)
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"pipe\.txt: is a FIFO \(named pipe\), not a regular file"):
        load_letor(fifo)
    code, err = _info(fifo)
    assert code == 2 and "is a FIFO" in err
    (tmp_path / "rank.txt").write_text("1 1:1\n")
    os.mkfifo(tmp_path / "rank.txt.query")
    with pytest.raises(ValueError, match=r"rank\.txt\.query: is a FIFO \(named pipe\), not a regular query file"):
        load_letor(tmp_path / "rank.txt")


# --- group sizes that overflow -------------------------------------------------------------

def test_group_sizes_that_overflow_show_true_values():
    with pytest.raises(ValueError, match=r"group sizes sum to 13835058055282163712, more than a 64-bit integer"):
        group_ptr_from_sizes([2**62] * 3)
    with pytest.raises(ValueError, match=r"must fit in a 64-bit integer; got \[9223372036854775808\]"):
        group_ptr_from_sizes(np.array([1, 2**63], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"must fit in a 64-bit integer; got \[100000000000000000000\]"):
        group_ptr_from_sizes([3, 10**20])
    with pytest.raises(ValueError, match=r"must fit in a 64-bit integer; got \[1000000000000000019884624838656\]"):
        group_ptr_from_sizes([1e30])
    assert group_ptr_from_sizes([2**62, 2**62 - 1]).tolist() == [0, 2**62, 2**63 - 1]


@pytest.mark.parametrize("text, message", [
    ("2\n99999999999999999999\n", r"line 2: group size 99999999999999999999 does not fit in a 64-bit integer"),
    ("4611686018427387904\n" * 3, r"q\.query: group sizes sum to 13835058055282163712, more than a 64-bit"),
    ("1_0\n", r"line 1: '1_0' is not a group size"),
    ("+2\n", r"line 1: '\+2' is not a group size"),
], ids=["huge size", "sum overflows", "underscore", "plus"])
def test_query_file_with_huge_or_lenient_sizes(tmp_path, text, message):
    (tmp_path / "q.query").write_text(text)
    with pytest.raises(ValueError, match=rf"q\.query(, |: ){message}" if message.startswith("line") else message):
        read_query_file(tmp_path / "q.query")


# --- real files -------------------------------------------------------------------------------

@pytest.mark.realdata
def test_mq2008_s1(mq2008_dir: Path):
    d = load_letor(mq2008_dir / "S1.txt", with_comments=True)
    assert (d.n_docs, d.n_queries, d.n_features) == (2933, 157, 46)
    assert set(np.unique(d.y).tolist()) == {0.0, 1.0, 2.0}
    assert d.comments[0].startswith("docid = GX")
    first = (mq2008_dir / "S1.txt").read_text().split("\n", 1)[0]
    label, qid, *feats = first.split("#")[0].split()
    assert d.y[0] == float(label) and d.qid[0] == int(qid[4:])
    assert d.X[0].tolist() == [float(f.split(":")[1]) for f in feats]


@pytest.mark.realdata
def test_lightgbm_example_files(lgb_example_dir: Path):
    d = load_letor(lgb_example_dir / "rank.test", dense=False, n_features=300)
    assert (d.n_docs, d.n_queries, d.n_features) == (768, 50, 300)
    assert d.sizes.tolist() == [int(s) for s in (lgb_example_dir / "rank.test.query").read_text().split()]


@pytest.mark.parametrize("block", [1, 3, 5, 1000])
def test_write_in_row_blocks_equals_one_block(tmp_path, monkeypatch, block):
    """write_letor formats a block of rows at a time; the file does not depend on the block size,
    and a refusal names the row in the whole data, not in its block."""
    rng = np.random.default_rng(block)
    X = np.round(rng.normal(size=(11, 4)), 2)
    X[rng.random(X.shape) < 0.3] = 0.0
    d = RankingData(X, rng.integers(0, 3, size=11).astype(float), qid=np.repeat([3, 1, 4], [4, 4, 3]),
                    comments=[f"doc {i}" for i in range(11)])
    write_letor(tmp_path / "ref.txt", d)
    monkeypatch.setattr(_letor_write, "_WRITE_BLOCK_ROWS", block)
    write_letor(tmp_path / "blocks.txt.gz", d)
    assert gzip.decompress((tmp_path / "blocks.txt.gz").read_bytes()) == (tmp_path / "ref.txt").read_bytes()
    bad = X.copy()
    bad[7, 2] = -np.inf
    with pytest.raises(ValueError, match=r"X\[7, 2\] is -inf"):
        write_letor(tmp_path / "ref.txt", RankingData(bad, d.y, qid=d.qid))
    assert (tmp_path / "ref.txt").read_bytes() == gzip.decompress((tmp_path / "blocks.txt.gz").read_bytes())
    comments = list(d.comments)
    comments[9] = "\udcff"  # a lone surrogate has no UTF-8 form
    with pytest.raises(ValueError, match="comment of row 9 cannot be written as UTF-8"):
        write_letor(tmp_path / "c.txt", RankingData(X, d.y, qid=d.qid, comments=comments))
    assert not (tmp_path / "c.txt").exists()


# -- the numba parser (boostplug.data._letor_fast) against scikit-learn's reader -------------------
def _raw(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".bz2":
        return bz2.decompress(data)
    return data


def _bits(a: np.ndarray) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64).tolist()


def _assert_identical(fast, ref) -> None:
    """Same type, shape, CSR arrays with their dtypes, y and qid, floats bit for bit."""
    (X, y, q), (Xr, yr, qr) = fast, ref
    assert type(X) is type(Xr) and X.shape == Xr.shape
    for a, b in ((X.indices, Xr.indices), (X.indptr, Xr.indptr), (q, qr)):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert X.data.dtype == Xr.data.dtype == np.float64 and _bits(X.data) == _bits(Xr.data)
    assert y.dtype == yr.dtype == np.float64 and _bits(y) == _bits(yr)
    if X.shape[1] <= 1000:  # a fuzzed index can make the dense matrix gigabytes wide
        assert np.array_equal(X.toarray().view(np.int64), Xr.toarray().view(np.int64))


def _assert_dense_identical(raw: bytes, n_features: int | None, ref) -> None:
    """The dense fill (``dense_ok`` says yes) gives ``ref``'s stored values in place, bit for bit (a
    written -0 stays -0.0), same y and qid."""
    Xr, yr, qr = ref
    X, y, q = parse(raw, n_features, lambda rows, width, nnz: (rows, width, nnz) == (Xr.shape + (Xr.nnz,)))
    assert type(X) is np.ndarray and X.flags.c_contiguous and X.shape == Xr.shape
    assert np.array_equal(X.view(np.int64), _stored_dense(Xr).view(np.int64))
    assert _bits(y) == _bits(yr) and q.dtype == qr.dtype and q.tolist() == qr.tolist()


def _sklearn(path: Path, n_features: int | None):
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(str(path), n_features=n_features, dtype=np.float64, query_id=True, zero_based=False)


def _slow_equals(path: Path, n_features: int | None, ref) -> None:
    """The slow pass reads the file as ``ref``, or refuses a label or value that load_letor refuses
    after the fast parser anyway (negative or not finite labels, infinite values)."""
    X, y, _ = ref
    if (y >= 0).all() and (y < np.inf).all() and not np.isinf(X.data).any():
        _assert_identical(parse_lines(path, n_features), ref)
    else:
        with pytest.raises(ValueError, match=r", line \d+: "):
            parse_lines(path, n_features)


def _fast_equals_sklearn(path: Path, n_features: int | None = None) -> None:
    fast = parse(_raw(path), n_features)
    assert fast is not None, _raw(path)
    ref = _sklearn(path, n_features)
    _assert_identical(fast, ref)
    _slow_equals(path, n_features, ref)
    _assert_dense_identical(_raw(path), n_features, ref)
    assert sp.issparse(parse(_raw(path), n_features, lambda rows, width, nnz: False)[0])


def _outcome(path: Path, **kwargs):
    """What load_letor gives: the data, or the exception's type and message."""
    try:
        d = load_letor(path, **kwargs)
    except (ValueError, OSError) as e:
        return type(e), str(e)
    if sp.issparse(d.X):  # the CSR arrays: a fuzzed index can make the dense matrix gigabytes wide
        X = (d.X.shape, _bits(d.X.data), d.X.indices.tolist(), d.X.indptr.tolist())
    else:
        X = (d.X.shape, _bits(d.X.ravel()))
    return X, _bits(d.y), d.qid.tolist(), d.group_ptr.tolist(), d.comments


def _outcome_slow(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs):
    """What load_letor gives when the numba parser declines every file (the slow pass reads it)."""
    with monkeypatch.context() as m:
        m.setattr(_letor_fast, "parse", lambda raw, n_features, dense_ok: None)
        return _outcome(path, **kwargs)


# --- numbers: every token as Python's float reads it ------------------------------------------

def _random_token(rng: np.random.Generator) -> bytes:
    kind = int(rng.integers(0, 7))
    if kind == 6:  # 16-19 digit integers: odd ones above 2**53 are halfway cases (ties to even)
        v = int(rng.integers(2**53, 2**63 - 1, dtype=np.int64)) // 10 ** int(rng.integers(0, 3))
        return b"%d%s" % (v, b"e%d" % int(rng.integers(-25, 25)) if rng.random() < 0.5 else b"")
    if kind == 0:  # shortest repr of a random double, often 17 digits
        v = float(rng.normal() * 10.0 ** rng.integers(-30, 30))
        return repr(v).encode()
    if kind == 1:  # three decimals, as MSLR writes them
        return b"%d.%03d" % (int(rng.integers(0, 1000)), int(rng.integers(0, 1000)))
    if kind == 2:  # bits of any double (subnormals, extremes)
        v = struct.unpack("<d", struct.pack("<Q", int(rng.integers(0, 2**63 - 2**52, dtype=np.int64))))[0]
        return (repr(v) if rng.random() < 0.5 else f"{v:.{int(rng.integers(1, 25))}e}").encode()
    # digit strings of any length, '.' anywhere, exponents, signs
    digits = "".join(rng.choice(list("0123456789"), size=int(rng.integers(1, 26))))
    dot = int(rng.integers(0, len(digits) + 1))
    mant = digits[:dot] + "." + digits[dot:] if rng.random() < 0.7 else digits
    sign = str(rng.choice(["", "", "-", "+"]))
    exp = ""
    if rng.random() < 0.5:
        exp = str(rng.choice(["e", "E"])) + str(rng.choice(["", "-", "+"])) + str(int(rng.integers(0, 340)))
    return (sign + mant + exp).encode()


def test_values_and_labels_are_python_floats_bit_for_bit():
    rng = np.random.default_rng(7)
    tokens = [_random_token(rng) for _ in range(20_000)]
    tokens += [b"0", b"-0", b"-0.0e5", b"+0", b".5", b"5.", b"5.e3", b"-.5E-3", b"1e-320", b"4.9e-324", b"2e-324",
               b"1.7976931348623157e308", b"1.7976931348623158e308", b"9007199254740993", b"9007199254740992",
               b"123456789012345678901234567890", b"0.30000000000000004", b"1e22", b"1e23", b"1e-22",
               b"0" * 40 + b"1", b"1e400", b"-1e400", b"1e-400", b"0e999999999999", b"00000.000100",
               b"9007199254740995", b"18014398509481985", b"1.000000000000000000000000001", b"1." + b"0" * 30,
               b"2.2250738585072011e-308", b"2.2250738585072014e-308", b"123456789012345678e-5",
               b"1234567890123456780000", b"0.1e-341", b"1e-342", b"1e-343", b"9.9999999999999999e307"]
    lines = b"".join(b"%s qid:1 1:%s\n" % (t, t) for t in tokens)
    got = parse(lines, None)
    assert got is not None
    X, y, _ = got
    expected = _bits(np.array([float(t) for t in tokens]))
    assert _bits(y) == expected  # labels
    assert _bits(X.data) == expected and X.indices.tolist() == [0] * len(tokens)


def test_nan_spellings_keep_their_sign():
    X, _, _ = parse(b"1 qid:1 1:nan 2:-NaN 3:+nAn 4:NAN\n", None)
    assert _bits(X.data) == _bits(np.array([float(t) for t in ("nan", "-nan", "+nan", "nan")]))
    assert [struct.pack(">d", v).hex() for v in X.data.tolist()][:2] == ["7ff8000000000000", "fff8000000000000"]


# --- files the fast parser reads: equal to scikit-learn's reader ------------------------------------

EDGE_FILES = {
    "exponents": b"1e0 qid:1 1:1e5 2:-3.5E-2 3:1E+3 4:2.5e-7\n0 qid:1 1:7e22 2:7e23\n",
    "17 digits": b"0.30000000000000004 qid:1 1:0.33333333333333331 2:12345678901234567 3:1.2345678901234567e-300\n",
    "subnormal and largest": b"1 qid:1 1:1e-320 2:4.9e-324 3:1.7976931348623157e308 4:-1.7976931348623157e308\n",
    "negative zeros": b"-0 qid:1 1:-0 2:-0.0 3:0.000 4:-0e-5\n+0 qid:1 1:0\n",
    "nan values": b"1 qid:1 1:nan 2:-nan 3:NaN\n",
    "signs and dots": b"+1 qid:007 007:7. 8:.5 9:+.25 10:-5.\n-1 qid:007 1:-.5e-3\n",
    "crlf and trailing spaces": b"1 qid:1 1:0.5  \r\n0 qid:1 2:1\t \r\n",
    "no final newline": b"1 qid:1 1:0.5\n0 qid:1 2:1",
    "blank and comment lines": b"# header\n\n   \n1 qid:1 1:0.5\n\t# between\n\n0 qid:2 1:1\n\n# end",
    "comments with marks": b"1 qid:1 1:0.5 #docid = GX_1 a:b # again qid +3:1 qidfoo\n0 qid:1 2:1#x\xc3\xa9\xff\n",
    "other separators": b"1\x0bqid:1\x0c1:1\t2:2\r3:3\n",
    "no features": b"1 qid:1\n0 qid:1 # nothing\n",
    "negative and long qids": b"1 qid:-5 1:1\n1 qid:123456789012345678 1:1\n1 qid:-000000000000000000001 1:1\n",
    "largest index": b"1 qid:1 2147483647:1\n",
    "explicit zeros": b"1 qid:1 1:0 2:0.0 3:1\n",
    "overflow to inf": b"1 qid:1 1:1e400\n1e999 qid:1 1:1\n",
}


@pytest.mark.parametrize("suffix", [".txt", ".gz", ".bz2"])
@pytest.mark.parametrize("name", list(EDGE_FILES))
def test_edge_files_equal_sklearn(tmp_path, name, suffix):
    raw = EDGE_FILES[name]
    path = tmp_path / f"e{suffix}"
    path.write_bytes({".txt": raw, ".gz": gzip.compress(raw), ".bz2": bz2.compress(raw)}[suffix])
    _fast_equals_sklearn(path)


def test_without_qid_and_with_n_features(tmp_path, monkeypatch):
    path = tmp_path / "rank.train"
    path.write_bytes(b"1 1:0.5 3:1\n0 2:1\n2\n")
    (tmp_path / "rank.train.query").write_text("2\n1\n")
    _fast_equals_sklearn(path)
    _fast_equals_sklearn(path, n_features=3)
    _fast_equals_sklearn(path, n_features=10)
    for kwargs in ({}, {"n_features": 7}, {"dense": False}):
        assert _outcome(path, **kwargs) == _outcome_slow(path, monkeypatch, **kwargs)
    assert parse(b"1 1:1 5:1\n", 4) is None  # a wider index declines


# --- files it declines: the slow pass reads them as the reference does, or names the line -------------------------------

DECLINED = {
    "NUL before #": b"1 qid:1 1:0.5\x00# 2:1\n",
    "NUL in a comment": b"1 qid:1 1:0.5 # \x00 2:1\n",
    "digit separator": b"1 qid:1 1_0:0.5\n",
    "plus index": b"1 qid:1 +3:1\n",
    "qidfoo": b"1 qidfoo:5 1:1\n",
    "qid plus": b"1 qid:+2 1:1\n",
    "second qid": b"1 qid:1 1:1 qid:2\n",
    "inf": b"1 qid:1 1:inf\n",
    "nan label": b"nan qid:1 1:1\n",
    "hex": b"1 qid:1 1:0x10\n",
    "1e": b"1 qid:1 1:1e\n",
    "lone dot": b"1 qid:1 1:.\n",
    "two dots": b"1 qid:1 1:1.2.3\n",
    "comma": b"1 qid:1 1:0,5\n",
    "unsorted": b"1 qid:1 2:1 1:1\n",
    "repeated index": b"1 qid:1 2:1 2:1\n",
    "index 0": b"1 qid:1 0:1\n",
    "index too large": b"1 qid:1 2147483648:1\n",
    "qid on some lines": b"1 qid:1 1:1\n0 1:1\n",
    "qid on later lines": b"1 1:1\n0 qid:1 1:1\n",
    "19-digit qid": b"1 qid:1234567890123456789 1:1\n",
    "qid beyond int64": b"1 qid:9223372036854775808 1:1\n",
    "no data lines": b"# only comments\n\n",
    "empty": b"",
    "\\x1c": b"1 qid:1 1:1\x1c2:2\n",
    "non-ASCII digit": b"1 qid:1 1:\xd9\xa1\n",
    "colon alone": b"1 qid:1 :\n",
    "no value": b"1 qid:1 1:\n",
    "double colon": b"1 qid:1 1::1\n",
}


@pytest.mark.parametrize("name", list(DECLINED))
def test_declined_files_load_as_the_reference_reads_them_or_name_the_line(tmp_path, name):
    raw = DECLINED[name]
    assert parse(raw, None) is None
    path = tmp_path / "d.txt"
    path.write_bytes(raw)
    check_against_reference(path, raw)


@pytest.mark.parametrize("name, text, line, message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files_decline_or_fail_later_with_the_same_message(tmp_path, monkeypatch, name, text, line, message):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"broken\.txt, line {line}: {message}"):
        load_letor(path)
    assert _outcome(path) == _outcome_slow(path, monkeypatch)
    if name not in WELL_FORMED:  # well-formed lines are refused by the checks after parsing
        assert parse(text.encode(), None) is None


def test_damaged_compressed_files_name_the_file(tmp_path, monkeypatch):
    raw = b"1 qid:1 1:0.5\n" * 1000
    for suffix, packed in ((".gz", gzip.compress(raw)), (".bz2", bz2.compress(raw))):
        for damaged in (packed[: len(packed) // 2], packed[:40] + bytes([packed[40] ^ 4]) + packed[41:], raw):
            path = tmp_path / f"d{suffix}"
            path.write_bytes(damaged)
            got = _outcome(path)
            assert issubclass(got[0], ValueError) and got[1].startswith(f"{path}: "), got
            assert got == _outcome_slow(path, monkeypatch)


# --- fuzzed files: the whole loader gives what the slow path gives ---------------------------

@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_files_load_as_the_slow_path_loads_them(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(5000 + seed)
    accepted = declined = 0
    for path, raw, suffix in fuzzed_files(rng, tmp_path, 80):
        expected = reference_parse(raw, suffix)
        if isinstance(expected, Parsed) and expected.qid is None:  # LightGBM's layout: a sidecar
            Path(f"{path}.query").write_text(f"{len(expected.y)}\n")
        try:
            fast = parse(_raw(path), None)
        except (OSError, EOFError, ValueError, zlib.error):  # damaged compression: _parse names the file
            fast = None
        if fast is not None:
            accepted += 1
            ref = _sklearn(path, None)
            _assert_identical(fast, ref)
            _slow_equals(path, None, ref)
            if ref[0].shape[1] <= 1000:  # a fuzzed index can make the dense matrix gigabytes wide
                _assert_dense_identical(_raw(path), None, ref)
        else:
            declined += 1
        for kwargs in ({"dense": False, "with_comments": True}, {"n_features": 9}):
            assert _outcome(path, **kwargs) == _outcome_slow(path, monkeypatch, **kwargs), raw
    assert accepted >= 10 and declined >= 10, (accepted, declined)


# --- real data ------------------------------------------------------------------------------------

@pytest.mark.realdata
def test_mq2008_reads_as_sklearn_reads_it(mq2008_dir):
    fold = mq2008_dir / "Fold1" / "train.txt"
    files = [fold] if fold.exists() else sorted(mq2008_dir.glob("S*.txt"))
    if not files:
        pytest.skip(f"no MQ2008 data files in {mq2008_dir}")
    for path in files:
        _fast_equals_sklearn(path)
        _fast_equals_sklearn(path, n_features=46)
