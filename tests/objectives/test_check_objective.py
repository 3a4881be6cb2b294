"""``boostplug.testing``: ``check_objective`` passes a correct objective, and each check fails on an
objective with the defect it is there for, naming the check, the objective and the mode; the
objective is registered only while it is checked; ``parametrize_with_checks`` gives one test
per case and check; pytest stays optional."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import numba
import numpy as np
import pytest

from boostplug import objectives
from boostplug.groups import qid_from_group_ptr
from boostplug.objectives import Hessian, Loss, Param
from boostplug.pairs import critical_pairs
from boostplug.testing import CHECKS, ContractError, cases, check_objective, objective_checks, parametrize_with_checks


class PairSquares(Loss):
    """``sum_k W_k sum_{y_i > y_j} (s_i - s_j - 1)^2 / 2``: smooth, shift invariant, exact Hessian
    ``W`` per pair and document; ``bound`` doubles it (``D + A``, the signless Laplacian, is PSD)."""

    name = "pair_squares"
    summary = "pairwise squared margin loss (test objective)"
    params = {"margin": Param(1.0, "real", "the margin", low=0.0)}
    hessians = {"exact": Hessian("exact", "W per pair of the document"),
                "bound": Hessian("bound", "2 W per pair of the document")}

    def setup(self) -> None:
        # the library's pair list (examples/custom_objective.py builds its own, for the reader)
        pairs = critical_pairs(self.labels, self.group_ptr)
        w = self.query_weights[qid_from_group_ptr(self.group_ptr)[pairs[:, 0]]]
        keep = w != 0          # a query of weight 0 has no terms
        self._above, self._below, self._weight = pairs[keep, 0], pairs[keep, 1], w[keep]

    def _residual(self, scores: np.ndarray) -> np.ndarray:
        return scores[self._above] - scores[self._below] - self.margin

    def _loss(self, scores: np.ndarray) -> float:
        return float(0.5 * np.sum(self._weight * self._residual(scores) ** 2))

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = self._weight * self._residual(scores)
        n = self.n_docs
        g = np.bincount(self._above, d, n) - np.bincount(self._below, d, n)
        c = self._weight * (1.0 if self.hessian == "exact" else 2.0)
        return g, np.bincount(self._above, c, n) + np.bincount(self._below, c, n)


ONE_THREAD = "numba has one thread: no parallel kernels to compare" if numba.config.NUMBA_NUM_THREADS < 2 else None


# ---- one defect per check ---------------------------------------------------------------------------------
class WrongGradient(PairSquares):
    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        return 1.01 * g, h


class WrongExactHessian(PairSquares):
    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        return g, (1.5 * h if self.hessian == "exact" else h)


class BoundTooSmall(PairSquares):
    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        return g, (0.3 * h if self.hessian == "bound" else h)


class Anchored(PairSquares):
    """Adds ``W_k s_i^2 / 200`` per document: consistent derivatives and weights, not shift invariant."""

    def _loss(self, scores):
        return super()._loss(scores) + float(np.sum(self._doc_weights() * scores ** 2)) / 200

    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        w = self._doc_weights()
        return g + w * scores / 100, h + w / 100

    def _doc_weights(self):
        return np.repeat(self.query_weights, np.diff(self.group_ptr))


class Unweighted(PairSquares):
    def setup(self):
        self.query_weights = np.ones_like(self.query_weights)
        super().setup()


class Averaged(PairSquares):
    """Divides by the number of queries: the loss is no sum over queries."""

    def _loss(self, scores):
        return super()._loss(scores) / self.n_queries

    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        return g / self.n_queries, h / self.n_queries


class ThreadDependent(PairSquares):
    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        return g * (1.0 + 1e-9 * (numba.get_num_threads() - 1)), h


class NaNForOneDocument(PairSquares):
    """Normalises each document's gradient by its query's size minus one: 0 / 0 in a
    one-document query, whatever the scores."""

    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        sizes = np.repeat(np.diff(self.group_ptr), np.diff(self.group_ptr)).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return g * (sizes - 1.0) / (sizes - 1.0), h


class Stateful(PairSquares):
    """Remembers how often it was called (a class attribute: shared by every binding)."""

    calls = 0

    def _grad_hess(self, scores):
        type(self).calls += 1
        g, h = super()._grad_hess(scores)
        return g * (1.0 + 1e-3 * type(self).calls), h


class LenientParameters(PairSquares):
    @classmethod
    def resolve_params(cls, params, *, n_docs=None):
        return super().resolve_params({k: v for k, v in params.items() if k in cls.declared_params()}, n_docs=n_docs)


class NaNScoresAsZero(PairSquares):
    def _check(self, scores):
        return super()._check(np.nan_to_num(np.asarray(scores, dtype=float), nan=0.0, posinf=0.0, neginf=0.0))


DEFECTS = [(WrongGradient, "gradient", "exact"), (WrongExactHessian, "hessian", "exact"),
           (BoundTooSmall, "hessian", "bound"), (Anchored, "shift_invariance", "exact"),
           (Unweighted, "query_weights", "exact"), (Averaged, "sum_over_queries", "exact"),
           (ThreadDependent, "serial_parallel", "exact"), (NaNForOneDocument, "extreme_inputs", "exact"),
           (Stateful, "lightgbm_adapter", "exact"), (Stateful, "xgboost_adapter", "exact"),
           (LenientParameters, "parameters", None), (NaNScoresAsZero, "bad_data", None)]


def test_a_correct_objective_passes_every_check_and_leaves_the_registry_as_found() -> None:
    before = objectives.names()
    ran = check_objective(PairSquares)
    assert objectives.names() == before
    assert {r.check for r in ran} == set(CHECKS)
    assert all(r.skipped is None for r in ran if r.check != "serial_parallel" or ONE_THREAD is None)
    # each mode at its defaults, the margin's alternatives are no search range: two cases
    assert sorted({r.subject for r in ran}) == ["pair_squares", "pair_squares-bound", "pair_squares-exact"]


@pytest.mark.parametrize("defective, check, mode", DEFECTS, ids=[f"{d.__name__}-{c}" for d, c, _ in DEFECTS])
def test_each_check_fails_on_the_defect_it_is_for(defective: type[Loss], check: str, mode: str | None) -> None:
    if check == "serial_parallel" and ONE_THREAD:
        pytest.skip(ONE_THREAD)
    before = objectives.names()
    name = f"pair_squares_{check}"
    cls = type(defective.__name__, (defective,), {"name": name})
    with pytest.raises(ContractError) as e:
        check_objective(cls, checks=[check])
    where = f"objective {name!r}" + (f", Hessian mode {mode!r}" if mode else "")
    assert str(e.value).startswith(f"contract check {check!r} failed for {where}"), str(e.value)
    assert e.value.check == check and isinstance(e.value, AssertionError)
    assert objectives.names() == before  # unregistered after a failure too


def test_a_loss_that_declares_it_is_not_shift_invariant_is_checked_for_everything_else() -> None:
    """Anchored fails only shift_invariance (above); declared ``shift_invariant = False`` (as RankCosine is), every
    other check runs on it and passes, and that one does not run."""
    declared = type("DeclaredAnchored", (Anchored,), {"name": "pair_squares_anchored", "shift_invariant": False})
    ran = check_objective(declared)
    assert {r.check for r in ran} == set(CHECKS) - {"shift_invariance"}
    assert all(r.skipped is None for r in ran if r.check != "serial_parallel" or ONE_THREAD is None)


def test_the_objective_is_taken_by_name_class_or_entry() -> None:
    entry = objectives.register(PairSquares)
    try:
        by = [check_objective(x, checks=["gradient"]) for x in ("PAIR_SQUARES", PairSquares, entry)]
        assert by[0] == by[1] == by[2] and len(by[0]) == 2
    finally:
        objectives.unregister("pair_squares")
    with pytest.raises(ValueError, match="unknown objective 'pair_squares'"):
        check_objective("pair_squares")
    with pytest.raises(TypeError, match=r"a registered name, a boostplug.objectives.Loss subclass or instance, or a "
                                        r"registry entry, got 3"):
        check_objective(3)
    other = type("Other", (PairSquares,), {"name": "pair_squares"})
    objectives.register(other)
    try:
        with pytest.raises(ValueError, match=r"cannot check PairSquares: its name 'pair_squares' is registered to "
                                             r"Other"):
            check_objective(PairSquares)
    finally:
        objectives.unregister("pair_squares")


def test_params_and_checks_choose_what_runs() -> None:
    ran = check_objective(PairSquares, params={"margin": 2.0}, checks=["gradient", "parameters"])
    assert [(r.check, r.subject) for r in ran] == [("gradient", "pair_squares-exact-margin=2.0"),
                                                   ("gradient", "pair_squares-bound-margin=2.0"),
                                                   ("parameters", "pair_squares")]
    ran = check_objective(PairSquares, params=[{"hessian": "bound"}, {"margin": 0.0, "hessian": "exact"}],
                          checks=["hessian"])
    assert [r.subject for r in ran] == ["pair_squares-exact-margin=0.0", "pair_squares-bound"]
    with pytest.raises(ValueError, match="did you mean 'margin'"):
        check_objective(PairSquares, params={"margn": 2.0})
    with pytest.raises(ValueError, match=r"unknown check 'gradiant'; did you mean 'gradient'\?"):
        check_objective(PairSquares, checks=["gradiant"])
    with pytest.raises(TypeError, match="a list of check names, got the string 'gradient'"):
        check_objective(PairSquares, checks="gradient")


def test_a_missing_framework_is_a_skipped_check(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "xgboost", None)  # import xgboost raises ImportError
    ran = check_objective(PairSquares, checks=["xgboost_adapter", "lightgbm_adapter"])
    assert [(r.check, r.skipped) for r in ran] == [("xgboost_adapter", "xgboost is not installed")] * 2 + [
        ("lightgbm_adapter", None)] * 2


def test_the_registry_lists_the_cases_it_checks() -> None:
    """Settings come from the registry entry: methods and search ranges become cases."""
    entry = objectives.register(PairSquares, methods={"pair_squares": {}, "pair_squares-wide": {"margin": 3.0}})
    try:
        assert [c.id for c in cases("pair_squares")] == ["pair_squares-exact", "pair_squares-exact-margin=3.0",
                                                         "pair_squares-bound", "pair_squares-bound-margin=3.0"]
        assert all(c.registered and c.entry is entry for c in cases("pair_squares"))
    finally:
        objectives.unregister("pair_squares")


@parametrize_with_checks([PairSquares, "rankboost"], checks=["gradient", "parameters"])
def test_parametrized_as_a_user_writes_it(objective: Any, check: Any) -> None:
    check(objective)


def test_parametrize_with_checks_gives_one_test_per_case_and_check_with_readable_ids() -> None:
    ids = [p.id for p in test_parametrized_as_a_user_writes_it.pytestmark[0].args[1]]
    assert ids == ["pair_squares-exact-gradient", "pair_squares-bound-gradient", "pair_squares-parameters",
                   "rankboost-newton-gradient", "rankboost-gentle-gradient", "rankboost-parameters"]
    every = [p.id for p in parametrize_with_checks([PairSquares]).args[1]]
    assert len(every) == len(objective_checks(PairSquares)) and len(set(every)) == len(every)
    assert "pair_squares" not in objectives.names()
    with pytest.raises(TypeError, match=r"write parametrize_with_checks\(\[.*PairSquares.*\]\)"):
        parametrize_with_checks(PairSquares)


def test_check_objective_runs_without_pytest() -> None:
    code = textwrap.dedent("""
        import sys
        sys.modules["pytest"] = None  # import pytest fails
        from boostplug.testing import check_objective
        ran = check_objective("rankboost", checks=["gradient", "bad_data"])
        assert [r.check for r in ran] == ["gradient", "gradient", "bad_data"], ran
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


