"""Without jax, ``import boostplug`` and every other objective work, ``approx_ap`` is not listed,
and ``import boostplug.autodiff`` says what to install (jax hidden from a child interpreter)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import sys
    sys.modules["jax"] = None          # what an interpreter without jax finds: import jax fails
    import numpy as np
    import boostplug
    from boostplug import objectives
    assert "approx_ap" not in objectives.names() and "approx_ndcg" in objectives.names()
    g, h = objectives.get("listnet").grad_hess(np.array([0.5, 0.1]), np.array([1.0, 0.0]), np.array([0, 2]))
    try:
        import boostplug.autodiff
    except ImportError as e:
        print(e)
    else:
        raise SystemExit("boostplug.autodiff imported without jax")
""")


def test_without_jax_boostplug_works_and_autodiff_names_the_extra() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert 'pip install "boostplug[jax]"' in out.stdout
