"""``boostplug compare --clicks``: the click protocol (:mod:`.click_protocol`) run by the
comparison's own machinery (parallel jobs, interrupts, resume, the table, paired tests, plots and
the files of ``--out``), on simulated clicks (``--clicks simulate``) or a real log (``--clicks LOG``,
whose document keys index each query's rows of ``--data``): docs/compare.md.

:class:`ClickRunner` is what :func:`.execution.run` calls per (method, fold): it prepares the fold
once per process (the log is a function of the fold, the settings and the seed, so parallel jobs
train on the same clicks) and trains the method on it.
"""

from __future__ import annotations

import argparse
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Sequence

from .click_fold import SELECT, ClickFold, ClickSettings, _on_rows, prepare
from .click_protocol import CLICK_METHODS, can_train, click_method, run_click_method
from ..clicks.simulation import CLICK_MODELS, CLICK_PRESETS, PRESENTATIONS
from ..clicks import read_log, strategies as _strategies
from ..clicks.aggregate import WEIGHTS
from .method_specs import split_specs
from .protocol import Result

__all__ = ["ClickRunner", "add_arguments", "runner_from_args", "parse_click_methods", "default_baseline",
           "LOG_ROLES"]

#: The columns of a click log, by role (``--click-columns role=name,...``).
LOG_ROLES = ("session", "query", "doc", "position", "clicked", "order", "dwell")


#: How the protocol's description names each presentation.
_SHOWN = {"fixed": "", "shuffle": ", shuffled", "swap": ", FairPairs swaps"}


@lru_cache(maxsize=1)
def _read(path: str, columns: tuple[tuple[str, str], ...], on_bad: str) -> Any:
    """A real log, read once per process."""
    return read_log(path, columns=dict(columns) or None, on_bad=on_bad)


@dataclass(frozen=True)
class ClickRunner:
    """Runs one (method, fold) of the click protocol: :func:`.execution.run`'s ``runner``.

    Attributes:
        settings: the protocol's :class:`~.click_fold.ClickSettings`.
        log: a real click log's path (``None``: simulate); ``columns`` its role -> column names,
            ``on_bad`` what to do with a bad impression, ``on_missing`` with a document key
            without a feature row (``"raise"``/``"skip"``).
    """

    settings: ClickSettings
    log: str | None = None
    columns: tuple[tuple[str, str], ...] = ()
    on_bad: str = "raise"
    on_missing: str = "raise"

    def check(self, name: str) -> None:
        """``ValueError`` for a name, setting or tree parameter the protocol cannot train."""
        click_method(name).check_with(self.settings, simulated=self.log is None)

    def compare_method(self, name: str) -> Any:
        """The :class:`~.methods.Method` the click method ``name`` trains as, without its data
        (its framework, rounds and search space)."""
        return click_method(name).base_method()

    def read_log(self) -> Any:
        """The real log (``None`` when simulating), read and validated once per process."""
        return None if self.log is None else _read(self.log, self.columns, self.on_bad)

    def check_log(self, folds: Sequence[tuple[int, Any]]) -> list[str]:
        """Before any run: every document key of a real log that the folds use has a feature row
        (a ``ValueError`` naming the first that has none, or with ``on_missing="skip"`` one line
        per fold saying how many impressions are left out)."""
        log = self.read_log()
        notes: list[str] = []
        if log is None:  # simulated clicks: nothing to check
            return notes
        for i, (train, vali, _) in folds:
            parts = [("training", train)] + ([("validation", vali)] if self.settings.select == "clicks" else [])
            for name, part in parts:
                try:
                    with _quiet_skips():
                        kept, other = _on_rows(log, part, self.on_missing)
                except ValueError as e:
                    raise ValueError(f"--clicks {self.log}: "
                                     + str(e).replace("on_missing='skip'", "--click-on-missing skip")) from None
                lost = log.n_impressions - other - kept.n_impressions
                if lost:
                    notes.append(f"--click-on-missing skip: {lost} of {log.n_impressions - other} impressions on the "
                                 f"{name} queries of fold {i + 1} name documents without features; they are left out")
        return notes

    def prepared(self, train: Any, vali: Any, test: Any, fold: int, seed: int) -> ClickFold:
        """The fold prepared for the protocol; the last one is kept (runs go fold by fold)."""
        key = (fold, seed, _fingerprint(train), _fingerprint(vali), _fingerprint(test))
        held = _PREPARED.get(self)
        if held is not None and held[0] == key:
            return held[1]
        _PREPARED.clear()  # one fold at a time: the clicks-as-labels rows can be large
        with _quiet_skips():  # check_log said it once, before the runs
            prepared = prepare(train, vali, test, self.settings, log=self.read_log(), fold=fold, seed=seed,
                               on_missing=self.on_missing)
        _PREPARED[self] = (key, prepared)
        return prepared

    def __call__(self, name: str, train: Any, vali: Any, test: Any, *, fold: int = 0, seed: int = 0,
                 **kwargs: Any) -> Result:
        """:func:`.click_protocol.run_click_method` on the prepared fold."""
        return run_click_method(name, self.prepared(train, vali, test, fold, seed), fold_index=fold, seed=seed,
                                **kwargs)

    def record(self) -> dict[str, Any]:
        """What results.json records of the protocol (``settings.clicks_protocol``)."""
        out: dict[str, Any] = {"source": "simulate" if self.log is None else "log"}
        if self.log is not None:
            out.update(log=self.log, columns=dict(self.columns), on_bad=self.on_bad, on_missing=self.on_missing)
        out.update(self.settings.to_dict(simulated=self.log is None))
        return out

    def describe(self) -> str:
        """One line on what clicks the methods train on."""
        s = self.settings
        if self.log is None:
            model = (f"{s.model}, examination and click probability given" if s.examination is not None else
                     f"{s.model}, eta {s.eta:g}, noise {s.eps_plus:g},{s.eps_minus:g}")
            clicks = (f"{s.n_sessions} simulated sessions ({model}, top {s.top_k}"
                      f"{_SHOWN[s.presentation]}) shown by a production ranker trained on "
                      f"{s.labeled_fraction:g} of the training queries")
        else:
            clicks = f"the click log {self.log}"
        select = (f"{s.judged_vali_fraction:g} of the validation queries, at least {s.min_vali_queries} (labels)"
                  if s.select == "labels" else "validation clicks")
        return f"click protocol: every method trains on {clicks}; round chosen on {select}; test on true labels"


