"""The contract every registered objective follows (boostplug/objectives/_contract.py), checked on
each objective x Hessian mode x settings that the registry lists (tests/_objective_checks.py), so
that an objective registered later is checked with no edit here:

* a gradient the mode declares "exact" is the five-point derivative of the loss, whatever the
  Hessian's kind; one it declares "scaled" points where the derivative does (same signs, descent);
* each Hessian mode keeps its kind's promise: "exact" is the derivative of the gradient, "bound"
  dominates the Hessian (diagonal and matrix), and every Hessian is finite and >= HESSIAN_FLOOR;
* at the registry's configurations a constant added to a query's scores changes nothing, so an
  exact gradient sums to zero over each query;
* per-query weights scale that query's loss, gradients and Hessians; the loss is a sum over queries;
* the serial and the parallel kernels give identical results;
* extreme scores and degenerate queries give finite values or a ValueError naming the objective;
* ``check`` takes the defaults and refuses an unknown parameter with a "did you mean"; bad scores,
  labels, groups and weights are a ValueError naming the row and value;
* the LightGBM and XGBoost adapters hand the frameworks exactly ``grad_hess``, and train a round.

Per-paper references (pure-Python pair loops, the papers' closed forms) stay in the per-paper files.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from _objective_checks import (CASES, CONFIGURATIONS, Case, assert_bound_majorises, assert_exact_diagonal,
                               contract_data, fd_gradient, fd_jacobian, multi_label_queries)
from boostplug import objectives
from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN
from conftest import random_ranking

IDS = [c.id for c in CASES]
EXACT_GRADIENT = [c for c in CASES if c.gradient == "exact"]
SCALED_GRADIENT = [c for c in CASES if c.gradient == "scaled"]
NAMES = objectives.names()


def _scale(values: np.ndarray) -> float:
    return max(1.0, float(np.abs(values).max(initial=0.0)))


# ---- the gradient -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", EXACT_GRADIENT, ids=[c.id for c in EXACT_GRADIENT])
def test_exact_gradient_is_the_derivative_of_the_loss(case: Case) -> None:
    """Every mode whose gradient is declared "exact", whatever its Hessian's kind."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, h = prep.grad_hess(d.scores)
    fd = fd_gradient(prep.loss, d.scores)
    assert np.abs(fd).max() > 0
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9 * _scale(fd))


