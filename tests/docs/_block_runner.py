"""Runs one page's code blocks in order, as a reader pasting them would (started by
test_code_blocks.py as ``python -m tests.docs._block_runner BLOCKS.json`` in the page's temporary
working directory).

The python blocks share one namespace, a fresh module installed as ``__main__``, so a class a
block defines pickles like one of a script. Each block is compiled under the page's path with its own line numbers, so a
traceback points at the page's line. The shell blocks run through ``bash -e -o pipefail`` in the
same folder. A block marked ``needs: shared-data`` sees the real data sets linked into the folder
under their own names (``MQ2008/``, ...) while it runs.

Exit status 0 when every block ran; otherwise 1, with a line ``BLOCK FAILED: <page> line <n>`` and
the traceback (or the command's output) on stderr. Standard output carries the blocks' own output
between ``\\x00block <n> start`` and ``\\x00block <n> end`` lines, for the first-block print check.
"""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
import types
from pathlib import Path


def _link_data(data: Path) -> list[Path]:
    """Link each entry of ``data`` into the working directory (those not already there)."""
    made = []
    for entry in sorted(data.iterdir()):
        link = Path(entry.name)
        if not link.exists() and not link.is_symlink():
            link.symlink_to(entry)
            made.append(link)
    return made


def _run_python(code: str, page: str, line: int, namespace: dict) -> None:
    # the block's first line is page line ``line + 1``: pad so that tracebacks name page lines
    exec(compile("\n" * line + code, page, "exec"), namespace)


def _run_shell(code: str) -> None:
    sys.stdout.flush()
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], stdout=sys.stdout, stderr=sys.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"the commands exited with status {done.returncode}")


def main(blocks_file: str) -> int:
    spec = json.loads(Path(blocks_file).read_text(encoding="utf-8"))
    # the blocks' own __main__: a class a block defines pickles by reference, as from a script
    main_module = types.ModuleType("__main__")
    sys.modules["__main__"] = main_module
    namespace = main_module.__dict__
    for n, block in enumerate(spec["blocks"]):
        links = _link_data(Path(spec["shared_data"])) if block["needs"] else []
        print(f"\x00block {n} start", flush=True)
        try:
            if block["kind"] == "python":
                _run_python(block["code"], spec["page"], block["line"], namespace)
            else:
                _run_shell(block["code"])
        except BaseException as exc:  # a SystemExit or KeyboardInterrupt of a block is its failure too
            sys.stdout.flush()
            print(f"BLOCK FAILED: {spec['page']} line {block['line']} ({block['kind']})", file=sys.stderr)
            if block["kind"] == "python":
                traceback.print_exception(exc, file=sys.stderr)
            else:
                print(exc, file=sys.stderr)
            return 1
        finally:
            for link in links:
                link.unlink()
        sys.stdout.flush()
        sys.stderr.flush()
        print(f"\n\x00block {n} end", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
