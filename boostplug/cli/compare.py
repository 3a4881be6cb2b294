"""``boostplug compare``: train ranking methods under one protocol and tabulate them."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from .._validation import did_you_mean
from ..compare.conventions import DISCOUNTS, EMPTIES, GAINS, PROTOCOLS, TIES, Conventions, make_conventions
from ..compare.outdir import OutDir, OutDirError
from ..compare import (
    DEFAULT_METHODS, FRAMEWORKS, METHODS, TREE_PARAMS, Failure, Result, check_tree_params, format_table, load_folds,
    method_names, run,
)
from ..compare.report import recorded_settings, write_outputs



def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare",
        help="train ranking methods on one data set and compare them",
        description=(
            "Train each method on the same folds with the same tree parameters, choose its number of rounds "
            "on the validation part, and report test NDCG@1/3/5/10 and MAP (mean±std over folds), training "
            "time and a paired significance test against a baseline. See docs/compare.md."
        ),
    )
    p.add_argument("--data", default="example",
                   help="'example' (default: LightGBM's example, embedded; 20%% of its training queries "
                        "validate), a LETOR file (query-level k-fold, see --kfold), or a LETOR folder "
                        "(Fold1..FoldK or S1..Sk.txt)")
    p.add_argument("--methods", nargs="+", default=None, metavar="METHOD",
                   help="names (comma- or space-separated), 'default', 'all' (of --frameworks) or 'list' to print "
                        "the names; a method with settings: NAME:KEY=VALUE,KEY=VALUE or 'NAME[KEY=VALUE,...]', "
                        "e.g. mpboost-ldd:alpha=0.3,lam=2 (docs/compare.md) "
                        f"(default: {','.join(DEFAULT_METHODS)})")
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                   help="which method families run: lightgbm, xgboost, booster (default: %(default)s)")
    p.add_argument("--folds", default="all", help="folds to run, e.g. 1,3 (default: all)")
    p.add_argument("--kfold", type=int, default=5, help="number of query-level folds of a LETOR file (default: 5)")
    p.add_argument("--layout", default=None, choices=("letor4", "letor3", "rotate", "folds"),
                   help="how a LETOR folder of parts S1..Sk.txt makes folds (required for one): letor4 (LETOR 4.0, "
                        "MQ2007/MQ2008: Fold1 = train S1-S3, vali S4, test S5), letor3 (LETOR 3.0, OHSUMED: Fold1 "
                        "= train S2-S4, vali S5, test S1), rotate (k parts, the letor4 rotation); folds: "
                        "Fold1..FoldK folders, read as they are (also without --layout)")
    p.add_argument("--protocol", default=None, choices=tuple(PROTOCOLS),
                   help="metric conventions of every reported metric, the round selection and the tests: library "
                        "(default: LightGBM's and XGBoost's: NDCG gain 2^r-1, discount 1/log2(rank+1), a query "
                        "without a relevant document scores 1, ties in input order, MAP label >= 1) or letor (the "
                        "official LETOR evaluation script's: the LETOR discount, ranks 1-2 undiscounted, and such "
                        "a query scores 0); --gain, --discount, --empty, --ties override single conventions")
    p.add_argument("--gain", default=None, choices=GAINS, help="NDCG gain: exp2 (2^r-1) or linear (r)")
    p.add_argument("--discount", default=None, choices=DISCOUNTS,
                   help="NDCG discount: log2 (1/log2(rank+1)) or letor (ranks 1-2 undiscounted, then 1/log2(rank))")
    p.add_argument("--empty", default=None, choices=EMPTIES,
                   help="NDCG and MAP of a query without a relevant document: 1, 0, or skip (left out)")
    p.add_argument("--ties", default=None, choices=TIES,
                   help="tied scores: order (input order), average (expectation over their orders), worst")
    p.add_argument("--rounds", type=int, default=300, help="maximum boosting rounds (default: %(default)s)")
    p.add_argument("--select", "--early-stopping-metric", dest="early_stopping_metric", default=None,
                   metavar="METRIC",
                   help="metric that chooses the round (and, with --tune, the parameters) on the validation part; "
                        "r1/r2 are minimised; map: the LETOR baselines' protocol (default: ndcg@10)")
    p.add_argument("--tune", type=int, default=None, metavar="N",
                   help="search each method's parameters first: N Optuna TPE trials per method and fold on the "
                        "validation part, trial 0 the defaults, poor trials pruned on the validation curve "
                        "(needs boostplug[tune]; default: 0, no search)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="a module name or a .py file to import first, in this process and in every --jobs worker, "
                        "e.g. one that registers your own objective with boostplug.objectives.register so that "
                        "--methods can name it (docs/objectives/custom.md); repeatable")
    p.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="a TOML (Python 3.11+) or JSON file of settings: methods with their parameters, "
                        "tree_params, rounds, select, tune, seed, ...; flags given on the command line win")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help=f"override a shared tree parameter ({', '.join(TREE_PARAMS)}); repeatable")
    p.add_argument("--baseline", default=None,
                   help="method the others are tested against (default: lambdarank when it runs, else the first)")
    p.add_argument("--seed", type=int, default=0, help="seed of the splits and of training (default: 0)")
    p.add_argument("--jobs", type=int, default=1, help="methods trained in parallel processes (default: 1; at most 4 x the cores)")
    p.add_argument("--threads", default="1",
                   help="threads per job: a number (at most 4 x the cores) or 'auto' (cores / jobs). Default 1: "
                        "on small data more threads mostly add synchronisation and can make training several "
                        "times slower (docs/compare.md)")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for CSV, JSON and PNG results (results.csv, per_query.csv, curves.csv, "
                        "summary.csv, results.json, curves.png, metrics.png)")
    p.add_argument("--overwrite", action="store_true",
                   help="with --out: replace the results of an earlier run in that folder (refused without it)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: finish an interrupted run in that folder; trains only the (method, fold) runs "
                        "its results.json lacks (failed ones again) and reports all of them; the settings that "
                        "decide results must be the same (--jobs, --threads and --folds may differ)")
    p.add_argument("--no-plots", action="store_true", help="with --out: no PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    from ..compare.clicks import add_arguments as add_click_arguments

    add_click_arguments(p)
    _defer_defaults(p)
    p.set_defaults(run=run_compare)
    return p


#: ``--config`` keys -> the option (``dest``) each sets; a flag given on the command line wins.
CONFIG_KEYS = {"data": "data", "methods": "methods", "frameworks": "frameworks", "folds": "folds", "kfold": "kfold",
               "rounds": "rounds", "select": "early_stopping_metric", "early_stopping_metric": "early_stopping_metric",
               "seed": "seed", "tune": "tune", "jobs": "jobs", "threads": "threads", "baseline": "baseline",
               "tree_params": "param", "import": "imports"}
_BUILTIN_DEFAULTS: dict[str, Any] = {"methods": "default", "early_stopping_metric": "ndcg@10", "tune": 0}


def _defer_defaults(p: argparse.ArgumentParser) -> None:
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
        raise _usage(f"--config {path}: {e.strerror or e}") from None
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ImportError:
            raise _usage(f"--config {path}: TOML needs Python 3.11+; write the same settings as JSON") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise _usage(f"--config {path}: not valid TOML: {e}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise _usage(f"--config {path}: not valid JSON (a .toml name reads TOML): {e}") from None
    if not isinstance(data, dict):
        raise _usage(f"--config {path}: expected a table of settings, got {type(data).__name__}")
    for key in data:
        if key not in CONFIG_KEYS:
            hint = did_you_mean(key, CONFIG_KEYS)
            raise _usage(f"--config {path}: unknown setting {key!r}; {hint}{' ' if hint else ''}the settings are "
                         f"{', '.join(CONFIG_KEYS)}")
    return data


def _config_methods(value: Any, path: Path) -> str:
    """``methods`` of a config file -> the ``--methods`` text: a string, or a list of names/specs
    and tables ``{name = "mpboost-ldd", alpha = 0.3}`` (every key but name a parameter)."""
    from ..compare.method_specs import format_value

    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value:
        raise _usage(f"--config {path}: methods must be a string or a non-empty list, got {value!r}")
    specs = []
    for item in value:
        if isinstance(item, str):
            specs.append(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            params = {k: v for k, v in item.items() if k != "name"}
            body = ",".join(f"{k}={format_value(v)}" for k, v in params.items())
            specs.append(f"{item['name']}[{body}]" if params else item["name"])
        else:
            raise _usage(f"--config {path}: a method is a name or a table with a name, got {item!r}")
    return ",".join(specs)


def apply_config(args: argparse.Namespace) -> None:
    """Fill the options not given on the command line from ``--config``, then from the built-in
    defaults; ``--param`` pairs go over the file's ``tree_params`` key by key."""
    config = load_config(args.config) if getattr(args, "config", None) is not None else {}
    where = f"--config {args.config}"
    if isinstance(getattr(args, "methods", None), list):
        args.methods = ",".join(args.methods)
    for key, value in config.items():
        dest = CONFIG_KEYS[key]
        if dest == "param":
            if not isinstance(value, dict):
                raise _usage(f"{where}: tree_params must be a table, got {value!r}")
            args.param = [f"{k}={v}" for k, v in value.items()] + list(args.param)
        elif dest == "imports":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _usage(f"{where}: import must be a module name or a list of them, got {value!r}")
            args.imports = list(value) + [v for v in args.imports if v not in value]
        elif getattr(args, dest, None) is None:
            if dest == "methods":
                value = _config_methods(value, args.config)
            elif dest == "data":
                value = str(value)
            default = _BUILTIN_DEFAULTS.get(dest)
            if isinstance(default, int) and (isinstance(value, bool) or not isinstance(value, int)):
                raise _usage(f"{where}: {key} must be an integer, got {value!r}")
            if isinstance(default, str) and dest not in ("threads",) and not isinstance(value, str):
                raise _usage(f"{where}: {key} must be a string, got {value!r}")
            setattr(args, dest, value)
    for dest, default in _BUILTIN_DEFAULTS.items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, default)


