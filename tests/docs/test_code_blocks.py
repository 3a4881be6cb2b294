"""Every code block of the user-facing pages runs, so that a stale example fails a test.

The pages: README.md, ARCHITECTURE.md and CONTRIBUTING.md (when present) and docs/**/*.md, except
docs/results/** (stored outputs and their READMEs). One test per page, in page order:

* ```python blocks run in order in one namespace per page (a later block may use what an earlier
  one defined), in a fresh temporary working directory, with the repository root in the
  environment variable ``BOOSTPLUG_REPO``.
* ```bash and ```sh blocks run through ``bash -e -o pipefail`` in that same folder; in a ```console
  block only the lines that begin with ``$ `` are commands (a command ending in ``\\`` continues on
  the next line), the other lines are their output. The directory of ``sys.executable`` (the
  venv's bin) leads ``PATH``, so ``boostplug`` and ``python`` are this environment's, and the
  repository leads ``PYTHONPATH``, so a worktree runs its own code. ``OMP_NUM_THREADS`` is 1
  unless set (the frameworks' default thread count; the blocks' data are small).
* Any other language (```text, ```json, ```toml, none) is shown, not run.
* ``<!-- not run: REASON -->`` on the line just before an opening fence keeps the block from
  running; the reason must say why (an empty one fails the page).
* ``<!-- needs: shared-data -->`` there runs the block only when ``../shared/data`` (beside the
  repository) exists; while it runs, the data sets in that folder are linked into the working
  directory under their own names (``MQ2008/``, ``OHSUMED/``, ...), as a reader who downloaded
  them would have them. Without the folder the page's other blocks still run, then the test is
  skipped naming the data sets the left-out blocks use.
* The first block that runs on a page must print something: a page opens with an example that
  shows a result.

A marker that is not one of these two, or that is not directly followed by a fence, fails the page.
The blocks of a page run in a process of their own (a block may register an objective or turn on
scikit-learn's metadata routing; neither may leak into another page or into the other tests): a
child that one server process (``_block_runner --serve``, started once for this module) forks with
the common libraries already imported, instead of a new interpreter that imports them per page.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"
TOP_PAGES = ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md")
PAGE_TIMEOUT = 600  # seconds for all the blocks of one page

RUN_LANGUAGES = {"python": "python", "bash": "shell", "sh": "shell", "console": "console"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
NOT_RUN = re.compile(r"^<!--\s*not run:(?P<reason>.*?)-->$")
NEEDS = re.compile(r"^<!--\s*needs:\s*shared-data\s*-->$")
MARKER_LIKE = re.compile(r"^<!--\s*(?:not[ _-]?run|needs)\b", re.IGNORECASE)
#: data set names a needs-shared-data block may use, for the skip message
DATA_SETS = ("MQ2007", "MQ2008", "OHSUMED", "MSLR-WEB10K", "MSLR-WEB30K", "LightGBM_lambdarank", "Yahoo", "Istella")


def user_pages() -> list[str]:
    """Every page whose blocks run, relative to the repository root."""
    pages = [name for name in TOP_PAGES if (ROOT / name).is_file()]
    results = ROOT / "docs" / "results"
    pages += sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")
                    if results not in p.parents)
    return pages


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    language: str  # the fence's first word, lower case ("" for none)
    code: str  # the block's lines, the fence's indentation removed
    not_run: str | None  # the reason of a not-run marker
    needs: bool  # marked needs: shared-data

    @property
    def kind(self) -> str | None:
        """``"python"`` or ``"shell"`` when the block runs here, else None."""
        kind = RUN_LANGUAGES.get(self.language)
        return "shell" if kind == "console" else kind

    def script(self) -> str:
        """What runs: the code, or a console block's commands."""
        if RUN_LANGUAGES.get(self.language) != "console":
            return self.code
        commands, continued = [], False
        for line in self.code.splitlines():
            if continued or line.startswith("$ "):
                commands.append(line if continued else line[2:])
                continued = line.endswith("\\")
        return "\n".join(commands) + "\n"


