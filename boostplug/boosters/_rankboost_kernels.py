"""Kernels and the linearly independent ranker set of the RankBoost family.

Connamacher et al. (MLJ 2020), Section 3.5: a binary weak ranker ``h`` is the vector
of its pair outcomes ``o_i = h(x'_i) - h(x_i)`` over the ``m`` critical pairs
(``x'_i`` preferred), and ``S_t`` is a linearly independent set of chosen rankers
among those vectors. The span test is the paper's least squares, with two changes that
keep it away from any dense ``pairs x rankers`` matrix:

* inner products of pair vectors are computed from documents:
  ``<D u, D v> = u . (L v)`` with ``D`` the ``m x n`` pair-difference operator and
  ``L = D^T D`` applied in ``O(m)`` by :func:`laplacian` (never formed);
* ``S_t`` is kept as a ``D``-orthonormal basis ``Q`` (documents x ``|S_t|``), ``L Q`` and
  the triangular ``R`` with ``S_t = Q R`` (Gram-Schmidt with one re-orthogonalisation,
  i.e. the QR decomposition of the paper's ``S`` matrix built column by column).

The coefficient of every candidate stump on a basis vector ``q`` is
``(L q) . h = sum_{x : code(x) > j} (L q)[x]``, i.e. one
:func:`~boostplug.boosters._stump_sums.doc_sums_above` pass (``O(n F)``), so
testing all candidates costs ``O(n F |S_t|)``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

from .._core import dispatch
from ._stump_sums import DOC_VISITS_PER_WORK, doc_sums_above

__all__ = ["laplacian", "outcomes_eps", "step_outcomes", "pair_losses", "pair_e2", "ln_cosh",
           "PairSpan", "DEPENDENT_RTOL"]

#: A ranker is in the span of ``S_t`` when its least-squares residual (squared, pair metric)
#: is at most this fraction of its squared norm.
DEPENDENT_RTOL = 1e-9


@nb.njit(cache=True)
def _outcomes_eps(codes, k, j, pairs, w):
    out = np.empty(pairs.shape[0], dtype=np.int8)
    ep = 0.0
    e0 = 0.0
    em = 0.0
    for p in range(pairs.shape[0]):
        o = np.int8(codes[pairs[p, 0], k] > j) - np.int8(codes[pairs[p, 1], k] > j)
        out[p] = o
        if o > 0:
            ep += w[p]
        elif o < 0:
            em += w[p]
        else:
            e0 += w[p]
    return out, ep, e0, em


def outcomes_eps(codes: NDArray[np.int32], k: int, j: int, pairs: NDArray[np.int64], w: NDArray[np.float64]
                 ) -> tuple[NDArray[np.int8], tuple[float, float, float]]:
    """``o_i = h(x'_i) - h(x_i)`` in ``{+1, 0, -1}`` for the stump ``(k, j)`` on every pair (preferred
    first) and Eq. 8's ``(eps+, eps0, eps-)`` under ``w`` (the weight of the correctly ordered, tied
    and reversed pairs), in one pass over the pairs."""
    o, ep, e0, em = _outcomes_eps(codes, np.int64(k), np.int64(j), pairs, w)
    return o, (float(ep), float(e0), float(em))


@nb.njit(cache=True)
def _step_outcomes(o, w, ell, step, tied, factors, u):
    for p in range(o.shape[0]):
        if o[p] > 0:
            ell[p] += -step
            u[p] = w[p] * factors[0]
        elif o[p] < 0:
            ell[p] += step
            u[p] = w[p] * factors[2]
        else:
            ell[p] += tied
            u[p] = w[p] * factors[1]


def step_outcomes(o: NDArray[np.int8], w: NDArray[np.float64], ell: NDArray[np.float64], step: float,
                  tied: float) -> NDArray[np.float64]:
    """A step on one ranker of outcomes ``o``: per pair the log ratio ``lr = -step o`` (``tied`` where
    ``o = 0``) is added to ``ell`` in place, and ``w exp(lr)`` returned, in one pass over the pairs.
    Bit for bit ``ell += lr; w * np.exp(lr)``: ``lr`` takes three values, whose exponentials are
    numpy's (``np.exp`` of them)."""
    factors = np.exp(np.array([-step, tied, step], dtype=np.float64))
    u = np.empty_like(w)
    _step_outcomes(o, w, ell, float(step), float(tied), factors, u)
    return u


