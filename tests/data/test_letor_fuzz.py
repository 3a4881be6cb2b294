"""Bounded, seeded fuzzing of the LETOR reader against a slow reference parser.

Every corrupted file either loads and agrees with :func:`reference_parse` (a direct
reading of the format: plain decimal numbers, 1-based strictly increasing indices,
``qid:`` on every line or none, contiguous queries, finite non-negative labels, finite
values, ``nan`` values allowed; signs of zeros and NaNs kept) or raises a ``ValueError`` naming ``file, line N`` (the first bad
line, as the reference finds it) or naming the file (damaged compression, no data
lines). Nothing else: no other exception, no wrong data.
"""

from __future__ import annotations

import bz2
import gzip
import math
import re
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp

from boostplug.data import RankingData, load_letor, write_letor

DECIMAL = rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
LABEL = re.compile(DECIMAL)
VALUE = re.compile(DECIMAL + rb"|[+-]?(?i:nan)")
INDEX = re.compile(rb"[0-9]+")
QID = re.compile(rb"qid:(-?[0-9]+)")


class Parsed(NamedTuple):
    y: list[float]
    qid: list[int] | None
    entries: list[dict[int, float]]  # 1-based index -> value, per row
    comments: list[str]


class Rejected(NamedTuple):
    line: int | None  # None: the file as a whole (compression, no data lines)


def _decompress(raw: bytes, suffix: str) -> bytes | None:
    try:
        if suffix == ".gz":
            return gzip.decompress(raw)
        if suffix == ".bz2":
            return bz2.decompress(raw)
    except (OSError, EOFError, ValueError, zlib.error):
        return None
    return raw


def _line_ok(tokens: list[bytes]) -> tuple[bool, float, int | None, dict[int, float]]:
    label = tokens[0]
    if not LABEL.fullmatch(label) or not math.isfinite(float(label)) or float(label) < 0:
        return False, 0.0, None, {}
    rest = tokens[1:]
    qid = None
    if rest and rest[0].startswith(b"qid"):
        m = QID.fullmatch(rest[0])
        if m is None or not -(2**63) <= int(m.group(1)) < 2**63:
            return False, 0.0, None, {}
        qid = int(m.group(1))
        rest = rest[1:]
    entries: dict[int, float] = {}
    previous = 0
    for tok in rest:
        parts = tok.split(b":")
        if len(parts) != 2 or not INDEX.fullmatch(parts[0]) or not VALUE.fullmatch(parts[1]):
            return False, 0.0, None, {}
        i, v = int(parts[0]), float(parts[1])
        if not previous < i <= 2**31 - 1 or math.isinf(v):
            return False, 0.0, None, {}
        entries[i] = v
        previous = i
    return True, float(label), qid, entries


def reference_parse(raw: bytes, suffix: str) -> Parsed | Rejected:
    """The format read line by line with nothing borrowed from the library."""
    text = _decompress(raw, suffix)
    if text is None:
        return Rejected(None)
    ys: list[float] = []
    qids: list[int | None] = []
    entries: list[dict[int, float]] = []
    comments: list[str] = []
    lines: list[int] = []
    pieces = text.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    for number, line in enumerate(pieces, start=1):
        data, hash_mark, comment = line.partition(b"#")
        tokens = data.split()
        if not tokens:
            continue
        ok, y, qid, row = _line_ok(tokens)
        if not ok or (qids and (qid is None) != (qids[0] is None)):
            return Rejected(number)
        ys.append(y)
        qids.append(qid)
        entries.append(row)
        comments.append(comment.decode("utf-8", errors="replace").strip() if hash_mark else "")
        lines.append(number)
    if not ys:
        return Rejected(None)
    if qids[0] is None:
        return Parsed(ys, None, entries, comments)
    finished: set[int] = set()
    for r in range(1, len(qids)):
        if qids[r] != qids[r - 1]:
            finished.add(qids[r - 1])  # type: ignore[arg-type]
            if qids[r] in finished:
                return Rejected(lines[r])
    return Parsed(ys, [int(q) for q in qids], entries, comments)  # type: ignore[arg-type]


