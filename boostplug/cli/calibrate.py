"""``boostplug calibrate``: measure from which work boostplug's kernels run in parallel on this machine.

boostplug runs each numba kernel serially or in parallel by the work of the call
(:mod:`boostplug._core.dispatch`). The default switch point was measured on one CPU; ``boostplug
calibrate`` times a probe kernel serially and in parallel (about a second), scales the default by
how this machine compares, prints the result and caches it for this CPU and thread count, where
every later process reads it. It measures twice, in a child process for each way idle OpenMP
threads can wait (``OMP_WAIT_POLICY`` unset, and ``PASSIVE``, which the ``boostplug`` command
sets: its sleeping threads take tens of microseconds to wake). Run it once per machine (or image), on idle cores: busy cores make
parallel calls look slower than they are. ``BOOSTPLUG_PARALLEL_MIN_WORK`` overrides the cache.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .errors import subcommand
from .errors import UsageError, usage_errors

__all__ = ["add_parser", "run", "describe"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``calibrate`` subcommand on an argparse subparsers object."""
    p = subcommand(
        subparsers, "calibrate", run,
        help="measure from which work the kernels run in parallel on this CPU, and cache it",
        description="Time a probe kernel serially and in parallel, derive from which work boostplug's kernels run in "
                    "parallel on this CPU (its name, the CPU count, numba's thread count), print it and store it in the "
                    "user's cache folder (boostplug/dispatch.json), where later processes read it. Run it on idle "
                    "cores. BOOSTPLUG_PARALLEL_MIN_WORK overrides the stored value.")
    p.add_argument("--no-store", action="store_true", help="print the measurement only; do not write the cache")
    p.add_argument("--file", type=Path, default=None,
                   help="the cache file to write (default: boostplug/dispatch.json in the user's cache folder)")
    p.add_argument("--repeat", type=int, default=9, help="timed calls per input, best kept (default 9)")
    return p


def describe(cal: Any) -> str:
    """The measurement and the threshold, in words."""
    from .._core import calibration as c

    lines = [
        f"machine               {cal.key}",
        f"parallel start-up     {cal.start_s * 1e6:.2f} us more than a serial call",
        f"serial time per unit  {cal.serial_per_unit_s * 1e9:.2f} ns",
        f"parallel speedup      {cal.speedup:.2f}x on {cal.threads} threads",
    ]
    if cal.crossover is None:
        why = "one CPU" if "|cpus=1|" in cal.key else f"speedup below {c.MIN_SPEEDUP}"
        lines.append(f"parallel pays from    never ({why})")
        lines.append("threshold             never: every kernel runs serially")
    else:
        ref = c.REFERENCE.crossover[cal.key.rsplit("wait=", 1)[-1]]
        lines.append(f"parallel pays from    {cal.crossover:,.0f} units "
                     f"({ref:,.0f} on the {c.REFERENCE.cpu} CPU the default was measured on)")
        lines.append(f"threshold             {cal.parallel_min_work:,} units (default {c.DEFAULT_PARALLEL_MIN_WORK:,})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from .._core import calibration, parallel_threshold

    if args.repeat < 1:
        raise UsageError(f"--repeat must be 1 or more, got {args.repeat}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cpus = parallel_threshold.available_cpus()
    if load > 0.5 * cpus:
        print(f"warning: load average {load:.2f} on {cpus} CPUs: busy cores make parallel calls look slower "
              "than they are; calibrate on idle cores", file=sys.stderr)
    with usage_errors():
        cals = calibration.calibrate_each_wait_policy(repeat=args.repeat)
    for cal in cals:
        print(describe(cal))
        if not args.no_store:
            print(f"stored in {calibration.store(cal, args.file)}")
        print()
    return 0
