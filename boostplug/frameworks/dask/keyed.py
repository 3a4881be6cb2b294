"""Keyed pairs on Dask: training with boostplug's own task on each worker, for an objective given a
:class:`~boostplug.keyed_pairs.KeyedPairs` table (why, and what each task builds and trains on:
docs/dask.md, "Click pairs keyed by (query, document)"; the networks: :mod:`boostplug.frameworks.distributed`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..distributed.rows import Part
from .stopping import stopped_on_error

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client

    from ..distributed.stop import StopFlag

__all__ = ["check_doc_col", "train_on_workers"]


def check_doc_col(frame: "dd.DataFrame", doc_col: Any, label_col: str, qid_col: str,
                  feature_cols: Sequence[str] | None) -> None:
    """``doc_col`` names a column of its own: not missing, not the label, query id or a feature."""
    if doc_col not in frame.columns:
        raise ValueError(f"no document-key column doc_col={doc_col!r} in the frame; its columns are "
                         f"{list(frame.columns)}")
    for role, col in (("label", label_col), ("query-id", qid_col)):
        if doc_col == col:
            raise ValueError(f"doc_col={doc_col!r} is also the {role} column; the document keys need a column of "
                             "their own")
    if feature_cols is not None and doc_col in feature_cols:
        raise ValueError(f"doc_col={doc_col!r} is also in feature_cols; a document key is not a feature")


def _host(address: str) -> str:
    """The host of a Dask address (loopback for an in-process cluster)."""
    from distributed.comm import get_address_host, parse_address

    return "127.0.0.1" if parse_address(address)[0] == "inproc" else get_address_host(address)


def _worker_rows(parts: list["pd.DataFrame"], features: list[str], label_col: str, qid_col: str,
                 doc_col: str) -> Part:
    """One worker's partitions, in partition order, as the arrays its training set is built from."""
    import pandas as pd

    rows = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return Part.of_frame(rows, rows[features].to_numpy(np.float64), label_col, qid_col, doc_col=doc_col)


def _check_keys(part: "pd.DataFrame", partition: int, qid_col: str, doc_col: str, tables: dict[str, Any]) -> None:
    """Map every keyed table onto one partition's rows (its queries are whole, so as onto its
    worker's): a bad key fails here, before any worker waits for its peers on the network."""
    for name, table in tables.items():
        try:
            table.rows(part[qid_col].to_numpy(), part[doc_col].to_numpy())
        except ValueError as exc:
            raise ValueError(f"objective_params[{name!r}] on partition {partition} (local rows): {exc}") from None


def _train_task(train_part: Any, parts: list["pd.DataFrame"], columns: tuple[list[str], str, str, str],
                params: dict[str, Any], obj: Any, num_boost_round: int, stop: "StopFlag", **network: Any) -> Any:
    """One worker's training: the framework's ``train_part`` on its partitions, ``network`` its
    place in the framework's network (LightGBM's machines, XGBoost's tracker)."""
    return train_part(_worker_rows(parts, *columns), params, obj, num_boost_round, stop=stop, **network)


def _gather_while_alive(client: "Client", futures: list[Any], workers: list[str]) -> list[Any]:
    """``client.gather(futures)`` of tasks pinned to ``workers``, failing as soon as one task fails
    (its error, the others cancelled) or one of ``workers`` leaves the cluster (a CancelledError):
    a pinned task of a dead worker would wait forever, and its peers on the network with it."""
    from concurrent.futures import CancelledError

    checked = time.monotonic()
    while True:
        if all(f.status == "finished" for f in futures):
            return client.gather(futures)
        failed = next((f for f in futures if f.status in ("error", "cancelled")), None)
        if failed is not None:
            client.cancel([f for f in futures if f is not failed])
            failed.result()  # raises the task's error (or Dask's FutureCancelledError)
        if time.monotonic() - checked > 1.0:
            checked = time.monotonic()
            gone = sorted(set(workers) - set(client.scheduler_info()["workers"]))
            if gone:
                client.cancel(futures)
                raise CancelledError(f"the training tasks pinned to {gone} cannot run: the worker left the cluster")
        time.sleep(0.1)


def train_on_workers(client: "Client", frame: "dd.DataFrame", framework: str, obj: Any, params: dict[str, Any],
                     num_boost_round: int, *, docs_per_partition: np.ndarray, features: list[str],
                     label_col: str, qid_col: str, doc_col: str, stop: "StopFlag") -> Any:
    """Train ``framework`` (``"lightgbm"``, ``"xgboost"``) on a checked query-whole frame: one task
    on each worker holding rows, on its partitions, all joined in one network; the booster, its
    objective recorded.

    The partitions are computed where they are (a persisted frame stays put) and each worker
    trains on those it holds, as ``lightgbm.dask`` assigns them. Each worker trains with its
    ``nthreads`` unless ``params`` sets the framework's thread count. ``stop``: the training's
    flag; a failure or an interrupt sets it and cancels the tasks (:func:`stopped_on_error`)."""
    from distributed import wait

    # the workers' modules load numba and the frameworks: only when training starts (import boostplug.dask stays light)
    from ..distributed import lightgbm_worker, xgboost_worker

    columns = (features, label_col, qid_col, doc_col)
    computed = client.compute(list(frame[[*features, label_col, qid_col, doc_col]].to_delayed()))
    parts = [p for p, n in zip(computed, docs_per_partition) if n > 0]
    wait(parts)
    # the tables go to each worker once, not with every partition's check
    [tables] = client.scatter([obj.keyed_given], broadcast=True, hash=False)
    client.gather([client.submit(_check_keys, p, i, qid_col, doc_col, tables, pure=False)
                   for i, p in enumerate(computed)])
    holders = client.who_has(parts)
    by_worker: dict[str, list[Any]] = {}
    for part in parts:
        by_worker.setdefault(next(iter(holders[part.key])), []).append(part)
    workers = list(by_worker)
    ncores = client.ncores(workers)
    pinned = {"allow_other_workers": False, "pure": False}  # each task needs its own worker's partitions and peers
    lightgbm = framework == "lightgbm"
    if lightgbm:
        from ..lightgbm.adapters import params_threads

        worker, threads_key = lightgbm_worker, "num_threads"
    else:
        from ..xgboost.adapters import params_threads

        worker, threads_key = xgboost_worker, "nthread"
    # each worker trains with its nthreads unless params set the framework's count
    own = params_threads(params) is not None

    def train(w: str, **network: Any) -> Any:
        return client.submit(_train_task, worker.train_part, by_worker[w], columns,
                             params if own else {**params, threads_key: ncores[w]}, obj, num_boost_round, stop,
                             workers=[w], **pinned, **network)

    if lightgbm:
        ports = client.gather({w: client.submit(lightgbm_worker.free_port, _host(w), workers=[w], **pinned)
                               for w in workers})
        machines = ",".join(f"{_host(w)}:{ports[w]}" for w in workers)
        futures = [train(w, machines=machines, port=ports[w], n_workers=len(workers)) for w in workers]
        with stopped_on_error(client, futures, stop):
            return worker.record_objective(worker.load(_gather_while_alive(client, futures, workers)[0]), obj)
    from distributed.utils import get_ip

    # The tracker runs here, at this machine's address on the route to the scheduler (the workers connect to it).
    with xgboost_worker.Tracker(get_ip(_host(client.scheduler.address)), len(workers)) as tracker:
        futures = [train(w, tracker_args=tracker.args, task_id=str(i)) for i, w in enumerate(workers)]
        with stopped_on_error(client, futures, stop):
            return worker.record_objective(worker.load(_gather_while_alive(client, futures, workers)[0]), obj)
