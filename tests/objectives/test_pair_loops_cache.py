"""The pair loops compiled per objective class (objectives._pairwise_kernels.pair_loops: those of the
pairwise and lambda-weighted losses and NDCG-Loss1's) and the pair functions of a class in a file
are cached on disk: a second process loads them (no compilation) and gets the same numbers; a
class whose functions changed (its code, or a global constant they read) gets new loops, not the
old machine code. Each step runs in a fresh process with its own NUMBA_CACHE_DIR, as a user's
scripts do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from boostplug.data import make_ranking

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, numpy as np
from boostplug import objectives
from boostplug._core import dispatch
from boostplug.data import make_ranking
from boostplug.objectives import PairwiseLoss
from boostplug.objectives import _pairwise_kernels as K

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

d = make_ranking(n_queries=20, docs_per_query=(3, 12), n_features=6, n_labels=3, seed=1)
s = np.random.default_rng(1).normal(size=d.n_docs)
mine = SquaredGap(d.y, d.group_ptr)
out = {{"grad": mine.grad_hess(s)[0].tolist(), "loss": mine.loss(s),
       "lambdarank": objectives.get("lambdarank").grad_hess(s, d.y, d.group_ptr)[0].tolist()}}
loss1 = objectives.get("ndcg_loss1").prepare(d.y, d.group_ptr, truncation_level=4)
out["ndcg_loss1"] = [loss1.loss(s), *(a.tolist() for a in loss1.grad_hess(s))]
hits = misses = 0
for loops in K._LOOPS.values():
    for k in (loops.listed_loss_sums, loops.listed_grad_hess_sums, loops.lambda_sums):
        for form in (k, dispatch.serial_twin(k)):
            hits += len(form.stats.cache_hits)
            misses += len(form.stats.cache_misses)
out["hits"], out["misses"] = hits, misses
# NDCG-Loss1's ordered-pair loop, wherever it lives (its serial twin runs on data this small)
from boostplug.cli.warmup import _dispatchers
ordered = [k for k in _dispatchers() if k.py_func.__name__.startswith("ordered_pair_sums")]
out["ndcg_loss1_hits"] = sum(len(k.stats.cache_hits) for k in ordered)
out["ndcg_loss1_misses"] = sum(len(k.stats.cache_misses) for k in ordered)
# the pair functions compiled alone (their types checked), cached beside their file (lambdarank's; the
# class above lives in no file, so numba cannot cache its functions)
from numba.core.caching import NullCache
from boostplug.objectives import pairwise
cached = [f for fns in pairwise._FUNCTIONS.values() for f in fns[:3] + fns[4:] if f is not None
          and not isinstance(f._cache, NullCache)]
out["function_hits"] = sum(len(f.stats.cache_hits) for f in cached)
out["function_misses"] = sum(len(f.stats.cache_misses) for f in cached)
print(json.dumps(out))
"""


def run(cache: Path, target: float, grad: str = "d - TARGET") -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get(
        "PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(target=target, grad=grad)], capture_output=True,
                          text=True, env=env, timeout=600)
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


def test_pair_loops_load_from_the_cache_and_follow_changed_functions(tmp_path):
    cache = tmp_path / "numba-cache"
    first = run(cache, 0.5)
    assert first["misses"] > 0 and first["hits"] == 0       # compiled, and written into the cache
    assert first["ndcg_loss1_misses"] > 0 and first["ndcg_loss1_hits"] == 0
    second = run(cache, 0.5)
    assert second["misses"] == 0 and second["hits"] > 0     # loaded: nothing compiled
    assert second["function_misses"] == 0 and second["function_hits"] >= 5  # lambdarank's five
    assert second["ndcg_loss1_misses"] == 0 and second["ndcg_loss1_hits"] > 0  # NDCG-Loss1's loop too
    counts = ("hits", "misses", "function_hits", "function_misses", "ndcg_loss1_hits", "ndcg_loss1_misses")
    assert {k: v for k, v in second.items() if k not in counts} == {k: v for k, v in first.items() if k not in counts}
    np.testing.assert_allclose(second["grad"], brute_grad(0.5), rtol=1e-12, atol=1e-12)

    changed_constant = run(cache, 2.0)                      # a global the pair functions read
    np.testing.assert_allclose(changed_constant["grad"], brute_grad(2.0), rtol=1e-12, atol=1e-12)
    changed_code = run(cache, 0.5, grad="2.0 * (d - TARGET)")  # the same names, another body
    np.testing.assert_allclose(changed_code["grad"], 2.0 * brute_grad(0.5), rtol=1e-12, atol=1e-12)
    assert changed_code["lambdarank"] == first["lambdarank"]
    assert changed_code["ndcg_loss1"] == first["ndcg_loss1"]


# ---- old files are removed ------------------------------------------------------------------------------------
DAY = 86400.0


def _data():
    d = make_ranking(n_queries=20, docs_per_query=(3, 12), n_features=6, n_labels=3, seed=1)
    return d, np.random.default_rng(1).normal(size=d.n_docs)


