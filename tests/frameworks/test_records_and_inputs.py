"""Records and inputs: LightGBM positions that are not int32 integers are refused naming the value;
model files with a NaN or infinite leaf are refused on load (with or without boostplug's checksum);
a saved objective record names the objective the last rounds were trained with, or the save refuses."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import lightgbm as bpl

lgb = pytest.importorskip("lightgbm")


def _data(n_queries: int = 6, per: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = n_queries * per
    return rng.normal(size=(n, 3)), rng.integers(0, 3, n).astype(float), np.arange(0, n + 1, per)


@pytest.mark.parametrize("bad, shown", [
    (np.nan, "nan"), (0.5, "0.5"), (-1, "-1"), (2**40 + 3, str(2**40 + 3)), (float(2**40 + 3), repr(float(2**40 + 3))),
    ("a", "'a'"),
])
def test_dataset_refuses_positions_that_are_not_int32_integers(bad, shown) -> None:
    X, y, gp = _data()
    position = np.arange(len(y)) % 5
    position = position.astype(object if isinstance(bad, str) else type(bad) if isinstance(bad, float) else np.int64)
    position[7] = bad
    with pytest.raises(ValueError, match=rf"position must hold non-negative integers within int32.*row 7 has "
                                         rf"{__import__('re').escape(shown)}"):
        bpl.dataset(X, y, group_ptr=gp, position=position)


def test_dataset_takes_integer_positions() -> None:
    X, y, gp = _data()
    position = (np.arange(len(y)) % 5).astype(float)   # whole floats: the positions they are
    ds = bpl.dataset(X, y, group_ptr=gp, position=position).construct()
    np.testing.assert_array_equal(ds.get_position(), np.arange(len(y)) % 5)
