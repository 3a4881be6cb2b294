"""What several booster test files share: random data sets (small, graded, LETOR-shaped, with
linearly dependent stumps), the critical pairs by plain loops, the comparison of two fits (bit for
bit) and of their histories (to a tolerance), and the estimator contract (save/load, staged
predictions, clone)."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from boostplug.boosters import load

E2_RTOL = 1e-12


def small_data(rng, n_queries=5, max_docs=9, n_feat=3, n_labels=4, nan_prob=0.1, one_grade=1.0, ties=True):
    """Small data with ties (``ties``: values rounded), missing values, a one-document query and a
    query all of grade ``one_grade``: ``(X, y, qid, sizes)``."""
    sizes = rng.integers(2, max_docs + 1, size=n_queries)
    sizes[0] = 1
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_feat))
    if ties:
        X = np.round(X, 1)
    X[rng.random((n, n_feat)) < nan_prob] = np.nan
    y = rng.integers(0, n_labels, size=n).astype(np.float64)
    y[1:1 + sizes[1]] = one_grade
    return X, y, np.repeat(np.arange(n_queries), sizes), sizes


def slow_pairs(y, sizes) -> list[tuple[int, int]]:
    """Every ``(i, j)`` in one query with ``y[i] > y[j]``, by two plain loops (query by query)."""
    pairs, start = [], 0
    for m in sizes:
        for i in range(start, start + m):
            for j in range(start, start + m):
                if y[i] > y[j]:
                    pairs.append((i, j))
        start += m
    return pairs


def graded_data(rng, n_queries=6, max_docs=30, n_feat=4, n_labels=5, nan_prob=0.1, ties=True):
    """Random queries with grades 0..n_labels-1, tied feature values, missing values, a
    one-document query and a one-grade query: ``(X, y, qid)``."""
    return small_data(rng, n_queries, max_docs, n_feat, n_labels, nan_prob, one_grade=2.0, ties=ties)[:3]


def letor_like(rng, n_queries=40, n_feat=12):
    """LETOR-shaped: many queries of 5-40 documents, grades 0-2 mostly 0, features in [0, 1]
    with many zeros (query-normalised), a few constant columns."""
    sizes = rng.integers(5, 41, size=n_queries)
    n = int(sizes.sum())
    X = rng.random((n, n_feat))
    X[rng.random((n, n_feat)) < 0.4] = 0.0
    X[:, 3] = 0.0
    X = np.round(X, 3)
    y = rng.choice([0.0, 1.0, 2.0], size=n, p=[0.7, 0.2, 0.1])
    return X, y, np.repeat(np.arange(n_queries), sizes)


def dependent_data(rng, n_queries=6):
    """Features whose stumps are linear combinations of others' ([x1 > .5] = [x0 > 1] - [x0 > 2],
    ...), so that chosen rankers fall in the span of S_t (the ``"dependent"`` step of E2 tracking)."""
    sizes = rng.integers(4, 25, size=n_queries)
    n = int(sizes.sum())
    y = rng.integers(0, 5, size=n).astype(np.float64)
    x0 = np.clip(np.round(y / 1.5 + rng.normal(size=n)), 0, 3)
    X = np.column_stack([x0, (x0 == 2) * 1.0, (x0 == 1) * 1.0, (x0 >= 1) * 1.0 + (x0 == 3), rng.integers(0, 3, n)])
    return X, y, np.repeat(np.arange(n_queries), sizes)


def assert_identical_fit(a, b, X, approx: tuple[str, ...] = ()) -> None:
    """Same rankers, weights, stop, fitted extras, predictions and history, bit for bit (``approx``
    history keys to ``E2_RTOL``)."""
    assert a.stop_reason_ == b.stop_reason_
    assert a.rankers_ == b.rankers_
    assert a.weights_ == b.weights_
    for name in a._fitted_extras:
        assert getattr(a, name) == getattr(b, name), name
    assert np.array_equal(a.predict(X), b.predict(X))
    assert_same_history(a, b, lambda key, value: key in approx, rel_tol=E2_RTOL, abs_tol=1e-300)


def assert_same_history(a, b, approx, rel_tol: float, abs_tol: float) -> None:
    """The two fits' histories have the same rounds, keys and values (``seconds`` aside): a value for
    which ``approx(key, value)`` holds to ``rel_tol`` (``abs_tol`` near 0), the others equal (NaN to NaN)."""
    assert len(a.history_) == len(b.history_)
    for ha, hb in zip(a.history_, b.history_):
        assert ha.keys() == hb.keys()
        for key, va in ha.items():
            if key == "seconds":
                continue
            vb = hb[key]
            if approx(key, va):
                assert math.isclose(va, vb, rel_tol=rel_tol, abs_tol=abs_tol), (key, ha["round"], va, vb)
            else:
                assert va == vb or (va != va and vb != vb), (key, ha["round"], va, vb)


def assert_estimator_contract(model, X, y, qid, path) -> None:
    """``model`` (fitted on ``X, y, qid``) saved to ``path`` loads back as the same class with the same
    params and predictions; its last staged prediction is its prediction bit for bit; a clone has the
    params and no fit, and refitting it gives the same rankers and weights."""
    model.save(path)
    back = load(path)
    assert isinstance(back, type(model)) and back.get_params() == model.get_params()
    assert np.array_equal(back.predict(X), model.predict(X))
    assert np.array_equal(list(model.staged_predict(X))[-1], model.predict(X))  # bit for bit
    c = clone(model)
    assert c.get_params() == model.get_params() and not hasattr(c, "rankers_")
    again = c.fit(X, y, qid=qid)
    assert again.rankers_ == model.rankers_ and again.weights_ == model.weights_
