"""The benchmarks' timing loop: the wall-clock seconds of each of a few calls."""

from __future__ import annotations

import time
from typing import Any, Callable


def call_seconds(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Seconds (``time.perf_counter``) of each of ``repeat`` calls of ``fn``, in order; no warm-up."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times
