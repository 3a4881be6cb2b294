"""No silent failures of a JaxLoss: a non-finite query loss names its query, a vector loss, a loss that
reads the padded length, a metric given as a loss and JAX's trace errors are refused naming the author's
class; from_rax checks its keywords against the rax function and gives rax's values on the unpadded
query for every rax loss and lambdaweight."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
rax = pytest.importorskip("rax")

import jax.numpy as jnp  # noqa: E402

from boostplug.autodiff import JaxLoss, from_rax  # noqa: E402
from boostplug.autodiff._jax import float64  # noqa: E402
from boostplug.objectives import NonFiniteError, Param  # noqa: E402
from boostplug.testing import ContractError, check_objective  # noqa: E402

# two queries of 5 and 7 documents (bucket 8); query 1's labels sum to more than 3.5
LABELS = np.array([1.0, 0, 0, 1, 0, 2, 0, 1, 0, 1, 0, 0])
PTR = np.array([0, 5, 12])
SCORES = np.random.default_rng(3).standard_normal(12)


class NaNBehindWhere(JaxLoss):
    name = "nan_behind_where"
    summary = "NaN on a query whose labels sum past 3.5; its gradient stays finite (0)"

    @staticmethod
    def query_loss(s, y, mask):
        bad = jnp.sum(jnp.where(mask, y, 0.0)) > 3.5
        return jnp.where(bad, jnp.log(-1.0), jnp.sum(jnp.where(mask, s ** 2, 0.0)))


@pytest.mark.parametrize("method", ["loss", "grad_hess"])
def test_a_non_finite_query_loss_names_its_query_even_with_a_finite_gradient(method) -> None:
    with pytest.raises(NonFiniteError, match=r"nan_behind_where: NaNBehindWhere\.query_loss returned nan in query 1 \(rows 5\.\.11\), "
                                             r"from moderate inputs \(the query's scores .*labels 0\.0 \.\. 2\.0") as e:
        getattr(NaNBehindWhere(LABELS, PTR), method)(SCORES)
    assert e.value.query == 1


class Vector(JaxLoss):
    name = "vector_loss"
    summary = "a vector, not a scalar"

    @staticmethod
    def query_loss(s, y, mask):
        return jnp.where(mask, (s - y) ** 2, 0.0)


def test_a_vector_loss_is_refused_even_when_the_batch_is_as_long_as_the_bucket() -> None:
    ptr = np.arange(0, 25, 3)  # eight queries of 3: a batch of 8 in the bucket of 8
    labels = np.tile([1.0, 0.0, 2.0], 8)
    for method in ("loss", "grad_hess"):
        with pytest.raises(TypeError, match=r"Vector\.query_loss: must return one float .*not float64 \(8,\)"):
            getattr(Vector(labels, ptr), method)(np.zeros(24))


class ReadsLength(JaxLoss):
    name = "reads_length"
    summary = "scaled by the padded length"

    @staticmethod
    def query_loss(s, y, mask):
        return s.shape[0] * jnp.sum(jnp.where(mask, (s - y) ** 2, 0.0))


def test_a_loss_that_changes_with_the_padding_is_refused_at_its_first_gradient_and_by_check_objective() -> None:
    with pytest.raises(ValueError, match=r"reads_length: ReadsLength\.query_loss changes with the padding: query 0 "
                                         r"padded to 8 and to 12 has the loss"):
        ReadsLength(LABELS, PTR).grad_hess(SCORES)
    with pytest.raises(ContractError, match="ValueError: reads_length: ReadsLength.query_loss changes with the padding"):
        check_objective(ReadsLength, checks=["gradient"])


def test_a_metric_given_as_a_loss_is_refused() -> None:
    metric = from_rax(rax.ndcg_metric, name="rax_ndcg_metric_as_loss")
    with pytest.raises(ValueError, match=r"gradient of RaxNdcgMetricAsLoss\.query_loss is 0 wherever its value moves"):
        metric(LABELS, PTR).grad_hess(SCORES)


def test_a_metric_is_refused_when_the_first_query_has_a_single_label() -> None:
    """The checks use the first query that can tell (two labels or more): here query 1, after a query of zeros."""
    metric = from_rax(rax.ndcg_metric, name="rax_ndcg_metric_single_label_first")
    labels = np.concatenate([np.zeros(4), LABELS])
    with pytest.raises(ValueError, match=r"gradient of RaxNdcgMetricSingleLabelFirst\.query_loss is 0 wherever"):
        metric(labels, np.concatenate([[0], PTR + 4])).grad_hess(np.concatenate([np.zeros(4), SCORES]))


class Broadcasts(JaxLoss):
    name = "broadcasts"
    summary = "shapes that do not broadcast"

    @staticmethod
    def query_loss(s, y, mask):
        return jnp.sum(jnp.where(mask, s, jnp.ones(3)))


class NaNGradient(JaxLoss):
    name = "nan_gradient"
    summary = "a finite loss whose gradient is NaN: sqrt of a masked 0 behind one jnp.where"

    @staticmethod
    def query_loss(s, y, mask):
        return jnp.sum(jnp.where(mask & (y > 0), jnp.sqrt(jnp.where(mask, s - s, 0.0)), 0.0))


def test_jax_value_errors_and_nan_gradients_name_query_loss_not_the_base() -> None:
    with pytest.raises(ValueError, match=r"Broadcasts\.query_loss: Incompatible shapes.*\(on query 0: 5 documents, "
                                         r"padded to 8\)"):
        Broadcasts(LABELS, PTR, hessian="constant").grad_hess(SCORES)
    with pytest.raises(NonFiniteError, match=r"nan_gradient: the derivatives of NaNGradient\.query_loss returned a non-"
                       r"finite value at row 0 .*: a bug in the derivatives of NaNGradient\.query_loss, .*; most often "
                       r"jnp\.where\(mask, f\(x\), 0\.0\).*double jnp\.where$") as e:
        NaNGradient(LABELS, PTR, hessian="constant").grad_hess(SCORES)
    assert "_grad_hess" not in str(e.value)


class PythonIf(JaxLoss):
    name = "python_if"
    summary = "a Python if on a traced value"

    @staticmethod
    def query_loss(s, y, mask):
        if s[0] > 0:
            return jnp.sum(s)
        return jnp.sum(s ** 2)


def test_trace_errors_name_the_class_and_query_loss() -> None:
    with pytest.raises(TypeError, match=r"PythonIf\.query_loss: Attempted boolean conversion.*jnp\.where"):
        PythonIf(LABELS, PTR).grad_hess(SCORES)
    with pytest.raises(TypeError, match=r"JnpSum\.query_loss: "):
        from_rax(jnp.sum, name="jnp_sum")(LABELS, PTR).loss(SCORES)


def test_parameters_in_another_order_than_declared_are_refused() -> None:
    with pytest.raises(TypeError, match=r"Swapped\.query_loss .* takes \['b', 'a'\] where params declares \['a', 'b'\]"):
        class Swapped(JaxLoss):
            name = "swapped"
            summary = "parameters swapped"
            params = {"a": Param(1.0, "real", "a"), "b": Param(2.0, "real", "b")}

            @staticmethod
            def query_loss(s, y, mask, b, a):
                return jnp.sum(a * s)


def test_from_rax_checks_its_keywords_against_the_function_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match=r"from_rax: pairwise_logistic_loss takes no keyword 'lambdaweight'"):
        from_rax(rax.pairwise_logistic_loss, name="misspelt", kwargs={"lambdaweight": rax.dcg_lambdaweight})
    with pytest.raises(TypeError, match=r"softmax_loss takes no keyword 'epsilon'"):
        from_rax(rax.softmax_loss, name="misspelt", params={"epsilon": Param(1.0, "real", "e")})


LOSSES = sorted(n for n in rax.__all__ if n.endswith("_loss"))
LAMBDAWEIGHTS = [None, rax.labeldiff_lambdaweight, rax.dcg_lambdaweight, rax.dcg2_lambdaweight]


@pytest.mark.slow  # one compile per rax loss and lambdaweight
@pytest.mark.parametrize("loss", LOSSES)
def test_from_rax_gives_rax_values_on_the_unpadded_query_for_every_loss_and_lambdaweight(loss) -> None:
    """Queries of 5 and 7 documents padded to 8: rax's own loss and jax.grad of each query alone."""
    import inspect

    fn = getattr(rax, loss)
    for lw in LAMBDAWEIGHTS if "lambdaweight_fn" in inspect.signature(fn).parameters else [None]:
        kwargs = {} if lw is None else {"lambdaweight_fn": lw}
        cls = from_rax(fn, name=f"rax_{loss}_{getattr(lw, '__name__', 'none')}", kwargs=kwargs)
        g, _ = cls(LABELS, PTR, hessian="constant").grad_hess(SCORES)
        for a, b in zip(PTR[:-1], PTR[1:]):
            with float64():
                value, expected = jax.value_and_grad(lambda s: fn(s, jnp.asarray(LABELS[a:b]), **kwargs))(
                    jnp.asarray(SCORES[a:b]))
            np.testing.assert_allclose(g[a:b], np.asarray(expected), rtol=1e-10, atol=1e-14, err_msg=str(kwargs))
            assert cls(LABELS[a:b], np.array([0, b - a])).loss(SCORES[a:b]) == pytest.approx(float(value), rel=1e-10)


