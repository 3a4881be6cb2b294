"""Names a public module loads on first use (the scikit-learn rankers import their framework
and scikit-learn, which ``import boostplug.lightgbm`` alone should not)."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

__all__ = ["lazy_getattr"]


def lazy_getattr(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``module`` that imports ``names[name]`` (a module
    path) when ``name`` is first looked up, and returns that module's ``name``."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where), name)

    return __getattr__
