"""SIGTERM and SIGHUP stop a command as Ctrl-C does, a second signal is never ignored, a signal that a
library's callback swallowed still stops the command, and a signal that arrives once the finished runs
are being written waits for them (:func:`interrupt_signals`)."""

from __future__ import annotations

import contextlib
import signal
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

from .errors import Interrupted

__all__ = ["Signals", "interrupt_signals"]


@dataclass
class Signals:
    """The signals the command received (``received``, in order). Once ``hold()`` is called (when
    training ends) they are only recorded: the finished runs exist only in memory until written,
    so a signal then waits for the table and the files, and sets the exit code. ``trained``: how many
    had arrived by then (the others arrived after training)."""

    received: list[int] = field(default_factory=list)
    held: bool = False
    trained: int = 0

    def hold(self) -> None:
        self.held, self.trained = True, len(self.received)

    def check(self) -> None:
        """Where the command waits (the cluster started, a run finished): raise :class:`Interrupted` for a
        signal whose interrupt never arrived, because the code running when it came swallowed it (a
        callback whose exceptions Python ignores: distributed's garbage-collection callback); nothing
        once :meth:`hold` was called, nor while an exception (that interrupt) is being handled."""
        if self.received and not self.held and sys.exc_info()[1] is None:
            raise Interrupted(self.received[0])


@contextlib.contextmanager
def interrupt_signals() -> Iterator[Signals]:
    """SIGTERM and SIGHUP stop a run as Ctrl-C (SIGINT) does: the finished runs are tabulated and
    written. Yields the :class:`Signals` received. Every signal before :meth:`Signals.hold` interrupts,
    a second one too (a library may have swallowed the first: :meth:`Signals.check`); after it they
    wait (a signal must not cut the writing of the finished runs short); a signal that is ignored
    when the command starts (``nohup``, a background job of a script) stays ignored."""
    signals = Signals()

    def interrupt(signum: int, frame: Any) -> None:
        signals.received.append(signum)
        if not signals.held:
            raise Interrupted(signum)

    old: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
                old[sig] = signal.signal(sig, interrupt)
    except ValueError:  # not the main thread: signals are not ours to handle
        pass
    try:
        yield signals
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
