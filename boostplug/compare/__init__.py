"""Train ranking methods under one protocol and compare them (``boostplug compare``).

* :mod:`.methods` -- the methods by name (built-in and boostplug objectives on
  LightGBM and XGBoost trees, the reference boosters), one shared set of tree parameters;
* :mod:`.method_specs` -- a method with its settings as text, ``name[key=value,...]``;
* :mod:`.search_spaces` -- what ``--tune`` searches for each method;
* :mod:`.training` -- what a method trains on (:class:`TrainingPart`: rows, and shown positions
  or explicit pairs where a learner takes them) and how each framework trains: scores after every
  round, the time;
* :mod:`.data` -- the folds of the embedded example, a LETOR file or a LETOR folder;
* :mod:`.protocol` -- what one (method, fold) run does: round chosen on validation, metrics on test;
* :mod:`.execution` -- every (method, fold) run, in parallel jobs, Ctrl-C, failures, resumed runs;
* :mod:`.comparison` -- the folds compared, summary, paired tests, bootstrap intervals;
* :mod:`.report` -- the table, its verdict and legend of the method names, and the files of ``--out``;
* :mod:`.run_record` -- what results.json records of a run: its settings and provenance;
* :mod:`.results_schema` -- results.json as ``--resume`` reads it back, every value checked;
* :mod:`.stats` -- paired t-test and Wilcoxon signed-rank test against a baseline;
* :mod:`.plots` -- NDCG@10 curves and a bar chart (matplotlib, Agg);
* :mod:`.click_fold` -- one fold of the click protocol: judged queries, the click log (simulated
  or real), the round-selection data;
* :mod:`.click_protocol` -- the click protocol's methods, trained on the same clicks;
* :mod:`.clicks` -- ``boostplug compare --clicks``: the protocol run by the comparison's machinery.
"""

from ._worker_guard import from_environment as _from_environment

_from_environment()  # first: a spawned worker of --jobs dies with its parent even while it imports the rest

from .conventions import PROTOCOLS, Conventions, make_conventions
from .data import example_split, file_folds, load_folds, parse_fold_selection
from .methods import (
    DEFAULT_METHODS, FRAMEWORKS, METHODS, TREE_PARAM_LIMITS, TREE_PARAMS, check_tree_params, get_method, method_names,
)
from .protocol import CURVE_METRIC, REPORT_METRICS, Result, choose_round, run_method
from .execution import Failure, Results, check_parallel, max_parallel, run, threads_per_job
from .comparison import (
    BOOTSTRAP_LEVEL, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap, common_folds, comparable, folds_finished,
    significance, summary,
)
from .report import format_table, method_legend, verdict
from .stats import BootstrapCI, PairedTest, bootstrap_ci, bootstrap_means, paired_tests
from .training import TrainingPart
from .click_fold import ClickFold, ClickSettings, prepare
from .click_protocol import CLICK_METHODS, ClickMethod, click_method, run_click_method, run_clicks

__all__ = [
    "DEFAULT_METHODS", "FRAMEWORKS", "METHODS", "TREE_PARAMS", "TREE_PARAM_LIMITS", "check_tree_params", "get_method",
    "method_names",
    "example_split", "file_folds", "load_folds", "parse_fold_selection",
    "CURVE_METRIC", "REPORT_METRICS", "Failure", "Result", "Results", "choose_round", "common_folds",
    "comparable", "folds_finished", "format_table", "verdict", "method_legend", "run", "run_method", "significance",
    "summary", "threads_per_job",
    "max_parallel", "check_parallel",
    "PairedTest", "paired_tests",
    "Conventions", "PROTOCOLS", "make_conventions",
    "bootstrap", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_LEVEL", "BOOTSTRAP_SEED", "BootstrapCI", "bootstrap_ci",
    "bootstrap_means", "TrainingPart",
    "ClickSettings", "ClickFold", "prepare", "CLICK_METHODS", "ClickMethod", "click_method", "run_click_method",
    "run_clicks",
]