@contextmanager
def _quiet_skips() -> Iterator[None]:
    """Without log_rows' warning about impressions left out (``--click-on-missing skip``), which
    the command reports once, before the runs."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="boostplug.clicks.log_rows: left out")
        yield


#: The fold each process prepared last, by runner.
_PREPARED: dict[ClickRunner, tuple[Any, ClickFold]] = {}


def _fingerprint(data: Any) -> tuple[Any, ...]:
    """Cheap identity of a data part (its shape, groups and labels), to key the prepared fold."""
    return (data.n_docs, data.n_queries, data.n_features, float(data.y.sum()), int(data.group_ptr[-1]))


# ---- the command line -----------------------------------------------------------------------------

def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``--clicks`` options of ``boostplug compare``."""
    g = p.add_argument_group(
        "click protocol (--clicks)",
        "Every method trains on the same clicks, chooses its round on judged validation queries or on "
        "validation clicks, and is tested on the true labels of the test part. --methods are then the click "
        "protocol's: " + ", ".join(CLICK_METHODS) + " (default: all but the copies' checks, "
        + ", ".join(n for n, m in CLICK_METHODS.items() if m.reproduces) + "; 'all': every one; 'list' describes "
        "them).")
    g.add_argument("--clicks", default=None, metavar="simulate|LOG",
                   help="'simulate' (clicks simulated on --data's training part) or a click log (.csv or "
                        ".parquet; query ids of --data, document keys the 0-based index within the query)")
    g.add_argument("--click-model", default="pbm", choices=CLICK_MODELS,
                   help="simulated click model: pbm (position-based), cascade, dcm (default: %(default)s)")
    g.add_argument("--click-preset", default=None, choices=tuple(CLICK_PRESETS),
                   help="one of the field's reference click models instead of --click-model, --eta and --noise: "
                        "pbm-eta0.5/1/2 (position-based, noise 1.0,0.1), cascade, dcm (continuation 0.5), ultra-pbm "
                        "(ULTRA's examination by rank and click probability by grade)")
    g.add_argument("--sessions", type=int, default=10_000,
                   help="simulated sessions on the training queries (default: %(default)s)")
    g.add_argument("--top-k", type=int, default=10, help="documents shown per session (default: %(default)s)")
    g.add_argument("--eta", type=float, default=1.0,
                   help="position bias: position r examined with (1/r)^eta (pbm; default: %(default)s)")
    g.add_argument("--noise", default="1.0,0.1", metavar="EPS_PLUS,EPS_MINUS",
                   help="click probability of an examined document of the top grade and of grade 0 "
                        "(default: %(default)s)")
    g.add_argument("--continue-prob", type=float, default=0.5,
                   help="dcm: probability of going on after a click (default: %(default)s)")
    g.add_argument("--presentation", default="fixed", choices=PRESENTATIONS,
                   help="how each simulated session orders the production ranker's top k: the same list every "
                        "time, shuffled (randomised traffic), or FairPairs swaps of random neighbours "
                        "(default: %(default)s)")
    g.add_argument("--labeled-fraction", type=float, default=0.05,
                   help="share of the training queries that are judged: the production ranker's data and L "
                        "of labeled-only and qbrank-PL (default: %(default)s)")
    g.add_argument("--vali-fraction", type=float, default=None,
                   help="share of the validation queries judged for round selection (default: the labeled "
                        "fraction; 1: all)")
    g.add_argument("--min-vali-queries", type=int, default=30,
                   help="round selection on labels uses at least this many judged validation queries (all of "
                        "them when there are fewer; default: %(default)s)")
    g.add_argument("--select-on", default="labels", choices=SELECT,
                   help="round selection on the judged validation queries or on validation clicks (clicks as "
                        "labels; default: %(default)s)")
    g.add_argument("--strategies", default=",".join(_strategies.DEFAULT),
                   help="Joachims et al.'s preference strategies, comma-separated, or 'all' (default: %(default)s)")
    g.add_argument("--pair-weight", default="net", choices=WEIGHTS,
                   help="weight of a preference pair aggregated over sessions (default: %(default)s)")
    g.add_argument("--min-support", type=int, default=1,
                   help="net count a preference pair needs to be kept (default: %(default)s)")
    g.add_argument("--click-columns", default=None, metavar="ROLE=NAME,...",
                   help="a click log's column names by role (" + ", ".join(LOG_ROLES) + "), for those not named "
                        "after their role, e.g. session=sid,clicked=click")
    g.add_argument("--click-on-bad", default="raise", choices=("raise", "skip"),
                   help="a bad impression of a click log: refuse the log, or leave the impression out and "
                        "report it (default: %(default)s)")
    g.add_argument("--click-on-missing", default="raise", choices=("raise", "skip"),
                   help="a click log's document key without a feature row in --data: refuse the log before any "
                        "run, or leave its impressions out and report them (default: %(default)s)")


