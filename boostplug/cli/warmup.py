"""``boostplug warmup``: compile every numba kernel once, into numba's cache.

boostplug's kernels are compiled by numba on first use and cached on disk (beside the installed
package, or in ``NUMBA_CACHE_DIR``). A fresh environment (a container, a CI job, a Spark or Dask
executor) pays the compilation on its first calls: seconds per entry point. ``boostplug warmup``
runs every entry point once on a few documents, each kernel in its serial and its parallel form,
so that an image built after it, or executors sharing its ``NUMBA_CACHE_DIR``, start warm. It
prints how many kernels it compiled, found cached, or compiled without a cache (:func:`kernel_counts`);
run twice, the second run compiles nothing into the cache.

numba keys its cache by CPU: a cache built on one CPU model is not used on another, unless both
set the same ``NUMBA_CPU_NAME`` (``generic`` for any x86-64 CPU, at some cost in speed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from .errors import subcommand

__all__ = ["add_parser", "run", "warm_up", "kernel_counts"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``warmup`` subcommand on an argparse subparsers object."""
    return subcommand(
        subparsers, "warmup", run, help="compile every kernel once into numba's cache (for images, CI and executors)",
        description="Compile boostplug's numba kernels once, serial and parallel forms, by running every objective, "
                    "metric, booster, click-log and LETOR-reading entry point on a few documents, so that later "
                    "processes load them from numba's cache (beside the package, or NUMBA_CACHE_DIR). numba keys "
                    "the cache by CPU: set the same NUMBA_CPU_NAME (e.g. generic) where the cache is built and used.")


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    steps = warm_up()
    compiled, cached, uncached = kernel_counts()
    print(f"boostplug warmup: {steps} entry points run in {time.perf_counter() - start:.1f} s; "
          f"{compiled} kernel signatures compiled into numba's cache, {cached} loaded from it; "
          f"{uncached} compiled that numba cannot cache (each process compiles them again)")
    return 0


def warm_up() -> int:
    """Run every entry point with kernels forced serial, then parallel; the number of steps run."""
    from .._core import dispatch

    before = dispatch.PARALLEL_MIN_WORK
    steps = 0
    try:
        for threshold in (sys.maxsize, 0):  # serial twins, then the parallel kernels
            dispatch.PARALLEL_MIN_WORK = threshold
            for step in _steps():
                step()
                steps += 1
    finally:
        dispatch.PARALLEL_MIN_WORK = before
    return steps


def kernel_counts() -> tuple[int, int, int]:
    """``(compiled, loaded, uncacheable)``: kernel signatures of this process's boostplug
    dispatchers (serial twins included) that numba compiled into its cache, that it read from
    its cache, and that it compiled without a cache. The pair loops of the pairwise and lambda-weighted
    objectives are compiled per objective class, each from a file of its own, cached like the rest
    and found through their serial twins; those of a class whose pair functions read a global that
    cannot be digested are compiled by every process again (:mod:`boostplug._core.class_kernels`)."""
    from numba.core.caching import NullCache

    compiled = cached = uncached = 0
    for dispatcher in _dispatchers():
        stats = dispatcher.stats
        if isinstance(dispatcher._cache, NullCache):
            uncached += len(stats.cache_misses)
        else:
            compiled += len(stats.cache_misses)
            cached += len(stats.cache_hits)
    return compiled, cached, uncached


def _dispatchers() -> Iterator[Any]:
    from numba.core.dispatcher import Dispatcher

    from .._core import dispatch

    candidates = [v for name, mod in list(sys.modules.items()) if name.startswith("boostplug") and mod
                  for v in list(vars(mod).values())]
    # kernels made by a factory (the metrics' per-ties kernels) are no module's attribute: the
    # parallel kernels that have a serial twin (every kernel warm_up ran serial first) are
    yield from {id(v): v for v in [*candidates, *dispatch._SERIAL, *dispatch._SERIAL.values()]
                if isinstance(v, Dispatcher)}.values()  # each once, in order of appearance


