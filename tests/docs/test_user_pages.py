"""User pages teach; they hold no study history. And every relative link of the docs leads somewhere.

User pages: README.md and docs/**/*.md except docs/results/** (stored outputs and the READMEs
that say how, when and with which code they were made) and docs/studies/** (measured studies,
linked from the feature pages). On a user page these are refused, code blocks included:

* **our own issue numbers**: "issue 12", "issues 3 and 5", "PR 7", "pull request 7", and a
  bare "#12" (not preceded by a letter, digit, ``&`` or ``/``). A reference to an upstream
  tracker written as ``Project#1234`` (``LightGBM#6870``, ``onnxmltools#502``) is allowed: in a
  pitfall it tells the reader where the framework's bug is followed, which our own history
  does not;
* **commit hashes**: "commit 7f84e73", or a bare 7-40 digit hex word holding a letter and a
  digit (``tests/docs/test_provenance.py``'s pattern; numbers such as ``3.4e+38`` are not one);
* **dated run notes and history narrative**: a date ``2026-11`` or ``2026-11-23``, "re-run" /
  "re-ran" / "rerun", "re-measured", "previous version(s)", "since the previous",
  "the previous default" ("an earlier run" stays allowed: a user's own earlier run of a command);
* **targets**: a heading that names targets ("Against the targets"), a paragraph that opens
  with "Targets", a table with a "target" column.

Separately, every relative link ``[text](path)`` / ``![alt](path)`` outside code in README.md,
ARCHITECTURE.md, CONTRIBUTING.md and docs/**/*.md (results and studies included) names an
existing file or folder, and an anchor ``path#anchor`` (or ``#anchor``) a heading or an
``<a id>`` of the page it points to (GitHub's heading anchors).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.docs.test_provenance import COMMIT_HASH

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOT_USER = (DOCS / "results", DOCS / "studies")


def user_pages() -> list[str]:
    pages = ["README.md"] + sorted(p.relative_to(ROOT).as_posix() for p in DOCS.rglob("*.md")
                                   if not any(d in p.parents for d in NOT_USER))
    return pages


def linked_pages() -> list[str]:
    top = [n for n in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md") if (ROOT / n).is_file()]
    return top + sorted(p.relative_to(ROOT).as_posix() for p in DOCS.rglob("*.md"))


#: what each rule refuses on a user page (matched on the page with white space folded)
RULES = {
    "issue number": r"\b(?:issues?|PRs?|pull requests?) #?\d+\b|(?<![\w&/#])#\d+\b",
    "commit hash": COMMIT_HASH,
    "dated note": r"\b20\d\d-(?:0[1-9]|1[0-2])(?:-\d\d)?\b",
    "history": r"\bre-?ru[nm]\b|\bre-?ran\b|\bre-?measured\b|\bprevious versions?\b|\bsince the previous\b|"
               r"\bthe previous default\b",
}
#: target sections, matched line by line: a heading naming targets, a paragraph opening with
#: "Targets", a table with a "target" column
TARGETS = re.compile(r"^#+ .*\btargets?\b|^\**targets?\b|^\|(?:[^|\n]*\|)*\s*targets?\s*\|", re.I | re.M)


def history(text: str) -> list[str]:
    """Each piece of study history in ``text``: the rule and the words around it."""
    flat = " ".join(text.split())
    hits = [f"{rule}: ...{flat[max(0, m.start() - 40):m.end() + 20]}..."
            for rule, pattern in RULES.items() for m in re.finditer(pattern, flat, flags=re.I)]
    hits += [f"targets: {m.group(0).strip()[:80]!r}" for m in TARGETS.finditer(text)]
    return hits


def test_the_user_pages_are_found() -> None:
    pages = user_pages()
    assert {"README.md", "docs/data.md", "docs/metrics.md", "docs/objectives/index.md"} <= set(pages)
    assert not any(p.startswith(("docs/results/", "docs/studies/")) for p in pages)


@pytest.mark.parametrize("text", [
    "see issue 12", "Targets (issue 3): QBRank", "issues 3 and 5", "fixed in #41", "(#12)", "PR 7",
    "at commit 7f84e73", "(cab452c)", "run on 2026-11-23", "in 2026-11 the", "re-run at noon", "It was re-measured",
    "the previous version of the boosters", "what changed since the previous", "`x` (the previous default)",
    "a rerun", "### Against the targets", "Targets:\n| a |", "**Targets.** Both",
    "| objective | target | status |",
])
def test_history_is_recognised(text: str) -> None:
    assert history(text)


@pytest.mark.parametrize("text", [
    "LightGBM#6870, onnxmltools#502", "[the contract](#the-objective-contract)", "&#8212;", "a/#3",
    "at most 3.40282347e+38", "max_bin=99999999999", "(SHA-256)", "NIPS 2007, Eq. 8-16", "2003-2009",
    "the paper's averaged targets", "the symbolic link's target", "an issue of the frameworks", "folds 1-5",
    "--resume continues a run", "numbers 0x10", "the earlier run's files",
])
def test_user_wording_is_not_history(text: str) -> None:
    assert history(text) == []


@pytest.mark.parametrize("page", user_pages())
def test_user_page_holds_no_study_history(page: str) -> None:
    hits = history((ROOT / page).read_text(encoding="utf-8"))
    assert hits == [], (f"{page}: study history belongs on a page under docs/studies/ (history narrative in "
                        f"docs/results/README.md):\n" + "\n".join(hits))


# -- links --------------------------------------------------------------------------------------------

FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"(`+).+?\1", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
ANCHOR_TAG = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)


def _prose(text: str) -> str:
    return INLINE_CODE.sub("", FENCED.sub("", text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors of a page (lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-``, a repeated one numbered ``-1``, ``-2``...) and its ``<a id>`` / ``<a name>``."""
    found: set[str] = set(ANCHOR_TAG.findall(text))
    seen: dict[str, int] = {}
    for line in FENCED.sub("", text).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"<[^>]+>", "", m.group(1))
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link in a heading: its text
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def broken_links(page: str) -> list[str]:
    path = ROOT / page
    out = []
    for target in LINK.findall(_prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = unquote(target).partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            out.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            out.append(f"{target}: no heading or <a id> '{anchor}' in {dest.relative_to(ROOT)}")
    return out


def test_anchors_follow_github() -> None:
    text = ("# Top\n## The objective contract (`boostplug/objectives/_contract.py`)\n## Top\n"
            "### Tuning with scikit-learn: `make_scorer`\n```\n# not a heading\n```\n<a id=\"benchmark\"></a>\n")
    assert anchors(text) == {"top", "the-objective-contract-boostplugobjectives_contractpy", "top-1",
                             "tuning-with-scikit-learn-make_scorer", "benchmark"}


def test_broken_links_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("## Here it is\n")
    (tmp_path / "docs" / "a.md").write_text(
        "[ok](b.md) [ok](b.md#here-it-is) [web](https://x.org/y.md) `[code](missing.md)` [self](#top)\n"
        "# Top\n[gone](c.md) [bad anchor](b.md#there) ![img](img/none.png)\n```\n[in code](nope.md)\n```\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert broken_links("docs/a.md") == ["c.md: no such file", "b.md#there: no heading or <a id> 'there' in docs/b.md",
                                         "img/none.png: no such file"]


@pytest.mark.parametrize("page", linked_pages())
def test_relative_links_lead_somewhere(page: str) -> None:
    assert broken_links(page) == []