def _check(path: Path, raw: bytes) -> str:
    """Load ``path`` and compare with the reference; returns the outcome's kind."""
    expected = reference_parse(raw, path.suffix)
    sidecar = Path(str(path) + ".query")
    if isinstance(expected, Parsed) and expected.qid is None:
        sidecar.write_text(f"{len(expected.y)}\n")
    elif sidecar.exists():
        sidecar.unlink()
    try:
        got = load_letor(path, dense=False, with_comments=True)
    except ValueError as e:
        message = str(e)
        assert isinstance(expected, Rejected), f"refused a file the reference reads: {message}\n{raw!r}"
        if expected.line is None:
            assert message.startswith(f"{path}: "), f"{message}\n{raw!r}"
        else:
            assert message.startswith(f"{path}, line {expected.line}: "), f"{message}\n{raw!r}"
        return "refused"
    assert isinstance(expected, Parsed), f"read a file the reference refuses ({expected}):\n{raw!r}"
    n = len(expected.y)
    assert got.y.tolist() == expected.y and np.signbit(got.y).tolist() == np.signbit(expected.y).tolist()
    if expected.qid is None:
        assert got.group_ptr.tolist() == [0, n]
    else:
        assert got.qid.tolist() == expected.qid
    assert got.comments == expected.comments
    width = max((max(row) for row in expected.entries if row), default=1)
    assert got.X.shape == (n, width)
    X = sp.csr_matrix(got.X)
    for r, row in enumerate(expected.entries):
        lo, hi = X.indptr[r], X.indptr[r + 1]
        have = dict(zip((X.indices[lo:hi] + 1).tolist(), X.data[lo:hi].tolist()))
        assert set(have) == set(row), (r, raw)
        for i, v in row.items():
            assert have[i] == v or (math.isnan(v) and math.isnan(have[i])), (r, i, raw)
            assert math.copysign(1.0, have[i]) == math.copysign(1.0, v), (r, i, raw)  # -0 and -nan too
    if width <= 1000:  # the dense path gives the same matrix, a written -0 as -0.0
        dense = load_letor(path, n_features=width)
        assert np.array_equal(dense.X, X.toarray(), equal_nan=True)
        assert np.array_equal(np.signbit(dense.X), np.signbit(stored_dense(X)))
    return "loaded"


def stored_dense(X: sp.csr_matrix) -> np.ndarray:
    """The dense matrix of a CSR's stored values, each assigned in place (``toarray()`` adds them
    onto +0.0, which loses the sign of a stored -0.0)."""
    out = np.zeros(X.shape)
    out[np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), X.indices] = X.data
    return out


# --- the corpus and its corruptions ------------------------------------------------------------

def _valid_text(rng: np.random.Generator) -> bytes:
    lines = []
    if rng.random() < 0.3:
        lines.append(b"# header line")
    qids = rng.choice(np.arange(-5, 40), size=int(rng.integers(1, 4)), replace=False)
    for q in qids:
        for _ in range(int(rng.integers(1, 4))):
            label = rng.choice([b"0", b"1", b"2", b"+1", b"-0", b"0.5", b"3e0"])
            idx = np.sort(rng.choice(np.arange(1, 9), size=int(rng.integers(0, 5)), replace=False))
            values = [rng.choice([b"0.25", b"1", b"-3.5e-2", b"1E+3", b".5", b"7.", b"nan", b"0", b"-0", b"-nan"])
                      for _ in idx]
            feats = b" ".join(b"%d:%s" % (i, v) for i, v in zip(idx, values))
            line = b"%s qid:%d %s" % (label, q, feats)
            if rng.random() < 0.5:
                line += rng.choice([b" #docid = GX%d" % int(rng.integers(1000)), b"#", b" # a_b +3:1 qidx"])
            lines.append(line)
            if rng.random() < 0.1:
                lines.append(rng.choice([b"", b"   ", b"# between"]))
    return b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")


INSERTS = [b"1_0:0.5", b"+3:1", b"qid:5", b"qidfoo:5", b"qid:+2", b"qid:1_2", b"1e400", b"inf", b"nan",
           b"-0", b"2147483647:1", b"2147483648:1", b"99999999999999999999", b"0:1", b"#", b":", b"1:",
           b":1", b"1::1", b"5:1e-400", b"qid:-3", b"qid:9223372036854775808", b"\x00", b"\r", b"\t",
           b"9:-Infinity", b"NaN", b"\xc3\xa9", b"1:1e+400", b"\n", b"\n\n", b"# c", b"1e-400"]
BYTES = b"0123456789:. #\n_+-eEqidnaf\x00\r\t\x0b\xff"


