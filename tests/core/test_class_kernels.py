"""The loops compiled per objective class (boostplug._core.class_kernels: the pair base's and the
listwise base's) are cached on disk under a digest of the class's functions: a second process
loads them (no compilation) and gets the same numbers; a class whose functions changed (their code,
or a global constant they read) gets new loops, never the old machine code; nothing is written in
the package; a class whose functions read something that cannot be digested compiles in memory.
Each step runs in a fresh process with its own cache folder, as a user's scripts do."""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from boostplug._core import class_kernels
from boostplug.data import make_ranking

REPO = Path(__file__).resolve().parents[2]

MODULE = """
import numpy as np
from boostplug.objectives import PairwiseLoss, ListwiseLoss, Hessian

TARGET = {target}

class SquaredGap(PairwiseLoss):
    name = "test_squared_gap"
    summary = "squared distance of each pair's score gap from a target (test objective)"
    params = {{}}

    @staticmethod
    def pair_loss(d):
        return 0.5 * (d - TARGET) ** 2

    @staticmethod
    def pair_grad(d):
        return {grad}

    @staticmethod
    def pair_hess(d):
        return 1.0


class Centred(ListwiseLoss):
    name = "test_centred"
    summary = "each query's squared scores about their mean (test objective)"
    hessians = {{"exact": Hessian("exact", "1 - 1/n")}}

    @staticmethod
    def list_loss(s, doc, query):
        return 0.5 * np.sum((s - s.mean() - TARGET) ** 2)

    @staticmethod
    def list_grad_hess(s, doc, query, grad, hess):
        grad[:] = s - s.mean() - TARGET
        hess[:] = 1.0 - 1.0 / s.shape[0]
"""

SCRIPT = """
import json, numpy as np
from boostplug import objectives
from boostplug._core import dispatch
from boostplug.data import make_ranking
from mylosses import SquaredGap, Centred

d = make_ranking(n_queries=20, docs_per_query=(3, 12), n_features=6, n_labels=3, seed=1)
s = np.random.default_rng(1).normal(size=d.n_docs)
out = {}
kernels = []
loops = lambda loss: [dispatch.serial_twin(k) for k in getattr(loss, "_kernels", None) or (loss._kernel,)]
for cls in (SquaredGap, Centred):
    mine = cls(d.y, d.group_ptr, hessian_floor=False)
    out[cls.__name__] = [mine.loss(s), *(a.tolist() for a in mine.grad_hess(s))]
    kernels += loops(mine)
ndcg1 = objectives.get("ndcg_loss1").prepare(d.y, d.group_ptr, truncation_level=4)
out["ndcg_loss1"] = [ndcg1.loss(s), *(a.tolist() for a in ndcg1.grad_hess(s))]
kernels += loops(ndcg1)
out["hits"] = sum(len(k.stats.cache_hits) for k in kernels)
out["misses"] = sum(len(k.stats.cache_misses) for k in kernels)
out["per"] = [[str(x) for x in k.stats.cache_misses] for k in kernels]
print(json.dumps(out))
"""


