"""A booster's first fit compiles what its path needs, not every path it might take: counted in a fresh
process (the kernels numba compiled or loaded from its cache), not timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Fits a small RankBoost+ and a small NDCGBoost (benchmarks/first_use.py's data and rounds) and prints,
#: per fit, every function whose dispatcher compiled a new signature or loaded one from numba's cache
#: (``Dispatcher.compile`` runs once per new signature either way, so the cache's state does not matter).
_FIRST_FITS = """
import json
from numba.core import dispatcher
kernels, compile = [], dispatcher.Dispatcher.compile
def counted(self, sig):
    kernels.append(self.py_func.__module__ + "." + self.py_func.__qualname__)
    return compile(self, sig)
dispatcher.Dispatcher.compile = counted
from boostplug.data import make_ranking
from boostplug.boosters import NDCGBoost, RankBoost
d = make_ranking(n_queries=30, docs_per_query=(5, 20), n_features=5, n_labels=3, seed=0)
out = {}
for name, model in (("rankboost+", RankBoost(variant="rankboost+", n_rounds=3)), ("ndcgboost", NDCGBoost(n_rounds=3))):
    model.fit(d.X, d.y, qid=d.qid)
    out[name], kernels[:] = list(kernels), []
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def first_fits() -> dict[str, list[str]]:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _FIRST_FITS], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_first_small_rankboost_plus_fit_compiles_no_pair_free_kernel(first_fits) -> None:
    """Three rounds on small data: "auto" takes the pair list (a quick fit), so none of the levels' kernels."""
    kernels = first_fits["rankboost+"]
    pair_free = [k for k in kernels if k.split(".")[2] in ("_level_sums", "_group_pairs", "_group_e2")]
    assert pair_free == [], pair_free
    assert any(k.startswith("boostplug.boosters._pair_mins.") for k in kernels), kernels  # the hook saw the fit


@pytest.mark.slow
def test_a_first_ndcgboost_fit_compiles_no_objective_loop_it_does_not_call(first_fits) -> None:
    """The booster reads the prepared objective's descent weights, never its grad_hess or loss: the
    listwise loop over queries that those run is not compiled by the objective's preparation."""
    kernels = first_fits["ndcgboost"]
    assert not [k for k in kernels if "list_kernel" in k], kernels
    assert any(k.startswith("boostplug.objectives._ndcg_boost_kernels.pair_grad_loss") for k in kernels), kernels