def _usage(message: str) -> Exception:
    from .errors import UsageError

    return UsageError(message)


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_frameworks(text: str) -> list[str]:
    chosen = [f.lower() for f in _split(text)]
    bad = [f for f in chosen if f not in FRAMEWORKS]
    if not chosen or bad:
        raise _usage(f"--frameworks: unknown {bad or text!r}; choose from {','.join(FRAMEWORKS)}")
    return chosen


def parse_methods(text: str, frameworks: Sequence[str]) -> list[str]:
    """``default``/``all`` (restricted to ``frameworks``) or explicit names (checked)."""
    if text.strip().lower() == "default":
        chosen = [m for m in DEFAULT_METHODS if METHODS[m].framework in frameworks]
    elif text.strip().lower() == "all":
        chosen = method_names(tuple(frameworks))
    else:
        from ..compare.method_specs import split_specs
        from ..compare.methods import get_method

        unknown = [m for m in (s.split("[")[0] for s in split_specs(text) if ":" not in s or s in METHODS)
                   if m not in METHODS]
        if unknown:
            hint = did_you_mean(unknown, METHODS)
            raise _usage(f"unknown method(s) {', '.join(unknown)}{f' ({hint})' if hint else ''}; "
                         "run 'boostplug compare --methods list' for the names")
        try:  # settings checked now, before any training; the name shows them (mpboost-ldd[alpha=0.3])
            configured = [get_method(spec) for spec in split_specs(text)]
        except (ValueError, TypeError) as e:
            raise _usage(f"--methods: {e}") from None
        chosen = list(dict.fromkeys(m.name for m in configured))
        off = [m.name for m in configured if m.framework not in frameworks]
        if off:
            raise _usage(f"method(s) {', '.join(off)} are not in --frameworks {','.join(frameworks)}")
    if not chosen:
        raise _usage(f"no method to run: --methods {text!r} with --frameworks {','.join(frameworks)}")
    return chosen


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``["num_leaves=15", "learning_rate=0.1"]`` -> ``{"num_leaves": 15, "learning_rate": 0.1}``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in TREE_PARAMS:
            raise _usage(f"--param {item!r}: expected KEY=VALUE with KEY one of {', '.join(TREE_PARAMS)}")
        integer = isinstance(TREE_PARAMS[key], int)
        try:
            out[key] = int(value) if integer else float(value)
        except ValueError:
            kind = "an integer" if integer else "a number"
            raise _usage(f"--param {item!r}: {value.strip()!r} is not {kind}") from None
        try:
            check_tree_params({key: out[key]})
        except ValueError as e:
            raise _usage(f"--param {e}") from None
    return out


