"""Scoring a Spark DataFrame with a trained LightGBM or XGBoost model: a pandas UDF that loads the
model once per Python worker and predicts each Arrow batch. User documentation: :mod:`boostplug.spark`."""

# No ``from __future__ import annotations``: pandas_udf reads the scoring function's type hints as objects.
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..frameworks.model_bytes import booster_bytes, booster_from_bytes
from ._barrier import X_COL, X_IDX, X_SIZE, Columns, features_matrix, keeps_sparse
from ._spark import require_frame

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

__all__ = ["ModelBytes", "predict"]


class ModelBytes:
    """A LightGBM or XGBoost model as it travels to the executors (its text or UBJSON bytes,
    :mod:`boostplug.frameworks.model_bytes`), loaded once per process on first use."""

    def __init__(self, model: Any) -> None:
        try:
            self.kind, self.payload = booster_bytes(model)
        except TypeError:
            raise TypeError(f"predict takes an lgb.Booster or an xgb.Booster, got {type(model).__name__}") from None
        #: The features the model was trained on: every row scored must have exactly these.
        self.n_features = int(model.num_feature() if self.kind == "lightgbm" else model.num_features())
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_model": None}  # the loaded model stays behind: each process loads its own

    def check_features(self, n: int, what: str = "the rows") -> None:
        """A ValueError unless rows of ``n`` features are what the model was trained on. XGBoost would
        score rows of fewer features without a word (the missing ones read as missing values)."""
        if n != self.n_features:
            raise ValueError(f"{what} have {n} features, but the {self.kind} model was trained on {self.n_features}: "
                             "score rows of the features it was trained on, in the same order")

    def predict(self, X: Any) -> np.ndarray:
        """Raw scores of the rows of ``X`` (a numpy array or a scipy CSR matrix of sparse vectors),
        which must have the model's features (:meth:`check_features`)."""
        if self._model is None:
            self._model = booster_from_bytes(self.kind, self.payload)
        if X.shape[0] == 0:
            return np.zeros(0)
        self.check_features(X.shape[1], "the feature vectors")
        if self.kind == "lightgbm":
            return np.asarray(self._model.predict(X, raw_score=True), dtype=np.float64)
        import xgboost as xgb

        return np.asarray(self._model.predict(xgb.DMatrix(X), output_margin=True), dtype=np.float64)


def predict(df: "DataFrame", model: Any, *, features_col: str | None = "features",
            feature_cols: Sequence[str] | None = None, output_col: str = "prediction",
            sparse_missing: bool = False) -> "DataFrame":
    """``df`` with ``output_col``: each row's score (the raw margin) by ``model``, an ``lgb.Booster`` or
    ``xgb.Booster`` trained on the same features, in the same order. Rows of another number of
    features are a ``ValueError`` naming both counts, for either framework: at once for
    ``feature_cols``, when the rows are scored for a vector column. Sparse vectors are read as
    they train (:func:`~boostplug.spark.train`'s ``sparse_missing``): an absent entry is a zero,
    or with ``sparse_missing=True`` (XGBoost only) missing. Lazy, like any Spark transformation;
    rows keep their partitions (no query layout is needed to score)."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    cols = Columns(features_col=features_col, feature_cols=feature_cols)
    require_frame(df, "predict", cols.feature_columns())
    cols.check_types(df, "predict", training=False)
    if output_col in df.columns:
        raise ValueError(f"output_col {output_col!r} is already a column of the DataFrame; choose another name")
    shipped = ModelBytes(model)
    if feature_cols is not None:  # known here; a vector's length only where the rows are
        shipped.check_features(len(cols.feature_columns()), f"the {len(cols.feature_columns())} feature_cols")
    sparse = keeps_sparse(shipped.kind, sparse_missing)

    import pandas as pd

    @pandas_udf("double")  # type: ignore[call-overload]
    def score(x: pd.Series, idx: pd.Series, size: pd.Series) -> pd.Series:
        X = features_matrix(pd.DataFrame({X_COL: x, X_IDX: idx, X_SIZE: size}), sparse=sparse)
        return pd.Series(shipped.predict(X), index=x.index)

    with_x = cols.features_as_array(df)
    return with_x.withColumn(output_col, score(F.col(X_COL), F.col(X_IDX), F.col(X_SIZE))).drop(X_COL, X_IDX, X_SIZE)