def parse_blocks(text: str, page: str = "page") -> list[Block]:
    """The fenced blocks of a markdown page with their markers; a ValueError for a marker that is
    malformed, has an empty reason or is not directly followed by a fence, and for an unclosed fence."""
    lines = text.splitlines()
    blocks: list[Block] = []
    marker_at: dict[int, str] = {}
    for i, raw in enumerate(lines):
        stripped = raw.strip()
        if MARKER_LIKE.match(stripped):
            if not (NOT_RUN.match(stripped) or NEEDS.match(stripped)):
                raise ValueError(f"{page} line {i + 1}: unknown marker {stripped!r}: write "
                                 f"'<!-- not run: REASON -->' or '<!-- needs: shared-data -->'")
            marker_at[i] = stripped
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        if j == len(lines):
            raise ValueError(f"{page} line {i + 1}: the code block opened here is never closed")
        body = [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in lines[i + 1:j]]
        marker = marker_at.pop(i - 1, None)
        not_run = needs = None
        if marker is not None and (nr := NOT_RUN.match(marker)):
            not_run = nr["reason"].strip()
            if not not_run:
                raise ValueError(f"{page} line {i}: '<!-- not run: -->' needs a reason (why the block cannot run here)")
        elif marker is not None:
            needs = True
        info = m["info"].strip().split()
        blocks.append(Block(i + 1, info[0].lower() if info else "", "\n".join(body) + "\n", not_run, bool(needs)))
        i = j + 1
    if marker_at:
        first = min(marker_at)
        raise ValueError(f"{page} line {first + 1}: the marker {marker_at[first]!r} must be on the line just "
                         f"before a code block's opening fence")
    return blocks


