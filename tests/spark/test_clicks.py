"""clicks.preferences of a Spark DataFrame: the same table as of the same log in memory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from boostplug import clicks
from boostplug.data import make_ranking


@pytest.fixture(scope="module")
def log_table():
    data = make_ranking(n_queries=20, docs_per_query=10, seed=0)
    log = clicks.simulate(data, scores=np.zeros(data.n_docs), n_sessions=300, seed=1).to_pandas()
    # Sessions interleaved in the input and a string column: the shuffle must regroup them.
    log["doc"] = "d" + log["doc"].astype(str)
    return log.sample(frac=1.0, random_state=0).sort_values("session", kind="stable").iloc[::-1].reset_index(drop=True)


@pytest.mark.parametrize("kw", [{}, {"strategies": "all", "weight": "wilson", "min_support": 2},
                                {"strategies": "click>skip-above", "weight": "count"}])
def test_spark_log_gives_the_in_memory_table(spark, log_table, kw):
    # Rows of an impression must keep their order; the in-memory reading takes the table as is.
    table = log_table.sort_values(["session", "position"], kind="stable").reset_index(drop=True)
    want = clicks.preferences(table, **kw).to_pandas()
    got = clicks.preferences(spark.createDataFrame(table).repartition(3), **kw).to_pandas()
    assert len(want) > 0
    pd.testing.assert_frame_equal(got, want)


def test_spark_log_refusal_names_the_row_problem(spark, log_table):
    bad = log_table.sort_values(["session", "position"], kind="stable").reset_index(drop=True)
    bad.loc[3, "position"] = 0
    with pytest.raises(ValueError, match="position"):
        clicks.preferences(spark.createDataFrame(bad))
