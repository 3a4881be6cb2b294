"""A numba parser for LETOR / SVMlight files that follow the strict grammar exactly.

Measured (docs/results/letor_io, rocketlake): an MSLR-WEB10K-Fold1-sized file (723k rows x 136, 907 MiB) loads with 18x less CPU than through scikit-learn's reader (10 s vs 187 s; 3.9x the wall time on the shared machine), a tenth of it 3.9-4.2x: it stays.

:func:`parse` reads a whole file's bytes in two passes (count the rows and non-zeros, then
fill preallocated arrays) and gives what scikit-learn's ``load_svmlight_file(...,
query_id=True, zero_based=False)`` gives for the same file, bit for bit: ``X`` as CSR with
int64 indices and indptr, explicit zeros kept; ``y`` float64; ``qid`` int64 (empty without
``qid:``). It only accepts files in the grammar of :mod:`boostplug.data.letor`; on anything
else (a token outside it, indices not increasing, ``qid:`` on some lines only, a qid of 19
digits or more, a NUL byte, an index above ``n_features``) it returns None and the caller
falls back to the slow pass (:func:`boostplug.data._letor_lines.parse_lines`), which names the
malformed line.

Numbers are correctly rounded, as Python's ``float``: a decimal mantissa below 2**53 with a
power of ten 10**k, |k| <= 22, is one multiplication or division of two exact doubles (so
correctly rounded; Clinger's fast path); other mantissas of up to 18 significant digits
(most 17-digit shortest reprs) go through the Eisel-Lemire algorithm (a 128-bit product
with a truncated power of five, as Rust's and Go's standard libraries parse floats), which
either gives the correctly rounded double or says it cannot decide; any remaining token
(19+ significant digits, subnormal or overflowing results, undecided products) is recorded
and parsed afterwards with ``float(token)``.
"""

from __future__ import annotations

import contextlib
import math
from typing import Callable

import numba as nb
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

# Powers of ten that are exact doubles: float(10**k) is exact for k <= 22.
_POW10 = np.array([float(10**k) for k in range(23)])
_EXACT = 2**53  # integers below this are exact doubles
_MAX_INDEX = 2**31 - 1  # scikit-learn holds feature indices as C ints
_NO_LIMIT = 2**62


def _powers_of_five() -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """High and low 64-bit words of 5**q, q = -342..308, normalized to 128 bits (top bit set):
    truncated for q >= 0, rounded up (from 2**b // 5**-q + 1) for q < 0: the table of Lemire's
    fast_float and of Rust's dec2flt, which the algorithm's proof of correct rounding assumes."""
    words = []
    for q in range(-342, 0):
        power5 = 5**-q
        z = power5.bit_length()  # ceil(log2(5**-q)): a power of five is no power of two
        c = 2 ** (z + 127) // power5 + 1 if q >= -27 else 2 ** (2 * z + 128) // power5 + 1
        while c >= 1 << 128:
            c //= 2
        words.append(c)
    for q in range(0, 309):
        power5 = 5**q
        shift = 128 - power5.bit_length()
        words.append(power5 << shift if shift >= 0 else power5 >> -shift)
    return (np.array([c >> 64 for c in words], dtype=np.uint64),
            np.array([c & (2**64 - 1) for c in words], dtype=np.uint64))


_P5_HI, _P5_LO = _powers_of_five()
_P5_MIN, _P5_MAX = -342, 308
_M32 = np.uint64(0xFFFFFFFF)

# What the kernel's number parser says about a token.
_BAD, _FAST, _SLOW, _NAN = -1, 0, 1, 2

_NL, _HASH, _COLON = 10, 35, 58


@nb.njit(cache=True, inline="always")
def _space(c: int) -> bool:
    """Whitespace that separates tokens within a line (``bytes.split``'s, but the newline)."""
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@nb.njit(cache=True, inline="always")
def _token_end(buf: NDArray[np.uint8], p: int) -> bool:
    """Whether a token may end before ``p``: end of data, whitespace, newline or ``#``."""
    if p == buf.shape[0]:
        return True
    c = buf[p]
    return c == _NL or c == _HASH or _space(c)


