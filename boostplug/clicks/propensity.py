"""Position bias estimated from the click log itself, and inverse-propensity weights.

Under the position-based model a document at position ``k`` is clicked with probability
``theta_k * gamma_{q,d}``: examined with a propensity ``theta_k`` that depends on the position
alone, and clicked when examined with ``gamma_{q,d}``. :func:`estimate_propensity` estimates
``theta_k / theta_1`` (position 1 is 1.0) with a bootstrap interval over sessions, by
``"randomized"`` (result randomisation), ``"em"`` (the position-based model's EM, Wang et al., WSDM
2018: one ``gamma`` per (query, document), from ``theta = gamma = 0.5``), ``"harvest"`` (intervention
harvesting's AllPairs estimator, Agarwal et al., WSDM 2019, by the same EM) or ``"auto"`` (default:
``"randomized"`` when each query's documents are spread over the positions as a random order spreads
them, by a bias-corrected Cramér's V, pooled, at most 0.1; else ``"em"``). What each reads and
assumes: docs/clicks.md, "Estimating position bias". ``"em"`` and ``"harvest"`` need the positions
linked to position 1 by documents shown at both (else a ``ValueError`` naming it).

:func:`ips_weights` gives each log row ``1 / theta_k`` of its position (Joachims et al., WSDM 2017),
clipped at ``clip`` (a rare deep click would otherwise dominate); ``boostplug.clicks.preferences(log,
propensity=...)`` weights every pair by the inverse propensity of its clicked document's position.

Example:
    >>> import numpy as np
    >>> from boostplug import clicks
    >>> from boostplug.data import make_ranking
    >>> data = make_ranking(n_queries=30, docs_per_query=8, seed=0)
    >>> log = clicks.simulate(data, data.y, 4000, top_k=5, presentation="shuffle", seed=0)
    >>> est = clicks.estimate_propensity(log, n_bootstrap=20)
    >>> est.method, est.propensity.round(1).tolist()
    ('randomized', [1.0, 0.5, 0.3, 0.3, 0.2])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._memory import check_fits
from .._validation import check_choice, check_int, check_real, check_rng, show
from .log import ClickLog, Table, _codes, read_log

__all__ = ["METHODS", "Propensity", "estimate_propensity", "ips_weights", "inverse_propensity"]

METHODS = ("auto", "em", "randomized", "harvest")
#: The most bootstrap replicates :func:`estimate_propensity` takes.
MAX_BOOTSTRAP = 1_000_000
#: Cramér's V between document and position up to which "auto" takes the log as randomised.
RANDOMIZED_V = 0.1


@dataclass(eq=False)
class Propensity(Table):
    """Estimated examination propensity per position, relative to position 1.

    Attributes:
        propensity: ``(K,)`` float64, position ``k`` at index ``k - 1`` (``propensity[0] == 1``).
        std_error: bootstrap standard deviation over sessions (NaN without a bootstrap).
        lower, upper: the bootstrap percentile interval at ``level``.
        clicks, impressions: clicks and shown documents at each position behind the estimate.
        method: the method used (``"randomized"``, ``"em"`` or ``"harvest"``).
        level: the interval's level; n_bootstrap: bootstrap replicates.
        iterations: EM iterations of the estimate (0 for ``"randomized"``).
    """

    propensity: NDArray[np.float64]
    std_error: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    clicks: NDArray[np.int64]
    impressions: NDArray[np.int64]
    method: str
    level: float
    n_bootstrap: int
    iterations: int = 0

    @property
    def positions(self) -> NDArray[np.int64]:
        """``1..K``."""
        return np.arange(1, self.propensity.shape[0] + 1)

    def __repr__(self) -> str:
        return (f"Propensity(method={self.method!r}, propensity={np.round(self.propensity, 3).tolist()}, "
                f"n_bootstrap={self.n_bootstrap})")

    def columns(self) -> dict[str, np.ndarray]:
        """The table by column: position, propensity, std_error, lower, upper, clicks, impressions."""
        return {"position": self.positions, "propensity": self.propensity, "std_error": self.std_error,
                "lower": self.lower, "upper": self.upper, "clicks": self.clicks, "impressions": self.impressions}

    def weights(self, position: ArrayLike, *, clicked: ArrayLike | None = None,
                clip: float = 10.0) -> NDArray[np.float64]:
        """:func:`ips_weights` with these propensities."""
        return ips_weights(position, self, clicked=clicked, clip=clip)


def inverse_propensity(propensity: Propensity | ArrayLike, clip: float = 10.0) -> NDArray[np.float64]:
    """``min(1 / propensity_k, clip)`` per position (index ``k - 1``), from a :class:`Propensity`
    or one positive propensity per position."""
    p = propensity.propensity if isinstance(propensity, Propensity) else np.asarray(propensity)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise TypeError(f"propensity must be a Propensity or a 1-d array of numbers, one per position, got "
                        f"{type(propensity).__name__} of dtype {p.dtype} and shape {p.shape}")
    p = p.astype(np.float64)
    bad = np.flatnonzero(~(np.isfinite(p) & (p >= 0)))
    if bad.size:
        raise ValueError(f"propensity must be finite and non-negative; position {int(bad[0]) + 1} has "
                         f"{show(p[bad[0]])}")
    clip = check_real("clip", clip, 1.0, float("inf"), lo_open=False) if clip != float("inf") else clip
    with np.errstate(divide="ignore"):
        return np.minimum(1.0 / p, clip)


def ips_weights(position: ArrayLike, propensity: Propensity | ArrayLike, *, clicked: ArrayLike | None = None,
                clip: float = 10.0) -> NDArray[np.float64]:
    """Inverse-propensity weight of every log row: ``min(1 / propensity[position - 1], clip)``.

    With ``clicked``, only clicked rows get it and the others 1: the form of Joachims et al.
    (WSDM 2017), where each click counts ``1 / theta_k`` times and the documents it is compared
    with count as they are. Pass the result as the per-row weights of clicks as labels
    (LightGBM: ``Dataset(weight=...)``; XGBoost weights whole queries in its ranking objectives,
    so per-row weights there go with a pointwise objective such as ``binary:logistic``).

    Args:
        position: 1-based shown position per row (``log.position``).
        propensity: a :class:`Propensity` or one propensity per position (position 1 first).
        clicked: optional 0/1 per row.
        clip: the largest weight (>= 1; ``float("inf")``: no clipping); 10 by default.
    """
    inv = inverse_propensity(propensity, clip)
    pos = np.asarray(position)
    if pos.dtype.kind not in "iu":
        raise TypeError(f"position must hold integers, got dtype {pos.dtype}")
    pos = pos.astype(np.int64).reshape(-1)
    bad = np.flatnonzero((pos < 1) | (pos > inv.shape[0]))
    if bad.size:
        raise ValueError(f"row {int(bad[0])} has position {int(pos[bad[0]])}, outside the {inv.shape[0]} positions "
                         "of the propensities")
    w = inv[pos - 1]
    if clicked is not None:
        c = np.asarray(clicked).reshape(-1)
        if c.shape != pos.shape:
            raise ValueError(f"clicked has {c.shape[0]} rows but position has {pos.shape[0]}")
        w = np.where(c.astype(bool), w, 1.0)
    return w


@dataclass
class _Cells:
    """The log reduced for estimation: rows (positions <= K) with their session and cell codes."""

    n_pos: int
    pos: NDArray[np.int64]            # 0-based position per row
    clicked: NDArray[np.float64]
    session: NDArray[np.int64]        # bootstrap unit per row
    n_sessions: int
    depth: NDArray[np.int64]          # shown results of the row's impression (up to K), per row
    cell: NDArray[np.int64]           # (query, document, position) cell per row
    cell_pos: NDArray[np.int64]
    cell_qd: NDArray[np.int64]        # (query, document) of each cell, cells sorted by it
    qd_ptr: NDArray[np.int64]         # cells of (query, document) g: qd_ptr[g]:qd_ptr[g+1]
    query_of_qd: NDArray[np.int64]

    def sums(self, w: NDArray[np.float64] | None,
             rows: NDArray[np.bool_] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Clicks and impressions per cell (rows weighted by ``w``, only ``rows`` when given)."""
        n = self.cell_pos.shape[0]
        weight = np.ones(self.pos.shape[0]) if w is None else w
        if rows is not None:
            weight = weight * rows
        return (np.bincount(self.cell, weight * self.clicked, minlength=n),
                np.bincount(self.cell, weight, minlength=n))


