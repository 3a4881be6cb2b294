"""The speed guards' A/B runner: the same measurement in two checkouts of boostplug (A: the base, B:
this one), in child processes that alternate A, B, A, B, ... on one machine, so that a busy spell
hits both alike and no number recorded on another CPU is needed.

A child is started in its checkout (``PYTHONPATH`` and ``BOOSTPLUG_CHECKOUT`` name it, the working
directory is it) and prints one JSON object as its last line of output: ``{"boostplug": the
__file__ of the boostplug it imported, case: number, ...}``. The runner checks that the child
timed the checkout it was meant to, and :func:`compare` puts the per-pair numbers side by side.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
CHECKOUT_ENV = "BOOSTPLUG_CHECKOUT"   # the checkout a child imports boostplug from


@contextlib.contextmanager
def checkout(base: str | Path) -> Iterator[Path]:
    """``base`` as a folder holding a checkout: itself if it is a folder, else a commit (anything
    ``git rev-parse`` takes) checked out with ``git worktree add --detach`` in a temporary folder,
    removed on the way out."""
    path = Path(base)
    if path.is_dir():
        yield path.absolute()
        return
    rev = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    if rev.returncode != 0:
        raise SystemExit(f"--base {base!r} is neither a folder nor a commit of {ROOT}")
    tmp = Path(tempfile.mkdtemp(prefix="boostplug-base-"))
    where = tmp / "checkout"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(where), rev.stdout.strip()], cwd=ROOT,
                   check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def run_child(root: Path, argv: Sequence[str]) -> dict:
    """Run ``python *argv`` with boostplug taken from ``root``; the JSON of its last output line.
    The kernels' serial/parallel switch is the default one on both sides (a checkout from before
    ``boostplug calibrate`` has no other), unless ``BOOSTPLUG_PARALLEL_MIN_WORK`` is set."""
    root = root.absolute()
    env = {"BOOSTPLUG_PARALLEL_MIN_WORK": "5000000", **os.environ, "PYTHONPATH": str(root), CHECKOUT_ENV: str(root)}
    out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=False, env=env, cwd=root)
    if out.returncode != 0:
        raise SystemExit(f"the run in {root} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    imported = Path(res.pop("boostplug")).absolute()
    if root not in imported.parents:
        raise SystemExit(f"the run in {root} timed the boostplug of {imported.parent}, not its own")
    return res


def interleaved(a: Path, b: Path, argv: Sequence[str], pairs: int) -> tuple[list[dict], list[dict]]:
    """The outputs of ``pairs`` runs of ``argv`` in each checkout, in the order A, B, A, B, ..."""
    runs_a, runs_b = [], []
    for _ in range(pairs):
        runs_a.append(run_child(a, argv))
        runs_b.append(run_child(b, argv))
    return runs_a, runs_b


@dataclass
class Row:
    """One case: the best (smallest) number of each side, B/A of the bests, the per-pair B/A range."""

    case: str
    a: float | None
    b: float | None
    pair_lo: float = float("nan")
    pair_hi: float = float("nan")

    @property
    def ratio(self) -> float:
        return self.b / self.a if self.a and self.b is not None else float("nan")

    def status(self, tolerance: float) -> str:
        if self.a is None:
            return "new"
        if self.b is None:
            return "gone"
        return "SLOWER" if self.ratio > tolerance else ""


def compare(runs_a: list[dict], runs_b: list[dict]) -> list[Row]:
    """Per case (every numeric key of either side, B's order first): the :class:`Row` of the runs."""
    cases = list(dict.fromkeys(k for r in runs_b + runs_a for k, v in r.items() if isinstance(v, (int, float))))
    rows = []
    for case in cases:
        a = [r[case] for r in runs_a if case in r]
        b = [r[case] for r in runs_b if case in r]
        if not a or not b:
            rows.append(Row(case, min(a) if a else None, min(b) if b else None))
            continue
        pairs = [y / x for x, y in zip(a, b)]
        rows.append(Row(case, min(a), min(b), min(pairs), max(pairs)))
    return rows


def report(rows: list[Row], tolerance: float, columns: dict[str, str], scale: float = 1.0, width: int = 40,
           extra: dict[str, str] | None = None) -> int:
    """Print the rows (``columns``: the headings of A's and B's numbers, shown times ``scale``;
    ``extra``: more text per case), the cases whose B/A is above ``tolerance``; 1 if there is any,
    else 0."""
    head_a, head_b = columns["a"], columns["b"]
    print(f"{'case':<{width}} {head_a:>10} {head_b:>10} {'B/A':>6}  per-pair B/A")
    slower = []
    for r in rows:
        status = r.status(tolerance)
        if status == "SLOWER":
            slower.append(r.case)
        a = f"{r.a * scale:10.3f}" if r.a is not None else f"{'-':>10}"
        b = f"{r.b * scale:10.3f}" if r.b is not None else f"{'-':>10}"
        both = r.a is not None and r.b is not None
        ratio, pairs = (f"{r.ratio:6.3f}", f"{r.pair_lo:.3f}-{r.pair_hi:.3f}") if both else (f"{'-':>6}", "")
        more = (extra or {}).get(r.case, "")
        print(f"{r.case:<{width}} {a} {b} {ratio}  {pairs:<12} {more:<20} {status}".rstrip())
    measured = [r.ratio for r in rows if r.a is not None and r.b is not None]
    if measured:
        print(f"\nlargest B/A of the bests: {max(measured):.3f}")
    print(f"{len(slower)} case(s) slower than {tolerance:.2f}x their base" + (": " + ", ".join(slower) if slower else ""))
    return 1 if slower else 0


def cpu() -> dict[str, str]:
    """The machine a number was measured on: numba's CPU name (what ``numba -s`` prints as ``CPU
    Name``: the code generation target) and the processor's model name."""
    try:
        from boostplug._core.parallel_threshold import cpu_name

        numba_name = cpu_name()
    except ImportError:
        numba_name = "unknown"
    model = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu_name": numba_name, "cpu_model": model}


def this_checkout() -> Path:
    """The checkout a guard times as B: the one ``BOOSTPLUG_CHECKOUT`` names (a child of an A/B
    run is started so), else the one the guard's script is in."""
    return Path(os.environ.get(CHECKOUT_ENV, ROOT)).absolute()
