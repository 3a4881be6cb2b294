"""The ``boostplug`` command: ``boostplug info PATH``, ``boostplug compare ...``.

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` and
``run(args) -> int``. User errors (missing path, unknown method, bad file) end
with a one-line message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .. import __version__

__all__ = ["main", "build_parser", "UsageError", "debug"]


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit code 2."""


def debug() -> bool:
    """``BOOSTPLUG_DEBUG`` set (and not ``0``): print tracebacks, not only the one-line errors."""
    return os.environ.get("BOOSTPLUG_DEBUG", "") not in ("", "0")


def build_parser() -> argparse.ArgumentParser:
    from . import compare, info

    parser = argparse.ArgumentParser(
        prog="boostplug",
        description="Research ranking algorithms for LightGBM and XGBoost: inspect data, compare rankers.",
    )
    parser.add_argument("--version", action="version", version=f"boostplug {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    info.add_parser(sub)
    compare.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``boostplug`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below
        return code
    except (UsageError, FileNotFoundError, ValueError) as e:
        print(f"boostplug {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"boostplug {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``boostplug info ... | head``): stop quietly, as Unix tools do;
        # stdout is pointed at devnull so that Python's flush at exit does not fail again.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
