"""Scoring a Spark DataFrame with a trained LightGBM or XGBoost model: a pandas UDF that loads the
model once per Python worker and predicts each Arrow batch. User documentation: :mod:`boostplug.spark`."""

# No ``from __future__ import annotations``: pandas_udf reads the scoring function's type hints as objects.
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..frameworks.model_bytes import booster_bytes, booster_from_bytes
from ._barrier import X_COL, X_IDX, X_SIZE, Columns, features_matrix, keeps_sparse
from ._spark import require_columns, require_frame

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
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"kind": self.kind, "payload": self.payload}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.kind, self.payload, self._model = state["kind"], state["payload"], None

    def predict(self, X: Any) -> np.ndarray:
        """Raw scores of the rows of ``X`` (a numpy array or a scipy CSR matrix of sparse vectors)."""
        if self._model is None:
            self._model = booster_from_bytes(self.kind, self.payload)
        if X.shape[0] == 0:
            return np.zeros(0)
        if self.kind == "lightgbm":
            return np.asarray(self._model.predict(X, raw_score=True), dtype=np.float64)
        import xgboost as xgb

        return np.asarray(self._model.predict(xgb.DMatrix(X), output_margin=True), dtype=np.float64)


def predict(df: "DataFrame", model: Any, *, features_col: str | None = "features",
            feature_cols: Sequence[str] | None = None, output_col: str = "prediction",
            sparse_missing: bool = False) -> "DataFrame":
    """``df`` with ``output_col``: each row's score (the raw margin) by ``model``, an ``lgb.Booster`` or
    ``xgb.Booster`` trained on the same features, in the same order. Sparse vectors are read as
    they train (:func:`~boostplug.spark.train`'s ``sparse_missing``): an absent entry is a zero,
    or with ``sparse_missing=True`` (XGBoost only) missing. Lazy, like any Spark transformation;
    rows keep their partitions (no query layout is needed to score)."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    require_frame(df, "predict")
    cols = Columns(features_col=features_col, feature_cols=feature_cols)
    require_columns(df, cols.feature_columns())
    if output_col in df.columns:
        raise ValueError(f"output_col {output_col!r} is already a column of the DataFrame; choose another name")
    shipped = ModelBytes(model)
    sparse = keeps_sparse(shipped.kind, sparse_missing)

    import pandas as pd

    @pandas_udf("double")  # type: ignore[call-overload]
    def score(x: pd.Series, idx: pd.Series, size: pd.Series) -> pd.Series:
        X = features_matrix(pd.DataFrame({X_COL: x, X_IDX: idx, X_SIZE: size}), sparse=sparse)
        return pd.Series(shipped.predict(X), index=x.index)

    with_x = cols.features_as_array(df)
    return with_x.withColumn(output_col, score(F.col(X_COL), F.col(X_IDX), F.col(X_SIZE))).drop(X_COL, X_IDX, X_SIZE)
