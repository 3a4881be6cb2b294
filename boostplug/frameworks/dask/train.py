"""Training on query-whole partitions: ``lightgbm.dask.DaskLGBMRanker`` and ``xgboost.dask.train``
with a boostplug objective. User documentation: :mod:`boostplug.dask`."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from ..._validation import check_rounds
from ...groups import group_ptr_from_qid
from ..distributed.peers import first_line, lost_peer
from .keyed import check_doc_col, train_on_workers
from .partition import PartitionLayout, check_partitions, compute, dask_modules, require_frame
from .stopping import stopping_workers

if TYPE_CHECKING:  # pragma: no cover
    import dask.array as da
    import dask.dataframe as dd
    import lightgbm as lgb
    import pandas as pd
    from distributed import Client

    from .._bound_objective import BoundObjective

__all__ = ["lightgbm_group", "dense_qid", "train_lightgbm", "train_xgboost"]


def _features(frame: "dd.DataFrame", feature_cols: Sequence[str] | None, drop: Sequence[str | None]) -> list[str]:
    if feature_cols is None:
        return [c for c in frame.columns if c not in drop]
    missing = [c for c in feature_cols if c not in frame.columns]
    if missing:
        raise ValueError(f"feature columns {missing} are not in the frame; its columns are {list(frame.columns)}")
    return list(feature_cols)


def _distributable(obj: "BoundObjective", doc_col: Any) -> "BoundObjective":
    """``obj``, refused when it holds row indices of the whole training set (they cannot be split
    between workers: each worker's objective sees its own rows, numbered from 0) or, without
    ``doc_col``, a keyed table (it names rows by ``(qid, doc)``: no worker could map it)."""
    if obj.rows_given:
        key = next(iter(obj.rows_given))
        entry = obj.objective
        defaults = ", ".join(f"{k}={v!r}" for k, v in entry.defaults.items() if k not in entry.row_params)
        raise ValueError(
            f"objective_params[{key!r}] holds row indices of the whole training set, but each Dask "
            f"worker's objective sees only its own rows (numbered from 0): explicit {key} cannot be "
            f"used in distributed training. Leave {key} unset (the objective's other parameters then "
            f"apply; defaults: {defaults}) or train on one machine with boostplug.lightgbm / boostplug.xgboost"
        )
    if obj.keyed_given and doc_col is None:
        key = next(iter(obj.keyed_given))
        raise ValueError(f"objective_params[{key!r}] is a KeyedPairs table, which names rows by (qid, doc), and no "
                         "doc_col was given: pass doc_col= (the frame's column of document keys) so that each "
                         "worker maps the table onto its own rows")
    return obj


def _first_nonfinite(labels: Any) -> tuple[int, float, int] | None:
    """``(local row, label, how many)`` of the first NaN/infinite label of a partition (runs on a worker)."""
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(y))
    return (int(bad[0]), float(y[bad[0]]), int(bad.size)) if bad.size else None


def _check_finite_labels(frame: "dd.DataFrame", label_col: str, layout: PartitionLayout,
                         client: "Client | None") -> None:
    """Refuse a NaN or infinite label here, naming the row: LightGBM stores a NaN label as 0 and an
    infinite one as 1e38 before the objective sees it, and a worker's own refusal would leave its
    peers waiting on the network."""
    dask, _, _ = dask_modules()
    tasks = [dask.delayed(_first_nonfinite)(p) for p in frame[label_col].to_delayed()]
    results = compute(tasks, client)
    starts = np.concatenate(([0], np.cumsum(layout.docs_per_partition)))
    for p, found in enumerate(results):
        if found is not None:
            local, value, count = found
            raise ValueError(
                f"labels must be finite (LightGBM would silently train on a NaN label as 0, and a worker refusing "
                f"it leaves its peers waiting); row "
                f"{int(starts[p]) + local} of column {label_col!r} (partition {p}, local row {local}) has "
                f"label {value} ({count} non-finite in that partition)"
            )


def _workers(client: "Client") -> dict[str, Any]:
    """The cluster's workers now: address -> name."""
    return {a: w.get("name") for a, w in client.scheduler_info()["workers"].items()}


#: How long to wait for the scheduler to notice a worker whose death cut its peers' connections.
LOST_WORKER_WAIT_S = 5.0


@contextmanager
def _naming_lost_workers(client: "Client", who: str) -> Iterator[None]:
    """Training on ``client``'s workers: when it fails and a worker left the cluster meanwhile (its
    process died: killed, out of memory), a RuntimeError naming that worker, from the error the
    others saw (a broken connection, or Dask's ``FutureCancelledError ... already forgotten`` for
    its tasks and data), which names no cause. A broken connection without a worker gone yet waits
    up to :data:`LOST_WORKER_WAIT_S` for the scheduler to notice it. A broken connection after a
    worker's training failed (its objective raised: the others lost their connection to it) is
    that exception (:mod:`..distributed.failure`)."""
    from concurrent.futures import CancelledError

    from ..distributed.failure import forget_failure

    before = _workers(client)
    _on_workers(client, forget_failure)
    try:
        yield
    except Exception as exc:
        if lost_peer(exc):
            _raise_worker_failure(client)
        gone: list[str] = []
        deadline = time.monotonic() + (LOST_WORKER_WAIT_S if lost_peer(exc) or isinstance(exc, CancelledError)
                                       else 0.0)
        while True:
            try:
                gone = sorted(set(before) - set(_workers(client)))
            except Exception:  # the scheduler itself is gone: the original error says so
                break
            if gone or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        if not gone:
            raise
        named = ", ".join(f"{a} (name {before[a]!r})" for a in gone)
        raise RuntimeError(f"{who}: Dask worker{'s' if len(gone) > 1 else ''} {named} left the cluster during "
                           f"training (its process died: killed, out of memory or crashed; see its logs), and "
                           f"training failed with: {type(exc).__name__}: {first_line(exc)}") from exc


def _on_workers(client: "Client", fn: Any) -> dict[str, Any]:
    """``client.run(fn)``: each worker's result; ``{}`` when a worker does not answer."""
    try:
        return client.run(fn)
    except Exception:  # a worker gone or the scheduler: the training's own error says so
        return {}


def _raise_worker_failure(client: "Client") -> None:
    """The exception a worker's training raised during this training (the first, by worker
    address), when one did: the other workers then fail only with their lost connection to it."""
    import pickle

    from ..distributed.failure import recorded_failure

    found = sorted((a, f) for a, f in _on_workers(client, recorded_failure).items() if isinstance(f, tuple))
    if not found:
        return
    _, (name, payload) = found[0]
    try:
        cause = pickle.loads(payload) if isinstance(payload, bytes) else None
    except Exception:
        cause = None
    if not isinstance(cause, BaseException):
        text = payload if isinstance(payload, str) else "an exception this process cannot unpickle"
        cause = RuntimeError(f"the objective {name} failed on a worker: {text}")
    raise cause


def lightgbm_group(layout: PartitionLayout) -> "da.Array":
    """Group sizes as a Dask array with one chunk per partition (what ``DaskLGBMRanker.fit(group=...)``
    splits alongside ``X``: chunk ``i`` holds the sizes of partition ``i``'s queries)."""
    _, da, _ = dask_modules()
    sizes = np.concatenate([layout.group_sizes(i) for i in range(len(layout.group_ptrs))])
    return da.from_array(sizes, chunks=(tuple(int(n) for n in layout.queries_per_partition),))


def train_lightgbm(client: "Client", frame: "dd.DataFrame", objective: Any, *,
                   objective_params: dict[str, Any] | None = None, label_col: str = "label", qid_col: str = "qid",
                   feature_cols: Sequence[str] | None = None, doc_col: str | None = None,
                   **ranker_params: Any) -> "lgb.DaskLGBMRanker | lgb.Booster":
    """Fit ``lightgbm.dask.DaskLGBMRanker`` with a boostplug objective on a query-partitioned frame.

    Checks the partitions (:func:`check_partitions`) and that every label is finite (LightGBM
    would store a NaN label as 0 unseen), builds the group sizes aligned with
    them and calls ``DaskLGBMRanker(client=client, objective=sklearn_objective(objective,
    **objective_params), **ranker_params).fit(X, y, group=sizes)``.

    Args:
        client: the ``distributed`` client.
        frame: Dask DataFrame with features, ``label_col`` and ``qid_col``
            (see :func:`repartition_by_query`).
        objective: a boostplug objective name (:func:`boostplug.objectives.names`), or a
            :class:`~boostplug.objectives.Loss` subclass or instance, registered or not (it
            travels to the workers with its class, by value when they cannot import its module).
        objective_params: the objective's parameters.
        feature_cols: default: every column but the label, query id and document key.
        doc_col: each row's document key, for a :class:`~boostplug.keyed_pairs.KeyedPairs` in
            ``objective_params`` (QBRank's ``pairs=clicks.preferences(log).keyed()``). Then
            boostplug trains on each worker itself (``lgb.train`` on LightGBM's socket network,
            each worker's ``Dataset`` built with its rows' ``(qid, doc)`` keys, as
            :mod:`boostplug.spark` does), ``n_estimators`` (default 100) is the number of rounds
            and the other ranker parameters are ``lgb.train``'s (LightGBM knows the scikit-learn
            names as aliases): docs/dask.md, "Click pairs keyed by (query, document)".
        **ranker_params: ``DaskLGBMRanker`` parameters (``n_estimators``, ``learning_rate``...);
            ``early_stopping_rounds`` (and its aliases) is refused: LightGBM's Dask interface has no
            early stopping.

    Returns:
        The fitted ``DaskLGBMRanker`` (``.to_local()`` gives an ``LGBMRanker``); with ``doc_col``,
        the ``lgb.Booster``, its objective recorded (:func:`boostplug.lightgbm.save_model`).
    """
    import lightgbm as lgb

    from ..lightgbm.adapters import LightGBMObjective
    from .worker_objective import DaskLightGBMObjective

    require_frame(frame, label_col, qid_col, "train_lightgbm")
    if "objective" in ranker_params:
        raise ValueError("pass the boostplug objective as `objective`, not in the ranker parameters")
    stopping = sorted({"early_stopping_round", "early_stopping_rounds", "early_stopping", "n_iter_no_change"} &
                      set(ranker_params))
    if stopping:  # LightGBM's Dask interface has no early stopping: it fails midway, after the partitions' checks
        raise ValueError(f"train_lightgbm cannot stop early (LightGBM's Dask interface has no early stopping), got "
                         f"{stopping[0]}={ranker_params[stopping[0]]!r}: train n_estimators rounds and choose one with "
                         "boostplug.dask.evaluate on a validation frame, or use boostplug.dask.train_xgboost with "
                         "evals= and early_stopping_rounds=")
    # keyed: lgb.train on each worker, which hands the objective the Dataset (and its num_threads)
    make = DaskLightGBMObjective if doc_col is None else LightGBMObjective
    obj = _distributable(make(objective, dict(objective_params or {})), doc_col).given_training(ranker_params)
    if doc_col is not None:
        check_doc_col(frame, doc_col, label_col, qid_col, feature_cols)
        from ..distributed import lightgbm_worker

        params = lightgbm_worker.prepare_params(ranker_params)
        rounds = check_rounds(params.pop("n_estimators", 100), "n_estimators")
    layout = check_partitions(frame, qid_col, client=client)
    _check_finite_labels(frame, label_col, layout, client)
    cols = _features(frame, feature_cols, (label_col, qid_col, doc_col))
    with _naming_lost_workers(client, "train_lightgbm"), stopping_workers(client) as stop:
        if doc_col is not None:
            return train_on_workers(client, frame, "lightgbm", obj, params, rounds,
                                    docs_per_partition=layout.docs_per_partition, features=cols,
                                    label_col=label_col, qid_col=qid_col, doc_col=doc_col, stop=stop)
        from ..distributed.stop import LightGBMStop

        ranker = lgb.DaskLGBMRanker(client=client, objective=obj, **ranker_params)
        return ranker.fit(frame[cols], frame[label_col], group=lightgbm_group(layout), callbacks=[LightGBMStop(stop)])


def dense_qid(frame: "dd.DataFrame", layout: PartitionLayout, qid_col: str = "qid") -> "dd.Series":
    """Query ids renumbered ``0, 1, 2, ...`` in partition order (int64, sorted across partitions), as
    ``xgboost.dask.DaskDMatrix(qid=...)`` wants: XGBoost needs numeric ids, non-decreasing
    within each worker's data (else it re-sorts every worker's data)."""
    import pandas as pd

    offsets = layout.query_offsets

    def _codes(part: "pd.DataFrame", partition_info: dict[str, Any] | None = None) -> "pd.Series":
        i = partition_info["number"] if partition_info is not None else 0
        q = part[qid_col].to_numpy()
        gp = group_ptr_from_qid(q) if q.shape[0] else np.zeros(1, dtype=np.int64)
        codes = offsets[i] + np.repeat(np.arange(gp.shape[0] - 1, dtype=np.int64), np.diff(gp))
        return pd.Series(codes, index=part.index, name=qid_col)

    return frame.map_partitions(_codes, meta=(qid_col, "int64"))


def train_xgboost(client: "Client", frame: "dd.DataFrame", objective: Any, *,
                  objective_params: dict[str, Any] | None = None, params: dict[str, Any] | None = None,
                  num_boost_round: int = 100, label_col: str = "label", qid_col: str = "qid",
                  feature_cols: Sequence[str] | None = None, doc_col: str | None = None,
                  **train_kwargs: Any) -> dict[str, Any]:
    """``xgboost.dask.train`` with a boostplug objective (a name, or a ``Loss`` subclass or instance:
    as in :func:`train_lightgbm`) on a query-partitioned frame.

    Checks the partitions, builds ``DaskDMatrix(client, X, y, qid=dense_qid)`` and calls
    ``xgboost.dask.train(client, boostplug.xgboost.params(**params), dtrain, num_boost_round,
    obj=boostplug.xgboost.objective(objective, **objective_params), **train_kwargs)``.

    With ``doc_col`` (each row's document key, for a :class:`~boostplug.keyed_pairs.KeyedPairs`
    in ``objective_params``), boostplug trains on each worker itself instead: ``xgb.train`` on
    XGBoost's collective (its tracker in this process), each worker's ``DMatrix`` built with its
    rows' ``(qid, doc)`` keys, as :mod:`boostplug.spark` does (docs/dask.md, "Click pairs keyed by
    (query, document)"); ``train_kwargs`` are then refused.

    Returns:
        XGBoost's ``{"booster": Booster, "history": {...}}`` (with ``doc_col``, an empty history and
        the booster's objective recorded: :func:`boostplug.xgboost.objective_of`).
    """
    import xgboost.dask as xgb_dask

    from ..xgboost.adapters import params as xgb_params
    from ..xgboost.adapters import params_threads
    from .worker_objective import DaskXGBoostObjective

    require_frame(frame, label_col, qid_col, "train_xgboost")
    check_rounds(num_boost_round, "num_boost_round")
    obj = _distributable(DaskXGBoostObjective(objective, dict(objective_params or {})), doc_col).given_training(
        params or {})
    if doc_col is not None:
        from ..distributed import xgboost_worker

        check_doc_col(frame, doc_col, label_col, qid_col, feature_cols)
        if train_kwargs:
            raise ValueError(f"with doc_col, train_xgboost trains on each worker itself and takes no "
                             f"xgboost.dask.train arguments: got {sorted(train_kwargs)}")
    layout = check_partitions(frame, qid_col, client=client)
    cols = _features(frame, feature_cols, (label_col, qid_col, doc_col))
    if doc_col is not None:
        _check_finite_labels(frame, label_col, layout, client)  # before any worker waits for its peers
    with _naming_lost_workers(client, "train_xgboost"), stopping_workers(client) as stop:
        if doc_col is not None:
            booster = train_on_workers(client, frame, "xgboost", obj, xgboost_worker.prepare_params(params or {}),
                                       num_boost_round, docs_per_partition=layout.docs_per_partition, features=cols,
                                       label_col=label_col, qid_col=qid_col, doc_col=doc_col, stop=stop)
            return {"booster": booster, "history": {}}
        from ..distributed.stop import XGBoostStop

        dtrain = xgb_dask.DaskDMatrix(client, frame[cols], frame[label_col], qid=dense_qid(frame, layout, qid_col))
        threads = params_threads(params or {})  # None: each worker's own count, which the worker reads
        callbacks = [*(train_kwargs.pop("callbacks", None) or []), XGBoostStop(stop)]
        return xgb_dask.train(client, xgb_params(**(params or {})), dtrain, num_boost_round,
                              obj=obj if threads is None else obj.given_threads(threads), callbacks=callbacks,
                              **train_kwargs)
