"""How much memory this process can still allocate, as far as the system tells.

Used to refuse, before allocating, work that cannot fit: the preference pairs of
:mod:`boostplug.pairs` and the per-round scores of ``boostplug compare``.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["available_memory", "check_fits", "format_bytes"]


def _proc_bytes(path: str, field: bytes) -> int | None:
    """A ``kB`` field of a /proc file in bytes (``None`` where there is none)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(field + b":"):
                    return int(line.split()[1]) * 1024
    return None


def available_memory() -> int | None:
    """Bytes this process can still allocate without swapping: the smallest of the system's
    available memory (``MemAvailable`` of /proc/meminfo, else ``os.sysconf``'s available
    pages), the room left under a cgroup memory limit and under the address-space and data
    rlimits; ``None`` when the system tells none of them."""
    available = _proc_bytes("/proc/meminfo", b"MemAvailable")
    limits = [] if available is None else [available]
    if not limits:
        with contextlib.suppress(AttributeError, OSError, ValueError):
            limits.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        with contextlib.suppress(OSError, ValueError):
            top = Path(limit_file).read_text().strip()
            if top != "max" and int(top) < 2**60:  # cgroup v1 writes a huge number for no limit
                limits.append(int(top) - int(Path(usage_file).read_text()))
    with contextlib.suppress(ImportError):
        import resource

        for rlimit, field in ((resource.RLIMIT_AS, b"VmSize"), (resource.RLIMIT_DATA, b"VmData")):
            soft, _ = resource.getrlimit(rlimit)
            if soft != resource.RLIM_INFINITY:
                limits.append(soft - (_proc_bytes("/proc/self/status", field) or 0))
    return max(0, min(limits)) if limits else None


def format_bytes(n_bytes: float) -> str:
    """``"12.3 GiB"`` (from 1 GiB up) or ``"1,234 bytes"``, for a message."""
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{int(n_bytes):,} bytes"


def check_fits(need: int, what: str, remedy: str) -> None:
    """A ``ValueError`` when ``need`` bytes (a lower bound of what ``what`` allocates) exceed
    :func:`available_memory`: the message gives both and ``remedy``. Nothing when the system
    does not say how much memory is available."""
    available = available_memory()
    if available is not None and need > available:
        raise ValueError(f"{what} would need at least {format_bytes(need)}, more than the {format_bytes(available)} "
                         f"of memory available; {remedy}")