def run(tmp: Path, target: float, grad: str = "d - TARGET") -> dict:
    code = tmp / "code"
    code.mkdir(exist_ok=True)
    (code / "mylosses.py").write_text(MODULE.format(target=target, grad=grad))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "cache"), XDG_CACHE_HOME=str(tmp / "home-cache"),
               PYTHONPATH=os.pathsep.join([str(code), str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def brute_grad(target: float) -> np.ndarray:
    """The gradient of sum over critical pairs of 0.5 (s_i - s_j - target)^2, pair by pair."""
    d = make_ranking(n_queries=20, docs_per_query=(3, 12), n_features=6, n_labels=3, seed=1)
    s = np.random.default_rng(1).normal(size=d.n_docs)
    g = np.zeros(d.n_docs)
    for a, b in zip(d.group_ptr[:-1], d.group_ptr[1:]):
        for i in range(a, b):
            for j in range(a, b):
                if d.y[i] > d.y[j]:
                    t = s[i] - s[j] - target
                    g[i] += t
                    g[j] -= t
    return g


def test_class_loops_load_from_the_cache_and_follow_changed_functions(tmp_path):
    first = run(tmp_path, 0.5)
    # one pair loop, two listwise loops each (gradient, loss): compiled, and written into the cache
    assert first["misses"] == 5 and first["hits"] == 0, first["per"]
    second = run(tmp_path, 0.5)
    assert second["misses"] == 0 and second["hits"] == 5     # loaded: nothing compiled
    counts = ("hits", "misses", "per")
    assert {k: v for k, v in second.items() if k not in counts} == {k: v for k, v in first.items() if k not in counts}
    np.testing.assert_allclose(second["SquaredGap"][1], brute_grad(0.5), rtol=1e-12, atol=1e-12)
    assert list((tmp_path / "cache" / "boostplug_kernels").glob("*.nbi"))  # where the cache is

    changed_constant = run(tmp_path, 2.0)                   # a global the functions read
    np.testing.assert_allclose(changed_constant["SquaredGap"][1], brute_grad(2.0), rtol=1e-12, atol=1e-12)
    assert changed_constant["Centred"] != first["Centred"]
    changed_code = run(tmp_path, 0.5, grad="2.0 * (d - TARGET)")  # the same names, another body
    np.testing.assert_allclose(changed_code["SquaredGap"][1], 2.0 * brute_grad(0.5), rtol=1e-12, atol=1e-12)
    assert changed_code["ndcg_loss1"] == first["ndcg_loss1"] and changed_code["Centred"] == first["Centred"]
    assert changed_code["misses"] == 1, changed_code["per"]  # only the changed class compiled again


def test_nothing_is_written_in_the_package(tmp_path):
    """The class loops live in the user's cache folder (here under XDG_CACHE_HOME, with no
    NUMBA_CACHE_DIR): no generated source, no cache of a class kernel, in the package."""
    before = {p for p in (REPO / "boostplug").rglob("*") if p.is_file()}
    code = tmp_path / "code"
    code.mkdir()
    (code / "mylosses.py").write_text(MODULE.format(target=1.0, grad="d - TARGET"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "home-cache"),
               PYTHONPATH=os.pathsep.join([str(code), str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    new = {p for p in (REPO / "boostplug").rglob("*") if p.is_file()} - before
    assert not [p for p in new if "mylosses" in p.name or "pair_kernels.pair_kernel" in p.name
                or "listwise.list_kernel" in p.name or p.suffix == ".py"]
    assert list((tmp_path / "home-cache" / "boostplug" / "kernels").glob("*pair_sums*.nbi"))


class _Kind(enum.Enum):
    ONE = 1


def test_a_closure_over_something_without_a_digest_compiles_in_memory():
    """A function that reads a value of no kind the digest knows (an enum member, which numba
    compiles as a constant): no digest, so no disk cache (never a stale one), and it still runs."""
    kind = _Kind.ONE

    def reads_an_enum(x):
        return x + kind.value

    assert class_kernels.digest(reads_an_enum) is None
    kernel = class_kernels.compile_closure(reads_an_enum)
    assert kernel(1.0) == 2.0 and type(kernel._cache).__name__ == "NullCache"
    assert class_kernels.digest(lambda x: x + 1.0) is not None
    assert class_kernels.digest(lambda x: x + 1.0) != class_kernels.digest(lambda x: x + 2.0)
    assert class_kernels.digest(lambda x: x + np.float32(1.0)) != class_kernels.digest(lambda x: x + np.float32(2.0))


def test_a_cache_folder_others_can_write_is_not_used(tmp_path):
    """A NUMBA_CACHE_DIR everyone may write into: the class loops are compiled in memory, with one
    warning naming the folder (files planted there would run as this user when numba loads them)."""
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)
    code = tmp_path / "code"
    code.mkdir()
    (code / "mylosses.py").write_text(MODULE.format(target=1.0, grad="d - TARGET"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(shared), XDG_CACHE_HOME=str(tmp_path / "home-cache"),
               PYTHONPATH=os.pathsep.join([str(code), str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-W", "always", "-c", SCRIPT], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert str(shared) in done.stderr and "writable by others" in done.stderr
    assert not list(shared.rglob("*.nbi"))
