"""``parametrize_with_checks``: the contract checks as pytest parameters (pytest is imported
only here, so that :func:`~boostplug.testing.check_objective` runs without it)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..objectives import Loss, Objective
from ._cases import Case
from ._checks import objective_checks

__all__ = ["parametrize_with_checks"]


def parametrize_with_checks(objectives: Iterable[str | type[Loss] | Objective], *,
                            params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
                            checks: Sequence[str] | None = None) -> Any:
    """A ``pytest.mark.parametrize`` over ``objective, check``: one test per objective x case
    (Hessian mode and settings) x check, with ids such as ``ranknet-exact-sigma=0.5-gradient``
    (per-objective checks: ``ranknet-parameters``)::

        from boostplug.testing import parametrize_with_checks

        @parametrize_with_checks([RankNet])
        def test_contract(objective, check):
            check(objective)

    ``objectives``: registered names, :class:`~boostplug.objectives.Loss` subclasses (each
    check registers an unregistered one for its duration) or registry entries. ``params`` and
    ``checks`` as in :func:`~boostplug.testing.check_objective`. A check that cannot run here
    (a framework not installed) is reported as skipped.
    """
    import pytest

    if isinstance(objectives, (str, type, Objective)):
        raise TypeError(f"parametrize_with_checks takes a list of objectives, got {objectives!r}: "
                        f"write parametrize_with_checks([{objectives!r}])")
    found = [(subject, check) for objective in objectives
             for subject, check in objective_checks(objective, params=params, checks=checks)]
    return pytest.mark.parametrize(
        "objective, check", [pytest.param(subject, check, id=_id(subject, check.name)) for subject, check in found])


def _id(subject: Case | Objective, check: str) -> str:
    return f"{subject.id if isinstance(subject, Case) else subject.name}-{check}"
