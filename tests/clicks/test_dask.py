"""Click logs as Dask DataFrames: partitions holding whole sessions give the in-memory
preferences; a session split across partitions is refused by name; bad impressions of any
partition raise (naming it) or are counted in one report."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug import clicks
from tests.clicks._logs import _with, random_log, same

dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.fixture
def frame(rng: np.random.Generator):
    log = random_log(rng, n_sessions=80)
    return log, pd.DataFrame(log)


def test_partitions_of_whole_sessions_agree(frame) -> None:
    log, df = frame
    ref = clicks.preferences(log, "all")
    ddf = dd.from_pandas(df, npartitions=4).shuffle(on="session", npartitions=3)
    assert ddf.npartitions == 3
    same(ref, clicks.preferences(ddf, "all"))
    same(clicks.preferences(log, weight="wilson", confidence=0.6),
         clicks.preferences(ddf, weight="wilson", confidence=0.6))


def test_a_session_split_across_partitions_is_refused(frame) -> None:
    _, df = frame
    ordered = df.sort_values("session", kind="stable").reset_index(drop=True)
    ddf = dd.from_pandas(ordered, npartitions=5, sort=False)
    sizes = ddf.map_partitions(len).compute().tolist()
    first_of_second = ordered["session"].iloc[sizes[0]]
    assert ordered["session"].iloc[sizes[0] - 1] == first_of_second, "the split must cut a session"
    with pytest.raises(ValueError, match=rf"session '{first_of_second}' lies in partitions 0 and 1"):
        clicks.preferences(ddf, "all")


def test_bad_impressions_in_partitions() -> None:
    df = pd.DataFrame(_with(position={2: 4, 6: 3}))
    ddf = dd.from_pandas(df, npartitions=1)
    with pytest.raises(ValueError, match=r"partition 0 .*session '?1'?, query 'a'.*positions must be 1\.\.n"):
        clicks.preferences(ddf)
    with pytest.warns(UserWarning, match="dropped 2 impressions and 5 rows"):
        prefs = clicks.preferences(ddf, on_bad="skip")
    assert prefs.dropped.n_impressions == 2 and prefs.n_impressions == 1
    with pytest.raises(ValueError, match="need the time or order of each click"):
        clicks.preferences(ddf.drop(columns=["order"]), "click>earlier-click")
    with pytest.raises(TypeError, match="read_log reads a log into memory"):
        clicks.read_log(ddf)


@pytest.mark.parametrize("rows", [slice(0, 0), slice(0, 1), slice(0, None)], ids=["empty", "one row", "whole"])
@pytest.mark.parametrize("npartitions", [1, 2, 3])
def test_partitions_without_pairs_give_the_pandas_table(rows: slice, npartitions: int) -> None:
    # session 1 has a click, sessions 2 and 3 none: the later partitions make no pair
    df = pd.DataFrame({"session": [1, 1, 2, 2, 3, 3], "query": [7] * 6, "doc": [10, 11, 10, 11, 10, 11],
                       "position": [1, 2, 1, 2, 1, 2], "clicked": [0, 1, 0, 0, 0, 0]}).iloc[rows]
    ddf = dd.from_pandas(df.set_index(df["session"].rename(None)), npartitions=npartitions)  # sessions whole
    ref = clicks.preferences(df, "click>skip-above")
    got = clicks.preferences(ddf, "click>skip-above")
    same(ref, got)
    assert got.n_impressions == ref.n_impressions
    assert len(ref) == (1 if len(df) > 2 else 0)
