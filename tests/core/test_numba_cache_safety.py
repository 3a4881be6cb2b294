"""numba's cache folders and files as boostplug lets numba use them (boostplug._numba_cache): a folder
another user can write into is never loaded from (numba unpickles its cache files: planted ones run
code), and a damaged cache file is set aside and its kernel compiled again instead of an error on
every run."""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from boostplug import _numba_cache
from boostplug._cache_folders import folder_problem

posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="owner and mode bits are not checked on Windows")
#: a uid that is not ours, for a folder "of another user" (only root can give a folder away)
OTHER_UID = 65534

# one kernel, quick to compile: the calibration probe's serial twin, run on one tiny query
KERNEL = """
import warnings; warnings.simplefilter("always")
import numpy as np
from boostplug._core import calibration, dispatch
out = np.empty(1)
dispatch.serial_twin(calibration._probe)(np.zeros(4), np.array([0.0, 1.0, 0.0, 1.0]), np.array([0, 4]), out)
print(out[0])
"""


def _run_kernel(cache_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    done = subprocess.run([sys.executable, "-c", KERNEL], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) == 2.0
    return done


def _warnings(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]


def _folder(path: Path, mode: int) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    return path


# ---- folder_problem -------------------------------------------------------------------------------
@posix_only
def test_a_private_folder_of_ours_has_no_problem(tmp_path: Path) -> None:
    assert folder_problem(_folder(tmp_path / "mine", 0o700)) is None
    assert folder_problem(_folder(tmp_path / "readable", 0o755)) is None


@posix_only
@pytest.mark.parametrize(("mode", "reason"), [(0o777, "writable by others (mode 0o777)"),
                                              (0o757, "writable by others (mode 0o757)"),
                                              (0o775, "writable by group (mode 0o775)"),
                                              (0o1777, "writable by others (mode 0o1777)")])
def test_a_folder_others_can_write_into_is_refused(tmp_path: Path, mode: int, reason: str) -> None:
    assert folder_problem(_folder(tmp_path / "shared", mode)) == reason


@posix_only
@pytest.mark.parametrize("mode", [0o766, 0o666, 0o1766, 0o744])
def test_write_without_search_lets_nobody_else_write(tmp_path: Path, mode: int) -> None:
    """Creating, removing or renaming in a folder takes its write and its search bit: 0o766 (a home of
    mode 0666 on some machines) was refused as writable by others."""
    top = _folder(tmp_path / "top", mode)
    assert folder_problem(_folder(top / "cache", 0o700)) is None
    top.chmod(0o700)


@posix_only
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a folder away")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "theirs", 0o700)
    os.chown(folder, OTHER_UID, -1)
    assert folder_problem(folder) == f"owned by uid {OTHER_UID}"


@posix_only
def test_a_missing_folder_is_judged_by_its_parent_and_created_private(tmp_path: Path) -> None:
    parent = _folder(tmp_path / "home", 0o755)
    target = parent / "a" / "b"
    assert folder_problem(target) is None
    for created in (parent / "a", target):
        assert created.is_dir() and stat.S_IMODE(created.stat().st_mode) == 0o700
    shared = _folder(tmp_path / "shared", 0o777)
    assert folder_problem(shared / "x" / "y") == f"not there, and its parent {shared} is writable by others (mode 0o777)"
    assert not (shared / "x").exists()  # nothing created where another user could have planted it


@posix_only
def test_a_new_folder_in_a_sticky_one_like_tmp_is_created_private_and_used(tmp_path: Path) -> None:
    """A NUMBA_CACHE_DIR to be created in /tmp (world-writable, sticky): no one else may rename or
    remove our folder there, so it is created 0700 and used; one someone else made first is judged
    itself, and one in a shared folder without the sticky bit stays refused."""
    sticky = _folder(tmp_path / "tmp", 0o1777)
    assert folder_problem(sticky / "cache" / "deeper") is None
    assert stat.S_IMODE((sticky / "cache").stat().st_mode) == 0o700
    _folder(sticky / "theirs", 0o777)
    assert folder_problem(sticky / "theirs") == "writable by others (mode 0o777)"
    assert folder_problem(_folder(tmp_path / "shared", 0o777) / "x") is not None


@posix_only
def test_a_link_is_judged_by_the_folder_it_leads_to(tmp_path: Path) -> None:
    shared = _folder(tmp_path / "shared", 0o777)
    (tmp_path / "link").symlink_to(shared)
    assert folder_problem(tmp_path / "link") == "writable by others (mode 0o777)"
    (tmp_path / "file").write_text("")
    assert folder_problem(tmp_path / "file") == "not a folder"


# ---- where numba caches ---------------------------------------------------------------------------
@posix_only
def test_numba_skips_a_pycache_others_can_write_into(tmp_path: Path) -> None:
    """numba caches beside a kernel's source (``__pycache__``) whenever it can write there: a
    shared source folder's ``__pycache__`` writable by all was used."""
    from numba.core import caching

    def kernel() -> None:  # pragma: no cover - its location only
        pass

    ours = _folder(tmp_path / "ours", 0o755)
    (ours / "mod.py").write_text("")
    assert caching.InTreeCacheLocator.from_function(kernel, str(ours / "mod.py")) is not None
    assert stat.S_IMODE((ours / "__pycache__").stat().st_mode) == 0o700  # created private

    shared = _folder(tmp_path / "shared", 0o755)
    (shared / "mod.py").write_text("")
    _folder(shared / "__pycache__", 0o777)
    with pytest.warns(RuntimeWarning, match=f"numba's cache folder {shared / '__pycache__'} is writable by others "
                                            r"\(mode 0o777\)") as got:
        assert caching.InTreeCacheLocator.from_function(kernel, str(shared / "mod.py")) is None
        assert caching.InTreeCacheLocator.from_function(kernel, str(shared / "mod.py")) is None
    assert len([w for w in got if "cache folder" in str(w.message)]) == 1  # one warning per folder


@posix_only
def test_an_unsafe_numba_cache_dir_counts_as_unset(tmp_path: Path, monkeypatch) -> None:
    shared = _folder(tmp_path / "shared", 0o777)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(shared))
    with pytest.warns(RuntimeWarning, match=f"cache folder {shared} is writable by others"):
        assert not _numba_cache.usable(shared)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _numba_cache.usable(_folder(tmp_path / "mine", 0o700))


