"""``boostplug compare --config FILE``: a TOML or JSON file of settings, under the flags given on the
command line and over the built-in defaults (:func:`resolve_options`)."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any

from .._validation import did_you_mean
from ..compare import TREE_PARAMS, check_tree_params
from ..compare.method_specs import format_spec
from .errors import UsageError

__all__ = ["CONFIG_KEYS", "defer_defaults", "load_config", "option_name", "resolve_options"]

#: ``--config`` keys -> the option (``dest``) each sets; a flag given on the command line wins.
CONFIG_KEYS = {"data": "data", "methods": "methods", "frameworks": "frameworks", "folds": "folds", "kfold": "kfold",
               "rounds": "rounds", "select": "early_stopping_metric", "early_stopping_metric": "early_stopping_metric",
               "seed": "seed", "tune": "tune", "jobs": "jobs", "scheduler": "scheduler", "threads": "threads", "baseline": "baseline",
               "tree_params": "param", "import": "imports", "metrics": "metrics", "max_grade": "max_grade"}
_BUILTIN_DEFAULTS: dict[str, Any] = {"methods": "default", "early_stopping_metric": "ndcg@10", "tune": 0}


def defer_defaults(p: argparse.ArgumentParser) -> None:
    """The options a config file may set parse to None unless given, so that the file fills them
    before the built-in defaults do (their help still shows the built-in default)."""
    for action in p._actions:
        if action.dest in CONFIG_KEYS.values() and action.dest not in ("param", "imports") and action.default is not None:
            _BUILTIN_DEFAULTS[action.dest] = action.default
            if action.help:
                action.help = action.help.replace("%(default)s", str(action.default))
            action.default = None


def load_config(path: Path) -> dict[str, Any]:
    """A ``--config`` file: TOML (``.toml``, Python 3.11+'s tomllib) or JSON (any other name), a
    table of :data:`CONFIG_KEYS`; unknown keys are refused with a "did you mean"."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"--config {path}: {e.strerror or e}") from None
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ImportError:
            raise UsageError(f"--config {path}: TOML needs Python 3.11+; write the same settings as JSON") from None
        parse, kind, invalid = tomllib.loads, "TOML", tomllib.TOMLDecodeError
    else:
        parse, kind, invalid = (lambda t: json.loads(t, object_pairs_hook=_unique)), "JSON (a .toml name reads TOML)", \
            ValueError
    try:
        data = parse(text)
    except invalid as e:
        raise UsageError(f"--config {path}: not valid {kind}: {e}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config {path}: expected a table of settings, got {type(data).__name__}")
    for key in data:
        if key not in CONFIG_KEYS:
            hint = did_you_mean(key, CONFIG_KEYS)
            raise UsageError(f"--config {path}: unknown setting {key!r}; {hint}{' ' if hint else ''}the settings are "
                             f"{', '.join(CONFIG_KEYS)}")
    return data


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (``json`` keeps the last of a key given twice; TOML refuses it)."""
    seen = [k for k, _ in pairs]
    twice = next((k for k in seen if seen.count(k) > 1), None)
    if twice is not None:
        raise ValueError(f"the key {twice!r} is given twice")
    return dict(pairs)


def _config_methods(value: Any, path: Path) -> str:
    """``methods`` of a config file -> the ``--methods`` text: a string, or a list of names/specs
    and tables ``{name = "mpboost-ldd", alpha = 0.3}`` (every key but name a parameter)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value:
        raise UsageError(f"--config {path}: methods must be a string or a non-empty list, got {value!r}")
    specs = []
    for item in value:
        if isinstance(item, str):
            specs.append(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            spec = format_spec(item["name"], {k: v for k, v in item.items() if k != "name"})
            specs.append(spec.replace("][", ",", 1))  # settings in the name too: one bracket, each key once
        else:
            raise UsageError(f"--config {path}: a method is a name or a table with a name, got {item!r}")
    return ",".join(specs)


def _config_import(spec: str, config: Path) -> str:
    """An ``import`` entry of the config file ``config``: a file (a ``.py`` name, a name with a
    folder, or a file next to the config file) as an absolute path, a relative one from the config
    file's folder (not the working directory); a module name as it is."""
    path = Path(spec).expanduser()
    folder = Path(os.path.abspath(config.expanduser())).parent
    if spec.endswith(".py") or "/" in spec or os.sep in spec or (folder / path).is_file():
        return str(path if path.is_absolute() else folder / path)
    return spec


def _config_tree_params(table: Any, where: str) -> dict[str, Any]:
    """The ``tree_params`` table of a config file, checked as ``--param`` values are (errors name
    the file and the key, not a ``--param`` that was not given), integers as ``int``."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: tree_params must be a table, got {table!r}")
    out = {}
    for key, value in table.items():
        try:
            check_tree_params({key: value})
        except ValueError as e:
            beyond = (" (a number beyond float64's range, such as 1e400, reads as infinite)"
                      if isinstance(value, float) and math.isinf(value) else "")
            raise UsageError(f"{where}: tree_params.{key}: {e}{beyond}") from None
        out[key] = int(value) if isinstance(TREE_PARAMS[key], int) else float(value)
    return out


def option_name(values: dict[str, Any], dest: str, flag: str) -> str:
    """How a message names the option ``dest``: ``--config FILE: key`` when the config file set it
    (:func:`resolve_options`'s ``config_keys``), else its command-line ``flag``."""
    key = values.get("config_keys", {}).get(dest)
    return flag if key is None else f"--config {values.get('config')}: {key}"


def resolve_options(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options (by ``dest``) with those not given on the command line filled from
    ``--config``, then from the built-in defaults; the file's ``tree_params`` are checked here
    (errors name the file and the key) into ``config_tree_params``, which ``--param`` pairs go
    over key by key; the file's ``import`` entries (:func:`_config_import`) go first into
    ``imports`` and are also ``config_imports``; ``config_keys``: the file's key of each option
    it set (:func:`option_name`). ``args`` is left as parsed."""
    values = dict(vars(args))
    config = load_config(values["config"]) if values.get("config") is not None else {}
    where = f"--config {values.get('config')}"
    if isinstance(values.get("methods"), list):
        values["methods"] = ",".join(values["methods"])
    for key, value in config.items():
        dest = CONFIG_KEYS[key]
        if dest == "param":
            values["config_tree_params"] = _config_tree_params(value, where)
        elif dest == "imports":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UsageError(f"{where}: import must be a module name or a list of them, got {value!r}")
            value = [_config_import(v, values["config"]) for v in value]
            values["config_imports"] = value  # printed before they run (a config file is code)
            values["imports"] = list(value) + [v for v in values["imports"] if v not in value]
        elif values.get(dest) is None:
            if dest == "methods":
                value = _config_methods(value, values["config"])
            elif dest == "data":
                value = str(value)
            default = _BUILTIN_DEFAULTS.get(dest)
            if isinstance(default, int) and (isinstance(value, bool) or not isinstance(value, int)):
                raise UsageError(f"{where}: {key} must be an integer, got {value!r}")
            if isinstance(default, str) and dest not in ("threads",) and not isinstance(value, str):
                raise UsageError(f"{where}: {key} must be a string, got {value!r}")
            values[dest] = value
            values.setdefault("config_keys", {})[dest] = key
    for dest, default in _BUILTIN_DEFAULTS.items():
        if values.get(dest) is None:
            values[dest] = default
    return values
