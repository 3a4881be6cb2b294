"""The contract checks: what every objective promises (``boostplug/objectives/_contract.py``),
each a function of one :class:`~boostplug.testing.Case` (or of one registry entry), and
:func:`check_objective`, which runs them all."""

from __future__ import annotations

import contextlib
import math
import operator
import re
import sys
import unittest
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

from .._core.class_kernels import bounds_checking
from .._validation import did_you_mean
from ..objectives import HessianFloorWarning, Loss, Objective, floor_hessian, floor_values
from ..objectives._contract import NonFiniteError
from ._adapters import check_lightgbm_adapter, check_xgboost_adapter
from ._cases import Case, cases, contract_data, extreme_inputs, fd_gradient, fd_jacobian, given, multi_label_queries, \
    registered, resolve

__all__ = ["Check", "CheckResult", "ContractError", "CHECKS", "assert_bound_majorises", "assert_exact_diagonal",
           "check_objective", "objective_checks"]

Subject = Case | Objective


class ContractError(AssertionError):
    """An objective broke its contract: the message names the check, the objective, the Hessian
    mode and settings, and what failed (``check``: the check's name; ``subject``: the
    :class:`Case` or registry entry it ran on)."""

    def __init__(self, message: str, *, check: str, subject: Subject) -> None:
        super().__init__(message)
        self.check = check
        self.subject = subject


def _require(condition: Any, message: str) -> None:
    """``AssertionError(message)`` unless ``condition`` (an ``assert`` that ``python -O`` keeps)."""
    if not condition:
        raise AssertionError(message)


def _raises(error: type[Exception], pattern: str, call: Callable[..., Any], *args: Any) -> None:
    """``call(*args)`` raises ``error`` with a message matching ``pattern`` (``re.search``)."""
    try:
        call(*args)
    except error as e:
        _require(re.search(pattern, str(e)), f"{type(e).__name__} message {str(e)!r} does not match {pattern!r}")
        return
    raise AssertionError(f"no {error.__name__} matching {pattern!r}")


#: Units in the last place (of a query's largest value) a query's gradients and Hessians alone may differ by.
SUM_ULPS = 32


def _scale(values: np.ndarray) -> float:
    return max(1.0, float(np.abs(values).max(initial=0.0)))


# ---- what a Hessian mode's kind promises ------------------------------------------------------------------
def assert_exact_diagonal(g: np.ndarray, h: np.ndarray, diag: np.ndarray, *, rtol: float = 1e-6,
                          atol: float = 1e-8, floor: bool = True) -> None:
    """``h`` (as ``grad_hess`` returns it) is ``diag`` (the loss's Hessian diagonal), floored when
    ``floor`` is on: :data:`HESSIAN_FLOOR` where it is below, :data:`NO_INFO_HESSIAN` for a document
    the loss does not involve (zero gradient and curvature); without the floor, exactly ``diag``."""
    smallest, no_info = floor_values(floor)
    np.testing.assert_allclose(h, floor_hessian(g, diag, floor), rtol=rtol, atol=atol,
                               err_msg="the 'exact' Hessian is not the (floored) derivative of the gradient")
    if floor:
        np.testing.assert_array_equal(h[diag < -atol], smallest, err_msg="a negative curvature is not floored")
    np.testing.assert_array_equal(h[(g == 0.0) & (diag == 0.0)], no_info,
                                  err_msg="a document without any term does not get NO_INFO_HESSIAN (0 without the "
                                          "floor)")


def assert_bound_majorises(bound: np.ndarray, hessian: np.ndarray, *, tol: float) -> None:
    """``bound`` >= |diagonal of ``hessian``| and ``diag(bound) - hessian`` is positive
    semi-definite: a Newton step on any leaf partition stays under the quadratic upper bound."""
    short = np.flatnonzero(bound < np.abs(np.diag(hessian)) - tol)
    _require(short.size == 0, "the 'bound' Hessian is below |the Hessian's diagonal| at rows "
                              f"{short.tolist()}: {bound[short].tolist()} < {np.abs(np.diag(hessian))[short].tolist()}")
    gap = np.diag(bound) - 0.5 * (hessian + hessian.T)
    smallest = float(np.linalg.eigvalsh(gap).min())
    _require(smallest >= -tol, f"diag(bound) - Hessian is not positive semi-definite (smallest eigenvalue "
                               f"{smallest:.3g}): the 'bound' Hessian does not majorise the loss's Hessian")


