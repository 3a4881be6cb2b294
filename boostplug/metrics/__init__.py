"""Ranking metrics with explicit conventions, over flat arrays ``(scores, labels, group_ptr)``.

The queries as ``group_ptr`` or ``qid=`` (exactly one), the mean over queries or ``per_query=True``
(NaN for a query a convention skips), the input checks (a ``ValueError`` or ``TypeError`` naming
the value; a bad ``group_ptr`` and an option of the wrong type included): docs/metrics.md, its
opening and "How they are tested"; the pairwise metrics counted by sorting, and the memory limit
of explicit ``pairs=`` (:class:`PairMemoryError`): "Pairwise metrics and memory". The work is done
by numba kernels running in parallel over queries.

Conventions (tools disagree; each choice is a parameter, LightGBM's the default): ``gain``,
``discount``, ``empty``, ``ties``, ``threshold``, ``divisor``, ``max_grade`` and the pairwise
``kind``; their values and which tool uses which: docs/metrics.md, "Conventions".

Public functions: :func:`ndcg`, :func:`dcg`, :func:`average_precision`,
:func:`precision`, :func:`reciprocal_rank`, :func:`err`, :func:`rbp`, :func:`rank_loss`,
:func:`misordered_pairs`, :func:`pair_precision_at`, and the name registry
:func:`by_name` / :func:`parse_name` / :func:`higher_is_better`
(``"ndcg@10"``, ``"map"``, ``"p@5"``, ``"mrr"``, ``"err@10"``, ``"r1"``, ``"r2"``, ...),
and :func:`make_scorer`, a scikit-learn scorer (``GridSearchCV``, ``cross_validate``) that
receives ``qid`` through scikit-learn's metadata routing. :class:`StepCounts` counts one set's
tied and reversed critical pairs (and R1/R2) round after round of an ensemble, its labels' levels
found once (the boosters' histories and ``eval_set``).

Example:
    >>> from boostplug import metrics
    >>> metrics.ndcg([0.2, 0.9, 0.5], [0, 2, 1], [0, 3], k=10)
    1.0
    >>> metrics.by_name("map@10")([0.2, 0.9, 0.5], [0, 2, 1], [0, 3])
    1.0
    >>> metrics.ndcg([0.2, 0.9, 0.5, 0.1], [0, 2, 1, 1], qid=[8, 8, 8, 3], k=10)
    1.0
"""

from __future__ import annotations

from ._ndcg import dcg, ndcg
from ._pair_counts import StepCounts
from ._pairwise import PairMemoryError, misordered_pairs, pair_precision_at, rank_loss
from ._binary import ERR_MAX_GRADE, average_precision, err, precision, rbp, reciprocal_rank
from ._registry import NAMES, MetricFn, by_name, higher_is_better, parse_name
from ._scorer import QuerySplitWarning, RankingScorer, make_scorer

__all__ = [
    "ndcg", "dcg", "average_precision", "precision", "reciprocal_rank", "err", "rbp",
    "rank_loss", "misordered_pairs", "pair_precision_at",
    "by_name", "parse_name", "higher_is_better", "MetricFn", "NAMES",
    "ERR_MAX_GRADE", "PairMemoryError",
    "make_scorer", "RankingScorer", "QuerySplitWarning",
    "StepCounts",
]
