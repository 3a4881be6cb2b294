"""A booster given a feature that is not a number names the column: by its name in a pandas
DataFrame, by its index in an array, with a value it holds."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.boosters import AdaRank, RankBoost

pd = pytest.importorskip("pandas")

rng = np.random.default_rng(0)
N = 24
QID = np.repeat(np.arange(6), 4)
Y = rng.integers(0, 3, N).astype(float)
FRAME = pd.DataFrame({"bm25": rng.normal(size=N), "site": ["a", "b", "c"] * 8, "clicks": rng.normal(size=N)})


@pytest.mark.parametrize("booster", [RankBoost, AdaRank])
def test_dataframe_column_is_named(booster) -> None:
    with pytest.raises(TypeError) as info:
        booster(n_rounds=2).fit(FRAME, Y, qid=QID)
    message = str(info.value)
    assert message.startswith("X must be numeric: column 'site' has dtype ") and "(e.g. 'a' in row 0)" in message
    as_category = FRAME.assign(site=FRAME["site"].astype("category"))
    with pytest.raises(TypeError, match=r"X must be numeric: column 'site' has dtype category \(e\.g\. 'a' in row 0\)"):
        booster(n_rounds=2).fit(as_category, Y, qid=QID)
    # encoded as the message says, it trains
    booster(n_rounds=2).fit(as_category.assign(site=as_category["site"].cat.codes), Y, qid=QID)


def test_array_column_is_named_by_its_index() -> None:
    X = rng.normal(size=(N, 3)).astype(object)
    X[5, 2] = "n/a"
    with pytest.raises(TypeError, match=r"X must be numeric, got dtype object: column 2 is not numeric "
                                        r"\(e\.g\. 'n/a' in row 5\); encode it as numbers or drop it"):
        RankBoost(n_rounds=2).fit(X, Y, qid=QID)
    model = RankBoost(n_rounds=2).fit(rng.normal(size=(N, 3)), Y, qid=QID)
    with pytest.raises(TypeError, match=r"column 2 is not numeric \(e\.g\. 'n/a' in row 5\)"):
        model.predict(X)
