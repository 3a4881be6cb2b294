"""The numba LETOR parser (boostplug.data._letor_fast) against scikit-learn's reader.

Whatever the fast parser accepts must come out of scikit-learn's reader (the library's
previous and fallback path, ``letor._parse_sklearn``) bit for bit: the CSR arrays and their
dtypes, ``y`` and ``qid``. Whatever it declines goes to that reader, so ``load_letor`` keeps
its exact messages. Numbers are compared with Python's ``float`` token by token.
"""

from __future__ import annotations

import bz2
import gzip
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from test_data_letor import MALFORMED, WELL_FORMED
from test_fuzz_letor import Parsed, fuzzed_files, reference_parse

from boostplug.data import letor as letor_module
from boostplug.data import load_letor
from boostplug.data._letor_fast import parse


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


def _stored_dense(X: sp.csr_matrix) -> np.ndarray:
    """The dense matrix of a CSR's stored values, each assigned (``toarray()`` adds them onto +0.0,
    which turns a stored -0.0 into +0.0)."""
    out = np.zeros(X.shape)
    out[np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), X.indices] = X.data
    return out


def _assert_dense_identical(raw: bytes, n_features: int | None, ref) -> None:
    """The dense fill (``dense_ok`` says yes) gives ``ref``'s stored values in place, bit for bit (a
    written -0 stays -0.0), same y and qid."""
    Xr, yr, qr = ref
    X, y, q = parse(raw, n_features, lambda rows, width, nnz: (rows, width, nnz) == (Xr.shape + (Xr.nnz,)))
    assert type(X) is np.ndarray and X.flags.c_contiguous and X.shape == Xr.shape
    assert np.array_equal(X.view(np.int64), _stored_dense(Xr).view(np.int64))
    assert _bits(y) == _bits(yr) and q.dtype == qr.dtype and q.tolist() == qr.tolist()


def _fast_equals_sklearn(path: Path, n_features: int | None = None) -> None:
    fast = parse(_raw(path), n_features)
    assert fast is not None, _raw(path)
    ref = letor_module._parse_sklearn(path, n_features)
    _assert_identical(fast, ref)
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


def _outcome_sklearn(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(letor_module, "_parse", lambda path, n_features, dense: letor_module._parse_sklearn(path, n_features))
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
        assert _outcome(path, **kwargs) == _outcome_sklearn(path, monkeypatch, **kwargs)
    assert parse(b"1 1:1 5:1\n", 4) is None  # a wider index declines


# --- files it declines: scikit-learn's reader gives today's errors -------------------------------

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
def test_declined_files_keep_todays_outcome(tmp_path, monkeypatch, name):
    raw = DECLINED[name]
    assert parse(raw, None) is None
    path = tmp_path / "d.txt"
    path.write_bytes(raw)
    assert _outcome(path) == _outcome_sklearn(path, monkeypatch)


@pytest.mark.parametrize("name, text, line, message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files_decline_or_fail_later_with_the_same_message(tmp_path, monkeypatch, name, text, line, message):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"broken\.txt, line {line}: {message}"):
        load_letor(path)
    assert _outcome(path) == _outcome_sklearn(path, monkeypatch)
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
            assert got == _outcome_sklearn(path, monkeypatch)


# --- fuzzed files: the whole loader gives what the scikit-learn path gives ---------------------------

@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_files_load_as_the_sklearn_path_loads_them(tmp_path, monkeypatch, seed):
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
            ref = letor_module._parse_sklearn(path, None)
            _assert_identical(fast, ref)
            if ref[0].shape[1] <= 1000:  # a fuzzed index can make the dense matrix gigabytes wide
                _assert_dense_identical(_raw(path), None, ref)
        else:
            declined += 1
        for kwargs in ({"dense": False, "with_comments": True}, {"n_features": 9}):
            assert _outcome(path, **kwargs) == _outcome_sklearn(path, monkeypatch, **kwargs), raw
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
