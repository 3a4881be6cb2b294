"""User modules that register objectives before ``boostplug compare`` runs (``--import``).

An objective registered with :func:`boostplug.objectives.register` lives in the process that
registered it. ``--import`` names a module (``mypkg.ranknet``) or a Python file
(``ranknet.py``) to import first, in the command's process and in every ``--jobs`` worker, so
that ``--methods`` can name what it registers.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Sequence

__all__ = ["load_plugins", "loaded_plugins", "registered_here"]

_LOADED: list[str] = []
_REGISTERED: dict[str, Any] = {}  # the entries the imports registered (a worker registers them too)


def _import_file(path: Path) -> None:
    name = f"boostplug_plugin_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def load_plugins(specs: Sequence[str]) -> list[str]:
    """Import each module name or ``.py`` file of ``specs`` once per process; returns them in
    the form workers re-import (files as absolute paths). ``ValueError`` names the one that fails."""
    done, before = [], _entries()
    for spec in specs:
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"--import: expected a module name or a .py file, got {spec!r}")
        path = Path(spec).expanduser()
        is_file = spec.endswith(".py") or path.is_file()
        key = str(path.resolve()) if is_file else spec
        try:
            if is_file:
                if not path.is_file():
                    raise FileNotFoundError(f"no such file: {path}")
                _import_file(path.resolve())
            else:
                importlib.import_module(spec)
        except Exception as e:
            raise ValueError(f"--import {spec}: {type(e).__name__}: {e}") from e
        if key not in _LOADED:
            _LOADED.append(key)
        done.append(key)
    _REGISTERED.update((n, e) for n, e in _entries().items() if before.get(n) is not e)
    return done


def loaded_plugins() -> list[str]:
    """What :func:`load_plugins` imported in this process, for the workers to import too."""
    return list(_LOADED)


def registered_here() -> list[str]:
    """The objectives registered in this process that a worker would not have: neither the
    library's nor registered by an :func:`load_plugins` import (a script's own, registered before
    it calls the command)."""
    return [n for n, e in _entries().items()
            if e is not _REGISTERED.get(n) and not e.loss_class.__module__.startswith("boostplug.")]


def _entries() -> dict[str, Any]:
    from .. import objectives

    return {n: objectives.get(n) for n in objectives.names()}
