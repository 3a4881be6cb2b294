"""The listwise base (objectives/listwise.py): sums against a per-query Python loop, query weights,
single-document queries, and the errors it names (a list function that raises, one numba cannot
compile, a wrong list_inputs shape); machinery errors pass unchanged."""

from __future__ import annotations

import importlib
import textwrap

import numpy as np
import pytest

from boostplug import objectives
from boostplug.objectives import Hessian, ListwiseLoss

PTR = np.array([0, 3, 4, 8])  # a query of one document in the middle
LABELS = np.array([2.0, 0.0, 1.0, 1.0, 0.0, 3.0, 1.0, 1.0])


class Squares(ListwiseLoss):
    """sum_i c (s_i - y_i - m)^2 per query, m the query's mean label (a per-query input)."""

    name = "test_list_squares"
    hessians = {"exact": Hessian("exact", "2 c")}
    params = {}

    def list_inputs(self):
        means = np.array([self.labels[a:b].mean() for a, b in zip(self.group_ptr[:-1], self.group_ptr[1:])])
        return self.labels[:, None], means[:, None]

    @staticmethod
    def list_loss(s, doc, query):
        r = s - doc[:, 0] - query[0]
        return np.sum(r * r)

    @staticmethod
    def list_grad_hess(s, doc, query, grad, hess):
        for i in range(s.shape[0]):
            grad[i] = 2.0 * (s[i] - doc[i, 0] - query[0])
            hess[i] = 2.0


def _python(scores, weights):
    loss, grad, hess = 0.0, np.zeros(8), np.zeros(8)
    for q, (a, b) in enumerate(zip(PTR[:-1], PTR[1:])):
        if b - a < 2:
            continue
        r = scores[a:b] - LABELS[a:b] - LABELS[a:b].mean()
        loss += weights[q] * np.sum(r * r)
        grad[a:b] = weights[q] * 2.0 * r
        hess[a:b] = weights[q] * 2.0
    return loss, grad, hess


@pytest.mark.parametrize("weights", [None, [2.0, 5.0, 0.5]])
def test_sums_match_a_python_loop_and_skip_single_document_queries(weights):
    obj = Squares(LABELS, PTR, weights=weights, hessian_floor=False)
    s = np.random.default_rng(0).normal(size=8)
    w = np.ones(3) if weights is None else np.asarray(weights)
    loss, grad, hess = _python(s, w)
    np.testing.assert_allclose(obj.loss(s), loss, rtol=1e-12)
    g, h = obj.grad_hess(s)
    np.testing.assert_allclose(g, grad, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, hess, rtol=1e-12)
    assert g[3] == 0.0 and h[3] == 0.0  # the one-document query takes no term


def test_a_list_function_that_raises_is_named_with_its_query():
    class Raises(Squares):
        name = "test_list_raises"

        @staticmethod
        def list_grad_hess(s, doc, query, grad, hess):
            if s.shape[0] > 3:
                raise ValueError("too long a list")
            grad[:] = s

    obj = Raises(LABELS, PTR)
    with pytest.raises(ValueError, match=r"test_list_raises: Raises\.list_grad_hess raises ValueError: too long a "
                                         r"list, on query 2 \(rows 4\.\.7\)") as info:
        obj.grad_hess(np.zeros(8))
    assert isinstance(info.value.__cause__, ValueError)


def test_a_function_numba_cannot_compile_is_a_type_error():
    class NotNumba(Squares):
        name = "test_list_not_numba"

        @staticmethod
        def list_loss(s, doc, query):
            return {"a dict": s}  # not a number

    with pytest.raises(TypeError, match=r"NotNumba: numba cannot compile its list_loss or list_grad_hess"):
        NotNumba(LABELS, PTR)


def test_when_the_loops_compile_is_declared_by_the_class():
    """``compile_at_bind`` (True for a class of one's own): numba's refusal comes when the loss is bound; a class that
    declares it False (boostplug's own, which a booster binds without calling) compiles at its first call."""
    class Later(Squares):
        name = "test_list_not_numba_later"
        compile_at_bind = False

        @staticmethod
        def list_loss(s, doc, query):
            return {"a dict": s}  # not a number

    later = Later(LABELS, PTR)  # bound: nothing compiled yet
    with pytest.raises(Exception, match="DictType"):  # numba's own refusal, at the first call
        later.loss(np.zeros(8))
    assert ListwiseLoss.compile_at_bind and not objectives.get("listmle").loss_class.compile_at_bind


