"""Train ranking methods under one protocol and compare them (``boostplug compare``).

Its modules, one line each: ARCHITECTURE.md ("compare/"); each module's docstring says what it
holds. User documentation: docs/compare.md.
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
