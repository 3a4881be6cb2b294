"""What the ``boostplug`` command and its subcommands share about ending: a user error reported in
one line (:class:`UsageError`), a signal that stops a command as Ctrl-C does (:class:`Interrupted`),
and whether tracebacks are printed too (:func:`debug`). The subcommands import it from here, below
the package that imports them."""

from __future__ import annotations

import os

__all__ = ["UsageError", "Interrupted", "debug"]


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit code 2."""


class Interrupted(KeyboardInterrupt):
    """A signal (SIGTERM, SIGHUP) that stops a command as Ctrl-C does; exit code 128 + ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def debug() -> bool:
    """``BOOSTPLUG_DEBUG`` set (and not ``0``): print tracebacks, not only the one-line errors."""
    return os.environ.get("BOOSTPLUG_DEBUG", "") not in ("", "0")
