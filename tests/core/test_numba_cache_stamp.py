"""numba keys a ``cache=True`` kernel by its own source file only: boostplug's cache files are
stamped with a digest of its version and every source file of the package too
(boostplug._numba_cache.package_digest), so a new or edited boostplug never loads the kernels an
older one compiled (a metric weight fixed in another module than the kernel's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba.core.caching import FunctionCache

from boostplug import _numba_cache


def test_the_source_digest_follows_the_version_and_every_source_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "sub" / "b.py").write_text("B = 1\n")
    first = _numba_cache.source_digest(tmp_path, "1.0")
    assert _numba_cache.source_digest(tmp_path, "1.0") == first
    assert _numba_cache.source_digest(tmp_path, "1.1") != first
    (tmp_path / "sub" / "b.py").write_text("B = 2\n")
    assert _numba_cache.source_digest(tmp_path, "1.0") != first
    (tmp_path / "sub" / "b.py").write_text("B = 1\n")
    (tmp_path / "sub" / "c.py").write_text("")
    assert _numba_cache.source_digest(tmp_path, "1.0") != first


def test_kernels_cached_by_another_boostplug_are_not_loaded(monkeypatch) -> None:
    from boostplug._core import calibration

    kernel = calibration._probe  # a cache=True kernel of the package, quick to compile
    out = np.empty(1)
    kernel(np.zeros(4), np.array([0.0, 1.0, 0.0, 1.0]), np.array([0, 4]), out)  # compiled or loaded: now cached
    (sig,) = kernel.signatures
    assert FunctionCache(kernel.py_func)._cache_file._source_stamp[1] == _numba_cache.package_digest()
    assert FunctionCache(kernel.py_func).load_overload(sig, kernel.targetctx) is not None
    monkeypatch.setattr(_numba_cache, "_PACKAGE_DIGEST", ["another boostplug"])
    assert FunctionCache(kernel.py_func).load_overload(sig, kernel.targetctx) is None
