"""ARCHITECTURE.md's "## Layers" picture holds for every import under boostplug/: no module imports a
higher floor, and no modules import each other round a circle.

Every ``import`` and ``from ... import`` is read with ``ast``: at module level, inside functions
and under ``if TYPE_CHECKING:`` alike. ``from pkg import name`` imports the module ``pkg.name``
when there is one, else the package ``pkg`` (its ``__init__``); the parent packages Python runs
on the way are not counted (every submodule would otherwise import its package, which imports it).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "boostplug"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted ("boostplug.compare.report")
    line: int
    target: str  # the boostplug module imported
    type_checking: bool  # under ``if TYPE_CHECKING:``: read by type checkers, never run


def _modules() -> dict[str, Path]:
    """Every module under boostplug/ by dotted name; a package by its own name (its __init__)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def target(dotted: str) -> str | None:
        while dotted and dotted not in modules:  # ``import boostplug.x.y as z`` where y is a name
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    def visit(node: ast.AST, type_checking: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_checking)
            return
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [target(a.name) for a in node.names if a.name.split(".")[0] == "boostplug"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] == "boostplug":
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else target(module)
                           for a in node.names]
        for t in targets:
            assert t is not None, f"{name} line {node.lineno} imports a boostplug module that does not exist"
            if t != name:
                found.append(Import(name, node.lineno, t, type_checking))
        for child in ast.iter_child_nodes(node):
            visit(child, type_checking)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return found


def _all_imports() -> list[Import]:
    modules = _modules()
    return list(dict.fromkeys(imp for name, path in modules.items() for imp in _imports_of(name, path, modules)))


def _floors() -> dict[str, int]:
    """The picture of ARCHITECTURE.md's "## Layers": name (under boostplug/, dotted) -> floor."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("\n## Layers\n", 1)[1].split("```\n", 2)[1]
    floors: dict[str, int] = {}
    for line in block.splitlines():
        m = re.fullmatch(r"(\d+) ([\w., ]+): .+", line)
        assert m, f"ARCHITECTURE.md's Layers: a floor is '<number> <names, comma-separated>: <what>', got {line!r}"
        for n in m.group(2).split(", "):
            assert n not in floors, f"ARCHITECTURE.md's Layers lists {n} twice"
            floors["boostplug" if n == "__init__" else f"boostplug.{n}"] = int(m.group(1))
    return floors


def _floor_of(module: str, floors: dict[str, int]) -> int:
    """The floor of the longest listed name that is ``module`` or a package holding it."""
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in floors and (k > 1 or module == "boostplug"):
            return floors[prefix]
    raise AssertionError(f"{module} is on no floor of ARCHITECTURE.md's Layers: add it (or its package) there")


def test_the_picture_names_real_modules_and_places_every_one() -> None:
    floors = _floors()
    modules = _modules()
    assert not set(floors) - set(modules), f"ARCHITECTURE.md's Layers names what is not in boostplug/: " \
                                           f"{sorted(set(floors) - set(modules))}"
    for m in modules:
        _floor_of(m, floors)


def test_no_module_imports_a_higher_floor() -> None:
    floors = _floors()
    upward = [f"{imp.source} (floor {_floor_of(imp.source, floors)}) line {imp.line} imports {imp.target} "
              f"(floor {_floor_of(imp.target, floors)})"
              for imp in _all_imports() if _floor_of(imp.target, floors) > _floor_of(imp.source, floors)]
    assert not upward, "imports that run back up ARCHITECTURE.md's Layers:\n" + "\n".join(upward)


def _a_circle(start: str, graph: dict[str, dict[str, int]], within: set[str]) -> list[tuple[str, int]]:
    """A shortest path ``start -> ... -> start`` inside ``within``: (module, line of its import) each."""
    previous: dict[str, tuple[str, int]] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for m in frontier:
            for t, line in sorted(graph.get(m, {}).items()):
                if t not in within or t in previous:
                    continue
                previous[t] = (m, line)
                if t == start:
                    path = []
                    node = start
                    while True:
                        m2, l2 = previous[node]
                        path.append((m2, l2))
                        node = m2
                        if node == start:
                            return path[::-1]
                nxt.append(t)
        frontier = nxt
    raise AssertionError(f"no circle through {start}")  # pragma: no cover - only called inside a circle


def circles(imports: list[Import]) -> list[str]:
    """Each group of modules that import one another round a circle (a strongly connected
    component of the import graph), as one circle through it, sorted."""
    graph: dict[str, dict[str, int]] = {}
    for imp in imports:
        graph.setdefault(imp.source, {}).setdefault(imp.target, imp.line)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    out = []
    for group in groups:
        path = _a_circle(min(group), graph, group)
        out.append(" -> ".join(f"{m} (line {line})" for m, line in path) + f" -> {min(group)}")
    return sorted(out)


def test_no_import_circles() -> None:
    """Counted: every import, at module level, inside a function (a lazy import that closes a
    circle is a circle all the same) or under ``if TYPE_CHECKING:`` (a type that comes from a
    module importing this one is a circle of the design: the piece both use moves down)."""
    found = circles(_all_imports())
    assert not found, "modules that import each other round a circle:\n" + "\n".join(found)


def test_the_checks_see_what_they_should() -> None:
    """The reader and the circle finder on known cases: a lazy import inside a function, a
    TYPE_CHECKING import, ``from . import name`` of a module and of a package attribute."""
    modules = _modules()
    got = {(i.target, i.type_checking) for i in _imports_of("boostplug.compare.training",
                                                            modules["boostplug.compare.training"], modules)}
    assert ("boostplug.boosters._weak_rankers", False) in got  # inside a function
    typed = {(i.target, i.type_checking) for i in _imports_of("boostplug.frameworks.dask.stopping",
                                                              modules["boostplug.frameworks.dask.stopping"], modules)}
    assert ("boostplug.frameworks.distributed.stop", True) in typed  # under TYPE_CHECKING
    assert ("boostplug.lightgbm", False) in got  # ``from .. import lightgbm as bpl``: a module
    cli = {i.target for i in _imports_of("boostplug.cli", modules["boostplug.cli"], modules)}
    assert "boostplug" in cli  # ``from .. import __version__``: the package itself
    a_b = [Import("a", 3, "b", False), Import("b", 5, "c", False), Import("c", 7, "a", False),
           Import("c", 8, "d", False)]
    assert circles(a_b) == ["a (line 3) -> b (line 5) -> c (line 7) -> a"]
    assert circles(a_b[:2]) == []