@nb.njit(cache=True)
def _count(buf: NDArray[np.uint8]) -> tuple[int, int, int]:
    """Data rows, feature tokens and the largest feature index of a well-formed file (first
    pass; -1 rows for a NUL).

    A data line has a non-blank byte before its first ``#``; in the data part of a
    well-formed line every ``:`` is a feature's but the ``qid:`` one, and ``q`` appears
    only in ``qid:``. The fill pass checks the counts, so a malformed file cannot overrun.
    """
    rows = 0
    colons = 0
    qs = 0
    top = 0
    run = 0  # the digits just before this byte, as a number (0 after any other byte)
    data = False
    comment = False
    for i in range(buf.shape[0]):
        c = buf[i]
        if c == _NL:
            if data:
                rows += 1
            data = False
            comment = False
            run = 0
        elif c == 0:  # a NUL byte: leave such files to the slow pass
            return -1, 0, 0
        elif comment or _space(c):
            run = 0
            continue
        elif c == _HASH:
            comment = True
            run = 0
        else:
            data = True
            if 48 <= c <= 57:
                if run <= _MAX_INDEX:
                    run = run * 10 + (np.int64(c) - 48)
                continue
            if c == _COLON:
                colons += 1
                if run > top:
                    top = run
            elif c == 113:  # 'q'
                qs += 1
            run = 0
    if data:
        rows += 1
    return rows, max(colons - qs, 0), top


@nb.njit(cache=True)
def _number(buf: NDArray[np.uint8], p: int, allow_nan: bool, nan_pos: float,
            nan_neg: float) -> tuple[int, float, int]:
    """``(end, value, kind)`` of the number starting at ``p``:
    ``[+-]digits[.digits][e[+-]digits]`` (at least one mantissa digit), or ``[+-]nan``
    (any case) if ``allow_nan``. ``kind`` is _FAST (value correctly rounded), _SLOW (parse
    the token in Python), _NAN or _BAD."""
    n = buf.shape[0]
    neg = False
    if p < n and (buf[p] == 43 or buf[p] == 45):  # '+' '-'
        neg = buf[p] == 45
        p += 1
    if allow_nan and p + 3 <= n and (buf[p] | 32) == 110 and (buf[p + 1] | 32) == 97 and (buf[p + 2] | 32) == 110:
        return p + 3, nan_neg if neg else nan_pos, _NAN
    mant = 0
    sig = 0  # significant digits (from the first non-zero one)
    digits = 0
    frac = 0
    dropped = False
    seen_dot = False
    while p < n:
        c = buf[p]
        if 48 <= c <= 57:
            d = np.int64(c) - 48
            digits += 1
            if seen_dot:
                frac += 1
            if sig or d:
                sig += 1
                if sig <= 18:  # 18 digits always fit in an int64
                    mant = mant * 10 + d
                elif d:
                    dropped = True
        elif c == 46 and not seen_dot:  # '.'
            seen_dot = True
        else:
            break
        p += 1
    if digits == 0:
        return p, 0.0, _BAD
    exp = 0
    if p < n and (buf[p] | 32) == 101:  # 'e' 'E'
        p += 1
        eneg = False
        if p < n and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        edigits = 0
        while p < n and 48 <= buf[p] <= 57:
            if exp < 100_000:  # beyond this only a zero mantissa is fast, and it ignores exp
                exp = exp * 10 + (np.int64(buf[p]) - 48)
            edigits += 1
            p += 1
        if edigits == 0:
            return p, 0.0, _BAD
        if eneg:
            exp = -exp
    if sig == 0:
        return p, -0.0 if neg else 0.0, _FAST
    if dropped:  # digits beyond the 18th significant one that are not all zeros
        return p, 0.0, _SLOW
    k = exp - frac + max(sig - 18, 0)  # dropped trailing zeros scale the 18 kept digits
    if mant < _EXACT and -22 <= k <= 22:
        v = float(mant) * _POW10[k] if k >= 0 else float(mant) / _POW10[-k]
    elif _P5_MIN <= k <= _P5_MAX:
        v = _eisel_lemire(k, mant)
        if v < 0.0:
            return p, 0.0, _SLOW
    else:
        return p, 0.0, _SLOW
    return p, -v if neg else v, _FAST


