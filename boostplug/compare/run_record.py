"""What one ``boostplug compare`` run records in results.json: its settings (``settings``, which
``--resume`` compares) and what reproduces it (``provenance``: the command line, the data read,
the earlier runs a resumed run continues)."""

from __future__ import annotations

import hashlib
import importlib
import platform
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Sequence

__all__ = ["RunRecord", "RECORDED_SETTINGS", "PACKAGES", "JAX", "versions"]

#: What a run records the versions of, and what every worker of a cluster must share with its client: each
#: package by the module that runs (``scikit-learn`` is ``sklearn``), every one that can change a result.
PACKAGES = ("boostplug", "lightgbm", "xgboost", "catboost", "numpy", "scipy", "scikit-learn", "numba", "optuna")
#: Checked too where a study trains a :class:`~boostplug.autodiff.JaxLoss` (this process imported JAX).
JAX = ("jax", "jaxlib")


def versions(packages: Sequence[str] = PACKAGES) -> dict[str, str | None]:
    """Python's and ``packages``' versions in this process, each the ``__version__`` of the module that
    runs, not its installed metadata (None: not importable); boostplug's with a digest of its source
    files, so that two checkouts of one version number are told apart."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = str(importlib.import_module(name.replace("scikit-learn", "sklearn")).__version__)
        except Exception:  # not installed, or broken: either way not the version here
            out[name] = None
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    out["boostplug"] = f"{out['boostplug']}+{digest.hexdigest()[:12]}"
    return out


@dataclass(frozen=True)
class RunRecord:
    """The settings of a run as the user gave them (``methods``, ``frameworks`` and ``folds`` as
    text, ``tree_params`` the whole set trained with; the fields up to ``clicks_protocol``,
    :data:`RECORDED_SETTINGS`) and its provenance inputs (the fields after)."""

    data: str
    layout: str | None
    methods: str
    frameworks: str
    folds: str
    kfold: int
    rounds: int
    early_stopping_metric: str
    seed: int
    jobs: int
    threads: int
    tree_params: dict[str, Any]
    tune: int
    config: Path | None = None
    clicks_protocol: dict[str, Any] | None = None
    #: the command line after ``boostplug`` (None: ``sys.argv`` is recorded)
    argv: list[str] | None = None
    #: SHA-256 per data file read (and the click log)
    data_sha256: dict[str, str] = field(default_factory=dict)
    #: the provenance of the runs a resumed run continues, oldest first
    earlier_runs: list[dict[str, Any]] = field(default_factory=list)
    #: where a Dask cluster trained the runs (:mod:`.cluster`), None without one
    cluster: dict[str, Any] | None = None

    def settings(self) -> dict[str, Any]:
        """results.json's ``settings``: paths as text; no ``clicks_protocol`` without clicks."""
        out = {}
        for key in RECORDED_SETTINGS:
            value = getattr(self, key)
            if key == "clicks_protocol" and value is None:
                continue
            out[key] = str(value) if isinstance(value, Path) else value
        return out


#: The results.json ``settings`` keys, in the file's order (``clicks_protocol`` only with ``--clicks``).
RECORDED_SETTINGS = tuple(f.name for f in fields(RunRecord)
                          if f.name not in ("argv", "data_sha256", "earlier_runs", "cluster"))