def _corrupt(rng: np.random.Generator, text: bytes) -> bytes:
    kind = int(rng.integers(0, 9))
    b = bytearray(text)
    if kind == 0 and b:  # flip bytes
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(0, len(b)))
            b[pos] = BYTES[int(rng.integers(0, len(BYTES)))] if rng.random() < 0.8 else int(rng.integers(0, 256))
        return bytes(b)
    if kind == 1:  # truncate
        return text[: int(rng.integers(0, len(text) + 1))]
    if kind == 2:  # insert a token at a token boundary (or anywhere)
        cuts = [m.start() for m in re.finditer(rb"[ \n]", text)] or [0]
        pos = int(rng.choice(cuts)) if rng.random() < 0.7 else int(rng.integers(0, len(text) + 1))
        token = INSERTS[int(rng.integers(0, len(INSERTS)))]
        return text[:pos] + b" " + token + text[pos:]
    if kind == 3:  # malformed number in place of a value, an index, a label or a qid
        nums = list(re.finditer(rb"[0-9][0-9.eE+-]*", text))
        if not nums:
            return text
        m = nums[int(rng.integers(0, len(nums)))]
        bad = rng.choice([b"1_0", b"+3", b"1e400", b"inf", b"-nan", b"0x10", b"1.2.3", b"", b"2147483648",
                          b"1" * 25, b"\xd9\xa1", b"007", b"1e-400", b"-2", b"-0"])
        return text[: m.start()] + bad + text[m.end():]
    if kind == 4:  # huge index
        m = re.search(rb" ([0-9]+):", text)
        if not m:
            return text
        big = rng.choice([b"2147483647", b"2147483648", b"1000000000000", b"300000000"])
        return text[: m.start(1)] + big + text[m.end(1):]
    if kind == 5:  # duplicate or reorder a feature token
        toks = list(re.finditer(rb" [0-9]+:[^ \n#]*", text))
        if not toks:
            return text
        m = toks[int(rng.integers(0, len(toks)))]
        if rng.random() < 0.5:
            return text[: m.end()] + m.group(0) + text[m.end():]
        return text[: m.start()] + text[m.end():].replace(b"\n", m.group(0) + b"\n", 1)
    lines = text.split(b"\n")
    if kind == 6 and len(lines) > 2:  # move a line elsewhere (queries may stop being contiguous)
        i, j = (int(v) for v in rng.choice(len(lines), size=2, replace=False))
        lines.insert(j, lines.pop(i))
        return b"\n".join(lines)
    if kind == 7:  # blank lines, comment lines, CRLF
        choice = int(rng.integers(0, 3))
        if choice == 0:
            return text.replace(b"\n", b"\r\n")
        pos = int(rng.integers(0, len(lines) + 1))
        lines.insert(pos, b"" if choice == 1 else b"   # only a comment qid_1 +2:3")
        return b"\n".join(lines)
    # drop qid: everywhere (sidecar .query) or on one line only
    if rng.random() < 0.5:
        return re.sub(rb" qid:-?[0-9]+", b"", text)
    return re.sub(rb" qid:-?[0-9]+", b"", text, count=1)


def _wrap(rng: np.random.Generator, raw: bytes) -> tuple[str, bytes]:
    r = rng.random()
    if r < 0.7:
        return ".txt", raw
    suffix, packed = (".gz", gzip.compress(raw, mtime=0)) if r < 0.85 else (".bz2", bz2.compress(raw))
    if rng.random() < 0.4:  # damage the compressed bytes
        b = bytearray(packed)
        if rng.random() < 0.5:
            b = b[: int(rng.integers(0, len(b)))]
        else:
            pos = int(rng.integers(0, len(b)))
            b[pos] ^= 1 << int(rng.integers(0, 8))
        packed = bytes(b)
    return suffix, packed


def fuzzed_files(rng: np.random.Generator, folder, n: int):
    """``n`` files of valid LETOR text with up to two corruptions, plain or compressed, written
    to ``folder``: ``(path, raw bytes, suffix)`` each."""
    for case in range(n):
        text = _valid_text(rng)
        for _ in range(int(rng.integers(0, 3))):
            text = _corrupt(rng, text)
        suffix, raw = _wrap(rng, text)
        path = folder / f"f{case}{suffix}"
        path.write_bytes(raw)
        yield path, raw, suffix


@pytest.mark.parametrize("seed", range(6))
def test_fuzzed_files_load_as_the_reference_reads_them_or_name_the_line(tmp_path, seed):
    rng = np.random.default_rng(1000 + seed)
    outcomes = {"loaded": 0, "refused": 0}
    for path, raw, _ in fuzzed_files(rng, tmp_path, 60):
        outcomes[_check(path, raw)] += 1
    assert outcomes["loaded"] >= 5 and outcomes["refused"] >= 5, outcomes  # both sides exercised


