"""The ``boostplug`` command: ``boostplug info PATH``, ``boostplug compare ...``, ``boostplug warmup``,
``boostplug calibrate``.

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` (which sets
``args.run``) and ``run(args) -> int`` (``compare`` with helper modules of
its own: ``compare_*``, ``signals``, ``out_folder``). User errors (missing path, unknown method, bad file) end
with a one-line message on stderr and exit code 2, never a traceback: a subcommand
raises :class:`UsageError` for them (turning what its readers say about the user's files into one,
or handles them itself, as ``info`` does), and an ``OSError`` naming a path is one line too. Anything
else (a ``ValueError`` of boostplug's own code) is a bug and keeps its traceback; ``BOOSTPLUG_DEBUG=1``
prints the traceback of the one-line errors as well.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import textwrap
import traceback
from typing import NoReturn, Sequence

from .. import __version__
from .._validation import did_you_mean
from .errors import Interrupted, UsageError, debug

__all__ = ["main", "build_parser", "UsageError", "Interrupted", "debug"]


class _Formatter(argparse.HelpFormatter):
    """argparse's help, wrapped without breaking names (``lgb-ndcg_boost``) at hyphens or inside."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False, break_long_words=False)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return self._fill_text(text, width, "").splitlines()


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line, as the commands' are (not its usage first, which buried them)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (the options: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from . import calibrate, compare, info, warmup

    parser = _Parser(
        prog="boostplug", formatter_class=_Formatter,
        description="Research ranking algorithms for LightGBM, XGBoost and CatBoost: inspect data, compare rankers.",
    )
    parser.add_argument("--version", action="version", version=f"boostplug {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=functools.partial(_Parser, formatter_class=_Formatter))
    sub.required = True
    parser.set_defaults(commands=sub.choices)
    for command in (info, compare, warmup, calibrate):
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``boostplug`` console script; returns the exit code."""
    # OMP_WAIT_POLICY=PASSIVE unless the user set it: idle OpenMP threads sleep instead of
    # spinning, which on busy cores made training many times slower (docs/performance.md).
    # OpenMP runtimes read it once, when they load: this runs before any of them (the subcommands'
    # imports load scikit-learn's copy, which XGBoost shares), and spawned jobs inherit it.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    parser = build_parser()
    # the command line, recorded by commands that write results
    given = argparse.Namespace(argv=list(argv) if argv is not None else sys.argv[1:])
    args, unknown = parser.parse_known_args(argv, namespace=given)
    command = vars(args).pop("commands")[args.command]  # (the subcommand's parser: not an option)
    if unknown:  # as argparse says it, with the closest option of the command
        hint = did_you_mean([u.split("=")[0] for u in unknown if u.startswith("-")],
                            [o for a in command._actions for o in a.option_strings])
        command.error(f"unrecognized arguments: {' '.join(unknown)}" + (f"; {hint}" if hint else ""))
    try:
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below
        return code
    except UsageError as e:
        return _one_line(args.command, str(e))
    except KeyboardInterrupt as e:
        print(f"boostplug {args.command}: interrupted", file=sys.stderr)
        return 128 + getattr(e, "signum", signal.SIGINT)
    except BrokenPipeError:
        # The reader went away (``boostplug info ... | head``): stop quietly, as Unix tools do;
        # stdout is pointed at devnull so that Python's flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        # A file or folder the system refused (a full disk, a permission, a path that is a file,
        # ...): about that path, so one line naming it. Without a path it is not the user's: raise.
        if e.filename is None:
            raise
        return _one_line(args.command, f"{e.filename}: {e.strerror or e}")


def _one_line(command: str, message: str) -> int:
    """The one-line error of the module docstring (exit code 2); its traceback too with ``BOOSTPLUG_DEBUG=1``."""
    if debug():
        traceback.print_exc()
    print(f"boostplug {command}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