def parse_threads(text: str, jobs: int) -> int:
    """``"auto"`` -> cores // jobs (at least 1); else a positive integer of at most
    ``compare.max_parallel()`` (4 x the cores)."""
    from ..compare import max_parallel, threads_per_job

    if str(text).strip().lower() == "auto":
        return threads_per_job(jobs)
    if not str(text).strip().isdigit() or int(text) < 1:
        raise _usage(f"--threads must be a positive integer or 'auto', got {text!r}")
    _check_at_most("--threads", int(text), max_parallel())
    return int(text)


def _check_at_most(option: str, value: int, limit: int) -> None:
    if value > limit:
        raise _usage(f"{option} {value}: at most {limit} (4 x the {os.cpu_count() or 1} cores; more only slows "
                     "training, and far more crashes LightGBM)")


def list_methods() -> str:
    width = max(len(n) for n in METHODS)
    lines = [f"{'method':<{width}}  {'framework':<9}  summary"]
    for n, m in METHODS.items():
        mark = " (default)" if n in DEFAULT_METHODS else ""
        lines.append(f"{n:<{width}}  {m.framework:<9}  {m.summary}{mark}")
    return "\n".join(lines)


def parse_conventions(args: argparse.Namespace) -> Conventions:
    """``--protocol`` (default library) with ``--gain/--discount/--empty/--ties`` overriding it."""
    try:
        return make_conventions(getattr(args, "protocol", None) or "library", gain=getattr(args, "gain", None),
                                discount=getattr(args, "discount", None), empty=getattr(args, "empty", None),
                                ties=getattr(args, "ties", None))
    except ValueError as e:
        raise _usage(str(e)) from None


