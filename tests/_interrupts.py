"""Interrupting a distributed training as a notebook does (a KeyboardInterrupt raised in the driver's
main thread while it waits for the workers), and watching from outside whether the workers stop:
each writes its round count to a file (:class:`tests._objectives.CountsRounds`). And where
``boostplug compare`` trains when a test calls it in its own process (:func:`compare_trains_in_this_process`)."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from tests._objectives import rounds_counted


@contextmanager
def interrupt_at_round(progress_dir: Path, rounds: int = 3) -> Iterator[dict]:
    """A KeyboardInterrupt in the main thread (a signal timer polling every 0.1 s) once a worker has
    counted ``rounds`` rounds; the dict given gets ``"after"``: the seconds from entering the block
    to the interrupt."""
    seen: dict = {}
    start = time.monotonic()

    def tick(*_):
        counts = rounds_counted(progress_dir)
        if counts and max(counts.values()) >= rounds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            seen["after"] = time.monotonic() - start
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, tick)
    signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
    try:
        yield seen
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def counts_once_still(progress_dir: Path, *, within: float, still: float = 2.0) -> dict:
    """The workers' round counts once they stopped changing for ``still`` seconds; an
    AssertionError with the counts if they still change ``within`` seconds from now."""
    deadline = time.monotonic() + within
    last, since = rounds_counted(progress_dir), time.monotonic()
    while True:
        time.sleep(0.25)
        now = rounds_counted(progress_dir)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            return now
        assert time.monotonic() < deadline, f"the workers still train {within:g} s after the interrupt: {now}"


def tracker_threads() -> list[str]:
    """The names of this process's threads that run XGBoost's tracker."""
    return [t.name for t in threading.enumerate() if "tracker" in t.name.lower() or "wait_for" in t.name]


def listening_ports() -> set[int]:
    """The TCP ports this process listens on."""
    import psutil

    proc = psutil.Process()
    conns = proc.net_connections("tcp") if hasattr(proc, "net_connections") else proc.connections("tcp")
    return {c.laddr.port for c in conns if c.status == psutil.CONN_LISTEN}


@pytest.fixture(autouse=True)
def compare_trains_in_this_process(monkeypatch) -> None:
    """``boostplug compare`` called in the test's process trains there, also with ``--jobs 1`` (the
    command trains in a worker process, where a signal ends it): the tests' patches of its training
    reach it, and no worker starts per call. A test of the worker path sets ``IN_WORKERS`` back, and
    the real command is tested in real processes (tests/compare/test_runtime.py)."""
    monkeypatch.setattr("boostplug.cli.compare.IN_WORKERS", False)
