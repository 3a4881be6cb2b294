"""Shared fixtures. Real data is read from ../shared/data relative to the repo root (tests/_helpers.py
says where); the helpers the test modules import are in tests/_helpers.py."""

from __future__ import annotations

import os

# OpenMP threads (LightGBM's, XGBoost's, scikit-learn's) that wait for the others at a barrier sleep
# instead of spinning: set before any of them loads, inherited by the processes the tests start. The
# results are the same; on a machine busier than its cores a spinning thread burns the time slice
# the thread it waits for needs (three 10-round LGBMRanker fits on the example data, whose n_jobs
# default is every physical core whatever OMP_NUM_THREADS says: 16.7 s spinning, 5.2 s sleeping, at
# a load average of 10 on 2 cores). A value set in the environment is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The kernels' serial/parallel switch at its default, whatever `boostplug calibrate` stored for this
# machine (the same results either way; the tests that pin the switch expect the default).
# tests/core/test_calibration.py checks that this is calibration.DEFAULT_PARALLEL_MIN_WORK.
os.environ.setdefault("BOOSTPLUG_PARALLEL_MIN_WORK", "5000000")

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tests._helpers import LGB_EXAMPLE, MQ2008, OHSUMED, need_data  # noqa: E402


@pytest.fixture
def mq2008_dir() -> Path:
    """Folder with MQ2008's S1..S5.txt (skips the test when absent)."""
    return need_data(MQ2008)


@pytest.fixture
def ohsumed_dir() -> Path:
    """Folder with OHSUMED's (LETOR 3.0) S1..S5.txt (skips the test when absent)."""
    return need_data(OHSUMED)


@pytest.fixture
def lgb_example_dir() -> Path:
    """Folder with LightGBM's lambdarank example (skips the test when absent)."""
    return need_data(LGB_EXAMPLE)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


@pytest.fixture
def letor_file(tmp_path: Path) -> Path:
    """A small synthetic LETOR file (15 queries of 4-8 documents, 4 features) for the command line."""
    from boostplug.data import make_ranking, write_letor

    p = tmp_path / "data.txt"
    write_letor(p, make_ranking(n_queries=15, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0))
    return p


# -- a run in which no test passed is not a pass ------------------------------------------------------
# pytest exits 0 when every collected test was skipped (e.g. only real-data tests selected and
# ../shared/data absent); CI must not count that as green, so such a run exits 5, the code pytest
# uses when nothing was collected.
_PASSED = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _PASSED
    if report.when == "call" and report.passed:
        _PASSED += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and _PASSED == 0 and session.testscollected > 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("no test passed (all skipped): exit code 5", red=True)


# -- the docstring examples (--doctest-modules) import every module collected here -----------------
# compare/_compare_driver.py patches boostplug.compare.execution when imported: it only runs as a script.
# autodiff/losses.py imports jax (the jax extra): without it, its test modules skip themselves.
collect_ignore = ["compare/_compare_driver.py"] + ([] if importlib.util.find_spec("jax") else ["autodiff/losses.py"])


# -- the inner loop -----------------------------------------------------------------------------------
# `python -m pytest -m "not slow and not spark and not dask"` (ARCHITECTURE.md, "Tests") leaves out,
# besides what is marked slow where it is defined, these modules and tests of seconds each: processes
# started (fresh interpreters, workers, signals), every code block of the docs, many classes compiled,
# real model files cut at every byte. Measured on the 2-core development machine (`--durations`).
INNER_LOOP_LEAVES_OUT = (
    "tests/docs/test_code_blocks.py", "tests/docs/test_api_reference.py", "tests/docs/test_core.py",
    "tests/compare/test_runtime.py", "tests/objectives/test_documented_objectives.py",
    "tests/core/test_class_kernels.py", "tests/core/test_numba_cache_safety.py", "tests/core/test_numba_cache_ids.py",
    "tests/examples/test_examples.py", "tests/benchmarks/test_speed_guards.py", "tests/cli/test_warmup.py",
    "tests/frameworks/test_shipped_objective.py", "tests/metrics/test_kernel_cache.py",
    "tests/autodiff/test_entry_points.py", "tests/autodiff/test_without_jax.py",
    "tests/cli/test_compare.py::test_import_registers_a_users_objective_for_the_command_and_its_workers",
    "tests/cli/test_compare.py::test_every_openmp_runtime_of_the_command_sleeps_unless_the_user_chose",
    "tests/cli/test_compare_clicks.py::test_parallel_jobs_train_on_the_same_clicks",
    "tests/cli/test_info.py::test_closed_pipe_ends_quietly",
    "tests/compare/test_compare.py::test_parallel_jobs_equal_serial",
    "tests/compare/test_compare.py::test_parallel_ctrl_c_keeps_finished_runs_and_stops_the_workers",
    "tests/compare/test_compare.py::test_a_failing_run_is_recorded_and_the_others_go_on",
    "tests/compare/test_fold_cache.py::test_a_tuned_comparison_gives_the_same_results_with_the_cache_and_builds",
    "tests/compare/test_tuning.py::test_parallel_tuning_equals_serial",
    "tests/core/test_calibration.py::test_the_command_measures_each_wait_policy_and_stores_both",
    "tests/data/test_letor.py::test_edge_files_equal_sklearn",
    "tests/data/test_letor.py::test_dense_estimate_sees_the_address_space_limit",
    "tests/data/test_letor.py::test_write_at_file_size_limit_keeps_old_files",
    "tests/frameworks/test_arrow_frames.py::test_categorical_frame_does_not_end_the_process",
    "tests/frameworks/test_mlflow.py::test_log_model_records_the_objective_given_and_autolog_keeps_only_its_name",
    "tests/frameworks/test_model_bytes.py::test_every_cut_point_of_a_payload_is_refused_with_a_value_error",
    "tests/frameworks/test_sklearn_model_selection.py::test_joblib_workers_refuse_too",
    "tests/frameworks/test_unregistered.py::test_dask_trains_an_unregistered_class",
    "tests/models/test_lightgbm_model_text.py::test_every_cut_point_of_two_real_model_files_is_refused",
    "tests/models/test_pickling.py::test_spawned_processes_and_joblib_workers_use_them",
    "tests/models/test_saved_models.py::test_plain_lightgbm_loads_the_file_without_a_warning_and_earlier_files",
    "tests/models/test_xgboost_model_file.py::test_every_cut_point_of_a_real_ubj_model_is_refused_or_loads_whole",
    "tests/models/test_xgboost_model_trees.py::test_random_bit_flips_end_in_a_value_error_or_a_model_that_predicts",
    "tests/objectives/test_listwise_base.py::test_a_function_numba_cannot_compile_is_a_type_error",
    "tests/objectives/test_xgb_lambdarank.py::test_default_settings_grow_xgboosts_trees",
    "tests/objectives/test_xgb_lambdarank.py::test_xgboosts_parameters_grow_its_trees",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(INNER_LOOP_LEAVES_OUT):
            item.add_marker(pytest.mark.slow)