class _Planted:
    """A pickle that, when numba unpickles it, creates the file ``marker`` (it could run anything)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return exec, (f"open({str(self.marker)!r}, 'w').close()",)


@posix_only
def test_planted_cache_files_in_a_shared_numba_cache_dir_do_not_run(tmp_path: Path) -> None:
    """The probe: a ``NUMBA_CACHE_DIR`` of another user's, writable by all, holding cache files
    whose unpickling runs code: the kernel's run ran it. Now the folder is not used (one warning
    naming it), the kernel compiles in memory and gives its number."""
    fresh = _folder(tmp_path / "fresh", 0o700)
    _run_kernel(fresh)  # where numba puts the kernel's files, and their names
    shared = _folder(tmp_path / "shared", 0o777)
    marker = tmp_path / "planted-code-ran"
    for index in fresh.rglob("*.nbi"):
        planted = shared / index.relative_to(fresh)
        _folder(planted.parent, 0o777)
        planted.write_bytes(pickle.dumps(_Planted(marker)))
    if os.geteuid() == 0:
        for p in [shared, *shared.rglob("*")]:
            os.chown(p, OTHER_UID, -1)
    done = _run_kernel(shared)
    assert not marker.exists(), "numba loaded a planted cache file"
    warned = _warnings(done)
    assert len(warned) == 1, done.stderr
    reason = f"owned by uid {OTHER_UID}" if os.geteuid() == 0 else "writable by others (mode 0o777)"
    assert f"numba's cache folder {shared} is {reason}" in warned[0]


# ---- a damaged cache file -------------------------------------------------------------------------
def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for k in range(len(data) // 2, len(data), 7):  # the signatures' and file names' pickled text
        data[k] ^= 0x80
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("suffix", "damage"), [(".nbc", _cut), (".nbi", _flip), (".nbc", _flip), (".nbi", _cut)],
                         ids=["truncated-nbc", "flipped-nbi", "flipped-nbc", "truncated-nbi"])
def test_a_damaged_cache_file_is_set_aside_and_the_kernel_compiled_again(tmp_path: Path, suffix: str,
                                                                         damage) -> None:
    """A truncated ``.nbc`` or a ``.nbi`` with flipped bits: numba's ``UnpicklingError`` or
    ``UnicodeDecodeError`` on every later run, until the user found and cleared the cache."""
    cache = _folder(tmp_path / "cache", 0o700)
    _run_kernel(cache)
    (target,) = cache.rglob(f"*{suffix}")
    damage(target)
    done = _run_kernel(cache)
    warned = _warnings(done)
    assert len(warned) == 1, done.stderr
    assert f"numba's cache file {target} cannot be loaded" in warned[0]
    assert f"set aside as {target.name}.unreadable, the kernel is compiled again" in warned[0]
    assert target.with_name(target.name + ".unreadable").is_file()
    assert not _warnings(_run_kernel(cache))  # cached again, whole
    assert target.is_file()


@posix_only
def test_the_temporary_fallback_folder_must_be_private(tmp_path: Path, monkeypatch) -> None:
    """The per-user folder in the temporary directory, found writable by all (made so by another
    process of ours, or planted with our name on a system that lets a uid be chosen): not used."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    temp = _folder(tmp_path / f"boostplug-numba-cache-{os.getuid()}", 0o777)
    refused: list = []  # named in import boostplug's one warning (test_runtime's read-only install)
    assert _numba_cache.decide(lambda p: p == temp, refused) == ("off", None)
    assert (temp, "writable by others (mode 0o777)") in refused
    temp.chmod(0o700)
    assert _numba_cache.decide(lambda p: p == temp) == ("temp", str(temp))


