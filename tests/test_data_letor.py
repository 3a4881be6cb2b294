"""boostplug.data: RankingData, LETOR read/write (round trip, malformed files, real files)."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from boostplug.data import RankingData, concat, load_letor, read_query_file, write_letor
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
    d.X[2, 1] = -np.inf
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
    with pytest.raises(ValueError, match="label of row 1 is nan"):
        write_letor(tmp_path / "x.txt", RankingData(np.ones((2, 1)), [1, np.nan], group_ptr=[0, 2]))
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
    ("nan label", "1 qid:1 1:0.5\nnan qid:1 1:0.5\n", 2, r"label nan is not a finite number"),
    ("qid missing", "1 qid:1 1:0.5\n# c\n0 qid:1 1:1\n0 1:1\n", 4, r"this line has no qid: but earlier lines have one"),
    ("qid extra", "1 1:0.5\n0 qid:1 1:1\n", 2, r"this line has a qid: but earlier lines do not"),
    ("bad qid", "1 qid:1 1:0.5\n0 qid:x 1:1\n", 2, r"bad query id 'qid:x'"),
    ("index 0", "1 qid:1 0:0.5\n", 1, r"bad token '0:0.5': feature indices start at 1"),
    ("unsorted", "1 qid:1 2:0.5 1:3\n", 1, r"bad token '1:3': feature indices must be strictly increasing"),
    ("value", "1 qid:1 1:0.5\n1 qid:1 1:0,5\n", 2, r"bad token '1:0,5'"),
    ("not contiguous", "1 qid:1 1:1\n0 qid:2 1:1\n# comment\n0 qid:1 1:1\n", 4,
     r"qid 1 is not contiguous: it already appeared at line 1"),
]


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
    with pytest.raises(ValueError, match="n_features must be a positive integer"):
        load_letor(path, n_features=0)
    with pytest.raises(FileNotFoundError, match="nothere.txt: no such file"):
        load_letor(tmp_path / "nothere.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError, match=r"empty\.txt: no data lines"):
        load_letor(empty)


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


# --- real files -------------------------------------------------------------------------------

@pytest.mark.realdata
def test_mq2008_s1(mq2008_dir: Path):
    t0 = time.perf_counter()
    d = load_letor(mq2008_dir / "S1.txt", with_comments=True)
    seconds = time.perf_counter() - t0
    assert (d.n_docs, d.n_queries, d.n_features) == (2933, 157, 46)
    assert set(np.unique(d.y).tolist()) == {0.0, 1.0, 2.0}
    assert d.comments[0].startswith("docid = GX")
    first = (mq2008_dir / "S1.txt").read_text().split("\n", 1)[0]
    label, qid, *feats = first.split("#")[0].split()
    assert d.y[0] == float(label) and d.qid[0] == int(qid[4:])
    assert d.X[0].tolist() == [float(f.split(":")[1]) for f in feats]
    assert seconds < 5.0


@pytest.mark.realdata
def test_lightgbm_example_files(lgb_example_dir: Path):
    d = load_letor(lgb_example_dir / "rank.test", dense=False, n_features=300)
    assert (d.n_docs, d.n_queries, d.n_features) == (768, 50, 300)
    assert d.sizes.tolist() == [int(s) for s in (lgb_example_dir / "rank.test.query").read_text().split()]
