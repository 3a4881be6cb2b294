"""NeuralNDCG (``neural_ndcg``): the loss equals an independent NumPy transcription of allRank's
deterministic neuralNDCG on the unpadded query, whatever the bucket; its gradient is the loss's
central difference; a query without a relevant document adds nothing; its parameters are checked."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

from boostplug import objectives  # noqa: E402
from boostplug.testing._cases import fd_gradient  # noqa: E402


def allrank_neural_ndcg(s, y, temperature=1.0, sinkhorn=50, k=0):
    """1 - allRank's neuralNDCG of one unpadded query (its sinkhorn_scaling: columns, then rows, up to
    ``sinkhorn`` times, stopping once all sums are within 1e-6 of 1)."""
    n = s.size
    logits = ((n + 1 - 2 * np.arange(1, n + 1))[:, None] * s[None, :] - np.abs(s[:, None] - s[None, :]).sum(1)[None, :])
    p = np.exp((logits - logits.max(axis=1, keepdims=True)) / temperature)
    p /= p.sum(axis=1, keepdims=True)
    for _ in range(sinkhorn):
        p /= np.maximum(p.sum(axis=0, keepdims=True), 1e-10)
        p /= np.maximum(p.sum(axis=1, keepdims=True), 1e-10)
        if max(np.abs(p.sum(axis=0) - 1).max(), np.abs(p.sum(axis=1) - 1).max()) < 1e-6:
            break
    gains = 2.0 ** y - 1.0
    discounts = 1.0 / np.log2(2.0 + np.arange(n))
    if k:
        discounts[k:] = 0.0
    ideal = np.sum(np.sort(gains)[::-1] * discounts)
    return 0.0 if ideal == 0 else 1.0 - np.sum((p @ gains) * discounts) / ideal


@pytest.mark.parametrize("settings", [{}, {"temperature": 0.3, "sinkhorn": 5, "k": 3}])
def test_loss_is_allranks_on_the_unpadded_query_and_the_gradient_its_derivative(settings) -> None:
    rng = np.random.default_rng(0)
    sizes = np.array([2, 5, 8, 9, 17, 3])  # buckets 8, 16 and 32
    group_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    labels = rng.integers(0, 3, size=group_ptr[-1]).astype(float)
    labels[group_ptr[5]:] = 0.0  # no relevant document: loss 0
    scores = rng.normal(size=group_ptr[-1])
    loss = objectives.get("neural_ndcg").prepare(labels, group_ptr, hessian="constant", **settings)
    want = sum(allrank_neural_ndcg(scores[a:b], labels[a:b], **settings) for a, b in zip(group_ptr, group_ptr[1:]))
    assert loss.loss(scores) == pytest.approx(want, rel=1e-12)
    g, h = loss.grad_hess(scores)
    fd = fd_gradient(loss.loss, scores)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())
    assert np.all(g[group_ptr[5]:] == 0.0) and np.abs(g).max() > 0


def test_the_gradient_is_the_one_allrank_printed() -> None:
    # allRank's neuralNDCG (its defaults: powered relevancies, 50 Sinkhorn iterations with tolerance 1e-6, no
    # cut-off), torch float64, labels [2, 0, 1], scores [0.1, 0.4, -0.3], temperature 1: the printed gradient
    allrank = np.array([-0.13938914, 0.11102097, 0.02836817])
    loss = objectives.get("neural_ndcg").prepare(np.array([2.0, 0.0, 1.0]), np.array([0, 3]), hessian="constant")
    np.testing.assert_allclose(loss.grad_hess(np.array([0.1, 0.4, -0.3]))[0], allrank, rtol=0, atol=1e-8)


def test_parameters_are_checked() -> None:
    spec = objectives.get("neural_ndcg")
    assert {key: spec.defaults[key] for key in ("temperature", "sinkhorn", "k", "hessian")} == \
        {"temperature": 1.0, "sinkhorn": 50, "k": 0, "hessian": "stochastic"}
    for bad in ({"temperature": 0.0}, {"sinkhorn": -1}, {"k": -2}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            spec.prepare(np.array([1.0, 0.0]), np.array([0, 2]), **bad)
