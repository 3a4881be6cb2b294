"""The contract every registered objective follows (boostplug/objectives/_contract.py), checked by
``boostplug.testing``, the same checks users run on their own objectives: each objective x
Hessian mode x settings that the registry lists, so that an objective registered later is
checked with no edit here (the checks and what each promises: boostplug/testing/__init__.py):

* the gradient is the five-point derivative of the loss (a "scaled" one points where it does);
* each Hessian mode keeps its kind's promise ("exact": the derivative of the gradient, "bound":
  dominates the Hessian matrix); every Hessian is finite and >= HESSIAN_FLOOR;
* a constant added to a query's scores changes nothing; per-query weights scale that query; the
  loss is a sum over queries; one and two numba threads give identical results;
* extreme scores and degenerate queries give finite values or a ValueError naming the objective;
* ``check`` takes the defaults and refuses an unknown parameter; bad data is refused naming it;
* the LightGBM and XGBoost adapters hand the frameworks exactly ``grad_hess``.

Per-paper references (pure-Python pair loops, the papers' closed forms) stay in the per-paper files.
"""

from __future__ import annotations

from boostplug import objectives
from boostplug.testing import CHECKS, cases, parametrize_with_checks

NAMES = objectives.names()


@parametrize_with_checks(NAMES)
def test_objective_contract(objective, check) -> None:
    check(objective)


def test_every_registered_objective_mode_and_check_is_collected() -> None:
    """The parametrisation above covers each objective's every Hessian mode with every check."""
    covered = {(c.name, c.mode) for c in cases()}
    assert covered == {(n, m) for n in NAMES for m in objectives.get(n).hessian_kinds}
    ids = [p.id for p in test_objective_contract.pytestmark[0].args[1]]
    assert {i.rsplit("-", 1)[1] for i in ids} == set(CHECKS)
    assert all(f"{n}-parameters" in ids and f"{n}-bad_data" in ids for n in NAMES)
