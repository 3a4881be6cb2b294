"""``bpl.objective``/``bpx.objective`` handed to a scikit-learn model of the framework: called with
arrays instead of a Dataset/DMatrix, they say which ranker takes the objective instead."""

from __future__ import annotations

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import xgboost as bpx  # noqa: E402

rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3))
Y = rng.integers(0, 3, 200).astype(float)
GROUP = [20] * 10


def test_lightgbm_objective_in_lgb_ranker_points_to_the_rankers() -> None:
    ranker = lgb.LGBMRanker(objective=bpl.objective("qbrank", tau=1.0), n_estimators=2, verbose=-1)
    with pytest.raises(TypeError) as info:
        ranker.fit(X, Y, group=GROUP)
    message = str(info.value)
    assert message.startswith("boostplug.lightgbm.objective('qbrank') is for lgb.train/lgb.cv, which hand it an "
                              "lgb.Dataset, and got ndarray")
    assert "boostplug.lightgbm.LGBMRanker(objective='qbrank', ...)" in message
    assert "lgb.LGBMRanker(objective=boostplug.lightgbm.sklearn_objective('qbrank', ...))" in message
    # what it points to trains
    lgb.LGBMRanker(objective=bpl.sklearn_objective("qbrank", threads=1), n_estimators=2, verbose=-1).fit(
        X, Y, group=GROUP)


def test_xgboost_objective_called_the_sklearn_way_points_to_the_ranker() -> None:
    with pytest.raises(TypeError) as info:
        xgb.XGBRegressor(objective=bpx.objective("qbrank"), n_estimators=2).fit(X, Y)
    message = str(info.value)
    assert message.startswith("boostplug.xgboost.objective('qbrank') is for xgb.train/xgb.cv (obj=), which hand it "
                              "a DMatrix, and got ndarray")
    assert message.endswith("use boostplug.xgboost.XGBRanker(objective='qbrank', ...)")


def test_xgb_ranker_refuses_the_callable_before_it_runs_so_the_docstring_says_it() -> None:
    """XGBRanker raises in its constructor for any callable objective: nothing of boostplug's
    runs, so the pitfall is documented on the objective instead."""
    with pytest.raises(ValueError, match="custom objective function not supported by XGBRanker"):
        xgb.XGBRanker(objective=bpx.objective("qbrank"))
    doc = " ".join(bpx.objective.__doc__.split())
    assert "``xgb.XGBRanker(objective=...)`` refuses any callable" in doc
    assert "boostplug.xgboost.XGBRanker(objective=name, **params)" in doc
