"""Atomic writes: a failed write leaves the old file whole and no temporary file behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from boostplug._atomic import atomic_write, write_text
from tests._helpers import can_mount_read_only


def test_write_replaces_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "f.txt"
    write_text(p, "old")
    write_text(p, "new")
    assert p.read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]


def test_exception_keeps_old_file(tmp_path):
    p = tmp_path / "f.txt"
    write_text(p, "old")
    with pytest.raises(RuntimeError):
        with atomic_write(p) as f:
            f.write("partial")
            raise RuntimeError("boom")
    assert p.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]


def test_mode_follows_existing_file(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_text(p, "new")
    assert (p.stat().st_mode & 0o777) == 0o640


def test_bad_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        with atomic_write(tmp_path / "f", "a"):
            pass


def test_missing_folder_names_the_target(tmp_path):
    with pytest.raises(OSError):
        write_text(tmp_path / "no" / "f.txt", "x")


@pytest.mark.skipif(sys.platform == "win32", reason="ulimit -f is POSIX")
def test_file_size_limit_keeps_old_file(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old and complete")
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        from boostplug._atomic import write_text
        try:
            write_text({str(p)!r}, "x" * 100000)
        except OSError as e:
            print("ERR", e)
            sys.exit(3)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert "could not write" in r.stdout and "f.txt" in r.stdout
    assert p.read_text() == "old and complete"
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]


# ---- the edges: read-only folders, symbolic links, temporary files of killed writers -----------
def _old(path) -> None:
    """As if last written long ago (the cleanup leaves recent temporary files alone)."""
    from boostplug._atomic import STALE_AFTER

    past = os.stat(path).st_mtime - STALE_AFTER - 1
    os.utime(path, (past, past))


def test_a_failure_to_create_the_temporary_file_names_the_target(tmp_path, monkeypatch):
    """As in a read-only folder: the system's error names the temporary file the user never asked for."""
    import errno
    import tempfile

    def refused(prefix, suffix, dir):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(dir, f"{prefix}abcd1234{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(PermissionError) as info:
        write_text(tmp_path / "f.txt", "x")
    assert str(info.value) == (f"[Errno 13] could not write {tmp_path / 'f.txt'}: Permission denied; the previous "
                               "file (if any) is unchanged")
    assert ".tmp" not in str(info.value)


@pytest.mark.skipif(not can_mount_read_only(), reason="needs root and unshare -m (a read-only bind mount)")
def test_a_read_only_folder_names_the_target(tmp_path):
    """A real read-only mount (as root, chmod would not stop the write)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "f.txt").write_text("old")
    code = ("from boostplug._atomic import write_text\n"
            "try:\n"
            f"    write_text({str(folder / 'f.txt')!r}, 'new')\n"
            "except OSError as e:\n"
            "    print(type(e).__name__, e)\n")
    script = f'mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && exec {sys.executable} -c "$CODE"'
    env = dict(os.environ, CODE=code, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                                  os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"OSError [Errno 30] could not write {folder / 'f.txt'}: Read-only file system; "
                                   "the previous file (if any) is unchanged")
    assert (folder / "f.txt").read_text() == "old"


def test_a_symbolic_link_is_followed_and_stays_a_link(tmp_path):
    """Writing to a link writes its target, as open(path, "w") does; a chain of relative links too."""
    models = tmp_path / "models"
    models.mkdir()
    target = models / "v3.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    (tmp_path / "current.txt").symlink_to("models/v3.txt")
    (tmp_path / "latest.txt").symlink_to("current.txt")
    write_text(tmp_path / "latest.txt", "new")
    assert (tmp_path / "latest.txt").is_symlink() and (tmp_path / "current.txt").is_symlink()
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640
    assert sorted(os.listdir(models)) == ["v3.txt"]
    # a dangling link: its target is created, as open() would
    (tmp_path / "next.txt").symlink_to("models/v4.txt")
    write_text(tmp_path / "next.txt", "four")
    assert (tmp_path / "next.txt").is_symlink() and (models / "v4.txt").read_text() == "four"


def test_a_loop_of_symbolic_links_is_refused_naming_the_path(tmp_path):
    import errno

    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(OSError) as info:
        write_text(tmp_path / "a", "x")
    assert info.value.errno == errno.ELOOP
    assert f"could not write {tmp_path / 'a'}: it is a loop of symbolic links" in str(info.value)
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 and flock are POSIX")
def test_temporary_files_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    """A writer killed with SIGKILL in the middle of a write leaves its temporary file; the next
    write into the folder removes it (once old enough), and nothing else."""
    import signal

    code = textwrap.dedent(f"""
        import sys
        from boostplug._atomic import atomic_write
        with atomic_write({str(tmp_path / 'model.txt')!r}) as f:
            f.write("half of a model")
            f.flush()
            print("writing", flush=True)
            sys.stdin.readline()  # killed here
    """)
    writer = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "writing\n"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    left = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].name.startswith(".model.txt.boostplug-"), left
    keep = {".other.abcd1234.tmp": "not ours", "notes.boostplug-abcd1234.tmp": "not ours"}  # look-alikes
    for name, text in keep.items():
        (tmp_path / name).write_text(text)
        _old(tmp_path / name)
    write_text(tmp_path / "model.txt", "recent")
    assert left[0].exists()  # just killed: too recent to be sure no one writes it
    _old(left[0])
    write_text(tmp_path / "other.txt", "any file of the folder")
    assert not left[0].exists()
    assert sorted(os.listdir(tmp_path)) == sorted(["model.txt", "other.txt", *keep])


@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
def test_a_temporary_file_being_written_is_never_removed(tmp_path):
    """Old but locked: a live writer holds it (here, an open atomic_write of this process)."""
    from boostplug._atomic import remove_stale_temporaries

    with atomic_write(tmp_path / "big.txt") as f:
        f.write("slow")
        tmp = next(p for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
        _old(tmp)
        assert remove_stale_temporaries(tmp_path) == []
        write_text(tmp_path / "small.txt", "a write of another file meanwhile")
        assert tmp.exists()
    assert (tmp_path / "big.txt").read_text() == "slow" and not tmp.exists()


def test_a_long_name_still_fits_its_temporary_file(tmp_path):
    name = "m" * 250  # 255 bytes is the usual limit of one name
    write_text(tmp_path / name, "x")
    assert (tmp_path / name).read_text() == "x" and os.listdir(tmp_path) == [name]
