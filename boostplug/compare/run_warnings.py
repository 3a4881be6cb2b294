"""The warnings a run raises, kept with it (``info["warnings"]`` of its :class:`.protocol.Result`) wherever it
trains: in this process, a ``--jobs`` worker or a Dask worker (where they would otherwise reach only the worker's
log); the report shows each distinct one once (:func:`.report.warnings_note`).

A Dask worker runs several tasks at once in threads, and :class:`warnings.catch_warnings` swaps the process's
warning state for all of them; so one catcher is held while any run is in :func:`kept`, and each warning goes to
the run of the thread that raised it (a thread in no run warns as before). Each distinct warning is kept once
per run and trial, under the filters in force (an ignored one is not kept)."""

from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any, Iterator

__all__ = ["kept", "at_trial"]

_lock = threading.Lock()
#: thread id -> the warnings of the run it trains
_runs: dict[int, list[dict[str, Any]]] = {}
#: while any run is in kept(): the catcher holding the process's warning state, and the showwarning it replaced
_held: list[Any] = []
#: the ``--tune`` trial a thread's run is in (:func:`at_trial`)
_trial = threading.local()


@contextlib.contextmanager
def kept() -> Iterator[list[dict[str, Any]]]:
    """The warnings this thread raises inside, each distinct one once per trial:
    ``{"warning": "Category: message", "trial": n}`` (``trial``: None outside a ``--tune`` trial)."""
    caught: list[dict[str, Any]] = []
    me = threading.get_ident()
    with _lock:
        if not _runs:  # the first run in: its catcher also starts each warning's "once" afresh
            catcher = warnings.catch_warnings()
            catcher.__enter__()
            _held[:] = [catcher, warnings.showwarning]
            warnings.showwarning = _keep
        _runs[me] = caught
    try:
        yield caught
    finally:
        _trial.number = None
        with _lock:
            del _runs[me]
            if not _runs:  # the last run out: the process's warning state back (showwarning first)
                _held[0].__exit__(None, None, None)
                _held.clear()


def at_trial(number: int | None) -> None:
    """The ``--tune`` trial this thread's run is in, from now on (for the warnings it keeps)."""
    _trial.number = number


def _keep(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    caught = _runs.get(threading.get_ident())
    if caught is None:
        return (_held[1] if _held else warnings.showwarning)(message, category, filename, lineno, file, line)
    entry = {"warning": f"{category.__name__}: {message}", "trial": getattr(_trial, "number", None)}
    if entry not in caught:
        caught.append(entry)
    return None
