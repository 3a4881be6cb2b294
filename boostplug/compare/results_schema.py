"""The schema of a comparison's ``results.json`` as ``--resume`` reads it back (:func:`read_results`).

A resumed run tabulates the runs of the file with its own, so every value it takes from the file
is checked first (types, ranges, means against their per-query values, curves against the rounds,
the runs against themselves, :func:`_check_consistent`, and each other, :func:`_check_together`),
and anything else is a ``ValueError`` that names the key path (e.g. ``results[3].test.ndcg@10``).
The list as the user reads it: docs/reliability.md, ``compare --resume``.

What the file must share with the run that resumes it is :func:`.resume.check_same`'s, which also
checks the digests (:func:`check_digests`): the file carries a SHA-256 of its content
(``digest``), and each run entry one of its own values, so that an edit the checks above cannot
see is refused naming the entry. A digest detects edits, not forgery: anyone can write a new one.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, get_origin, get_type_hints

import numpy as np

from .conventions import REPORT_METRICS, parse_metric, parse_metrics
from .protocol import CURVE_METRIC, Result, choose_round

__all__ = ["read_results", "file_metrics", "metric_range", "SETTING_TYPES", "DIGEST", "content_digest", "with_digests",
           "check_digests"]

#: The key of the digests: the file's (over everything else in it) and each run entry's (over its values).
DIGEST = "digest"

#: The ``settings`` keys a resumed run reads (and must share with the earlier run: :mod:`.resume`)
#: and their JSON types (None: null).
SETTING_TYPES: dict[str, tuple[type | None, ...]] = {
    "layout": (str, None), "kfold": (int,), "rounds": (int,), "early_stopping_metric": (str,), "seed": (int,),
    "tune": (int,), "tree_params": (dict,), "clicks_protocol": (dict, None),
}
#: settings that a file may lack (it was written without them); read as None
_OPTIONAL_SETTINGS = ("clicks_protocol",)

#: Per :class:`Result` field: its JSON type (its annotation's container; a float takes an int too).
_RESULT_TYPES: dict[str, tuple[type, ...]] = {k: (get_origin(t) or t,) for k, t in get_type_hints(Result).items()}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", dict: "an object", list: "a list",
               None: "null"}
#: metrics whose values are fractions
_UNIT = ("ndcg", "map", "precision", "mrr", "err", "rbp")


def metric_range(name: str) -> tuple[float, float]:
    """The values metric ``name`` can take: ``(0, 1)`` for NDCG, MAP, precision, MRR, ERR and RBP,
    ``(0, inf)`` for DCG and the losses R1/R2."""
    base = parse_metric(name)[0]
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
    metrics = file_metrics(conventions)
    completed = _typed(payload["folds_completed"], (dict,), "folds_completed")
    for method, done in completed.items():
        for k, f in enumerate(_typed(done, (list,), f"folds_completed.{method}")):
            _typed(f, (int,), f"folds_completed.{method}[{k}]")
    runs = [_run(r, f"results[{i}]", skip, metrics)
            for i, r in enumerate(_typed(payload["results"], (list,), "results"))]
    _check_together(runs, completed)
    return runs


def file_metrics(conventions: dict[str, Any]) -> tuple[str, ...]:
    """The test metrics of a results.json's ``conventions`` (``metrics``; the default set when it has
    none: a file written before ``--metrics``)."""
    if "metrics" not in conventions:
        return REPORT_METRICS
    names = _typed(conventions["metrics"], (list,), "conventions.metrics")
    try:
        return parse_metrics([_typed(m, (str,), f"conventions.metrics[{k}]") for k, m in enumerate(names)])
    except ValueError as e:
        raise ValueError(f"conventions.metrics: {e}") from None


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


def content_digest(value: Any) -> str:
    """The SHA-256 (hex) of ``value`` (parsed JSON) in one canonical JSON text: keys sorted, no
    spaces, floats as Python writes them (which read back to the same float)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _without_digest(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != DIGEST}