def test_an_error_of_the_class_at_binding_is_its_own_wherever_its_file_is(tmp_path, monkeypatch):
    """Numba's failure is told from the class's own error by when it happens (compiling), not by the file an error is
    raised in: a loss in a folder named numba whose list_inputs raises gets that error when bound, not "numba failed
    compiling"."""
    (tmp_path / "numba").mkdir()
    (tmp_path / "numba" / "my_list_loss.py").write_text(textwrap.dedent("""
        from boostplug.objectives import Hessian, ListwiseLoss

        class HookFails(ListwiseLoss):
            name = "test_list_hook_fails"
            hessians = {"exact": Hessian("exact", "0")}

            def list_inputs(self):
                raise ValueError("the hook's own bug")

            @staticmethod
            def list_loss(s, doc, query):
                return 0.0

            @staticmethod
            def list_grad_hess(s, doc, query, grad, hess):
                pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path / "numba"))
    with pytest.raises(ValueError, match="the hook's own bug"):
        importlib.import_module("my_list_loss").HookFails(LABELS, PTR)


def test_list_inputs_of_the_wrong_shape_are_named():
    class Short(Squares):
        name = "test_list_short"

        def list_inputs(self):
            return self.labels[:3, None], np.zeros((self.n_queries, 1))

    with pytest.raises(ValueError, match=r"list_inputs\(\) must return arrays of shapes \(n_docs, m\) and "
                                         r"\(n_queries, k\); got \(3, 1\) and \(3, 1\)"):
        Short(LABELS, PTR).grad_hess(np.zeros(8))


def test_a_non_static_list_function_is_refused_when_the_class_is_declared():
    with pytest.raises(TypeError, match=r"Method must define list_loss as a @staticmethod"):
        class Method(Squares):
            name = "test_list_method"

            def list_loss(self, s, doc, query):
                return 0.0


def test_machinery_errors_pass_unchanged(monkeypatch):
    obj = Squares(LABELS, PTR)

    def fail(*args):
        raise MemoryError("the sums' arrays")

    monkeypatch.setattr(obj, "_call", fail)
    with pytest.raises(MemoryError, match="the sums' arrays"):
        obj.loss(np.zeros(8))


class _Writer(ListwiseLoss):
    """A list_loss that writes into its scores: the caller's array must not change."""

    name = "test_list_writer"
    hessians = {"exact": Hessian("exact", "0")}

    @staticmethod
    def list_loss(s, doc, query):
        s[0] = 5.0
        return 0.0

    @staticmethod
    def list_grad_hess(s, doc, query, grad, hess):
        pass


def test_list_functions_get_read_only_scores():
    scores = np.zeros(8)
    with pytest.raises(TypeError, match="_Writer: .*writes into an array that is read-only: the scores"):
        _Writer(LABELS, PTR).loss(scores)
    assert not scores.any()


class _InPlace(ListwiseLoss):
    """``s -= s.max()`` on the read-only scores: numba fails inside itself (an AttributeError)."""

    name = "test_list_in_place"
    hessians = {"exact": Hessian("exact", "0")}

    @staticmethod
    def list_loss(s, doc, query):
        return 0.0

    @staticmethod
    def list_grad_hess(s, doc, query, grad, hess):
        s -= s.max()
        grad[:] = s


def test_an_in_place_operation_on_the_scores_is_refused_when_the_loss_binds():
    with pytest.raises(TypeError, match=r"_InPlace: numba failed compiling .*in-place operation on the read-only "
                                        r"s, at or doc \(s -= s.max\(\)\)"):
        _InPlace(LABELS, PTR)


def test_a_query_that_cannot_fit_in_memory_is_refused_before_allocating(monkeypatch):
    from boostplug import _memory
    from boostplug.objectives import get

    monkeypatch.setattr(_memory, "available_memory", lambda: 10 * 2**20)  # 10 MiB
    ptr = np.array([0, 3, 1503])                                          # query 1: 1,500 documents, 18 MB of n x n
    labels = np.arange(1503.0) % 3
    with pytest.raises(ValueError, match=r"approx_ndcg: query 1 \(1500 documents\) would need at least "
                                         r"18,000,000 bytes, more than the 10,485,760 bytes of memory available"):
        get("approx_ndcg").prepare(labels, ptr)
    monkeypatch.setattr(_memory, "available_memory", lambda: None)      # the system does not say: no refusal
    get("approx_ndcg").prepare(labels, ptr)
