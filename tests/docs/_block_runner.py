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

``python -m tests.docs._block_runner --serve`` runs many pages, each still in a process of its own:
it imports the libraries the pages use once, then for each request (one JSON line on standard input:
the blocks file, the working directory, the files for the page's standard output and error, a time
limit) forks a child that runs the page as above, and answers one JSON line with the child's exit
status. A fresh interpreter per page cost its imports each time (seconds per page; much more on
a busy machine); the forked child starts with them loaded and nothing else: what one page's
blocks change (a registered objective, scikit-learn's metadata routing) dies with its child.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading
import time
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


#: what most pages import, loaded once by the server before it forks (importing starts no thread, so
#: forking stays safe: no OpenMP region or numba kernel has run)
PRELOAD = ("numpy", "scipy.stats", "pandas", "sklearn.model_selection", "lightgbm", "xgboost", "numba",
           "boostplug", "boostplug.lightgbm", "boostplug.xgboost", "boostplug.metrics", "boostplug.data",
           "boostplug.objectives", "boostplug.boosters", "boostplug.clicks")


def _child(request: dict) -> None:
    """In the forked child: the page's own session, folder and output files; never returns."""
    rc = 1
    try:
        os.setsid()  # its own process group: a page over its time is killed with what it started
        os.chdir(request["cwd"])
        write = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        for fd, name, mode in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], write), (2, request["stderr"], write)):
            f = os.open(name, mode, 0o644)
            os.dup2(f, fd)
            os.close(f)
        rc = main(request["blocks"])
        threading._shutdown()  # as the interpreter does at exit: wait for the page's non-daemon threads
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - the runner itself failed: say so on the page's stderr
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit status (a signal's as -N), or None when it was killed at ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > end:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)


def serve() -> int:
    for name in PRELOAD:
        __import__(name)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        rc = _wait(pid, request["timeout"])
        print(json.dumps({"returncode": rc}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else main(sys.argv[1]))
