"""Helpers the test modules import (the fixtures are in conftest.py): where the real data is (and
the skip that names a missing data set), small random rankings, train/validation/test splits, a graded problem for the QBRank LightGBM tests, a kernel run parallel then serial, LightGBM's validation-set keywords, whether read-only mounts can be made."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
MQ2008 = SHARED_DATA / "MQ2008"
OHSUMED = SHARED_DATA / "OHSUMED"
LGB_EXAMPLE = SHARED_DATA / "LightGBM_lambdarank"

#: What each real data set's folder holds and where it comes from, for the skip message.
DATA_SOURCES = {
    "MQ2008": "LETOR 4.0, Microsoft Research",
    "OHSUMED": "LETOR 3.0, Microsoft Research",
    "LightGBM_lambdarank": "LightGBM's examples/lambdarank, MIT license",
}


def need_data(path: Path) -> Path:
    """``path`` if it exists, else skip the test, naming the data set, where it comes from and where
    it was looked for."""
    __tracebackhide__ = True   # the skip is reported at the calling test's line, not here
    if not path.exists():
        import pytest

        source = DATA_SOURCES.get(path.name)
        what = f"{path.name} ({source}; see docs/data.md 'Public data sets')" if source else \
            f"{path.name} (see docs/data.md 'Public data sets')"
        pytest.skip(f"{what} not found at {path}")
    return path


def lgbm_eval_kwargs(X, y) -> dict:
    """One validation set for ``LGBMModel.fit``: ``eval_X``/``eval_y`` where LightGBM has them
    (4.7 deprecates ``eval_set``), else ``eval_set``."""
    import inspect

    import lightgbm as lgb

    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:
        return {"eval_X": (X,), "eval_y": (y,)}
    return {"eval_set": [(X, y)]}


def random_ranking(rng: np.random.Generator, n_queries: int = 6, max_docs: int = 9,
                   n_labels: int = 4, tie_prob: float = 0.3):
    """Small random (scores, labels, group_ptr) with ties, single-doc and all-zero queries."""
    sizes = rng.integers(1, max_docs + 1, size=n_queries)
    sizes[0] = 1
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(group_ptr[-1])
    labels = rng.integers(0, n_labels, size=n).astype(np.float64)
    if n_queries > 1:
        labels[group_ptr[1]:group_ptr[2]] = 0.0  # an all-zero query
    scores = np.round(rng.normal(size=n), 1)  # rounding makes ties
    tie = rng.random(n) < tie_prob
    scores[tie] = 0.0
    return scores, labels, group_ptr


def can_mount_read_only() -> bool:
    """Whether this process can make read-only mounts in a private mount namespace (Linux, root,
    ``unshare -m``): the tests of writes to a really read-only folder need it."""
    import shutil

    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro tmpfs /mnt"], capture_output=True,
                           timeout=30)
    return probe.returncode == 0


def linear_graded_problem(seed: int = 0, n_queries: int = 30, max_docs: int = 13, one_grade_first: bool = False):
    """``(X, y, sizes, group_ptr)``: queries of 2 to ``max_docs`` documents, five normal features,
    grades 0-4 rounded from ``x0 + x1 / 2`` plus noise; ``one_grade_first``: the first query all grade 2
    (a single-label query)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_docs + 1, size=n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 5))
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) + 1), 0, 4)
    if one_grade_first:
        y[:sizes[0]] = 2.0
    gp = np.concatenate(([0], np.cumsum(sizes)))
    return X, y, sizes, gp


def parallel_then_serial(monkeypatch, compute) -> list:
    """``[compute(), compute()]``, the first forced parallel on two threads (where numba has them),
    the second forced serial (``dispatch.PARALLEL_MIN_WORK`` 0, then beyond any work); numba's thread
    count is restored after."""
    import numba

    from boostplug._core import dispatch

    outs = []
    old = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        for threshold in (0, 10**18):
            monkeypatch.setattr(dispatch, "PARALLEL_MIN_WORK", threshold)
            outs.append(compute())
    finally:
        numba.set_num_threads(old)
    return outs


def three_way_split(data, test_size, vali_size):
    """``(train, vali, test)`` of ``data`` by query: ``test_size`` queries for test (seed 0), then
    ``vali_size`` of the rest for validation (seed 1)."""
    from boostplug.data import train_test_split_by_query

    rest, test = train_test_split_by_query(data, test_size=test_size, seed=0)
    train, vali = train_test_split_by_query(rest, test_size=vali_size, seed=1)
    return train, vali, test


@contextlib.contextmanager
def fifo_in(folder: Path) -> Iterator[Path]:
    """A FIFO in ``folder`` that a test cannot hang on: while the block runs, a thread opens it
    for writing (non-blocking, so only once a reader waits) and closes it at once, so that a read
    that should have been refused ends, reading nothing, instead of blocking forever."""
    import threading

    path = folder / "fifo"
    os.mkfifo(path)
    stop = threading.Event()

    def unblock() -> None:
        while not stop.wait(0.05):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nothing reads it
                continue
            os.close(fd)

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join()
