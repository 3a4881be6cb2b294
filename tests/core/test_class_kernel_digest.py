"""What a class kernel's digest follows (boostplug._core.class_kernels.digest): the functions and
constants its class's functions reach through a module (``mw.delta_map``, ``helpers.square(d) *
helpers.SCALE``), in the library and in the user's own modules, and boostplug's version. An edit of
any of them compiles afresh: never the cached kernel of the old code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numba as nb
import pytest

import boostplug
from boostplug._core import class_kernels

REPO = Path(__file__).resolve().parents[2]


def _module(name: str, **attrs: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def test_a_library_function_reached_through_a_module_attribute_is_in_the_digest(monkeypatch):
    """LambdaMART for ERR reads its weight as ``mw.delta_err(...)``: a new delta_err (a release
    fixing a metric weight) gives its kernel a new digest."""
    from boostplug.objectives import lambdamart, metric_weights

    weight = lambdamart.LambdaERR.pair_weight
    before = class_kernels.digest(weight)

    @nb.njit
    def twice(p, prefix, cutoff):  # type: ignore[no-untyped-def]
        return 2.0 * metric_weights.delta_err(p, prefix, cutoff)

    monkeypatch.setattr(metric_weights, "delta_err", twice)
    assert class_kernels.digest(weight) not in (None, before)
    monkeypatch.undo()
    assert class_kernels.digest(weight) == before


def test_a_library_function_captured_by_a_hook_factory_is_in_the_digest():
    """LambdaMART for MAP's hooks are made by a factory around ``mw.delta_map``: another weight
    function handed to the factory gives another digest (the closure's function is digested)."""
    from boostplug.objectives import lambdamart, metric_weights

    @nb.njit
    def twice(p, prefix, threshold, cutoff):  # type: ignore[no-untyped-def]
        return 2.0 * metric_weights.delta_map(p, prefix, threshold, cutoff)

    same = lambdamart._relevance_hooks(metric_weights.map_prefix, metric_weights.delta_map)[1].__func__
    other = lambdamart._relevance_hooks(metric_weights.map_prefix, twice)[1].__func__
    assert class_kernels.digest(same) == class_kernels.digest(lambdamart.LambdaMAP.pair_weight) is not None
    assert class_kernels.digest(other) not in (None, class_kernels.digest(same))


def test_module_attribute_chains_are_followed_across_modules(monkeypatch):
    inner = _module("h59_inner", SCALE=2.0)
    outer = _module("h59_outer", inner=inner, square=lambda x: x * x)
    monkeypatch.setitem(sys.modules, "h59_inner", inner)
    monkeypatch.setitem(sys.modules, "h59_outer", outer)

    def user(d):  # type: ignore[no-untyped-def]
        return outer.square(d) * outer.inner.SCALE

    user.__globals__["outer"] = outer  # the test module's globals: where `outer` is loaded from
    first = class_kernels.digest(user)
    monkeypatch.setattr(inner, "SCALE", 3.0)              # two modules away
    second = class_kernels.digest(user)
    monkeypatch.setattr(outer, "square", lambda x: x * x * 1.0)  # another body
    third = class_kernels.digest(user)
    assert None not in (first, second, third) and len({first, second, third}) == 3


def test_boostplug_version_is_in_the_digest(monkeypatch):
    before = class_kernels.digest(lambda x: x + 1.0)
    monkeypatch.setattr(boostplug, "__version__", boostplug.__version__ + ".post1")
    assert class_kernels.digest(lambda x: x + 1.0) != before


DIGEST_SCRIPT = """
import numba as nb
from boostplug._core import class_kernels

@nb.njit(fastmath={"reassoc", "contract", "nsz"})
def fast(x):
    return x * 2.0

def loss(x):
    return fast(x) if x in {"alpha", "beta", "gamma"} else 0.0

print(class_kernels.digest(loss))
"""


def test_the_digest_is_the_same_in_every_process() -> None:
    """A set of strings iterates in an order that changes with the process's string hashing:
    numba's ``fastmath={...}`` (the listwise kernels' helpers) and a ``frozenset`` constant
    (``x in {...}``) must not make a class kernel's digest, its cache file, differ between two
    processes (it did: half the processes compiled NDCG_Boost's listwise loop again)."""
    seen = set()
    for seed in ("1", "2", "3", "4"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run([sys.executable, "-B", "-c", DIGEST_SCRIPT], capture_output=True, text=True, env=env,
                              timeout=300, cwd=REPO)
        assert done.returncode == 0, done.stderr
        seen.add(done.stdout.strip().splitlines()[-1])
    assert len(seen) == 1 and None not in seen and "None" not in seen, seen


HELPERS = """
import numba as nb

SCALE = {scale}

@nb.njit
def square(x):
    return {body}
"""

LOSSES = """
import helpers
from boostplug.objectives import PairwiseLoss


class HelpedGap(PairwiseLoss):
    name = "test_helped_gap"
    summary = "a pair loss written with a helper module (test objective)"
    params = {}

    @staticmethod
    def pair_loss(d):
        return helpers.square(d) * helpers.SCALE

    @staticmethod
    def pair_grad(d):
        return 2.0 * d * helpers.SCALE

    @staticmethod
    def pair_hess(d):
        return 2.0 * helpers.SCALE
"""

SCRIPT = """
import json, numpy as np
from boostplug._core import dispatch
from mylosses import HelpedGap
y, ptr = np.array([2.0, 1.0, 0.0]), np.array([0, 3])
loss = HelpedGap(y, ptr, hessian_floor=False)
kernel = dispatch.serial_twin(loss._kernel)
value = loss.loss(np.array([0.0, 1.0, 3.0]))
print(json.dumps({"loss": value, "hits": len(kernel.stats.cache_hits)}))
"""


@pytest.mark.slow
def test_an_edited_helper_module_compiles_afresh(tmp_path: Path) -> None:
    """The user's pair function calls ``helpers.square(d) * helpers.SCALE``; editing helpers.py
    (the function's body, then the constant) gives the new loss in the next process, not the
    cached kernel of the old helper."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "mylosses.py").write_text(LOSSES)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(code), str(REPO), os.environ.get("PYTHONPATH", "")]))

    def run(scale: float, body: str) -> dict:
        (code / "helpers.py").write_text(HELPERS.format(scale=scale, body=body))
        done = subprocess.run([sys.executable, "-B", "-c", SCRIPT], capture_output=True, text=True, env=env,
                              timeout=600, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    # pairs (0,1), (0,2), (1,2): d = -1, -3, -2
    first = run(1.0, "x * x")
    assert first["loss"] == pytest.approx(1.0 + 9.0 + 4.0)
    assert run(1.0, "x * x")["hits"] == 1                       # the same code: loaded from the cache
    assert run(1.0, "abs(x)")["loss"] == pytest.approx(1.0 + 3.0 + 2.0)   # the helper's body edited
    assert run(10.0, "abs(x)")["loss"] == pytest.approx(10.0 * (1.0 + 3.0 + 2.0))  # its constant edited
