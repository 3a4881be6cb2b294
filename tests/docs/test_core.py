"""ARCHITECTURE.md's "## The core and the parts around it" holds: every import under boostplug/ stays
inside its part or goes to a part it may import (read like the layers test: at module level,
inside functions and under ``if TYPE_CHECKING:``); the core trains both frameworks with a
registered objective in a process where every other part, pyspark, dask and distributed cannot be
imported; and ``import boostplug``, ``boostplug.lightgbm``, ``boostplug.xgboost`` load none of them."""

from __future__ import annotations

import re

from tests._child import run_child
from tests.docs.test_layers import ROOT, _all_imports, _modules

#: Libraries only the outer parts use: the core must neither need nor load them.
OUTER_LIBRARIES = ("pyspark", "dask", "distributed")


def _parts() -> dict[str, tuple[list[str], list[str]]]:
    """The picture: part -> (its names under boostplug/, dotted; the parts it may import)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## The core and the parts around it\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    lines: list[str] = []
    for line in block.splitlines():
        if line.startswith(" ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    parts: dict[str, tuple[list[str], list[str]]] = {}
    for line in lines:
        m = re.fullmatch(r"(\w+): ([\w., ]+?)(?:; imports ([\w, ]+))?", line)
        assert m, f"ARCHITECTURE.md's core picture: a part is '<part>: <names>; imports <parts>', got {line!r}"
        names = ["boostplug" if n == "__init__" else f"boostplug.{n}" for n in m.group(2).split(", ")]
        parts[m.group(1)] = (names, m.group(3).split(", ") if m.group(3) else [])
    assert "core" in parts and not parts["core"][1], "the core imports no other part"
    return parts


def _part_of(module: str, parts: dict[str, tuple[list[str], list[str]]]) -> str:
    """The part of the longest listed name that is ``module`` or a package holding it."""
    best = max(((len(n), part) for part, (names, _) in parts.items() for n in names
                if module == n or (n != "boostplug" and module.startswith(n + "."))), default=None)
    assert best is not None, f"{module} is in no part of ARCHITECTURE.md's core picture: add it (or its package)"
    return best[1]


def _outer_names(parts: dict[str, tuple[list[str], list[str]]]) -> list[str]:
    return sorted(n for part, (names, _) in parts.items() if part != "core" for n in names)


def test_every_module_is_in_one_part_and_imports_only_what_its_part_may() -> None:
    parts = _parts()
    listed = [n for names, _ in parts.values() for n in names]
    assert len(listed) == len(set(listed)), "a name is in two parts"
    modules = _modules()
    assert not set(listed) - set(modules), f"the core picture names what is not in boostplug/: " \
                                           f"{sorted(set(listed) - set(modules))}"
    for part, (_, allowed) in parts.items():
        assert set(allowed) <= set(parts), f"{part} may import a part that does not exist: {allowed}"
    wrong = []
    for imp in _all_imports():
        source, target = _part_of(imp.source, parts), _part_of(imp.target, parts)
        if target != source and target not in parts[source][1]:
            wrong.append(f"{imp.source} ({source}) line {imp.line} imports {imp.target} ({target})")
    assert not wrong, "imports that leave their part of ARCHITECTURE.md's core picture:\n" + "\n".join(wrong)


def _run(script: str, blocked: list[str]):
    """``script``'s JSON, run in a child process that imports boostplug from this checkout."""
    return run_child(f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + script, ",".join(blocked))


_BLOCK = r'''
import importlib.abc, sys
BLOCKED = sys.argv[1].split(",")


class Unimportable(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ImportError(f"{name} is made unimportable for this test")
        return None


sys.meta_path.insert(0, Unimportable())
'''

_TRAIN = _BLOCK + r'''
import json
import numpy as np
import lightgbm as lgb
import xgboost as xgb
import boostplug.testing
from boostplug import lightgbm as bpl, metrics, objectives, xgboost as bpx
from boostplug.data import make_ranking
from boostplug.objectives import Hessian, Loss


class HalfSquares(Loss):
    """0.5 * sum (s - y)^2: a registered objective of the test's own."""

    name = "half_squares_core_test"
    summary = "0.5 * sum (s - y)^2 (test objective)"
    params = {}
    hessians = {"exact": Hessian("exact", "W_q")}

    def _loss(self, scores):
        r = scores - self.labels
        return 0.5 * float(r @ r)

    def _grad_hess(self, scores):
        return scores - self.labels, np.ones_like(scores)


objectives.register(HalfSquares)
train = make_ranking(n_queries=30, docs_per_query=(4, 12), n_features=5, seed=1)
out = {}
booster = lgb.train({"objective": bpl.objective(HalfSquares.name), "num_threads": 1, "verbose": -1,
                     "min_data_in_leaf": 5}, bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), 5)
out["lightgbm"] = metrics.ndcg(booster.predict(train.X), train.y, train.group_ptr, k=10)
booster = xgb.train(bpx.params(nthread=1), bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr), 5,
                    obj=bpx.objective(HalfSquares.name))
out["xgboost"] = metrics.ndcg(booster.predict(bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)), train.y,
                              train.group_ptr, k=10)
out["baseline"] = metrics.ndcg(np.zeros(len(train.y)), train.y, train.group_ptr, k=10)
out["loaded"] = sorted(m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in BLOCKED))
print(json.dumps(out))
'''


def test_the_core_trains_both_frameworks_with_every_other_part_unimportable() -> None:
    out = _run(_TRAIN, _outer_names(_parts()) + list(OUTER_LIBRARIES))
    assert out["loaded"] == []
    for framework in ("lightgbm", "xgboost"):  # 5 rounds on the labels rank better than all-equal scores
        assert 0 < out["baseline"] < out[framework] <= 1, out


_IMPORTS = r'''
import json, sys
seen = {}
for name in ("boostplug", "boostplug.lightgbm", "boostplug.xgboost"):
    __import__(name)
    seen[name] = sorted(m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in sys.argv[1].split(",")))
print(json.dumps(seen))
'''


def test_importing_boostplug_and_its_adapters_loads_no_outer_part() -> None:
    """No command (compare, cli), worker guard (compare's), Spark, Dask, distributed worker or
    export module, nor pyspark, dask or distributed: checked after each import in turn."""
    outer = _outer_names(_parts())
    assert {"boostplug.compare", "boostplug.cli", "boostplug.spark", "boostplug.dask"} <= set(outer)
    seen = _run(_IMPORTS, outer + list(OUTER_LIBRARIES))
    assert seen == {"boostplug": [], "boostplug.lightgbm": [], "boostplug.xgboost": []}
