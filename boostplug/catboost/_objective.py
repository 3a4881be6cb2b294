"""A boostplug objective bound to a CatBoost pool, and the per-round lookup CatBoost calls: CatBoost hands
a Python objective blocks of at most 1,000 rows in its threads' order, with no row index or group id, so
each round computes the derivatives over whole queries first and CatBoost's calls look each row's up
by its label in the rounds' pool (:func:`rounds_pool`), its row index."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.threads import limit_threads
from .._validation import FLOAT32_MAX, check_labels, check_weights
from ..frameworks._builders import builder_weights
from ..frameworks._bound_objective import FROM_FRAMEWORK, BoundObjective
from ..groups import qid_from_group_ptr, resolve_group_ptr

__all__ = ["CatBoostObjective", "objective", "pool", "rounds_pool"]

#: The most rows a pool may have: the rounds' pool holds the row indices as CatBoost's labels,
#: which CatBoost hands as float32, exact up to 2^24.
MAX_ROWS = 2 ** 24


#: What the rounds read beside CatBoost's pool (``pool.boostplug_rows``); the queries' weights per query and per row.
PoolRows = NamedTuple("PoolRows", [("labels", NDArray[np.float64]), ("group_ptr", NDArray[np.int64]), ("X", Any),
                                   ("pool_args", dict), ("query_weights", Any), ("row_weights", Any)])


@functools.cache
def _pool_class() -> type:
    """``catboost.Pool`` whose weights are set only when it is made: the rounds read them beside the pool."""
    from catboost import Pool

    def refuse(self: Any, weights: Any) -> None:
        raise ValueError("a boostplug.catboost.pool's weights are set when it is made, boostplug.catboost.pool(..., "
                         "group_weight=...): boostplug's rounds read those, not set_weight or set_group_weight")

    return type("Pool", (Pool,), {"set_weight": refuse, "set_group_weight": refuse})


def pool(X: Any, y: ArrayLike, *, group_ptr: ArrayLike | None = None, qid: ArrayLike | None = None,
         group_weight: ArrayLike | None = None, **pool_args: Any) -> Any:
    """A CatBoost pool for :func:`boostplug.catboost.train` and CatBoost's own losses: features ``X``,
    labels ``y``, the queries as ``group_ptr`` or ``qid`` (each query's rows contiguous), their weights
    ``group_weight`` (one per query, or per row); ``pool_args`` go to ``catboost.Pool`` (not ``label``,
    ``group_id``, ``weight``). It keeps ``X`` (not a copy) for the pool of row indices the rounds fit on."""
    for key in ("label", "group_id", "weight", "pairs", "baseline"):
        if key in pool_args:
            raise ValueError(f"boostplug.catboost.pool: {key}= is not taken (labels: y, queries: group_ptr or qid, "
                             "their weights: group_weight; a boostplug objective trains without pairs of the pool)")
    labels = check_labels(y)
    g = resolve_group_ptr(group_ptr, qid, labels.shape[0], caller="boostplug.catboost.pool")
    if labels.shape[0] > MAX_ROWS:
        raise ValueError(f"boostplug.catboost.pool: {labels.shape[0]} rows; at most {MAX_ROWS} (CatBoost hands the "
                         "row indices back as float32 labels, exact up to 2^24)")
    qw = builder_weights(group_weight, g, "CatBoost", per_query=True)
    rows = None if qw is None else np.repeat(qw, np.diff(g))
    p = _pool_class()(X, label=labels, group_id=qid_from_group_ptr(g), group_weight=rows, **pool_args)
    p.boostplug_rows = PoolRows(labels, g, X, pool_args, qw, rows)
    return p


def rounds_pool(p: Any, quantization: dict[str, Any]) -> Any:
    """The pool every round of :func:`~boostplug.catboost.train` fits on, quantized once: ``p``'s
    features and queries with each row's index as its label (only labels reach ``calc_ders_range``)."""
    from catboost import Pool

    r = p.boostplug_rows
    rows = Pool(r.X, label=np.arange(r.labels.shape[0], dtype=np.float64), group_id=qid_from_group_ptr(r.group_ptr),
                **r.pool_args)
    rows.quantize(**quantization)
    return rows


class RoundDers:
    """What CatBoost calls during one round: each row's derivatives, looked up by the row index
    CatBoost hands as the target. CatBoost's sign: the first derivative of the log-likelihood it
    maximises (minus the gradient) and the second (minus the Hessian). ``weights``: the rows'
    weights in the round's split scores (the pool's: ``None``, each 1), ``split``: the objective's own."""

    def __init__(self, name: str, scores: NDArray[np.float64], grad: NDArray[np.float64], hess: NDArray[np.float64],
                 weights: NDArray[np.float64] | None = None, split: bool = False) -> None:
        self.name, self.scores, self.der1, self.der2 = name, scores, -grad, -hess
        self.weights, self.split = weights, split
        #: the first error raised inside CatBoost's call (CatBoost reraises it as text)
        self.error: BaseException | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> "RoundDers":
        return self  # CatBoost copies the objective at fit; the copy must report its error here

    def calc_ders_range(self, approxes: Any, targets: Any, weights: Any) -> list[tuple[float, float]]:
        try:
            rows = self._rows(np.asarray(approxes, dtype=np.float64), np.asarray(targets, dtype=np.float64), weights)
        except ValueError as e:
            self.error = self.error or e
            raise
        return list(zip(self.der1[rows].tolist(), self.der2[rows].tolist()))

    def _rows(self, approxes: NDArray[np.float64], targets: NDArray[np.float64], weights: Any) -> NDArray[np.int64]:
        rows = targets.astype(np.int64)  # the rounds' pool (rounds_pool) is labelled with the row indices
        w = np.float32(1) if self.weights is None else self.weights[rows].astype(np.float32)
        if weights is not None and not np.array_equal(np.asarray(weights, np.float32), np.broadcast_to(w, rows.shape)):
            raise ValueError(f"{self.name}: CatBoost handed row weights other than the round's (the pool's or split's)")
        expected = self.scores[rows]
        if not np.allclose(approxes, expected, rtol=1e-9, atol=1e-9):
            k = int(np.argmax(np.abs(approxes - expected)))
            raise ValueError(f"{self.name}: CatBoost asked for derivatives at a score ({approxes[k]!r}) other than "
                             f"the round's ({expected[k]!r}, row {int(rows[k])}): ordered boosting or more than one "
                             "leaf estimation iteration; the gradients would be stale")
        return rows


class CatBoostObjective(BoundObjective):
    """A boostplug objective for :func:`boostplug.catboost.train`: bound to each :func:`pool` it
    trains on, it computes one round's gradients and Hessians over whole queries (:meth:`round`).
    A loss may weigh the rows in CatBoost's split scores (as CatBoost's losses on pairs weigh each row
    by its pairs): its ``split_weights()`` gives one weight per row (docs/catboost.md)."""

    def round(self, pool: Any, scores: NDArray[np.float64], threads: int | None) -> RoundDers:
        """The derivatives of every row of ``pool`` at ``scores`` (the model's before this round)."""
        labels, group_ptr = _pool_arrays(pool)
        qw = pool.boostplug_rows.query_weights
        prep = self.prepared(pool, (labels, group_ptr, qw), lambda: (labels, group_ptr, qw), framework="CatBoost")
        with limit_threads(self.round_threads(threads)):
            grad, hess = prep.grad_hess(scores)
        split = getattr(prep, "split_weights", None)  # checked as the gradients are, and within float32
        weights = pool.boostplug_rows.row_weights if split is None else check_weights(
            split(), labels.shape[0], f"{self.name}'s split_weights()")
        if split is not None and not 0 < weights.sum() <= FLOAT32_MAX:
            raise ValueError(f"{self.name}'s split_weights() must have a positive sum within float32 (CatBoost's "
                             f"weights), got {weights.sum():g} over {weights.shape[0]} rows")
        return RoundDers(self.name, scores, np.asarray(grad, dtype=np.float64), np.asarray(hess, dtype=np.float64),
                         weights, split is not None)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        # What catboost.CatBoost(...).fit does first with its parameters: refused there, with the way that works.
        raise TypeError(f"{self!r} is not a loss for catboost.CatBoost or CatBoostRanker: CatBoost hands a Python "
                        "objective blocks of rows without their queries. Train with boostplug.catboost.train(params, "
                        "pool, objective, rounds) or boostplug.catboost.CatBoostRanker(objective=name)")


def _pool_arrays(p: Any) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    if not hasattr(p, "boostplug_rows"):
        raise ValueError(f"a boostplug objective on CatBoost trains on boostplug.catboost.pool(X, y, group_ptr=...), "
                         f"got {type(p).__name__}: a catboost.Pool of its own keeps no queries beside it")
    return p.boostplug_rows.labels, p.boostplug_rows.group_ptr


def objective(name: Any, *, threads: Any = FROM_FRAMEWORK, **params: Any) -> CatBoostObjective:
    """A boostplug objective for :func:`boostplug.catboost.train`: a registered name, or a
    :class:`~boostplug.objectives.Loss` subclass or instance, with its ``params`` (unknown names:
    ``ValueError``). ``threads``: the numba threads of its kernels (default: CatBoost's
    ``thread_count``, else numba's own setting)."""
    return CatBoostObjective(name, params, threads)
