"""The schema of a comparison's ``results.json`` as ``--resume`` reads it back (:func:`read_results`).

A resumed run tabulates the runs of the file with its own, so every value it takes from the file
is checked first, and anything else is a ``ValueError`` that names the key path (e.g.
``results[3].test.ndcg@10``), never a traceback of the code that would have used it:

* ``settings`` and ``provenance`` are there, ``provenance.data_sha256`` names at least one file
  (without them nothing says the runs were made on the same data with the same settings);
* each run has the fields of :class:`~.protocol.Result`, each with its type; each (method, fold)
  once; every method is one of ``folds_completed``, whose folds are those of the runs;
* every metric value is finite and within its range (NDCG, MAP, precision, MRR and ERR in [0, 1];
  DCG and the losses R1/R2 >= 0); NaN only where the conventions leave a query out
  (``empty = "skip"``): a per-query value, or a mean over queries that were all left out;
* a test mean is the mean of its per-query values, every per-query list has one value per test
  query, the curves one value per round trained, the chosen round is one of them;
* the runs of one fold have the same test queries (the paired tests pair them).

What the file must share with the run that resumes it (settings, methods, conventions, the data's
SHA-256, the folds and their test queries) is :func:`.resume.check_same`'s.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import Any

import numpy as np

from .. import metrics
from .protocol import CURVE_METRIC, REPORT_METRICS, Result

__all__ = ["read_results", "metric_range", "SETTING_TYPES"]

#: The ``settings`` keys a resumed run reads (and must share with the earlier run: :mod:`.resume`)
#: and their JSON types (None: null).
SETTING_TYPES: dict[str, tuple[type | None, ...]] = {
    "layout": (str, None), "kfold": (int,), "rounds": (int,), "early_stopping_metric": (str,), "seed": (int,),
    "tune": (int,), "tree_params": (dict,), "clicks_protocol": (dict, None),
}
#: settings that a file may lack (it was written without them); read as None
_OPTIONAL_SETTINGS = ("clicks_protocol",)

#: Per :class:`Result` field: its JSON type.
_RESULT_TYPES: dict[str, tuple[type, ...]] = {
    "method": (str,), "framework": (str,), "fold": (int,), "best_round": (int,), "rounds_trained": (int,),
    "seconds": (int, float), "select_metric": (str,), "test": (dict,), "test_per_query": (dict,),
    "test_qids": (list,), "vali_curve": (list,), "vali_ndcg10_curve": (list,), "test_curve": (list,),
    "info": (dict,),
}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", dict: "an object", list: "a list",
               None: "null"}
#: metrics whose values are fractions
_UNIT = ("ndcg", "map", "precision", "mrr", "err")


def metric_range(name: str) -> tuple[float, float]:
    """The values metric ``name`` can take: ``(0, 1)`` for NDCG, MAP, precision, MRR and ERR,
    ``(0, inf)`` for DCG and the losses R1/R2."""
    base, _ = metrics.parse_name(name)
    return (0.0, 1.0) if base in _UNIT else (0.0, math.inf)


def _is(value: Any, types: tuple[type | None, ...]) -> bool:
    if value is None:
        return None in types
    if isinstance(value, bool):  # JSON true/false are not numbers
        return False
    if isinstance(value, int) and float in types:
        return True
    return any(t is not None and isinstance(value, t) for t in types)


def _typed(value: Any, types: tuple[type | None, ...], path: str) -> Any:
    if not _is(value, types):
        want = " or ".join(_TYPE_NAMES[t] for t in types)
        raise ValueError(f"{path} must be {want}, got {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    """``value`` for a message: its JSON type and text, cut at 60 characters."""
    text = json.dumps(value)
    kind = {str: "string", int: "integer", float: "number", bool: "boolean", list: "list", dict: "object",
            type(None): "null"}.get(type(value), type(value).__name__)
    return f"{kind} {text[:60]}{'...' if len(text) > 60 else ''}"


def read_results(payload: Any) -> list[Result]:
    """The runs of a parsed ``results.json`` as :class:`Result`, after checking the file against
    the schema (the module notes); ``ValueError`` naming the key path and what is wrong otherwise."""
    _typed(payload, (dict,), "the file")
    missing = [k for k in ("settings", "provenance") if k not in payload]
    if missing:
        raise ValueError(f"it has no {' and no '.join(repr(k) for k in missing)}: nothing says its runs were "
                         "made on the same data with the same settings (a results.json of boostplug compare has "
                         "both)")
    for key in ("conventions", "folds_completed", "results"):
        if key not in payload:
            raise ValueError(f"it has no {key!r} (a results.json of boostplug compare has it)")
    _check_settings(_typed(payload["settings"], (dict,), "settings"))
    _check_provenance(_typed(payload["provenance"], (dict,), "provenance"))
    conventions = _typed(payload["conventions"], (dict,), "conventions")
    skip = conventions.get("empty") == "skip"  # a query without a relevant document is left out: NaN
    completed = _typed(payload["folds_completed"], (dict,), "folds_completed")
    for method, done in completed.items():
        for k, f in enumerate(_typed(done, (list,), f"folds_completed.{method}")):
            _typed(f, (int,), f"folds_completed.{method}[{k}]")
    runs = [_run(r, f"results[{i}]", skip) for i, r in enumerate(_typed(payload["results"], (list,), "results"))]
    _check_together(runs, completed)
    return runs


def _check_settings(settings: dict[str, Any]) -> None:
    for key, types in SETTING_TYPES.items():
        if key not in settings and key not in _OPTIONAL_SETTINGS:
            raise ValueError(f"settings has no {key!r} (a results.json of boostplug compare has it)")
        _typed(settings.get(key), types, f"settings.{key}")


def _check_provenance(provenance: dict[str, Any]) -> None:
    if "data_sha256" not in provenance:
        raise ValueError("provenance has no 'data_sha256': nothing says which data its runs were made on")
    digests = _typed(provenance["data_sha256"], (dict,), "provenance.data_sha256")
    if not digests:
        raise ValueError("provenance.data_sha256 is empty: nothing says which data its runs were made on")
    for name, digest in digests.items():
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise ValueError(f"provenance.data_sha256.{name} must be a SHA-256 (64 hex digits), got {_shown(digest)}")
    for k, run in enumerate(_typed(provenance.get("earlier_runs", []), (list,), "provenance.earlier_runs")):
        _typed(run, (dict,), f"provenance.earlier_runs[{k}]")


def _run(entry: Any, path: str, skip: bool) -> Result:
    entry = _typed(entry, (dict,), path)
    names = [f.name for f in fields(Result)]
    unknown = [k for k in entry if k not in names]
    if unknown:
        raise ValueError(f"{path} has field(s) {', '.join(map(repr, unknown))} that a run of this version does "
                         f"not have (a run has {', '.join(names)})")
    for key in names:
        if key not in entry:
            raise ValueError(f"{path} has no {key!r} (a run has {', '.join(names)})")
        _typed(entry[key], _RESULT_TYPES[key], f"{path}.{key}")
    r = Result(**entry)
    where = f"{path} (method {r.method}, fold {r.fold + 1})"
    if r.fold < 0:
        raise ValueError(f"{path}.fold must be >= 0 (0-based), got {r.fold}")
    if r.rounds_trained < 0 or not 0 <= r.best_round <= r.rounds_trained:
        raise ValueError(f"{where}: best_round {r.best_round} must be one of the rounds trained "
                         f"(rounds_trained {r.rounds_trained})")
    if not (math.isfinite(r.seconds) and r.seconds >= 0):
        raise ValueError(f"{where}: seconds must be finite and >= 0, got {r.seconds!r}")
    try:
        metric_range(r.select_metric)
    except ValueError as e:
        raise ValueError(f"{where}: select_metric: {e}") from None
    missing = [m for m in REPORT_METRICS if m not in r.test or m not in r.test_per_query]
    extra = [m for m in {*r.test, *r.test_per_query} if m not in REPORT_METRICS]
    if missing or extra:
        raise ValueError(f"{where}: test and test_per_query must hold {', '.join(REPORT_METRICS)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(map(repr, extra))}" if extra else ""))
    n_queries = len(r.test_qids)
    for k, q in enumerate(r.test_qids):
        _typed(q, (str, int, float), f"{path}.test_qids[{k}]")
    for m in REPORT_METRICS:
        values = _typed(r.test_per_query[m], (list,), f"{path}.test_per_query.{m}")
        if len(values) != n_queries:
            raise ValueError(f"{where}: test_per_query.{m} has {len(values)} values for {n_queries} test "
                             "queries (test_qids)")
        for k, v in enumerate(values):
            _value(v, m, path, f"test_per_query.{m}[{k}]", where, nan=skip)
        kept = [v for v in values if not math.isnan(v)]
        mean = _value(r.test[m], m, path, f"test.{m}", where, nan=not kept)
        # the mean the run took of these values (np.nanmean); summed in another order, a few ulps apart
        expected = float(np.mean(kept)) if kept else math.nan
        if not (abs(mean - expected) <= 1e-9 or math.isnan(mean) and math.isnan(expected)):
            raise ValueError(f"{where}: test.{m} is {mean!r}, but the mean of its per-query values is "
                             f"{expected!r}" + ("" if kept else " (every test query is left out)"))
    for key, metric in (("vali_curve", r.select_metric), ("vali_ndcg10_curve", CURVE_METRIC),
                        ("test_curve", CURVE_METRIC)):
        values = getattr(r, key)
        if len(values) != r.rounds_trained:
            raise ValueError(f"{where}: {key} has {len(values)} values for {r.rounds_trained} rounds trained")
        for k, v in enumerate(values):
            _value(v, metric, path, f"{key}[{k}]", where, nan=skip)
    return r


def _value(value: Any, metric: str, path: str, key: str, where: str, *, nan: bool) -> float:
    """A value of ``metric`` at ``key`` of the run at ``path`` (``where``: the path with the
    method and fold): a number within the metric's range; NaN only when ``nan``."""
    _typed(value, (float,), f"{path}.{key}")
    lo, hi = metric_range(metric)
    if math.isnan(value) and nan:
        return float(value)
    if not (math.isfinite(value) and lo <= value <= hi):
        bound = f"in [{lo:g}, {hi:g}]" if math.isfinite(hi) else f"finite and >= {lo:g}"
        raise ValueError(f"{where}: {key} is {value!r}; {metric} values are {bound}")
    return float(value)


def _check_together(runs: list[Result], completed: dict[str, list[int]]) -> None:
    """Each (method, fold) once; the methods and folds of ``folds_completed``; one set of test
    queries per fold."""
    first: dict[tuple[str, int], int] = {}
    queries: dict[int, tuple[int, list[Any]]] = {}
    for i, r in enumerate(runs):
        key = (r.method, r.fold)
        if key in first:
            raise ValueError(f"results[{i}] repeats method {r.method}, fold {r.fold + 1} (results[{first[key]}]); "
                             "each method runs once per fold")
        first[key] = i
        if r.method not in completed:
            raise ValueError(f"results[{i}]: method {r.method} is not one of folds_completed "
                             f"({', '.join(completed) or 'none'})")
        j, qids = queries.setdefault(r.fold, (i, r.test_qids))
        if qids != r.test_qids:
            raise ValueError(f"results[{i}] (method {r.method}, fold {r.fold + 1}) has other test queries than "
                             f"results[{j}] (method {runs[j].method}) of the same fold")
    for method, done in completed.items():
        folds = sorted(f + 1 for m, f in first if m == method)
        if sorted(done) != folds:
            raise ValueError(f"folds_completed.{method} is {done} but its runs are of fold(s) {folds}")
