"""docs/clicks.md's code runs as written: its Python blocks, in page order, in one fresh process
(the page's names carry from block to block as a reader's session would; a process of its own
because one block turns scikit-learn's metadata routing on)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_python_block_of_the_clicks_page_runs(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "clicks.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", page, flags=re.S | re.M)
    assert len(blocks) >= 4
    script = tmp_path / "page.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
