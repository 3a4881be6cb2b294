"""A metric summed over workers: each worker's [numerator, denominator] over its whole queries adds
up to the one-process value of the union, for both weightings (the frameworks' weighted NDCG
counts a query without a relevant document as 1 over its weight)."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.frameworks._metric_spec import MetricSpec
from boostplug.frameworks.distributed.metric import from_sums, metric_sums


@pytest.mark.parametrize("weighting", ["query", "framework"])
@pytest.mark.parametrize("weighted", [False, True])
def test_worker_sums_add_up_to_the_one_process_value(weighting: str, weighted: bool) -> None:
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 9, size=30)
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 3, size=gp[-1]).astype(np.float64)
    y[gp[3]:gp[7]] = 0.0                         # queries without a relevant document
    s = rng.normal(size=gp[-1])
    w = rng.uniform(0.5, 4.0, size=30) if weighted else None
    spec = MetricSpec("ndcg@5", weighting=weighting)
    whole = spec(s, y, gp, w)
    cut = 13                                     # worker 1: queries 0..12, worker 2: the rest
    a, b = gp[cut], gp[-1]
    parts = [metric_sums(spec, s[:a], y[:a], gp[:cut + 1], None if w is None else w[:cut]),
             metric_sums(spec, s[a:], y[a:], gp[cut:] - a, None if w is None else w[cut:])]
    assert from_sums(parts[0] + parts[1]) == pytest.approx(whole, rel=1e-12)
    if weighted and weighting == "framework":   # the two weightings differ here: the test can tell them apart
        assert whole != pytest.approx(MetricSpec("ndcg@5")(s, y, gp, w), rel=1e-6)


def test_an_empty_worker_adds_nothing() -> None:
    spec = MetricSpec("ndcg@5")
    assert np.array_equal(metric_sums(spec, np.zeros(0), np.zeros(0), np.zeros(1, dtype=np.int64), None), np.zeros(2))


def test_lightgbm_workers_early_stopping_checks_validation_weights_as_the_builders_do() -> None:
    """A NaN or negative validation weight is refused naming its query (it
    made the metric NaN, so early stopping kept round 0 without a word); good weights give the
    one-process weighted metric."""
    from boostplug.frameworks.distributed.lightgbm_worker import _EarlyStopping
    from boostplug.frameworks.distributed.rows import Part

    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(6), 4)
    y = rng.integers(0, 3, size=qid.size).astype(np.float64)
    X = rng.normal(size=(qid.size, 2))
    spec = MetricSpec("ndcg@3")
    for bad in (np.nan, -1.0):
        w = np.ones(qid.size)
        w[9] = bad
        with pytest.raises(ValueError, match="query"):
            _EarlyStopping(spec, Part(X, y, qid, w), 5)
    w = np.repeat(rng.uniform(0.5, 2.0, size=6), 4)
    stop = _EarlyStopping(spec, Part(X, y, qid, w), 5)
    s = rng.normal(size=qid.size)
    gp = np.arange(0, 25, 4, dtype=np.int64)
    assert from_sums(spec.sums(s, stop.prepared)) == pytest.approx(spec(s, y, gp, w[::4]), rel=1e-12)
