"""JAX's persistent compilation cache in boostplug's cache folder: a JaxLoss's compiles are kept in
``boostplug/jax`` of the user's cache folder, and a second process loads them instead of compiling;
a folder the user chose is left alone, and one that fails the numba cache's checks is not used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, jax, numpy as np
from jax import monitoring
from boostplug.autodiff import _jax
from tests.autodiff.losses import JaxListNet
events = []
monitoring.register_event_listener(lambda name, **kw: events.append(name))
JaxListNet(np.array([1.0, 0.0, 2.0]), np.array([0, 3]), hessian="constant").grad_hess(np.zeros(3))
print(json.dumps({"folder": str(_jax.persistent_cache()), "chosen": jax.config.jax_compilation_cache_dir,
                  "hits": events.count("/jax/compilation_cache/cache_hits"),
                  "misses": events.count("/jax/compilation_cache/cache_misses")}))
"""


def _child(cache_home: Path, **env: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    environment.update(XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(ROOT), **env)
    out = subprocess.run([sys.executable, "-c", CHILD], env=environment, cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # three processes, each importing JAX
def test_a_second_process_loads_the_compiles_and_a_users_folder_or_an_unsafe_one_is_left_alone(tmp_path) -> None:
    home = tmp_path / "cache"
    first = _child(home)
    folder = home / "boostplug" / "jax"
    assert first["folder"] == str(folder) and first["chosen"] == str(folder) and first["misses"] >= 1
    assert any(folder.iterdir())
    second = _child(home)
    assert second["hits"] >= 1 and second["misses"] == 0
    mine = tmp_path / "mine"
    users = _child(home, JAX_COMPILATION_CACHE_DIR=str(mine))
    assert users["folder"] == "None" and users["chosen"] == str(mine)
    unsafe = tmp_path / "unsafe"
    (unsafe / "boostplug" / "jax").mkdir(parents=True)
    (unsafe / "boostplug" / "jax").chmod(0o777)  # writable by others: compiled code could be planted
    refused = _child(unsafe)
    assert refused["folder"] == "None" and refused["chosen"] is None