# ---- every folder on the way, every link, every file loaded (as OpenSSH's StrictModes) ---------------------
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give files away")


@posix_only
def test_a_private_folder_inside_a_shared_one_is_refused(tmp_path: Path) -> None:
    """Our 0700 folder inside a world-writable folder without the sticky bit: another user can
    rename it away and put his own in its place."""
    shared = _folder(tmp_path / "shared", 0o777)
    assert folder_problem(_folder(shared / "mine", 0o700)) == \
        f"inside {shared}, which is writable by others (mode 0o777)"
    group = _folder(tmp_path / "group", 0o775)
    assert folder_problem(_folder(group / "a" / "mine", 0o700)) == \
        f"inside {group}, which is writable by group (mode 0o775)"
    sticky = _folder(tmp_path / "sticky", 0o1777)
    assert folder_problem(_folder(sticky / "mine", 0o700)) is None  # /tmp: no one else may rename ours


@posix_only
@as_root
def test_folders_above_must_be_ours_or_roots_and_links_too(tmp_path: Path) -> None:
    theirs = _folder(tmp_path / "theirs", 0o755)
    os.chown(theirs, OTHER_UID, -1)
    assert folder_problem(_folder(theirs / "mine", 0o700)) == f"inside {theirs}, which is owned by uid {OTHER_UID}"
    mine = _folder(tmp_path / "mine", 0o700)
    link = tmp_path / "cache-link"
    link.symlink_to(mine)
    assert folder_problem(link) is None
    os.lchown(link, OTHER_UID, -1)  # a NUMBA_CACHE_DIR that another user's link leads from: he may repoint it
    assert folder_problem(link) == f"reached through the link {link}, owned by uid {OTHER_UID}"
    shared = _folder(tmp_path / "shared", 0o777)
    (shared / "link").symlink_to(mine)  # our link in a folder where anyone may replace it
    assert folder_problem(shared / "link") == f"inside {shared}, which is writable by others (mode 0o777)"


SWAP = """
import os, pickle, shutil, sys, warnings
warnings.simplefilter("always")
import numpy as np
from boostplug._core import calibration, dispatch

class Planted:
    def __reduce__(self):
        return exec, ("open(%r, 'w').close()" % sys.argv[1],)

twin = dispatch.serial_twin(calibration._probe)   # numba has chosen its cache folder: NUMBA_CACHE_DIR's
folder = twin._cache.cache_path
if sys.argv[2] == "swap":   # another user renames the folder away and puts his own in its place
    os.rename(folder, folder + ".old")
    shutil.copytree(folder + ".old", folder)
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.endswith((".nbi", ".nbc")):
            with open(path, "wb") as f:
                pickle.dump(Planted(), f)
        os.chown(path, OTHER_UID, -1)
    os.chown(folder, OTHER_UID, -1)
out = np.empty(1)
twin(np.zeros(4), np.array([0.0, 1.0, 0.0, 1.0]), np.array([0, 4]), out)
print(out[0])
"""


