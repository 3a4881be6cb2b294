"""Sparse feature vectors stay sparse: a CSR matrix per partition (never a dense rows x features
array), training to the model of the same rows in one process, and to the dense frame's model
where a sparse row's absent entries mean what a dense zero means (LightGBM)."""

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
from boostplug.spark._barrier import VALID_COL, X_COL, X_IDX, X_SIZE, Columns, features_matrix, part_arrays


def _batch(rows):
    """A task's pandas batch of (values, indices or None, size or None) rows."""
    return pd.DataFrame({X_COL: [np.asarray(v, float) for v, _, _ in rows],
                         X_IDX: [None if i is None else np.asarray(i, np.int32) for _, i, _ in rows],
                         X_SIZE: [s for _, _, s in rows]})


def test_sparse_rows_become_csr_with_dense_rows_stored_whole():
    got = features_matrix(_batch([([2.0, 5.0], [1, 3], 4), ([0.0, 1.0, 0.0, 7.0], None, None), ([], [], 4)]))
    assert sp.issparse(got) and got.format == "csr"
    np.testing.assert_array_equal(got.toarray(), [[0, 2, 0, 5], [0, 1, 0, 7], [0, 0, 0, 0]])
    assert got.nnz == 6  # the dense row's zeros are stored: a value there, not an absent entry
    dense = features_matrix(_batch([([0.0, 1.0], None, None), ([3.0, 4.0], None, None)]))
    assert isinstance(dense, np.ndarray) and dense.tolist() == [[0, 1], [3, 4]]
    with pytest.raises(ValueError, match="feature vectors of different lengths: row 1 has 3 features, row 0 has 4"):
        features_matrix(_batch([([1.0], [0], 4), ([1.0], [0], 3)]))


def test_a_wide_sparse_partition_is_handed_to_the_builder_as_csr():
    # a billion features: a dense array of these 3 rows would need 24 GB
    width = 10**9
    pdf = _batch([([1.0], [5], width), ([2.0, 3.0], [7, width - 1], width), ([4.0], [0], width)])
    pdf = pdf.assign(label=[1.0, 0.0, 2.0], qid=[1, 1, 2], **{VALID_COL: [0, 0, 1]})
    train, valid = part_arrays(iter([pdf]), Columns(features_col="features"))
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
    from pyspark.ml.linalg import Vectors

    def vec(row):
        nz = np.flatnonzero(row)
        return Vectors.sparse(len(row), nz.tolist(), row[nz].tolist()) if sparse else Vectors.dense(row.tolist())

    rows = [(vec(X[i]), float(data.y[i]), int(data.qid[i]), i) for i in range(X.shape[0])]
    return spark.createDataFrame(rows, ["features", "label", "qid", "row"])


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


def test_xgboost_sparse_frame_equals_one_process_on_the_csr_matrix(spark, ranking, sparse_data):
    # XGBoost reads a sparse vector's absent entries as missing, as xgb.DMatrix does a CSR matrix's
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1}
    df = _frame(spark, ranking, sparse_data, sparse=True)
    booster = train_xgboost(df, "mpboost", params=params, num_boost_round=10, num_workers=2)
    csr = sp.csr_matrix(sparse_data)
    ref = xgb.train(bpx.params(**params), bpx.dmatrix(csr, ranking.y, qid=ranking.qid), 10,
                    obj=bpx.objective("mpboost"))
    X = xgb.DMatrix(csr)
    np.testing.assert_allclose(booster.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)
    # the dense reading (zeros as values) is another model: the sparse rows were not densified
    dense = xgb.train(bpx.params(**params), bpx.dmatrix(sparse_data, ranking.y, qid=ranking.qid), 10,
                      obj=bpx.objective("mpboost"))
    assert np.abs(dense.predict(X) - ref.predict(X)).max() > 1e-3
    scored = predict(df, booster).orderBy("row").select("prediction").toPandas()["prediction"].to_numpy()
    np.testing.assert_allclose(scored, booster.predict(X, output_margin=True), rtol=1e-6)
