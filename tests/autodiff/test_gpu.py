"""On a GPU (skipped elsewhere): a JaxLoss's gradients computed on the device reach XGBoost's
``device="cuda"`` training through DLPack, without a host copy, and equal the CPU's."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")


def _gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


@pytest.mark.skipif(not _gpu(), reason="no GPU (jax sees no gpu device)")
def test_gradients_on_the_gpu_equal_the_cpu_ones_and_reach_xgboost_without_a_host_copy() -> None:
    cupy = pytest.importorskip("cupy")
    import jax.numpy as jnp
    import xgboost as xgb

    from boostplug.autodiff._jax import compiled, float64

    from .losses import JaxApproxNDCG

    rng = np.random.default_rng(0)
    S, Y = rng.normal(size=(4, 8)), rng.integers(0, 3, size=(4, 8)).astype(float)
    M, W = np.ones((4, 8), dtype=bool), np.ones(4)
    fn = compiled(JaxApproxNDCG.query_loss, (), False, "JaxApproxNDCG.query_loss")("exact_abs")
    with float64():
        Z, K = np.zeros((4, 0)), np.zeros((4, 2), dtype=np.uint32)
        cpu = [np.asarray(a) for a in fn(S, Y, M, W, Z, K, 1.0)]
        on_gpu = [jax.device_put(a, jax.devices("gpu")[0]) for a in (S, Y, M, W, Z, K)]
        g, h = fn(*on_gpu, jnp.float64(1.0))
    assert g.devices() == {jax.devices("gpu")[0]}
    grad, hess = cupy.from_dlpack(g).ravel(), cupy.from_dlpack(h).ravel()  # views of the device buffers
    np.testing.assert_allclose(cupy.asnumpy(grad), cpu[0].ravel(), rtol=1e-10)
    X = cupy.asarray(rng.normal(size=(32, 3)))
    dtrain = xgb.DMatrix(X, label=cupy.asarray(Y.ravel()), qid=np.repeat(np.arange(4), 8))
    booster = xgb.Booster({"device": "cuda", "tree_method": "hist"}, [dtrain])
    booster.boost(dtrain, 0, grad=grad, hess=hess)  # XGBoost takes cupy gradients on the device
    assert booster.num_boosted_rounds() == 1
