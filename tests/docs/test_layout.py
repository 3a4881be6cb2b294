"""ARCHITECTURE.md's "## Layout" map names every package and module directly under boostplug/, and
nothing else: private ones (leading underscore) too, each on its own line, after the public ones."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "boostplug"


def _map_entries() -> list[str]:
    """The names the map lists, in order: ``groups.py``, ``data/``, ..."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    assert block.startswith("boostplug/\n"), "the map starts at boostplug/"
    # an entry: two spaces, the name, its description; continuation lines are indented further
    return re.findall(r"^  ([^\s/]+/?)(?: |$)", block, flags=re.MULTILINE)


def _actual() -> set[str]:
    packages = {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    return packages | modules


def test_the_layout_map_lists_every_package_and_module_once() -> None:
    listed = _map_entries()
    twice = sorted({n for n in listed if listed.count(n) > 1})
    assert not twice, f"listed more than once: {twice}"
    actual = _actual()
    assert not actual - set(listed), f"in boostplug/ but not in ARCHITECTURE.md's Layout: {sorted(actual - set(listed))}"
    assert not set(listed) - actual, f"in ARCHITECTURE.md's Layout but not in boostplug/: {sorted(set(listed) - actual)}"


def test_the_private_modules_come_last() -> None:
    private = [n.startswith("_") for n in _map_entries()]
    assert private == sorted(private), "the private (underscore) packages and modules follow the public ones"


BASE_BUDGET = 1200


def _base_listing() -> tuple[dict[str, int], int]:
    """The objective base's files and line counts as ARCHITECTURE.md lists them."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## The objective base\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\S+\.py)\s+(\d+)\s", block, flags=re.MULTILINE)}, \
        int(re.search(r"^total\s+(\d+)$", block, flags=re.MULTILINE)[1])


def test_the_objective_base_is_listed_with_its_line_counts_within_budget() -> None:
    listed, total = _base_listing()
    assert listed, "ARCHITECTURE.md's objective base lists no file"
    actual = {}
    for name in listed:
        path = PACKAGE / name
        assert path.is_file(), f"ARCHITECTURE.md's objective base lists {name}, which is not in boostplug/"
        actual[name] = len(path.read_text(encoding="utf-8").splitlines())
    assert actual == listed, f"line counts changed: update ARCHITECTURE.md's objective base to {actual}"
    assert total == sum(listed.values()), f"the listed total {total} is not the sum {sum(listed.values())}"
    assert total <= BASE_BUDGET, (f"the objective base grew to {total} lines (budget {BASE_BUDGET}): move what one "
                                  "loss needs to its class or a mixin")
