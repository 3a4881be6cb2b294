"""Sparse feature vectors: a model does not depend on whether Spark stored a row sparse or dense.
LightGBM gets a CSR matrix per partition (never a dense rows x features array; it reads absent
entries as zeros); XGBoost gets dense rows by default (absent entries are zeros), and with
``sparse_missing=True`` the CSR matrix (absent entries missing), training the one-process model
of that matrix."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.spark import predict, train_lightgbm, train_xgboost
from boostplug.spark._barrier import (VALID_COL, X_COL, X_IDX, X_SIZE, Columns, features_matrix, keeps_sparse,
                                      part_arrays)


def _batch(rows):
    """A task's pandas batch of (values, indices or None, size or None) rows."""
    return pd.DataFrame({X_COL: [np.asarray(v, float) for v, _, _ in rows],
                         X_IDX: [None if i is None else np.asarray(i, np.int32) for _, i, _ in rows],
                         X_SIZE: [s for _, _, s in rows]})


def test_sparse_rows_become_csr_with_dense_rows_stored_whole():
    mixed = _batch([([2.0, 5.0], [1, 3], 4), ([0.0, 1.0, 0.0, 7.0], None, None), ([], [], 4)])
    want = [[0, 2, 0, 5], [0, 1, 0, 7], [0, 0, 0, 0]]
    got = features_matrix(mixed, sparse=True)
    assert sp.issparse(got) and got.format == "csr"
    np.testing.assert_array_equal(got.toarray(), want)
    assert got.nnz == 6  # the dense row's zeros are stored: a value there, not an absent entry
    flat = features_matrix(mixed, sparse=False)  # absent entries written as zeros
    assert isinstance(flat, np.ndarray) and flat.dtype == np.float64 and flat.tolist() == want
    for sparse in (True, False):
        dense = features_matrix(_batch([([0.0, 1.0], None, None), ([3.0, 4.0], None, None)]), sparse=sparse)
        assert isinstance(dense, np.ndarray) and dense.tolist() == [[0, 1], [3, 4]]
        with pytest.raises(ValueError, match="^feature vectors of different lengths: 3 and 4 features; every row"):
            features_matrix(_batch([([1.0], [0], 4), ([1.0], [0], 3)]), sparse=sparse)


def test_only_xgboost_reads_absent_entries_as_missing_and_only_when_asked():
    assert keeps_sparse("lightgbm", False) is True
    assert keeps_sparse("xgboost", False) is False
    assert keeps_sparse("xgboost", True) is True
    with pytest.raises(ValueError, match="sparse_missing=True is XGBoost's"):
        keeps_sparse("lightgbm", True)
    with pytest.raises(TypeError, match="sparse_missing must be True or False, got 'yes'"):
        keeps_sparse("xgboost", "yes")


def test_a_wide_sparse_partition_is_handed_to_the_builder_as_csr():
    # a billion features: a dense array of these 3 rows would need 24 GB
    width = 10**9
    pdf = _batch([([1.0], [5], width), ([2.0, 3.0], [7, width - 1], width), ([4.0], [0], width)])
    pdf = pdf.assign(label=[1.0, 0.0, 2.0], qid=[1, 1, 2], **{VALID_COL: [0, 0, 1]})
    train, valid = part_arrays(iter([pdf]), Columns(features_col="features"), sparse=True)
    assert sp.issparse(train.X) and train.X.shape == (2, width) and train.X.nnz == 3
    assert sp.issparse(valid.X) and valid.X.shape == (1, width)
    assert train.X[1, width - 1] == 3.0


@pytest.fixture(scope="module")
def sparse_data(ranking):
    """The test ranking with most features zero (about 70% of the entries)."""
    X = np.where(np.abs(ranking.X) < 1.0, 0.0, ranking.X)
    assert 0.5 < (X == 0).mean() < 0.9
    return X


def _frame(spark, data, X, *, sparse):
    """The rows as vectors stored sparse (``True``), dense (``False``) or, as VectorAssembler does,
    each the smaller way (``"mixed"``: sparse where at least half the entries are zero)."""
    from pyspark.ml.linalg import Vectors

    def vec(row):
        nz = np.flatnonzero(row)
        as_sparse = sparse is True or (sparse == "mixed" and 2 * nz.size <= row.size)
        return Vectors.sparse(len(row), nz.tolist(), row[nz].tolist()) if as_sparse else Vectors.dense(row.tolist())

    rows = [(vec(X[i]), float(data.y[i]), int(data.qid[i]), i) for i in range(X.shape[0])]
    return spark.createDataFrame(rows, ["features", "label", "qid", "row"])


def _scores(df, booster, **kwargs):
    return predict(df, booster, **kwargs).orderBy("row").select("prediction").toPandas()["prediction"].to_numpy()


