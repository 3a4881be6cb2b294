"""The values of ``boostplug compare``'s options, checked before any work (each error a
``UsageError`` naming the option), as one :class:`CompareOptions` with the run's :class:`RunRecord`."""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .._extras import installed
from .._validation import INT64_MAX, check_rounds
from ..compare import DEFAULT_METHODS, FRAMEWORKS, METHODS, TREE_PARAMS, check_tree_params, clicks, method_names
from ..compare.cluster import parse_scheduler
from ..compare.execution import max_parallel, threads_per_job
from ..compare.conventions import Conventions, make_conventions, parse_metric
from ..compare.method_specs import parse_number, split_specs
from ..compare.methods import get_method
from ..compare.report import TABLE_WIDTH, wrap
from ..compare.run_record import RECORDED_SETTINGS, RunRecord
from ..compare.tuning import require_optuna
from .compare_config import option_name
from .errors import UsageError, usage_errors

__all__ = ["CompareOptions", "compare_options", "parse_frameworks", "parse_methods", "parse_params", "parse_threads",
           "list_methods", "twins"]


@dataclass(frozen=True)
class CompareOptions:
    """What one ``boostplug compare`` runs and how: ``record`` the settings results.json records,
    ``methods`` the method names, ``tree_params`` the ``--param`` overrides, ``runner`` the click
    protocol's (None without ``--clicks``)."""

    record: RunRecord
    methods: list[str]
    tree_params: dict[str, Any]
    baseline: str
    conventions: Conventions
    runner: Any
    out: Path | None
    overwrite: bool
    resume: bool
    plots: bool
    progress: bool
    #: the wide table (``--wide``) and the significance level of the verdict (``--alpha``)
    wide: bool = False
    alpha: float = 0.05
    #: ``--scheduler``: a Dask scheduler's address, or N for ``local:N``; None: local processes (``--jobs``)
    scheduler: str | int | None = None


def compare_options(values: dict[str, Any], runner: Any) -> CompareOptions:
    """``values``: the options by ``dest`` (:func:`~.compare_config.resolve_options`); ``runner``: the
    click protocol's runner or None."""
    frameworks = parse_frameworks(values["frameworks"])
    if runner is None:
        methods = parse_methods(values["methods"], frameworks)
    else:  # the click protocol's (default/all: every click method of the frameworks)
        try:
            methods = clicks.parse_click_methods(values["methods"], frameworks, runner)
        except (ValueError, TypeError) as e:
            raise UsageError(f"--methods: {e}") from None
    tree_params = {**values.get("config_tree_params", {}), **parse_params(values["param"])}  # --param wins
    scheduler = _scheduler(values)
    threads = _check_values(values, scheduler)
    baseline = values["baseline"] or (("lambdarank" if "lambdarank" in methods else methods[0]) if runner is None else
                                      clicks.default_baseline(methods))
    if baseline not in methods:
        raise UsageError(f"--baseline {baseline!r} is not among the methods that run ({', '.join(methods)})")
    if values["resume"] and values["out"] is None:
        raise UsageError("--resume needs --out: the folder of the run to finish")
    plots = not values["no_plots"] and (values["out"] is None or installed("matplotlib"))  # (run_compare says why)
    computed = {"threads": threads, "tree_params": {**TREE_PARAMS, **tree_params},  # the whole set, as recorded
                "clicks_protocol": None if runner is None else runner.record()}
    record = RunRecord(**{k: computed[k] if k in computed else values[k] for k in RECORDED_SETTINGS},
                       argv=values.get("argv"))
    return CompareOptions(record=record, methods=methods, tree_params=tree_params, baseline=baseline,
                          conventions=parse_conventions(values), runner=runner, out=values["out"],
                          overwrite=values["overwrite"], resume=values["resume"], plots=plots,
                          progress=not values["no_progress"], wide=bool(values.get("wide")),
                          alpha=_alpha(values.get("alpha", 0.05)), scheduler=scheduler)


def _scheduler(values: dict[str, Any]) -> str | int | None:
    """``--scheduler``: ``local:N`` -> N, an address as given (:func:`~boostplug.compare.cluster.parse_scheduler`);
    not beside ``--jobs N>1``."""
    text = values.get("scheduler")
    if text is None:
        return None
    with usage_errors():
        scheduler = parse_scheduler(str(text).strip(), max_parallel())
    if values["jobs"] != 1:
        raise UsageError(f"--scheduler {text} and --jobs {values['jobs']}: give one (--jobs runs local processes, "
                         "--scheduler a Dask cluster's workers)")
    return scheduler


def _alpha(value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 < value < 1.0):
        raise UsageError(f"--alpha must be a significance level between 0 and 1 (e.g. 0.05), got {value!r}")
    return float(value)


def parse_frameworks(text: str) -> list[str]:
    chosen = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FRAMEWORKS]
    if not chosen or bad:
        raise UsageError(f"--frameworks: unknown {bad or text!r}; choose from {','.join(FRAMEWORKS)}")
    return chosen


def parse_methods(text: str, frameworks: Sequence[str]) -> list[str]:
    """``default``/``all`` (restricted to ``frameworks``) or explicit names (checked)."""
    if text.strip().lower() == "default":
        chosen = [m for m in DEFAULT_METHODS if METHODS[m].framework in frameworks]
    elif text.strip().lower() == "all":
        chosen = method_names(tuple(frameworks))
    else:
        try:  # names and settings checked now, before any training; the name shows them (mpboost-ldd[alpha=0.3])
            configured = [get_method(spec) for spec in split_specs(text)]
        except (ValueError, TypeError) as e:
            raise UsageError(f"--methods: {e}") from None
        chosen = list(dict.fromkeys(m.name for m in configured))
        off = [m.name for m in configured if m.framework not in frameworks]
        if off:
            raise UsageError(f"method(s) {', '.join(off)} are not in --frameworks {','.join(frameworks)}")
    if not chosen:
        why = "; CatBoost's methods are not installed: pip install \"boostplug[catboost]\"" if (
            "catboost" in frameworks and not installed("catboost")) else ""
        raise UsageError(f"no method to run: --methods {text!r} with --frameworks {','.join(frameworks)}{why}")
    return chosen


