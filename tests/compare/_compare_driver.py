"""``boostplug compare`` with one method that never finishes, for the signal and lock tests.

Run as a script: ``python _compare_driver.py ARGS`` is ``boostplug compare ARGS``, except that the
method named in ``$COMPARE_DRIVER_BLOCK`` blocks forever once started. Every run, as it starts,
creates ``$COMPARE_DRIVER_SYNC/<method>.<fold>.<pid>``: the tests wait on these files instead of
sleeping. The patch is made at import, so spawned workers (which import this file as their
``__mp_main__``) get it too.

Pauses at chosen moments, for signals sent there: ``$COMPARE_DRIVER_PAUSE`` is ``write`` (the
last writing of the results starts, after the table) or ``move:N`` (before the N-th rename of a swap
of result sets in ``--out``, counting those of the sets written as each run ends) or ``last-move:N`` (the
N-th rename of the last writing's swap); the process creates ``$COMPARE_DRIVER_SYNC/paused.<pid>`` there
and waits until ``$COMPARE_DRIVER_SYNC/go`` exists. ``$COMPARE_DRIVER_HANG_AT_START=1``: a
spawned worker creates ``starting.<pid>`` and hangs while it starts up (as in its slow imports),
before any code of the pool runs in it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from boostplug.compare import execution

_real_run_method = execution.run_method


def _run_method(name, *args, **kwargs):
    sync = os.environ.get("COMPARE_DRIVER_SYNC")
    if sync:
        Path(sync, f"{name}.{kwargs.get('fold', 0)}.{os.getpid()}").touch()
    if name == os.environ.get("COMPARE_DRIVER_BLOCK"):
        while True:
            time.sleep(0.05)
    return _real_run_method(name, *args, **kwargs)


execution.run_method = _run_method


def _pause() -> None:
    sync = Path(os.environ["COMPARE_DRIVER_SYNC"])
    (sync / f"paused.{os.getpid()}").touch()
    while not (sync / "go").exists():
        time.sleep(0.01)


def _pause_in_writing(point: str) -> None:
    """Pause in the study's last writing: not in the sets written as each run ends (an interrupted
    study's, during training), but in the one written after the table."""
    from boostplug.cli import compare as cli_compare

    real_write, final = cli_compare.write_outputs, [False]

    def write_outputs(folder, results, *args, **kwargs):
        final[0] = final[0] or not results.interrupted
        if final[0] and point == "write":
            _pause()
        return real_write(folder, results, *args, **kwargs)

    cli_compare.write_outputs = write_outputs
    if point.startswith(("move:", "last-move:")):
        nth, real_replace, moves, last = int(point.split(":")[1]), os.replace, [0], point.startswith("last")

        def replace(src, dst, *args, **kwargs):
            if (final[0] or not last) and not str(src).endswith(".tmp"):  # a rename of a swap, not of an atomic write
                moves[0] += 1
                if moves[0] == nth:
                    _pause()
            return real_replace(src, dst, *args, **kwargs)

        os.replace = replace


if __name__ == "__main__" and os.environ.get("COMPARE_DRIVER_PAUSE"):
    _pause_in_writing(os.environ["COMPARE_DRIVER_PAUSE"])

if __name__ == "__mp_main__" and os.environ.get("COMPARE_DRIVER_HANG_AT_START"):
    Path(os.environ["COMPARE_DRIVER_SYNC"], f"starting.{os.getpid()}").touch()
    while True:
        time.sleep(0.05)

if __name__ == "__main__":
    from boostplug.cli import main

    sys.exit(main(["compare", *sys.argv[1:]]))
