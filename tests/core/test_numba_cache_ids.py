"""Kernels cached by one process give the same numbers in another (boostplug._numba_cache.RandomIds).

numba names compiled code by qualified name, argument types and a per-process counter. A process
that compiled other functions first (here: the QBRank objective, whose sorts are numba closures
of the same names as the metrics' sorts) reused those names for other bodies, and the metrics
kernels loaded from another process's cache then called the wrong sort: NDCG@5 came out 1.0 for
most queries. Each step runs in a fresh process, as a user's scripts do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]

DATA = """
import json, sys, numpy as np
from boostplug.data import make_ranking
d = make_ranking(n_queries=40, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4, noise=0.5, seed=3)
scores = np.random.default_rng(0).normal(size=d.n_docs)
"""


def run(code: str, cache: Path) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get(
        "PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def reference_ndcg(scores: np.ndarray, y: np.ndarray, group_ptr: np.ndarray, k: int) -> np.ndarray:
    out = []
    for a, b in zip(group_ptr[:-1], group_ptr[1:]):
        g = 2.0 ** y[a:b] - 1.0
        kk = min(k, b - a)
        disc = 1.0 / np.log2(np.arange(2, kk + 2))
        ideal = (np.sort(g)[::-1][:kk] * disc).sum()
        out.append((g[np.argsort(-scores[a:b], kind="stable")][:kk] * disc).sum() / ideal if ideal > 0 else 1.0)
    return np.array(out)


def test_metrics_cached_by_one_process_are_right_in_a_process_that_compiled_an_objective_first(tmp_path):
    cache = tmp_path / "numba-cache"
    ndcg = "print(json.dumps(__import__('boostplug').metrics.ndcg(scores, d.y, d.group_ptr, k=5, per_query=True).tolist()))"
    first = run(DATA + ndcg, cache)                        # compiles and caches the metric kernels
    assert any(cache.rglob("*_dcg_queries_serial*.nbi"))
    second = run(DATA + "from boostplug import objectives\n"
                 "objectives.get('qbrank').grad_hess(scores, d.y, d.group_ptr)\n" + ndcg, cache)

    from boostplug.data import make_ranking

    d = make_ranking(n_queries=40, docs_per_query=(3, 15), n_features=6, n_informative=3, n_labels=4, noise=0.5,
                     seed=3)
    scores = np.random.default_rng(0).normal(size=d.n_docs)
    want = reference_ndcg(scores, d.y, d.group_ptr, 5)
    assert want.min() < 0.5                                # random scores: far from the ideal ranking
    np.testing.assert_allclose(json.loads(first), want, rtol=1e-12)
    np.testing.assert_allclose(json.loads(second), want, rtol=1e-12)


def test_function_ids_are_random_once_numba_loads_and_import_boostplug_does_not_load_it(tmp_path):
    code = ("import sys, boostplug, boostplug.data, boostplug.dask\n"
            "assert 'numba' not in sys.modules\n"
            "import numba\n"
            "from numba.core.bytecode import FunctionIdentity\n"
            "from boostplug._numba_cache import RandomIds\n"
            "assert isinstance(FunctionIdentity._unique_ids, RandomIds)\n"
            "f = numba.njit(lambda x: x + 1)\n"
            "f(1)\n"
            "print(FunctionIdentity.from_function(f.py_func).unique_id)")
    ids = {int(run(code, tmp_path)) for _ in range(2)}
    assert len(ids) == 2 and min(ids) > 2**20


def test_random_ids_never_repeat_in_a_process(monkeypatch):
    import secrets

    from boostplug._numba_cache import RandomIds

    draws = iter([5, 5, 7, 5, 9])
    monkeypatch.setattr(secrets, "randbits", lambda k: next(draws))
    ids = RandomIds()
    assert [next(ids), next(ids), next(ids)] == [5, 7, 9]