FACTOR = 1.0


class ReadsModule(JaxLoss):
    name = "reads_module"
    summary = "reads a module-level value"
    params = {"scale": Param(1.0, "real", "a declared factor", low=0.1, high=10.0)}

    @staticmethod
    def query_loss(s, y, mask, scale):
        return FACTOR * scale * jnp.sum(jnp.where(mask, (s - y) ** 2, 0.0))


def test_a_changed_module_level_value_is_read_by_the_next_binding_the_loss_and_its_gradient_alike() -> None:
    """A module-level value read by query_loss and changed between bindings: a new binding's loss, gradient and
    Hessian all read the new value (a new trace); one bound before keeps the value it was bound with, and one bound
    before the change that would trace after it is refused (its key and its trace would differ)."""
    before = ReadsModule(LABELS, PTR, hessian="exact")
    g1, h1 = before.grad_hess(SCORES)
    v1 = before.loss(SCORES)
    longer = ReadsModule(np.tile(LABELS, 2), np.array([0, 24]), hessian="exact")  # bound now, traced later
    globals()["FACTOR"] = 3.0
    try:
        loss = ReadsModule(LABELS, PTR, hessian="exact")
        g, h = loss.grad_hess(SCORES)
        np.testing.assert_allclose(g, 3.0 * g1, rtol=1e-12)
        np.testing.assert_allclose(h, 3.0 * h1, rtol=1e-12)
        assert loss.loss(SCORES) == pytest.approx(3.0 * v1, rel=1e-12)
        g3 = ReadsModule(LABELS, PTR, hessian="exact", scale=3.0).grad_hess(SCORES)[0]
        np.testing.assert_allclose(g3, 9.0 * g1, rtol=1e-12)
        np.testing.assert_array_equal(before.grad_hess(SCORES)[0], g1)
        assert before.loss(SCORES) == v1
        with pytest.raises(ValueError, match=r"ReadsModule\.query_loss: a value it reads changed after the loss was "
                                             r"bound: bind it again"):
            longer.grad_hess(np.tile(SCORES, 2))
    finally:
        globals()["FACTOR"] = 1.0


