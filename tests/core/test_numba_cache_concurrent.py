"""Two processes saving kernels of one function into one cache folder at once keep every entry,
each pointing at its own data (boostplug._numba_cache: saves under the folder's lock; numba's own
save, a read-modify-write of the index, loses entries or points one at the other's data file)."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import pytest

SAVES = 150


def _save_many(folder: str, who: str, start: object) -> None:
    import boostplug  # noqa: F401  (installs the guard when numba loads)
    from numba.core.caching import IndexDataCacheFile

    cache = IndexDataCacheFile(folder, "kernel", ("stamp", 1))
    start.wait()
    for i in range(SAVES):
        cache.save((who, i), f"{who}-{i}")


@pytest.mark.skipif(sys.platform == "win32", reason="the lock is POSIX flock (numba's own save on Windows)")
def test_concurrent_saves_keep_every_entry_with_its_own_data(tmp_path: Path) -> None:
    from numba.core.caching import IndexDataCacheFile

    import boostplug  # noqa: F401

    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    workers = [ctx.Process(target=_save_many, args=(str(tmp_path), who, start)) for who in ("a", "b")]
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    cache = IndexDataCacheFile(str(tmp_path), "kernel", ("stamp", 1))
    index = cache._load_index()
    assert sorted(index) == sorted((who, i) for who in ("a", "b") for i in range(SAVES))
    assert len(set(index.values())) == 2 * SAVES
    for key in index:
        assert cache.load(key) == f"{key[0]}-{key[1]}"
