"""A seeded synthetic ranking data set for tests and examples."""

from __future__ import annotations

import numpy as np

from .._validation import check_count
from .dataset import RankingData

__all__ = ["make_ranking"]


def _size_range(docs_per_query: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(docs_per_query, (int, np.integer)) and not isinstance(docs_per_query, bool):
        lo = hi = check_count(docs_per_query, "docs_per_query")
        return lo, hi
    try:
        lo, hi = docs_per_query  # type: ignore[misc]
    except (TypeError, ValueError):
        raise TypeError(f"docs_per_query must be an int or a (min, max) pair, got {docs_per_query!r}") from None
    lo = check_count(lo, "docs_per_query[0]")
    hi = check_count(hi, "docs_per_query[1]")
    if hi < lo:
        raise ValueError(f"docs_per_query must be (min, max) with min <= max, got {docs_per_query!r}")
    return lo, hi


def make_ranking(
    n_queries: int = 100,
    docs_per_query: int | tuple[int, int] = (5, 30),
    n_features: int = 20,
    n_informative: int = 5,
    n_labels: int = 5,
    noise: float = 1.0,
    seed: int | np.random.Generator | None = 0,
) -> RankingData:
    """Random queries with graded labels driven by a few features.

    Definition:
        * query sizes uniform in ``docs_per_query = (min, max)`` (or fixed);
        * ``X ~ N(0, 1)``, shape ``(n_docs, n_features)``; columns
          ``0..n_informative-1`` are informative, the others pure noise;
        * latent score ``s = X[:, :n_informative] @ w / ||w|| + noise * e``
          with ``w ~ U(0.5, 1.5)`` times a random sign and ``e ~ N(0, 1)``
          (so ``noise = 1`` means signal and noise of equal variance);
        * label ``g`` when ``s`` lies between the ``g/L`` and ``(g+1)/L``
          quantiles of all latent scores (``L = n_labels``): every grade occurs,
          about ``n_docs / L`` times each; grades are relative to the whole data
          set, so some queries have one grade only, as in real data.

    Returns:
        :class:`RankingData` with dense ``X``, labels ``0..n_labels-1`` (float64),
        ``qid = 0..n_queries-1``. Identical for identical arguments and seed.
    """
    n_queries = check_count(n_queries, "n_queries")
    lo, hi = _size_range(docs_per_query)
    n_features = check_count(n_features, "n_features")
    n_informative = check_count(n_informative, "n_informative", minimum=0)
    if n_informative > n_features:
        raise ValueError(f"n_informative ({n_informative}) must not exceed n_features ({n_features})")
    n_labels = check_count(n_labels, "n_labels")
    noise = float(noise)
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    if n_informative == 0 and noise == 0:
        raise ValueError("n_informative=0 with noise=0 leaves nothing to grade the documents by")
    rng = np.random.default_rng(seed)
    sizes = rng.integers(lo, hi + 1, size=n_queries)
    n_docs = int(sizes.sum())
    if n_docs < n_labels:
        raise ValueError(f"{n_docs} documents cannot hold all {n_labels} grades; use more queries or documents")
    X = rng.standard_normal((n_docs, n_features))
    w = rng.uniform(0.5, 1.5, size=n_informative) * rng.choice([-1.0, 1.0], size=n_informative)
    signal = X[:, :n_informative] @ w / np.linalg.norm(w) if n_informative else np.zeros(n_docs)
    latent = signal + noise * rng.standard_normal(n_docs)
    # Rank-based quantile cut: exactly floor/ceil(n_docs / L) documents per grade.
    ranks = np.empty(n_docs, dtype=np.int64)
    ranks[np.argsort(latent, kind="stable")] = np.arange(n_docs)
    y = (ranks * n_labels // n_docs).astype(np.float64)
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    return RankingData(X, y, qid, group_ptr)