#: Pairs summed plainly before their block's sum joins the total (compensated): rounding as numpy's
#: pairwise sums, about ``1e-16`` times the block, relatively.
SUM_BLOCK = 512


@nb.njit(cache=True, inline="always")
def _add(total, comp, x):
    """Neumaier's compensated sum: ``(total, comp)`` after adding ``x`` (the sum is ``total + comp``)."""
    t = total + x
    if math.isinf(t):           # an overflowed term: the sum is inf (no compensation of inf - inf)
        return t, comp
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


@nb.njit(cache=True)
def _pair_losses(pairs, F, w1, up, down, direct):
    """One pass over the pairs: the (``w1``-weighted, when given) sums over the margins ``<= 0``,
    ``< 0`` and ``== 0``, the sum of ``exp(-margin)`` (``down[a] * up[b]`` for the pair ``(a, b)``
    with ``up = exp(F - c)``, ``down = exp(c - F)``; ``exp`` of the margin itself when ``direct``).
    Sums by blocks of :data:`SUM_BLOCK` pairs."""
    P = pairs.shape[0]
    weighted = w1.shape[0] == P
    le, le_c, lt, lt_c, eq, eq_c, e1, e1_c = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for start in range(0, P, SUM_BLOCK):
        ble, blt, beq, be1 = 0.0, 0.0, 0.0, 0.0
        for p in range(start, min(start + SUM_BLOCK, P)):
            a, b = pairs[p, 0], pairs[p, 1]
            v = w1[p] if weighted else 1.0
            if v == 0.0:        # a pair of weight 0 adds 0, even where exp(-margin) overflows
                continue
            mg = F[a] - F[b]
            if mg <= 0.0:
                ble += v
                if mg < 0.0:
                    blt += v
                else:
                    beq += v
            be1 += v * (math.exp(-mg) if direct else down[a] * up[b])
        le, le_c = _add(le, le_c, ble)
        lt, lt_c = _add(lt, lt_c, blt)
        eq, eq_c = _add(eq, eq_c, beq)
        e1, e1_c = _add(e1, e1_c, be1)
    return le + le_c, lt + lt_c, eq + eq_c, e1 + e1_c


def pair_losses(pairs: NDArray[np.int64], F: NDArray[np.float64], w1: NDArray[np.float64] | None,
                ell: NDArray[np.float64]) -> dict[str, float]:
    """``R1`` (Eq. 3), ``R2`` (Eq. 4), ``E1`` (Eq. 5) of the scores ``F`` over the pair list, as means
    under ``w1`` (``None``: uniform), and ``E2`` (Eq. 24, :func:`pair_e2`) from the log weights ``ell``
    (absent when ``ell`` is empty). No exponential per pair: ``exp(-margin)`` is a product of two
    per-document ones (when the scores span less than 1400). A pair of weight 0 adds nothing to ``E1``."""
    m = pairs.shape[0]
    F = np.ascontiguousarray(F, dtype=np.float64)
    w = np.zeros(0) if w1 is None else np.ascontiguousarray(w1, dtype=np.float64)
    lo, hi = (float(F.min()), float(F.max())) if F.size else (0.0, 0.0)
    direct = hi - lo > 1400.0
    c = 0.5 * (lo + hi)
    up, down = (np.zeros(0), np.zeros(0)) if direct else (np.exp(F - c), np.exp(c - F))
    le, lt, eq, e1 = _pair_losses(pairs, F, w, up, down, direct)
    div = 1.0 if w1 is not None else float(m)
    out = {"R1": float(le / div), "R2": float((lt + 0.5 * eq) / div), "E1": float(e1 / div)}
    if ell.shape[0] == m:
        out["E2"] = pair_e2(ell, w1)
    return out


