"""Check an objective against boostplug's objective contract, as the built-in ones are checked.

In the spirit of scikit-learn's ``check_estimator`` and ``parametrize_with_checks``::

    from boostplug.testing import check_objective, parametrize_with_checks

    check_objective(RankNet)          # raises ContractError (an AssertionError) at the first failure

    @parametrize_with_checks([RankNet])           # with pytest: one test per case and check
    def test_contract(objective, check):
        check(objective)

Each objective is checked in each Hessian mode with the settings its registry entry lists (the
defaults, its ``methods``, the other values of each choice or bool parameter, both ends of each
search range, and its row-index parameters built from the data). The checks (:data:`CHECKS`, in
this order; what each promises: its function's docstring, or the table in docs/objectives/custom.md):
``gradient``, ``hessian``, ``shift_invariance``, ``query_weights``, ``sum_over_queries``,
``serial_parallel``, ``extreme_inputs``, ``lightgbm_adapter`` and ``xgboost_adapter`` (skipped
when the framework is not installed), ``parameters``, ``bad_data``.

Every check but ``serial_parallel`` runs the pair and listwise bases' loops and the class's
functions compiled with numba's bounds checking: an index out of range is an error naming the
function, not a crash of the test run.

The pieces are public too, for tests of one's own: :func:`cases`, :func:`contract_data`, the
five-point differences (:func:`fd_gradient`, :func:`fd_jacobian`) and the Hessian-kind
assertions (:func:`assert_exact_diagonal`, :func:`assert_bound_majorises`).
"""

from __future__ import annotations

from ._cases import (Case, ContractData, cases, contract_data, extreme_inputs, fd_gradient, fd_jacobian, five_point,
                     multi_label_queries, query_pairs)
from ._checks import (CHECKS, Check, CheckResult, ContractError, assert_bound_majorises, assert_exact_diagonal,
                      check_objective, objective_checks)
from ._pytest import parametrize_with_checks

__all__ = ["check_objective", "parametrize_with_checks", "ContractError", "CHECKS", "Check", "CheckResult",
           "objective_checks", "Case", "cases", "ContractData", "contract_data", "extreme_inputs", "five_point",
           "fd_gradient", "fd_jacobian", "multi_label_queries", "query_pairs", "assert_exact_diagonal",
           "assert_bound_majorises"]
