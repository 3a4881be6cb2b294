"""Running a sweep that may crash or hang its process (a framework's reader on damaged models) in a
child process with a time limit: a crash or a hang fails the test instead of killing pytest."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest


def run_child(script: str, *args: str, timeout: float = 240) -> Any:
    """The JSON that ``python -c script *args`` prints as its last line. The child prints where it is to
    stderr as it goes: a hang or a death (a signal, a non-zero exit) fails the test naming its last line."""
    try:
        run = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        last = (e.stderr or b"").decode(errors="replace").splitlines()[-1:]
        pytest.fail(f"the child process hung, at {last}")
    last = run.stderr.splitlines()[-1:]
    assert run.returncode == 0, f"the child process died ({run.returncode}) at {last}: {run.stderr[-2000:]}"
    return json.loads(run.stdout.splitlines()[-1])