#: The click options of a real log only.
_LOG_ONLY = ("click_columns", "click_on_bad", "click_on_missing")
#: The click options of a simulation only.
_SIMULATION_ONLY = ("click_model", "click_preset", "sessions", "top_k", "eta", "noise", "continue_prob", "presentation")


def runner_from_args(args: argparse.Namespace) -> ClickRunner | None:
    """The :class:`ClickRunner` of ``--clicks`` and its options, ``None`` without ``--clicks``;
    a ``ValueError`` naming the option for a bad value (or for click options without ``--clicks``)."""
    given = _given_options(args)
    if getattr(args, "clicks", None) is None:
        if given:  # each configures the protocol
            raise ValueError(f"{', '.join(given.values())} configure the click protocol: give --clicks simulate or "
                             "--clicks LOG")
        return None
    source = str(args.clicks)
    log = None
    if source != "simulate":
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"--clicks {source}: no such file; give 'simulate' or a click log (.csv or .parquet)")
        if path.suffix.lower() not in (".csv", ".parquet", ".pq"):
            raise ValueError(f"--clicks {source}: a click log is a .csv or .parquet file")
        log = str(path)
        if sim := [given[d] for d in _SIMULATION_ONLY if d in given]:
            raise ValueError(f"{', '.join(sim)} configure a simulation; --clicks {source} reads a log")
    elif flags := [given[d] for d in _LOG_ONLY if d in given]:
        raise ValueError(f"{', '.join(flags)} describe{'s' if len(flags) == 1 else ''} a click log; --clicks "
                         "simulate reads none")
    eps = _noise(args.noise)
    if args.click_preset is not None:
        clash = [given[d] for d in ("click_model", "eta", "noise") if d in given]
        if clash:
            raise ValueError(f"--click-preset {args.click_preset} sets the click model: leave out {', '.join(clash)}")
    common: dict[str, Any] = {k: getattr(args, dest) for k, dest in _SETTING_OPTIONS.items()}
    common["strategies"] = [s.strip() for s in str(args.strategies).split(",") if s.strip()]
    try:
        if args.click_preset is not None:
            settings = ClickSettings.from_preset(args.click_preset, **common)
        else:
            settings = ClickSettings(model=args.click_model, eta=args.eta, eps_plus=eps[0], eps_minus=eps[1], **common)
        settings.check_usable(simulated=log is None)
    except (ValueError, TypeError) as e:
        raise ValueError(_as_option(str(e))) from None
    runner = ClickRunner(settings, log, _columns(args.click_columns), args.click_on_bad, args.click_on_missing)
    if log is not None:
        try:
            read = runner.read_log()  # refused now, before any training, naming the session and row
        except (ValueError, TypeError) as e:
            raise ValueError(f"--clicks {log}: {e}") from None
        if not read.n_impressions:
            raise ValueError(f"--clicks {log}: the click log has no rows; nothing to train on")
    return runner


