"""The ``--out`` folder of ``boostplug compare``, taken before any training (:func:`prepare_out`)."""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from pathlib import Path

from ..compare.outdir import OutDir, OutDirError
from .errors import UsageError

__all__ = ["prepare_out"]


def prepare_out(out: Path, *, overwrite: bool = False) -> OutDir:
    """Create the ``--out`` folder, check that files can be written in it and take it for this
    run (a lock; refused when it holds an earlier run's results, unless ``overwrite``), before any
    training; a ``UsageError`` saying what is wrong otherwise. The folders created here are
    ``OutDir.created``: :meth:`~boostplug.compare.outdir.OutDir.remove_if_unused` removes them
    when the run writes nothing."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder; give a folder (created when missing)")
    dangling = next((p for p in (out, *out.parents) if p.is_symlink() and not p.exists()), None)
    if dangling is not None:
        raise UsageError(f"--out {out}: {dangling} is a symbolic link to {os.readlink(dangling)}, which does not exist")
    blocking = next((p for p in out.parents if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise UsageError(f"--out {out}: {blocking} is not a folder")
    # the folders made here, deepest first: removed again when the run writes nothing
    created = list(itertools.takewhile(lambda folder: not os.path.lexists(folder), (out, *out.parents)))
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise UsageError(f"--out {out}: cannot write there ({e.strerror or e})") from e
    taken = OutDir(out, overwrite=overwrite)
    taken.created = created
    try:
        taken.acquire()
    except OutDirError as e:
        taken.remove_if_unused()
        raise UsageError(str(e)) from None
    if taken.recovered is not None:
        which = ("the earlier run's complete set is back" if taken.recovered == "previous" else
                 "its complete set stands (the set it replaced is deleted)")
        print(f"boostplug compare: --out {out}: a run killed while moving its results in had left them half "
              f"moved; {which}", file=sys.stderr)
    return taken
