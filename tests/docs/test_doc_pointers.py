"""Every pointer to a docs page in the package's docstrings and comments resolves: ``docs/x.md`` names a page that
exists, and ``docs/x.md, "Section"``, ``docs/x.md ("Section")`` or ``docs/x.md#anchor`` a place on that page: a
heading that is or begins with the name (backticks aside; ``"Methods"`` for ``## Methods (`--methods`)``), a bold
lead (``* **Atomic writes.**``) or a table row's first cell, or a heading's GitHub anchor. A pointer that replaced an
explanation is only as good as its target."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A pointer, in text whose line breaks and comment markers are joined to single spaces.
POINTER = re.compile(r'docs/([\w/.-]+?\.md)(?:``)?(?:, "([^"]+)"| \("([^"]+)"\)|#([\w-]+))?')


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {m.group(1).replace("`", "").strip() for m in re.finditer(r"^#{1,6} +(.+)$", text, flags=re.M)}


def _places(page: Path) -> list[str]:
    """The headings, bold leads and first table cells of ``page``, backticks dropped."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S).replace("`", "")
    return [*_headings(page), *re.findall(r"\*\*([^*]+)\*\*", text), *re.findall(r"^\| *([^|]+?) *\|", text, flags=re.M)]


def _resolves(section: str, places: list[str]) -> bool:
    name = section.replace("`", "").strip().rstrip(".")
    return any(p == name or (p.startswith(name) and not p[len(name)].isalnum()) for p in (q.strip() for q in places))


def pointers() -> list[tuple[str, str, str | None, str | None]]:
    """``(where, page, section, anchor)`` of every pointer under boostplug/."""
    out = []
    for path in sorted((ROOT / "boostplug").rglob("*.py")):
        text = re.sub(r"\s*\n\s*(?:#+ ?)?", " ", path.read_text(encoding="utf-8"))
        for m in POINTER.finditer(text):
            out.append((str(path.relative_to(ROOT)), m.group(1), m.group(2) or m.group(3), m.group(4)))
    return out


def test_every_docs_pointer_in_the_package_resolves() -> None:
    found, wrong = pointers(), []
    assert len(found) > 50  # the package points to its pages throughout
    for where, page, section, anchor in found:
        target = ROOT / "docs" / page
        if not target.is_file():
            wrong.append(f"{where}: docs/{page} does not exist")
            continue
        headings = _headings(target)
        if section is not None and not _resolves(section, _places(target)):
            wrong.append(f"{where}: docs/{page} has no section {section!r}")
        if anchor is not None and anchor not in {_anchor(h) for h in headings}:
            wrong.append(f"{where}: docs/{page} has no heading with the anchor #{anchor}")
    assert not wrong, "\n".join(wrong)


def test_a_pointer_to_a_missing_page_or_section_is_found(tmp_path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A `key` section\n\n```python\n# not a heading\n```\n")
    assert _headings(page) == {"Title", "A key section"}
    assert _resolves("A key", _places(page)) and not _resolves("A ke", _places(page)) and not _resolves("x", [])
    assert _anchor("A key section: `x`") == "a-key-section-x"
    m = POINTER.search('see docs/objectives/x.md, "A section" and more')
    assert (m.group(1), m.group(2)) == ("objectives/x.md", "A section")