# Inputs the fuzzing found, or that sit on an edge of the format, kept as explicit cases.
REGRESSIONS = [
    b"1 qid:1 1:0.5\x00# 2:1\n",          # NUL before '#': scikit-learn's C search stops at it
    b"1 qid:1 1:0.5 # \x00 2:1\n",        # NUL inside a comment is fine
    b"1 qid:1 1:1\n0 qid:1 1:0.5 qid:2\n",  # a second qid is a bad feature token
    b"1 qid:1 1:1e400\n1 qid:1 1_0:1\n",  # first problem wins: the overflow on line 1
    b"1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1e400\n",  # overflow before non-contiguity
    b"1 1:1\n1 qid:2 1:inf\n",             # qid on some lines only, then an inf
    b"1 qid:1 1:1\n1 1:1\n1 qid:1 1:inf\n",  # the missing qid (line 2) is reported, not the inf (line 3)
    b"1 qid:1 2147483647:1\n",            # the widest index scikit-learn can hold
    b"1 qid:-9223372036854775808 1:1\n",  # the smallest qid
    b"1 qid:9223372036854775808 1:1\n",   # one past the largest
    b"+1 qid:007 007:7.\r\n-1 qid:007 1:-.5e-3\n",  # a negative label (line 2)
    b"+1 qid:007 007:7.\r\n-0 qid:007 1:-.5e-3 2:-0 3:-0e9\n",  # negative zeros keep their sign
    b"1 qid:1 1:1\n-1 qid:1 1_0:1\n",       # first problem wins: the label, before the bad token
    b"1 qid:1 1_0:1\n-1 qid:1 1:1\n",       # ... or the bad token, before the label
    b"1 qid:1 1:1\x0b2:2\x0c3:3\n",        # vertical tab and form feed separate tokens
    b"1 qid:1 1:1\x1c2:2\n",               # \x1c does not (bytes.split keeps it)
    b"1 qid:1 1:0.5\n\n\n# end",
    b"# only comments\n\n",
]


@pytest.mark.parametrize("raw", REGRESSIONS, ids=range(len(REGRESSIONS)))
def test_regression_inputs(tmp_path, raw):
    path = tmp_path / "r.txt"
    path.write_bytes(raw)
    _check(path, raw)


def test_reference_parser_agrees_with_itself_on_known_cases():
    assert reference_parse(b"1 qid:3 2:0.5 #c\n0 qid:3\n", ".txt") == Parsed([1.0, 0.0], [3, 3], [{2: 0.5}, {}],
                                                                               ["c", ""])
    assert reference_parse(b"1 qid:3 2:0.5\n0 qid:3 1_0:1\n", ".txt") == Rejected(2)
    assert reference_parse(b"1 qid:1\n1 qid:2\n1 qid:1\n", ".txt") == Rejected(3)
    assert reference_parse(b"not gzip", ".gz") == Rejected(None)


# --- write -> load on random data ------------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_write_load_round_trip_random(tmp_path, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=int(rng.integers(1, 6)))
    n, m = int(sizes.sum()), int(rng.integers(1, 9))
    X = rng.normal(size=(n, m)) * 10.0 ** rng.integers(-30, 30, size=(n, m))
    X[rng.random((n, m)) < 0.5] = 0.0
    X[rng.random((n, m)) < 0.05] = np.nan
    X[-1, -1] = 1.0  # the width survives without n_features
    ids = rng.choice(np.arange(-50, 50), size=sizes.size, replace=False)
    alphabet = list("abc #=:_+é\t-0123")
    comments = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 12)))).strip() for _ in range(n)]
    X[rng.random((n, m)) < 0.1] = -0.0
    X[rng.random((n, m)) < 0.05] = -np.nan
    y = rng.choice([0.0, 1.0, 2.0, -0.0, 0.125, 1e-7], size=n)
    d = RankingData(X, y, np.repeat(ids, sizes), None, comments)
    if seed % 2:
        d = d.to_csr()
    path = tmp_path / ("d.txt", "d.txt.gz", "d.txt.bz2")[seed % 3]
    write_letor(path, d)
    back = load_letor(path, with_comments=True, dense=not seed % 2)
    Xa = stored_dense(back.X) if sp.issparse(back.X) else back.X
    written = stored_dense(d.X) if sp.issparse(d.X) else X  # to_csr() drops -0.0 as it drops zeros
    assert np.array_equal(Xa, written, equal_nan=True)
    assert np.array_equal(np.signbit(Xa), np.signbit(written))  # -0.0 and -nan come back with their sign
    assert np.array_equal(back.y, y) and np.array_equal(np.signbit(back.y), np.signbit(y))
    assert back.qid.tolist() == d.qid.tolist()
    assert back.group_ptr.tolist() == d.group_ptr.tolist() and back.comments == comments
    _check(path, path.read_bytes())