def _check_args(args: argparse.Namespace) -> None:
    from .. import metrics
    from .._validation import INT64_MAX, check_rounds

    try:
        check_rounds(args.rounds, "--rounds")
    except ValueError as e:
        raise _usage(str(e)) from None
    if not 0 <= args.seed <= INT64_MAX:
        raise _usage(f"--seed must be between 0 and {INT64_MAX} (XGBoost's seed is a 64-bit int, and numpy's "
                     f"generators take no negative seed), got {args.seed}")
    if args.jobs < 1:
        raise _usage(f"--jobs must be >= 1, got {args.jobs}")
    from ..compare import max_parallel

    _check_at_most("--jobs", args.jobs, max_parallel())
    args.threads = parse_threads(args.threads, args.jobs)
    if args.kfold < 2:
        raise _usage(f"--kfold must be >= 2, got {args.kfold}")
    if args.tune < 0:
        raise _usage(f"--tune must be >= 0 (trials per method and fold), got {args.tune}")
    if args.tune:
        from ..compare.tuning import require_optuna

        try:
            require_optuna()
        except ImportError as e:
            raise _usage(str(e)) from None
    try:
        metrics.by_name(args.early_stopping_metric)
    except ValueError as e:
        raise _usage(f"--select (--early-stopping-metric): {e}") from None


def run_compare(args: argparse.Namespace) -> int:
    apply_config(args)
    if args.imports:
        from ..compare.plugins import load_plugins

        try:
            load_plugins(args.imports)
        except ValueError as e:
            raise _usage(str(e)) from None
    clicks = click_protocol(args)
    if args.methods.strip().lower() == "list":
        print(list_methods() if clicks is None else clicks.list_click_methods())
        return 0
    frameworks = parse_frameworks(args.frameworks)
    methods = parse_methods(args.methods, frameworks) if clicks is None else parse_click_methods(args, frameworks)
    tree_params = parse_params(args.param)
    _check_args(args)
    baseline = args.baseline or (("lambdarank" if "lambdarank" in methods else methods[0]) if clicks is None else
                                 clicks.default_baseline(methods))
    if baseline not in methods:
        raise _usage(f"--baseline {baseline!r} is not among the methods that run ({', '.join(methods)})")
    if args.resume and args.out is None:
        raise _usage("--resume needs --out: the folder of the run to finish")
    if args.out is not None and not args.no_plots:
        try:
            from ..compare.plots import require_matplotlib

            require_matplotlib()
        except ImportError as e:
            raise _usage(str(e)) from None
    with interrupt_signals() as signals:
        out = prepare_out(args.out, overwrite=args.overwrite or args.resume) if args.out is not None else None
        try:
            code = _compare(args, methods, tree_params, baseline, out, signals)
        finally:
            if out is not None:
                out.release()
    return 128 + signals.received[0] if signals.received else code  # 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP


def _compare(args: argparse.Namespace, methods: list[str], tree_params: dict[str, Any], baseline: str,
             out: OutDir | None, signals: Signals) -> int:
    try:
        folds = load_folds(args.data, n_folds=args.kfold, select=args.folds, seed=args.seed, layout=args.layout)
    except OSError as e:  # FileNotFoundError with our message, or the system's about a path under --data
        raise _usage(str(e) if e.filename is None else f"--data {args.data}: {e.filename}: {e.strerror}") from e
    except ValueError as e:  # what the readers say about the files (no qid, bad line, bad fold, ...)
        raise _usage(" ".join(str(e).split())) from e
    from ..compare.data import data_files, file_digests

    args.data_sha256 = file_digests(data_files(args.data))  # what was read, before any training
    runner = getattr(args, "click_runner", None)
    if runner is not None and runner.log is not None:
        args.data_sha256.update(file_digests([Path(runner.log)]))
    conventions = parse_conventions(args)
    args.tree_params = {**TREE_PARAMS, **tree_params}  # the whole set, as results.json records it
    done: list[Result] = []
    if args.resume:
        from ..compare.resume import ResumeError, check_same, earlier_provenance, load_earlier

        try:
            earlier = load_earlier(args.out)
            check_same(earlier, settings=recorded_settings(vars(args)), methods=methods, conventions=conventions,
                       data_sha256=args.data_sha256)
        except ResumeError as e:
            raise _usage(str(e)) from None
        done = earlier["runs"]
        args.earlier_runs = earlier_provenance(earlier)
        print(f"boostplug compare: resuming {args.out}: {len(done)} run(s) finished earlier are kept",
              file=sys.stderr)
    from ..compare.budget import check_budget

    finished = {(r.method, r.fold) for r in done}
    try:  # before any training: rounds or trials whose records cannot fit in memory
        check_budget(rounds=args.rounds, tune=args.tune, folds=folds,
                     runs=[(m, i) for i, _ in folds for m in methods if (m, i) not in finished],
                     **({} if runner is None else {"method": runner.compare_method}))
    except ValueError as e:
        raise _usage(str(e)) from None
    tuned = f", {args.tune} trial(s) per method and fold" if args.tune else ""
    print(f"boostplug compare: {len(methods)} method(s) x {len(folds)} fold(s) of {args.data}, up to "
          f"{args.rounds} rounds, round chosen on validation {args.early_stopping_metric}{tuned}, jobs {args.jobs}",
          file=sys.stderr)
    if runner is not None:
        print(f"boostplug compare: {runner.describe()}", file=sys.stderr)
    results = run(methods, folds, rounds=args.rounds, metric=args.early_stopping_metric, tree_params=tree_params,
                  seed=args.seed, jobs=args.jobs, threads=args.threads, conventions=conventions,
                  tune=args.tune, done=done, on_trained=signals.hold,  # from here a signal waits for the writing
                  runner=runner,
                  progress=not args.no_progress and sys.stderr.isatty(),
                  log=not args.no_progress and not sys.stderr.isatty())
    failed = 1 if results.failures else 0
    stopped = 128 + signal.SIGINT  # a KeyboardInterrupt not from our handlers: Ctrl-C
    if not results:
        report_failures(results.failures, None)
        print("boostplug compare: no method finished", file=sys.stderr)
        return stopped if results.interrupted else 1
    if baseline not in {r.method for r in results}:
        baseline = results[0].method
    print(format_table(results, baseline))
    written = None
    try:
        if out is not None:
            out.write(lambda folder: write_outputs(folder, results, baseline, vars(args), plots=not args.no_plots))
            written = out.path
            print(f"results written to {out.path}", file=sys.stderr)
    finally:  # failures are reported even when writing fails (an OSError: one line from boostplug.cli.main)
        report_failures(results.failures, written)
        if signals.received and not results.interrupted:
            kept = "written first" if written is not None else "tabulated first"
            print(f"boostplug compare: {signal.Signals(signals.received[0]).name} arrived after training; the "
                  f"results were {kept}", file=sys.stderr)
    return stopped if results.interrupted else failed


