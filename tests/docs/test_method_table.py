"""docs/compare.md's method table lists every method of ``boostplug compare --methods list`` (the
registry, :data:`boostplug.compare.METHODS`) once, and nothing else, each row with its paper; CatBoost's
methods (``cb-*``) whether catboost is installed or not (``--methods list`` shows them when it is)."""

from __future__ import annotations

import re
from pathlib import Path

from boostplug.compare import METHODS
from boostplug.compare.methods import catboost_method_names

CATBOOST_METHODS = catboost_method_names()

PAGE = Path(__file__).resolve().parents[2] / "docs" / "compare.md"
HEADER = "| method (LightGBM, XGBoost, CatBoost) | framework | paper |"


def _rows() -> list[list[str]]:
    """The method table's rows, as cells."""
    lines = PAGE.read_text().splitlines()
    start = lines.index(HEADER) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def test_the_method_table_lists_every_registered_method_once_with_its_framework_and_paper() -> None:
    listed: list[str] = []
    for names, framework, paper in _rows():
        methods = re.findall(r"`([^`]+)`", names)
        listed += methods
        assert {METHODS[m].framework for m in methods if m in METHODS} <= set(framework.split(", ")), names
        assert all(m not in CATBOOST_METHODS for m in methods) or "catboost" in framework.split(", "), names
        assert re.search(r"\b(19|20)\d\d\b", paper), f"{names}: no paper (author, venue, year) in {paper!r}"
    repeated = sorted({m for m in listed if listed.count(m) > 1})
    assert not repeated, f"docs/compare.md lists {repeated} more than once"
    missing = [m for m in (*METHODS, *CATBOOST_METHODS) if m not in listed]
    # a row that says it needs an extra (approx_ap: boostplug[jax]) lists methods absent without it
    optional = {m for names, _, paper in _rows() if "needs `boostplug[" in paper for m in re.findall(r"`([^`]+)`", names)}
    unknown = [m for m in listed if m not in METHODS and m not in CATBOOST_METHODS and m not in optional]
    assert not missing and not unknown, (f"docs/compare.md's method table lacks {missing} (boostplug compare "
                                         f"--methods list has them) and lists {unknown}, which it does not")
