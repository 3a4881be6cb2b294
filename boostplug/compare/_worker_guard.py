"""Worker processes that end with the process that started them, from their first import on.

A spawned worker of ``boostplug compare --jobs N`` spends its first seconds importing (numpy,
numba, LightGBM, XGBoost) before any code of the pool runs in it. To be ended with a parent
killed in that time too, the parent exports its process id in :data:`ENV` while it starts its
workers (:func:`exported`), and ``import boostplug.compare`` (which every worker imports to reach
its entry points in :mod:`.execution`) calls :func:`from_environment` before any of its heavy
imports: the worker then dies with that parent (:func:`die_with_parent`). ``import boostplug``
alone (a library user's) does not load this module.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Iterator

__all__ = ["ENV", "exported", "from_environment", "die_with_parent", "POLL_SECONDS"]

#: The environment variable that carries the parent's process id to the workers it starts.
ENV = "BOOSTPLUG_WORKER_PARENT"
#: How often the watch thread looks at the parent where the kernel cannot be asked (not Linux).
POLL_SECONDS = 0.2

_watched: set[int] = set()


@contextlib.contextmanager
def exported(parent: int) -> Iterator[None]:
    """:data:`ENV` set to ``parent`` for the processes started inside the block."""
    before = os.environ.get(ENV)
    os.environ[ENV] = str(parent)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def from_environment() -> None:
    """In a worker started under :func:`exported`: die with that parent. :data:`ENV` is removed
    first, so that the worker's own children do not take its parent for theirs. Only a process
    started by ``multiprocessing`` acts on it: one that inherited the variable otherwise (another
    thread started it meanwhile), or whose parent is another, live process, is left alone."""
    value = os.environ.pop(ENV, None)
    if value is None or not value.isdigit() or "--multiprocessing-fork" not in sys.orig_argv:
        return
    parent = int(value)
    if os.getppid() == parent:
        die_with_parent(parent)
    elif not _alive(parent):  # the parent died before this process could ask to die with it
        os._exit(1)


def die_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` is gone: the kernel kills it (Linux:
    ``PR_SET_PDEATHSIG``), and a thread that watches the parent's id ends it elsewhere. Exits
    at once when the parent is already gone. Calling it again adds nothing."""
    _ask_the_kernel()
    if os.getppid() != parent:  # the parent died before the kernel was asked
        os._exit(1)
    if parent in _watched:
        return
    _watched.add(parent)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="boostplug-parent-watch", daemon=True).start()


def _ask_the_kernel() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
