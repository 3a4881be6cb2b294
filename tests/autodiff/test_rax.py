"""from_rax: a rax loss as a JaxLoss gives rax's own jax.grad on each query (padding masked), passes
the contract checks, pickles by reference, and refuses bad arguments naming them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

jax = pytest.importorskip("jax")
rax = pytest.importorskip("rax")

import jax.numpy as jnp  # noqa: E402

from boostplug.autodiff import from_rax  # noqa: E402
from boostplug.autodiff._jax import float64  # noqa: E402
from boostplug.autodiff.loss import bucket_length  # noqa: E402
from boostplug.objectives import Param  # noqa: E402

RaxListMLE = from_rax(rax.listmle_loss, name="rax_listmle", kwargs={"reduce_fn": jnp.sum})
RaxApproxAP = from_rax(rax.approx_t12n(rax.ap_metric), name="rax_approx_ap")
RaxLambda = from_rax(rax.pairwise_logistic_loss, name="rax_dcg_lambda",
                     kwargs={"lambdaweight_fn": rax.dcg_lambdaweight})
RaxPoly1 = from_rax(rax.poly1_softmax_loss, name="rax_poly1",
                    params={"epsilon": Param(1.0, "real", "poly-1's epsilon", low=-1.0, high=10.0)})


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    group_ptr = np.array([0, 3, 12, 21, 38], dtype=np.int64)
    return rng.integers(0, 4, size=38).astype(float), group_ptr, rng.normal(size=38)


@pytest.mark.slow  # compiles each loss's exact mode for three buckets, and rax's unjitted gradients per query
@pytest.mark.parametrize("cls, kwargs", [
    (RaxListMLE, {"reduce_fn": jnp.sum}), (RaxApproxAP, {}),
    (RaxLambda, {"lambdaweight_fn": rax.dcg_lambdaweight}), (RaxPoly1, {"epsilon": 2.5}),
], ids=lambda c: getattr(c, "name", ""))
def test_the_gradient_is_rax_own_jax_grad_of_the_unpadded_query(cls, kwargs, data) -> None:
    """rax's own value and gradient of each query alone (unpadded), although the base pads it to its
    bucket's length; the exact Hessian diagonal rax's ``jax.hessian``'s."""
    labels, group_ptr, scores = data
    loss_fn = cls.query_loss.args[0]
    params = {k: v for k, v in kwargs.items() if k in cls.params}
    g, h = cls(labels, group_ptr, hessian="exact", **params)._grad_hess(scores)
    with float64():
        for a, b in zip(group_ptr[:-1], group_ptr[1:]):
            def query(s):
                return loss_fn(s, jnp.asarray(labels[a:b]), **kwargs)
            s = jnp.asarray(scores[a:b])
            np.testing.assert_allclose(g[a:b], np.asarray(jax.grad(query)(s)), rtol=1e-12, atol=1e-15)
            alone = cls(labels[a:b], np.array([0, b - a]), **params).loss(scores[a:b])
            assert alone == pytest.approx(float(query(s)), rel=1e-12, abs=1e-14)
            if b - a == 3:  # one query's Hessian: unjitted, jax.hessian is slow
                np.testing.assert_allclose(h[a:b], np.diag(np.asarray(jax.hessian(query)(s))), rtol=1e-10, atol=1e-14)


@pytest.mark.slow
def test_padding_changes_nothing_for_a_loss_that_masks_it(data) -> None:
    """rax's ListMLE of a query padded to 8, 16 or 32 documents is its loss unpadded."""
    labels, group_ptr, scores = data
    mine = RaxListMLE(labels, group_ptr)
    with float64():
        for a, b in zip(group_ptr[:-1], group_ptr[1:]):
            alone = float(rax.listmle_loss(jnp.asarray(scores[a:b]), jnp.asarray(labels[a:b]), reduce_fn=jnp.sum))
            assert RaxListMLE(labels[a:b], np.array([0, b - a])).loss(scores[a:b]) == pytest.approx(alone, rel=1e-12)
    assert mine.loss(scores) > 0


def test_rax_approx_ap_is_the_negative_metric(data) -> None:
    labels, group_ptr, scores = data
    mine = RaxApproxAP(labels[:12], np.array([0, 12]))
    with float64():
        metric = float(rax.approx_t12n(rax.ap_metric)(jnp.asarray(scores[:12]), jnp.asarray(labels[:12])))
    assert mine.loss(scores[:12]) == pytest.approx(metric, rel=1e-12) and metric < 0


@pytest.mark.slow
def test_a_rax_loss_passes_the_contract_checks() -> None:
    from boostplug.testing import check_objective

    assert check_objective(RaxListMLE)


def test_a_rax_class_pickles_by_reference(data) -> None:
    labels, group_ptr, scores = data
    again = pickle.loads(pickle.dumps(RaxPoly1))
    assert again is RaxPoly1
    obj = pickle.loads(pickle.dumps(RaxPoly1(labels, group_ptr, epsilon=2.0)))
    np.testing.assert_array_equal(obj.grad_hess(scores)[0], RaxPoly1(labels, group_ptr, epsilon=2.0).grad_hess(scores)[0])


def test_a_pickle_written_under_the_former_class_path_is_refused_naming_the_new_one() -> None:
    module, name = RaxPoly1.__module__.encode(), b"made.RaxPoly1"  # protocol 4's STACK_GLOBAL of module, name
    old = b"\x80\x04\x8c" + bytes([len(module)]) + module + b"\x8c" + bytes([len(name)]) + name + b"\x93."
    with pytest.raises(pickle.UnpicklingError, match=r"boostplug\.autodiff\._rax\.made\.<class>: a from_rax class "
                       r"pickled under its former path; .*boostplug\.autodiff\._rax\.from_rax_classes\.<class>"):
        pickle.loads(old)
    with pytest.raises(AttributeError, match="othr"):
        pickle.loads(old.replace(b"made.RaxPoly1", b"othr.RaxPoly1"))


@pytest.mark.parametrize("call, error, match", [
    (lambda: from_rax("listmle", name="x"), TypeError, "loss_fn must be a rax loss function, got 'listmle'"),
    (lambda: from_rax(rax.listmle_loss, name="Bad Name"), ValueError, "got 'Bad Name'"),
    (lambda: from_rax(rax.listmle_loss, name="x", params={"epsilon": 1.0}), TypeError, r"params\['epsilon'\]"),
    (lambda: from_rax(rax.listmle_loss, name="x", params=[1]), TypeError, "params must be a dict"),
    (lambda: from_rax(rax.listmle_loss, name="x", kwargs={"where": None}), ValueError, r"\['where'\] given twice"),
])
def test_bad_arguments_are_refused_naming_them(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_a_declared_parameter_out_of_range_is_refused(data) -> None:
    labels, group_ptr, _ = data
    with pytest.raises(ValueError, match="rax_poly1: epsilon"):
        RaxPoly1(labels, group_ptr, epsilon=50.0)