@pytest.mark.slow  # a fresh interpreter compiles three rax losses
def test_the_rax_block_of_autodiff_md_runs_alone(tmp_path) -> None:
    """The from_rax example imports what it uses (the page's other blocks need not run first)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "objectives" / "autodiff.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "from_rax(" in b)
    (tmp_path / "block.py").write_text(block.replace("num_boost_round=20", "num_boost_round=1"))
    out = subprocess.run([sys.executable, str(tmp_path / "block.py")], capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("NDCG@10") == 3


def test_the_largest_bucket_s_memory_is_checked_before_it_runs(monkeypatch) -> None:
    """XLA's own count of the compiled call against what is available (here made 100 bytes): refused naming the query."""
    import boostplug._memory

    monkeypatch.setattr(boostplug._memory, "available_memory", lambda: 100)
    with pytest.raises(ValueError, match=r"reads_module: query 1 \(7 documents, padded to 8, hessian='constant'\) "
                                         r"would need at least [\d,]+ bytes, more than the 100 bytes of memory"):
        ReadsModule(LABELS, PTR, hessian="constant").grad_hess(SCORES)


class _LongQueriesPadded(JaxLoss):
    """Reads the padded length where a query has more than 10 documents: the first gradient's padding check (the first
    query of two labels or more, of 3 documents in the contract's data) cannot see it."""

    name = "long_queries_padded"
    summary = "depends on the padding of long queries only"
    shift_invariant = False

    @staticmethod
    def query_loss(s, y, mask):
        scale = jnp.where(jnp.sum(mask) > 10, s.shape[0] / 10.0, 1.0)
        return scale * jnp.sum(jnp.where(mask, jnp.log1p(jnp.exp(y - s)), 0.0))


def test_the_contract_checks_the_batch_against_each_query_alone() -> None:
    """check_objective compared a JaxLoss's gradients with finite differences through the same batch, on queries of at
    most 8 documents: a batch that differs from the query's own jax.grad (here: on queries beyond 10 documents) passed."""
    with pytest.raises(ContractError, match=r"(?s)batch_against_query.*query \d+ \(1[1-9] documents"):
        check_objective(_LongQueriesPadded)
    check_objective("st_listnet", checks=["batch_against_query"])  # keyed: the query's own key alone too
