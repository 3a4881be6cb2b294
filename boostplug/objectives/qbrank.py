"""QBRank / GBRank: boosted ranking by successive quadratic approximation.

Zheng, Zha, Zhang, Chapelle, Chen, Sun, "A General Boosting Method and its
Application to Learning Ranking Functions for Web Search", NIPS 2007: the risk of
Section 3 ("THE OBJECTIVE FUNCTION"), its quadratic upper bound (Eq. 6) and
Algorithm 2 with the REMARK under it.

Example:
    >>> import numpy as np
    >>> from boostplug import objectives
    >>> labels = np.array([2.0, 0.0, 1.0]); group_ptr = np.array([0, 3])
    >>> objectives.get("qbrank").loss(np.zeros(3), labels, group_ptr)  # w/2 * (2^2 + 1^2 + 1^2)
    1.5

Definition (the risk of Section 3; weights per query)::

    R(h) = w/2 * sum_{pairs x > y} W_q * max(0, h(y) - h(x) + tau)^2
         + (1 - w)/2 * sum_{labeled z} W_q * (l_z - h(z))^2

The pairs are every critical pair of each query (margin ``tau``: the grade
difference or a constant) and any explicit ``pairs`` (preferred row first, margin
``pair_tau``); the labeled documents are, by default, those of single-label
queries, which give no pairs. The hinge is strict: a pair at its kink adds nothing.

Gradient and Hessian (``hessian="bound"`` or the paper's ``"mean"``): on
:class:`QBRankObjective`. Algorithm 2 step 2's step length: :func:`line_search`.
The derivations (why ``"bound"`` majorises R, why ``"mean"``'s Newton leaves are
the least-squares leaves of Algorithm 2, the O(n log n) sweep per query), the
parameters in full: docs/objectives/qbrank.md; the measured quality: docs/studies/objectives.md.

Why not on the pair base (:class:`~.pairwise.PairwiseLoss`): its pairs are not only a query's pairs
of different labels (explicit rows, each with its own weight and margin, keyed pairs mapped onto a
training set's rows), its margin ``tau = "grade"`` puts the labels inside the hinge (a pair base's
``pair_loss(d, ...)`` sees the score gap alone), and its squared error on labeled rows is a term per
document, which the pair loop has no place for. Its kernels sum the hinge's active pairs by a sweep in
key order, ``O(n_q log n_q)`` per query, where the pair loop visits each of ``O(n_q^2)`` pairs: on
queries of 20 to 180 documents, several times the work, far beyond 5% a round; and ``"mean"``'s
gradient is divided by each document's count of entries (the gradient kind ``"scaled"``, which the
pair base does not declare). Nor the listwise base (:class:`~.listwise.ListwiseLoss`): a query's
explicit pairs are a list of its own length, not a query's rows of fixed-width inputs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_scores
from .._core import dispatch
from ..groups import label_levels
from ..keyed_pairs import pair_rows, row_index
from . import _qbrank_kernels as K
from ._contract import Hessian, Loss, Param, Search

__all__ = ["TAU_MAX", "QBRankObjective", "line_search"]

#: Dispatch work (:mod:`boostplug._core.dispatch`) of one document in QBRank's kernels: as much as 50
#: pair visits, so they go parallel from 100,000 documents.
DOC_WORK = 50

_NAME = "qbrank"
_NO_ROWS = np.empty(0)  # stands for per-row sums that are not computed (label_pairs=False)

#: Largest ``tau`` / ``pair_tau``: the kernels sum squared margins (>= tau^2) over a query's
#: pairs, which stays finite for up to ~1e8 pairs at this size.
TAU_MAX = 1e150


def _pair_weights(value: Any) -> NDArray[np.float64]:
    """One finite, non-negative weight per explicit pair, as a read-only float64 vector."""
    if isinstance(value, (str, bytes)) or np.ndim(value) != 1:
        raise TypeError(f"pair_weights must be a 1-d array of numbers, got {type(value).__name__} "
                        f"of shape {np.shape(value)}")
    try:
        w = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("pair_weights must be a 1-d array of numbers") from None
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"pair_weights must be finite and non-negative; pair_weights[{k}] is {float(w[k])!r}")
    w.setflags(write=False)
    return w


class QBRankObjective(Loss):
    """QBRank's risk R bound to one data set.

    Gradient (Section 3, "QUADRATIC APPROXIMATION"; the negative gradient is the
    paper's targets ``+m`` for x, ``-m`` for y and ``l_z - h(z)`` for z)::

        dR/dh_x = -w W m,   dR/dh_y = +w W m   (each active pair, m = h(y) - h(x) + tau > 0)
        dR/dh_z = (1 - w) W (h(z) - l_z)

    Hessian (``hessian``): the modes ``hessians`` declares, ``"bound"`` (default, ``grad`` exact) and the
    paper's ``"mean"`` (``grad`` rescaled); their derivations: docs/objectives/qbrank.md.
    """

    returns_new_arrays = True
    name = _NAME
    summary = "QBRank/GBRank: quadratic hinge on preference pairs + squared error (Zheng et al. 2007)"
    params = {
        "w": Param(0.5, "real", "weight of the preference part (paper: 0.5)", low=0.0, high=1.0,
                   search=Search(0.1, 0.9)),
        "tau": Param("grade", "real", "margin of the label-derived pairs: 'grade' (the grade difference) or a number",
                     low=0.0, high=TAU_MAX, low_open=True, choices=("grade",),
                     search=Search(choices=("grade", 0.5, 1.0, 2.0))),
        "pairs": Param(None, "rows", "explicit preference pairs (row indices, preferred row first; or a KeyedPairs "
                       "table, mapped onto each training set's rows)", weights_in="pair_weights",
                       convert=pair_rows),
        "pair_tau": Param(1.0, "real", "margin of the explicit pairs (paper: 1.0)", low=0.0, high=TAU_MAX,
                          low_open=True),
        "pair_weights": Param(None, "custom", "weight of each explicit pair (default 1), times w and its query's weight",
                              convert=lambda v: _pair_weights(v), stand_in=np.ones(1)),
        "label_pairs": Param(True, "bool", "use every critical pair of each query (False: explicit pairs only)"),
        "labeled": Param("single", "choice", "documents in the squared-error term",
                         choices=("single", "all", "none")),
        "labeled_rows": Param(None, "row_index", "rows of the squared-error term, given explicitly (replaces "
                              "labeled; e.g. the judged rows of P ∪ L)", convert=row_index),
    }
    hessians = {
        "bound": Hessian("bound", "an upper bound of the Hessian (2 w W per active pair + (1-w) W per labeled doc; "
                         "dominates the full block Hessian, Section 3's diag(2, 2) bound); grad is exact"),
        "mean": Hessian("fitting", "the paper's fitting weights (Algorithm 2 + REMARK): grad = dR/dh / (entries of "
                        "the doc), hess = mean entry weight, so Newton leaves = least-squares leaves on the "
                        "averaged targets", gradient="scaled",
                        scaling="dR/dh_i divided by c_i, the number of entries of document i (its pairs in S, "
                        "active or not, plus 1 if it is labeled); 0 where c_i = 0"),
    }

    w: float
    tau: str | float
    pair_tau: float
    pair_weights: NDArray[np.float64] | None
    label_pairs: bool
    labeled: str
    labeled_rows: NDArray[np.int64] | None

    def setup(self) -> None:
        self._key_order = np.empty(0, dtype=np.int64)  # no sort to start from yet (_label_grad)
        if self.pairs is None:
            if self.pair_weights is not None:
                raise ValueError("qbrank: pair_weights given without pairs; they weight the explicit pairs, one each")
            self.pairs = np.zeros((0, 2), dtype=np.int64)
            self.pairs.setflags(write=False)
        if self.pair_weights is not None and self.pair_weights.shape[0] != self.pairs.shape[0]:
            raise ValueError(f"qbrank: pair_weights has {self.pair_weights.shape[0]} entries for "
                             f"{self.pairs.shape[0]} pairs; give one weight per pair")
        self._prepare_static()
        if not (self.label_pairs or self.pairs.shape[0] or self._lab_mask.any()):
            raise ValueError(
                "qbrank: nothing to fit: label_pairs=False, no explicit pairs and "
                f"no labeled documents (labeled={self.labeled!r})"
            )

    # -- label-only precomputation -----------------------------------------------
    def _prepare_static(self) -> None:
        gp = self.group_ptr
        sizes = np.diff(gp)
        self._level, same, self._n_levels = label_levels(self.labels, gp)
        nonempty = sizes > 0
        starts = gp[:-1][nonempty]
        self._label_range = np.zeros(self.n_queries)  # largest grade difference of each query
        if self.n_docs:
            self._label_range[nonempty] = (np.maximum.reduceat(self.labels, starts)
                                           - np.minimum.reduceat(self.labels, starts))
        self._doc_qw = np.repeat(self.query_weights, sizes)  # W of each row's query
        self._paired = self._n_levels > 1  # queries that form label pairs
        # what a query's margins add to its score span: its label range ("grade") or tau
        self._margin_reach = self._label_range if self.tau == "grade" else float(self.tau)
        self._live = self.query_weights > 0.0  # queries that count: 0 * inf would make sums NaN
        self._lab_mask = {"all": np.ones(self.n_docs, dtype=bool), "single": np.repeat(self._n_levels == 1, sizes),
                          "none": np.zeros(self.n_docs, dtype=bool)}[self.labeled]
        if self.labeled_rows is not None:  # replaces labeled
            self._lab_mask = np.zeros(self.n_docs, dtype=bool)
            self._lab_mask[self.labeled_rows] = True
        self._lab_w = np.where(self._lab_mask, (1.0 - self.w) * self._doc_qw, 0.0)
        self._lab = self._lab_w > 0.0  # rows of the squared-error term: 0 * inf would make sums NaN
        self._pair_w = self.w * self._doc_qw  # w W of each row (label-derived pairs)
        # Explicit pair weights: w times the weight of the preferred row's query.
        self._px = np.ascontiguousarray(self.pairs[:, 0])
        self._py = np.ascontiguousarray(self.pairs[:, 1])
        self._pomega = self._pair_w[self._px]
        if self.pair_weights is not None:
            self._pomega = self._pomega * self.pair_weights
        # "mean" mode: entry count c_i and summed entry weight of every document.
        n_label_pairs = (np.repeat(sizes, sizes) - same) if self.label_pairs else np.zeros(self.n_docs, np.int64)
        n_explicit = np.bincount(self.pairs.ravel(), minlength=self.n_docs)
        count = n_label_pairs + n_explicit + self._lab_mask.astype(np.int64)
        wsum = (
            self._pair_w * n_label_pairs
            + np.bincount(self._px, self._pomega, self.n_docs)
            + np.bincount(self._py, self._pomega, self.n_docs)
            + self._lab_w
        )
        safe = np.maximum(count, 1)
        self._mean_scale = np.where(count > 0, 1.0 / safe, 0.0)
        self._mean_hess = np.where(count > 0, wsum / safe, 0.0)

    # -- per-round work ---------------------------------------------------------------
    def _key_args(self) -> tuple[Any, ...]:
        """What the label-pair kernels take to form each query's keys from the scores (margin of
        (x, y) = b_y - a_x; :func:`~boostplug.objectives._qbrank_kernels._query_keys`)."""
        grade = self.tau == "grade"
        return self.labels, grade, 0.0 if grade else float(self.tau)

    def _check_spans(self, h: NDArray[np.float64], span: NDArray[np.float64]) -> None:
        """A query whose score span overflows float64, or whose margins would, is a ``ValueError``
        naming it (``span``: the kernels' per-query ``max - min`` of the scores)."""
        with np.errstate(over="ignore", invalid="ignore"):
            reach = span + self._margin_reach
        bad = np.flatnonzero(~np.isfinite(reach) & self._paired)
        if bad.size:
            q = int(bad[0])
            sl = h[self.group_ptr[q]:self.group_ptr[q + 1]]
            raise ValueError(
                f"{_NAME}: the score differences of query {q} overflow float64 (its scores span "
                f"{float(sl.min())} .. {float(sl.max())}); pair margins need max - min + tau below ~1.8e308"
            )

    def _label_high(
        self, h: NDArray[np.float64], d: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Per query (sum m^2, sum m delta, sum delta^2) over its active label pairs."""
        qsums = np.empty((self.n_queries, 3))
        span = np.empty(self.n_queries)
        run = dispatch.kernel_for(K.sweep_high, self.n_docs * DOC_WORK)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflowing span is refused just below
            run(h, *self._key_args(), d, self._level, self._n_levels, self.group_ptr, qsums, span)
        self._check_spans(h, span)
        return qsums

    def _label_grad(
        self, h: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(dR/dh / (w W), active-pair counts, per-query sum of squared margins)."""
        gsum = np.empty(self.n_docs)
        cnt = np.empty(self.n_docs)
        qloss = np.empty(self.n_queries)
        span = np.empty(self.n_queries)
        order = np.empty(self.n_docs, dtype=np.int64)
        run = dispatch.kernel_for(K.pair_grad, self.n_docs * DOC_WORK)
        run(h, *self._key_args(), self._level, self._n_levels, self.group_ptr, self._key_order, order, gsum, cnt,
            qloss, span)
        self._check_spans(h, span)
        # the next round's sort starts from this one's order (scores move little between rounds);
        # a new array each call, so concurrent calls can only slow each other, never mix orders
        self._key_order = order
        return gsum, cnt, qloss

    def _explicit(
        self, h: NDArray[np.float64], d: NDArray[np.float64] | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[float, float, float]]:
        """Explicit pairs: (weighted grad, summed weight of active pairs per row,
        (sum omega m^2, sum omega m delta, sum omega delta^2)); ``d=None``: no direction."""
        grad = np.zeros(self.n_docs)
        active_w = np.zeros(self.n_docs)
        sums = (0.0, 0.0, 0.0)
        if self._px.shape[0]:
            with np.errstate(over="ignore"):
                reach = (h[self._py] - h[self._px]) + self.pair_tau
            bad = np.flatnonzero(~np.isfinite(reach))
            if bad.size:
                k = int(bad[0])
                x, y = int(self._px[k]), int(self._py[k])
                raise ValueError(
                    f"{_NAME}: the margin of pairs[{k}] = [{x}, {y}] overflows float64 (scores "
                    f"{float(h[x])} and {float(h[y])}, pair_tau {self.pair_tau})"
                )
            dd = np.zeros(self.n_docs) if d is None else d
            sums = K.explicit_terms(h, dd, self._px, self._py, self.pair_tau, self._pomega, grad, active_w)
        return grad, active_w, sums

    def _loss(self, scores: NDArray[np.float64]) -> float:
        total = 0.0
        if self.label_pairs:
            qloss = self._label_grad(scores)[2]
            live = self._live
            total += 0.5 * self.w * float(self.query_weights[live] @ qloss[live])
        total += 0.5 * self._explicit(scores)[2][0]
        lab = self._lab
        r = scores[lab] - self.labels[lab]
        with np.errstate(over="ignore"):  # huge scores: the risk is inf, not NaN
            total += 0.5 * float(self._lab_w[lab] @ (r * r))
        return total

    def _grad_hess(
        self, scores: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        grad, active_w, _ = self._explicit(scores)  # explicit pairs (already weighted)
        mean = self.hessian == "mean"  # its Hessian is label-only (setup): no per-round sums
        hess = active_w
        if not mean:
            hess *= 2.0
        gsum, cnt, _ = self._label_grad(scores) if self.label_pairs else (_NO_ROWS, _NO_ROWS, None)
        # inf is refused by the caller, naming the row
        K.add_row_terms(grad, hess, gsum, cnt, self._pair_w, self._lab_w, scores, self.labels, self.label_pairs,
                        not mean)
        if mean:
            grad *= self._mean_scale
            return grad, self._mean_hess.copy()
        return grad, hess

    def derivatives_along(
        self, scores: NDArray[np.float64], direction: NDArray[np.float64]
    ) -> tuple[float, float, float]:
        """``(dR/ds, d2R/ds2, scale)`` of ``R(scores + s * direction)`` at ``s = 0``.

        ``d2R/ds2`` counts the pairs active at ``scores`` (strict hinge); ``scale``
        bounds the magnitude of the summed terms (for a relative tolerance).
        Inputs are trusted (validated by :func:`line_search`).
        """
        g = 0.0
        k = 0.0
        scale = 0.0
        if self.label_pairs:
            live = self._live
            qsums = self._label_high(scores, direction)[live]
            wq = self.w * self.query_weights[live]
            g += float(wq @ qsums[:, 1])
            k += float(wq @ qsums[:, 2])
            scale += math.sqrt(float(wq @ qsums[:, 0]) * float(wq @ qsums[:, 2]))
        _, _, (sq, md, dd) = self._explicit(scores, direction)
        g += md
        k += dd
        scale += math.sqrt(sq * dd)
        r = scores - self.labels
        lab = self._lab_w * direction
        g += float(lab @ r)
        k += float(lab @ direction)
        scale += float(np.abs(lab) @ np.abs(r))
        return g, k, scale


# -- Algorithm 2, step 2: the exact line search ------------------------------------------
_MAX_STEPS = 200


def line_search(prepared: QBRankObjective, scores: ArrayLike, direction: ArrayLike) -> float:
    """The exact minimiser ``s`` of ``R(scores + s * direction)`` (Algorithm 2, step 2).

    Along a line R is convex and piecewise quadratic (pairs enter or leave the
    active set at breakpoints), so dR/ds is continuous, non-decreasing and
    piecewise linear. It is evaluated in O(n log n) (the same sweeps as the
    gradient, no pair list) and its root is found by safeguarded Newton steps
    on it (or inverse cubic Hermite steps through the last two points), kept
    inside a bracket ``[lo, hi]`` with dR/ds(lo) < 0 < dR/ds(hi) (bisection when
    a step leaves the bracket). A Newton step taken from a point of the root's
    linear piece lands exactly on the root (so does the Hermite step from two
    points of it), so the search is exact to rounding; it stops when
    ``|dR/ds| <= 1e-11 * scale`` (scale bounds the summed terms). When R is flat
    from some ``s*`` on (all pairs satisfied, no labeled term) the smallest
    minimiser is returned; a zero or flat direction gives 0.

    Args:
        prepared: a :class:`QBRankObjective` (``prepare(...)``).
        scores: current scores ``h_{m-1}``, shape ``(n_docs,)``.
        direction: the step ``g_m`` (e.g. the new tree's predictions), same shape.

    Returns:
        ``s`` (may be negative if ``direction`` is an ascent direction).
    """
    if not isinstance(prepared, QBRankObjective):
        raise TypeError("line_search needs a prepared QBRank objective (objectives.get('qbrank').prepare(...)), got "
                        f"{type(prepared).__name__}")
    h = prepared._check(scores)
    d = check_scores(direction, name="direction")
    if d.shape[0] != h.shape[0]:
        raise ValueError(f"direction has {d.shape[0]} values but there are {h.shape[0]} scores")

    g0, k0, sc0 = prepared.derivatives_along(h, d)
    if abs(g0) <= _RTOL * sc0:
        return 0.0
    sign = 1.0
    if g0 > 0.0:  # the minimiser lies at s < 0: search along -d
        d = -d
        g0, sign = -g0, -1.0

    def slope(s: float) -> tuple[float, float, float]:
        return prepared.derivatives_along(h + s * d, d)

    return sign * _root(slope, g0, k0)


_RTOL = 1e-11


def _inverse_hermite(p1: tuple[float, float, float], p2: tuple[float, float, float]) -> float:
    """Zero of the cubic Hermite interpolant of s(g) through two points (s, g, dg/ds):
    exact when both lie on one linear piece, and fast on the many small pieces of
    a large data set, where dR/ds is smooth in effect."""
    (s1, g1, k1), (s2, g2, k2) = p1, p2
    if not (k1 > 0.0 and k2 > 0.0) or g1 == g2:
        return math.nan
    dg = g2 - g1
    t = -g1 / dg
    t2 = t * t
    t3 = t2 * t
    return ((2 * t3 - 3 * t2 + 1) * s1 + (t3 - 2 * t2 + t) * dg / k1
            + (-2 * t3 + 3 * t2) * s2 + (t3 - t2) * dg / k2)


def _root(slope: Any, g_lo: float, k_lo: float) -> float:
    """Root s > 0 of a continuous, non-decreasing, piecewise linear ``slope`` with
    ``slope(0) = g_lo < 0`` and derivative ``k_lo`` at 0 (right of any kink).

    Candidates, first one strictly inside the bracket ``(lo, hi)``: the inverse
    cubic Hermite step through the last two points, Newton from ``lo``, Newton
    from ``hi``, then bisection (or expansion while no ``hi`` is known).
    """
    lo, hi = 0.0, math.inf
    g_hi = k_hi = math.nan
    last: tuple[float, float, float] = (0.0, g_lo, k_lo)
    prev: tuple[float, float, float] | None = None
    for _ in range(_MAX_STEPS):
        options = [
            _inverse_hermite(prev, last) if prev is not None else math.nan,
            lo - g_lo / k_lo if k_lo > 0.0 else math.nan,
            hi - g_hi / k_hi if (math.isfinite(hi) and k_hi > 0.0) else math.nan,
        ]
        cand = next((c for c in options if lo < c < hi), math.nan)
        if math.isnan(cand):
            cand = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * lo + 1.0
        g, k, scale = slope(cand)
        # k == 0 means dR/ds vanishes around cand (R flat there): cand may lie past
        # the smallest minimiser, which Newton from lo (its linear piece) reaches.
        flat = k <= 0.0
        if abs(g) <= _RTOL * scale and (not flat or cand == options[1]):
            return cand
        prev, last = last, (cand, g, k)
        if g < 0.0 and not flat:
            lo, g_lo, k_lo = cand, g, k
        else:
            hi, g_hi, k_hi = cand, g, k
        if math.isfinite(hi) and hi - lo <= 4.0 * np.finfo(np.float64).eps * max(abs(lo), abs(hi)):
            break
    if not math.isfinite(hi):
        return lo
    return lo - g_lo * (hi - lo) / (g_hi - g_lo)  # root of the chord (exact on a linear piece)