@posix_only
@as_root
def test_a_cache_folder_replaced_after_import_is_not_loaded_nor_fatal(tmp_path: Path) -> None:
    """The folder numba chose at import is replaced, before the kernel's first call, by one of
    another user's holding planted files: nothing planted runs, the kernel compiles in memory and
    gives its number, with one warning naming the folder (no PermissionError at the save)."""
    cache = _folder(tmp_path / "cache", 0o700)
    marker = tmp_path / "planted-code-ran"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    script = SWAP.replace("OTHER_UID", str(OTHER_UID))
    for step in ("fill", "swap"):
        done = subprocess.run([sys.executable, "-c", script, str(marker), step], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert float(done.stdout.split()[-1]) == 2.0
    assert not marker.exists(), "numba loaded a planted cache file"
    warned = _warnings(done)
    assert len(warned) == 1 and f"is owned by uid {OTHER_UID}" in warned[0], done.stderr


@posix_only
@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
@pytest.mark.parametrize("change", ["writable by others", "owned by another user"])
def test_a_cache_file_others_can_write_is_not_loaded(tmp_path: Path, suffix: str, change: str) -> None:
    """An index of mode 0666 in our 0755 folder (or a data file; or one owned by another user):
    checked right before numba loads it, not loaded (one warning naming it), the kernel compiled
    and cached again as ours."""
    if change == "owned by another user" and os.geteuid() != 0:
        pytest.skip("only root can give files away")
    cache = _folder(tmp_path / "cache", 0o755)
    _run_kernel(cache)
    (target,) = cache.rglob(f"*{suffix}")
    if change == "writable by others":
        target.chmod(0o666)
        reason = "writable by others (mode 0o666)"
    else:
        os.chown(target, OTHER_UID, -1)
        reason = f"owned by uid {OTHER_UID}"
    warned = _warnings(_run_kernel(cache))
    assert len(warned) == 1 and f"numba's cache file {target} is {reason}: not loaded" in warned[0], warned
    if suffix == ".nbi":  # numba wrote its index again, as ours
        assert target.stat().st_uid == os.getuid() and not target.stat().st_mode & stat.S_IWOTH
        assert not _warnings(_run_kernel(cache))


def _special(path: Path, kind: str) -> None:
    """Put a FIFO, a socket or a character device (a twin of /dev/null: root only) at ``path``."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        import socket

        # bound by a relative name (AF_UNIX paths are short), and back to the old folder at once: a
        # subprocess started in the cache folder would import boostplug from another place (an
        # installed copy rather than the source tree), whose kernels numba caches under other names
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(path.name)
            sock.close()  # the file stays
        finally:
            os.chdir(here)
    else:
        try:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except (PermissionError, AttributeError):
            pytest.skip("making a device needs root")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and sockets are POSIX")
@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
@pytest.mark.parametrize("place", [".nbi", ".nbc", "boostplug.lock"])
def test_a_fifo_socket_or_device_in_the_cache_is_one_warning_never_a_hang(tmp_path: Path, kind: str,
                                                                          place: str) -> None:
    """numba opened an index that was a FIFO and waited forever, and so did the lock's open; the
    run (in a subprocess: a hang fails by the timeout) must warn once and run, cached or not."""
    cache = _folder(tmp_path / "cache", 0o700)
    _run_kernel(cache)
    (index,) = cache.rglob("*.nbi")
    if place == "boostplug.lock":
        for f in [*cache.rglob("*.nbi"), *cache.rglob("*.nbc"), *cache.rglob("boostplug.lock")]:
            f.unlink()  # compiled again, so saved: under the lock
        target = index.parent / place
    else:
        (target,) = cache.rglob(f"*{place}")
        target.unlink()
    _special(target, kind)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", KERNEL], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and float(done.stdout.split()[-1]) == 2.0, done.stderr
    warned = _warnings(done)
    assert len(warned) == 1 and "not a regular file" in warned[0], done.stderr
