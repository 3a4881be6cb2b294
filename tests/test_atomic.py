"""Atomic writes: a failed write leaves the old file whole and no temporary file behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from boostplug._atomic import atomic_write, write_text


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