def click_protocol(args: argparse.Namespace) -> Any:
    """With ``--clicks``: :mod:`boostplug.compare.clicks`, its runner set as ``args.click_runner``
    and its settings as ``args.clicks_protocol`` (recorded in results.json); ``None`` without."""
    from ..compare import clicks

    try:
        runner = clicks.runner_from_args(args)
    except (ValueError, TypeError) as e:
        raise _usage(str(e)) from None
    if runner is None:
        return None
    args.click_runner = runner
    args.clicks_protocol = runner.record()
    return clicks


def parse_click_methods(args: argparse.Namespace, frameworks: Sequence[str]) -> list[str]:
    """``--methods`` of the click protocol (``default``/``all``: every click method of ``frameworks``)."""
    from ..compare.clicks import parse_click_methods as parse

    try:
        return parse(args.methods, frameworks, args.click_runner)
    except (ValueError, TypeError) as e:
        raise _usage(f"--methods: {e}") from None


@dataclass
class Signals:
    """The signals the command received (``received``, in order). Once ``hold()`` is called (when
    training ends) they are only recorded: the finished runs exist only in memory until written,
    so a signal then waits for the table and the files, and sets the exit code."""

    received: list[int] = field(default_factory=list)
    held: bool = False

    def hold(self) -> None:
        self.held = True


@contextlib.contextmanager
def interrupt_signals() -> Iterator[Signals]:
    """SIGTERM and SIGHUP stop a run as Ctrl-C (SIGINT) does: the finished runs are tabulated and
    written. Yields the :class:`Signals` received. Only the first signal interrupts, and only
    before :meth:`Signals.hold` (a signal must not cut the writing of the finished runs short);
    a signal that is ignored when the command starts (``nohup``, a background job of a script)
    stays ignored."""
    from .errors import Interrupted

    signals = Signals()

    def interrupt(signum: int, frame: Any) -> None:
        signals.received.append(signum)
        if len(signals.received) == 1 and not signals.held:
            raise Interrupted(signum)

    old: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
                old[sig] = signal.signal(sig, interrupt)
    except ValueError:  # not the main thread: signals are not ours to handle
        pass
    try:
        yield signals
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def prepare_out(out: Path, *, overwrite: bool = False) -> OutDir:
    """Create the ``--out`` folder, check that files can be written in it and take it for this
    run (a lock; refused when it holds an earlier run's results, unless ``overwrite``), before any
    training; a ``UsageError`` saying what is wrong otherwise."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise _usage(f"--out {out}: exists and is not a folder; give a folder (created when missing)")
    blocking = next((p for p in out.parents if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise _usage(f"--out {out}: {blocking} is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise _usage(f"--out {out}: cannot write there ({e.strerror or e})") from e
    taken = OutDir(out, overwrite=overwrite)
    try:
        taken.acquire()
    except OutDirError as e:
        raise _usage(str(e)) from None
    if taken.recovered is not None:
        which = ("the earlier run's complete set is back" if taken.recovered == "previous" else
                 "its complete set stands (the set it replaced is deleted)")
        print(f"boostplug compare: --out {out}: a run killed while moving its results in had left them half "
              f"moved; {which}", file=sys.stderr)
    return taken


def report_failures(failures: Sequence[Failure], out: Path | None) -> None:
    """One line per method that failed (folds with the same error together) on stderr; the
    tracebacks with ``BOOSTPLUG_DEBUG=1``, else where to find them."""
    from .errors import debug

    if not failures:
        return
    groups: dict[tuple[str, str], list[int]] = {}
    for f in failures:
        if debug():
            print(f.traceback, file=sys.stderr, end="")
        groups.setdefault((f.method, f.error), []).append(f.fold + 1)
    for (method, error), folds in groups.items():
        print(f"boostplug compare: {method} failed on fold {','.join(map(str, folds))}: {error}", file=sys.stderr)
    if not debug():
        where = f" (they are in {out / 'results.json'})" if out is not None else ""
        print(f"boostplug compare: the other runs are kept; BOOSTPLUG_DEBUG=1 prints the tracebacks{where}",
              file=sys.stderr)