def test_lightgbm_sparse_frame_trains_the_dense_frames_model(spark, ranking, sparse_data):
    params = {"num_leaves": 7, "learning_rate": 0.2, "min_data_in_leaf": 5, "num_threads": 1, "verbose": -1}
    got = train_lightgbm(_frame(spark, ranking, sparse_data, sparse=True), "mpboost", params=params,
                         num_boost_round=10, num_workers=2)
    want = train_lightgbm(_frame(spark, ranking, sparse_data, sparse=False), "mpboost", params=params,
                          num_boost_round=10, num_workers=2)
    np.testing.assert_allclose(got.predict(sparse_data, raw_score=True), want.predict(sparse_data, raw_score=True),
                               rtol=1e-9, atol=1e-12)
    one = lgb.train({**params, "objective": bpl.objective("mpboost")},
                    bpl.dataset(sp.csr_matrix(sparse_data), ranking.y, qid=ranking.qid), 10)
    assert abs(got.predict(sparse_data).std() - one.predict(sparse_data).std()) < 0.2 * one.predict(sparse_data).std()
    with pytest.raises(ValueError, match="sparse_missing=True is XGBoost's"):
        train_lightgbm(_frame(spark, ranking, sparse_data, sparse=True), "mpboost", sparse_missing=True)


_XGB = {"max_depth": 3, "eta": 0.3, "nthread": 1}


def test_xgboost_model_does_not_depend_on_how_rows_are_stored(spark, ranking, sparse_data):
    # by default an absent entry is a zero: sparse, mixed and dense storage train one model, the
    # one-process model of the dense matrix, and predict scores a sparse-stored row as that model does
    frames = {s: _frame(spark, ranking, sparse_data, sparse=s) for s in (True, "mixed", False)}
    kinds = frames["mixed"].rdd.map(lambda r: type(r.features).__name__).distinct().collect()
    assert sorted(kinds) == ["DenseVector", "SparseVector"]
    boosters = {s: train_xgboost(df, "mpboost", params=_XGB, num_boost_round=10, num_workers=2)
                for s, df in frames.items()}
    dumps = {s: b.get_dump(dump_format="json") for s, b in boosters.items()}
    assert dumps[True] == dumps[False] and dumps["mixed"] == dumps[False]
    ref = xgb.train(bpx.params(**_XGB), bpx.dmatrix(sparse_data, ranking.y, qid=ranking.qid), 10,
                    obj=bpx.objective("mpboost"))
    dense = xgb.DMatrix(sparse_data)
    np.testing.assert_allclose(boosters[True].predict(dense), ref.predict(dense), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_scores(frames[True], boosters[True]), boosters[True].predict(dense, output_margin=True),
                               rtol=1e-6)


def test_xgboost_sparse_missing_equals_one_process_on_the_csr_matrix(spark, ranking, sparse_data):
    # sparse_missing=True: a sparse vector's absent entries are missing, as xgb.DMatrix reads a CSR matrix's
    df = _frame(spark, ranking, sparse_data, sparse=True)
    booster = train_xgboost(df, "mpboost", params=_XGB, num_boost_round=10, num_workers=2, sparse_missing=True)
    csr = sp.csr_matrix(sparse_data)
    ref = xgb.train(bpx.params(**_XGB), bpx.dmatrix(csr, ranking.y, qid=ranking.qid), 10,
                    obj=bpx.objective("mpboost"))
    X = xgb.DMatrix(csr)
    np.testing.assert_allclose(booster.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)
    # the dense reading (zeros as values) is another model
    dense = xgb.train(bpx.params(**_XGB), bpx.dmatrix(sparse_data, ranking.y, qid=ranking.qid), 10,
                      obj=bpx.objective("mpboost"))
    assert np.abs(dense.predict(X) - ref.predict(X)).max() > 1e-3
    np.testing.assert_allclose(_scores(df, booster, sparse_missing=True), booster.predict(X, output_margin=True),
                               rtol=1e-6)
    # scored without it, the absent entries are zeros: other scores
    assert np.abs(_scores(df, booster) - booster.predict(X, output_margin=True)).max() > 1e-3


def test_ranker_sparse_missing_is_train_and_predicts_as_it_fit(spark, ranking, sparse_data):
    # the spark.ml stage passes sparseMissing to train and to its transform: the same trees as
    # train(sparse_missing=True), and transform's scores those of predict(sparse_missing=True)
    from boostplug.spark.ml import Ranker

    df = _frame(spark, ranking, sparse_data, sparse=True)
    model = Ranker(framework="xgboost", objective="mpboost", boosterParams=_XGB, numBoostRound=10, numWorkers=2,
                   sparseMissing=True).fit(df)
    want = train_xgboost(df, "mpboost", params=_XGB, num_boost_round=10, num_workers=2, sparse_missing=True)
    assert model.booster().get_dump(dump_format="json") == want.get_dump(dump_format="json")
    got = model.transform(df).orderBy("row").select("prediction").toPandas()["prediction"].to_numpy()
    np.testing.assert_allclose(got, _scores(df, want, sparse_missing=True), rtol=1e-12)
    default = Ranker(framework="xgboost", objective="mpboost", boosterParams=_XGB, numBoostRound=10,
                     numWorkers=2).fit(df)
    assert default.booster().get_dump(dump_format="json") != want.get_dump(dump_format="json")
