"""The inner loop's list of left-out tests (tests/conftest.py) names tests that exist: a renamed
test would otherwise come back into the inner loop unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import INNER_LOOP_LEAVES_OUT

ROOT = Path(__file__).resolve().parents[2]


def test_every_left_out_module_and_test_exists() -> None:
    for entry in INNER_LOOP_LEAVES_OUT:
        path, _, name = entry.partition("::")
        assert (ROOT / path).is_file(), f"{entry}: no such test module"
        if name:
            source = (ROOT / path).read_text(encoding="utf-8")
            assert re.search(rf"^def {re.escape(name)}\w*\(", source, flags=re.MULTILINE), \
                f"{entry}: no test of that name in {path}"