def pair_e2(ell: NDArray[np.float64], w1: NDArray[np.float64] | None) -> float:
    """``E2`` (Eq. 24): the mean of ``exp(ell)`` over the pairs under ``w1`` (``None``: uniform), shifted
    by the largest ``ell`` of a pair of weight > 0 (so that no term overflows), with numpy's
    exponentials and sums: up to rounding (``1e-15`` relatively) the exponential of scipy's
    ``logsumexp`` of them (tests/boosters/test_same_bits.py)."""
    if w1 is not None:
        ell = np.where(w1 == 0.0, -np.inf, ell)
    mx = float(ell.max())
    with np.errstate(under="ignore"):
        e = np.exp(ell - mx)
    acc = float(e.sum() if w1 is None else w1 @ e)
    with np.errstate(over="ignore"):
        return float(np.exp(mx + math.log(acc) - (math.log(ell.shape[0]) if w1 is None else 0.0))) if acc > 0.0 else 0.0


@nb.njit(cache=True)
def _laplacian(pairs, h, n, w):
    out = np.zeros(n)
    weighted = w.shape[0] == pairs.shape[0]
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        d = w[p] * (h[a] - h[b]) if weighted else h[a] - h[b]
        out[a] += d
        out[b] -= d
    return out


def laplacian(pairs: NDArray[np.int64], h: NDArray[np.float64], n_docs: int,
              weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """``L h = D^T W (D h)``: ``(D u) . W (D h) = u . (L h)`` for any document vector ``u`` (``O(m)``);
    ``W`` the pair weights (a pair of weight ``w`` counts as ``w`` copies of it; ``None``: all 1)."""
    return _laplacian(pairs, np.ascontiguousarray(h, dtype=np.float64), n_docs,
                      np.zeros(0) if weights is None else weights)


def ln_cosh(x: NDArray[np.float64] | float) -> NDArray[np.float64] | float:
    """``ln cosh x`` without overflow: ``|x| + ln(1 + e^{-2|x|}) - ln 2``."""
    a = np.abs(x)
    return a + np.log1p(np.exp(-2.0 * a)) - math.log(2.0)


class PairSpan:
    """The linearly independent ranker set ``S_t`` (pair vectors), with its QR factors.

    ``members`` are stump indices ``(k, j)``; ``eta`` their weights (the model on the
    training pairs is ``sum_s eta_s o_s``); ``Q``/``LQ`` hold ``|S_t|`` document columns.
    ``weights``: per-pair multiplicities of the pair metric (``None``: 1).

    After :meth:`use_products` (a span that only needs the span test's answer and ``R``, as the
    efficient RankBoost+), no document vector is kept: every stump's products with the members
    instead (:meth:`stump_residual`).
    """

    def __init__(self, codes: NDArray[np.int32], pairs: NDArray[np.int64],
                 weights: NDArray[np.float64] | None = None) -> None:
        self.codes = codes
        self.pairs = pairs
        self.weights = weights
        self.n = codes.shape[0]
        self.members: list[tuple[int, int]] = []
        self.index: dict[tuple[int, int], int] = {}
        self.eta = np.zeros(0)
        self._Q = np.zeros((self.n, 4))
        self._LQ = np.zeros((self.n, 4))
        self._R = np.zeros((4, 4))
        self._G: NDArray[np.float64] | None = None   # use_products: (capacity, F, width)
        self._nsplit = np.zeros((0, 0))
        self._n_thr = np.zeros(0, dtype=np.int64)

    def use_products(self, nsplit: NDArray[np.float64], n_thr: NDArray[np.int64]) -> None:
        """Hold ``G[b, k, j] = h_kj . L h_b`` (every stump's product with each member) instead of the basis
        vectors: a stump's coefficients solve ``R^T c = G[:, k, j]`` (``O(|S_t|^2)``, not ``O(n |S_t|)``)
        and its squared residual is ``nsplit[k, j] - |c|^2``. Before the first member only."""
        if self.size:
            raise ValueError(f"use_products needs an empty span, this one has {self.size} members")
        self._nsplit = nsplit
        self._n_thr = n_thr
        self._G = np.zeros((4,) + nsplit.shape)
        self._Q = self._LQ = np.zeros((self.n, 0))

    @property
    def size(self) -> int:
        return len(self.members)

    def _laplacian(self, h: NDArray[np.float64]) -> NDArray[np.float64]:
        """``L h`` of the pair metric (a subclass may compute it without a pair list)."""
        return laplacian(self.pairs, h, self.n, self.weights)

    def linked(self) -> NDArray[np.bool_]:
        """The documents in a pair of non-zero weight: the rows and columns of ``L`` that are not
        all zero (a vector's entries elsewhere change nothing in the pair metric)."""
        out = np.zeros(self.n, dtype=bool)
        pairs = self.pairs if self.weights is None else self.pairs[self.weights != 0]
        out[pairs[:, 0]] = True
        out[pairs[:, 1]] = True
        return out

    def metric_rank(self) -> int:
        """The rank of ``L``: the linked documents less the connected components their pairs form
        (a weighted graph Laplacian with positive weights). No more stumps than this are
        independent in the pair metric."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        pairs = self.pairs if self.weights is None else self.pairs[self.weights != 0]
        if not pairs.shape[0]:
            return 0
        nodes, inverse = np.unique(pairs.ravel(), return_inverse=True)
        ends = inverse.reshape(-1, 2)
        graph = coo_matrix((np.ones(ends.shape[0]), (ends[:, 0], ends[:, 1])), shape=(nodes.size, nodes.size))
        n_comp, _ = connected_components(graph, directed=False)
        return int(nodes.size - n_comp)

    @property
    def Q(self) -> NDArray[np.float64]:
        return self._Q[:, : self.size]

    @property
    def LQ(self) -> NDArray[np.float64]:
        return self._LQ[:, : self.size]

    @property
    def R(self) -> NDArray[np.float64]:
        return self._R[: self.size, : self.size]

    def residual(self, h: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], float, float]:
        """Least squares of ``h`` on ``S_t`` (pair metric): ``(c, u, r2, norm2)`` with
        ``h = Q c + u``, ``r2 = |D u|^2`` and ``norm2 = |D h|^2`` (Gram-Schmidt twice)."""
        Lh = self._laplacian(h)
        norm2 = float(h @ Lh)
        c = self.LQ.T @ h
        u = h - self.Q @ c
        c2 = self.LQ.T @ u
        u -= self.Q @ c2
        c = c + c2
        r2 = float(u @ self._laplacian(u))
        return c, u, max(r2, 0.0), norm2

    def stump_residual(self, k: int, j: int, h: NDArray[np.float64]
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None, float, float]:
        """:meth:`residual` of the stump ``(k, j)`` (``h`` its vector); after :meth:`use_products` from
        the products (``u`` is then ``None``: :meth:`add` needs none)."""
        if self._G is None:
            return self.residual(h)
        m = self.size
        c = (solve_triangular(self.R, self._G[:m, k, j], trans="T", lower=False, check_finite=False)
             if m else np.zeros(0))
        norm2 = float(self._nsplit[k, j])
        return c, None, max(norm2 - float(c @ c), 0.0), norm2

    def is_dependent(self, r2: float, norm2: float) -> bool:
        return r2 <= DEPENDENT_RTOL * norm2

    def beta(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """Span coefficients ``beta`` with ``S_t beta = Q c`` (``R beta = c``)."""
        return solve_triangular(self.R, c, lower=False) if self.size else np.zeros(0)

    def add(self, k: int, j: int, c: NDArray[np.float64], u: NDArray[np.float64] | None, r2: float,
            eta: float) -> None:
        """Append the independent stump ``(k, j)`` (``h = Q c + u``) with weight ``eta``; after
        :meth:`use_products`, ``R``'s column and every stump's product with ``h``."""
        m = self.size
        if m == self._R.shape[0]:
            grow = max(4, m)
            if self._G is not None:
                self._G = np.concatenate([self._G, np.zeros((grow,) + self._G.shape[1:])], axis=0)
            else:
                self._Q = np.hstack([self._Q, np.zeros((self.n, grow))])
                self._LQ = np.hstack([self._LQ, np.zeros((self.n, grow))])
            R = np.zeros((m + grow, m + grow))
            R[:m, :m] = self._R[:m, :m]
            self._R = R
        self._R[:m, m] = c
        self._R[m, m] = math.sqrt(r2)
        if self._G is not None:     # every stump's product with h (contiguous: one row)
            Lh = self._laplacian((self.codes[:, k] > j).astype(np.float64))
            self._G[m] = doc_sums_above(self.codes, Lh, self._n_thr)[:, :self._G.shape[2]]
        else:
            q = u / self._R[m, m]
            self._Q[:, m] = q
            self._LQ[:, m] = self._laplacian(q)
        self.members.append((int(k), int(j)))
        self.index[(int(k), int(j))] = m
        self.eta = np.append(self.eta, eta)

    def all_coefficients(self, n_thr: NDArray[np.int64]) -> NDArray[np.float64]:
        """``C[k, j, b] = (L q_b) . h_{kj}`` for every stump (``O(n F |S_t|)``; after :meth:`use_products`
        from the products, ``C R = G``, ``O(F width |S_t|^2)``)."""
        if self._G is not None:
            m = self.size
            G = self._G[:m]
            if not m:
                return np.zeros(G.shape[1:] + (0,))
            C = solve_triangular(self.R, G.reshape(m, -1), trans="T", lower=False, check_finite=False)
            return np.ascontiguousarray(C.T).reshape(G.shape[1:] + (m,))
        F = self.codes.shape[1]
        width = int(n_thr.max()) + 1 if n_thr.size else 1
        C = np.zeros((F, width, self.size))
        for b in range(self.size):
            C[:, :, b] = doc_sums_above(self.codes, self.LQ[:, b], n_thr)
        return C


#: Document vectors :class:`StumpProducts` sums together (a feature's histogram stays in the first-level
#: cache); 16 took 14% less time than 8 on rocketlake, 32 no less than 16.
GRAM_CHUNK = 16


@nb.njit(cache=True, parallel=True)
def _gram_above(codes, chunks, n_vecs, width, feat_ptr, by_feature, js, lo, hi, out):
    """``out[i - lo, b] = sum_x vec_b[x] [codes[x, k] > js[i]]`` for the stumps ``i`` in ``[lo, hi)``
    (``vec_b = chunks[b // GRAM_CHUNK, :, b % GRAM_CHUNK]``): per feature and chunk of vectors, a
    histogram of the codes summed from the top. Parallel over (chunk, feature)."""
    n, n_feat = codes.shape
    n_chunks = chunks.shape[0]
    for task in nb.prange(n_chunks * n_feat):
        c, k = task // n_feat, task % n_feat
        if feat_ptr[k] == feat_ptr[k + 1]:
            continue
        hist = np.zeros((width + 1, GRAM_CHUNK))
        col = codes[:, k]
        vec = chunks[c]
        for x in range(n):
            row = hist[col[x]]
            src = vec[x]
            for b in range(GRAM_CHUNK):
                row[b] += src[b]
        for j in range(width - 1, -1, -1):
            for b in range(GRAM_CHUNK):
                hist[j, b] += hist[j + 1, b]
        width_c = min(GRAM_CHUNK, n_vecs - c * GRAM_CHUNK)
        for t in range(feat_ptr[k], feat_ptr[k + 1]):
            i = by_feature[t]
            if lo <= i < hi:
                src = hist[js[i] + 1]
                dst = out[i - lo]
                for b in range(width_c):
                    dst[c * GRAM_CHUNK + b] = src[b]


class StumpProducts:
    """Products ``h . v`` of the stumps ``(ks[i], js[i])`` with document vectors ``v`` (``codes``' rows):
    for :data:`GRAM_CHUNK` vectors at a time, one pass over the codes (``O(n F)``) gives every stump's."""

    def __init__(self, codes: NDArray[np.int32], width: int, ks: NDArray[np.int64], js: NDArray[np.int64]) -> None:
        self.codes = np.asfortranarray(codes)
        self.width = width
        self.js = np.ascontiguousarray(js, dtype=np.int64)
        self.by_feature = np.argsort(ks, kind="stable").astype(np.int64)
        self.feat_ptr = np.searchsorted(ks[self.by_feature], np.arange(codes.shape[1] + 1)).astype(np.int64)

    def fill(self, vecs: NDArray[np.float64], lo: int, hi: int, out: NDArray[np.float64]) -> None:
        """``out[i - lo, b] = h_i . vecs[b]`` for the stumps ``lo <= i < hi`` (``vecs``: ``(B, n)``)."""
        B, n = vecs.shape
        n_chunks = -(-B // GRAM_CHUNK)
        chunks = np.zeros((n_chunks, n, GRAM_CHUNK))
        for c in range(n_chunks):
            part = vecs[c * GRAM_CHUNK:(c + 1) * GRAM_CHUNK]
            chunks[c, :, :part.shape[0]] = part.T
        kernel = dispatch.kernel_for(_gram_above, self.codes.shape[0] * self.codes.shape[1] * B // DOC_VISITS_PER_WORK)
        kernel(self.codes, chunks, B, self.width, self.feat_ptr, self.by_feature, self.js, lo, hi, out)


@nb.njit(cache=True)
def _block_choose(S, r2, tol, room, Lb):
    """One block's candidates against the basis at its start (``S``: their Gram matrix's Schur complement
    on it, ``r2`` its diagonal): a candidate whose residual, also on the block's earlier additions, is
    at most ``tol`` is dropped, the others join (Cholesky of ``S`` in order into ``Lb``) until ``room``.
    Returns the status per candidate (0 dropped, 1 added, 2 not reached) and the added ones in order."""
    B = S.shape[0]
    status = np.full(B, 2, dtype=np.int8)
    added = np.empty(B, dtype=np.int64)
    na = 0
    for i in range(B):
        if r2[i] <= tol[i]:
            status[i] = 0
            continue
        if na == room:
            break
        rr = r2[i]
        for t in range(na):
            a = added[t]
            v = S[i, a]
            for t2 in range(t):
                v -= Lb[i, t2] * Lb[a, t2]
            v /= Lb[a, t]
            Lb[i, t] = v
            rr -= v * v
        if rr <= tol[i]:
            status[i] = 0
            continue
        Lb[i, na] = math.sqrt(rr)
        added[na] = i
        na += 1
        status[i] = 1
    return status, added[:na]


def first_capacity(room: int, n: int) -> int:
    """The basis stumps :func:`select_independent` makes room for at first: ``room``, at most the linked
    documents ``n`` plus one (its arrays grow past it)."""
    return min(room, n + 1)


def select_independent(
    codes: NDArray[np.int32], order: NDArray[np.int64], span: PairSpan,
    nsplit: NDArray[np.float64], n_thr: NDArray[np.int64], cap: int, block: int = 64,
) -> NDArray[np.bool_]:
    """Greedy linearly independent subset of the stumps ``order`` (``(N, 2)`` rows ``(k, j)``), taken in
    that order after ``span``'s members, in ``span``'s pair metric: a stump whose squared residual is at
    most ``DEPENDENT_RTOL`` times its squared norm ``nsplit[k, j]`` is dropped. Returns ``drop`` (``(N,)``);
    stops once the basis holds ``cap`` stumps (those not reached are kept).

    Only ``R`` of ``S = Q R`` is built: a candidate's coefficients solve ``R^T c = g`` (``g``: its products
    with the basis stumps, one pass over the codes a new basis stump, :class:`StumpProducts`) and its squared
    residual is ``nsplit - |c|^2``: ``O(n F)`` a basis stump and ``O(m^2)`` a candidate, not ``O(n m)``.
    Candidates go by blocks (one triangular solve, then :func:`_block_choose` within the block); the products
    are kept for a window of candidates. Past the pair metric's rank (:meth:`PairSpan.metric_rank`) every
    candidate is dropped unsolved; only the linked documents (:meth:`PairSpan.linked`) are held.
    """
    rows = np.flatnonzero(span.linked())
    n = rows.shape[0]
    sub = np.asfortranarray(codes[rows])
    width = int(n_thr.max()) + 1 if n_thr.size else 1
    N = order.shape[0]
    ks_all = np.ascontiguousarray(order[:, 0], dtype=np.int64)
    js_all = np.ascontiguousarray(order[:, 1], dtype=np.int64)
    nsp = nsplit[ks_all, js_all]
    tol = DEPENDENT_RTOL * nsp
    m0 = span.size
    cs = span.all_coefficients(n_thr)[ks_all, js_all] if m0 else np.zeros((N, 0))   # (N, m0)
    room = max(min(cap, m0 + N) - m0, 0)
    first = first_capacity(room, n)
    R = np.zeros((m0 + first, m0 + first))
    R[:m0, :m0] = span.R
    added: list[int] = []                   # positions in order of the basis stumps after the members
    window = max(2 * block, 2 * first)
    G = np.zeros((0, 0))                    # G[i - w0, a] = h_i . L h_a for the window's candidates i
    w0 = w1 = 0

    def laplacians(pos: NDArray[np.int64]) -> NDArray[np.float64]:
        """``(len(pos), n)``: ``L h`` of the stumps at positions ``pos`` of ``order``, on the linked rows."""
        H = (codes[:, ks_all[pos]] > js_all[pos]).T.astype(np.float64)      # (len(pos), all documents)
        for t in range(H.shape[0]):    # the span's own pair metric (pair list or label levels)
            H[t] = span._laplacian(H[t])
        return H[:, rows]

    products = StumpProducts(sub, width, ks_all, js_all)
    later = np.zeros((0, block))            # the block's products with every later candidate of the window
    drop = np.zeros(N, dtype=bool)
    m = m0
    full = span.metric_rank()               # a basis this large spans every stump: the rest are dependent
    for start in range(0, N, block):
        if m >= full:
            drop[start:] = True
            break
        stop = min(start + block, N)
        if stop > w1:                       # a new window: the products with every basis stump so far
            w0, w1 = start, min(N, start + window)
            G = np.zeros((w1 - w0, R.shape[0] - m0))
            later = np.zeros((w1 - w0, block))
            for a0 in range(0, len(added), block):
                pos = np.array(added[a0:a0 + block], dtype=np.int64)
                products.fill(laplacians(pos), w0, w1, later)
                G[:, a0:a0 + pos.shape[0]] = later[:, :pos.shape[0]]
        B = stop - start
        c = np.empty((B, m))                # the block's coefficients on the basis at its start
        c[:, :m0] = cs[start:stop]
        if m > m0:
            rhs = G[start - w0:stop - w0, :m - m0].T - R[:m0, m0:m].T @ c[:, :m0].T
            c[:, m0:] = solve_triangular(R[m0:m, m0:m], rhs, trans="T", lower=False, check_finite=False).T
        r2 = nsp[start:stop] - np.einsum("ij,ij->i", c, c)
        live = np.flatnonzero(r2 > tol[start:stop])
        if not live.size:
            drop[start:stop] = True
            continue
        S, Lb = np.zeros((B, B)), np.zeros((B, B))
        if m < cap:     # (at the cap the block's first candidate above the tolerance ends the pruning)
            products.fill(laplacians(start + live), start, w1, later)     # row i - start: candidate i
            S[:, live] = later[:B, :live.size] - c @ c[live].T
        status, new = _block_choose(S, r2, tol[start:stop], cap - m, Lb)
        drop[start:stop] = status == 0
        na = new.shape[0]
        if na:
            if m + na > R.shape[0]:         # past first_capacity
                grow = max(m + na, 2 * R.shape[0])
                R2 = np.zeros((grow, grow))
                R2[:m, :m] = R[:m, :m]
                R = R2
                G = np.hstack([G, np.zeros((G.shape[0], grow - m0 - G.shape[1]))])
            R[:m, m:m + na] = c[new].T
            R[m:m + na, m:m + na] = Lb[new, :na].T
            col = np.searchsorted(live, new)
            G[start - w0:, m - m0:m + na - m0] = later[:w1 - start, col]
            added.extend((start + new).tolist())
            m += na
        if (status == 2).any():
            break
    return drop