def _reduce(log: ClickLog, max_position: int | None) -> _Cells:
    top = int(log.position.max()) if len(log) else 0
    # at least 2: propensities are relative to position 1
    k = top if max_position is None else min(check_int("max_position", max_position, 2, None), top)
    if k < 2:
        raise ValueError(f"the click log shows {top} position(s) per impression; estimating position bias needs "
                         "impressions of at least two results")
    keep = log.position <= k
    if not log.clicked[keep].any():
        raise ValueError("the click log has no clicks (at positions 1.." + str(k) + "): nothing to estimate "
                         "position bias from")
    sizes = np.diff(log.group_ptr)
    depth = np.minimum(np.repeat(sizes, sizes), k)[keep]
    pos = log.position[keep].astype(np.int64) - 1
    q = _codes(np.asarray(log.query)[keep], "query", "query")
    d = _codes(np.asarray(log.doc)[keep], "doc", "doc")
    qd_key = q * (int(d.max()) + 1) + d
    qd_u, qd = np.unique(qd_key, return_inverse=True)
    cells, cell = np.unique(qd.reshape(-1).astype(np.int64) * k + pos, return_inverse=True)
    cell_qd = cells // k
    qd_ptr = np.searchsorted(cell_qd, np.arange(qd_u.shape[0] + 1))
    s = _codes(np.asarray(log.session)[keep], "session", "session")
    return _Cells(k, pos, log.clicked[keep].astype(np.float64), s, int(s.max()) + 1, depth.astype(np.int64),
                  cell.reshape(-1).astype(np.int64), cells % k, cell_qd, qd_ptr, qd_u // (int(d.max()) + 1))


def _association(c: _Cells) -> float:
    """Bias-corrected Cramér's V between document and position within queries, pooled: 0 for a
    random order, 1 for a fixed one."""
    n_cell = np.bincount(c.cell, minlength=c.cell_pos.shape[0]).astype(np.float64)
    n_qd = np.bincount(c.cell_qd, n_cell)
    cell_q = c.query_of_qd[c.cell_qd]
    n_q = int(cell_q.max()) + 1
    qp = cell_q * c.n_pos + c.cell_pos
    n_qp = np.bincount(qp, n_cell, minlength=n_q * c.n_pos)
    total = np.bincount(cell_q, n_cell, minlength=n_q)
    phi = np.bincount(cell_q, n_cell ** 2 / (n_qd[c.cell_qd] * n_qp[qp]), minlength=n_q) - 1.0
    docs = np.bincount(c.query_of_qd, minlength=n_q)
    positions = np.bincount(np.unique(qp) // c.n_pos, minlength=n_q)
    m = np.minimum(docs, positions) - 1
    ok = m > 0
    if not ok.any():
        return 1.0
    chi2 = total[ok] * phi[ok]
    df = (docs[ok] - 1) * (positions[ok] - 1)
    v2 = (chi2 - df).sum() / (total[ok] * m[ok]).sum()
    return float(np.sqrt(max(v2, 0.0)))


def _randomized(c: _Cells, w: NDArray[np.float64] | None) -> NDArray[np.float64]:
    weight = np.ones(c.pos.shape[0]) if w is None else w
    clicks_at = np.bincount(c.pos, weight * c.clicked, minlength=c.n_pos)
    top = c.pos == 0
    by_depth = np.bincount(c.depth[top] - 1, (weight * c.clicked)[top], minlength=c.n_pos)
    first = np.cumsum(by_depth[::-1])[::-1]  # clicks at position 1 of impressions showing >= k results
    with np.errstate(divide="ignore", invalid="ignore"):
        return clicks_at / first


def _linked(n: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Positions linked to position 1 through documents shown at both ends of each link (the
    positions a breadth-first search from position 1 reaches along ``n > 0``)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    seen = np.zeros(n.shape[0], dtype=bool)
    seen[breadth_first_order(csr_matrix(n > 0), 0, return_predecessors=False)] = True
    return seen


_Fit = tuple[NDArray[np.float64], tuple[np.ndarray, np.ndarray], int]


def _fit_pbm(pos: NDArray[np.int64], group: NDArray[np.int64], clicks: NDArray[np.float64],
             trials: NDArray[np.float64], n_pos: int, start: tuple[np.ndarray, np.ndarray] | None,
             max_iter: int, tol: float) -> _Fit:
    """The position-based model's EM over cells from ``start`` (``None``: the neutral 0.5):
    propensities relative to position 1, the fitted ``(theta, gamma)``, the iterations."""
    from . import _em

    theta = np.full(n_pos, 0.5) if start is None else start[0].copy()
    gamma = np.full(int(group.max()) + 1, 0.5) if start is None else start[1].copy()
    it = _em.pbm_em(pos, group, clicks, trials, theta, gamma, max_iter, tol)
    return theta / theta[0] if theta[0] > 0 else np.full(n_pos, np.nan), (theta, gamma), it


def _pair_cells(n_pos: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Every ordered pair of positions ``(k, k')``, ``k != k'``, with its unordered pair's code."""
    k, j = np.nonzero(~np.eye(n_pos, dtype=bool))
    pair = np.minimum(k, j) * n_pos + np.maximum(k, j)
    group = np.unique(pair, return_inverse=True)[1].reshape(-1)
    return k.astype(np.int64), j.astype(np.int64), group.astype(np.int64)


def _check_linked(c: _Cells, rows: NDArray[np.bool_], method: str) -> None:
    from . import _em

    if not rows.any():
        raise ValueError(f"method={method!r}: no (query, document) of the click log was shown at more than one "
                         "position, so the log says nothing about position bias (under a fixed presentation a "
                         "document's relevance and its position's examination cannot be told apart); estimate it "
                         "from randomised traffic, swap interventions or several rankers' logs")
    clicks, trials = c.sums(None, rows)
    _, n = _em.harvest_sums(c.qd_ptr, c.cell_pos, clicks, trials, c.n_pos)
    linked = _linked(n)
    if not linked.all():
        lost = (np.flatnonzero(~linked) + 1).tolist()
        raise ValueError(f"method={method!r}: positions {lost} are not linked to position 1 by documents shown at "
                         "both (directly or through other positions), so their propensities are not identifiable "
                         f"from this log; max_position={int(np.flatnonzero(~linked)[0])} leaves them out when "
                         "they are the deepest")


def estimate_propensity(
    log: Any,
    *,
    method: str = "auto",
    max_position: int | None = None,
    n_bootstrap: int = 200,
    level: float = 0.95,
    seed: int | np.random.Generator | None = 0,
    max_iter: int = 5000,
    tol: float = 1e-7,
) -> Propensity:
    """Examination propensity per position, relative to position 1, from a click log
    (module docstring: the methods and what each assumes).

    Args:
        log: a :class:`~boostplug.clicks.ClickLog`, or anything :func:`~boostplug.clicks.read_log` reads.
        method: ``"auto"`` (default), ``"randomized"``, ``"em"`` or ``"harvest"``.
        max_position: the deepest position to estimate (default: the log's deepest); rows below
            it are left out.
        n_bootstrap: bootstrap replicates over sessions for the uncertainty (0: none, NaN; at most
            :data:`MAX_BOOTSTRAP`).
        level: the percentile interval's level, in (0, 1).
        seed: the bootstrap's seed (an integer >= 0, None or a ``numpy.random.Generator``).
        max_iter, tol: EM stops after ``max_iter`` iterations or when no relative propensity
            moves by more than ``tol`` in one.
    """
    method = check_choice("method", method, METHODS)
    check_int("n_bootstrap", n_bootstrap, 0, None)
    if n_bootstrap > MAX_BOOTSTRAP:
        raise ValueError(f"n_bootstrap must be at most {MAX_BOOTSTRAP:,} (each replicate estimates the propensities "
                         f"again; a percentile interval needs a few thousand), got {show(n_bootstrap)}")
    rng = check_rng(seed)  # before any estimate: a bad seed is refused as one, not by numpy after the work
    level = check_real("level", level, 0.0, 1.0)
    if level >= 1.0:
        raise ValueError(f"level must be below 1, got {show(level)}")
    check_int("max_iter", max_iter, 1, None)
    tol = check_real("tol", tol, 0.0, 1.0)
    if not isinstance(log, ClickLog):
        log = read_log(log)
    c = _reduce(log, max_position)
    if method == "auto":
        method = "randomized" if _association(c) <= RANDOMIZED_V else "em"
    # EM reads the rows whose (query, document) was shown at more than one position
    rows = np.ones(c.pos.shape[0], dtype=bool) if method == "randomized" else (np.diff(c.qd_ptr) > 1)[c.cell_qd[c.cell]]
    if method != "randomized":
        _check_linked(c, rows, method)

    k, j, group = _pair_cells(c.n_pos) if method == "harvest" else (None, None, None)

    def estimate(w: NDArray[np.float64] | None, start: Any) -> _Fit:
        """The propensities of the log weighted by ``w``, the fitted state and the EM's iterations."""
        if method == "randomized":
            return _randomized(c, w), None, 0  # type: ignore[return-value]
        clicks, trials = c.sums(w, rows)
        if method == "em":
            return _fit_pbm(c.cell_pos, c.cell_qd, clicks, trials, c.n_pos, start, int(max_iter), tol)
        from . import _em

        harvested, n = _em.harvest_sums(c.qd_ptr, c.cell_pos, clicks, trials, c.n_pos)
        return _fit_pbm(k, group, harvested[k, j], n[k, j], c.n_pos, start, int(max_iter), tol)

    point, state, iterations = estimate(None, None)
    if not np.isfinite(point).all():
        raise ValueError(f"method={method!r}: no clicks at position 1 among the documents behind the estimate; "
                         "propensities relative to position 1 are undefined")
    check_fits(int(n_bootstrap) * c.n_pos * 8, f"n_bootstrap={int(n_bootstrap)} replicates of {c.n_pos} positions",
               "use fewer replicates")
    boot = np.full((int(n_bootstrap), c.n_pos), np.nan)
    for b in range(int(n_bootstrap)):
        per_session = rng.multinomial(c.n_sessions, np.full(c.n_sessions, 1.0 / c.n_sessions)).astype(np.float64)
        boot[b] = estimate(per_session[c.session], state)[0]
    nan = np.full(c.n_pos, np.nan)
    if n_bootstrap:
        with np.errstate(invalid="ignore"):
            std = np.nanstd(boot, axis=0, ddof=1) if n_bootstrap > 1 else nan
        lower, upper = np.nanquantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=0)
    else:
        std, lower, upper = nan, nan.copy(), nan.copy()
    shown = np.bincount(c.pos[rows], minlength=c.n_pos)
    clicked = np.bincount(c.pos[rows], c.clicked[rows], minlength=c.n_pos).astype(np.int64)
    return Propensity(point, std, lower, upper, clicked, shown.astype(np.int64), method, level, int(n_bootstrap),
                      iterations)
