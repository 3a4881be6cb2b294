"""What the ``boostplug`` command and its subcommands share about ending: a user error reported in
one line (:class:`UsageError`), a signal that stops a command as Ctrl-C does (:class:`Interrupted`),
and whether tracebacks are printed too (:func:`debug`). The subcommands import it from here, below
the package that imports them."""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import Any, Callable, Iterator

__all__ = ["UsageError", "Interrupted", "debug", "usage_errors", "subcommand"]


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit code 2."""


@contextlib.contextmanager
def usage_errors(*kinds: type[Exception]) -> Iterator[None]:
    """A ``ValueError`` (or one of ``kinds``) raised inside becomes a :class:`UsageError` of its message."""
    try:
        yield
    except (kinds or (ValueError,)) as e:
        raise UsageError(str(e)) from None


class Interrupted(KeyboardInterrupt):
    """A signal (SIGTERM, SIGHUP) that stops a command as Ctrl-C does; exit code 128 + ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def debug() -> bool:
    """``BOOSTPLUG_DEBUG`` set (and not ``0``): print tracebacks, not only the one-line errors."""
    return os.environ.get("BOOSTPLUG_DEBUG", "") not in ("", "0")


def subcommand(subparsers: Any, name: str, run: Callable[[argparse.Namespace], int], help: str,
               description: str) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` on ``subparsers``, run by ``run(args)``: what a command's
    ``add_parser`` starts from before adding its arguments."""
    p = subparsers.add_parser(name, help=help, description=description)
    p.set_defaults(run=run)
    return p