class NegatedExactHessian(PairSquares):
    """Returns the curvature with the wrong sign: the floor turns it into HESSIAN_FLOOR."""

    def _grad_hess(self, scores):
        g, h = super()._grad_hess(scores)
        return g, (-h if self.hessian == "exact" else h)


def test_a_hessian_of_the_wrong_sign_is_reported_with_the_value_the_objective_returned() -> None:
    cls = type("NegatedExactHessian", (NegatedExactHessian,), {"name": "pair_squares_negated"})
    with pytest.raises(ContractError) as e:
        check_objective(cls, checks=["hessian"], params={"hessian": "exact"})
    message = str(e.value)
    # the objective returned -W per pair at row 4 (4 pairs of weight 1), the derivative is +4
    assert "the objective returned [-4.0" in message and "is [3.99" in message, message
    assert "1e-06" not in message, message


class _PrecisionAt(objectives.PairwiseLoss):
    """RankNet weighted by |Delta P@k|: only pairs that straddle the cutoff k count."""

    name = "test_precision_at_k"
    summary = "logistic pairs weighted by |Delta P@k| (test objective)"
    params = {"k": Param(10, "int", "cutoff", low=1)}
    hessians = {"exact": objectives.pairwise.LAMBDA_EXACT}
    pair_loss, pair_grad, pair_hess = objectives.pairwise.LOGISTIC

    @staticmethod
    def pair_weight(p, k):
        return 1.0 / k if (p.rank_i < k) != (p.rank_j < k) else 0.0


def test_the_checks_run_on_the_authors_data_when_given() -> None:
    """The built-in queries hold at most 7 documents: a loss with a cutoff of 10 is flat there."""
    with pytest.raises(ContractError, match="flat"):
        check_objective(_PrecisionAt, checks=["gradient"])
    group_ptr = np.array([0, 15, 27, 40])
    labels = np.random.default_rng(0).integers(0, 3, 40).astype(float)
    assert check_objective(_PrecisionAt, checks=["gradient"], data=(labels, group_ptr))
    assert np.array_equal(cases.__globals__["contract_data"]().group_ptr[:2], [0, 1])  # as usual again
