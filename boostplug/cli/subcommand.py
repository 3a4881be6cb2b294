"""Registering a subcommand of the ``boostplug`` command, the same way for each: its name, help
line and description, and the function that runs it (``args.run``)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

__all__ = ["add_subcommand"]


def add_subcommand(subparsers: Any, name: str, run: Callable[..., int], *, help: str,
                   description: str) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` on an argparse subparsers object, with
    ``run(args) -> int`` as ``args.run``; the caller adds the subcommand's arguments."""
    p = subparsers.add_parser(name, help=help, description=description)
    p.set_defaults(run=run)
    return p