# ---- the checks of one case -------------------------------------------------------------------------------
def _held(case: Case, prep: Loss, at: np.ndarray, method: str) -> Callable[[np.ndarray], Any]:
    """``prep``'s ``method`` (``"loss"`` or ``"grad_hess"``) of the scores, with the pair weights of a
    ``"lambda"`` gradient held at those of ``at``; of any other kind, the method itself (of an
    objective that draws at random, in the current round)."""
    if case.gradient != "lambda":
        if method == "grad_hess" and prep.random_draws:  # the round's own draws: grad_hess would start a round
            return prep._grad_hess
        return getattr(prep, method)
    return lambda s: getattr(prep, method)(s, weights_at=at)


def check_gradient(case: Case) -> None:
    """A gradient the mode declares ``"exact"`` is the five-point derivative of the loss, whatever
    the Hessian's kind, and one it declares ``"lambda"`` that of the loss with its pair weights
    held (both to the mode's declared ``tolerance``, if any); one it declares ``"scaled"`` (a
    positive per-document rescaling) points where the derivative does: the same signs, zero
    where it is zero, a descent direction."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, h = prep.grad_hess(d.scores)
    fd = fd_gradient(_held(case, prep, d.scores, "loss"), d.scores)
    _require(np.abs(fd).max() > 0, "the loss is flat at the check's data: nothing to compare the gradient with")
    if case.gradient in ("exact", "lambda"):
        held = " with its pair weights held" if case.gradient == "lambda" else ""
        np.testing.assert_allclose(g, fd, rtol=max(1e-7, case.tolerance), atol=max(1e-9, case.tolerance) * _scale(fd),
                                   err_msg=f"the gradient (declared {case.gradient}) is not the five-point derivative "
                                           f"of the loss{held}")
        return
    if case.gradient == "newton":
        _check_newton_step(prep, g, h, fd)
        return
    moving = np.abs(fd) > 1e-6 * _scale(fd)
    _require(moving.any(), "the loss is flat at the check's data")
    wrong = np.flatnonzero(moving & (np.sign(g) != np.sign(fd)))
    _require(wrong.size == 0, f"the scaled gradient's sign differs from the derivative's at rows {wrong.tolist()}: "
                              f"grad {g[wrong].tolist()}, derivative {fd[wrong].tolist()}")
    np.testing.assert_array_equal(g[fd == 0.0], 0.0, err_msg="the scaled gradient is not 0 where the derivative is")
    _require(float(g @ fd) > 0.0, "the scaled gradient is not a descent direction (grad . derivative <= 0)")


def _check_newton_step(prep: Loss, g: np.ndarray, h: np.ndarray, fd: np.ndarray) -> None:
    """A ``"newton"`` gradient (the Hessian's diagonal times an approximate Newton step): zero
    where the query's derivative is, and in each query ``-grad / hess`` descends the loss."""
    ptr = prep.group_ptr
    for q, (a, b) in enumerate(zip(ptr[:-1], ptr[1:])):
        fq, gq, hq = fd[a:b], g[a:b], h[a:b]
        if not np.any(np.abs(fq) > 1e-9 * _scale(fd)):
            np.testing.assert_array_equal(gq, 0.0, err_msg=f"query {q}: the newton gradient is not 0 where the "
                                                           "derivative is")
            continue
        _require(np.all(hq > 0.0), f"query {q}: a newton gradient needs positive Hessians, got {hq.tolist()}")
        _require(float(fq @ (gq / hq)) > 0.0, f"query {q}: -grad / hess does not descend the loss (derivative "
                                              f"{fq.tolist()}, grad {gq.tolist()}, hess {hq.tolist()})")


def _require_returned_diagonal(g: np.ndarray, returned: np.ndarray, diag: np.ndarray, *, rtol: float,
                               atol: float, floor: bool) -> None:
    """The Hessian the objective returned (before the floor) floors to the floored ``diag``; the
    message shows the returned values, which the floor would hide (a negated curvature shows as
    HESSIAN_FLOOR)."""
    floored, expected = floor_hessian(g, returned, floor), floor_hessian(g, diag, floor)
    wrong = np.flatnonzero(~np.isclose(floored, expected, rtol=rtol, atol=atol))
    _require(wrong.size == 0, "the 'exact' Hessian is not the (floored) derivative of the gradient at rows "
                              f"{wrong[:5].tolist()}: the objective returned {returned[wrong[:5]].tolist()} where "
                              f"the derivative of its gradient is {diag[wrong[:5]].tolist()}"
                              + (f" ({wrong.size} rows in all)" if wrong.size > 5 else ""))


def _floor(prep: Loss) -> tuple[bool, float, str]:
    """Whether ``prep`` floors its Hessians, the smallest Hessian it may return, and its name."""
    on = bool(prep.hessian_floor)
    return on, floor_values(on)[0], "HESSIAN_FLOOR" if on else "-inf (hessian_floor=False)"


def _refuse_negative_default(case: Case, raw: np.ndarray, tol: float) -> None:
    """A default mode that declares an ``"exact"`` Hessian and returns negative ones: a Newton leaf
    ``-G / H`` steps uphill there, and the floor turns them into a step of ``-G / HESSIAN_FLOOR``."""
    cls = case.entry.loss_class
    default = cls.default_hessian or next(iter(cls.hessians))
    negative = np.flatnonzero(raw < -tol)
    _require(case.mode != default or not negative.size,
             f"the default Hessian mode {case.mode!r} declares the 'exact' diagonal, which is negative at rows "
             f"{negative[:5].tolist()} (smallest {float(raw.min()):.3g}): a Newton leaf -G / H steps uphill there, "
             "and with the Hessian floor on it becomes -G / 1e-6. Declare a positive surrogate as the default mode "
             "(Hessian('bound', ...), a diagonal that majorises the Hessian, or Hessian('fitting', ...)) and keep "
             "the exact one as a mode to choose")


def check_hessian(case: Case) -> None:
    """Every Hessian is finite and >= HESSIAN_FLOOR (any value with ``hessian_floor=False``); an
    ``"exact"`` one is the derivative of the gradient (floored when the floor is on) and, in the
    default mode, not negative; a ``"bound"`` one majorises the finite-difference Hessian matrix
    (diagonal and matrix); a ``"fitting"`` one promises nothing more."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, h = prep.grad_hess(d.scores)
    floor, smallest, what = _floor(prep)
    _require(np.isfinite(h).all() and np.all(h >= smallest), f"a Hessian is below {what}: {h.tolist()}")
    if case.kind == "fitting":
        return
    gradient = _held(case, prep, d.scores, "grad_hess")
    J = fd_jacobian(lambda s: gradient(s)[0], d.scores)
    tol = max(1e-9, case.tolerance) * _scale(J)
    rtol = max(1e-7, case.tolerance)
    np.testing.assert_allclose(J, J.T, atol=tol, err_msg="the gradient's Jacobian is not symmetric: the gradient "
                                                          "is not the derivative of one loss")
    if case.kind == "exact":
        raw = prep._grad_hess(d.scores)[1]
        _require_returned_diagonal(g, raw, np.diag(J), rtol=rtol, atol=tol, floor=floor)
        assert_exact_diagonal(g, h, np.diag(J), rtol=rtol, atol=tol, floor=floor)
        _refuse_negative_default(case, raw, tol)
    else:
        assert_bound_majorises(h, J, tol=tol)


def check_shift_invariance(case: Case) -> None:
    """A constant added to a query's scores changes nothing (loss, gradients, Hessians), so an
    exact gradient sums to zero over each query. Queries with one grade are left alone (nothing to
    rank: they may anchor scores), and only configurations are checked (parameters may anchor
    scores on purpose: QBRank's ``labeled="all"``)."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    loss, (g, h) = prep.loss(d.scores), prep.grad_hess(d.scores)
    moved = d.scores.copy()
    ranked = multi_label_queries(d.labels, d.group_ptr)
    for k, q in enumerate(ranked):
        moved[d.group_ptr[q]:d.group_ptr[q + 1]] += 12.375 * (-1) ** k * (k + 1)
    np.testing.assert_allclose(prep.loss(moved), loss, rtol=1e-12, atol=1e-15,
                               err_msg="adding a constant to a query's scores changes the loss")
    # a new round of an objective that draws at random would draw anew: it is bound afresh
    g2, h2 = (case.prepare(d.labels, d.group_ptr, d.weights) if prep.random_draws else prep).grad_hess(moved)
    np.testing.assert_allclose(g2, g, rtol=1e-11, atol=1e-14 * _scale(g),
                               err_msg="adding a constant to a query's scores changes the gradient")
    np.testing.assert_allclose(h2, h, rtol=1e-11, atol=1e-14 * _scale(h),
                               err_msg="adding a constant to a query's scores changes the Hessian")
    if case.gradient in ("exact", "lambda"):  # d/dc loss(s + c on query q) = sum of q's gradients = 0
        for q in ranked:
            gq = g[d.group_ptr[q]:d.group_ptr[q + 1]]
            _require(abs(gq.sum()) <= 1e-14 + max(1e-13, case.tolerance) * np.abs(gq).sum(),
                     f"query {q}'s gradients sum to {gq.sum()!r}, not 0: {gq.tolist()}")
        _require(np.abs(g).max() > 0, "every gradient is 0 at the check's data")


def check_query_weights(case: Case) -> None:
    """A query's weight scales its loss, gradients and Hessians (before the floor); a query of
    weight 0 gives the frameworks no information (gradient 0, Hessian NO_INFO_HESSIAN, or 0
    without the floor)."""
    d = contract_data()
    w = d.weights.copy()
    w[2] = 0.0
    ones = case.prepare(d.labels, d.group_ptr)
    weighted = case.prepare(d.labels, d.group_ptr, w)
    per_doc = np.repeat(w, np.diff(d.group_ptr))
    g1, h1 = ones._grad_hess(d.scores)  # before the floor: the floor does not scale
    gw, hw = weighted._grad_hess(d.scores)
    np.testing.assert_allclose(gw, per_doc * g1, rtol=1e-13, atol=1e-16,
                               err_msg="the gradient is not the query's weight times the unweighted one")
    np.testing.assert_allclose(hw, per_doc * h1, rtol=1e-13, atol=1e-16,
                               err_msg="the Hessian is not the query's weight times the unweighted one")
    alone = np.eye(len(w))
    per_query = [case.prepare(d.labels, d.group_ptr, alone[q]).loss(d.scores) for q in range(len(w))]
    np.testing.assert_allclose(weighted.loss(d.scores), float(np.dot(w, per_query)), rtol=1e-13, atol=1e-16,
                               err_msg="the loss is not the weighted sum of the queries' losses")
    g0, h0 = weighted.grad_hess(d.scores)
    np.testing.assert_array_equal(g0[per_doc == 0], 0.0, err_msg="a query of weight 0 has a non-zero gradient")
    np.testing.assert_array_equal(h0[per_doc == 0], floor_values(weighted.hessian_floor)[1],
                                  err_msg="a query of weight 0 does not get NO_INFO_HESSIAN (0 without the floor)")


def check_sum_over_queries(case: Case) -> None:
    """The loss is a sum over queries, and each query's gradients and Hessians are those of the
    query alone (of an objective that draws at random, whose draws for a query alone are other
    numbers: those with the other queries weighted 0, which give nothing), to ``SUM_ULPS`` ulps (a ``JaxLoss``
    compiles a batch of one query apart); a query that cannot be fitted alone (a ``ValueError``) adds nothing."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, h = prep.grad_hess(d.scores)
    alone_is = "with the other queries weighted 0" if prep.random_draws else "of it alone"
    total = 0.0
    for q, (a, b) in enumerate(zip(d.group_ptr[:-1], d.group_ptr[1:])):
        if prep.random_draws:
            alone, scores, rows = case.prepare(d.labels, d.group_ptr, d.weights * (np.arange(len(d.weights)) == q)), \
                d.scores, slice(a, b)
        else:
            try:
                alone = case.prepare(d.labels[a:b], np.array([0, b - a]), d.weights[q:q + 1])
            except ValueError:  # nothing to fit in this query alone: then it adds nothing to the whole
                np.testing.assert_array_equal(g[a:b], 0.0, err_msg=f"query {q} cannot be fitted alone but has "
                                                                   "gradients")
                np.testing.assert_array_equal(h[a:b], floor_values(prep.hessian_floor)[1],
                                              err_msg=f"query {q} cannot be fitted alone but has Hessians")
                continue
            scores, rows = d.scores[a:b], slice(None)
        total += alone.loss(scores)
        for mine, whole, what in zip(alone.grad_hess(scores), (g, h), ("gradients", "Hessians")):
            np.testing.assert_allclose(mine[rows], whole[a:b], rtol=0.0, atol=SUM_ULPS * 2.0**-52 * np.abs(
                whole[a:b]).max(initial=0.0), err_msg=f"query {q}'s {what} differ from those {alone_is}")
    np.testing.assert_allclose(prep.loss(d.scores), total, rtol=1e-13, atol=1e-15,
                               err_msg="the loss is not the sum of the queries' losses")


#: How far a JaxLoss's gradient in its batch may be from ``jax.grad`` of the query alone: a fraction of the data's
#: largest gradient (the catalogue's differ by about 1e-15: the batch and the query alone are compiled apart).
ALONE_TOLERANCE = 1e-9


def check_batch_against_query(case: Case) -> None:
    """A ``JaxLoss``: each query's gradient from its batch (``jax.grad`` inside the batch's ``jit(lax.map)``, the
    query padded to its bucket) is ``jax.grad`` of ``query_loss`` on the query alone, unpadded, with the same key,
    times its weight, to ``ALONE_TOLERANCE`` of the largest gradient: on queries of up to 20 documents (several
    buckets beyond the shortest, of 8) and every query with two labels or more (the padding of each checked)."""
    import jax

    from ..autodiff._jax import float64
    from ..autodiff.loss import JaxLoss

    d = contract_data(seed=5, n_queries=8, max_docs=20)
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    if not isinstance(prep, JaxLoss):
        return
    g, _ = prep.grad_hess(d.scores)
    keys, cls, args = prep._keys(), type(prep), [prep.settings[k] for k in type(prep).params]
    for q, (a, b) in enumerate(zip(d.group_ptr[:-1], d.group_ptr[1:])):
        if b - a < 2:
            continue
        key = {"key": jax.random.wrap_key_data(keys[q], impl="threefry2x32")} if cls._keyed else {}
        with float64():
            alone = np.asarray(jax.grad(lambda s: cls.query_loss(s, d.labels[a:b], np.ones(b - a, bool), *args, **key))(
                d.scores[a:b]))
        np.testing.assert_allclose(g[a:b], d.weights[q] * alone, rtol=0.0, atol=ALONE_TOLERANCE * _scale(g),
                                   err_msg=f"query {q} ({b - a} documents, padded in its batch): the batch's gradient "
                                           "differs from jax.grad of query_loss on the query alone")


def check_serial_parallel(case: Case) -> None:
    """One numba thread and two give identical gradients and Hessians (and loss). An objective
    whose module runs its kernels through boostplug's dispatch is also forced onto its serial and
    its parallel kernels (the check sets the dispatch threshold and numba's thread count for its
    duration, so it must not run beside other numba work in the process)."""
    import numba

    from .._core import dispatch

    if numba.config.NUMBA_NUM_THREADS < 2:
        raise unittest.SkipTest("numba has one thread: the parallel kernels never run")
    module = sys.modules.get(case.entry.loss_class.__module__)  # the class's own module, however it was loaded
    uses_dispatch = getattr(module, "dispatch", None) is dispatch
    d = contract_data(seed=7, n_queries=40, max_docs=12, ties=True)
    chosen: list[bool] = []
    kernel_for, threshold, threads = dispatch.kernel_for, dispatch.PARALLEL_MIN_WORK, numba.get_num_threads()

    def spy(kernel: Any, work: Any) -> Any:
        run = kernel_for(kernel, work)
        chosen.append(bool(run.targetoptions.get("parallel")))
        return run

    results = {}
    try:
        dispatch.kernel_for = spy
        for n_threads, min_work in ((1, 10**15), (2, 0)):
            numba.set_num_threads(n_threads)
            dispatch.PARALLEL_MIN_WORK = min_work
            chosen.clear()
            prep = case.prepare(d.labels, d.group_ptr)
            g, h = prep.grad_hess(d.scores)
            results[n_threads] = (g, h, prep.loss(d.scores), set(chosen))
    finally:
        dispatch.kernel_for, dispatch.PARALLEL_MIN_WORK = kernel_for, threshold
        numba.set_num_threads(threads)
    (g1, h1, loss1, serial), (g2, h2, loss2, parallel) = results[1], results[2]
    if uses_dispatch:  # every dispatched kernel forced each way (a setting may run none: then neither run does)
        _require((serial, parallel) in (({False}, {True}), (set(), set())),
                 f"the dispatch ran parallel kernels {sorted(serial)} serially and {sorted(parallel)} in parallel")
    np.testing.assert_array_equal(g2, g1, err_msg="the gradients differ between one and two numba threads")
    np.testing.assert_array_equal(h2, h1, err_msg="the Hessians differ between one and two numba threads")
    # boostplug's dispatch sums each query's loss in a fixed order; a prange reduction may not
    np.testing.assert_allclose(loss2, loss1, rtol=0.0 if uses_dispatch else 1e-12,
                               err_msg="the loss differs between one and two numba threads")
    _require(np.any(g1 != 0.0), "every gradient is 0 at the check's data")


def check_extreme_inputs(case: Case) -> None:
    """Extreme scores (up to +-1.7e308, huge gaps) and degenerate queries give finite gradients,
    Hessians >= HESSIAN_FLOOR (with the floor on) and a finite loss, or a ``ValueError`` naming the
    objective; an overflow refused by ``loss``/``grad_hess`` must be one of the data or a value
    beyond float32 (the objective's own NaN or inf from moderate inputs is a bug), and the loss may
    overflow to inf but never be NaN."""
    names = (case.name, case.entry.loss_class.name)
    for what, scores, labels, group_ptr, weights in extreme_inputs():
        try:
            with np.errstate(all="ignore"):  # the inputs are meant to overflow: judge the results, not warnings
                prep = case.prepare(labels, group_ptr, weights)
                g, h = prep.grad_hess(scores)
                prep.loss(scores)
        except NonFiniteError as e:
            _require(e.cause in ("data", "float32"), f"at {what}: {e}")
            _require(not (e.method == "loss" and math.isnan(e.value)),
                     f"at {what}: the loss is NaN (0 * inf or inf - inf inside the objective); where it exceeds "
                     f"float64 it must come out inf (refused as an overflow), else finite: {e}")
            continue
        except ValueError as e:
            _require(any(n in str(e) for n in names), f"at {what}: a ValueError not naming the objective: {e}")
            continue
        _require(np.isfinite(g).all() and np.isfinite(h).all() and np.all(h >= _floor(prep)[1]),
                 f"at {what}: grad_hess returned non-finite values or a Hessian below the floor")


# ---- the checks of one objective --------------------------------------------------------------------------
def check_parameters(entry: Objective) -> None:
    """``check`` takes the defaults and each Hessian mode, and refuses an unknown parameter
    naming the objective, with a "did you mean" for a misspelt one."""
    _require(entry.check({}) is None and entry.check(dict(entry.defaults)) is None, "check refuses the defaults")
    for mode in entry.hessian_kinds:
        if "hessian" in entry.defaults:
            entry.check({"hessian": mode})
    name = re.escape(entry.loss_class.name)
    _raises(ValueError, rf"unknown parameter.*'zzz_unknown'.*objective '{name}'", entry.check, {"zzz_unknown": 1})
    for param in entry.defaults:
        typo = param + param[-1]
        _raises(ValueError, rf"unknown parameter.*'{re.escape(typo)}'.*did you mean '{re.escape(param)}'",
                entry.check, {typo: entry.defaults[param]})


def check_bad_data(entry: Objective) -> None:
    """Bad scores (non-finite, wrong length), labels, groups and weights are a ``ValueError``
    naming the row and the value."""
    y, gp = np.array([1.0, 0.0, 2.0, 0.0]), np.array([0, 2, 4])
    prep = entry.prepare(y, gp)
    name = re.escape(entry.loss_class.name)
    for method in (prep.loss, prep.grad_hess):
        for row, bad in ((1, np.nan), (2, np.inf), (0, -np.inf)):
            scores = np.zeros(4)
            scores[row] = bad
            _raises(ValueError, rf"scores must be finite; row {row} has {bad}", method, scores)
        _raises(ValueError, rf"{name}: got 3 scores for a data set of 4 documents", method, np.zeros(3))
    _raises(ValueError, r"weights \(one per query\) has length 3 but 2 were expected",
            lambda: entry.prepare(y, gp, weights=[1.0, 1.0, 1.0]))
    for bad in (-1.0, np.nan, np.inf):
        _raises(ValueError, rf"weights \(one per query\) must be finite and non-negative; row 1 has {bad}",
                lambda: entry.prepare(y, gp, weights=[1.0, bad]))
    _raises(ValueError, r"labels must be non-negative relevance grades; row 1 has -1.0",
            entry.prepare, [1.0, -1.0, 0.0, 0.0], gp)
    _raises(ValueError, "labels must be finite; row 1 has nan", entry.prepare, [1.0, np.nan, 0.0, 0.0], gp)
    _raises(ValueError, r"group_ptr ends at 4 but there are 5 documents", entry.prepare, np.zeros(5), gp)
    _raises(ValueError, r"group_ptr ends at 2 but there are 4 documents", entry.prepare, y, [0, 2])


# ---- running them -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """One contract check: ``check(subject)`` runs it on a :class:`Case` (``per="case"``) or on a
    registry entry (``per="objective"``), with the objective registered for the duration and, unless
    ``in_bounds`` is false, the pair and listwise bases' loops and the class's functions compiled with
    numba's bounds checking (an index out of their arrays is an ``IndexError`` naming the function,
    not a crash: :func:`boostplug._core.class_kernels.bounds_checking`);
    a failure or an unexpected exception is a :class:`ContractError` naming the check, the
    objective, the mode and the settings; a check that cannot run raises ``unittest.SkipTest``
    (pytest reports it as skipped)."""

    name: str
    function: Callable[[Any], None]
    per: str = "case"
    applies: Callable[[Case], bool] = lambda case: True
    in_bounds: bool = True

    @property
    def doc(self) -> str:
        """What the check checks (its function's docstring)."""
        return " ".join((self.function.__doc__ or "").split())

    def __call__(self, subject: Subject) -> None:
        entry = subject.entry if isinstance(subject, Case) else subject
        # the checks bind objectives to extreme data and settings on purpose: the floor's advice is
        # for training, not for them (check_hessian judges what the floor does itself)
        checking = bounds_checking() if self.in_bounds else contextlib.nullcontext()
        with registered(entry), warnings.catch_warnings(), checking:
            warnings.simplefilter("ignore", HessianFloorWarning)
            try:
                self.function(subject)
            except (unittest.SkipTest, ContractError):
                raise
            except Exception as e:
                where = subject.describe() if isinstance(subject, Case) else f"objective {entry.name!r}"
                what = str(e).strip() if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
                raise ContractError(f"contract check {self.name!r} failed for {where}: {what}", check=self.name,
                                    subject=subject) from e

    def __repr__(self) -> str:
        return f"Check({self.name!r})"


_CONFIGURATION = operator.attrgetter("configuration")  # the checks run on the registry's configurations only

#: Every contract check, by name, in the order they run.
CHECKS: dict[str, Check] = {c.name: c for c in (
    Check("gradient", check_gradient),
    Check("hessian", check_hessian),
    Check("shift_invariance", check_shift_invariance,  # of the configurations of a loss that declares it
          applies=lambda case: case.configuration and case.entry.loss_class.shift_invariant),
    Check("query_weights", check_query_weights),
    Check("sum_over_queries", check_sum_over_queries),
    Check("batch_against_query", check_batch_against_query),  # a JaxLoss's (the others: nothing to check)
    Check("serial_parallel", check_serial_parallel, in_bounds=False),  # bounds-checked loops run serially
    Check("extreme_inputs", check_extreme_inputs),
    Check("lightgbm_adapter", check_lightgbm_adapter, applies=_CONFIGURATION),
    Check("xgboost_adapter", check_xgboost_adapter, applies=_CONFIGURATION),
    Check("parameters", check_parameters, per="objective"),
    Check("bad_data", check_bad_data, per="objective"),
)}


def _chosen_checks(checks: Sequence[str] | None) -> list[Check]:
    if checks is None:
        return list(CHECKS.values())
    if isinstance(checks, str):
        raise TypeError(f"checks must be a list of check names, got the string {checks!r}")
    for name in checks:
        if name not in CHECKS:
            hint = did_you_mean(name, CHECKS, quote=True)
            raise ValueError(f"unknown check {name!r}; {hint}{' ' if hint else ''}the checks are {list(CHECKS)}")
    return [CHECKS[n] for n in checks]


def _instance_settings(objective: Any, entry: Objective) -> dict[str, Any] | None:
    """An instance's settings, to check it with (its row-index parameters are the checks' own);
    ``None`` for a name, class or entry."""
    if not isinstance(objective, Loss):
        return None
    return {k: v for k, v in objective.settings.items() if k not in entry.row_params and k not in entry.fixed}


def objective_checks(objective: str | type[Loss] | Loss | Objective, *,
                     params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
                     checks: Sequence[str] | None = None) -> list[tuple[Subject, Check]]:
    """``(subject, check)`` for every check of ``objective`` (a registered name, a
    :class:`~boostplug.objectives.Loss` subclass or instance, or a registry entry): the per-case
    checks on each of its :func:`cases` they apply to, then the per-objective ones on its registry
    entry. ``params`` and ``checks`` as in :func:`check_objective`."""
    chosen = _chosen_checks(checks)
    entry = resolve(objective)
    if params is None:
        params = _instance_settings(objective, entry)
    found = cases(entry, params=params)
    per_case: list[tuple[Subject, Check]] = [(case, c) for c in chosen if c.per == "case"
                                             for case in found if c.applies(case)]
    return per_case + [(entry, c) for c in chosen if c.per == "objective"]


class CheckResult(NamedTuple):
    """One check that :func:`check_objective` ran: ``check``'s name, the ``subject``'s id (a
    case's, or the objective's name) and, when it could not run, why (``skipped``)."""

    check: str
    subject: str
    skipped: str | None = None


def check_objective(objective: str | type[Loss] | Loss | Objective, *,
                    params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
                    checks: Sequence[str] | None = None, data: Sequence[Any] | None = None) -> list[CheckResult]:
    """Run every contract check on ``objective``; raise :class:`ContractError` (an
    ``AssertionError``) at the first one it fails.

    Args:
        objective: a registered name (``"ranknet"``), a :class:`~boostplug.objectives.Loss`
            subclass (registered for the duration if it is not), an instance of one (checked with
            its settings unless ``params`` says otherwise) or a registry entry.
        params: check these settings (a dict, or a list of dicts; ``hessian`` picks one mode)
            instead of those the registry lists (defaults, ``methods``, the other values of each
            choice or bool parameter, both ends of each search range).
        checks: run only these checks (names from :data:`CHECKS`).
        data: ``(labels, group_ptr)`` or ``(labels, group_ptr, weights)``: the checks' data set instead of
            the built-in one (six queries of at most 7 documents): e.g. queries longer than a loss's
            cutoff, whose pairs beyond it the built-in queries never reach.

    Returns:
        One :class:`CheckResult` per check run, with the reason of each one skipped (a
        framework that is not installed, numba with one thread).

    Example::

        from boostplug.testing import check_objective
        check_objective(RankNet)                      # every Hessian mode x registry settings
        check_objective("ranknet", params={"sigma": 2.0}, checks=["gradient", "hessian"])
    """
    entry = resolve(objective)
    if params is None:
        params = _instance_settings(objective, entry)
    results = []
    with registered(entry), given(data):
        for subject, check in objective_checks(entry, params=params, checks=checks):
            ident = subject.id if isinstance(subject, Case) else subject.name
            try:
                check(subject)
            except unittest.SkipTest as e:
                results.append(CheckResult(check.name, ident, str(e) or "skipped"))
                continue
            results.append(CheckResult(check.name, ident))
    return results