def with_digests(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` (parsed JSON: as it reads back from the file) with a digest in each run entry
    of ``results`` (over its values) and one of the whole (over everything else): what
    :func:`check_digests` checks."""
    out = dict(payload)
    out["results"] = [{**_without_digest(r), DIGEST: content_digest(_without_digest(r))} for r in payload["results"]]
    out.pop(DIGEST, None)
    out[DIGEST] = content_digest(out)
    return out


def check_digests(payload: dict[str, Any]) -> None:
    """``ValueError`` naming the run entry (else the file) whose values no longer match the digest
    written with them (:func:`with_digests`), or a file without its digest: edited, or written by an
    earlier version of boostplug compare (before digests, and with its folds numbered from 0)."""
    if DIGEST not in payload:
        raise ValueError("the file has no digest: it was edited after the run wrote it, or an earlier version of "
                         "boostplug compare wrote it (with other fold numbers); run the study again")
    runs = payload.get("results") if isinstance(payload.get("results"), list) else []
    for i, r in enumerate(runs):
        where = f"results[{i}]" + (f" (method {r.get('method')}, fold {r.get('fold')})" if isinstance(r, dict) else "")
        if not isinstance(r, dict) or DIGEST not in r:
            raise ValueError(f"{where} has no digest, though the file has digests: it was added or edited after "
                             "the run wrote it")
        if r[DIGEST] != content_digest(_without_digest(r)):
            raise ValueError(f"{where} does not match its digest: its values were edited after the run wrote them")
    if payload[DIGEST] != content_digest(_without_digest(payload)):
        raise ValueError("the file does not match its digest: it was edited after the run wrote it (outside the "
                         "runs' values, which match theirs)")


def _run(entry: Any, path: str, skip: bool, metrics: tuple[str, ...]) -> Result:
    entry = _without_digest(_typed(entry, (dict,), path))
    names = list(_RESULT_TYPES)  # Result's fields, in order
    unknown = [k for k in entry if k not in names]
    if unknown:
        raise ValueError(f"{path} has field(s) {', '.join(map(repr, unknown))} that a run of this version does "
                         f"not have (a run has {', '.join(names)})")
    for key in names:
        if key not in entry:
            raise ValueError(f"{path} has no {key!r} (a run has {', '.join(names)})")
        _typed(entry[key], _RESULT_TYPES[key], f"{path}.{key}")
    if entry["fold"] < 1:
        raise ValueError(f"{path}.fold must be >= 1 (folds are numbered from 1; an earlier version of boostplug "
                         f"compare numbered them from 0), got {entry['fold']}")
    r = Result(**{**entry, "fold": entry["fold"] - 1})  # numbered from 1 in the file, from 0 in a Result
    where = f"{path} (method {r.method}, fold {r.fold + 1})"
    if r.rounds_trained < 0 or not 0 <= r.best_round <= r.rounds_trained:
        raise ValueError(f"{where}: best_round {r.best_round} must be one of the rounds trained "
                         f"(rounds_trained {r.rounds_trained})")
    if not (math.isfinite(r.seconds) and r.seconds >= 0):
        raise ValueError(f"{where}: seconds must be finite and >= 0, got {r.seconds!r}")
    try:
        metric_range(r.select_metric)
    except ValueError as e:
        raise ValueError(f"{where}: select_metric: {e}") from None
    missing = [m for m in metrics if m not in r.test or m not in r.test_per_query]
    extra = [m for m in {*r.test, *r.test_per_query} if m not in metrics]
    if missing or extra:
        raise ValueError(f"{where}: test and test_per_query must hold {', '.join(metrics)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(map(repr, extra))}" if extra else ""))
    n_queries = len(r.test_qids)
    for k, q in enumerate(r.test_qids):
        _typed(q, (str, int, float), f"{path}.test_qids[{k}]")
    r.test = {m: r.test[m] for m in metrics}  # in --metrics' order: the table's
    for m in metrics:
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
    _check_consistent(r, where)
    return r


def _check_consistent(r: Result, where: str) -> None:
    """The run's chosen round is its validation curve's choice, its test NDCG@10 its test curve's
    value there, and its validation NDCG@10 curve its selection curve when it selects by NDCG@10."""
    chosen = choose_round(r.vali_curve, r.select_metric) + 1
    if r.best_round != chosen:
        raise ValueError(f"{where}: best_round {r.best_round} is not the round its validation curve chooses "
                         f"(round {chosen}, by {r.select_metric}): the chosen round or the curve was edited")
    differ = [k for k, (a, b) in enumerate(zip(r.vali_curve, r.vali_ndcg10_curve)) if not _same(a, b)]
    if r.select_metric == CURVE_METRIC and differ:
        k = differ[0]
        raise ValueError(f"{where}: vali_curve[{k}] is {r.vali_curve[k]!r} and vali_ndcg10_curve[{k}] "
                         f"{r.vali_ndcg10_curve[k]!r}, though both are its validation {CURVE_METRIC}")
    if chosen >= 1:
        at, mean = r.test_curve[chosen - 1], r.test[CURVE_METRIC]
        if not (abs(at - mean) <= 1e-9 or _same(at, mean)):
            raise ValueError(f"{where}: test.{CURVE_METRIC} is {mean!r}, but its test curve has {at!r} at the "
                             f"chosen round {chosen}")


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


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
    queries per fold; the runs in the order the run wrote them (by fold, then method)."""
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
    order = {m: k for k, m in enumerate(completed)}
    for i, (a, b) in enumerate(zip(runs, runs[1:]), 1):
        if (a.fold, order[a.method]) > (b.fold, order[b.method]):
            raise ValueError(f"results[{i - 1}] (method {a.method}, fold {a.fold + 1}) stands before results[{i}] "
                             f"(method {b.method}, fold {b.fold + 1}), but the run writes its runs by fold, then in "
                             f"the order of its methods ({', '.join(completed)}): method names were swapped or runs "
                             "moved")
