"""Whole queries per partition: built by repartition_by_query, verified by check_partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from boostplug.spark import check_partitions, repartition_by_query, train_xgboost


def _df(spark, qids):
    return spark.createDataFrame(pd.DataFrame({"qid": np.asarray(qids), "x": np.arange(len(qids), dtype=float),
                                               "label": np.zeros(len(qids))}))


def test_repartition_keeps_queries_whole_and_rows_in_order(spark):
    rng = np.random.default_rng(0)
    qids = rng.integers(0, 30, size=300)  # each query's rows scattered over the input
    out = repartition_by_query(_df(spark, qids), "qid", 2)
    layout = check_partitions(out, "qid")
    assert layout.n_partitions == 2 and layout.n_queries == len(set(qids.tolist()))
    assert layout.rows_per_partition.sum() == 300
    np.testing.assert_array_equal(layout.rows_in_group(), layout.rows_per_partition)  # no group columns
    parts = out.rdd.glom().collect()
    # grouped by the parity of the query id: each partition's rows per group, from the check's one pass
    odd = out.withColumn("odd", (out["qid"] % 2).cast("int"))
    laid = repartition_by_query(odd, "qid", 2, group_cols=["odd"]).persist()
    grouped = check_partitions(laid, "qid", group_cols=["odd"])
    counted = np.array([np.bincount([r["odd"] for r in part], minlength=2) for part in laid.rdd.glom().collect()])
    laid.unpersist()
    for g in (0, 1):
        np.testing.assert_array_equal(grouped.rows_in_group(g), counted[:, g])
    assert counted.sum() == 300 and grouped.rows_in_group(7).sum() == 0
    for part in parts:
        q = np.array([r["qid"] for r in part])
        x = np.array([r["x"] for r in part])
        assert np.all(np.diff(q) >= 0)  # contiguous
        for v in np.unique(q):
            assert np.all(np.diff(x[q == v]) > 0)  # the input's order inside each query


def test_a_split_query_is_refused_by_name(spark):
    split = _df(spark, [4, 4, 7, 7, 9, 9, 7]).coalesce(1)  # query 7 twice, apart, in one partition
    with pytest.raises(ValueError, match=r"query 7 \(column 'qid'\) is split: its rows lie in two separate runs"):
        check_partitions(split, "qid")
    two = _df(spark, [1, 1, 2]).union(_df(spark, [2, 3]))  # query 2 in partitions of both inputs
    assert two.rdd.getNumPartitions() >= 2
    with pytest.raises(ValueError, match=r"query 2 \(column 'qid'\) is split: its rows lie in partitions"):
        check_partitions(two.coalesce(2), "qid")


def test_training_refuses_split_input_when_told_not_to_repartition(spark):
    pdf = pd.DataFrame({"qid": [1, 1, 2, 2, 1], "f": [0.0, 1.0, 0.0, 1.0, 0.5], "label": [0.0, 1, 0, 1, 2]})
    df = spark.createDataFrame(pdf).coalesce(1)
    with pytest.raises(ValueError, match="query 1 .* is split"):
        train_xgboost(df, "mpboost", feature_cols=["f"], repartition=False, num_boost_round=2)


def test_repartition_false_trains_one_worker_per_partition(spark):
    # num_workers other than the kept partitions' count was ignored (and the slot check tested it, not them)
    pdf = pd.DataFrame({"qid": [1, 1, 2, 2], "f": [0.0, 1.0, 0.0, 1.0], "label": [0.0, 1, 0, 1]})
    df = spark.createDataFrame(pdf).coalesce(1)
    with pytest.raises(ValueError, match=r"repartition=False trains one worker per partition of the frame \(1\), "
                                         r"not num_workers=2"):
        train_xgboost(df, "mpboost", feature_cols=["f"], repartition=False, num_workers=2, num_boost_round=2)


def test_bad_arguments(spark):
    with pytest.raises(ValueError, match="num_partitions must be an integer >= 1, got 0"):
        repartition_by_query(_df(spark, [1]), "qid", 0)
    with pytest.raises(ValueError, match="no column 'query'"):
        check_partitions(_df(spark, [1]), "query")


def test_workers_without_training_rows_or_slots_are_refused_before_training(spark):
    pdf = pd.DataFrame({"qid": [1, 1, 2, 2], "f": [0.0, 1.0, 0.0, 1.0], "label": [0.0, 1, 0, 1]})
    valid = spark.createDataFrame(pdf.assign(qid=[3, 3, 4, 4]))  # range cut at 2|3: one worker, validation only
    with pytest.raises(ValueError, match="holds no training rows, and every worker must train on some queries; "
                                         "the data has 4 queries"):
        train_xgboost(spark.createDataFrame(pdf), "mpboost", feature_cols=["f"], num_workers=2, num_boost_round=2,
                      valid_df=valid)
    with pytest.raises(ValueError, match="num_workers=3 barrier tasks must all run at once, but Spark's default "
                                         "parallelism .its task slots. is 2"):
        train_xgboost(spark.createDataFrame(pdf), "mpboost", feature_cols=["f"], num_workers=3)