@pytest.mark.parametrize("case", SCALED_GRADIENT, ids=[c.id for c in SCALED_GRADIENT])
def test_scaled_gradient_points_where_the_derivative_does(case: Case) -> None:
    """A positive per-document rescaling of d loss / d score (the mode's declared ``scaling``):
    the same signs, zero where it is zero, a descent direction."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, _ = prep.grad_hess(d.scores)
    fd = fd_gradient(prep.loss, d.scores)
    tol = 1e-6 * _scale(fd)
    moving = np.abs(fd) > tol
    assert moving.any()
    assert np.all(np.sign(g[moving]) == np.sign(fd[moving])), (g, fd)
    np.testing.assert_array_equal(g[fd == 0.0], 0.0)
    assert float(g @ fd) > 0.0  # a descent direction


# ---- the Hessian modes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hessian_keeps_the_promise_of_its_kind(case: Case) -> None:
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, h = prep.grad_hess(d.scores)
    assert np.isfinite(h).all() and np.all(h >= HESSIAN_FLOOR)
    if case.kind == "fitting":
        return  # the paper's fitting weights promise nothing more
    J = fd_jacobian(lambda s: prep.grad_hess(s)[0], d.scores)
    tol = 1e-9 * _scale(J)
    np.testing.assert_allclose(J, J.T, atol=tol)  # a Hessian: the gradient is a derivative
    if case.kind == "exact":
        assert_exact_diagonal(g, h, np.diag(J), rtol=1e-7, atol=tol)
    else:
        assert case.kind == "bound", case.kind
        assert_bound_majorises(h, J, tol=tol)


# ---- invariances -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CONFIGURATIONS, ids=[c.id for c in CONFIGURATIONS])
def test_a_constant_added_to_a_query_changes_nothing(case: Case) -> None:
    """At the registry's configurations; parameters may anchor scores on purpose (QBRank's
    labeled='all' squared error), and a query with one grade may be anchored (nothing to rank)."""
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    loss, (g, h) = prep.loss(d.scores), prep.grad_hess(d.scores)
    moved = d.scores.copy()
    ranked = multi_label_queries(d.labels, d.group_ptr)
    assert len(ranked) >= 3
    for k, q in enumerate(ranked):
        moved[d.group_ptr[q]:d.group_ptr[q + 1]] += 12.375 * (-1) ** k * (k + 1)
    assert prep.loss(moved) == pytest.approx(loss, rel=1e-12, abs=1e-15)
    g2, h2 = prep.grad_hess(moved)
    np.testing.assert_allclose(g2, g, rtol=1e-11, atol=1e-14 * _scale(g))
    np.testing.assert_allclose(h2, h, rtol=1e-11, atol=1e-14 * _scale(h))
    if case.gradient == "exact":  # d/dc loss(s + c on query q) = sum of q's gradients = 0
        for q in ranked:
            gq = g[d.group_ptr[q]:d.group_ptr[q + 1]]
            assert abs(gq.sum()) <= 1e-14 + 1e-13 * np.abs(gq).sum(), (q, gq)
        assert np.abs(g).max() > 0


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_query_weights_scale_that_query(case: Case) -> None:
    d = contract_data()
    w = d.weights.copy()
    w[2] = 0.0
    ones = case.prepare(d.labels, d.group_ptr)
    weighted = case.prepare(d.labels, d.group_ptr, w)
    per_doc = np.repeat(w, np.diff(d.group_ptr))
    g1, h1 = ones._grad_hess(d.scores)  # before the floor: the floor does not scale
    gw, hw = weighted._grad_hess(d.scores)
    np.testing.assert_allclose(gw, per_doc * g1, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(hw, per_doc * h1, rtol=1e-13, atol=1e-16)
    per_query = [case.prepare(d.labels, d.group_ptr, np.eye(len(w))[q]).loss(d.scores) for q in range(len(w))]
    assert weighted.loss(d.scores) == pytest.approx(float(np.dot(w, per_query)), rel=1e-13, abs=1e-16)
    # a query of weight 0 gives the frameworks no information
    g0, h0 = weighted.grad_hess(d.scores)
    np.testing.assert_array_equal(g0[per_doc == 0], 0.0)
    np.testing.assert_array_equal(h0[per_doc == 0], NO_INFO_HESSIAN)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_loss_is_a_sum_over_queries(case: Case) -> None:
    d = contract_data()
    prep = case.prepare(d.labels, d.group_ptr, d.weights)
    g, h = prep.grad_hess(d.scores)
    total = 0.0
    for q, (a, b) in enumerate(zip(d.group_ptr[:-1], d.group_ptr[1:])):
        try:
            alone = case.prepare(d.labels[a:b], np.array([0, b - a]), d.weights[q:q + 1])
        except ValueError:  # nothing to fit in this query alone: then it adds nothing to the whole
            np.testing.assert_array_equal(g[a:b], 0.0)
            np.testing.assert_array_equal(h[a:b], NO_INFO_HESSIAN)
            continue
        total += alone.loss(d.scores[a:b])
        gq, hq = alone.grad_hess(d.scores[a:b])
        np.testing.assert_array_equal(gq, g[a:b])
        np.testing.assert_array_equal(hq, h[a:b])
    assert prep.loss(d.scores) == pytest.approx(total, rel=1e-13, abs=1e-15)


# ---- serial and parallel kernels -------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_serial_and_parallel_kernels_give_identical_results(case: Case, monkeypatch) -> None:
    """Both paths run the same per-query code: identical gradients, Hessians and loss; the
    dispatch threshold decides which one runs (the parallel one only with more than one numba thread)."""
    import numba

    from boostplug._core import dispatch

    if getattr(case.entry.module, "dispatch", None) is not dispatch:
        pytest.skip(f"{case.name} runs no numba kernels through boostplug._core.dispatch")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread: the parallel kernels never run")
    scores, labels, gp = random_ranking(np.random.default_rng(7), n_queries=40, max_docs=12, n_labels=5)
    chosen: list[bool] = []
    kernel_for = dispatch.kernel_for

    def spy(kernel, work):
        run = kernel_for(kernel, work)
        chosen.append(bool(run.targetoptions.get("parallel")))
        return run

    monkeypatch.setattr(dispatch, "kernel_for", spy)
    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        results = {}
        for threshold in (0, 10**15):
            monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", threshold)
            chosen.clear()
            prep = case.prepare(labels, gp)
            g, h = prep.grad_hess(scores)
            results[threshold] = (g, h, prep.loss(scores), set(chosen))
    finally:
        numba.set_num_threads(previous)
    assert results[0][3] == {True} and results[10**15][3] == {False}
    np.testing.assert_array_equal(results[0][0], results[10**15][0])
    np.testing.assert_array_equal(results[0][1], results[10**15][1])
    assert results[0][2] == results[10**15][2]
    assert np.any(results[0][0] != 0.0)


# ---- extreme scores and degenerate queries ---------------------------------------------------------------
def _extremes():
    d = contract_data()
    signs = np.random.default_rng(5).choice([-1.0, 1.0], size=d.scores.shape[0])
    n = d.scores.shape[0]
    one_each = np.arange(n + 1, dtype=np.int64)
    yield "+-1e300", 1e300 * signs, d.labels, d.group_ptr
    yield "+-1.7e308", 1.7e308 * signs, d.labels, d.group_ptr
    for gap in (1e8, 1e15, 1e150):
        yield f"gaps of {gap:g}", d.scores * gap, d.labels, d.group_ptr
    for c in (0.0, 1e17, 1e300, -1e300):
        yield f"all equal to {c:g}", np.full(n, c), d.labels, d.group_ptr
    yield "one-document queries", d.scores, d.labels, one_each
    yield "one-document queries at +-1e300", 1e300 * signs, d.labels, one_each
    for grade in (0.0, 3.0):
        yield f"every label {grade:g}", d.scores, np.full(n, grade), d.group_ptr
        yield f"every label {grade:g} at +-1e300", 1e300 * signs, np.full(n, grade), d.group_ptr


EXTREMES = [pytest.param(*x[1:], id=x[0]) for x in _extremes()]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("scores,labels,group_ptr", EXTREMES)
def test_extreme_scores_give_finite_values_or_a_clear_error(case: Case, scores, labels, group_ptr) -> None:
    names = (case.name, case.entry.loss_class.name)
    try:
        prep = case.prepare(labels, group_ptr)
        g, h = prep.grad_hess(scores)
        loss = prep.loss(scores)
    except ValueError as e:
        assert any(n in str(e) for n in names), str(e)
        return
    assert np.isfinite(g).all() and np.isfinite(h).all() and np.all(h >= HESSIAN_FLOOR)
    assert not math.isnan(loss)


# ---- parameters -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_check_takes_the_defaults_and_refuses_an_unknown_parameter(name: str) -> None:
    entry = objectives.get(name)
    assert entry.check({}) is None
    assert entry.check(dict(entry.defaults)) is None
    for mode in entry.hessian_kinds:
        if "hessian" in entry.defaults:
            assert entry.check({"hessian": mode}) is None
    with pytest.raises(ValueError, match=rf"unknown parameter.*'zzz_unknown'.*objective '{entry.loss_class.name}'"):
        entry.check({"zzz_unknown": 1})
    for param in entry.defaults:
        typo = param + param[-1]
        with pytest.raises(ValueError, match=rf"unknown parameter.*'{typo}'.*did you mean '{param}'"):
            entry.check({typo: entry.defaults[param]})


@pytest.mark.parametrize("name", NAMES)
def test_bad_data_is_refused_naming_it(name: str) -> None:
    entry = objectives.get(name)
    y, gp = np.array([1.0, 0.0, 2.0, 0.0]), np.array([0, 2, 4])
    prep = entry.prepare(y, gp)
    for method in (prep.loss, prep.grad_hess):
        for row, bad in ((1, np.nan), (2, np.inf), (0, -np.inf)):
            scores = np.zeros(4)
            scores[row] = bad
            with pytest.raises(ValueError, match=rf"scores must be finite; row {row} has {bad}"):
                method(scores)
        with pytest.raises(ValueError, match=rf"{entry.loss_class.name}: got 3 scores for a data set of 4 documents"):
            method(np.zeros(3))
    with pytest.raises(ValueError, match=r"weights \(one per query\) has length 3 but 2 were expected"):
        entry.prepare(y, gp, weights=[1.0, 1.0, 1.0])
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=rf"weights \(one per query\) must be finite and non-negative; row 1 has {bad}"):
            entry.prepare(y, gp, weights=[1.0, bad])
    with pytest.raises(ValueError, match=r"labels must be non-negative relevance grades; row 1 has -1.0"):
        entry.prepare([1.0, -1.0, 0.0, 0.0], gp)
    with pytest.raises(ValueError, match="labels must be finite; row 1 has nan"):
        entry.prepare([1.0, np.nan, 0.0, 0.0], gp)
    with pytest.raises(ValueError, match=r"group_ptr ends at 4 but there are 5 documents"):
        entry.prepare(np.zeros(5), gp)
    with pytest.raises(ValueError, match=r"group_ptr ends at 2 but there are 4 documents"):
        entry.prepare(y, [0, 2])


# ---- the framework adapters ------------------------------------------------------------------------------
def _spy(objective):
    """``objective`` recording what the framework gave it and what it returned (a function, not
    an object: lgb.train deep-copies its params)."""
    calls: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def spy(preds, train_set):
        g, h = objective(preds, train_set)
        calls.append((np.array(preds, dtype=np.float64), g, h))
        return g, h

    return spy, calls


def _assert_adapter_hands_grad_hess(case: Case, objective, calls, train_set, start: np.ndarray) -> None:
    """One round: the framework started from ``start`` and got ``grad_hess`` there; called
    directly on the same set at other scores, the adapter gives ``grad_hess`` too."""
    d = contract_data()
    ref = case.prepare(d.labels, d.group_ptr, d.weights)
    (preds, g, h), = calls
    np.testing.assert_array_equal(preds, start)
    for scores, (g, h) in ((preds, (g, h)), (d.scores, objective(d.scores, train_set))):
        g_ref, h_ref = ref.grad_hess(scores)
        np.testing.assert_array_equal(g, g_ref)
        np.testing.assert_array_equal(h, h_ref)


@pytest.mark.parametrize("case", CONFIGURATIONS, ids=[c.id for c in CONFIGURATIONS])
def test_lightgbm_adapter_hands_lightgbm_grad_hess(case: Case) -> None:
    lgb = pytest.importorskip("lightgbm")
    from boostplug import lightgbm as bpl

    d = contract_data()
    init = np.random.default_rng(1).normal(size=d.scores.shape[0])
    obj = bpl.objective(case.name, **case.params(d.labels, d.group_ptr))
    spy, calls = _spy(obj)
    ds = bpl.dataset(d.X, d.labels, group_ptr=d.group_ptr, weight=d.weights, init_score=init)
    lgb.train({"objective": spy, "verbose": -1, "num_leaves": 3, "min_data_in_leaf": 1, "num_threads": 1}, ds, 1)
    _assert_adapter_hands_grad_hess(case, obj, calls, ds, init)


@pytest.mark.parametrize("case", CONFIGURATIONS, ids=[c.id for c in CONFIGURATIONS])
def test_xgboost_adapter_hands_xgboost_grad_hess(case: Case) -> None:
    xgb = pytest.importorskip("xgboost")
    from boostplug import xgboost as bpx

    d = contract_data()
    margin = np.random.default_rng(1).normal(size=d.scores.shape[0]).astype(np.float32)
    obj = bpx.objective(case.name, **case.params(d.labels, d.group_ptr))
    spy, calls = _spy(obj)
    dm = bpx.dmatrix(d.X, d.labels, group_ptr=d.group_ptr, weight=d.weights, base_margin=margin)
    xgb.train(bpx.params(max_depth=2, nthread=1, min_child_weight=0.0), dm, 1, obj=spy)
    _assert_adapter_hands_grad_hess(case, obj, calls, dm, margin.astype(np.float64))