@nb.njit(cache=True, inline="always")
def _mul128(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """``(low, high)`` 64-bit words of the 128-bit product ``a * b`` (32-bit limbs)."""
    a_lo, a_hi = a & _M32, a >> np.uint64(32)
    b_lo, b_hi = b & _M32, b >> np.uint64(32)
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & _M32) + (p2 & _M32)
    low = (p0 & _M32) | (mid << np.uint64(32))
    high = p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))
    return low, high


@nb.njit(cache=True, inline="always")
def _leading_zeros(w: np.uint64) -> int:
    """Leading zero bits of a non-zero 64-bit word."""
    n = 0
    for shift in (32, 16, 8, 4, 2, 1):
        if w >> np.uint64(64 - shift) == np.uint64(0):
            w = w << np.uint64(shift)
            n += shift
    return n


@nb.njit(cache=True)
def _eisel_lemire(q: int, digits: int) -> float:
    """The double nearest to ``digits * 10**q`` (ties to even), ``digits`` in 1..10**18,
    ``q`` in -342..308; -1.0 when the 128-bit product cannot decide the rounding, for a
    subnormal or an infinite result (the caller then parses the token with ``float``).

    Lemire, "Number parsing at a gigabyte per second" (2021), sections 5-8, as
    ``compute_float`` of Rust's core::num::dec2flt.
    """
    w = np.uint64(digits)
    lz = _leading_zeros(w)
    w = w << np.uint64(lz)
    low, high = _mul128(w, _P5_HI[q - _P5_MIN])
    mask = np.uint64(0x1FF)  # the bits below the 55 kept (52 explicit + hidden + 2)
    if high & mask == mask:  # the first product cannot round on its own: add the low word's
        _, second_high = _mul128(w, _P5_LO[q - _P5_MIN])
        low = low + second_high
        if second_high > low:
            high = high + np.uint64(1)
    if low == np.uint64(0xFFFFFFFFFFFFFFFF) and (q < -27 or q > 55):
        return -1.0
    upper = np.int64(high >> np.uint64(63))
    shift = np.uint64(upper + 9)
    mantissa = high >> shift
    power2 = ((q * 217706) >> 16) + 63 + upper - lz + 1023
    if power2 <= 0:  # subnormal
        return -1.0
    one = np.uint64(1)
    if (low <= one and -4 <= q <= 23 and mantissa & np.uint64(3) == one
            and mantissa << shift == high):  # exactly halfway: round to even, i.e. down here
        mantissa = mantissa & ~one
    mantissa = (mantissa + (mantissa & one)) >> one
    if mantissa >= np.uint64(2 << 52):
        mantissa = np.uint64(1 << 52)
        power2 += 1
    if power2 >= 0x7FF:
        return -1.0
    return math.ldexp(float(mantissa | np.uint64(1 << 52)), power2 - 1075)


