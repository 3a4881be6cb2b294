"""Where a JaxLoss's compiled code comes from: traced and compiled in the process, once per loss code
and settings, wherever its class was defined (a class pickled by value, as LightGBM's copy of its
parameters pickles a script's, finds the trace of the first); never read from a disk cache that
another user, or another loss, could have written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
cloudpickle = pytest.importorskip("cloudpickle")

from boostplug.autodiff import JaxLoss, _jax  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, jax, numpy as np
from jax import monitoring
from tests.autodiff.losses import JaxListNet
events = []
monitoring.register_event_listener(lambda name, **kw: events.append(name))
JaxListNet(np.array([1.0, 0.0, 2.0]), np.array([0, 3]), hessian="constant").grad_hess(np.zeros(3))
print(json.dumps({"chosen": jax.config.jax_compilation_cache_dir,
                  "cache_events": [e for e in events if e.endswith(("cache_hits", "cache_misses"))]}))
"""


def test_no_persistent_cache_is_enabled_or_read(tmp_path) -> None:
    """boostplug's former cache folder, usable (the user's own, mode 0700): nothing is written or read there."""
    folder = tmp_path / "boostplug" / "jax"
    folder.mkdir(parents=True, mode=0o700)
    environment = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    environment.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", CHILD], env=environment, cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True)
    child = json.loads(out.stdout.strip().splitlines()[-1])
    assert child == {"chosen": None, "cache_events": []} and not any(folder.iterdir())


def _class_in_a_function() -> type:
    """A class cloudpickle pickles by value (as a script's), its loss reading a module-level name."""
    import jax.numpy as jnp

    class Local(JaxLoss):
        name = "local_squares"
        summary = "squares, defined in a function"

        @staticmethod
        def query_loss(s, y, mask):
            return jnp.sum(jnp.where(mask, (s - y) ** 2, 0.0))

    return Local


def test_a_copy_of_a_class_pickled_by_value_finds_the_first_trace() -> None:
    """cloudpickle's copy of a class defined in a script or function (as LightGBM's copy of its parameters makes
    one at every lgb.train) gives the class new functions: the same code, traced once."""
    cls = _class_in_a_function()
    labels, ptr = np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 2, 5])
    first = cls(labels, ptr, hessian="exact").grad_hess(np.arange(5.0))
    before, size = cls.query_loss, len(_jax._COMPILED)
    copy = cloudpickle.loads(cloudpickle.dumps(cls))
    assert copy.query_loss is not before
    again = copy(labels, ptr, hessian="exact").grad_hess(np.arange(5.0))
    assert len(_jax._COMPILED) == size
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[1])
