"""Resume an interrupted comparison from the ``results.json`` it wrote (``boostplug compare --resume``).

Which runs it trains, and what must be the same as before (only ``--jobs``, ``--threads`` and the
folds may differ): docs/compare.md, "Output".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .conventions import Conventions
from .data import Fold
from .results_schema import SETTING_TYPES, check_digests, file_metrics, read_results


class ResumeError(ValueError):
    """The earlier run cannot be resumed with these settings (the message says which differs)."""


def load_earlier(out: Path) -> dict[str, Any]:
    """The parsed ``results.json`` of ``out`` with its runs as :class:`~.protocol.Result` under
    ``"runs"``, checked by :func:`.results_schema.read_results` (``ResumeError`` naming the file
    and what is wrong otherwise)."""
    path = Path(out) / "results.json"
    try:
        payload = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResumeError(f"--resume: {path} does not exist; nothing to resume (run without --resume)") from None
    except (OSError, ValueError) as e:
        raise ResumeError(f"--resume: cannot read {path}: {e}") from None
    try:
        runs = read_results(payload)
    except ValueError as e:
        raise ResumeError(f"--resume: {path} is not a results.json that can be resumed: {e}") from None
    payload["runs"] = runs
    return payload


def check_same(earlier: dict[str, Any], *, settings: dict[str, Any], methods: Sequence[str],
               conventions: Conventions, data_sha256: dict[str, str], n_folds: int,
               folds: Sequence[tuple[int, Fold]] = ()) -> None:
    """Refuse (``ResumeError`` naming the setting, before and now) when the earlier run's results
    (:func:`load_earlier`) would not be comparable with this run's: a setting, the methods, the
    conventions or the data's SHA-256 differ, a run's fold is not one of the ``n_folds`` folds of
    the data, or its test queries are not those of its fold in ``folds`` (the folds this run loaded);
    last, when the file or a run entry no longer matches its digest (edited after it was written:
    :func:`.results_schema.check_digests`, naming the entry), or carries none (an earlier version's,
    whose folds were numbered from 0)."""
    before = earlier["settings"]
    for key in SETTING_TYPES:  # the settings the schema reads are those a resumed run must share
        if before.get(key) != settings.get(key):  # clicks_protocol: absent without --clicks
            raise ResumeError(f"--resume: {key} was {before[key]!r} in the earlier run, now {settings.get(key)!r}; "
                              "a resumed run must use the same settings")
    earlier_methods = list(earlier.get("folds_completed", {}))
    if earlier_methods and earlier_methods != list(methods):
        raise ResumeError(f"--resume: the earlier run compared {', '.join(earlier_methods)}; now "
                          f"{', '.join(methods)}; a resumed run must use the same methods")
    _check_metrics(file_metrics(earlier["conventions"]), conventions.metrics)
    now = conventions.to_dict()
    # a file written before a convention was recorded did not use it (no ERR before --max-grade): as now
    conv = {**now, **earlier["conventions"], "metrics": now["metrics"]}
    if conv != now:
        raise ResumeError(f"--resume: the earlier run used {conv}, now {now}; "
                          "give the same --protocol/--gain/--discount/--empty/--ties/--max-grade")
    # by file name: the same folder may be reached by another path
    before_files = {Path(f).name: h for f, h in earlier["provenance"]["data_sha256"].items()}
    now_files = {Path(f).name: h for f, h in data_sha256.items()}
    changed = sorted(n for n in before_files.keys() | now_files.keys() if before_files.get(n) != now_files.get(n))
    if changed:
        raise ResumeError(f"--resume: the data differ from the earlier run's ({', '.join(changed)}: "
                          "SHA-256 or file set changed)")
    tests = {i: np.asarray(test.qid)[test.group_ptr[:-1]].tolist() for i, (_, _, test) in folds}
    for r in earlier["runs"]:
        if r.fold >= n_folds:
            raise ResumeError(f"--resume: the earlier run has a run of method {r.method} on fold {r.fold + 1}, "
                              f"and the data make {n_folds} fold(s)")
        if r.fold in tests and r.test_qids != tests[r.fold]:
            raise ResumeError(f"--resume: the earlier run of method {r.method} on fold {r.fold + 1} tested other "
                              "queries than the data's fold does now")
    try:
        check_digests({k: v for k, v in earlier.items() if k != "runs"})  # as the file holds it
    except ValueError as e:
        raise ResumeError(f"--resume: the earlier results.json is refused: {e}") from None


def _check_metrics(before: Sequence[str], now: Sequence[str]) -> None:
    """The earlier run reported the metrics this one does (results.json keeps per-query metric values,
    not the test scores they come from, so a metric it lacks cannot be computed afterwards)."""
    if list(before) == list(now):
        return
    missing = [m for m in now if m not in before]
    lacks = (f"has no {', '.join(missing)} (its runs' test scores are not kept, so it cannot be computed now)"
             if missing else f"reported {','.join(before)}")
    raise ResumeError(f"--resume: the earlier run {lacks}; resume with --metrics {','.join(before)}, or start a new "
                      "run (--overwrite) to report these")


def earlier_provenance(earlier: dict[str, Any]) -> list[dict[str, Any]]:
    """The provenance of every run that produced the earlier results, oldest first."""
    prov = dict(earlier.get("provenance", {}))
    older = prov.pop("earlier_runs", [])
    return [*older, prov] if prov else list(older)
