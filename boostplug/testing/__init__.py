"""Check an objective against boostplug's objective contract, as the built-in ones are checked.

In the spirit of scikit-learn's ``check_estimator`` and ``parametrize_with_checks``::

    from boostplug.testing import check_objective, parametrize_with_checks

    check_objective(RankNet)          # raises ContractError (an AssertionError) at the first failure

    @parametrize_with_checks([RankNet])           # with pytest: one test per case and check
    def test_contract(objective, check):
        check(objective)

Each objective is checked in each Hessian mode with the settings its registry entry lists (:func:`cases`).
The checks (:data:`CHECKS`, in their order; what each promises: its function's docstring), the bounds
checking they run under and the pieces public for tests of one's own (:func:`contract_data`,
:func:`fd_gradient`, :func:`assert_exact_diagonal`, ...): docs/objectives/custom.md, "Testing it".
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
