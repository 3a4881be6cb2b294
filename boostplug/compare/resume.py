"""Resume an interrupted comparison from the ``results.json`` it wrote (``boostplug compare --resume``).

A resumed run trains only the (method, fold) runs the earlier one did not finish (a run that
failed is tried again) and reports all of them together. Everything that decides a result must be
the same as before (data files, layout, methods, rounds, selection metric, tuning budget, seed,
tree parameters, conventions); what only decides speed (``--jobs``, ``--threads``) and which
folds run may differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from .conventions import Conventions
from .protocol import Result

#: Settings a resumed run must share with the earlier one (results.json ``settings`` keys).
SAME_SETTINGS = ("layout", "kfold", "rounds", "early_stopping_metric", "seed", "tune", "tree_params",
                 "clicks_protocol")


class ResumeError(ValueError):
    """The earlier run cannot be resumed with these settings (the message says which differs)."""


def load_earlier(out: Path) -> dict[str, Any]:
    """The parsed ``results.json`` of ``out`` with its runs as :class:`Result` under ``"runs"``."""
    path = Path(out) / "results.json"
    try:
        payload = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResumeError(f"--resume: {path} does not exist; nothing to resume (run without --resume)") from None
    except (OSError, ValueError) as e:
        raise ResumeError(f"--resume: cannot read {path}: {e}") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise ResumeError(f"--resume: {path} is not the results.json of boostplug compare")
    try:
        payload["runs"] = [Result(**r) for r in payload["results"]]
    except TypeError as e:
        raise ResumeError(f"--resume: {path}: a run does not have the fields of this version ({e})") from None
    return payload


def check_same(earlier: dict[str, Any], *, settings: dict[str, Any], methods: Sequence[str],
               conventions: Conventions, data_sha256: dict[str, str]) -> None:
    """Refuse (``ResumeError`` naming the setting, before and now) when the earlier run's results
    would not be comparable with this run's."""
    before = earlier.get("settings", {})
    for key in SAME_SETTINGS:
        if key in before and before[key] != settings.get(key):
            raise ResumeError(f"--resume: {key} was {before[key]!r} in the earlier run, now {settings.get(key)!r}; "
                              "a resumed run must use the same settings")
    earlier_methods = list(earlier.get("folds_completed", {}))
    if earlier_methods and earlier_methods != list(methods):
        raise ResumeError(f"--resume: the earlier run compared {', '.join(earlier_methods)}; now "
                          f"{', '.join(methods)}; a resumed run must use the same methods")
    conv = earlier.get("conventions")
    if conv is not None and conv != conventions.to_dict():
        raise ResumeError(f"--resume: the earlier run used {conv}, now {conventions.to_dict()}; "
                          "give the same --protocol/--gain/--discount/--empty/--ties")
    # by file name: the same folder may be reached by another path
    before_files = {Path(f).name: h for f, h in earlier.get("provenance", {}).get("data_sha256", {}).items()}
    now_files = {Path(f).name: h for f, h in data_sha256.items()}
    changed = sorted(n for n in before_files.keys() | now_files.keys() if before_files.get(n) != now_files.get(n))
    if before_files and changed:
        raise ResumeError(f"--resume: the data differ from the earlier run's ({', '.join(changed)}: "
                          "SHA-256 or file set changed)")


def earlier_provenance(earlier: dict[str, Any]) -> list[dict[str, Any]]:
    """The provenance of every run that produced the earlier results, oldest first."""
    prov = dict(earlier.get("provenance", {}))
    older = prov.pop("earlier_runs", [])
    return [*older, prov] if prov else list(older)
