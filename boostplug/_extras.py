"""Whether an optional package (an extra's) is there, found without importing it."""

from __future__ import annotations

import importlib.util


def installed(package: str) -> bool:
    """Whether ``package`` can be imported, found without importing it (``import boostplug`` stays
    light); an import that is refused (``sys.modules[package] = None``, a blocking finder) counts as not."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False
