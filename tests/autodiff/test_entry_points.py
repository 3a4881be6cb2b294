"""A JaxLoss trains through every entry point: lgb.train and xgb.train through the adapters, the
scikit-learn rankers, saved-model records, ``compare --import``; it pickles (the class by
reference, no compiled function on the instance); a bad class is refused naming what is wrong."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")

import lightgbm as lgb  # noqa: E402
import xgboost as xgb  # noqa: E402

from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import objectives  # noqa: E402
from boostplug import xgboost as bpx  # noqa: E402
from boostplug.autodiff import JaxLoss  # noqa: E402
from boostplug.data import make_ranking  # noqa: E402
from boostplug.objectives import Param  # noqa: E402

from .losses import JaxListNet, JaxRankNet  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def train():
    return make_ranking(n_queries=12, docs_per_query=(3, 12), n_features=5, seed=0)


def test_lgb_train_and_xgb_train_through_the_adapters(train) -> None:
    params = {"objective": bpl.objective(JaxRankNet, sigma=2.0), "metric": "None", "verbose": -1,
              "min_data_in_leaf": 2}
    booster = lgb.train(params, bpl.dataset(train.X, train.y, qid=train.qid), 3)
    assert np.ptp(booster.predict(train.X)) > 0
    xbooster = xgb.train(bpx.params(), bpx.dmatrix(train.X, train.y, qid=train.qid), 3,
                         obj=bpx.objective(JaxRankNet, hessian="exact"))
    assert np.ptp(xbooster.predict(xgb.DMatrix(train.X))) > 0


def test_approx_ap_through_the_rankers_and_the_saved_model_record(train, tmp_path) -> None:
    ranker = bpl.LGBMRanker(objective="approx_ap", alpha=2.0, n_estimators=3, min_child_samples=2, verbose=-1)
    ranker.fit(train.X, train.y, qid=train.qid)
    assert np.ptp(ranker.predict(train.X)) > 0
    bpx.XGBRanker(objective="approx_ap", n_estimators=2).fit(train.X, train.y, qid=train.qid)
    objective = bpl.objective("approx_ap", alpha=2.0)
    booster = lgb.train({"objective": objective, "verbose": -1, "min_data_in_leaf": 2},
                        bpl.dataset(train.X, train.y, qid=train.qid), 2)
    bpl.save_model(booster, tmp_path / "model.txt", objective=objective)
    record = bpl.objective_of(tmp_path / "model.txt")
    assert record.name == "approx_ap" and record.params_with()["alpha"] == 2.0


def test_an_instance_pickles_and_computes_the_same(train) -> None:
    from boostplug.groups import group_ptr_from_qid

    gp = group_ptr_from_qid(train.qid)
    loss = JaxListNet(train.y, gp, weights=np.linspace(0.5, 2.0, gp.size - 1))
    scores = np.random.default_rng(0).normal(size=train.y.size)
    loss.grad_hess(scores)
    again = pickle.loads(pickle.dumps(loss))
    assert type(again) is JaxListNet
    for _ in range(2):  # the copy goes on with the same rounds: the stochastic Hessian's probes too
        g, h = loss.grad_hess(scores)
        g2, h2 = again.grad_hess(scores)
        np.testing.assert_array_equal(g2, g)
        np.testing.assert_array_equal(h2, h)


def test_compare_import_lists_a_jax_loss(tmp_path) -> None:
    plugin = tmp_path / "my_losses.py"
    plugin.write_text(textwrap.dedent("""
        from boostplug import objectives
        from tests.autodiff.losses import JaxListNet
        objectives.register(JaxListNet)
    """))
    out = subprocess.run([sys.executable, "-m", "boostplug.cli", "compare", "--import", str(plugin), "--methods",
                          "list"], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert "jax_listnet" in out.stdout and "approx_ap" in out.stdout


def _class(name: str, body: dict):
    return type("Bad", (JaxLoss,), {"name": name, "summary": "bad", **body})


@pytest.mark.parametrize("body, error, match", [
    ({"query_loss": lambda s, y, m: 0.0}, TypeError, r"query_loss must be a @staticmethod.*got <function"),
    ({"query_loss": staticmethod(lambda s, y: 0.0)}, TypeError, r"take \(scores, labels, mask\).*3 arguments"),
    ({"params": {"a": Param(1.0)}, "query_loss": staticmethod(lambda s, y, m: 0.0)}, TypeError,
     r"declared parameters \['a'\] in order \(4 arguments\)"),
    ({"query_loss": staticmethod(3)}, TypeError, r"query_loss must be a @staticmethod.*\(a callable\), got <staticmethod"),
], ids=["not static", "too few arguments", "parameter not taken", "not callable"])
def test_a_bad_class_is_refused_naming_what_is_wrong(body, error, match) -> None:
    with pytest.raises(error, match=match):
        _class("bad_jax", body)


def test_a_parameter_value_out_of_range_names_it() -> None:
    with pytest.raises(ValueError, match=r"approx_ap: alpha must be .* got 10000.0"):
        objectives.get("approx_ap").check({"alpha": 1e4})


def test_the_users_jax_settings_are_left_as_they_were(train) -> None:
    import jax
    import jax.numpy as jnp

    from boostplug.groups import group_ptr_from_qid

    before = bool(jax.config.jax_enable_x64)
    g, _ = JaxRankNet(train.y, group_ptr_from_qid(train.qid)).grad_hess(np.zeros(train.y.size) + 0.5)
    assert g.dtype == np.float64 and np.abs(g).max() > 0
    assert bool(jax.config.jax_enable_x64) == before
    assert jnp.zeros(1).dtype == (jnp.float64 if before else jnp.float32)