def _squared_gap(target_name: str):
    """A fresh pairwise class, with function objects of its own (so loops of its own, built anew)."""
    from boostplug.objectives import PairwiseLoss

    if target_name == "half":
        def pair_loss(d):
            return 0.5 * (d - 0.5) ** 2

        def pair_grad(d):
            return d - 0.5
    else:
        def pair_loss(d):
            return 0.5 * (d - 2.0) ** 2

        def pair_grad(d):
            return d - 2.0

    def pair_hess(d):
        return 1.0

    return type("Gap", (PairwiseLoss,), {
        "name": f"test_gap_{target_name}", "params": {},
        "summary": "squared distance of each pair's score gap from a target (test objective)",
        **{f.__name__: staticmethod(f) for f in (pair_loss, pair_grad, pair_hess)}})


def _age(path: Path, atime_days: float, mtime_days: float) -> None:
    now = time.time()
    os.utime(path, (now - atime_days * DAY, now - mtime_days * DAY))


def test_writing_a_new_pair_loops_file_removes_the_unused_ones_with_their_cache(tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR set: a class's loops file and numba's cache files of it, all unused for
    40 days, go when another class's file is written; a file read 2 days ago (access time) stays
    whatever its modification time, and so do numba's cache files whose source is used, files of
    other names, and a temporary file being written; cache files whose source is gone and a
    temporary file left over, both unused as long, go too. The new class's gradient is right."""
    import numba

    from boostplug.objectives import _pairwise_kernels as K

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))
    d, s = _data()
    np.testing.assert_allclose(_squared_gap("half")(d.y, d.group_ptr).grad_hess(s)[0], brute_grad(0.5), rtol=1e-12,
                               atol=1e-12)
    folder = tmp_path / "boostplug_pair_loops"
    old = sorted(tmp_path.rglob("pair_loops_*"))
    assert {f.suffix for f in old} == {".py", ".nbi", ".nbc"}       # the source and numba's cache of it
    cache = next(f.parent for f in old if f.suffix == ".nbi")
    assert cache in K._cache_folders(folder)
    for f in old:
        _age(f, 40, 40)
    read_lately = folder / f"pair_loops_{'a' * 32}.py"
    its_cache = cache / f"pair_loops_{'a' * 32}.lambda_sums-12.py311.nbi"
    orphan = cache / f"pair_loops_{'b' * 32}.lambda_sums-12.py311.0.nbc"
    other, leftover, writing = folder / "notes.txt", folder / "tmp_left.tmp", folder / "tmp_now.tmp"
    for f in (read_lately, its_cache, orphan, other, leftover, writing):
        f.write_text("x")
    _age(read_lately, 2, 40)
    for f in (its_cache, orphan, other, leftover):
        _age(f, 40, 40)

    new = _squared_gap("two")(d.y, d.group_ptr)
    np.testing.assert_allclose(new.grad_hess(s)[0], brute_grad(2.0), rtol=1e-12, atol=1e-12)
    assert not any(f.exists() for f in old + [orphan, leftover])
    assert all(f.exists() for f in (read_lately, its_cache, other, writing))
    assert len(list(folder.glob("pair_loops_*.py"))) == 2          # the new one and the one read lately


def test_a_pair_loops_file_in_use_is_marked_and_kept(tmp_path, monkeypatch):
    """Using a file sets its access time and keeps its modification time to the nanosecond (older
    numba versions stamp their cache with it); remove_unused then leaves it, and removes it once
    unused for longer than UNUSED_DAYS."""
    import numba

    from boostplug.objectives import _pairwise_kernels as K

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))
    path = K._source_file("x = 1\n", "c" * 32)
    _age(path, 40, 40)
    mtime = path.stat().st_mtime_ns
    assert K.remove_unused(path.parent, days=50) == []
    assert K._source_file("x = 1\n", "c" * 32) == path
    assert path.stat().st_mtime_ns == mtime and path.stat().st_atime > time.time() - 60
    assert K.remove_unused(path.parent) == [] and path.exists()
    _age(path, K.UNUSED_DAYS + 1, K.UNUSED_DAYS + 1)
    assert K.remove_unused(path.parent) == [path] and not path.exists()


def test_loops_whose_file_is_removed_meanwhile_compile_without_a_cache(tmp_path, monkeypatch):
    """A process whose loops file another one removes between writing it and compiling around it
    (the removal's race) gets working loops, compiled without a disk cache, not numba's "no locator"."""
    import numba

    from boostplug.objectives import _pairwise_kernels as K

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))
    written = K._source_file

    def then_removed(source, digest):
        path = written(source, digest)
        path.unlink()
        return path

    monkeypatch.setattr(K, "_source_file", then_removed)
    d, s = _data()
    obj = _squared_gap("half")(d.y, d.group_ptr)
    np.testing.assert_allclose(obj.grad_hess(s)[0], brute_grad(0.5), rtol=1e-12, atol=1e-12)
    assert not list(tmp_path.rglob("pair_loops_*.nbi"))   # the loops were cached nowhere
