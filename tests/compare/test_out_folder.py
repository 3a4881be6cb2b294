"""``compare --out`` writes its set of files all or nothing, whatever fails and wherever it is killed.

Random earlier and new sets of output files (fixed seeds), and at every step of the swap:

* a rename that fails (an ``OSError``, once or from then on): the error says which set the
  folder holds, and it holds exactly that set (or, when even putting the earlier set back
  failed, the next run puts it back);
* a process killed outright (``os._exit`` in a forked child, as ``kill -9``: no handler, no
  ``finally``) at every file-system call of a run's write, then the next run killed at a random
  call of its recovery: the run after finds the complete earlier set or the complete new one,
  byte for byte, the user's other files untouched and nothing of ours left behind.
"""

from __future__ import annotations

import errno
import os
import random
import sys
from pathlib import Path
from typing import Callable

import pytest

from boostplug.compare.outdir import MARKER, OUTPUT_FILES, OutDir

SEEDS = range(6)
#: The file-system calls that change the folder during a write and a recovery.
MUTATING = ("replace", "unlink", "rmdir", "mkdir")
USERS = "notes.txt"


def _sets(seed: int) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """An earlier set (empty for one seed; without results.json for another, as a run killed by
    an earlier version could leave it) and a new set (with results.json, as every run writes it)."""
    rng = random.Random(seed)
    others = [n for n in OUTPUT_FILES if n != MARKER]

    def pick(marker: bool) -> dict[str, bytes]:
        names = rng.sample(others, rng.randint(1, len(others))) + ([MARKER] if marker else [])
        return {n: f"{n} of set {rng.random()}\n".encode() * rng.randint(1, 50) for n in names}

    old = {} if seed == 5 else pick(marker=seed != 4)
    return old, pick(marker=True)


def _folder(out: Path, files: dict[str, bytes]) -> None:
    out.mkdir()
    for name, data in files.items():
        (out / name).write_bytes(data)
    (out / USERS).write_text("the user's own file, never touched")


def _files(out: Path) -> dict[str, bytes | str]:
    """Everything in ``out`` but the user's file: a set of output files and nothing else of ours."""
    assert (out / USERS).read_text() == "the user's own file, never touched"
    return {p.name: p.read_bytes() if p.is_file() else "a folder" for p in out.iterdir() if p.name != USERS}


def _filler(files: dict[str, bytes]) -> Callable[[Path], None]:
    """Writes ``files`` into the staging folder with plain writes (no renames of its own)."""
    def fill(staging: Path) -> None:
        for name, data in files.items():
            (staging / name).write_bytes(data)
    return fill


def _on_calls(monkeypatch: pytest.MonkeyPatch, act: Callable[[str, int], None],
              kinds: tuple[str, ...] = MUTATING) -> list[int]:
    """Count the calls of ``os.<kinds>``; ``act(kind, n)`` runs before the n-th. Returns the count
    (a one-element list, updated)."""
    count = [0]
    for kind in kinds:
        def call(*args, _real=getattr(os, kind), _kind=kind, **kwargs):
            count[0] += 1
            act(_kind, count[0])
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, kind, call)
    return count


# ---- a rename that fails ----------------------------------------------------------------------
@pytest.mark.parametrize("persistent", [False, True], ids=["once", "from-then-on"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_failing_rename_leaves_the_earlier_set_and_says_so(tmp_path: Path, monkeypatch, seed: int,
                                                             persistent: bool) -> None:
    """Before, a failure on the third rename had deleted the old results.json, left old and new
    files mixed and deleted the staged set."""
    old, new = _sets(seed)
    renames = len(old) + 1 + len(new)  # the earlier set aside, its folder renamed, the new set in
    put_back_later = 0
    for at in range(1, renames + 1):
        out = tmp_path / f"o{at}"
        _folder(out, old)

        def fail(kind: str, n: int, at: int = at) -> None:
            if n == at or (persistent and n > at):
                raise OSError(errno.EIO, "Input/output error")

        with OutDir(out, overwrite=True) as taken:
            with monkeypatch.context() as m:
                _on_calls(m, fail, kinds=("replace",))
                with pytest.raises(OSError) as info:
                    taken.write(_filler(new))
        message = str(info.value)
        assert info.value.errno == errno.EIO, message
        assert "Input/output error; the new results were not moved in" in message
        if "could not be put back" in message:  # the next run puts it back
            assert persistent and "the next boostplug compare on" in message, message
            put_back_later += 1
            with OutDir(out, overwrite=True) as again:
                assert again.recovered == "previous"
        else:
            held = "the complete set of results it held before" if old else "no results, as before"
            assert f"the folder holds {held}" in message, message
        # no new file is left beside the earlier set (compare wrote every finished run before)
        assert _files(out) == old, (seed, at)
    assert (put_back_later > 0) == persistent


# ---- a process killed outright ----------------------------------------------------------------------
def _in_child(body: Callable[[], None]) -> int:
    """``body`` in a forked child; its exit status (9: "killed" by :func:`_kill_at`)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            body()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _kill_at(at: int) -> Callable[[str, int], None]:
    def act(kind: str, n: int) -> None:
        if n == at:
            os._exit(9)
    return act


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs a plain fork")
@pytest.mark.parametrize("seed", SEEDS)
def test_a_kill_at_any_step_leaves_one_complete_set(tmp_path: Path, monkeypatch, seed: int) -> None:
    old, new = _sets(seed)
    probe = tmp_path / "probe"
    _folder(probe, old)
    with monkeypatch.context() as m:
        count = _on_calls(m, lambda kind, n: None)
        with OutDir(probe, overwrite=True) as taken:
            taken.write(_filler(new))
    assert _files(probe) == new
    rng = random.Random(1000 + seed)
    seen = set()
    for at in range(1, count[0] + 2):  # the last: not killed
        out = tmp_path / f"o{at}"
        _folder(out, old)

        def write(at: int = at) -> None:
            _on_calls(monkeypatch, _kill_at(at))
            with OutDir(out, overwrite=True) as taken:
                taken.write(_filler(new))

        assert _in_child(write) == (9 if at <= count[0] else 0), at

        def recover(again: int = rng.randint(1, 2 * len(OUTPUT_FILES) + 4)) -> None:
            _on_calls(monkeypatch, _kill_at(again))  # the next run killed too, while it puts things right
            OutDir(out, overwrite=True).acquire()

        assert _in_child(recover) in (0, 9)
        with OutDir(out, overwrite=True):
            pass
        found = _files(out)
        assert found in (old, new), (seed, at, sorted(found))
        seen.add("new" if found == new else "old")
    assert seen == {"old", "new"}  # killed before the commit: the earlier set; after it: the new one
