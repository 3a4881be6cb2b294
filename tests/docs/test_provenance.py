"""User-facing docs and --help texts say what to run and what it shows; where, when and with
which commit a number was measured belongs in the README beside its output under docs/results/.
Every page under docs/ is read, except those READMEs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RESULTS = DOCS / "results"


def _user_pages() -> list[str]:
    """Every page under docs/, as a path relative to it; READMEs under docs/results/ are where
    provenance goes, so they are the only pages left out."""
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                  if not (p.name == "README.md" and RESULTS in p.parents))


PAGES = _user_pages()

#: Lab-note wording: paths of the project's machine (../shared, /work/, home and temporary
#: folders), dates, commit hashes (named, or a bare 7-40 digit hex word with a letter and a digit,
#: which no number in scientific notation is), the machine's load, re-run narratives.
DATE = r"\b20\d\d-\d\d-\d\d\b"
COMMIT_HASH = r"\bcommit [0-9a-f]{7,40}\b|(?<![\w.+-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w+-])"
LAB_NOTES = re.compile(
    r"\.\./shared\b|(?<![\w.])/(?:work|home|tmp|mnt|Users)/|\b[A-Z]:\\|" + DATE + "|" + COMMIT_HASH + "|"
    r"busy machine|busier machine|shared machine|shared 2-core|2-core machine|shared cores|"
    r"this session|this morning|\bre-?run (?:on|at)\b|\bre-?measured\b")


def _lab_notes(text: str) -> list[str]:
    """Each lab note in ``text`` with some words around it (white space folded, so that a line
    break cannot hide a phrase)."""
    flat = " ".join(text.split())
    return [flat[max(0, m.start() - 40):m.end() + 20] for m in LAB_NOTES.finditer(flat)]


def test_every_page_is_checked() -> None:
    assert {"performance.md", "studies/replication.md", "reliability.md", "objectives/index.md"} <= set(PAGES)
    assert not any(name.startswith("results/") and name.endswith("README.md") for name in PAGES)


@pytest.mark.parametrize("text", [
    "from `../shared/data/MQ2008`", "--work /work/main/x", "written to /tmp/bp_run", "run on 2026-11-23",
    "at commit 7f84e73", "(cab452c)", "on the 2-core\n machine", "it was re-measured",
])
def test_lab_notes_are_recognised(text: str) -> None:
    assert _lab_notes(text)


@pytest.mark.parametrize("text", [
    "--data path/to/MQ2008", "docs/results/mslr_shaped/full.txt", "at most 3.40282347e+38",
    "max_bin=99999999999", "labels times 1e300", "a shared tree parameter", "(SHA-256)",
])
def test_user_wording_is_not_a_lab_note(text: str) -> None:
    assert _lab_notes(text) == []


@pytest.mark.parametrize("name", PAGES)
def test_docs_page_has_no_lab_notes(name: str) -> None:
    hits = _lab_notes((DOCS / name).read_text(encoding="utf-8"))
    assert hits == [], f"docs/{name}: move provenance to a README under docs/results/: {hits}"


@pytest.mark.parametrize("args", [["--help"], ["compare", "--help"], ["info", "--help"], ["calibrate", "--help"]],
                         ids=" ".join)
def test_help_text_names_no_machine(args: list[str], capsys) -> None:
    # in this process (the help text is argparse's, printed by main before any command runs): a new
    # interpreter per case paid boostplug's imports three times
    from boostplug.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(args)
    out = capsys.readouterr()
    assert exit_.value.code in (0, None), out.err
    assert "usage:" in out.out
    hits = [line for line in out.out.splitlines() if LAB_NOTES.search(line) or "machine" in line]
    assert hits == []


def test_every_results_folder_has_a_readme() -> None:
    folders = sorted(p for p in RESULTS.rglob("*") if p.is_dir() and any(f.is_file() for f in p.iterdir()))
    assert folders, "docs/results/ holds no outputs"
    top = {p for p in folders if p.parent == RESULTS}
    missing = [str(p.relative_to(ROOT)) for p in top if not (p / "README.md").is_file()]
    assert (RESULTS / "README.md").is_file()
    assert missing == []


def _cited_outputs(text: str) -> set[str]:
    """The docs/results/ paths a page names; ``booster_table.{txt,json}`` stands for both files."""
    cited = set()
    for path in re.findall(r"docs/results/[\w./{},-]*[\w/}]", text):
        head, brace, rest = path.partition("{")
        alternatives, _, tail = rest.partition("}")
        if brace:
            cited.update(head + middle + tail for middle in alternatives.split(","))
        else:
            cited.add(path)
    return cited


def test_results_paths_cited_by_the_pages_exist() -> None:
    cited = set()
    for name in PAGES:
        cited.update(_cited_outputs((DOCS / name).read_text(encoding="utf-8")))
    assert cited, "the pages cite no output"
    missing = sorted(c for c in cited if not (ROOT / c).exists())
    assert missing == []
