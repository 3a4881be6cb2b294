"""SIGTERM and SIGHUP stop a command as Ctrl-C does, and a signal that arrives once the finished
runs are being written waits for them (:func:`interrupt_signals`)."""

from __future__ import annotations

import contextlib
import signal
from dataclasses import dataclass, field
from typing import Any, Iterator

from .errors import Interrupted

__all__ = ["Signals", "interrupt_signals"]


@dataclass
class Signals:
    """The signals the command received (``received``, in order). Once ``hold()`` is called (when
    training ends) they are only recorded: the finished runs exist only in memory until written,
    so a signal then waits for the table and the files, and sets the exit code."""

    received: list[int] = field(default_factory=list)
    held: bool = False

    def hold(self) -> None:
        self.held = True


@contextlib.contextmanager
def interrupt_signals() -> Iterator[Signals]:
    """SIGTERM and SIGHUP stop a run as Ctrl-C (SIGINT) does: the finished runs are tabulated and
    written. Yields the :class:`Signals` received. Only the first signal interrupts, and only
    before :meth:`Signals.hold` (a signal must not cut the writing of the finished runs short);
    a signal that is ignored when the command starts (``nohup``, a background job of a script)
    stays ignored."""
    signals = Signals()

    def interrupt(signum: int, frame: Any) -> None:
        signals.received.append(signum)
        if len(signals.received) == 1 and not signals.held:
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
