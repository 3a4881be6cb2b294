"""The options of ``boostplug compare`` and their help texts (``boostplug compare --help``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from ..compare import DEFAULT_METHODS, FRAMEWORKS, TREE_PARAMS
from ..compare.clicks import add_arguments as add_click_arguments
from ..compare.conventions import DISCOUNTS, EMPTIES, GAINS, PROTOCOLS, TIES
from ..compare.method_specs import plain_number
from ..data import LAYOUTS
from .compare_config import defer_defaults

__all__ = ["add_parser"]


def _type(kind: type, refused: Callable[[str], bool], why: str) -> Callable[[str], Any]:
    """An option's type: ``kind(text)``, or argparse's one-line error saying ``why`` when ``refused(text)``."""
    def parse(text: str) -> Any:
        if refused(text):
            raise argparse.ArgumentTypeError(f"{text!r} {why}")
        return kind(text)

    parse.__name__ = kind.__name__  # argparse's "invalid int value: ..."
    return parse


# int() and float() read '٥', '２' and '1_0' (--threads and --folds do not); Path("") is the current folder
_INT, _FLOAT = (_type(kind, lambda text: not plain_number(text), "is not a number in ASCII digits without underscores")
                for kind in (int, float))
_OUT = _type(Path, lambda text: not text.strip(), "is empty: give a folder (. for the current one)")


def add_parser(subparsers: Any, run: Callable[..., int]) -> argparse.ArgumentParser:
    """Register the ``compare`` subcommand, run by ``run(args)``, with its options."""
    p = subparsers.add_parser(
        "compare",
        help="train ranking methods on one data set and compare them",
        description="Train each method on the same folds with the same tree parameters, choose its number of rounds "
                    "on the validation part, and report test NDCG@1/3/5/10 and MAP or the --metrics given (mean±std "
                    "over folds), training time and a paired significance test against a baseline. The "
                    "methods: boostplug compare --methods list.",
    )
    p.set_defaults(run=run)
    p.add_argument("--data", default="example",
                   help="'example' (default: LightGBM's example, embedded; 20%% of its training queries "
                        "validate), a LETOR file (query-level k-fold, see --kfold), or a LETOR folder "
                        "(Fold1..FoldK or S1..Sk.txt)")
    p.add_argument("--methods", nargs="+", default=None, metavar="METHOD",
                   help="names (comma- or space-separated), 'default', 'all' (of --frameworks) or 'list' to print "
                        "the names; a method with settings: NAME:KEY=VALUE,KEY=VALUE or 'NAME[KEY=VALUE,...]', "
                        "e.g. mpboost-ldd:alpha=0.3,lam=2 "
                        f"(default: {', '.join(DEFAULT_METHODS)})")
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                   help="which method families run: lightgbm, xgboost, catboost (when installed), booster, linear "
                        "(default: %(default)s)")
    p.add_argument("--folds", default="all", help="folds to run, e.g. 1,3 (default: all)")
    p.add_argument("--kfold", type=_INT, default=5, help="number of query-level folds of a LETOR file (default: 5)")
    p.add_argument("--layout", default=None, choices=tuple(LAYOUTS),
                   help="how a LETOR folder of parts S1..Sk.txt makes folds (required for one; Fold1..FoldK folders "
                        "beside them are read, whatever it says): " + "; ".join(map(": ".join, LAYOUTS.items())))
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
    p.add_argument("--max-grade", type=_FLOAT, default=None, metavar="G",
                   help="ERR's largest grade, R_g = (2^g-1)/2^G (default: 4 under --protocol library, 2 under letor); "
                        "a label above it is refused before training")
    p.add_argument("--metrics", default=None, metavar="LIST",
                   help="the reported test metrics, comma-separated, ndcg@10 among them: ndcg@k, map, err@k, mrr, "
                        "p@k, rbp@P (persistence P, rbp: 0.8), ... (the names --select takes; default: "
                        "ndcg@1,ndcg@3,ndcg@5,ndcg@10,map)")
    p.add_argument("--rounds", type=_INT, default=300, help="maximum boosting rounds (default: %(default)s)")
    p.add_argument("--select", "--early-stopping-metric", dest="early_stopping_metric", default=None,
                   metavar="METRIC",
                   help="metric that chooses the round (and, with --tune, the parameters) on the validation part; "
                        "r1/r2 are minimised; map: the LETOR baselines' protocol (default: ndcg@10)")
    p.add_argument("--tune", type=_INT, default=None, metavar="N",
                   help="search each method's parameters first: N Optuna TPE trials per method and fold on the "
                        "validation part, trial 0 the defaults, poor trials pruned on the validation curve "
                        "(default: 0, no search; the fair protocol: every method's own parameters searched alike)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="a module name or a .py file to import first, in this process and in every --jobs worker, "
                        "e.g. one that registers your own objective with boostplug.objectives.register so that "
                        "--methods can name it; repeatable")
    p.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="a TOML (Python 3.11+) or JSON file of settings: methods with their parameters, "
                        "tree_params, rounds, select, tune, seed, ...; flags given on the command line win. "
                        "A config file is code: its import key runs Python (printed first)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help=f"override a shared tree parameter ({', '.join(TREE_PARAMS)}); repeatable")
    p.add_argument("--baseline", default=None,
                   help="method the others are tested against (default: lambdarank when it runs, else the first)")
    p.add_argument("--seed", type=_INT, default=0, help="seed of the splits and of training (default: 0)")
    p.add_argument("--jobs", type=_INT, default=1, help="methods trained in parallel processes (default: 1; at most 4 x the cores)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="train on a Dask cluster: a scheduler's address (tcp://host:8786), or local:N for N worker "
                        "processes started here; each method and fold is one task, with the same results as "
                        "--jobs (needs boostplug[dask]; instead of --jobs)")
    p.add_argument("--threads", default="1",
                   help="threads per job: a number (at most 4 x the cores) or 'auto' (cores / jobs). Default 1: "
                        "on small data more threads mostly add synchronisation and can make training several "
                        "times slower")
    p.add_argument("--out", type=_OUT, default=None,
                   help="folder for CSV, JSON and PNG results (results.csv, per_query.csv, curves.csv, "
                        "summary.csv, results.json, curves.png, metrics.png)")
    p.add_argument("--overwrite", action="store_true",
                   help="with --out: replace the results of an earlier run in that folder (refused without it)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: finish an interrupted run in that folder; trains only the (method, fold) runs "
                        "its results.json lacks (failed ones again) and reports all of them; the settings that "
                        "decide results must be the same (--jobs, --threads and --folds may differ)")
    p.add_argument("--no-plots", action="store_true", help="with --out: no PNG plots")
    p.add_argument("--wide", action="store_true",
                   help="the wide table: NDCG@1/3/5 too, the rounds of each fold, the Wilcoxon test and the means' "
                        "95%% intervals (default: 100 columns: NDCG@10, MAP, seconds, dNDCG@10, its interval, t-test)")
    p.add_argument("--alpha", type=_FLOAT, default=0.05, metavar="LEVEL",
                   help="significance level of the verdict under the table: a difference to the baseline is "
                        "significant when its paired t-test p-value is below it (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_click_arguments(p)
    defer_defaults(p)
    return p
