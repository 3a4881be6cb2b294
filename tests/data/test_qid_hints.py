"""A ``qid`` whose queries are not contiguous: each function that takes ``qid`` and no ``regroup``
names itself and says how to put the rows in query order for it (the recipe works), instead of
suggesting ``regroup=True``, which only :func:`boostplug.groups.group_ptr_from_qid` takes."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.groups import group_ptr_from_qid

rng = np.random.default_rng(0)
N = 60
X = rng.normal(size=(N, 3))
Y = rng.integers(0, 3, N).astype(float)
QID = np.repeat([3, 1, 2, 3, 4, 1], 10)  # 3 and 1 come back after other queries


def _lgb_dataset(X, y, qid):
    from boostplug import lightgbm as bpl

    return bpl.dataset(X, y, qid=qid).construct()


def _xgb_dmatrix(X, y, qid):
    from boostplug import xgboost as bpx

    return bpx.dmatrix(X, y, qid=qid)


def _lgb_ranker(X, y, qid):
    from boostplug.lightgbm import LGBMRanker

    return LGBMRanker(objective="qbrank", n_estimators=2, min_child_samples=2, verbose=-1).fit(X, y, qid=qid)


def _xgb_ranker(X, y, qid):
    from boostplug.xgboost import XGBRanker

    return XGBRanker(objective="qbrank", n_estimators=2).fit(X, y, qid=qid)


def _rankboost(X, y, qid):
    from boostplug.boosters import RankBoost

    return RankBoost(n_rounds=2).fit(X, y, qid=qid)


def _ranking_data(X, y, qid):
    from boostplug.data import RankingData

    return RankingData(X, y, qid=qid)


def _metric(X, y, qid):
    from boostplug import metrics

    return metrics.ndcg(X[:, 0], y, qid=qid)


CALLERS = {
    "boostplug.lightgbm.dataset()": _lgb_dataset, "boostplug.xgboost.dmatrix()": _xgb_dmatrix,
    "LGBMRanker.fit": _lgb_ranker, "XGBRanker.fit": _xgb_ranker, "RankBoost.fit": _rankboost,
    "RankingData": _ranking_data, "boostplug's metrics": _metric,
}


@pytest.mark.parametrize("caller", list(CALLERS))
def test_each_caller_says_what_it_takes_and_the_recipe_works(caller: str) -> None:
    call = CALLERS[caller]
    with pytest.raises(ValueError) as info:
        call(X, Y, QID)
    message = str(info.value)
    assert message.startswith("qid 3 is not contiguous: its rows start at row 0 and it appears again at row 30")
    assert f"For {caller}, each query's rows must be adjacent" in message
    assert "pass regroup=True" not in message  # the caller takes no regroup
    # the recipe the message gives works for the caller
    assert "order = boostplug.groups.group_ptr_from_qid(qid, regroup=True).permutation" in message
    order = group_ptr_from_qid(QID, regroup=True).permutation
    call(X[order], Y[order], QID[order])


def test_group_ptr_from_qid_itself_still_offers_regroup() -> None:
    with pytest.raises(ValueError, match=r"qid 3 is not contiguous.*or pass regroup=True to get the permutation"):
        group_ptr_from_qid(QID)