def twins(methods: Sequence[str]) -> list[str]:
    """Which is which, for each of ``methods`` whose name is another's but for ``_`` and ``-``
    (``cb-lambdamart-map``, CatBoost's; ``cb-lambdamart_map``, boostplug's)."""
    return [f"{n} is {METHODS[n].summary}; {t} is {METHODS[t].summary}" for n in methods for t in METHODS
            if t != n and t.replace("_", "-") == n.replace("_", "-") and not (t in methods and t < n)]  # once a pair


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``["num_leaves=15", "learning_rate=0.1"]`` -> ``{"num_leaves": 15, "learning_rate": 0.1}``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = (t.strip() for t in item.partition("="))
        if not sep or key not in TREE_PARAMS:
            raise UsageError(f"--param {item!r}: expected KEY=VALUE with KEY one of {', '.join(TREE_PARAMS)}")
        integer = isinstance(TREE_PARAMS[key], int)
        try:
            number = parse_number(value)
            if key in out or number is None or (integer and not isinstance(number, int)):
                raise ValueError(f"{key} is given twice" if key in out else
                                 f"{value!r} is not {'an integer' if integer else 'a number'}")
        except ValueError as e:
            raise UsageError(f"--param {item!r}: {e}") from None
        out[key] = number if integer else float(number)
        try:
            check_tree_params({key: out[key]})
        except ValueError as e:
            raise UsageError(f"--param {e}") from None
    return out


def parse_threads(text: str, jobs: int, option: str = "--threads") -> int:
    """``"auto"`` -> cores // jobs (at least 1); else a positive integer of at most
    ``compare.max_parallel()`` (4 x the cores). ``option``: how messages name it."""
    if str(text).strip().lower() == "auto":
        return threads_per_job(jobs)
    if not (str(text).strip().isascii() and str(text).strip().isdigit()) or int(text) < 1:
        raise UsageError(f"{option} must be a positive integer or 'auto', got {text!r}")
    _check_at_most(option, int(text), max_parallel())
    return int(text)


def _check_at_most(option: str, value: int, limit: int) -> None:
    if value > limit:
        raise UsageError(f"{option} {value}: at most {limit} (4 x the {os.cpu_count() or 1} cores; more only slows "
                     "training, and far more crashes LightGBM)")


def list_methods(table: Mapping[str, Any], defaults: Sequence[str]) -> str:
    """The methods of ``table`` (the compare methods, or the click protocol's), one line each,
    ``defaults`` marked."""
    width = max(len(n) for n in table)
    lines = [f"{'method':<{width}}  {'framework':<9}  summary"]
    for n, m in table.items():
        mark = " (default)" if n in defaults else ""
        lines += wrap(f"{n:<{width}}  {m.framework:<9}  {m.summary}{mark}", TABLE_WIDTH, " " * (width + 13))
    return "\n".join(lines)


def parse_conventions(values: dict[str, Any]) -> Conventions:
    """``--protocol`` (default library) with ``--gain/--discount/--empty/--ties/--max-grade`` overriding
    it, and the reported ``--metrics``."""
    with usage_errors():
        given = {k: values.get(k) for k in ("gain", "discount", "empty", "ties", "max_grade", "metrics")}
        return make_conventions(values.get("protocol") or "library", **given)


def _check_values(values: dict[str, Any], scheduler: str | int | None = None) -> int:
    """Check rounds, seed, jobs, kfold, tune and the selection metric; returns ``--threads`` as a number.
    A value from ``--config`` is named by the file and its key (:func:`.compare_config.option_name`)."""
    name = functools.partial(option_name, values)
    with usage_errors():
        check_rounds(values["rounds"], name("rounds", "--rounds"))
    if not 0 <= values["seed"] <= INT64_MAX:
        raise UsageError(f"{name('seed', '--seed')} must be between 0 and {INT64_MAX} (XGBoost's seed is a 64-bit "
                         f"int, and numpy's generators take no negative seed), got {values['seed']}")
    for dest, low, what in (("jobs", 1, ""), ("kfold", 2, ""), ("tune", 0, " (trials per method and fold)")):
        if values[dest] < low:
            raise UsageError(f"{name(dest, '--' + dest)} must be >= {low}{what}, got {values[dest]}")
    _check_at_most(name("jobs", "--jobs"), values["jobs"], max_parallel())
    # --threads auto: this machine's cores / its jobs or local:N workers; 1 on a remote cluster (not our cores)
    remote = isinstance(scheduler, str)
    threads = 1 if remote and str(values["threads"]).strip().lower() == "auto" else parse_threads(
        values["threads"], values["jobs"] if scheduler is None else 1 if remote else scheduler,
        name("threads", "--threads"))
    if values["tune"]:
        with usage_errors(ImportError):
            require_optuna()
    try:
        parse_metric(values["early_stopping_metric"])  # one parser for --select and --metrics
    except ValueError as e:
        raise UsageError(f"{name('early_stopping_metric', '--select (--early-stopping-metric)')}: {e}") from None
    return threads
