"""Training on a Spark DataFrame with a boostplug objective, for either framework: the driver's
side (checks, the query layout, the tracker, one barrier stage, the model back with its objective
recorded); each framework's barrier task is :func:`~boostplug.spark._barrier.barrier_task`. User
documentation: :mod:`boostplug.spark`."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .. import objectives as _objectives
from .._validation import check_rounds
from ..frameworks._bound_objective import ShippedEntry
from ..frameworks._metric_spec import MetricSpec
from ..frameworks.distributed.xgboost_worker import Tracker
from ._barrier import (SCHEMAS, WORKERS, Columns, Job, barrier_task, cancelled_on_error, check_distributable,
                       check_objective_cols, driver_host, keeps_sparse, prepare_frame, run_barrier)
from ._spark import require_frame
from .stages import StageTimes

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

__all__ = ["Job", "train", "train_xgboost", "train_lightgbm"]

def train(
    df: "DataFrame",
    objective: Any,
    *,
    framework: str = "xgboost",
    objective_params: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    num_boost_round: int = 100,
    label_col: str = "label",
    qid_col: str = "qid",
    features_col: str | None = "features",
    feature_cols: Sequence[str] | None = None,
    weight_col: str | None = None,
    doc_col: str | None = None,
    objective_cols: Mapping[str, str] | None = None,
    valid_df: "DataFrame | None" = None,
    metric: str = "ndcg@10",
    early_stopping_rounds: int | None = None,
    num_workers: int | None = None,
    repartition: bool = True,
    sparse_missing: bool = False,
    stage_times: StageTimes | None = None,
) -> Any:
    """Train ``framework`` (``"xgboost"``, ``"lightgbm"``) with a boostplug objective on a Spark
    DataFrame, one barrier task (worker) per partition.

    Args:
        df: the training rows: features in ``features_col`` (a ``pyspark.ml`` vector, sparse or
            dense, or an array of numbers) or in the numeric ``feature_cols``; ``label_col``, ``qid_col``,
            optionally ``weight_col`` (one weight per row, the same for every row of a query) and
            ``doc_col`` (each row's document key, for a :class:`~boostplug.keyed_pairs.KeyedPairs`
            in ``objective_params``, such as QBRank's ``pairs=clicks.preferences(...).keyed()``:
            the table travels whole, and each worker maps it onto its own rows).
        objective_cols: row-set objective parameters given by boolean columns of ``df``,
            ``{parameter: column}``: each worker passes the parameter its training rows where the
            column is true. QBRank's P ∪ L: ``{"labeled_rows": "judged"}``, the judged rows in the
            squared-error term beside the click pairs (see docs/spark.md).
        objective: a registered objective's name (:func:`boostplug.objectives.names`), yours
            included, or a :class:`~boostplug.objectives.Loss` subclass or instance, registered or
            not (an instance's settings are its parameters, under ``objective_params``): its entry
            travels to the executors.
        objective_params: its parameters (row-index parameters are refused: each worker numbers
            its own rows; give pairs as a ``KeyedPairs`` table with ``doc_col``).
        params: the framework's parameters. XGBoost: over :func:`boostplug.xgboost.params`
            (``base_score=0``, ``tree_method="hist"``). LightGBM: without the network and the
            objective, which this sets (``machines``, ``tree_learner="data_parallel"``...).
        valid_df: validation rows (same columns); ``metric`` (a boostplug metric name) of the
            whole validation set is computed each round, and ``early_stopping_rounds`` stops on
            it (``booster.best_iteration``; a LightGBM model is cut at its best round).
        num_workers: how many barrier tasks (default: Spark's default parallelism); the cluster
            must run that many tasks at once.
        repartition: ``True`` (default) lays the rows out by :func:`repartition_by_query`; ``False``
            keeps ``df``'s partitions, which must hold whole queries (checked: a split query is a
            ``ValueError`` naming it).
        sparse_missing: XGBoost only (LightGBM refuses ``True``). ``False`` (default): an entry a
            sparse vector does not store is a zero; ``True``: it is missing, as in ``xgb.DMatrix`` of
            a CSR matrix (score with :func:`predict`'s ``sparse_missing=True`` then). What each
            means for the model and the memory: docs/spark.md, "Quick start".
        stage_times: a :class:`~boostplug.spark.stages.StageTimes` to fill with the time of each
            stage of the run (profiling).

    Returns:
        The trained ``xgb.Booster`` or ``lgb.Booster``, with the objective recorded in it
        (:func:`boostplug.xgboost.objective_of`, :func:`boostplug.lightgbm.save_model`).

    How the workers train, and how close the model is to one machine's: docs/spark.md, "How training runs".
    """
    if framework not in WORKERS:
        raise ValueError(f"framework must be one of {list(WORKERS)}, got {framework!r}")
    backend = WORKERS[framework]
    who = f"train_{framework}"
    check_rounds(num_boost_round, "num_boost_round")
    sparse = keeps_sparse(framework, sparse_missing)
    entry = _objectives.resolve(objective)
    objective_params = {**{k: v for k, v in _objectives.settings_of(objective).items() if k not in entry.row_params},
                        **dict(objective_params or {})}
    obj = backend.objective(entry, **objective_params)  # validates the parameters on the driver
    objective_cols = {} if objective_cols is None else objective_cols
    check_objective_cols(entry, objective_cols, objective_params)
    check_distributable(obj, early_stopping_rounds, valid_df)
    framework_params = backend.prepare_params(params or {})
    cols = Columns(label_col, qid_col, features_col, feature_cols, weight_col, doc_col, tuple(objective_cols.items()))
    spec = MetricSpec(metric) if valid_df is not None else None
    shipped = ShippedEntry.of(entry)
    times = stage_times if stage_times is not None else StageTimes()
    times.begin()
    require_frame(df, who)
    with cancelled_on_error(df.sparkSession.sparkContext):
        laid, layout = prepare_frame(df, valid_df, cols, num_workers, repartition, who)
        times.driver.mark("layout")
        try:
            uses_tracker = backend.uses_tracker(spec)
            with Tracker(driver_host(df), layout.n_partitions) if uses_tracker else nullcontext() as tracker:
                job = Job(cols, shipped, objective_params, framework_params, num_boost_round, spec,
                          early_stopping_rounds, layout.n_partitions, tracker and tracker.args, sparse)
                rows = run_barrier(laid, barrier_task(job, framework), SCHEMAS[framework])
        finally:
            laid.unpersist()
    times.driver.mark("barrier")
    for row in rows:
        times.add_worker(row["stages"])
    booster = backend.record_objective(backend.load(next(r["model"] for r in rows if r["model"] is not None)), obj)
    times.driver.mark("load")
    return booster


def train_xgboost(df: "DataFrame", objective: Any, **kwargs: Any) -> Any:
    """:func:`train` with ``framework="xgboost"``: an ``xgb.Booster``."""
    return train(df, objective, framework="xgboost", **kwargs)


def train_lightgbm(df: "DataFrame", objective: Any, **kwargs: Any) -> Any:
    """:func:`train` with ``framework="lightgbm"``: an ``lgb.Booster``."""
    return train(df, objective, framework="lightgbm", **kwargs)