@nb.njit(cache=True)
def _qid(buf: NDArray[np.uint8], p: int) -> tuple[int, int, bool]:
    """``(end, value, ok)`` of ``qid:-?digits`` at ``p`` (at most 18 significant digits)."""
    n = buf.shape[0]
    if not (p + 4 <= n and buf[p] == 113 and buf[p + 1] == 105 and buf[p + 2] == 100 and buf[p + 3] == _COLON):
        return p, 0, False
    p += 4
    neg = p < n and buf[p] == 45
    if neg:
        p += 1
    value = 0
    sig = 0
    digits = 0
    while p < n and 48 <= buf[p] <= 57:
        d = np.int64(buf[p]) - 48
        if sig or d:
            sig += 1
            if sig <= 18:
                value = value * 10 + d
        digits += 1
        p += 1
    if digits == 0 or sig > 18:  # longer ones may overflow: the slow pass decides
        return p, 0, False
    return p, -value if neg else value, True


@nb.njit(cache=True)
def _grow(slow: NDArray[np.int64], used: int) -> NDArray[np.int64]:
    """``slow`` with room for one more record (capacity doubled when full)."""
    if used < slow.shape[0]:
        return slow
    bigger = np.empty((2 * slow.shape[0], 3), dtype=np.int64)
    bigger[:used] = slow[:used]
    return bigger


@nb.njit(cache=True)
def _skip_space(buf: NDArray[np.uint8], p: int) -> int:
    n = buf.shape[0]
    while p < n and _space(buf[p]):
        p += 1
    return p


@nb.njit(cache=True)
def _line_end(buf: NDArray[np.uint8], p: int) -> int:
    """Position of the newline ending the line at ``p`` (or the end of the data)."""
    n = buf.shape[0]
    while p < n and buf[p] != _NL:
        p += 1
    return p


@nb.njit(cache=True)
def _fill(buf, y, qid, indptr, indices, data, limit, nan_pos, nan_neg, cap, width):  # noqa: ANN001, ANN202
    """Second pass: parse every data line into the preallocated arrays: CSR (``width`` 0:
    ``indptr``, ``indices`` and ``data`` of ``cap`` values) or, ``width`` > 0, a dense
    row-major matrix of that width flattened in ``data`` (zeros where no value is written).

    Returns ``(status, has_qid, slow)``: status 0 when the whole file is in the
    grammar and exactly ``cap`` values were read (else the line-number-free reason code > 0);
    ``slow`` rows are ``(start, end, slot)`` of tokens to parse in Python, slot >= 0 a
    position in ``data``, slot < 0 the label of row ``-slot - 1``.
    """
    n = buf.shape[0]
    rows = y.shape[0]
    slow = np.empty((16, 3), dtype=np.int64)
    ns = 0
    row = 0
    k = 0
    has_qid = -1
    p = 0
    while p < n:
        p = _skip_space(buf, p)
        if p == n:
            break
        if buf[p] == _NL:
            p += 1
            continue
        if buf[p] == _HASH:  # comment-only line
            p = _line_end(buf, p) + 1
            continue
        if row == rows:
            return 1, 0, slow[:ns]
        e, v, kind = _number(buf, p, False, nan_pos, nan_neg)
        if kind == _BAD or not _token_end(buf, e):
            return 2, 0, slow[:ns]
        if kind == _SLOW:
            slow = _grow(slow, ns)
            slow[ns, 0], slow[ns, 1], slow[ns, 2] = p, e, -row - 1
            ns += 1
        y[row] = v
        p = _skip_space(buf, e)
        line_qid = 0
        if p < n and buf[p] == 113:  # 'q': only qid:<int> may start so
            e, q, ok = _qid(buf, p)
            if not ok or not _token_end(buf, e):
                return 3, 0, slow[:ns]
            qid[row] = q
            line_qid = 1
            p = _skip_space(buf, e)
        if has_qid < 0:
            has_qid = line_qid
        elif has_qid != line_qid:
            return 4, 0, slow[:ns]
        previous = 0
        while p < n and buf[p] != _NL and buf[p] != _HASH:
            index = 0
            start = p
            while p < n and 48 <= buf[p] <= 57:
                if index <= _MAX_INDEX:  # stop growing once too large: refused below
                    index = index * 10 + (np.int64(buf[p]) - 48)
                p += 1
            if p == start or p == n or buf[p] != _COLON:
                return 5, 0, slow[:ns]
            if index <= previous or index > _MAX_INDEX or index > limit:
                return 6, 0, slow[:ns]
            p += 1
            e, v, kind = _number(buf, p, True, nan_pos, nan_neg)
            if kind == _BAD or not _token_end(buf, e):
                return 7, 0, slow[:ns]
            if k == cap:
                return 8, 0, slow[:ns]
            slot = k if width == 0 else row * width + index - 1
            if kind == _SLOW:
                slow = _grow(slow, ns)
                slow[ns, 0], slow[ns, 1], slow[ns, 2] = p, e, slot
                ns += 1
            if width == 0:
                indices[k] = index - 1
            data[slot] = v  # dense: once per cell (indices increase within a line), so a written -0 stays -0.0
            k += 1
            previous = index
            p = _skip_space(buf, e)
        row += 1
        if width == 0:
            indptr[row] = k
        p = _line_end(buf, p) + 1  # past the comment, if any, and the newline
    if row != rows or k != cap:
        return 9, 0, slow[:ns]
    return 0, has_qid, slow[:ns]


