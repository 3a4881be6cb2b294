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


def test_qbrank_on_click_pairs_and_labels_trained_on_spark_equals_one_process(spark):
    """QBRank's P ∪ L end to end on Spark: click preferences counted from a Spark log, joined to
    the feature rows on each worker by (query, document) keys, judged labels beside them."""
    import xgboost as xgb

    from boostplug import xgboost as bpx
    from boostplug.spark import train_xgboost

    data = make_ranking(n_queries=30, docs_per_query=(4, 10), n_features=5, n_informative=3, seed=7)
    data.X[:] = np.round(data.X, 1)
    doc = np.arange(data.n_docs)  # the log names documents by their row
    log = clicks.simulate(data, scores=np.zeros(data.n_docs), n_sessions=400, seed=2).to_pandas()
    pairs = clicks.preferences(spark.createDataFrame(log)).keyed()
    assert pairs.n_pairs > 20
    kw = {"pairs": pairs, "w": 0.5}
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1}
    df = spark.createDataFrame(pd.DataFrame({**{f"f{j}": data.X[:, j] for j in range(data.X.shape[1])},
                                             "label": data.y, "qid": data.qid, "doc": doc}))
    booster = train_xgboost(df, "qbrank", objective_params=kw, params=params, num_boost_round=10, doc_col="doc",
                            feature_cols=[f"f{j}" for j in range(data.X.shape[1])], num_workers=2)
    # the model records its objective, the click pairs by their fingerprint
    rec = bpx.objective_of(booster)
    assert rec.name == "qbrank" and rec.params_with(pairs=pairs)["pairs"] is pairs
    ref = xgb.train(bpx.params(**params), bpx.dmatrix(data.X, data.y, qid=data.qid, doc=doc), 10,
                    obj=bpx.objective("qbrank", **kw))
    X = xgb.DMatrix(data.X)
    np.testing.assert_allclose(booster.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)


def test_qbrank_p_union_separate_labeled_set_trained_on_spark_equals_one_process(spark, click_pl):
    """P ∪ L with its own judged queries: the click rows' labels are never read (label_pairs=False),
    the judged rows (objective_cols' boolean column) are the squared-error term on each worker."""
    import xgboost as xgb

    from boostplug import xgboost as bpx
    from boostplug.spark import train_xgboost

    df, kw, ts = click_pl
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1}
    feats = [f"f{j}" for j in range(ts.X.shape[1])]
    booster = train_xgboost(df, "qbrank", objective_params=kw, params=params, num_boost_round=10, doc_col="doc",
                            objective_cols={"labeled_rows": "judged"}, feature_cols=feats, num_workers=2)
    one = ts.qbrank_params(w=0.5)
    assert one["label_pairs"] is False and one["labeled_rows"].size == ts.X.shape[0] - ts.n_click_rows
    ref = xgb.train(bpx.params(**params), bpx.dmatrix(ts.X, ts.y, group_ptr=ts.group_ptr), 10,
                    obj=bpx.objective("qbrank", **one))
    X = xgb.DMatrix(ts.X)
    np.testing.assert_allclose(booster.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)
    # without the judged rows' squared error (labeled="none"), the model is another one: the column counts
    pairs_only = xgb.train(bpx.params(**params), bpx.dmatrix(ts.X, ts.y, group_ptr=ts.group_ptr), 10,
                           obj=bpx.objective("qbrank", **{**one, "labeled_rows": None, "labeled": "none"}))
    assert np.abs(pairs_only.predict(X) - ref.predict(X)).max() > 1e-2


def test_objective_cols_refusals(spark, click_pl):
    from boostplug.spark import train_xgboost

    df, kw, _ = click_pl
    feats = [f"f{j}" for j in range(5)]
    with pytest.raises(ValueError, match=r"objective_cols\['w'\]: a column gives a set of rows, for the row-set "
                                         r"parameters of 'qbrank' \(\['labeled_rows'\]\); 'w' is of kind 'real'"):
        train_xgboost(df, "qbrank", objective_params=kw, doc_col="doc", objective_cols={"w": "judged"},
                      feature_cols=feats)
    with pytest.raises(ValueError, match="'labeled_rows' is given both in objective_params and in objective_cols"):
        train_xgboost(df, "qbrank", objective_params={**kw, "labeled_rows": [0]}, doc_col="doc",
                      objective_cols={"labeled_rows": "judged"}, feature_cols=feats)
    with pytest.raises(TypeError, match="column 'qid' marks a set of rows and must be boolean, got bigint"):
        train_xgboost(df, "qbrank", objective_params=kw, doc_col="doc", objective_cols={"labeled_rows": "qid"},
                      feature_cols=feats)
