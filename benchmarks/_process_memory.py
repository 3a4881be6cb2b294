"""The resident memory of this process, from ``/proc/self`` (Linux): the benchmarks' peak readings."""

from __future__ import annotations


def status_kib(field: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``, ...); 0 where absent."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak() -> int:
    """Start a new peak: the kernel's high-water mark of resident memory (``VmHWM``) restarts at
    the current RSS, which is returned in KiB."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return status_kib("VmRSS")


def peak_gib() -> float:
    """``VmHWM`` in GiB."""
    return status_kib("VmHWM") / 2**20