def _dense_zeros(rows: int, width: int) -> NDArray[np.float64]:
    """The dense X the fill pass writes into (a function, so that tests can make it fail)."""
    return np.zeros((rows, width))


def parse(raw: bytes, n_features: int | None, dense_ok: Callable[[int, int, int], bool] | None = None
          ) -> tuple[sp.csr_matrix | NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]] | None:
    """``(X, y, qid)`` of a file's bytes as scikit-learn reads them, or None when the file
    is not entirely in the strict grammar (the caller then uses the slow pass).

    ``n_features`` None: the width is the largest index (1 without any feature); else the
    width, and a larger index declines. ``X`` is CSR, or, when ``dense_ok(rows, width, nnz)``
    says yes, the dense array filled directly (what ``X.toarray()`` would give, but for a
    written ``-0``, which stays ``-0.0``; without the CSR arrays: two thirds less memory at
    LETOR's density).
    """
    buf = np.frombuffer(raw, dtype=np.uint8)
    rows, nnz, top = _count(buf)
    if rows <= 0:  # no data lines, or a NUL byte
        return None
    width = (top or 1) if n_features is None else int(n_features)
    X = None
    if dense_ok is not None and dense_ok(rows, width, nnz):
        with contextlib.suppress(MemoryError):  # then CSR, which the caller densifies or refuses
            X = _dense_zeros(rows, width)
    dense = X is not None
    y = np.empty(rows, dtype=np.float64)
    qid = np.empty(rows, dtype=np.int64)
    if X is not None:
        indptr = indices = np.empty(0, dtype=np.int64)
        data = X.reshape(-1)
    else:
        indptr = np.zeros(rows + 1, dtype=np.int64)
        indices = np.empty(nnz, dtype=np.int64)
        data = np.empty(nnz, dtype=np.float64)
    limit = _NO_LIMIT if n_features is None else int(n_features)
    status, has_qid, slow = _fill(buf, y, qid, indptr, indices, data, limit, float("nan"), float("-nan"),
                                       nnz, width if dense else 0)
    if status:
        return None
    if slow.shape[0]:  # tokens the kernel leaves to Python's float (rare in real files)
        values = np.array([float(raw[a:b]) for a, b in slow[:, :2].tolist()], dtype=np.float64)
        slot = slow[:, 2]
        data[slot[slot >= 0]] = values[slot >= 0]
        y[-slot[slot < 0] - 1] = values[slot < 0]
    qid = qid if has_qid else np.empty(0, dtype=np.int64)
    if dense:
        return X, y, qid
    # csr_array keeps int64 indices as scikit-learn's reader returns them (csr_matrix would narrow them)
    return sp.csr_matrix(sp.csr_array((data, indices, indptr), shape=(rows, width))), y, qid
