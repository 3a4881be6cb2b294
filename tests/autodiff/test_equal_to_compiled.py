"""The losses of docs/objectives/autodiff.md written as JaxLosses give the compiled objectives'
gradients (1e-10 relative) and, in the exact mode, their exact Hessian diagonals (1e-8); each is at
most 15 lines and shown on the page as it is here; ApproxAP's gradient is its loss's five-point
derivative."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")

from boostplug import objectives  # noqa: E402
from boostplug.testing._cases import fd_gradient  # noqa: E402

from .losses import JaxApproxNDCG, JaxListMLE, JaxListNet, JaxRankNet  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "objectives" / "autodiff.md"

#: JAX class -> the compiled objective it equals, with the settings that make it the same loss
PAIRS = {
    JaxApproxNDCG: ("approx_ndcg", {}),
    JaxListNet: ("listnet", {}),
    JaxListMLE: ("listmle", {"ties": "scores"}),
    JaxRankNet: ("ranknet", {}),
}


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labels, group_ptr, scores and query weights: 25 queries of 1..19 documents (buckets 8, 16, 32)."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 20, size=25)
    group_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    labels = rng.integers(0, 5, size=group_ptr[-1]).astype(float)
    return labels, group_ptr, 2.0 * rng.normal(size=group_ptr[-1]), rng.uniform(0.5, 2.0, size=sizes.size)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.slow  # compiles the exact and the exact_abs modes for three buckets
@pytest.mark.parametrize("cls", list(PAIRS), ids=lambda c: c.name)
def test_gradient_and_exact_hessian_equal_the_compiled_objective(cls, data) -> None:
    labels, group_ptr, scores, weights = data
    name, settings = PAIRS[cls]
    compiled = objectives.get(name).prepare(labels, group_ptr, weights=weights, **settings,
                                            **({"hessian": "exact"} if "hessian" in objectives.get(name).defaults
                                               else {}))
    mine = cls(labels, group_ptr, weights=weights, hessian="exact")
    g, h = mine._grad_hess(scores)
    gc, hc = compiled._grad_hess(scores)
    assert _relative(g, gc) < 1e-10
    assert _relative(h, hc) < 1e-8
    assert mine.loss(scores) == pytest.approx(compiled.loss(scores), rel=1e-12)
    positive = cls(labels, group_ptr, weights=weights, hessian="exact_abs")._grad_hess(scores)
    np.testing.assert_array_equal(positive[0], g)
    np.testing.assert_array_equal(positive[1], np.abs(h))  # |exact diagonal|
    # the default (stochastic): the same gradient, its primal computed beside a Hessian-vector product (other order)
    np.testing.assert_allclose(cls(labels, group_ptr, weights=weights)._grad_hess(scores)[0], g, rtol=1e-12, atol=0)


@pytest.mark.parametrize("cls", list(PAIRS), ids=lambda c: c.name)
def test_each_loss_is_on_the_page_as_it_is_here_in_at_most_15_lines(cls) -> None:
    source = inspect.getsource(cls)
    assert len(source.strip().splitlines()) <= 15, source
    assert source in PAGE.read_text(encoding="utf-8"), f"docs/objectives/autodiff.md lacks {cls.__name__} as here"


def test_approx_ap_gradient_is_the_five_point_derivative_and_its_exact_hessian_the_gradients() -> None:
    rng = np.random.default_rng(1)
    group_ptr = np.array([0, 6, 13, 14, 23], dtype=np.int64)
    labels = rng.integers(0, 3, size=23).astype(float)
    scores = rng.normal(size=23)
    for mode in ("exact_abs", "exact"):
        ap = objectives.get("approx_ap").prepare(labels, group_ptr, alpha=2.0, hessian=mode)
        g, h = ap._grad_hess(scores)
        fd = fd_gradient(ap.loss, scores)
        np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9 * np.abs(fd).max())
        assert np.abs(g).max() > 0
    fd_diag = np.diag(np.array([(ap._grad_hess(scores + 1e-5 * e)[0] - ap._grad_hess(scores - 1e-5 * e)[0]) / 2e-5
                                for e in np.eye(23)]))
    np.testing.assert_allclose(h, fd_diag, rtol=1e-5, atol=1e-8 * np.abs(fd_diag).max())


def test_constant_hessian_is_the_query_weight_where_the_gradient_is_not_all_zero(data) -> None:
    labels, group_ptr, scores, weights = data
    labels = labels.copy()
    labels[group_ptr[3]:group_ptr[4]] = 0.0  # a query without a relevant document: gradient all zero
    weights = weights.copy()
    weights[5] = 0.0  # a query of weight 0
    default = JaxApproxNDCG(labels, group_ptr, weights=weights)._grad_hess(scores)
    g, h = JaxApproxNDCG(labels, group_ptr, weights=weights, hessian="constant")._grad_hess(scores)
    np.testing.assert_allclose(g, default[0], rtol=1e-12, atol=1e-300)  # the same gradient (default: another order)
    sizes = np.diff(group_ptr)
    for q in range(sizes.size):
        rows = slice(group_ptr[q], group_ptr[q + 1])
        informative = sizes[q] >= 2 and np.any(g[rows] != 0.0)
        assert q != 3 or not informative
        np.testing.assert_array_equal(h[rows], weights[q] if informative else 0.0)
    assert (h > 0).sum() > 0.8 * h.size


def test_mean_abs_gradient_hessian_is_the_query_weight_times_its_mean_absolute_gradient(data) -> None:
    labels, group_ptr, scores, weights = data
    labels = labels.copy()
    labels[group_ptr[3]:group_ptr[4]] = 0.0  # a query without a relevant document: gradient all zero
    weights = weights.copy()
    weights[5] = 0.0
    g, h = JaxApproxNDCG(labels, group_ptr, weights=weights, hessian="mean_abs_gradient")._grad_hess(scores)
    np.testing.assert_allclose(g, JaxApproxNDCG(labels, group_ptr, weights=weights)._grad_hess(scores)[0],
                               rtol=1e-12, atol=1e-300)
    for q in range(group_ptr.size - 1):
        rows = slice(group_ptr[q], group_ptr[q + 1])
        # g = W g_raw, so W mean |g_raw| = mean |g| (0 for a query of weight 0 or without gradient)
        np.testing.assert_allclose(h[rows], np.abs(g[rows]).mean(), rtol=1e-12, atol=0.0)
    assert np.all(h[group_ptr[3]:group_ptr[4]] == 0.0) and (h > 0).sum() > 0.8 * h.size


def test_mean_abs_gradient_hessian_steps_do_not_depend_on_the_losss_scale(data) -> None:
    """Multiplying every query's weight by c multiplies gradient and Hessian alike, so Newton's
    leaf values -sum g / sum h are unchanged, as they are with the exact Hessian (not the constant one)."""
    labels, group_ptr, scores, weights = data
    g1, h1 = JaxApproxNDCG(labels, group_ptr, weights=weights, hessian="mean_abs_gradient")._grad_hess(scores)
    g2, h2 = JaxApproxNDCG(labels, group_ptr, weights=7.0 * weights, hessian="mean_abs_gradient")._grad_hess(scores)
    np.testing.assert_allclose(g2, 7.0 * g1, rtol=1e-12)
    np.testing.assert_allclose(h2, 7.0 * h1, rtol=1e-12)
    gc, hc = JaxApproxNDCG(labels, group_ptr, weights=7.0 * weights, hessian="constant")._grad_hess(scores)
    assert not np.allclose(gc / np.where(hc > 0, hc, 1.0), g1 / np.where(h1 > 0, h1, 1.0))


@pytest.mark.parametrize("old", ["positive", "scaled"])
def test_the_former_hessian_names_are_refused(data, old) -> None:
    """exact_abs and mean_abs_gradient were positive and scaled: no alias (CHANGELOG.md lists the renames)."""
    labels, group_ptr, scores, weights = data
    with pytest.raises(ValueError, match=f"hessian.*{old}"):
        JaxApproxNDCG(labels, group_ptr, weights=weights, hessian=old)