def _steps() -> Iterator[Callable[[], None]]:
    from ..data import make_ranking

    d = make_ranking(n_queries=12, docs_per_query=(3, 12), n_features=5, n_labels=3, seed=0)
    scores = np.random.default_rng(0).normal(size=d.n_docs)
    yield lambda: _objectives(d, scores)
    yield lambda: _metrics(d, scores)
    yield lambda: _boosters(d)
    yield lambda: _frameworks(d)
    yield lambda: _clicks(d, scores)
    yield lambda: _letor(d)


def _objective_settings(objective: Any) -> Iterator[dict[str, Any]]:
    """The defaults, then each choice of each choice parameter and each flag flipped."""
    yield {}
    for name, param in objective.loss_class.declared_params().items():
        if param.kind == "choice":
            for choice in param.choices:
                if choice != param.default:
                    yield {name: choice}
        elif param.kind == "bool":
            yield {name: not param.default}


def _objectives(d: Any, scores: np.ndarray) -> None:
    from .. import objectives

    for name in objectives.names():
        entry = objectives.get(name)
        if hasattr(entry.loss_class, "query_loss"):
            continue  # a loss written in JAX: compiled per data shape into JAX's cache, not numba's
        for settings in _objective_settings(entry):
            try:
                loss = entry.prepare(d.y, d.group_ptr, **settings)
            except (ValueError, TypeError):
                continue  # a setting that needs more than labels and groups (another parameter, row indices)
            loss.grad_hess(scores)
            loss.loss(scores)


def _metrics(d: Any, scores: np.ndarray) -> None:
    from .. import metrics

    for name in ("ndcg", "ndcg@5", "dcg@5", "map", "precision@5", "mrr", "err", "r1", "r2"):
        fn = metrics.by_name(name)
        fn(scores, d.y, d.group_ptr)
        fn(scores, d.y, d.group_ptr, per_query=True)
    # each tie convention has kernels of its own (metrics._kernels: one per ties and metric)
    for ties in ("average", "worst"):
        metrics.ndcg(scores, d.y, d.group_ptr, 5, ties=ties)
        metrics.average_precision(scores, d.y, d.group_ptr, ties=ties)
        metrics.precision(scores, d.y, d.group_ptr, 5, ties=ties)
        metrics.reciprocal_rank(scores, d.y, d.group_ptr, ties=ties)
    metrics.err(scores, d.y, d.group_ptr, ties="worst")


def _boosters(d: Any) -> None:
    from .. import boosters

    settings = [("RankBoost", {"variant": v}) for v in ("rb-d", "rb-c", "rankboost+")]
    settings += [("AdaRank", {"measure": m}) for m in ("map", "ndcg@5")]
    settings += [("MPBoost", {"ddf": f}) for f in ("binary", "ldd", "logdd", "logitdd")]
    settings += [("NDCGBoost", {})]
    for name, params in settings:
        getattr(boosters, name)(n_rounds=2, **params).fit(d.X, d.y, qid=d.qid)


def _frameworks(d: Any) -> None:
    import lightgbm as lgb
    import xgboost as xgb

    from .. import lightgbm as bpl
    from .. import xgboost as bpx

    params = {"objective": bpl.objective("qbrank"), "verbose": -1, "num_threads": 1, "min_data_in_leaf": 2}
    lgb.train(params, bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), 2, feval=bpl.metric("ndcg@5"))
    xgb.train(bpx.params(nthread=1), bpx.dmatrix(d.X, d.y, qid=d.qid), 2, obj=bpx.objective("qbrank", threads=1))


def _clicks(d: Any, scores: np.ndarray) -> None:
    from .. import clicks

    log = clicks.simulate(d, scores, 100, seed=0)
    clicks.preferences(log)


def _letor(d: Any) -> None:
    from ..data import load_letor, write_letor

    with tempfile.TemporaryDirectory(prefix="boostplug-warmup-") as folder:
        path = Path(folder) / "warmup.txt"
        write_letor(path, d)
        load_letor(path)