def _data_sets_named(code: str) -> list[str]:
    """The data sets a block names outside its comment lines."""
    text = "\n".join(line for line in code.lower().splitlines() if not line.lstrip().startswith("#"))
    return [name for name in DATA_SETS if name.lower() in text] or ["a data set of ../shared/data"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH", "")] if p)
    env["BOOSTPLUG_REPO"] = str(ROOT)
    env["MPLBACKEND"] = "Agg"  # a block that plots draws into a file, never a window
    # the blocks' data are small: one OpenMP thread each (unless set). On a busy machine LightGBM's
    # threads otherwise wait for each other longer than they work (50 rounds on the example data:
    # 19 s against 1.6 s with one thread, at a load of 5 on 2 cores)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


class PageServer:
    """``python -m tests.docs._block_runner --serve``: runs each page in a child it forks."""

    def __init__(self) -> None:
        self._log = tempfile.TemporaryFile("w+")  # the server's own stderr (the pages' go to files)
        self.process = subprocess.Popen([sys.executable, "-m", "tests.docs._block_runner", "--serve"], cwd=ROOT,
                                        env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._log, text=True)
        self._answer()

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self._log.seek(0)
            raise RuntimeError(f"the page server died ({self.process.returncode}): {self._log.read()[-6000:]}")
        return json.loads(line)

    def run(self, blocks_file: Path, work: Path, timeout: float) -> subprocess.CompletedProcess:
        out, err = work.parent / f"{work.name}.stdout", work.parent / f"{work.name}.stderr"
        request = {"blocks": str(blocks_file), "cwd": str(work), "stdout": str(out), "stderr": str(err),
                   "timeout": timeout}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        rc = self._answer()["returncode"]
        stdout, stderr = (f.read_text(encoding="utf-8", errors="replace") for f in (out, err))
        if rc is None:
            raise subprocess.TimeoutExpired(str(blocks_file), timeout, stdout, stderr)
        return subprocess.CompletedProcess(str(blocks_file), rc, stdout, stderr)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
        self._log.close()


_server: PageServer | None = None


def _page_server() -> PageServer:
    global _server
    if _server is None or _server.process.poll() is not None:
        _server = PageServer()
        atexit.register(_server.close)
    return _server


@pytest.fixture(scope="module", autouse=True)
def _close_page_server():
    yield
    if _server is not None:
        _server.close()


def run_page(path: Path, name: str, work: Path, shared_data: Path = SHARED_DATA
             ) -> tuple[subprocess.CompletedProcess, list[Block], list[Block]]:
    """Run the blocks of the page ``path`` (called ``name`` in messages) in the folder ``work``:
    (the process, the blocks run, the blocks left out for want of ``shared_data``)."""
    blocks = [b for b in parse_blocks(path.read_text(encoding="utf-8"), name)
              if b.kind is not None and b.not_run is None]
    have_data = shared_data.is_dir()
    run = [b for b in blocks if have_data or not b.needs]
    left_out = [b for b in blocks if b not in run]
    spec = {"page": name, "shared_data": str(shared_data),
            "blocks": [{**asdict(b), "kind": b.kind, "code": b.script()} for b in run]}
    work.mkdir(parents=True, exist_ok=True)
    blocks_file = work.parent / f"{work.name}.blocks.json"
    blocks_file.write_text(json.dumps(spec), encoding="utf-8")
    return _page_server().run(blocks_file, work, PAGE_TIMEOUT), run, left_out


def _first_output(stdout: str) -> str:
    """What the first block run printed."""
    return stdout.split("\x00block 0 start\n", 1)[-1].split("\x00block 0 end", 1)[0]


def check_page(path: Path, name: str, work: Path, shared_data: Path = SHARED_DATA) -> None:
    """Run a page's blocks and fail (AssertionError) as the page test does; skip when blocks
    were left out for want of the data."""
    done, run, left_out = run_page(path, name, work, shared_data)
    assert done.returncode == 0, (f"{name}: a code block failed ({len(run)} blocks run in a temporary folder)\n"
                                  f"--- stdout (last 3000 characters) ---\n{done.stdout[-3000:]}\n"
                                  f"--- stderr (last 6000 characters) ---\n{done.stderr[-6000:]}")
    if run:
        assert _first_output(done.stdout).strip(), (
            f"{name} line {run[0].line}: the page's first example prints nothing; it should show a result")
    if left_out:
        names = sorted({n for b in left_out for n in _data_sets_named(b.code)})
        lines = ", ".join(str(b.line) for b in left_out)
        pytest.skip(f"{name}: ran {len(run)} blocks; the blocks at lines {lines} need {', '.join(names)} in "
                    f"{shared_data}, which is absent (docs/data.md, Public data sets, says where each comes from)")


#: pages about an optional extra: they run where its package is installed and are skipped elsewhere
NEEDS_PACKAGE = {"docs/catboost.md": "catboost"}


@pytest.mark.parametrize("page", user_pages())
def test_every_code_block_runs(page: str, tmp_path: Path) -> None:
    if page in NEEDS_PACKAGE:
        pytest.importorskip(NEEDS_PACKAGE[page], reason=f"{page} needs {NEEDS_PACKAGE[page]} (an optional extra)")
    check_page(ROOT / page, page, tmp_path / "work")


# -- the parser and the runner on known pages ---------------------------------------------------------

PAGE = """# A page

```python
x = 2
print(x)
```

<!-- not run: needs a Spark cluster -->
```python
raise SystemExit("never")
```

* an item:

  ```python
  y = x + 1
  ```

<!-- needs: shared-data -->
```bash
ls MQ2008 > /dev/null
```

```console
$ echo hello \\
  world
hello world
```

```text
not code
```
"""


def test_the_parser_reads_fences_markers_and_console_commands() -> None:
    blocks = parse_blocks(PAGE)
    assert [(b.line, b.language, b.kind) for b in blocks] == [
        (3, "python", "python"), (9, "python", "python"), (15, "python", "python"), (20, "bash", "shell"),
        (24, "console", "shell"), (30, "text", None)]
    assert blocks[1].not_run == "needs a Spark cluster" and not blocks[1].needs
    assert blocks[2].code == "y = x + 1\n"  # the list item's indentation removed
    assert blocks[3].needs and blocks[3].not_run is None
    assert blocks[4].script() == "echo hello \\\n  world\n"  # the output line is not a command


@pytest.mark.parametrize("text, message", [
    ("<!-- not run: -->\n```python\npass\n```\n", "needs a reason"),
    ("<!-- not run:    -->\n```python\npass\n```\n", "needs a reason"),
    ("<!-- not run: slow -->\n\n```python\npass\n```\n", "line just before"),
    ("<!-- needs: MQ2008 -->\n```python\npass\n```\n", "unknown marker"),
    ("<!-- not-run: slow -->\n```python\npass\n```\n", "unknown marker"),
    ("```python\npass\n", "never closed"),
], ids=["empty reason", "blank reason", "marker not before fence", "unknown needs", "misspelt not run", "unclosed"])
def test_a_bad_marker_or_fence_fails_the_page(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_blocks(text)


def _page(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_blocks_share_a_namespace_and_see_this_environment(tmp_path: Path) -> None:
    text = ('```python\nimport os, boostplug\nprint(boostplug.__file__)\nx = 41\n```\n\n'
            '```python\nassert x + 1 == 42\nopen("made.txt", "w").write(os.environ["BOOSTPLUG_REPO"])\n```\n\n'
            '```bash\ntest "$(cat made.txt)" = "$BOOSTPLUG_REPO"\n'
            'python -c "import boostplug, sys; print(boostplug.__file__, sys.executable)"\nboostplug --help > /dev/null\n```\n')
    done, run, left_out = run_page(_page(tmp_path, text), "page.md", tmp_path / "work")
    assert done.returncode == 0, done.stderr
    assert len(run) == 3 and left_out == []
    assert _first_output(done.stdout).strip() == str(ROOT / "boostplug" / "__init__.py")
    assert f"{ROOT / 'boostplug' / '__init__.py'} {sys.executable}" in done.stdout


@pytest.mark.parametrize("text, where", [
    ("```python\nprint(1)\n```\n\n```python\n\nx = undefined_name\n```\n", "line 7"),
    ("```python\nprint(1)\n```\n\n```sh\nfalse\necho never\n```\n", "line 5"),
    ("```python\nprint(1)\n```\n\n```console\n$ exit 3\n```\n", "line 5"),
    ("```python\nprint(1)\n```\n\n```bash\nfalse | true\n```\n", "line 5"),
    ("```python\nprint(1)\n```\n\n```python\nraise SystemExit(0)\n```\n", "line 5"),
], ids=["python NameError", "sh false", "console exit 3", "bash pipefail", "python SystemExit"])
def test_a_failing_block_fails_the_page_naming_its_line(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(AssertionError, match=where):
        check_page(_page(tmp_path, text), "page.md", tmp_path / "work", tmp_path / "no-data")


def test_a_failing_python_block_shows_the_page_line(tmp_path: Path) -> None:
    text = "```python\nprint(1)\n```\n\n```python\nx = 1\ny = undefined_name\n```\n"
    done, _, _ = run_page(_page(tmp_path, text), "docs/page.md", tmp_path / "work")
    assert done.returncode == 1
    assert 'File "docs/page.md", line 7' in done.stderr and "NameError" in done.stderr


def test_a_first_example_that_prints_nothing_fails(tmp_path: Path) -> None:
    text = "<!-- not run: installs a package -->\n```bash\npip install x\n```\n\n```python\nx = 1\n```\n"
    with pytest.raises(AssertionError, match="line 6: the page's first example prints nothing"):
        check_page(_page(tmp_path, text), "page.md", tmp_path / "work")


def test_a_shared_data_block_runs_beside_the_data_or_is_left_out(tmp_path: Path) -> None:
    text = ('```python\nprint("first")\n```\n\n<!-- needs: shared-data -->\n```python\n'
            'print(open("MQ2008/S1.txt").read())\n```\n\n```bash\ntest ! -e MQ2008\n```\n')
    data = tmp_path / "data"
    (data / "MQ2008").mkdir(parents=True)
    (data / "MQ2008" / "S1.txt").write_text("2 qid:1 1:0.5\n")
    page = _page(tmp_path, text)
    done, run, left_out = run_page(page, "page.md", tmp_path / "with", data)
    assert done.returncode == 0, done.stderr
    assert "2 qid:1 1:0.5" in done.stdout and len(run) == 3 and left_out == []  # unlinked after its block
    with pytest.raises(pytest.skip.Exception, match=r"lines 6 need MQ2008 in .*no-data, which is absent"):
        check_page(page, "page.md", tmp_path / "without", tmp_path / "no-data")
