"""An author's function that writes out of its arrays (an off-by-one in ``list_grad_hess``, a far
write, a ``query_prefix`` write past ``prefix_width``): with bounds checking on (``check_objective``,
or ``BOOSTPLUG_BOUNDSCHECK=1`` for training) it is an ``IndexError`` naming the function, where
the compiled code ended the process (SIGABRT, SIGSEGV) or wrote into other memory. Each case runs
in a subprocess, so that a crash fails the test rather than the test run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LOSSES = """
import numpy as np
from boostplug.objectives import Hessian, ListwiseLoss, PairwiseLoss, Param
from boostplug.objectives import metric_weights as mw
from boostplug.objectives.pairwise import LAMBDA_EXACT, LOGISTIC


class OffByOne(ListwiseLoss):
    name = "test_off_by_one"
    summary = "squared scores, its gradient written one place too far (test objective)"
    hessians = {"exact": Hessian("exact", "1")}

    @staticmethod
    def list_loss(s, doc, query):
        return 0.5 * np.sum(s * s)

    @staticmethod
    def list_grad_hess(s, doc, query, grad, hess):
        for i in range(s.shape[0] + 1):      # one too many
            grad[i] = s[min(i, s.shape[0] - 1)]
            hess[i] = 1.0


class FarWrite(OffByOne):
    name = "test_far_write"

    @staticmethod
    def list_grad_hess(s, doc, query, grad, hess):
        grad[:] = s
        hess[:] = 1.0
        grad[10_000_000] = 1.0               # far outside the query


class PrefixPastWidth(PairwiseLoss):
    name = "test_prefix_past_width"
    summary = "LambdaMART for MAP, its prefix written past prefix_width (test objective)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True)}
    hessians = {"exact": LAMBDA_EXACT}
    pair_loss, pair_grad, pair_hess = LOGISTIC
    prefix_width = mw.MAP_WIDTH

    @staticmethod
    def query_prefix(labels, gains, out, sigma):
        mw.map_prefix(labels, out, 1.0, mw.NO_CUTOFF)
        for k in range(labels.shape[0]):
            out[k, 100_000] = 1.0            # past the prefix's columns, far

    @staticmethod
    def pair_weight(p, prefix, sigma):
        return mw.delta_map(p, prefix, 1.0, mw.NO_CUTOFF)
"""

TRAIN = """
import numpy as np
from boostplug.data import make_ranking
import buggy
d = make_ranking(n_queries=30, docs_per_query=(5, 20), n_features=6, n_labels=3, seed=1)
loss = getattr(buggy, "{cls}")(d.y, d.group_ptr)
try:
    loss.grad_hess(np.random.default_rng(0).normal(size=d.n_docs))
except Exception as e:
    print("RAISED", type(e).__name__, e, "| CAUSE", type(e.__cause__).__name__)
else:
    print("NO ERROR")
"""

CHECK = """
import buggy
from boostplug.testing import check_objective
try:
    check_objective(buggy.{cls}, checks=["gradient"])
except AssertionError as e:
    print("RAISED", type(e).__name__, e, "| CAUSE", type(e.__cause__).__name__)
else:
    print("NO ERROR")
"""

FUNCTION = {"OffByOne": "OffByOne.list_grad_hess", "FarWrite": "FarWrite.list_grad_hess",
            "PrefixPastWidth": "PrefixPastWidth.query_prefix"}


def _run(tmp_path: Path, script: str, cls: str, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "buggy.py").write_text(LOSSES)
    environ = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), **env,
                   PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", script.format(cls=cls)], capture_output=True, text=True,
                          env=environ, timeout=900, cwd=tmp_path)


def _named(done: subprocess.CompletedProcess[str], cls: str) -> None:
    assert done.returncode == 0, f"the process ended with {done.returncode}: {done.stderr[-2000:]}"
    out = done.stdout.strip().splitlines()[-1]
    assert out.startswith("RAISED") and FUNCTION[cls] in out and "IndexError" in out, out


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["OffByOne", "FarWrite", "PrefixPastWidth"])
def test_training_with_boundscheck_names_the_function(tmp_path: Path, cls: str) -> None:
    _named(_run(tmp_path, TRAIN, cls, BOOSTPLUG_BOUNDSCHECK="1"), cls)


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["OffByOne", "PrefixPastWidth"])
def test_check_objective_runs_the_functions_bounds_checked(tmp_path: Path, cls: str) -> None:
    _named(_run(tmp_path, CHECK, cls), cls)


def test_the_switch_takes_0_or_1(tmp_path: Path) -> None:
    done = _run(tmp_path, "import boostplug._core.class_kernels", "", BOOSTPLUG_BOUNDSCHECK="yes")
    assert done.returncode != 0 and "BOOSTPLUG_BOUNDSCHECK must be 0 or 1, got 'yes'" in done.stderr
