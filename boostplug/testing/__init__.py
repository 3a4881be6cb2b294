"""Check an objective against boostplug's objective contract, as the built-in ones are checked.

In the spirit of scikit-learn's ``check_estimator`` and ``parametrize_with_checks``::

    from boostplug.testing import check_objective, parametrize_with_checks

    check_objective(RankNet)          # raises ContractError (an AssertionError) at the first failure

    @parametrize_with_checks([RankNet])           # with pytest: one test per case and check
    def test_contract(objective, check):
        check(objective)

Each objective is checked in each Hessian mode with the settings its registry entry lists (the
defaults, its ``methods``, the other values of each choice or bool parameter, both ends of each
search range, and its row-index parameters built from the data). The checks (:data:`CHECKS`):

* ``gradient``: a gradient declared ``"exact"`` is the five-point derivative of the loss; one
  declared ``"scaled"`` has its signs and is a descent direction; with one declared
  ``"newton"``, ``-grad / hess`` descends the loss in each query;
* ``hessian``: each Hessian kind's promise (``"exact"``: the derivative of the gradient,
  floored; ``"bound"``: majorises the Hessian matrix); every Hessian finite and >= the floor
  (>= 0 with ``hessian_floor=False``);
* ``shift_invariance``: a constant added to a query's scores changes nothing;
* ``query_weights``: a query's weight scales its loss, gradients and Hessians;
* ``sum_over_queries``: the loss is a sum over queries, each query's values its own;
* ``serial_parallel``: one and two numba threads give the same results;
* ``extreme_inputs``: scores up to +-1.7e308, huge gaps, degenerate queries give finite values
  or a clear ``ValueError``, never the objective's own NaN;
* ``lightgbm_adapter``, ``xgboost_adapter``: the frameworks get exactly ``grad_hess``
  (skipped when the framework is not installed);
* ``parameters``: defaults accepted, unknown and misspelt names refused with "did you mean";
* ``bad_data``: bad scores, labels, groups and weights refused naming the row and value.

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