def _given_options(args: argparse.Namespace) -> dict[str, str]:
    """The click options (but ``--clicks``) that ``args`` holds at other than their default: dest -> flag."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    return {a.dest: a.option_strings[0] for a in p._actions
            if a.dest != "clicks" and getattr(args, a.dest, None) != a.default}


#: ClickSettings' names -> the options (``dest``) that set them, whatever the click model.
_SETTING_OPTIONS = {"n_sessions": "sessions", "top_k": "top_k", "continue_prob": "continue_prob",
                    "presentation": "presentation", "labeled_fraction": "labeled_fraction",
                    "vali_fraction": "vali_fraction", "min_vali_queries": "min_vali_queries", "select": "select_on",
                    "weight": "pair_weight", "min_support": "min_support"}
#: ClickSettings' names -> the options that set them (for messages).
_AS_OPTION = {**{k: "--" + dest.replace("_", "-") for k, dest in _SETTING_OPTIONS.items()},
              "model": "--click-model", "eta": "--eta", "eps_plus": "--noise (eps+)", "eps_minus": "--noise (eps-)",
              "examination": "--click-preset"}


def _as_option(message: str) -> str:
    for name, flag in _AS_OPTION.items():
        if message.startswith(name + " "):
            return flag + message[len(name):].replace("(or labeled_fraction)", "(or --labeled-fraction)")
    return message.replace("strategies is empty", "--strategies is empty").replace(
        "unknown click strategy", "--strategies: unknown click strategy")


def _noise(text: str) -> tuple[float, float]:
    try:
        plus, minus = (float(p) for p in str(text).split(","))  # float() strips blanks; 1 or 3 parts: ValueError
    except ValueError:
        raise ValueError(f"--noise {text!r}: expected EPS_PLUS,EPS_MINUS, two probabilities, e.g. 1.0,0.1") from None
    return plus, minus


def _columns(text: str | None) -> tuple[tuple[str, str], ...]:
    if text is None:
        return ()
    out: dict[str, str] = {}
    for item in (t.strip() for t in text.split(",") if t.strip()):
        role, sep, name = item.partition("=")
        role, name = role.strip(), name.strip()
        if not sep or not name or role not in LOG_ROLES:
            raise ValueError(f"--click-columns {item!r}: expected ROLE=NAME with ROLE one of {', '.join(LOG_ROLES)}")
        if role in out:
            raise ValueError(f"--click-columns: {role} is named twice")
        out[role] = name
    return tuple(out.items())


def parse_click_methods(text: str, frameworks: Sequence[str], runner: ClickRunner | None = None) -> list[str]:
    """``all`` (every click method of ``frameworks``), ``default`` (the same without the methods that
    reproduce another through boostplug's copy of its objective) or click method specs, checked
    (by ``runner.check`` too when given); ``ValueError`` naming a bad one."""
    if text.strip().lower() in ("default", "all"):
        everything = text.strip().lower() == "all"
        chosen = [n for n, m in CLICK_METHODS.items() if (m.framework in frameworks or m.trains_on == "fixed")
                  and (everything or not m.reproduces)]
        if runner is not None:  # leave out what cannot train with these settings (no judged queries, ...)
            chosen = [n for n in chosen if can_train(CLICK_METHODS[n], runner.settings, runner.log is None)]
    else:
        configured = [click_method(spec) for spec in split_specs(text)]
        off = [m.name for m in configured if m.framework not in frameworks and m.trains_on != "fixed"]
        if off:
            raise ValueError(f"method(s) {', '.join(off)} are not in --frameworks {','.join(frameworks)}")
        chosen = list(dict.fromkeys(m.name for m in configured))
    if not chosen:
        raise ValueError(f"no click method to run: --methods {text!r} with --frameworks {','.join(frameworks)}")
    for name in chosen if runner is not None else ():
        runner.check(name)
    return chosen


def default_baseline(methods: Sequence[str]) -> str:
    """``production`` (the ranker the clicks came from) when it runs, else ``labeled-only`` (the
    model of the judged queries alone), else the first method."""
    return next((m for m in ("production", "labeled-only") if m in methods), methods[0])


